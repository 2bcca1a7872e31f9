package trial

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/runall/runall/internal/owned"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
)

// Scripts are where a run's tasks' scripts and directories are: url: scripts are
// downloaded once each into Dir; a task's cwd: is against TaskDir.
type Scripts struct {
	Dir     string   // where url: scripts are kept
	TaskDir string   // the task file's directory
	Base    []string // the run's environment
}

// scripts prepares what a run's tasks run: their url: scripts, downloaded once each, and
// their directories.
type scripts struct {
	o    Scripts
	halt Halt       // a stop ends a hanging download at once
	mu   sync.Mutex // one download per url:, also when parallel children share it
}

// prepare resolves what a task runs and where: url: downloads (and md5 checks) a script,
// sudo: wraps the command when runall is not root.
func (s *scripts) prepare(ctx context.Context, t *plan.Task) (cmdline, dir string, err error) {
	cmdline = t.Cmd
	env := plan.TaskVars(t, s.o.Base)
	if t.URL != "" {
		url, err := plan.ExpandStrictEnv(t.URL, env)
		if err != nil {
			return "", "", fmt.Errorf("url: %w", err)
		}
		fctx, stop := s.halt.UntilStop(ctx) // a stop ends a hanging download at once
		script, err := s.fetch(fctx, url, t.MD5)
		stop()
		if err != nil {
			return "", "", err
		}
		switch {
		case cmdline == "":
			cmdline = shellQuote(script)
		case strings.Contains(cmdline, "<exec>"):
			cmdline = strings.ReplaceAll(cmdline, "<exec>", shellQuote(script))
		default:
			cmdline = shellQuote(script) + " " + cmdline
		}
	}
	if t.Sudo && os.Geteuid() != 0 {
		if _, err := exec.LookPath("sudo"); err != nil {
			return "", "", fmt.Errorf("%s: task %q has sudo: true, but runall is not root and there is no sudo", t.Pos, t.Name)
		}
		cmdline = "sudo -n -E " + shellQuote(proc.Shell()) + " -c " + shellQuote(cmdline)
	}
	dir = s.o.TaskDir
	if t.Cwd != "" {
		cwd, err := plan.ExpandStrictEnv(t.Cwd, env)
		if err != nil {
			return "", "", fmt.Errorf("cwd: %w", err)
		}
		dir = plan.TaskPath(s.o.TaskDir, cwd)
	}
	if dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", "", fmt.Errorf("cwd %q: not a directory", dir)
		}
	}
	return cmdline, dir, nil
}

// fetch downloads a url: task's script once per run and checks its md5 (when given).
func (s *scripts) fetch(ctx context.Context, url, wantMD5 string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := md5.Sum([]byte(url))
	path := filepath.Join(s.o.Dir, hex.EncodeToString(sum[:8])+"-"+filepath.Base(url))
	if _, err := os.Stat(path); err != nil {
		if err := downloadFile(ctx, url, path); err != nil {
			return "", fmt.Errorf("url %s: %w", url, err)
		}
	}
	if wantMD5 != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		got := md5.Sum(b)
		if !strings.EqualFold(hex.EncodeToString(got[:]), wantMD5) {
			return "", fmt.Errorf("url %s: md5 is %x, the task file expects %s", url, got, wantMD5)
		}
	}
	return path, nil
}

// scriptClient fetches url: scripts; a stalled server fails the task instead of hanging it.
var scriptClient = &http.Client{Timeout: 5 * time.Minute}

func downloadFile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := scriptClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download: %s", resp.Status)
	}
	dir, err := owned.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Replace(filepath.Base(path), 0o755, func(w io.Writer) error {
		_, err := io.Copy(w, resp.Body)
		return err
	})
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-+=:,@", c))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
