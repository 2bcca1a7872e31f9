package gpusim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A simulated MPS control daemon and server, so that gpu-isolation: mps can be tried and
// tested on simulated GPUs. They answer what runall sends and log what NVIDIA's do, in the
// forms NVIDIA's MPS documentation gives (https://docs.nvidia.com/deploy/mps/, "Appendix:
// Tools and Interface Reference" and "MPS Logging Format"):
//
//	nvidia-cuda-mps-control -d        start the daemon in the background; -f in the foreground
//	echo get_server_list | ...-control   the PIDs of its servers, one a line
//	echo get_client_list PID | ...-control   the PIDs of server PID's clients, one a line
//	echo quit | ...-control           stop the daemon (and its server)
//	$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid   the daemon's PID
//	control.log: "[2013-08-05 12:50:23.347 Control 13894] Starting new server 13929 for user 500",
//	  "NEW SERVER 13929: Ready", "NEW CLIENT 19276 from user 500: Server already exists",
//	  "Server 13929 exited with status 0"
//	server.log: "[2013-08-05 13:00:09.269 Server 13929] New client 14781 connected",
//	  "Client 14777 disconnected"
//
// A fatal fault is logged by the server as "Client 14781 encountered a fatal GPU exception"
// (the documentation says that a fatal exception reaches every client of the server and that
// the server takes no new client until they have all gone; the line's wording is this
// simulation's). The control channel is a Unix socket named "control" in the pipe directory;
// a client (fake-alloc under MPS) holds a connection to it for as long as it lives, and losing
// it is losing its server. The server is a child process of the daemon
// (nvidia-cuda-mps-server), so that killing it is a server that died.

// MPSSocket is the simulated daemon's socket in the pipe directory.
const MPSSocket = "control"

// MPSServerName is the simulated server's process name.
const MPSServerName = "nvidia-cuda-mps-server"

// MPSControl runs the simulated nvidia-cuda-mps-control with args: -d (start the daemon in
// the background by running self with -f), -f (run it), or none (send each line of stdin as
// a command and print the reply). self is how to run this program as the control daemon.
func MPSControl(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, self []string) int {
	pipe := getenv("CUDA_MPS_PIPE_DIRECTORY")
	if pipe == "" {
		pipe = "/tmp/nvidia-mps"
	}
	switch {
	case len(args) == 1 && args[0] == "-d":
		return background(pipe, self, stderr)
	case len(args) == 1 && args[0] == "-f":
		logDir := getenv("CUDA_MPS_LOG_DIRECTORY")
		if logDir == "" {
			logDir = "/var/log/nvidia-mps"
		}
		if err := serveMPS(pipe, logDir, self); err != nil {
			fmt.Fprintf(stderr, "nvidia-cuda-mps-control: %v\n", err)
			return 1
		}
		return 0
	case len(args) > 0:
		fmt.Fprintf(stderr, "nvidia-cuda-mps-control: unknown option %q (simulated: -d, -f, or commands on stdin)\n", args[0])
		return 1
	}
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			reply, err := mpsCommand(pipe, line)
			if err != nil {
				fmt.Fprintln(stderr, "Cannot find MPS control daemon process")
				return 1
			}
			fmt.Fprint(stdout, reply)
		}
	}
	return 0
}

// background starts the daemon in a session of its own and returns once it listens.
func background(pipe string, self []string, stderr io.Writer) int {
	cmd := exec.Command(self[0], append(self[1:], "-f")...)
	cmd.Args[0] = "nvidia-cuda-mps-control"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "nvidia-cuda-mps-control: %v\n", err)
		return 1
	}
	_ = cmd.Process.Release()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := mpsCommand(pipe, "get_server_list"); err == nil {
			return 0
		}
	}
	fmt.Fprintln(stderr, "nvidia-cuda-mps-control: the daemon did not start")
	return 1
}

// mpsCommand sends one command to the daemon at pipe and reads its whole reply.
func mpsCommand(pipe, line string) (string, error) {
	conn, err := net.DialTimeout("unix", filepath.Join(pipe, MPSSocket), 2*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintln(conn, line); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	return string(b), err
}

// mpsDaemon is the simulated control daemon's state.
type mpsDaemon struct {
	mu      sync.Mutex
	pipe    string
	self    []string
	control *os.File
	server  *exec.Cmd // nil: none running
	serverW io.Closer // the server's stdin: closing it stops it
	clients map[net.Conn]int
	fault   bool // a fatal fault: no new client until the last has gone
	ln      net.Listener
	logs    *os.Root // the log directory
}

// serveMPS runs the daemon until quit.
func serveMPS(pipe, logDir string, self []string) error {
	for _, dir := range []string{pipe, logDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	// Its files are reached through roots on the directories it was given.
	logs, err := os.OpenRoot(logDir)
	if err != nil {
		return err
	}
	defer logs.Close()
	pipes, err := os.OpenRoot(pipe)
	if err != nil {
		return err
	}
	defer pipes.Close()
	control, err := logs.OpenFile("control.log", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer control.Close()
	sock := filepath.Join(pipe, MPSSocket)
	_ = pipes.Remove(MPSSocket) // a socket left by a daemon that died
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	pidFile := "nvidia-cuda-mps-control.pid"
	f, err := pipes.OpenFile(pidFile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, os.Getpid())
	if err := errors.Join(err, f.Close()); err != nil {
		return err
	}
	d := &mpsDaemon{pipe: pipe, self: self, control: control, clients: map[net.Conn]int{}, ln: ln, logs: logs}
	d.logf(d.control, "Control", os.Getpid(), "Starting control daemon using socket %s", sock)
	for {
		conn, err := ln.Accept()
		if err != nil {
			_ = pipes.Remove(pidFile)
			return nil // closed by quit
		}
		go d.handle(conn)
	}
}

// logf appends one line to a log in NVIDIA's "[date time Who PID] message" form.
func (d *mpsDaemon) logf(w io.Writer, who string, pid int, format string, args ...any) {
	fmt.Fprintf(w, "[%s %s %d] %s\n", time.Now().Format("2006-01-02 15:04:05.000"), who, pid, fmt.Sprintf(format, args...))
}

func (d *mpsDaemon) handle(conn net.Conn) {
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		conn.Close()
		return
	}
	f := strings.Fields(line)
	if len(f) == 0 {
		conn.Close()
		return
	}
	switch f[0] {
	case "client": // a CUDA process under MPS: "client PID"; it keeps the connection
		d.client(conn, f)
		return
	case "fault": // a client's kernel met a fatal exception: "fault PID"
		d.fatal(f)
	case "get_server_list":
		d.mu.Lock()
		if d.server != nil {
			fmt.Fprintf(conn, "%d\n", d.server.Process.Pid)
		}
		d.mu.Unlock()
	case "get_client_list": // "get_client_list SERVER": its clients' PIDs, one a line
		d.clientList(conn, f)
	case "quit":
		d.logf(d.control, "Control", os.Getpid(), "# quit")
		d.mu.Lock()
		if d.serverW != nil {
			_ = d.serverW.Close()
		}
		d.mu.Unlock()
		conn.Close()
		d.ln.Close()
		return
	default:
		fmt.Fprintf(conn, "Unknown command: %s\n", f[0])
	}
	conn.Close()
}

// clientList answers get_client_list SERVER with the PIDs of that server's clients.
func (d *mpsDaemon) clientList(conn net.Conn, f []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(f) < 2 || d.server == nil || f[1] != strconv.Itoa(d.server.Process.Pid) {
		return // no such server: no clients
	}
	for _, pid := range d.clients {
		fmt.Fprintf(conn, "%d\n", pid)
	}
}

// client serves one client: a server is started for it when none runs, and the client is
// told the server's PID; its end (the connection closed) is logged.
func (d *mpsDaemon) client(conn net.Conn, f []string) {
	pid := 0
	if len(f) > 1 {
		pid, _ = strconv.Atoi(f[1])
	}
	d.mu.Lock()
	if d.fault {
		d.mu.Unlock()
		fmt.Fprintln(conn, "error: the MPS server is not ready to accept new MPS client requests")
		conn.Close()
		return
	}
	if d.server == nil {
		if err := d.startServer(); err != nil {
			d.mu.Unlock()
			fmt.Fprintf(conn, "error: %v\n", err)
			conn.Close()
			return
		}
	} else {
		d.logf(d.control, "Control", os.Getpid(), "NEW CLIENT %d from user %d: Server already exists", pid, os.Getuid())
	}
	server := d.server.Process.Pid
	d.clients[conn] = pid
	d.logf(d.serverLog(), "Server", server, "New client %d connected", pid)
	d.mu.Unlock()
	fmt.Fprintf(conn, "ok %d\n", server)
	_, _ = io.Copy(io.Discard, conn) // until the client ends, or the server drops it
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.clients[conn]; ok {
		delete(d.clients, conn)
		d.logf(d.serverLog(), "Server", server, "Client %d disconnected", pid)
	}
	conn.Close()
	if len(d.clients) == 0 {
		d.fault = false // the server recovers once every client of a fault has gone
	}
}

// serverLog opens server.log for one append; the simulation keeps no handle.
func (d *mpsDaemon) serverLog() io.Writer { return appendLog{d.logs} }

type appendLog struct{ root *os.Root }

func (a appendLog) Write(p []byte) (int, error) {
	f, err := a.root.OpenFile("server.log", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.Write(p)
}

// startServer starts the server process. Hold d.mu.
func (d *mpsDaemon) startServer() error {
	cmd := exec.Command(d.self[0], d.self[1:]...)
	cmd.Args[0] = MPSServerName
	w, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	d.server, d.serverW = cmd, w
	pid := cmd.Process.Pid
	d.logf(d.control, "Control", os.Getpid(), "Starting new server %d for user %d", pid, os.Getuid())
	d.logf(d.control, "Control", os.Getpid(), "NEW SERVER %d: Ready", pid)
	go func() {
		err := cmd.Wait()
		status := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			status = exit.ExitCode()
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		d.logf(d.control, "Control", os.Getpid(), "Server %d exited with status %d", pid, status)
		d.server, d.serverW = nil, nil
		d.dropClients() // a server's clients go with it
	}()
	return nil
}

// fatal logs a client's fatal fault and drops every client of the server.
func (d *mpsDaemon) fatal(f []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.server == nil || len(f) < 2 {
		return
	}
	d.logf(d.serverLog(), "Server", d.server.Process.Pid, "Client %s encountered a fatal GPU exception", f[1])
	d.fault = true
	d.dropClients()
}

// dropClients closes every client's connection: each learns its server is gone. Hold d.mu.
func (d *mpsDaemon) dropClients() {
	for c := range d.clients {
		_ = c.Close()
	}
	clear(d.clients)
}

// MPSServer is the simulated nvidia-cuda-mps-server: it serves until its daemon closes its
// stdin.
func MPSServer(stdin io.Reader) int {
	_, _ = io.Copy(io.Discard, stdin)
	return 0
}
