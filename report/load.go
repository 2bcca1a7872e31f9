package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/s3sync"
)

// Where a run leaves what the report reads: results.FileName and results.SamplesFile in its
// log directory, and (with S3 uploads) under results.RunURL.
const (
	resultsName = results.FileName
	runsDir     = results.RunsDir
	maxObject   = 256 << 20
)

// LoadOptions say how to reach S3 for an s3:// source.
type LoadOptions struct {
	Endpoint, Region string
	Getenv           func(string) string // credentials and settings; nil: os.Getenv
}

// Load reads what a report draws from src: a results file, a log directory (a run's, or
// --log-dir's, whose latest run is taken), or an s3:// prefix, where the results of every
// run under it (the shards of an Indexed Job) are merged.
func Load(ctx context.Context, src string, o LoadOptions) (Input, error) {
	if strings.HasPrefix(src, "s3://") {
		return loadS3(ctx, src, o)
	}
	file, err := resultsFileOf(src)
	if err != nil {
		return Input{}, err
	}
	res, err := results.Read(file)
	if err != nil {
		return Input{}, err
	}
	in := Input{Run: res}
	samples := filepath.Join(filepath.Dir(file), results.SamplesFile)
	if keptSamples(res) {
		if _, err := os.Stat(res.GPUSamples); err == nil {
			samples = res.GPUSamples
		}
	}
	s, err := ReadSamplesFile(samples)
	if err != nil {
		return Input{}, err
	}
	if s != nil {
		in.Samples = append(in.Samples, s)
	}
	return in, nil
}

// resultsFileOf is the results file a local src names: src itself, or the one in the log
// directory it names (a run's, or --log-dir's latest).
func resultsFileOf(src string) (string, error) {
	fi, err := os.Stat(src)
	if err != nil || !fi.IsDir() {
		return src, err
	}
	file := filepath.Join(src, resultsName)
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		file = filepath.Join(src, "latest", resultsName)
	}
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: no %s here: give a run's log directory (.runall/logs/<run-id>), --log-dir's, or a results file", src, resultsName)
	}
	return file, nil
}

// Reads are the local files Load reads from src (none from an s3:// prefix): what a report
// written from it must not replace.
func Reads(src string) []string {
	if strings.HasPrefix(src, "s3://") {
		return nil
	}
	file, err := resultsFileOf(src)
	if err != nil {
		return []string{src}
	}
	return []string{file, filepath.Join(filepath.Dir(file), results.SamplesFile)}
}

// keptSamples reports whether the results' gpu_samples names the file a run keeps: the
// samples file in its log directory. The results file is data: a gpu_samples that names any
// other file is not read.
func keptSamples(res *results.Run) bool {
	g := res.GPUSamples
	return g != "" && res.LogDir != "" && filepath.Base(g) == results.SamplesFile &&
		filepath.Dir(g) == filepath.Clean(res.LogDir)
}

// ReadSamplesFile reads a GPU samples file; nil when there is none.
func ReadSamplesFile(name string) (*results.GPUSamples, error) { return results.ReadSamplesFile(name) }

// WriteRun draws the report of one run that just ended, from its results and the GPU
// samples it kept (nil without).
func WriteRun(w io.Writer, res *results.Run, samples *results.GPUSamples) error {
	return Write(w, RunInput(res, samples))
}

// RunInput is what the report of one run draws: its results and the GPU samples it kept
// (nil without). The page served while it runs (--serve) is drawn from it too.
func RunInput(res *results.Run, samples *results.GPUSamples) Input {
	in := Input{Run: res}
	if samples != nil {
		in.Samples = append(in.Samples, samples)
	}
	return in
}

// loadS3 merges the results of every run under an s3:// prefix.
func loadS3(ctx context.Context, src string, o LoadOptions) (Input, error) {
	client, err := s3sync.NewClient(ctx, s3sync.ClientOptions{Endpoint: o.Endpoint, Region: o.Region, Getenv: o.Getenv})
	if err != nil {
		return Input{}, fmt.Errorf("s3: %w", err)
	}
	var found []string
	hasSamples := map[string]bool{} // by run directory
	err = client.List(ctx, src, func(o s3sync.Listed) error {
		url := o.URL
		if path.Base(path.Dir(path.Dir(url))) != runsDir {
			return nil
		}
		switch path.Base(url) {
		case resultsName:
			found = append(found, url)
		case results.SamplesFile:
			hasSamples[path.Dir(url)] = true
		}
		return nil
	})
	if err != nil {
		return Input{}, err
	}
	if len(found) == 0 {
		return Input{}, fmt.Errorf("%s: no runall results under this prefix (runs put theirs under <first s3.upload destination>/%s/<run-id>/)", src, runsDir)
	}
	var runs []*results.Run
	var in Input
	for _, url := range found {
		res, s, err := readS3Run(ctx, client, url, hasSamples[path.Dir(url)])
		if err != nil {
			return Input{}, err
		}
		runs = append(runs, res)
		if s != nil {
			in.Samples = append(in.Samples, s)
		}
	}
	in.Run = results.Merge(runs)
	return in, nil
}

// readS3Run reads one run's results, and its samples when it kept some (a run without
// GPUs keeps none).
func readS3Run(ctx context.Context, client *s3sync.Client, url string, withSamples bool) (*results.Run, *results.GPUSamples, error) {
	b, _, err := client.Get(ctx, url, maxObject)
	if err != nil {
		return nil, nil, err
	}
	res, err := results.Parse(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", url, err)
	}
	if !withSamples {
		return res, nil, nil
	}
	samplesURL := strings.TrimSuffix(url, resultsName) + results.SamplesFile
	sb, _, err := client.Get(ctx, samplesURL, maxObject)
	if err != nil {
		return nil, nil, err
	}
	s, err := results.ReadSamples(bytes.NewReader(sb))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", samplesURL, err)
	}
	return res, s, nil
}
