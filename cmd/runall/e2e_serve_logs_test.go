package main_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLiveServerFollowsNoSymlinkAtLogPath puts a symlink to a secret file, then another
// file, at a running trial's log path: the live server serves neither, at the name the page
// links nor at /api/log/<id>, and says the log is no longer the one runall wrote. The trial's
// log, as runall opened it, is served before that.
func TestLiveServerFollowsNoSymlinkAtLogPath(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	secret := e.path("secret.txt")
	e.writeFile("secret.txt", "the secret\n")
	e.writeFile("tasks.yml", "tasks:\n  - name: t1\n    cmd: echo started; while [ ! -e go ]; do sleep 0.05; done\n")
	p := e.start("--log-dir", "logs", "--serve", "127.0.0.1:0", "tasks.yml")
	url := served(p)
	var log string
	eventually(t, "the trial's log to hold its line", func() bool {
		m, _ := filepath.Glob(e.path("logs", "latest", "001-*.log"))
		if len(m) == 1 {
			b, _ := os.ReadFile(m[0])
			log = m[0]
			return strings.Contains(string(b), "started")
		}
		return false
	})
	name := filepath.Base(log)
	if code, body := fetch(t, url+name); code != 200 || !strings.Contains(body, "started") {
		t.Fatalf("the trial's own log is not served: %d %q", code, body)
	}
	other := log + ".other"
	if err := os.WriteFile(other, []byte("not runall's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, put := range []func() error{
		func() error { return os.Symlink(secret, log) },
		func() error { return os.Rename(other, log) },
	} {
		if err := os.Remove(log); err != nil {
			t.Fatal(err)
		}
		if err := put(); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{name, "api/log/1"} {
			code, body := fetch(t, url+path)
			if code == 200 || strings.Contains(body, "the secret") || strings.Contains(body, "not runall's") {
				t.Errorf("/%s served what was put at the log's path: %d %q", path, code, body)
			}
			if !strings.Contains(body, "no longer the log runall wrote") {
				t.Errorf("/%s does not say why it serves nothing: %q", path, body)
			}
		}
	}
	e.writeFile("go", "")
	p.wait().wantCode(t, 0)
	if b, _ := os.ReadFile(secret); string(b) != "the secret\n" {
		t.Errorf("the secret file was written: %q", b)
	}
}

func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
