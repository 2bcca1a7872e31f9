package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// history is what earlier runs of the same task file left behind: how long each task took
// (for the live view's ETA) and the GPU memory learned for gpu-memory: auto groups.
// It lives in the log directory: <log dir>/state/<file>-<hash>.json.
type history struct {
	path      string
	Durations map[string]float64 `json:"durations"` // seconds, by task name
	Learned   map[string]uint64  `json:"learned"`   // bytes, by Task.Group
}

func historyPath(logDir, file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(logDir, "state", slug(filepath.Base(file))+"-"+hex.EncodeToString(sum[:6])+".json")
}

func loadHistory(logDir, file string) *history {
	h := &history{path: historyPath(logDir, file), Durations: map[string]float64{}, Learned: map[string]uint64{}}
	if b, err := os.ReadFile(h.path); err == nil {
		_ = json.Unmarshal(b, h) // a damaged history only costs the ETA
		if h.Durations == nil {
			h.Durations = map[string]float64{}
		}
		if h.Learned == nil {
			h.Learned = map[string]uint64{}
		}
	}
	return h
}

func (h *history) estimate(t *Task) (time.Duration, bool) {
	s, ok := h.Durations[t.Name]
	return time.Duration(s * float64(time.Second)), ok
}

// save records the durations of tasks that succeeded and what was learned.
func (h *history) save(res *Results) error {
	for _, t := range res.Tasks {
		if t.Status == StatusOK {
			h.Durations[t.Name] = t.Duration().Seconds()
		}
	}
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(h.path, b)
}
