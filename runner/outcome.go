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

// record writes the results and the report, uploads them and notifies. Only a --results
// file that cannot be written is an error (as before); the rest is reported and goes on.
func (r *run) record(res *results.Run) error {
	samples := filepath.Join(r.logDir, results.SamplesFile)
	if _, err := os.Stat(samples); err == nil {
		res.GPUSamples = samples
	}
	if r.opts.Report != nil {
		res.Report = filepath.Join(r.logDir, ReportFile)
	}
	warn := func(format string, args ...any) {
		r.emit(event.Event{Kind: event.RunStatus, Line: fmt.Sprintf(format, args...)})
	}
	body, err := json.MarshalIndent(res, "", "  ")
	if err != nil { // metrics are checked to be finite: this is a bug
		warn("cannot encode the results: %v", err)
		return err
	}
	body = append(body, '\n')
	if err := results.WriteFileAtomic(filepath.Join(r.logDir, ResultsFile), body); err != nil {
		warn("cannot write the results into the log directory: %v", err)
	}
	var runErr error
	if r.opts.ResultsFile != "" {
		runErr = results.WriteFileAtomic(r.opts.ResultsFile, body)
	}
	if res.Report != "" {
		if err := r.writeReport(res); err != nil {
			warn("cannot write the report: %v", err)
			res.Report = ""
		}
	}
	r.uploadResults(body)
	_, _, interrupted := r.ledger.status()
	r.notify(body, interrupted != 0)
	return runErr
}

// writeReport draws the report from the results and the samples just kept, with
// Options.Report.
func (r *run) writeReport(res *results.Run) error {
	samples, err := results.ReadSamplesFile(res.GPUSamples)
	if err != nil {
		r.emit(event.Event{Kind: event.RunStatus, Line: "the report leaves out GPU memory: " + err.Error()})
	}
	return results.WriteAtomic(res.Report, func(w io.Writer) error { return r.opts.Report(w, res, samples) })
}

// uploadResults puts the results, the samples and the report under the first upload
// destination, where `runall report s3://...` finds every shard's.
func (r *run) uploadResults(body []byte) {
	if r.sync == nil || len(r.sync.spec.Upload) == 0 {
		return
	}
	to, err := expandStrict(r.sync.spec.Upload[0].To, r.baseEnv())
	if err != nil || !strings.HasPrefix(to, "s3://") {
		return
	}
	base := results.RunURL(to, r.id)
	ctx, cancel := r.halt.finalUpload(r.ledger.stoppedBy() != 0, r.opts.Grace)
	defer cancel()
	ctx, cancelMinute := context.WithTimeout(ctx, time.Minute)
	defer cancelMinute()
	files := map[string][]byte{ResultsFile: body}
	for _, name := range []string{results.SamplesFile, ReportFile} {
		b, err := os.ReadFile(filepath.Join(r.logDir, name))
		if err == nil {
			files[name] = b
		} else if !errors.Is(err, fs.ErrNotExist) {
			r.emit(event.Event{Kind: event.SyncProgress, Line: "cannot read " + name + ": " + err.Error()})
		}
	}
	for name, b := range files {
		if err := r.sync.client.PutObject(ctx, base+name, b); err != nil {
			r.emit(event.Event{Kind: event.SyncProgress, Line: fmt.Sprintf("could not upload the run's %s: %v", name, err)})
			return
		}
	}
	r.emit(event.Event{Kind: event.SyncProgress, Line: "results uploaded to " + base})
}
