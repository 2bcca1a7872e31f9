package live

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runall/runall/report"
	"github.com/runall/runall/runner/results"
)

// frame is one drawing of the run: its page and, when asked for, its results as JSON and
// the page gzipped. Every client asking while it is current gets these same bytes.
type frame struct {
	version uint64
	at      time.Time // when it was drawn
	res     *results.Run
	page    []byte
	err     error // the page could not be drawn

	jsonOnce sync.Once
	json     []byte
	gzOnce   sync.Once
	gz       []byte
}

// resultsJSON is the frame's results as results.json holds them.
func (f *frame) resultsJSON() []byte {
	f.jsonOnce.Do(func() {
		b, err := json.MarshalIndent(f.res, "", "  ")
		if err != nil { // metrics are checked to be finite: a bug, said as JSON
			b, _ = json.Marshal(map[string]string{"error": "cannot encode the results: " + err.Error()})
		}
		f.json = append(b, '\n')
	})
	return f.json
}

// gzipped is the page, gzipped once for every client that takes it so.
func (f *frame) gzipped() []byte {
	f.gzOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed) // a valid level: cannot fail
		_, _ = zw.Write(f.page)
		_ = zw.Close()
		f.gz = b.Bytes()
	})
	return f.gz
}

// frames draws the run when asked and something changed, at most once per interval (a
// drawing that took long makes it longer), one drawing at a time.
type frames struct {
	every   time.Duration
	dirty   atomic.Bool   // something changed since the last drawing
	changed chan struct{} // wakes the loop; holds one
	final   atomic.Pointer[results.Run]
	news    news

	mu      sync.Mutex // one drawing at a time; guards what follows
	results func() *results.Run
	last    *frame
	took    time.Duration // the last drawing
	samples sampleFile
}

func newFrames(every time.Duration) *frames {
	return &frames{every: every, changed: make(chan struct{}, 1)}
}

func (f *frames) view(res func() *results.Run) {
	f.mu.Lock()
	f.results = res
	f.mu.Unlock()
	f.touch()
}

// touch marks the run changed. It never blocks.
func (f *frames) touch() {
	f.dirty.Store(true)
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// end keeps the run's final results: every drawing from now on is of them.
func (f *frames) end(res *results.Run) {
	if res != nil {
		f.final.Store(res)
	}
}

// interval is the least time between drawings: Every, or twenty times what the last one
// took, so that drawing a large run takes at most about 5% of a core.
func (f *frames) interval() time.Duration {
	return max(f.every, 20*f.took)
}

// current is the latest drawing, drawn again first when the run changed and the last one
// is older than the interval.
func (f *frames) current() *frame {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.last != nil && (!f.dirty.Load() || time.Since(f.last.at) < f.interval()) {
		return f.last
	}
	f.dirty.Store(false)
	version := uint64(1)
	if f.last != nil {
		version = f.last.version + 1
	}
	f.last = f.draw(version)
	f.took = time.Since(f.last.at)
	f.news.publish(version)
	return f.last
}

// known is the latest drawing, drawn now only when there is none: what the pages shown
// know of the run.
func (f *frames) known() *frame {
	f.mu.Lock()
	last := f.last
	f.mu.Unlock()
	if last != nil {
		return last
	}
	return f.current()
}

// wait is how long until the interval since the last drawing has passed.
func (f *frames) wait() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.last == nil {
		return 0
	}
	return f.interval() - time.Since(f.last.at)
}

// draw draws the run as it is now, or as it ended; f.mu is held.
func (f *frames) draw(version uint64) *frame {
	fr := &frame{version: version, at: time.Now()}
	var samples *results.GPUSamples
	if final := f.final.Load(); final != nil {
		// The samples as the recorder read them for report.html: the pages are the same.
		fr.res = final
		samples, _ = results.ReadSamplesFile(final.GPUSamples)
	} else {
		fr.res = f.results()
		samples = f.samples.read(filepath.Join(fr.res.LogDir, results.SamplesFile))
	}
	in := report.RunInput(fr.res, samples)
	if f.final.Load() == nil {
		// A page of a run that goes on follows it (data-live); the run's last page is
		// report.html to the byte: nothing follows it, and a page following the run that
		// fetches it keeps the version it had.
		in.Version = version
	}
	var b bytes.Buffer
	fr.err = report.Write(&b, in)
	fr.page = b.Bytes()
	return fr
}

// idleRedraw is how often a running run is drawn again though nothing was told: its bars
// and times grow, and its GPUs' memory is sampled without events.
const idleRedraw = 5 * time.Second

// loop draws the run as it changes while browsers follow it (each new drawing is news to
// them), until done. Nobody following, nothing is drawn: a request draws what it needs.
func (f *frames) loop(done <-chan struct{}, follow *followers) {
	tick := time.NewTicker(idleRedraw)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-f.changed:
		case <-tick.C:
			if f.final.Load() == nil {
				f.dirty.Store(true)
			}
		}
		if follow.count() == 0 || !f.dirty.Load() {
			continue
		}
		if wait := f.wait(); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-done:
				t.Stop()
				return
			case <-t.C:
			}
		}
		f.current()
	}
}

// news tells followers of each new drawing: a channel closed when the next one is out.
type news struct {
	mu      sync.Mutex
	version uint64
	next    chan struct{}
}

func (n *news) publish(v uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.version = v
	if n.next != nil {
		close(n.next)
		n.next = nil
	}
}

// latest is the latest version and a channel closed when there is a newer one.
func (n *news) latest() (uint64, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.next == nil {
		n.next = make(chan struct{})
	}
	return n.version, n.next
}

// sampleFile reads the run's GPU samples file as the run appends to it.
type sampleFile struct {
	path string
	off  int64
	feed *results.SampleFeed
}

// maxSamplesRead bounds one read of the samples file; the file itself stops at 16 MiB.
const maxSamplesRead = 32 << 20

// read reads what was appended to path since the last read; nil when there is no file (a
// run without GPUs).
func (s *sampleFile) read(path string) *results.GPUSamples {
	if path != s.path || s.feed == nil {
		*s = sampleFile{path: path, feed: &results.SampleFeed{}}
	}
	file, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer file.Close()
	if _, err := file.Seek(s.off, io.SeekStart); err == nil {
		b, _ := io.ReadAll(io.LimitReader(file, maxSamplesRead))
		s.off += int64(len(b))
		_ = s.feed.Feed(b) // a line that cannot be read is left out, as the report leaves it
	}
	return s.feed.Samples()
}
