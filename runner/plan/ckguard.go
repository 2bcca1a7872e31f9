package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/runall/runall/internal/pathname"
)

// runall empties a trial's checkpoint: directory before a fresh start and replaces it
// before a resume, so the directory must be the trial's own. checkpoint: . and .. are
// refused as written, but so must be every other spelling of a place runall does not own
// (../sub from within sub, ${PWD}, an absolute path, ck/../../sub, ${HOME}, a symlink to
// one): the path is resolved (variables, placeholders, cwd:, symlinks) and refused when it is
// /, $HOME, the working directory, the log directory, the task file's directory, the
// trial's own working directory, or a parent of one of them; or when it lies inside the
// log directory, which holds the checkpoint store (state/checkpoints) and runall's state.
// A checkpoint: that is itself a symbolic link, wherever it leads, is refused too: runall
// neither looks inside it nor replaces it (a link in a parent is followed, as the kernel does).
// check refuses it (Plan.CheckCheckpointDirs), and the run again as it expands the path
// for an attempt, when every value is known (the runner's checkpoints.begin).

// CheckpointGuard holds the places no trial's checkpoint: may be or hold.
type CheckpointGuard struct {
	places []guardedPlace
	logDir string // resolved; "" when unknown
}

type guardedPlace struct{ what, dir string }

// NewCheckpointGuard is the guard for a run in the working directory of this process, with
// environ's HOME, the task file's directory taskDir and the log directory logDir.
func NewCheckpointGuard(environ []string, taskDir, logDir string) *CheckpointGuard {
	g := &CheckpointGuard{}
	add := func(what, dir string) {
		if dir != "" {
			g.places = append(g.places, guardedPlace{what, pathname.Real(dir)})
		}
	}
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			add("$HOME", v)
		}
	}
	if wd, err := os.Getwd(); err == nil {
		add("runall's working directory", wd)
	}
	add("the task file's directory", taskDir)
	add("the log directory", logDir)
	if logDir != "" {
		g.logDir = pathname.Real(logDir)
	}
	return g
}

// Check refuses dir, a trial's checkpoint directory resolved against cmdDir (where its
// command runs), when runall does not own it; the error says what it is and what to do.
func (g *CheckpointGuard) Check(dir, cmdDir string) error {
	path := pathname.Real(dir)
	places := g.places
	if cmdDir != "" {
		places = append(places[:len(places):len(places)], guardedPlace{"the trial's working directory", pathname.Real(cmdDir)})
	}
	why := ""
	switch {
	case path == "/":
		why = "the filesystem's root"
	case g.logDir != "" && pathname.Within(path, g.logDir) && path != g.logDir:
		why = "inside the log directory " + g.logDir + ", where runall keeps its state and the kept checkpoints"
	}
	for _, p := range places { // the place it is, before one it holds
		if why == "" && p.dir == path {
			why = p.what + " (" + p.dir + ")"
		}
	}
	for _, p := range places {
		if why == "" && pathname.Within(p.dir, path) {
			why = "a parent of " + p.what + " (" + p.dir + ")"
		}
	}
	if why == "" {
		return refuseLink(dir, path)
	}
	return fmt.Errorf("%s is %s: runall empties a trial's checkpoint directory before it starts and replaces it before it resumes; "+
		"name a directory of the trial's own, such as ckpt/<lr> beside the task file", path, why)
}

// refuseLink refuses dir when it is itself a symbolic link (real: where it leads): runall
// would neither look inside it nor may it replace it on a restore (runner/checkpoint
// refuses one as well, should a script make it between attempts).
func refuseLink(dir, real string) error {
	fi, err := os.Lstat(dir)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return nil
	}
	return fmt.Errorf("%s is a symbolic link (to %s): runall keeps, empties and restores a trial's checkpoint directory itself and never replaces a link it did not make; "+
		"name the directory it leads to in checkpoint:, or remove the link", dir, real)
}

// CheckCheckpointDirs refuses every trial's checkpoint: that resolves, against environ,
// the trial's env: and params, its cwd: and the task file's directory, to a directory
// runall does not own (CheckpointGuard), logDir being the run's --log-dir. A ${VAR} that is
// unset is left to CheckVars. nil when all is well, else a *FileError.
func (p *Plan) CheckCheckpointDirs(environ []string, logDir string) error {
	g := NewCheckpointGuard(environ, p.Dir, logDir)
	base := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		base[k] = v
	}
	base["RUNALL_LOG_DIR"] = filepath.Join(logDir, "RUN_ID")
	var problems []Problem
	Walk(p.Tasks, func(t *Task) {
		if t.Checkpoint == nil {
			return
		}
		env := taskVars(base, t)
		lookup := lookupIn(env)
		dir, err := ExpandStrict(t.Checkpoint.Dir, lookup)
		cwd, cwdErr := ExpandStrict(t.Cwd, lookup)
		if err != nil || cwdErr != nil {
			return
		}
		cmdDir := joinDir(p.Dir, cwd)
		if err := g.Check(joinDir(cmdDir, dir), cmdDir); err != nil {
			problems = append(problems, Problem{Pos: t.Checkpoint.Pos, Msg: fmt.Sprintf("checkpoint: %s: %v", t.Checkpoint.Dir, err)})
		}
	})
	if len(problems) == 0 {
		return nil
	}
	return &FileError{Problems: problems}
}

// joinDir is p against dir, as a command's cwd: and checkpoint: are taken: nothing cleaned,
// so that RealPath takes a ".." after the link before it; dir when p is "".
func joinDir(dir, p string) string { return pathname.Join(dir, p) }
