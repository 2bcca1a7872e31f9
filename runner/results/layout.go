package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Where a run leaves its record, defined here once for the runner that writes it and the
// report that reads it: in the run's log directory, <log dir>/<run-id>/{results.json,
// report.html, gpu-samples.jsonl}; and, with S3 uploads, the same files under
// <first upload destination>/.runall-runs/<run-id>/.
const (
	FileName   = "results.json" // the results of a run
	ReportName = "report.html"  // its HTML report
	RunsDir    = ".runall-runs" // under an upload destination: one directory per run id
)

// RunURL is where a run's files go under an upload destination: <to>/.runall-runs/<id>/.
func RunURL(to, runID string) string {
	return strings.TrimSuffix(to, "/") + "/" + RunsDir + "/" + runID + "/"
}

// ReadSamplesFile reads a GPU samples file; nil when there is none.
func ReadSamplesFile(name string) (*GPUSamples, error) {
	if name == "" {
		return nil, nil
	}
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := ReadSamples(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}
