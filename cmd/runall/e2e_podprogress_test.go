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

	"github.com/runall/runall/internal/trainertest"
)

// apiStub is an HTTPS stand-in for the API server: it records the PATCHes of a Pod, or
// refuses them as RBAC does without permission.
type apiStub struct {
	srv    *httptest.Server
	refuse bool

	mu      sync.Mutex
	patches []map[string]string            // each PATCH's annotations
	byPod   map[string][]map[string]string // the same, by the Pod patched
	bad     []string                       // what a request got wrong
}

func newAPIStub(t *testing.T, refuse bool) *apiStub {
	s := &apiStub{refuse: refuse, byPod: map[string][]map[string]string{}}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		pod, _ := strings.CutPrefix(r.URL.Path, "/api/v1/namespaces/sweeps/pods/")
		for _, c := range []struct{ got, want string }{
			{r.Method, http.MethodPatch}, {r.URL.Path, "/api/v1/namespaces/sweeps/pods/" + pod}, {strconv.Itoa(len(pod)), "5"},
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
		s.byPod[pod] = append(s.byPod[pod], body.Metadata.Annotations)
		w.Write([]byte("{}"))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// env is what Pod pod-0's runall sees (envFor).
func (s *apiStub) env(t *testing.T, e *e2e) *e2e { return s.envFor(t, e, "pod-0") }

// envFor is what a Pod's runall sees: the API server's address, its ServiceAccount's mount
// (the stub's certificate as ca.crt), its name (pod-N), and the opt-in.
func (s *apiStub) envFor(t *testing.T, e *e2e, pod string) *e2e {
	sa := e.path("serviceaccount-" + pod)
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
	return e.withEnv("RUNALL_POD_PROGRESS=1", "RUNALL_POD_SERVICEACCOUNT_DIR="+sa, "POD_NAME="+pod,
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
		want := map[string]string{"runall.dev/done": "3", "runall.dev/running": "0", "runall.dev/waiting": "0", "runall.dev/eta": "",
			"runall.dev/scope": "sweep"}
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
	t.Run("shard", func(t *testing.T) { // no store shared: the shard's figures, said so
		t.Parallel()
		s := newAPIStub(t, false)
		e := s.env(t, newE2E(t)).withEnv("JOB_COMPLETION_INDEX=0", "RUNALL_SHARDS=2")
		r := e.run("--log-dir", "logs", write(e))
		r.wantCode(t, 0)
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.bad) > 0 || len(s.patches) == 0 {
			t.Fatalf("patches %v, wrong: %v\n%v", s.patches, s.bad, r)
		}
		last := s.patches[len(s.patches)-1]
		if last["runall.dev/scope"] != "shard 0/2" || last["runall.dev/done"] != "2" {
			t.Errorf("the last patch %v, want scope shard 0/2 and its 2 trials done", last)
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

// TestTrainerStatusPosted (issue 46, point 5): under Kubeflow Trainer's status endpoint the
// Pod of completion index 0 posts the sweep's figures in the shape Trainer v2.2.0 takes
// (internal/trainertest: its request type and CRD, read from Trainer's code) with the token
// and CA its variables name, its last post saying 100%; the Pod of another index posts
// nothing.
func TestTrainerStatusPosted(t *testing.T) {
	t.Parallel()
	for _, index := range []string{"0", "1"} {
		t.Run("index "+index, func(t *testing.T) {
			t.Parallel()
			s := trainertest.New(t, "sweeps", "tj", "tr4iner")
			e := newE2E(t)
			e = e.withEnv(append(s.Env(t, e.path("trainer")), "JOB_COMPLETION_INDEX="+index, "RUNALL_SHARDS=")...)
			f := e.path("tasks.yml")
			if err := os.WriteFile(f, []byte(progressFile), 0o644); err != nil {
				t.Fatal(err)
			}
			r := e.run("--log-dir", "logs", f)
			r.wantCode(t, 0)
			if bad := s.Refused(); len(bad) > 0 {
				t.Fatalf("Trainer refused: %q\n%v", bad, r)
			}
			posts := s.Posts()
			if index != "0" {
				if len(posts) > 0 {
					t.Errorf("index %s posted %v: one Pod of a sweep posts", index, posts)
				}
				return
			}
			if len(posts) == 0 {
				t.Fatalf("nothing posted\n%v", r)
			}
			last := posts[len(posts)-1]
			if last.ProgressPercentage == nil || *last.ProgressPercentage != 100 {
				t.Errorf("the last post %+v, want progressPercentage 100", last)
			}
			if v, _ := last.Get("trialsDone"); v != "3" {
				t.Errorf("the last post's metrics %q, want trialsDone 3", last.Metrics)
			}
		})
	}
}
