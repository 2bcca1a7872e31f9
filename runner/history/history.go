// Package history keeps what earlier runs of a task file measured, in the log directory:
// each task's duration, each gpu-memory: auto and memory: auto group's learned need, and each
// task's progress rate alone on a GPU (gpu-sharing: progress, rates.go). The runner orders a
// block's trials by it (runner/order.go), the outputs estimate with it, the GPU and host
// admitters learn into it and gpu-sharing reads and keeps rates in it; it knows nothing of
// them.
package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/runall/runall/internal/outfile"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/size"
)

// History is what earlier runs of a task file measured: how long each task took (for the
// live view's ETA and the order trials start in) and the GPU memory learned for each
// gpu-memory: auto group. Tasks are known by plan.Task.Key and groups by plan.Task.Group, so
// that both survive edits elsewhere in the file. It lives in the log directory:
// <log dir>/state/<file>-<hash>.json. Its methods are safe for concurrent use.
type History struct {
	path  string
	mu    sync.Mutex
	state historyFile
	notes []string
}

// historyFile is the state file. Version 2 keys entries by task key and group; version 1
// (no version field) kept durations by task name and learned needs by file:line:col.
type historyFile struct {
	Version   int              `json:"version"`
	Durations map[string]entry `json:"durations"`
	Learned   map[string]entry `json:"learned"`
	// HostLearned is the host memory learned for each memory: auto group (its HostSpec's).
	HostLearned map[string]entry `json:"host_learned,omitempty"`
	// RatesAlone are each task's progress rate alone on a GPU (steps per second), by task
	// key, for gpu-sharing: progress (runner/sharing).
	RatesAlone map[string]entry `json:"rates_alone,omitempty"`
}

// entry is one recorded figure, with the name of the task it belongs to, for messages.
type entry struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds,omitempty"`
	Bytes   uint64  `json:"bytes,omitempty"`
	Rate    float64 `json:"rate,omitempty"` // steps per second
	GPU     string  `json:"gpu,omitempty"`  // the GPU model a rate alone was measured on
}

type historyV1 struct {
	Durations map[string]float64 `json:"durations"` // by task name
	Learned   map[string]uint64  `json:"learned"`   // by file:line:col of the group
}

const historyVersion = 2

// New is an empty history that Save writes to path ("" keeps it in memory only).
func New(path string) *History {
	return &History{path: path, state: historyFile{
		Version: historyVersion, Durations: map[string]entry{}, Learned: map[string]entry{}, HostLearned: map[string]entry{},
		RatesAlone: map[string]entry{},
	}}
}

// HistoryPath is where the history of the task file at file is kept under logDir.
func HistoryPath(logDir, file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(logDir, "state", plan.Slug(filepath.Base(file))+"-"+hex.EncodeToString(sum[:6])+".json")
}

// Load reads the history of p's file under logDir, keeping what still belongs to one
// of p's tasks. A learned need that no group of p matches any more (its sweep was renamed or
// its command changed) is dropped, and Notes says so; a file from an older runall is
// migrated where its entries still name a task of p. A damaged file only costs the ETA.
func Load(logDir string, p *plan.Plan) *History {
	h := New(HistoryPath(logDir, p.File))
	b, err := os.ReadFile(h.path)
	if err != nil {
		return h
	}
	var probe struct{ Version int }
	if json.Unmarshal(b, &probe) != nil {
		h.notes = append(h.notes, fmt.Sprintf("%s is damaged: starting without earlier durations and learned GPU memory", h.path))
		return h
	}
	var st historyFile
	if probe.Version >= historyVersion {
		_ = json.Unmarshal(b, &st)
	} else {
		var old historyV1
		_ = json.Unmarshal(b, &old)
		st = migrate(old, p)
	}
	h.keep(st, p)
	return h
}

// migrate re-keys a version 1 history: durations by task name, learned needs by the place of
// the task or block that set gpu-memory: auto, as long as that place still holds it.
func migrate(old historyV1, p *plan.Plan) historyFile {
	st := historyFile{Durations: map[string]entry{}, Learned: map[string]entry{}}
	learned := func(t *plan.Task, places ...plan.Pos) {
		if _, done := st.Learned[t.Group]; done || t.GPU == nil || !t.GPU.Auto {
			return
		}
		for _, pos := range places {
			if n, ok := old.Learned[pos.String()]; ok {
				st.Learned[t.Group] = entry{Name: t.Name, Bytes: n}
				return
			}
		}
	}
	for _, b := range p.Tasks {
		learned(b, b.Pos)
		for _, t := range b.Parallel {
			learned(t, t.Pos, b.Pos)
		}
	}
	plan.Walk(p.Tasks, func(t *plan.Task) {
		if s, ok := old.Durations[t.Name]; ok {
			st.Durations[t.Key] = entry{Name: t.Name, Seconds: s}
		}
	})
	return st
}

// keep takes from st what belongs to a task or group of p. With p filtered by tags, what
// the filter left out is kept as it is.
func (h *History) keep(st historyFile, p *plan.Plan) {
	keys, groups, hostGroups := map[string]bool{}, map[string]bool{}, map[string]bool{}
	plan.Walk(p.Tasks, func(t *plan.Task) {
		keys[t.Key] = true
		if t.GPU != nil && t.GPU.Auto {
			groups[t.Group] = true
		}
		if t.Host != nil && t.Host.Auto {
			hostGroups[t.Host.Group] = true
		}
	})
	h.keepLearned(h.state.HostLearned, st.HostLearned, hostGroups, "host memory", p)
	for k, e := range st.Durations {
		if keys[k] || p.Filtered {
			h.state.Durations[k] = e
		}
	}
	for k, e := range st.RatesAlone {
		if keys[k] || p.Filtered {
			h.state.RatesAlone[k] = e
		}
	}
	h.keepLearned(h.state.Learned, st.Learned, groups, "GPU memory", p)
}

// keepLearned keeps in into the needs of learned that one of groups still has (all of them
// with p filtered); Notes says which were dropped.
func (h *History) keepLearned(into, learned map[string]entry, groups map[string]bool, what string, p *plan.Plan) {
	for g, e := range learned {
		if groups[g] || p.Filtered {
			into[g] = e
			continue
		}
		h.notes = append(h.notes, fmt.Sprintf("learned %s %s of %q dropped: no task of %s matches it any more "+
			"(renamed, or its command changed); it will be learned again", what, size.Format(e.Bytes), e.Name, p.File))
	}
}

// Notes says what loading dropped, for the user.
func (h *History) Notes() []string { return h.notes }

// Needs is one resource's learned needs, by group: GPU memory or host memory. Its methods
// are safe for concurrent use.
type Needs struct {
	mu *sync.Mutex
	m  map[string]entry
}

// GPU is the GPU memory learned for each gpu-memory: auto group (plan.Task.Group).
func (h *History) GPU() Needs { return Needs{&h.mu, h.state.Learned} }

// Host is the host memory learned for each memory: auto group (plan.HostSpec.Group).
func (h *History) Host() Needs { return Needs{&h.mu, h.state.HostLearned} }

// Learned is the need learned for group.
func (n Needs) Learned(group string) (uint64, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e, ok := n.m[group]
	return e.Bytes, ok
}

// LearnedFrom is the name of the trial group's need was learned from (measured), "" when
// none was.
func (n Needs) LearnedFrom(group string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.m[group].Name
}

// SetLearned records the need learned for group; name is the trial it was learned from.
func (n Needs) SetLearned(group, name string, need uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.m[group] = entry{Name: name, Bytes: need}
}

// Duration is how long the task with this key took when it last succeeded.
func (h *History) Duration(key string) (time.Duration, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.state.Durations[key]
	return time.Duration(e.Seconds * float64(time.Second)), ok
}

// Record keeps the durations of the tasks of res that succeeded; byID maps a result's task
// ID to its plan task.
func (h *History) Record(res *results.Run, byID map[int]*plan.Task) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range res.Tasks {
		if t, ok := byID[r.ID]; ok && r.Status == results.StatusOK {
			h.state.Durations[t.Key] = entry{Name: t.Name, Seconds: r.Duration().Seconds()}
		}
	}
}

// Save writes the history, atomically.
func (h *History) Save() error {
	if h.path == "" {
		return nil
	}
	h.mu.Lock()
	b, err := json.MarshalIndent(h.state, "", "  ")
	h.mu.Unlock()
	if err != nil {
		return err
	}
	return outfile.WriteFile(h.path, b)
}
