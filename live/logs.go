package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"unicode/utf8"

	"github.com/runall/runall/runner/results"
)

// A trial's log is read from its file in the run's log directory, which holds its output
// masked as everything runall writes is (secrets are ****). Only the files the results name
// are served: a URL names a trial, never a path. And only the very file runall opened there
// is served (the run's View.OpenLog): a symlink or another file put at the path since is not.

// errNoLogs is a view that cannot tell the logs runall wrote: none is served.
var errNoLogs = errors.New("this run serves no logs")

// openLog opens a task's log through the run's view, which checks that it is the file runall
// opened there.
func (s *Server) openLog(path string) (*os.File, error) {
	if s.view.OpenLog == nil {
		return nil, errNoLogs
	}
	return s.view.OpenLog(path)
}

// maxLogPiece is the most of a log one request returns: the page asks again for the rest.
const maxLogPiece = 64 << 10

// logPiece is what /api/log/{id} returns: the bytes of the log from Start to Next, as text.
type logPiece struct {
	Start int64  `json:"start"`
	Next  int64  `json:"next"` // where the next request starts (from=Next)
	Size  int64  `json:"size"` // the log's size when read
	Text  string `json:"text"`
}

// logTail is a piece of a trial's log: from ?from=N, or its tail (from=-1, or none).
func (s *Server) logTail(w http.ResponseWriter, r *http.Request) {
	t, ok := s.task(r.PathValue("id"))
	if !ok {
		jsonError(w, http.StatusNotFound, "no task with this id in the run")
		return
	}
	from := int64(-1)
	if q := r.URL.Query().Get("from"); q != "" {
		n, err := strconv.ParseInt(q, 10, 64)
		if err != nil || n < -1 {
			jsonError(w, http.StatusBadRequest, "from: want a byte offset, or -1 for the tail")
			return
		}
		from = n
	}
	if t.LogFile == "" {
		jsonError(w, http.StatusNotFound, "the task has no log yet: it has not started")
		return
	}
	piece, err := readLog(s.openLog, t.LogFile, from)
	if err != nil {
		jsonError(w, http.StatusNotFound, "cannot read the log: "+err.Error())
		return
	}
	b, _ := json.Marshal(piece) // strings and numbers: cannot fail (bad UTF-8 becomes U+FFFD)
	w.Header().Set("Content-Type", "application/json")
	s.send(w, r, b)
}

func jsonError(w http.ResponseWriter, code int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// readLog reads at most maxLogPiece bytes of the log at path from from, or its tail (from
// -1, or past its end: a log that was written again), starting at a line; a character
// cut at the piece's end is left for the next.
func readLog(open func(string) (*os.File, error), path string, from int64) (logPiece, error) {
	f, err := open(path)
	if err != nil {
		return logPiece{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return logPiece{}, err
	}
	size := fi.Size()
	tail := from < 0 || from > size
	if tail {
		from = max(0, size-maxLogPiece)
	}
	b := make([]byte, min(size-from, maxLogPiece))
	n, err := f.ReadAt(b, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return logPiece{}, err
	}
	b = b[:n]
	start := from
	if tail && from > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b, start = b[i+1:], start+int64(i+1)
		}
	}
	b = b[:wholeRunes(b)]
	return logPiece{Start: start, Next: start + int64(len(b)), Size: size, Text: string(b)}, nil
}

// wholeRunes is the length of b without a UTF-8 character cut at its end.
func wholeRunes(b []byte) int {
	for back := 1; back <= utf8.UTFMax && back <= len(b); back++ {
		i := len(b) - back
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// logFile is a trial's whole log, at the name the page links (the log file's name in the
// run's log directory, where report.html lies too).
func (s *Server) logFile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	fr := s.frames.known()
	for _, t := range fr.res.Tasks {
		if t.LogFile == "" || filepath.Base(t.LogFile) != name || filepath.Dir(t.LogFile) != filepath.Clean(fr.res.LogDir) {
			continue
		}
		f, err := s.openLog(t.LogFile)
		if err != nil {
			http.Error(w, "runall: cannot read the log: "+err.Error(), http.StatusNotFound)
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			http.Error(w, "runall: cannot read the log: "+err.Error(), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
		if r.Method != http.MethodHead {
			_, _ = io.Copy(s.writer(w), io.LimitReader(f, fi.Size())) // what it held when asked
		}
		return
	}
	http.NotFound(w, r)
}

// task is the task of the run with this id, as the latest drawing knows it (the page asking
// was drawn no later).
func (s *Server) task(id string) (results.Task, bool) {
	n, err := strconv.Atoi(id)
	if err != nil {
		return results.Task{}, false
	}
	for _, t := range s.frames.known().res.Tasks {
		if t.ID == n {
			return t, true
		}
	}
	return results.Task{}, false
}
