package mps

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/runall/runall/internal/owned"
)

// A runall that was killed (SIGKILL, the node's OOM killer) leaves its own daemons running:
// their record (RecordFile) names a run that is gone. The next run on the node stops each
// that has no clients, as a run stops its own at its end (quit, then SIGKILL once
// queryTimeout passed), and removes its directory; one that still serves clients (the
// killed run's trials, orphaned, still computing) is left to them, and the new run's
// trials on its GPU wait until they end (Set.Waiting, Set.Reap).

// Leftover is an own daemon of a run that is gone, found by its record.
type Leftover struct {
	Index   int    // the GPU it serves, by this run's index; -1: a GPU this run does not use
	UUID    string // that GPU's
	RunPID  int    // the runall that started it, gone
	Run     string // that run's task file
	Clients int    // its servers' clients when last asked
	answers bool   // it answered when last asked: its pid file names it, not a reused PID
	d       *Daemon
	tmp     string // the temporary directory its run's directory is in
	rel     string // runall-mps-*/INDEX, inside tmp
}

// leftovers are the daemons found waiting for their clients to end, and their lock.
type leftovers struct {
	mu      sync.Mutex
	waiting []*Leftover
}

// String says whose daemon it is.
func (l *Leftover) String() string {
	gpu := "GPU " + l.UUID
	if l.Index >= 0 {
		gpu = "GPU" + strconv.Itoa(l.Index)
	}
	return fmt.Sprintf("%s: the MPS control daemon left by run pid %d (%s), which is gone", gpu, l.RunPID, l.Run)
}

// findLeftovers lists this user's own daemons under TMPDIR whose run is gone, each asked for
// its clients; uuids are this run's GPUs, by index.
func (s *Set) findLeftovers(uuids []string) []*Leftover {
	tmp := tmpDir(s.environ)
	var out []*Leftover
	for _, f := range runRecords(tmp) {
		if alive(f.RunPID) {
			continue
		}
		rel, err := filepath.Rel(tmp, f.dir)
		if err != nil {
			continue
		}
		pipe := filepath.Join(f.dir, "pipe")
		l := &Leftover{Index: slices.Index(uuids, f.UUID), UUID: f.UUID, RunPID: f.RunPID, Run: f.Run, tmp: tmp, rel: rel,
			d: &Daemon{set: s, Index: -1, UUID: f.UUID, Pipe: pipe, Log: filepath.Join(f.dir, "log"), PID: readPID(pipe), own: true}}
		l.Clients = l.clients()
		out = append(out, l)
	}
	return out
}

// clients asks the daemon for its servers' clients; 0 where it does not answer: a daemon
// that cannot be asked serves no client that could connect.
func (l *Leftover) clients() int {
	servers, err := l.d.Servers()
	if l.answers = err == nil; err != nil {
		return 0
	}
	n := 0
	for _, srv := range servers {
		pids, err := l.d.pids("get_client_list " + strconv.Itoa(srv))
		if err == nil {
			n += len(pids)
		}
	}
	return n
}

// stop quits the daemon (a SIGKILL for it and its servers once queryTimeout passed) and
// removes its run's directory of it, and that run's directory once empty. One that did not
// answer is signalled by no PID: its pid file may name a process that reused the number.
func (l *Leftover) stop() error {
	if l.answers {
		l.d.stop()
	}
	dir, err := owned.Open(l.tmp)
	if err != nil {
		return fmt.Errorf("%s: %w", l, err)
	}
	defer dir.Close()
	if err := dir.RemoveAll(l.rel); err != nil {
		return fmt.Errorf("%s: %w", l, err)
	}
	_ = dir.Remove(filepath.Dir(l.rel)) // fails while another GPU's daemon of that run is there
	return nil
}

// reapAtOpen stops the leftovers without clients and keeps those with clients waiting; it
// returns what to say of them.
func (s *Set) reapAtOpen(uuids []string) []string {
	var said []string
	for _, l := range s.findLeftovers(uuids) {
		if l.Clients > 0 {
			s.left.waiting = append(s.left.waiting, l)
			said = append(said, fmt.Sprintf("%s, still serves %d client(s): left to them; its GPU's MPS trials wait until they end", l, l.Clients))
			continue
		}
		if err := l.stop(); err != nil {
			said = append(said, err.Error())
			continue
		}
		said = append(said, fmt.Sprintf("%s, had no clients: stopped", l))
	}
	return said
}

// Waiting are the leftover daemons that still serve clients: the GPU of each (Index, where
// this run uses it) takes no trial until Reap says it stopped.
func (s *Set) Waiting() []Leftover {
	if s == nil {
		return nil
	}
	s.left.mu.Lock()
	defer s.left.mu.Unlock()
	out := make([]Leftover, len(s.left.waiting))
	for i, l := range s.left.waiting {
		out[i] = *l
	}
	return out
}

// Reap asks each waiting leftover for its clients again, stops those that have none left,
// and returns them (with the error of one that could not be removed).
func (s *Set) Reap() (stopped []Leftover, err error) {
	if s == nil {
		return nil, nil
	}
	s.left.mu.Lock()
	defer s.left.mu.Unlock()
	var errs []error
	s.left.waiting = slices.DeleteFunc(s.left.waiting, func(l *Leftover) bool {
		if l.Clients = l.clients(); l.Clients > 0 {
			return false
		}
		if err := l.stop(); err != nil {
			errs = append(errs, err)
		}
		stopped = append(stopped, *l)
		return true
	})
	if len(errs) > 0 {
		return stopped, errs[0]
	}
	return stopped, nil
}
