package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/runall/runall/internal/outfile"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/notify"
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
// report, uploads them and notifies, in that order, on a goroutine of its own, so that no
// emitter waits on a disk, S3 or a webhook; the run's end waits for it (wait). A record that
// cannot be written (the results in the log directory, --results, the report) is reported,
// the others are still written, and the run fails with it: its record is incomplete.
type recorder struct {
	logDir      string
	resultsFile string // --results
	report      func(w io.Writer, res *results.Run, samples *results.GPUSamples) error
	upload      func(body []byte, runID, logDir string, emit func(event.Event)) // to the first upload destination (transfers.uploadResults)
	notify      *notify.Notifier
	interrupted func() bool       // whether a signal stopped the run
	emit        func(event.Event) // the run's stream, for what the recorder says as it goes

	done     chan struct{} // closed when the record is written; nil before RunEnded
	recorded *results.Run  // the results as recorded: without the report when it failed
	err      error         // why a record could not be written (ErrIncompleteRecord)
}

// Event starts recording the run's results when it ends. What it says goes on the stream
// after RunEnded, as nothing else is emitted then.
func (rec *recorder) Event(ev event.Event, _ func(event.Event)) {
	if ev.Kind != event.RunEnded || ev.Results == nil || rec.done != nil {
		return
	}
	res := ev.Results
	if samples := filepath.Join(rec.logDir, results.SamplesFile); fileExists(samples) {
		res.GPUSamples = samples
	}
	if rec.report != nil {
		res.Report = filepath.Join(rec.logDir, ReportFile)
	}
	// Its own copy, so that the consumers after it read the event's results unchanged.
	recorded := *res
	rec.recorded, rec.done = &recorded, make(chan struct{})
	go func() {
		defer close(rec.done)
		rec.err = rec.record(rec.recorded)
	}()
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// wait waits for the record of the run's end to be written. It returns the results as
// recorded (res when RunEnded never reached the recorder) and why a record could not be
// written (ErrIncompleteRecord), nil when every one was.
func (rec *recorder) wait(res *results.Run) (*results.Run, error) {
	if rec.done == nil {
		return res, nil
	}
	<-rec.done
	return rec.recorded, rec.err
}

func (rec *recorder) record(res *results.Run) error {
	emit := rec.emit
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
	rec.upload(body, res.RunID, rec.logDir, emit)
	rec.notify.Send(body, rec.interrupted(), emit)
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
