package mps

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Daemon is one MPS control daemon and what its logs said so far.
type Daemon struct {
	set   *Set
	Index int    // the GPU it serves (runall's index); -1 for a node's daemon, which serves all
	UUID  string // that GPU's
	Pipe  string // its CUDA_MPS_PIPE_DIRECTORY
	Log   string // its CUDA_MPS_LOG_DIRECTORY ("" for a node's daemon that did not say)
	PID   int    // the control daemon's, from its pid file (0: unknown)
	own   bool   // runall started it, and stops it

	mu       sync.Mutex
	offsets  map[string]int64 // how far each log was read
	clients  map[int]int      // client PID → its process group, from "New client P connected"
	fault    *Fault           // what took its server down, until Restart
	quitting bool
}

// Fault is what took a GPU's MPS server and every client on it down: the server or the
// daemon died, or a client caused a fatal fault.
type Fault struct {
	Index int    // the GPU
	What  string // what happened, in words (the log line that said it, where one did)
	PID   int    // the client whose fault it was, when the server's log names it; 0 otherwise
	PGID  int    // that client's process group, when it was seen alive; 0 otherwise
}

// start starts an own daemon in the background (-d), seeing only its GPU, and waits until it
// answers.
func (d *Daemon) start() error {
	for _, dir := range []string{d.Pipe, d.Log} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	d.reset()
	if _, err := d.set.run(d.env(true), "", "-d"); err != nil {
		return err
	}
	if err := d.record(); err != nil {
		return err
	}
	deadline := time.Now().Add(queryTimeout)
	for {
		_, err := d.query("get_server_list")
		if err == nil {
			pid := readPID(d.Pipe)
			d.mu.Lock()
			d.PID = pid
			d.mu.Unlock()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("started, but does not answer at %s: %w", d.Pipe, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reset forgets what the logs said: a fresh daemon's logs start afresh.
func (d *Daemon) reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.offsets, d.clients, d.fault = map[string]int64{}, map[int]int{}, nil
}

// skipLogs starts reading the logs at their current ends.
func (d *Daemon) skipLogs() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, name := range []string{"server.log", "control.log"} {
		if fi, err := os.Stat(filepath.Join(d.Log, name)); err == nil && d.Log != "" {
			d.offsets[name] = fi.Size()
		}
	}
}

// env is what reaches this daemon; withGPU adds the one GPU an own daemon sees.
func (d *Daemon) env(withGPU bool) []string {
	env := []string{EnvPipe + "=" + d.Pipe}
	if d.Log != "" {
		env = append(env, EnvLog+"="+d.Log)
	}
	if withGPU && d.UUID != "" {
		env = append(env, EnvVisible+"="+d.UUID)
	}
	return env
}

// query sends one command to the daemon and returns its reply.
func (d *Daemon) query(command string) (string, error) {
	return d.set.run(d.env(false), command+"\n")
}

// Servers lists the PIDs of the daemon's servers (get_server_list).
func (d *Daemon) Servers() ([]int, error) { return d.pids("get_server_list") }

// pids sends command (get_server_list, or get_client_list SERVER) and reads the PIDs of its
// reply, one a line.
func (d *Daemon) pids(command string) ([]int, error) {
	out, err := d.query(command)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(out) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// stop quits an own daemon and waits for it and its servers to go; one that does not go in
// time is killed.
func (d *Daemon) stop() {
	d.mu.Lock()
	d.quitting = true
	d.mu.Unlock()
	servers, _ := d.Servers()
	_, _ = d.query("quit")
	d.mu.Lock()
	pids := append([]int{d.PID}, servers...)
	d.mu.Unlock()
	deadline := time.Now().Add(queryTimeout)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// Restart stops an own daemon after a fault, empties its directories and starts it again.
// A node's daemon is not runall's to restart: its fault is forgotten, and the node's MPS
// recovers as NVIDIA's does, once every client has gone.
func (d *Daemon) Restart() error {
	if !d.own {
		d.mu.Lock()
		d.fault = nil
		d.mu.Unlock()
		return nil
	}
	d.stop()
	sub := strconv.Itoa(d.Index)
	if err := d.set.dir.RemoveAll(sub); err != nil {
		return fmt.Errorf("GPU%d: restart MPS: %w", d.Index, err)
	}
	if err := d.start(); err != nil {
		return fmt.Errorf("GPU%d: restart MPS: %w", d.Index, err)
	}
	d.mu.Lock()
	d.quitting = false // looked at again only once it runs: the old one's death is no fault
	d.mu.Unlock()
	return nil
}

// Check reads what the daemon's logs said since the last look and whether it lives, and
// returns the fault that took its server down; nil while it is well. A fault stays until
// Restart.
func (d *Daemon) Check() *Fault {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.quitting {
		return nil
	}
	if d.Log != "" {
		d.readLog("server.log", d.serverLine)
		d.readLog("control.log", d.controlLine)
	}
	if d.fault == nil && d.PID > 0 && !alive(d.PID) {
		d.fault = &Fault{Index: d.Index, What: fmt.Sprintf("its MPS control daemon (pid %d) died", d.PID)}
	}
	return d.fault
}

// The log lines runall reads ("MPS Logging Format"): the server's "New client 14781
// connected", the control daemon's "Server 13929 exited with status 0", and a line that says
// a client met a fatal fault (as the server logs under Volta MPS error containment).
var (
	newClient    = regexp.MustCompile(`New client (\d+) connected`)
	serverExited = regexp.MustCompile(`Server (\d+) exited with status (-?\d+)`)
	fatalClient  = regexp.MustCompile(`(?i)client (\d+)\b.*\bfatal|fatal.*\bclient (\d+)\b`)
)

func (d *Daemon) serverLine(line string) {
	if m := newClient.FindStringSubmatch(line); m != nil {
		pid, _ := strconv.Atoi(m[1])
		if d.set.pgid != nil {
			if g, ok := d.set.pgid(pid); ok {
				d.clients[pid] = g
			}
		}
		return
	}
	if m := fatalClient.FindStringSubmatch(line); m != nil && d.fault == nil {
		pid, _ := strconv.Atoi(m[1] + m[2])
		d.fault = &Fault{Index: d.Index, What: "a fatal fault: " + logText(line), PID: pid, PGID: d.clients[pid]}
	}
}

func (d *Daemon) controlLine(line string) {
	if m := serverExited.FindStringSubmatch(line); m != nil && d.fault == nil {
		d.fault = &Fault{Index: d.Index, What: "its MPS server died: " + logText(line)}
	}
}

// logText is a log line without its "[date time Server N]" head.
func logText(line string) string {
	if i := strings.Index(line, "] "); strings.HasPrefix(line, "[") && i > 0 {
		return line[i+2:]
	}
	return line
}

// readLog hands each whole line of the log file name added since the last read to fn.
func (d *Daemon) readLog(name string, fn func(string)) {
	f, err := os.Open(filepath.Join(d.Log, name))
	if err != nil {
		return
	}
	defer f.Close()
	off := d.offsets[name]
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return
	}
	end := strings.LastIndexByte(string(b), '\n')
	if end < 0 {
		return
	}
	for _, line := range strings.Split(string(b[:end]), "\n") {
		fn(line)
	}
	d.offsets[name] = off + int64(end) + 1
}
