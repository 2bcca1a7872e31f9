package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/runall/runall/internal/outfile"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/results"
)

// What a run leaves when it ends, whatever its status: the results JSON and the HTML report
// in its log directory (and --results), both also under the first S3 upload destination
// for `runall report s3://...`, and the results POSTed to config notify.

// ResultsFile and ReportFile are their names in the log directory (results' layout).
const (
	ResultsFile = results.FileName
	ReportFile  = results.ReportName
)

// recorder is the consumer of the run's end (RunEnded): it writes the results and the
// report, uploads them and notifies, in that order. A record that cannot be written (the
// results in the log directory, --results, the report) is reported, the others are still
// written, and the run fails with it (Err): its record is incomplete.
type recorder struct {
	logDir      string
	resultsFile string // --results
	report      func(w io.Writer, res *results.Run, samples *results.GPUSamples) error
	sync        *transfers
	notify      *notifier
	interrupted func() bool // whether a signal stopped the run

	err error // why a record could not be written
}

// Event records the run's results when it ends. The run's last event may take its time:
// nothing else is emitted meanwhile.
func (rec *recorder) Event(ev event.Event, emit func(event.Event)) {
	if ev.Kind == event.RunEnded && ev.Results != nil {
		rec.err = rec.record(ev.Results, emit)
	}
}

// Err is why a record of the run could not be written (ErrIncompleteRecord), nil when
// every one was.
func (rec *recorder) Err() error { return rec.err }

func (rec *recorder) record(res *results.Run, emit func(event.Event)) error {
	samples := filepath.Join(rec.logDir, results.SamplesFile)
	if _, err := os.Stat(samples); err == nil {
		res.GPUSamples = samples
	}
	if rec.report != nil {
		res.Report = filepath.Join(rec.logDir, ReportFile)
	}
	warn := func(format string, args ...any) {
		emit(event.Event{Kind: event.RunStatus, Line: fmt.Sprintf(format, args...)})
	}
	body, err := json.MarshalIndent(res, "", "  ")
	if err != nil { // metrics are checked to be finite: this is a bug
		warn("cannot encode the results: %v", err)
		return err
	}
	body = append(body, '\n')
	var errs []error
	failed := func(what string, err error) {
		warn("cannot write %s: %v", what, err)
		errs = append(errs, fmt.Errorf("%w: %s: %w", ErrIncompleteRecord, what, err))
	}
	if err := outfile.WriteFile(filepath.Join(rec.logDir, ResultsFile), body); err != nil {
		failed("the results into the log directory", err)
	}
	if rec.resultsFile != "" {
		if err := outfile.WriteFile(rec.resultsFile, body); err != nil {
			failed("--results "+rec.resultsFile, err)
		}
	}
	if res.Report != "" {
		if err := rec.writeReport(res, warn); err != nil {
			failed("the report", err)
			res.Report = ""
		}
	}
	rec.sync.uploadResults(body, res.RunID, rec.logDir, emit)
	rec.notify.send(body, rec.interrupted(), emit)
	return errors.Join(errs...)
}

// writeReport draws the report from the results and the samples just kept.
func (rec *recorder) writeReport(res *results.Run, warn func(string, ...any)) error {
	samples, err := results.ReadSamplesFile(res.GPUSamples)
	if err != nil {
		warn("the report leaves out GPU memory: %v", err)
	}
	return outfile.Write(res.Report, func(w io.Writer) error { return rec.report(w, res, samples) })
}

// uploadResults puts the results, the samples and the report under the first upload
// destination, where `runall report s3://...` finds every shard's.
func (s *transfers) uploadResults(body []byte, runID, logDir string, emit func(event.Event)) {
	if s == nil || s.client == nil || len(s.spec.Upload) == 0 {
		return
	}
	to, err := expandStrict(s.spec.Upload[0].To, s.o.base)
	if err != nil || !strings.HasPrefix(to, "s3://") {
		return
	}
	base := results.RunURL(to, runID)
	ctx, cancel := s.o.halt.finalUpload(s.o.stopped(), s.o.grace)
	defer cancel()
	ctx, cancelMinute := context.WithTimeout(ctx, time.Minute)
	defer cancelMinute()
	files := map[string][]byte{ResultsFile: body}
	for _, name := range []string{results.SamplesFile, ReportFile} {
		b, err := os.ReadFile(filepath.Join(logDir, name))
		if err == nil {
			files[name] = b
		} else if !errors.Is(err, fs.ErrNotExist) {
			emit(event.Event{Kind: event.SyncProgress, Line: "cannot read " + name + ": " + err.Error()})
		}
	}
	for name, b := range files {
		if err := s.client.PutObject(ctx, base+name, b); err != nil {
			emit(event.Event{Kind: event.SyncProgress, Line: fmt.Sprintf("could not upload the run's %s: %v", name, err)})
			return
		}
	}
	emit(event.Event{Kind: event.SyncProgress, Line: "results uploaded to " + base})
}
