package main

import (
	"bytes"
	"context"
	"fmt"

	"github.com/runall/runall/internal/outfile"
	"github.com/runall/runall/report"
)

const reportUsage = `Usage: runall report [flags] [RESULTS.json | LOG_DIR | s3://bucket/prefix/]

Write one self-contained HTML page about a run: the trials table (hyperparameters,
metrics, status, time, GPU, peak memory; click a column to sort), a timeline per GPU with
its memory over time, the objective's curves per epoch and the objective against each
hyperparameter. The page fetches nothing and opens offline.

The source is a results file (--results, or results.json in a log directory), a run's log
directory, --log-dir's directory (its latest run; the default, .runall/logs), or an s3://
prefix: the results of every run under it are merged (the shards of an Indexed Job put
theirs under <first s3.upload destination>/.runall-runs/<run-id>/). runall run writes
this report into each run's log directory by itself; this command makes it again, or
merges shards.

Flags:
`

func runReport(ctx context.Context, a *app, args []string) error {
	fs := newFlags(a, "report", reportUsage)
	var out string
	opts := report.LoadOptions{Getenv: a.getenv}
	fs.StringVar(&out, "o", "report.html", "write the report to `FILE` (a symlink is followed, a FIFO or device written through, never replaced)")
	fs.StringVar(&opts.Endpoint, "endpoint", "", "S3 endpoint `URL` for an s3:// source (default: $AWS_ENDPOINT_URL_S3 and the like, as runall sync)")
	fs.StringVar(&opts.Region, "region", "", "AWS `REGION` for an s3:// source")
	var pos []string
	for {
		if done, err := fs.parse(args); done {
			return err
		}
		if args = fs.Args(); len(args) == 0 {
			break
		}
		pos, args = append(pos, args[0]), args[1:]
	}
	src := ".runall/logs"
	switch len(pos) {
	case 0:
	case 1:
		src = pos[0]
	default:
		return usagef("report: one source, got %d: %v", len(pos), pos)
	}
	if err := outfile.CheckWrite(out, report.Reads(src)...); err != nil {
		return usagef("report -o %v", err)
	}
	in, err := report.Load(ctx, src, opts)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := report.Write(&b, in); err != nil {
		return err
	}
	if err := outfile.WriteFile(out, b.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Report: %s (%d tasks)\n", out, len(in.Run.Tasks))
	return nil
}
