package s3sync

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Progress is a snapshot of a sync in progress. While Scanning, the sync is still listing
// both sides (Scanned counts the files and objects seen); then totals count what needs
// transferring, and shrink when a file turns out to be in place after hashing.
type Progress struct {
	Scanning          bool
	Scanned           int64
	Files, FilesTotal int64
	Bytes, BytesTotal int64
	Elapsed           time.Duration
	Rate              float64       // bytes per second over the last few seconds (Done: over the whole sync)
	ETA               time.Duration // 0 when unknown
	Done              bool          // the last call
}

// Stats is what a sync did (with DryRun, what it would do).
type Stats struct {
	Files, Bytes               int64 // transferred
	SkippedFiles, SkippedBytes int64 // already in place
	Deleted                    int64
	Elapsed                    time.Duration
}

// String is the summary line: "synced 1000 files (9.8 MiB), skipped 0 (0 B) in 1.2s".
func (s Stats) String() string {
	msg := fmt.Sprintf("synced %d %s (%s), skipped %d (%s)", s.Files, Plural(s.Files, "file", "files"),
		FormatBytes(s.Bytes), s.SkippedFiles, FormatBytes(s.SkippedBytes))
	if s.Deleted > 0 {
		msg += fmt.Sprintf(", deleted %d", s.Deleted)
	}
	return msg + " in " + formatDuration(s.Elapsed)
}

// FormatProgress is one line for a status display:
// "412/1000 files, 4.0/9.8 MiB, 35.2 MiB/s, ETA 2s".
func FormatProgress(p Progress) string {
	if p.Scanning {
		return fmt.Sprintf("comparing: %d files and objects listed", p.Scanned)
	}
	line := fmt.Sprintf("%d/%d files, %s/%s", p.Files, p.FilesTotal, FormatBytes(p.Bytes), FormatBytes(p.BytesTotal))
	if p.Rate > 0 {
		line += ", " + FormatBytes(int64(p.Rate)) + "/s"
	}
	if p.ETA > 0 && !p.Done {
		line += ", ETA " + formatDuration(p.ETA)
	}
	return line
}

// FormatBytes writes n in binary units: "0 B", "512 B", "9.8 MiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// Plural picks the word for n things.
func Plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// meter counts a sync's progress and serialises the caller's callbacks: Progress and
// OnAction are never called at the same time.
type meter struct {
	start time.Time
	n     tally

	mu         sync.Mutex // held while calling the callbacks
	recent     []sample   // the progress reports of the last rateWindow, for the current rate
	onProgress func(Progress)
	onAction   func(Action)
	held       []Action // non-nil: hold actions for release
}

// tally is what a sync has counted so far: its workers add to it without a lock.
type tally struct {
	scanning              atomic.Bool
	scanned               atomic.Int64
	files, filesTotal     atomic.Int64
	bytes, bytesTotal     atomic.Int64
	skipped, skippedBytes atomic.Int64
	deleted               atomic.Int64
}

// sample is the bytes moved at one moment.
type sample struct {
	at    time.Time
	bytes int64
}

// rateWindow is how far back the current rate looks: long enough to smooth parts that
// finish in bursts, short enough to follow a change of pace, as aws-cli's rate does.
const rateWindow = 5 * time.Second

// snapshot is the progress now; m.mu must be held.
func (m *meter) snapshot(done bool) Progress {
	now := time.Now()
	p := Progress{
		Scanning: m.n.scanning.Load() && !done, Scanned: m.n.scanned.Load(),
		Files: m.n.files.Load(), FilesTotal: m.n.filesTotal.Load(),
		Bytes: m.n.bytes.Load(), BytesTotal: m.n.bytesTotal.Load(),
		Elapsed: now.Sub(m.start), Done: done,
	}
	if secs := p.Elapsed.Seconds(); secs > 0 {
		p.Rate = float64(p.Bytes) / secs
	}
	m.recent = append(m.recent, sample{at: now, bytes: p.Bytes})
	for len(m.recent) > 2 && now.Sub(m.recent[1].at) >= rateWindow {
		m.recent = m.recent[1:]
	}
	if first := m.recent[0]; !done && len(m.recent) > 1 {
		if dt := now.Sub(first.at).Seconds(); dt > 0 {
			p.Rate = float64(p.Bytes-first.bytes) / dt
		}
	}
	if p.Rate > 0 && p.BytesTotal > p.Bytes {
		p.ETA = time.Duration(float64(p.BytesTotal-p.Bytes) / p.Rate * float64(time.Second))
	}
	return p
}

func (m *meter) report(done bool) {
	if m.onProgress == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onProgress(m.snapshot(done))
}

func (m *meter) action(a Action) {
	if m.onAction == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held != nil {
		m.held = append(m.held, a)
		return
	}
	m.onAction(a)
}

// release reports held actions in path order (a dry run's list reads better sorted).
func (m *meter) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	slices.SortFunc(m.held, func(a, b Action) int {
		return cmp.Or(strings.Compare(string(a.Op), string(b.Op)), strings.Compare(a.Path+a.URL, b.Path+b.URL))
	})
	for _, a := range m.held {
		m.onAction(a)
	}
	m.held = nil
}

// run reports progress every interval until stop is closed, then once more with Done set.
func (m *meter) run(interval time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	if m.onProgress == nil {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			m.report(false)
		case <-stop:
			m.report(true)
			return
		}
	}
}

func (m *meter) stats() Stats {
	return Stats{
		Files: m.n.files.Load(), Bytes: m.n.bytes.Load(),
		SkippedFiles: m.n.skipped.Load(), SkippedBytes: m.n.skippedBytes.Load(),
		Deleted: m.n.deleted.Load(), Elapsed: time.Since(m.start),
	}
}
