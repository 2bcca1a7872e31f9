package proc

import (
	"bytes"
	"errors"
	"io"
	"os"
	"time"
)

// drawnWait is how long a progress bar's newest state, drawn after a \r and not ended yet,
// waits for more of its bytes before it is handed on as it is: a bar is drawn whole in one
// write, and its next update may be minutes away (a loop of s/it).
const drawnWait = 100 * time.Millisecond

// readLines calls fn for every line of r, without its newline ("\r\n" ends a line too). A
// carriage return also ends a piece, handed on with its "\r" at its end: an update of a
// progress bar drawn in place, which the log keeps on one line as the script drew it, what
// reads progress reads at once, and what shows output may show as the newest state alone.
// A piece that draws nothing (a bare "\r", Keras's backspaces before it) is left out. Where r has read deadlines (a pipe), a bar's
// newest state is handed on once no more of it came for drawnWait, as an update; when a
// newline, not a \r, comes next, the line it ends is that state again (the log then writes
// only the newline: taskLog), or that state with what was printed after it. A line longer than maxLine is split; with mask, each piece is masked
// and its last Longest()-1 bytes go with the next piece instead, so no secret is cut in two.
func readLines(r io.Reader, mask Masker, fn func(string)) {
	s := splitter{fn: fn, mask: mask}
	dl, _ := r.(interface{ SetReadDeadline(time.Time) error })
	buf := make([]byte, readBuf)
	waiting := false
	for {
		if dl != nil && s.pending() != waiting {
			waiting = !waiting
			if waiting {
				dl.SetReadDeadline(time.Now().Add(drawnWait))
			} else {
				dl.SetReadDeadline(time.Time{})
			}
		}
		n, err := r.Read(buf)
		s.take(buf[:n])
		if errors.Is(err, os.ErrDeadlineExceeded) {
			s.handOnDrawn()
			continue
		}
		if err != nil {
			s.end()
			return
		}
	}
}

// splitter cuts a stream's bytes into the pieces readLines hands on.
type splitter struct {
	fn      func(string)
	mask    Masker
	partial []byte
	drawn   bool   // partial follows a \r: a bar drawn in place
	cr      bool   // partial ends in a \r that may be the first half of a "\r\n" still to come
	early   string // a bar's state handed on before what ends it came; "" when none
}

// pending reports whether a bar's state waits for what ends it.
func (s *splitter) pending() bool { return s.cr || s.drawn && len(s.partial) > 0 }

// handOnDrawn hands on the bar's state that waits, as an update.
func (s *splitter) handOnDrawn() {
	if !s.pending() {
		return
	}
	state := string(bytes.TrimSuffix(s.partial, []byte{'\r'}))
	s.fn(state + "\r")
	s.early, s.partial, s.cr, s.drawn = state, s.partial[:0], false, true
}

func (s *splitter) take(chunk []byte) {
	for len(chunk) > 0 {
		if s.cr {
			s.cr = false
			chunk = s.endCR(chunk)
			continue
		}
		i := bytes.IndexAny(chunk, "\r\n")
		end := i
		if end < 0 {
			end = len(chunk)
		}
		s.resume(chunk[:end])
		if room := maxLine - len(s.partial); end > room {
			s.partial, chunk = append(s.partial, chunk[:room]...), chunk[room:]
			s.partial, s.early = emitSplit(s.partial, s.mask, s.fn), ""
			continue
		}
		s.partial, chunk = append(s.partial, chunk[:end]...), chunk[end:]
		if i < 0 {
			return
		}
		if chunk[0] == '\n' {
			s.line()
			chunk = chunk[1:]
			continue
		}
		s.partial, chunk = append(s.partial, '\r'), chunk[1:]
		if s.cr = len(chunk) == 0; !s.cr {
			chunk = s.endCR(chunk)
		}
	}
}

// line hands on partial as a line: a newline came. After a bar's state handed on early with
// nothing since, the line is that state.
func (s *splitter) line() {
	if len(s.partial) == 0 && s.early != "" {
		s.fn(s.early)
	} else {
		s.fn(string(s.partial))
	}
	s.partial, s.early, s.drawn = s.partial[:0], "", false
}

// endCR hands on partial, which ends in \r, as rest starts: the line of a "\r\n", else one
// update of a bar (unless empty).
func (s *splitter) endCR(rest []byte) []byte {
	if rest[0] == '\n' {
		s.partial = s.partial[:len(s.partial)-1]
		s.line()
		return rest[1:]
	}
	if len(bytes.Trim(s.partial, "\b\r")) > 0 { // backspaces at the line's start draw nothing
		s.fn(string(s.partial))
	}
	s.partial, s.drawn, s.early = s.partial[:0], true, ""
	return rest
}

// resume takes up a bar's state handed on early again when more text follows it on its line
// (a print after the bar, not a \r): the piece is then the whole of what the line shows.
// Backspaces alone (Keras's, before its next \r) draw nothing and do not.
func (s *splitter) resume(more []byte) {
	if s.early != "" && len(s.partial) == 0 && len(bytes.Trim(more, "\b")) > 0 {
		s.partial = append(s.partial, s.early...)
		s.early = ""
	}
}

// end hands on what is left when the stream ends: the last state, shown as a line.
func (s *splitter) end() {
	state := bytes.TrimSuffix(s.partial, []byte{'\r'})
	switch {
	case len(state) > 0:
		s.fn(string(state))
	case s.early != "":
		s.fn(s.early)
	}
}

// emitSplit passes on the piece of a long line held in partial and returns what is kept
// for the next piece: nothing without a mask; else the masked piece's tail that may hold
// the start of a secret.
func emitSplit(partial []byte, mask Masker, fn func(string)) []byte {
	keep := 0
	if mask != nil {
		keep = mask.Longest() - 1
	}
	if keep <= 0 || keep >= len(partial)/2 {
		fn(string(partial))
		return partial[:0]
	}
	masked := mask.Replace(string(partial))
	fn(masked[:len(masked)-keep])
	return append(partial[:0], masked[len(masked)-keep:]...)
}
