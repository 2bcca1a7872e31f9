package mps

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// RecordFile is the file beside an own daemon's pipe and log directories
// ($TMPDIR/runall-mps-*/INDEX/daemon.json) that names the GPU it serves and the run that
// started it, so that `runall gpus` can say whose daemon serves each GPU. It goes with the
// directory when the run ends.
const RecordFile = "daemon.json"

// record is what RecordFile holds.
type record struct {
	UUID    string    `json:"uuid"`    // the GPU the daemon serves
	Index   int       `json:"index"`   // runall's index of it, in the run
	RunPID  int       `json:"run_pid"` // the runall that started it
	Run     string    `json:"run"`     // that run's task file
	Started time.Time `json:"started"`
}

// record writes an own daemon's RecordFile.
func (d *Daemon) record() error {
	run := d.set.runFile
	if abs, err := filepath.Abs(run); err == nil && run != "" {
		run = abs
	}
	b, err := json.Marshal(record{UUID: d.UUID, Index: d.Index, RunPID: os.Getpid(), Run: run, Started: time.Now().UTC()})
	if err != nil {
		return err
	}
	return d.set.dir.WriteFile(filepath.Join(strconv.Itoa(d.Index), RecordFile), append(b, '\n'), 0o600)
}

// GPU is the MPS state of one GPU, as `runall gpus` shows it.
type GPU struct {
	// Daemon is whose control daemon serves the GPU: "run" (a runall run's own), "node"
	// (the one at CUDA_MPS_PIPE_DIRECTORY, which serves every GPU it sees) or "none".
	Daemon     string `json:"daemon"`
	Pipe       string `json:"pipe,omitempty"`        // its CUDA_MPS_PIPE_DIRECTORY
	ControlPID int    `json:"control_pid,omitempty"` // from its pid file (a run's daemon only)
	RunPID     int    `json:"run_pid,omitempty"`     // the runall that started it
	Run        string `json:"run,omitempty"`         // that run's task file
	// RunGone is that the runall that started it is gone (killed): the next run with
	// gpu-isolation: mps stops it once it has no clients (leftover.go).
	RunGone bool   `json:"run_gone,omitempty"`
	Answers bool   `json:"answers"`         // get_server_list through its pipe answered
	Servers []int  `json:"servers"`         // its servers' PIDs
	Clients int    `json:"clients"`         // their clients (get_client_list)
	Err     string `json:"error,omitempty"` // why it did not answer
}

// Find says, for each GPU of uuids (by runall's index), which MPS control daemon serves it
// now: a runall run's, found by its RecordFile under TMPDIR (as environ sets it), else the
// node's daemon when st says one answers, else none. Each daemon found is asked through its
// control pipe, with the nvidia-cuda-mps-control st found (st.Control).
func Find(environ []string, uuids []string, st State) []GPU {
	runs := runDaemons(environ)
	out := make([]GPU, len(uuids))
	for i, uuid := range uuids {
		switch r, ok := runs[uuid]; {
		case ok:
			g := GPU{Daemon: "run", Pipe: filepath.Join(r.dir, "pipe"), RunPID: r.RunPID, Run: r.Run}
			g.ControlPID = readPID(g.Pipe)
			g.ask(environ, st.Control, filepath.Join(r.dir, "log"))
			if g.RunGone = !alive(r.RunPID); g.RunGone && !g.Answers {
				g.Err += fmt.Sprintf(" (left behind: the run, pid %d, has ended)", r.RunPID)
			}
			out[i] = g
		case st.Answers:
			g := GPU{Daemon: "node", Pipe: st.Node}
			logDir, _ := lookup(environ, EnvLog)
			g.ask(environ, st.Control, logDir)
			out[i] = g
		default:
			out[i] = GPU{Daemon: "none", Servers: []int{}}
		}
	}
	return out
}

// ask asks the daemon at g.Pipe for its servers and their clients.
func (g *GPU) ask(environ []string, bin, logDir string) {
	g.Servers = []int{}
	if bin == "" {
		g.Err = Binary + " is not on PATH: cannot ask it"
		return
	}
	d := &Daemon{set: &Set{bin: bin, environ: environ}, Pipe: g.Pipe, Log: logDir, Index: -1}
	servers, err := d.Servers()
	if err != nil {
		g.Err = firstLine(err.Error())
		return
	}
	g.Answers, g.Servers = true, append(g.Servers, servers...)
	for _, s := range servers {
		clients, err := d.pids("get_client_list " + strconv.Itoa(s))
		if err != nil {
			g.Err = firstLine(err.Error())
			continue
		}
		g.Clients += len(clients)
	}
}

// found is a run's daemon found by its RecordFile; dir holds its pipe and log directories.
type found struct {
	record
	dir string
}

// runDaemons reads the RecordFiles of runall's daemons under TMPDIR, by GPU UUID: the
// newest for each.
func runDaemons(environ []string) map[string]found {
	out := map[string]found{}
	for _, f := range runRecords(tmpDir(environ)) {
		if prev, ok := out[f.UUID]; !ok || f.Started.After(prev.Started) {
			out[f.UUID] = f
		}
	}
	return out
}

// tmpDir is TMPDIR as environ sets it, else /tmp.
func tmpDir(environ []string) string {
	if tmp, _ := lookup(environ, "TMPDIR"); tmp != "" {
		return tmp
	}
	return "/tmp"
}

// runRecords reads the RecordFiles of runall's daemons under tmp. Only directories of this
// user are read, and the pipe is the one beside the record, whatever the record says: a
// directory another user put there names no daemon of ours.
func runRecords(tmp string) []found {
	files, _ := filepath.Glob(filepath.Join(tmp, "runall-mps-*", "*", RecordFile))
	var out []found
	for _, f := range files {
		dir := filepath.Dir(f)
		if !ours(filepath.Dir(dir)) || !ours(dir) {
			continue
		}
		var r record
		if err := readRecord(f, &r); err != nil || r.UUID == "" {
			continue
		}
		out = append(out, found{r, dir})
	}
	return out
}

// ours reports whether path is a directory (not a link) of this user.
func ours(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() {
		return false
	}
	sys, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid()
}

func readRecord(path string, r *record) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return json.NewDecoder(io.LimitReader(f, 1<<16)).Decode(r)
}
