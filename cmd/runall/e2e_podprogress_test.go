package main_test

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// apiStub is an HTTPS stand-in for the API server: it records the PATCHes of a Pod, or
// refuses them as RBAC does without permission.
type apiStub struct {
	srv    *httptest.Server
	refuse bool

	mu      sync.Mutex
	patches []map[string]string // each PATCH's annotations
	bad     []string            // what a request got wrong
}

func newAPIStub(t *testing.T, refuse bool) *apiStub {
	s := &apiStub{refuse: refuse}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range []struct{ got, want string }{
			{r.Method, http.MethodPatch}, {r.URL.Path, "/api/v1/namespaces/sweeps/pods/pod-0"},
			{r.Header.Get("Content-Type"), "application/merge-patch+json"}, {r.Header.Get("Authorization"), "Bearer tok3n"},
		} {
			if c.got != c.want {
				s.bad = append(s.bad, c.got+", want "+c.want)
			}
		}
		if s.refuse {
			http.Error(w, `pods "pod-0" is forbidden`, http.StatusForbidden)
			return
		}
		var body struct {
			Metadata struct{ Annotations map[string]string }
		}
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &body); err != nil {
			s.bad = append(s.bad, "body "+string(data))
		}
		s.patches = append(s.patches, body.Metadata.Annotations)
		w.Write([]byte("{}"))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// env is what a Pod's runall sees: the API server's address, its ServiceAccount's mount
// (the stub's certificate as ca.crt), its name, and the opt-in.
func (s *apiStub) env(t *testing.T, e *e2e) *e2e {
	sa := e.path("serviceaccount")
	if err := os.MkdirAll(sa, 0o755); err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
	for name, data := range map[string][]byte{"token": []byte("tok3n\n"), "namespace": []byte("sweeps"), "ca.crt": ca} {
		if err := os.WriteFile(filepath.Join(sa, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	host, port, _ := net.SplitHostPort(s.srv.Listener.Addr().String())
	return e.withEnv("RUNALL_POD_PROGRESS=1", "RUNALL_POD_SERVICEACCOUNT_DIR="+sa, "POD_NAME=pod-0",
		"KUBERNETES_SERVICE_HOST="+host, "KUBERNETES_SERVICE_PORT="+port)
}

const progressFile = `tasks:
  - name: sweep
    parallel-tasks:
      - name: trial <i>
        matrix: {i: [1, 2, 3]}
        cmd: echo "loss=0.<i>"
`

// TestPodProgressAnnotations (issue 46, point 5): with RUNALL_POD_PROGRESS=1, runall patches
// its own Pod's annotations (a JSON merge patch with its ServiceAccount token, verified
// against the mounted CA) with the sweep's figures, its last patch saying every task done;
// refused, it says so once and runs on; not asked, it sends nothing.
func TestPodProgressAnnotations(t *testing.T) {
	t.Parallel()
	write := func(e *e2e) string {
		f := e.path("tasks.yml")
		if err := os.WriteFile(f, []byte(progressFile), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	t.Run("patched", func(t *testing.T) {
		t.Parallel()
		s := newAPIStub(t, false)
		e := s.env(t, newE2E(t))
		r := e.run("--log-dir", "logs", write(e))
		r.wantCode(t, 0)
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.bad) > 0 || len(s.patches) == 0 {
			t.Fatalf("patches %v, wrong: %v\n%v", s.patches, s.bad, r)
		}
		last := s.patches[len(s.patches)-1]
		want := map[string]string{"runall.dev/done": "3", "runall.dev/running": "0", "runall.dev/waiting": "0", "runall.dev/eta": ""}
		for k, v := range want {
			if last[k] != v {
				t.Errorf("the last patch's %s = %q, want %q (%v)", k, last[k], v, last)
			}
		}
		for _, p := range s.patches {
			var n int
			for _, k := range []string{"runall.dev/done", "runall.dev/running", "runall.dev/waiting"} {
				v, _ := strconv.Atoi(p[k])
				n += v
			}
			if n != 3 {
				t.Errorf("a patch counts %d tasks done, running and waiting, want 3: %v", n, p)
			}
		}
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		s := newAPIStub(t, true)
		e := s.env(t, newE2E(t))
		r := e.run("--log-dir", "logs", write(e))
		r.wantCode(t, 0)
		if n := strings.Count(r.stderr, "progress annotations off"); n != 1 {
			t.Errorf("said %d times that the annotations are off, want once\n%v", n, r)
		}
	})
	t.Run("not asked", func(t *testing.T) {
		t.Parallel()
		s := newAPIStub(t, false)
		e := s.env(t, newE2E(t)).withEnv("RUNALL_POD_PROGRESS=")
		r := e.run("--log-dir", "logs", write(e))
		r.wantCode(t, 0)
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.patches) > 0 || strings.Contains(r.stderr, "progress annotations") {
			t.Errorf("not asked, runall patched %v\n%v", s.patches, r)
		}
	})
}

// trainerStub is an HTTPS stand-in for Kubeflow Trainer's status endpoint: it records what
// is posted to it.
type trainerStub struct {
	srv *httptest.Server

	mu    sync.Mutex
	posts []map[string]any // each POST's trainerStatus
	bad   []string
}

const trainerPath = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/sweeps/trainjobs/tj/status"

func newTrainerStub(t *testing.T) *trainerStub {
	s := &trainerStub{}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != trainerPath || r.Header.Get("Authorization") != "Bearer tr4iner" {
			s.bad = append(s.bad, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		}
		var body struct{ TrainerStatus map[string]any }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			s.bad = append(s.bad, err.Error())
		}
		s.posts = append(s.posts, body.TrainerStatus)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *trainerStub) env(t *testing.T, e *e2e, index string) *e2e {
	dir := e.path("trainer")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
	for name, data := range map[string][]byte{"token": []byte("tr4iner"), "ca.crt": ca} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return e.withEnv("KUBEFLOW_TRAINER_STATUS_URL="+s.srv.URL+trainerPath, "KUBEFLOW_TRAINER_STATUS_TOKEN="+filepath.Join(dir, "token"),
		"KUBEFLOW_TRAINER_STATUS_CA_CERT="+filepath.Join(dir, "ca.crt"), "JOB_COMPLETION_INDEX="+index, "RUNALL_SHARDS=")
}

// TestTrainerStatusPosted (issue 46, point 5): under Kubeflow Trainer's status endpoint the
// Pod of completion index 0 posts the sweep's figures in Trainer's shape (trainerStatus:
// progressPercentage, metrics, lastUpdatedTime) with the token and CA the variables name, its
// last post saying 100%; the Pod of another index posts nothing.
func TestTrainerStatusPosted(t *testing.T) {
	t.Parallel()
	for _, index := range []string{"0", "1"} {
		t.Run("index "+index, func(t *testing.T) {
			t.Parallel()
			s := newTrainerStub(t)
			e := s.env(t, newE2E(t), index)
			f := e.path("tasks.yml")
			if err := os.WriteFile(f, []byte(progressFile), 0o644); err != nil {
				t.Fatal(err)
			}
			r := e.run("--log-dir", "logs", f)
			r.wantCode(t, 0)
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.bad) > 0 {
				t.Fatalf("wrong requests: %v\n%v", s.bad, r)
			}
			if index != "0" {
				if len(s.posts) > 0 {
					t.Errorf("index %s posted %v: one Pod of a sweep posts", index, s.posts)
				}
				return
			}
			if len(s.posts) == 0 {
				t.Fatalf("nothing posted\n%v", r)
			}
			last := s.posts[len(s.posts)-1]
			if last["progressPercentage"] != float64(100) || last["lastUpdatedTime"] == "" {
				t.Errorf("the last post %v, want progressPercentage 100 and a lastUpdatedTime", last)
			}
			data, _ := json.Marshal(last["metrics"])
			if !strings.Contains(string(data), `{"name":"trialsDone","value":"3"}`) {
				t.Errorf("the last post's metrics %s, want trialsDone 3", data)
			}
		})
	}
}
