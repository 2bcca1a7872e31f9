package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// daemon is one of the cluster's processes, in a process group of its own, its output in
// DIR/NAME.log.
type daemon struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// startDaemon starts path with args, logging to dir/name.log.
func startDaemon(dir, name, path string, args ...string) (*daemon, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { d.err = cmd.Wait(); close(d.done) }()
	return d, nil
}

// exited says whether the daemon has ended, and how.
func (d *daemon) exited() (bool, error) {
	select {
	case <-d.done:
		return true, fmt.Errorf("%s exited (%v); the end of its log:\n%s", d.name, d.err, d.tail(20))
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the daemon's group, and SIGKILL after wait.
func (d *daemon) stop(wait time.Duration) error {
	pgid := d.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s: %w", d.name, err)
	}
	select {
	case <-d.done:
	case <-time.After(wait):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-d.done
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // anything the daemon left in its group
	return nil
}

// tail is the last n lines of the daemon's log.
func (d *daemon) tail(n int) string {
	data, _ := os.ReadFile(d.log)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
