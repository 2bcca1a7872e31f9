package mps

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/runall/runall/internal/owned"
)

// Options say where MPS runs.
type Options struct {
	Mode    Mode
	Environ []string // runall's: its PATH finds Binary; its CUDA_MPS_PIPE_DIRECTORY names a node's daemon
	UUIDs   []string // the GPUs trials are placed on, by runall's index
	// PGID finds a live process's group, to tie a client the server log names to a trial.
	PGID func(pid int) (int, bool)
	// Run names the run (its task file) in the record beside each own daemon's pipe
	// directory, by which `runall gpus` finds whose daemon serves a GPU.
	Run string
}

// Set is MPS for a run's GPUs: a control daemon per GPU that runall started, or a node's
// daemon that serves them all. Its methods are safe for concurrent use.
type Set struct {
	bin     string
	environ []string
	node    *Daemon    // the node's daemon, when runall is its client
	own     []*Daemon  // runall's own, by GPU index
	dir     *owned.Dir // holds the own daemons' pipe and log directories
	pgid    func(int) (int, bool)
	runFile string    // Options.Run
	left    leftovers // daemons of runs that are gone, still serving clients (leftover.go)
	Note    string    // what runall says of MPS as the run starts
}

// Open starts MPS for o.UUIDs as o.Mode asks. With None, or Auto when MPS cannot be had, the
// set is nil and Note (the second value) says why; with On that is an error wrapping
// ErrUnavailable, saying what to do.
func Open(o Options) (*Set, string, error) {
	if o.Mode == None || o.Mode == "" {
		return nil, "", nil
	}
	s, err := open(o)
	if err == nil {
		return s, s.Note, nil
	}
	if o.Mode == Auto {
		return nil, "gpu-isolation: auto: running without MPS: " + err.Error(), nil
	}
	return nil, "", fmt.Errorf("gpu-isolation: mps: %w: %w (set gpu-isolation: auto to run without it, see docs/gpu.md#mps)", ErrUnavailable, err)
}

func open(o Options) (*Set, error) {
	bin := lookPath(o.Environ, Binary)
	if bin == "" {
		return nil, fmt.Errorf("%s is not on PATH: the image needs NVIDIA's utilities", Binary)
	}
	s := &Set{bin: bin, environ: o.Environ, pgid: o.PGID, runFile: o.Run}
	for _, line := range s.reapAtOpen(o.UUIDs) {
		s.Note += "gpu-isolation: mps: " + line + "\n"
	}
	if pipe, ok := lookup(o.Environ, EnvPipe); ok && pipe != "" {
		logDir, _ := lookup(o.Environ, EnvLog)
		d := &Daemon{set: s, Pipe: pipe, Log: logDir, Index: -1}
		d.reset()
		if _, err := d.query("get_server_list"); err == nil {
			d.skipLogs() // what it logged before this run is not this run's
			// Its PID stays unknown: a node's daemon runs in another pid namespace (the device
			// plugin's container), where the pid file's number names no process here.
			s.node = d
			s.Note += fmt.Sprintf("gpu-isolation: mps: a client of the node's MPS control daemon at %s=%s", EnvPipe, pipe)
			return s, nil
		}
		s.Note += fmt.Sprintf("gpu-isolation: mps: no MPS control daemon answers at %s=%s; ", EnvPipe, pipe)
	}
	dir, err := owned.Temp("runall-mps-")
	if err != nil {
		return nil, err
	}
	s.dir = dir
	for i, uuid := range o.UUIDs {
		d := &Daemon{set: s, Index: i, UUID: uuid, own: true,
			Pipe: dir.Join(strconv.Itoa(i) + "/pipe"), Log: dir.Join(strconv.Itoa(i) + "/log")}
		if err := d.start(); err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("GPU%d: %w", i, err)
		}
		s.own = append(s.own, d)
	}
	var pids []string
	for _, d := range s.own {
		pids = append(pids, fmt.Sprintf("GPU%d pid %d", d.Index, d.PID))
	}
	s.Note += fmt.Sprintf("gpu-isolation: mps: started an MPS control daemon per GPU (%s) under %s", strings.Join(pids, ", "), dir.Path())
	return s, nil
}

// Node reports whether runall is a client of a node's daemon rather than running its own.
func (s *Set) Node() bool { return s.node != nil }

// Daemon is the daemon that serves GPU index.
func (s *Set) Daemon(index int) *Daemon {
	if s.node != nil {
		return s.node
	}
	if index < 0 || index >= len(s.own) {
		return nil
	}
	return s.own[index]
}

// Env is what makes a process on the given GPUs (runall's indices) a client of their MPS
// server: its pipe and log directories, its pinned memory limit per device it sees (limit
// bytes each; 0: none) and its share of the threads (0: all). ok is false when no one server
// serves them all: one daemon per GPU serves a client of one GPU.
func (s *Set) Env(indices []int, limit uint64, threads int) (env []string, ok bool) {
	if len(indices) == 0 || (s.node == nil && len(indices) != 1) {
		return nil, false
	}
	d := s.Daemon(indices[0])
	if d == nil {
		return nil, false
	}
	env = append(env, EnvPipe+"="+d.Pipe)
	if d.Log != "" {
		env = append(env, EnvLog+"="+d.Log)
	}
	if limit > 0 {
		var parts []string
		for i := range indices { // the client sees its GPUs from 0, in CUDA_VISIBLE_DEVICES' order
			parts = append(parts, FormatLimit(i, limit))
		}
		env = append(env, EnvLimit+"="+strings.Join(parts, ","))
	}
	if threads > 0 {
		env = append(env, EnvThreads+"="+strconv.Itoa(threads))
	}
	return env, true
}

// Close stops runall's own daemons (quit, then a kill for one that does not go) and removes
// their pipe and log directories. A node's daemon is left as it is.
func (s *Set) Close() error {
	if s == nil {
		return nil
	}
	var wg sync.WaitGroup
	for _, d := range s.own {
		wg.Add(1)
		go func() { defer wg.Done(); d.stop() }()
	}
	wg.Wait()
	if s.dir == nil {
		return nil
	}
	return s.dir.Close()
}

// run runs Binary with env added to runall's, stdin as its input, within timeout.
func (s *Set) run(env []string, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = append(append([]string{}, s.environ...), env...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", Binary, strings.TrimSpace(strings.Join(args, " ")+" "+strings.TrimSpace(stdin)), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// queryTimeout bounds one command to a daemon: one that does not answer in it is not there.
const queryTimeout = 5 * time.Second

func lookPath(environ []string, name string) string {
	path, _ := lookup(environ, "PATH")
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// lookup finds name in environ; the last entry wins, as in a process's environment.
func lookup(environ []string, name string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// alive reports whether pid names a live process (a zombie is not: it has ended).
func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: the signal's answer stands
	}
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

func readPID(pipe string) int {
	b, err := os.ReadFile(filepath.Join(pipe, PIDFile))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}
