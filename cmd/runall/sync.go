package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/s3sync"
)

const syncUsage = `Usage: runall sync [flags] SRC DST

Make DST like SRC, where one side is an s3://bucket/prefix URL and the other a local
directory (or, as a source, a single file). Files already in place are skipped, by size and
content hash, not by timestamps; nothing is deleted without --delete.

  runall sync ./outputs s3://bucket/runs/42/           upload a directory
  runall sync s3://bucket/datasets/imagenet/ /data     download a prefix
  runall sync --extract s3://bucket/ds.tar.gz /data    download and unpack one archive

Credentials and endpoint come from the usual AWS variables (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL,
AWS_PROFILE), profiles and web identity; or, when those are unset, from endpoint_url,
aws_access_key_id, aws_secret_access_key and region_name. See docs/s3.md.

Flags:
`

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runSync(ctx context.Context, a *app, args []string) error {
	fs := newFlags(a, "sync", syncUsage)
	var (
		opts     s3sync.Options
		copts    = s3sync.ClientOptions{Getenv: a.getenv}
		excludes stringList
		verbose  bool
	)
	fs.Var(&excludes, "exclude", "skip files matching `GLOB` on both sides: a relative path (logs/*.txt, ckpt/**/tmp)\nor a name anywhere (*.tmp, __pycache__); repeatable")
	fs.BoolVar(&opts.Delete, "delete", false, "delete files in DST that SRC does not have (excluded files are kept); refused into\na whole bucket (see --whole-bucket), into /, or to a URL with an empty segment (an unset variable)")
	fs.BoolVar(&opts.WholeBucket, "whole-bucket", false, "allow --delete to an s3://BUCKET/ with no prefix: every object of the bucket not in SRC")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "print what would be transferred and deleted; change nothing")
	fs.IntVar(&opts.Concurrency, "concurrency", 16, "transfer `N` files at a time")
	fs.StringVar(&copts.Endpoint, "endpoint", "", "S3 endpoint `URL`, e.g. http://minio:9000 (default: $AWS_ENDPOINT_URL_S3,\n$AWS_ENDPOINT_URL or $endpoint_url; AWS when none)")
	fs.StringVar(&copts.Region, "region", "", "AWS `REGION` (default: $AWS_REGION, $AWS_DEFAULT_REGION, $region_name, the profile's,\nor us-east-1)")
	fs.BoolVar(&opts.Extract, "extract", false, "SRC is one .zip, .tar, .tar.gz or .tgz object: unpack it into the directory DST\n(again only when the archive changed or its files were touched)")
	fs.StringVar(&opts.StateDir, "state-dir", "", "keep the record of past syncs in `DIR` (default: $XDG_CACHE_HOME/runall/sync\nor ~/.cache/runall/sync); put it on a volume to keep skips across containers")
	fs.BoolVar(&verbose, "verbose", false, "print each file transferred or deleted")
	fs.BoolVar(&verbose, "v", false, "short for --verbose")
	if wantsHelp(args) {
		fs.printHelp()
		return nil
	}

	src, dst, err := syncArgs(fs, args, &opts)
	if err != nil {
		return err
	}
	opts.Exclude = excludes

	out := newSyncOutput(a)
	copts.Logf = func(format string, args ...any) { out.line(a.stderr, "runall: warning: "+fmt.Sprintf(format, args...)) }
	client, err := s3sync.NewClient(ctx, copts)
	if err != nil {
		return err
	}
	opts.Progress = out.progress
	if verbose || opts.DryRun {
		prefix := ""
		if opts.DryRun {
			prefix = "would "
		}
		opts.OnAction = func(act s3sync.Action) { out.line(a.stdout, prefix+describeAction(act)) }
	}

	// A signal cancels ctx (runStoppable, which also makes the exit code the signal's).
	stats, err := client.Sync(ctx, src, dst, opts)
	switch {
	case err != nil && stats.Files+stats.SkippedFiles+stats.Deleted == 0:
		// Nothing happened: the error says it all.
	case opts.DryRun:
		out.line(a.stderr, fmt.Sprintf("dry run: would transfer %d %s (%s), skip %d (%s), delete %d",
			stats.Files, s3sync.Plural(stats.Files, "file", "files"), s3sync.FormatBytes(stats.Bytes),
			stats.SkippedFiles, s3sync.FormatBytes(stats.SkippedBytes), stats.Deleted))
	default:
		out.line(a.stderr, stats.String())
	}
	return err
}

// syncArgs parses the flags, which may come before, between or after SRC and DST, and
// returns SRC and DST, checked against each other and the flags (opts, which parsing sets).
func syncArgs(fs *flags, args []string, opts *s3sync.Options) (src, dst string, err error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", "", fs.mistake()
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(pos) != 2 {
		return "", "", usagef("sync needs SRC and DST, e.g. runall sync ./outputs s3://bucket/runs/42/ (got %d)", len(pos))
	}
	src, dst = pos[0], pos[1]
	if s3a, s3b := strings.HasPrefix(src, "s3://"), strings.HasPrefix(dst, "s3://"); s3a == s3b {
		return "", "", usagef("sync: exactly one of SRC and DST must be an s3:// URL (got %q and %q)", src, dst)
	}
	if opts.Concurrency < 1 {
		return "", "", usagef("sync: --concurrency must be at least 1")
	}
	if opts.Extract && strings.HasPrefix(dst, "s3://") {
		return "", "", usagef("sync: --extract downloads an archive: SRC must be the s3:// object, DST a directory")
	}
	return src, dst, nil
}

func describeAction(act s3sync.Action) string {
	size := s3sync.FormatBytes(act.Size)
	switch act.Op {
	case s3sync.OpUpload:
		return fmt.Sprintf("upload %s -> %s (%s)", act.Path, act.URL, size)
	case s3sync.OpDownload:
		return fmt.Sprintf("download %s -> %s (%s)", act.URL, act.Path, size)
	case s3sync.OpExtract:
		return fmt.Sprintf("extract %s -> %s (%s)", act.URL, act.Path, size)
	}
	if act.URL != "" {
		return "delete " + act.URL
	}
	return "delete " + act.Path
}

// syncOutput owns the terminal during a sync: a status line redrawn in place on a terminal,
// or a plain progress line every 10 s otherwise, and other lines printed above it.
type syncOutput struct {
	mu       sync.Mutex
	stderr   io.Writer
	live     bool // a terminal that understands \r and erase-line
	shown    bool // a status line is on screen
	lastLine time.Time
	started  time.Time
}

const plainProgressEvery = 10 * time.Second

func newSyncOutput(a *app) *syncOutput {
	o := &syncOutput{stderr: a.stderr, started: time.Now()}
	o.live = output.IsTerminal(a.stderr, a.getenv)
	return o
}

func (o *syncOutput) progress(p s3sync.Progress) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.live {
		if p.Done {
			o.clear()
			return
		}
		fmt.Fprintf(o.stderr, "\r\033[Ksync: %s", s3sync.FormatProgress(p))
		o.shown = true
		return
	}
	if !p.Done && time.Since(o.lastLine) >= plainProgressEvery && time.Since(o.started) >= plainProgressEvery {
		fmt.Fprintf(o.stderr, "sync: %s\n", s3sync.FormatProgress(p))
		o.lastLine = time.Now()
	}
}

// line prints a whole line to w, above the status line.
func (o *syncOutput) line(w io.Writer, s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.clear()
	fmt.Fprintln(w, s)
}

func (o *syncOutput) clear() {
	if o.shown {
		fmt.Fprint(o.stderr, "\r\033[K")
		o.shown = false
	}
}
