package live

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runall/runall/report"
)

// handler routes the server's endpoints, all of them GET (and HEAD): nothing changes the
// run. Every URL the page uses is relative, so that it works through a port-forward, a
// proxy's path prefix, or from disk.
func (s *Server) handler(metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /api/run", s.run)
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("GET /api/log/{id}", s.logTail)
	mux.HandleFunc("GET /{file}", s.logFile)
	mux.Handle("GET /metrics", metrics)
	policy := report.ContentSecurityPolicy()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, s.o.Hosts) {
			http.Error(w, fmt.Sprintf("runall --serve: this server is not served as %q: only as its address or localhost, "+
				"so that no other site's page can read the run (DNS rebinding). To serve it under that name (a Service's, "+
				"an Ingress's), start runall with --serve-hosts %s (or RUNALL_SERVE_HOSTS).", r.Host, hostOnly(r.Host)), http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", policy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	})
}

// page is the report as it stands.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	fr := s.frames.current()
	if fr.err != nil {
		http.Error(w, "runall: cannot draw the report: "+fr.err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Vary", "Accept-Encoding")
	body := fr.page
	if acceptsGzip(r) {
		w.Header().Set("Content-Encoding", "gzip")
		body = fr.gzipped()
	}
	s.send(w, r, body)
}

// run is the run's state in the schema of results.json.
func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	fr := s.frames.current()
	w.Header().Set("Content-Type", "application/json")
	s.send(w, r, fr.resultsJSON())
}

func acceptsGzip(r *http.Request) bool {
	for _, enc := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(enc), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// send writes a whole response, body shared with other clients.
func (s *Server) send(w http.ResponseWriter, r *http.Request, body []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = s.writer(w).Write(body)
}

// writer writes to a client in pieces, each of which it must take within WriteTimeout, or
// its connection is closed: a client that stops reading is dropped, and holds no more than
// its connection's buffers meanwhile.
func (s *Server) writer(w http.ResponseWriter) *deadlineWriter {
	return &deadlineWriter{w: w, rc: http.NewResponseController(w), timeout: s.o.WriteTimeout}
}

type deadlineWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

const writePiece = 64 << 10

func (d *deadlineWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		piece := p[:min(len(p), writePiece)]
		if err := d.rc.SetWriteDeadline(time.Now().Add(d.timeout)); err != nil {
			return n, err
		}
		m, err := d.w.Write(piece)
		n += m
		if err != nil {
			return n, err
		}
		p = p[m:]
	}
	return n, nil
}

// flush sends what was written: an event reaches the browser at once.
func (d *deadlineWriter) flush() error {
	if err := d.rc.SetWriteDeadline(time.Now().Add(d.timeout)); err != nil {
		return err
	}
	return d.rc.Flush()
}

// followers counts the browsers following the run (its event stream), at most max.
type followers struct {
	mu     sync.Mutex
	n, max int
}

func (f *followers) join() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n >= f.max {
		return false
	}
	f.n++
	return true
}

func (f *followers) leave() {
	f.mu.Lock()
	f.n--
	f.mu.Unlock()
}

func (f *followers) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// keepAlive is how often a quiet event stream says it is there, so that proxies and
// port-forwards do not close it as idle.
const keepAlive = 15 * time.Second

// events is the stream a page follows (server-sent events): the version of each new
// drawing of the run; the page fetches itself again when it is not the one it shows.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if !s.follow.join() {
		http.Error(w, fmt.Sprintf("runall: %d browsers follow this run already, the most it serves; try again later", s.o.MaxFollowers),
			http.StatusServiceUnavailable)
		return
	}
	defer s.follow.leave()
	dw := s.writer(w)
	_ = dw.rc.SetReadDeadline(time.Time{}) // the stream outlives the server's ReadTimeout
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	s.frames.current() // the version the page will compare with its own
	keep := time.NewTicker(keepAlive)
	defer keep.Stop()
	var sent uint64
	for {
		v, next := s.frames.news.latest()
		if v != sent {
			if _, err := fmt.Fprintf(dw, "event: version\ndata: %d\n\n", v); err != nil || dw.flush() != nil {
				return
			}
			sent = v
		}
		select {
		case <-next:
		case <-keep.C:
			if _, err := dw.Write([]byte(": keep-alive\n\n")); err != nil || dw.flush() != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}
