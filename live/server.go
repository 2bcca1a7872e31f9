// Package live serves a run while it goes on (--serve): its report, the page runall writes
// as report.html at the end, drawn again as trials advance and followed by the browser
// without reloading; the run's state as JSON in the schema of results.json (/api/run);
// each trial's log as it grows; and Prometheus metrics (/metrics).
//
// It is read-only: nothing it serves changes the run. It is a consumer of the run's events
// that never blocks the emitter: an event only marks the state changed. The pages are drawn
// off the emitting path, at most one at a time and about once a second however many
// browsers follow, and shared by all of them; a browser that stops reading is dropped.
// It has no authentication of its own: bind it to 127.0.0.1 (kubectl port-forward reaches
// that) or to the Pod's network, never to a public address. It answers only requests that
// name it by an address, localhost, or one of Options.Hosts (DNS rebinding: hosts.go).
package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/runall/runall/runner"
	"github.com/runall/runall/runner/event"
)

// Options say where to listen and how much a server may take.
type Options struct {
	Addr string // host:port; ":0" picks a free port
	// Every is how often, at most, the page is drawn again while something changes
	// (default 1s); a page that takes long to draw is drawn less often.
	Every time.Duration
	// WriteTimeout drops a client that takes no more of a response for this long
	// (default 10s).
	WriteTimeout time.Duration
	// MaxFollowers bounds the browsers following the run at once (default 100); MaxConns
	// the connections (default 256): more wait to be accepted.
	MaxFollowers, MaxConns int
	// Hosts are the names besides addresses and localhost that a request's Host may be
	// (--serve-hosts): "name", ".domain" for every name under it, "*" for any.
	Hosts []string
}

func (o Options) withDefaults() Options {
	if o.Every <= 0 {
		o.Every = time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.MaxFollowers <= 0 {
		o.MaxFollowers = 100
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 256
	}
	return o
}

// Server is a run's live server: a runner.Server.
type Server struct {
	o      Options
	frames *frames
	follow *followers
	done   chan struct{} // closed by Close: followers and the drawing loop end
	view   runner.View   // set by Serve, before any request

	mu   sync.Mutex
	http *http.Server // nil until Serve
	ln   *limited
	addr string
}

// New makes a server; Serve (the run calls it) starts it.
func New(o Options) *Server {
	o = o.withDefaults()
	s := &Server{o: o, done: make(chan struct{}), follow: &followers{max: o.MaxFollowers}}
	s.frames = newFrames(o.Every)
	return s
}

var _ runner.Server = (*Server)(nil)

// Serve listens on the server's address and serves v until Close.
func (s *Server) Serve(v runner.View) (string, error) {
	ln, err := net.Listen("tcp", s.o.Addr)
	if err != nil {
		return "", fmt.Errorf("--serve %s: %w (give another address, or :0 for any free port)", s.o.Addr, err)
	}
	s.frames.view(v.Results)
	s.view = v
	srv := &http.Server{
		Handler:           s.handler(v.Metrics),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	lim := limitListener(ln, s.o.MaxConns)
	s.mu.Lock()
	s.http, s.ln, s.addr = srv, lim, ln.Addr().String()
	s.mu.Unlock()
	go s.frames.loop(s.done, s.follow)
	go func() { _ = srv.Serve(lim) }()
	return s.addr, nil
}

// Addr is where the server listens, "" before Serve.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Event marks the page changed by what the run just did. It never blocks: the drawing is
// the server's own goroutine's, or a request's.
func (s *Server) Event(ev event.Event, _ func(event.Event)) {
	switch ev.Kind {
	case event.TaskOutput, event.RunStatus, event.SyncProgress:
		return // nothing the page shows (a trial's log is read from its file)
	case event.RunEnded:
		s.frames.end(ev.Results)
	}
	s.frames.touch()
}

// Close stops serving: followers are told nothing more and dropped, requests under way get
// a second to finish.
func (s *Server) Close() error {
	s.mu.Lock()
	srv := s.http
	s.http = nil
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	close(s.done)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return srv.Close()
}
