package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/runall/runall/internal/citest"
	"github.com/runall/runall/internal/miniotest"
)

// example is the worked example of docs/kubernetes.md set up to run as written: the dataset
// made by make_dataset.py in MinIO's "datasets" bucket, examples/train/tasks.yml run from
// its own directory, `python3` the one with torch.
type example struct {
	*e2e
	srv    *miniotest.Server
	bucket string
	python string
	tmp    string
}

const exampleRunID = "e2e-run"

func newExample(t *testing.T) *example {
	python := torchPython(t)
	srv := miniotest.Shared(t)
	exampleDir, err := filepath.Abs(filepath.Join("..", "..", "examples", "train"))
	if err != nil {
		t.Fatal(err)
	}

	// The dataset, as docs/kubernetes.md makes it.
	tmp := t.TempDir()
	archive := filepath.Join(tmp, "catsdogs-tiny.tar.gz")
	if out, err := exec.Command(python, filepath.Join(exampleDir, "make_dataset.py"), "--out", archive).CombinedOutput(); err != nil {
		t.Fatalf("make_dataset.py: %v\n%s", err, out)
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	ensureBucket(t, srv, "datasets") // tasks.yml names it
	srv.Put(t, "datasets", "catsdogs-tiny.tar.gz", data)
	bucket := srv.NewBucket(t)

	// `python3` in tasks.yml must be the one with torch.
	bin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(python, filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}

	e := newE2E(t)
	e.dir = exampleDir // tasks.yml runs `python3 train.py`: commands run where runall does
	e.env = append(withoutAWS(e.env), srv.Env()...)
	e.env = append(e.env,
		"PATH="+bin+string(filepath.ListSeparator)+os.Getenv("PATH"),
		"DATA_DIR="+filepath.Join(tmp, "data"), "OUTPUT_DIR="+filepath.Join(tmp, "outputs"),
		"CHECKPOINT_DIR="+filepath.Join(tmp, "checkpoints"), "RUN_ID="+exampleRunID, "S3_BUCKET="+bucket,
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"PYTHONDONTWRITEBYTECODE=1", // no __pycache__ in examples/train
		"OMP_NUM_THREADS=1",         // four trials on a small machine: no oversubscription
	)
	return &example{e2e: e, srv: srv, bucket: bucket, python: python, tmp: tmp}
}

// TestExampleTrain runs the worked example of docs/kubernetes.md as written: the dataset
// made by make_dataset.py in MinIO's "datasets" bucket, examples/train/tasks.yml run from
// its own directory on a simulated 32 GiB GPU, the four PyTorch trials training on the CPU.
func TestExampleTrain(t *testing.T) {
	t.Parallel()
	x := newExample(t)
	srv, bucket, runID := x.srv, x.bucket, exampleRunID
	results := filepath.Join(x.tmp, "results.json")
	r := x.runWithin(5*time.Minute, "--fake-gpus", "32GiB", "--log-dir", filepath.Join(x.tmp, "logs"), "--results", results, "tasks.yml")
	r.wantCode(t, 0)

	res := readResults(t, results)
	var trials []taskResult
	for _, tr := range res.Tasks {
		if tr.Status != "ok" {
			t.Errorf("%s: %s (%s)", tr.Name, tr.Status, tr.Reason)
		}
		if strings.HasPrefix(tr.Name, "train ") {
			trials = append(trials, tr)
		}
	}
	if len(trials) != 4 {
		t.Fatalf("%d trials in the results (%q), want 4\n%v", len(trials), res.names(), r)
	}
	for _, trial := range []string{"lr0.01-dropout0.1", "lr0.01-dropout0.3", "lr0.05-dropout0.1", "lr0.05-dropout0.3"} {
		prefix := "catdog/" + runID + "/" + trial + "/"
		keys := listKeys(t, srv, bucket, prefix)
		want := []string{prefix + "results.json"}
		for epoch := range 5 {
			want = append(want, prefix+"checkpoint-epoch-"+strconv.Itoa(epoch+1)+".pt")
		}
		for _, k := range want {
			if !slices.Contains(keys, k) {
				t.Errorf("s3://%s/%s is missing; under %s there is %q", bucket, k, prefix, keys)
			}
		}
		for _, k := range keys {
			if strings.HasSuffix(k, ".tmp") {
				t.Errorf("s3://%s/%s: a temporary file was uploaded", bucket, k)
			}
		}
		if body, ok := getObject(t, srv, bucket, prefix+"results.json"); ok {
			var out struct {
				ExperimentID string `json:"experiment_id"`
				Status       string `json:"status"`
			}
			if err := json.Unmarshal([]byte(body), &out); err != nil || out.ExperimentID != trial || out.Status != "completed" {
				t.Errorf("s3://%s/%sresults.json: experiment %q, status %q (%v); want %q, completed", bucket, prefix, out.ExperimentID, out.Status, err, trial)
			}
		}
	}
	// 4 x 7 GiB and the margin fit on the one 32 GiB device: the trials run together.
	if n := peakConcurrency(t, trials); n < 2 {
		t.Errorf("at most %d trial ran at once on the 32 GiB GPU, want at least 2", n)
	}
	exampleOutcome(t, results)
}

// exampleOutcome checks what the example's metrics: and objective give: each trial's
// val_accuracy and loss per epoch, the best trial named, the report drawn. With
// $RUNALL_EXAMPLE_LOGS set, the run's results, samples and report are copied into that
// directory (scripts/report-png.sh makes the README's picture of them).
func exampleOutcome(t *testing.T, resultsPath string) {
	t.Helper()
	b, err := os.ReadFile(resultsPath)
	if err != nil {
		t.Fatal(err)
	}
	res := readOutcome(t, b)
	best, bestsAcc := -1.0, -2.0
	for _, tr := range res.Tasks {
		if !strings.HasPrefix(tr.Name, "train ") {
			continue
		}
		acc, ok := tr.Metrics["val_accuracy"]
		if _, hasLoss := tr.Metrics["loss"]; !ok || !hasLoss || len(tr.MetricSeries["val_accuracy"]) != 5 || len(tr.MetricSeries["loss"]) != 5 {
			t.Errorf("%s: metrics %v, series %v: want val_accuracy and loss for 5 epochs", tr.Name, tr.Metrics, tr.MetricSeries)
		}
		if ok && acc > best {
			best = acc
		}
		if tr.Name == res.Best {
			bestsAcc = acc
		}
	}
	if bestsAcc != best {
		t.Errorf("best %q has val_accuracy %v, want the trial with %v", res.Best, bestsAcc, best)
	}
	page := readReport(t, res.Report)
	if len(page.gpuRows) != 1 || len(page.rows) != len(res.Tasks)+1 {
		t.Errorf("report: timeline rows %q, %d table rows for %d tasks", page.gpuRows, len(page.rows), len(res.Tasks))
	}
	if dst := os.Getenv("RUNALL_EXAMPLE_LOGS"); dst != "" {
		for _, name := range []string{"results.json", "gpu-samples.jsonl", "report.html"} {
			b, err := os.ReadFile(filepath.Join(filepath.Dir(res.Report), name))
			if err == nil {
				err = os.WriteFile(filepath.Join(dst, name), b, 0o644)
			}
			if err != nil {
				t.Error(err)
			}
		}
	}
}

// runWithin runs runall like run, but within limit rather than cmdTimeout: four PyTorch
// trials on a loaded 2-core machine take a while. At the limit runall gets SIGTERM, so that
// it stops its trials before the test gives up.
func (e *e2e) runWithin(limit time.Duration, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, runallBin, args...)
	cmd.Dir, cmd.Env = e.dir, e.env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second // then SIGKILL
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		e.t.Fatalf("runall did not finish within %v\n%v", limit, r)
	case err != nil && !errors.As(err, &exitErr):
		e.t.Fatalf("runall: %v\n%v", err, r)
	}
	return r
}

// torchPython finds a Python with PyTorch: $PYTHON, Debian's /usr/bin/python3 (where
// python3-torch installs), then python3 on PATH (often a pyenv one without torch). Without
// one the test skips, except in CI.
func torchPython(t *testing.T) string {
	t.Helper()
	return pythonWith(t, "torch", "python3-torch")
}

// pythonWith is a python3 that imports module: $PYTHON, /usr/bin/python3 or the one on the
// PATH; pkg is the Debian package that installs it.
func pythonWith(t *testing.T, module, pkg string) string {
	t.Helper()
	var candidates []string
	if p := os.Getenv("PYTHON"); p != "" {
		candidates = append(candidates, p)
	}
	candidates = append(candidates, "/usr/bin/python3")
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	var tried []string
	for _, p := range candidates {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := exec.CommandContext(ctx, p, "-c", "import "+module).Run()
		cancel()
		if err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
			return p
		}
		tried = append(tried, p+": "+err.Error())
	}
	msg := "no python3 with " + module + " (set PYTHON, or apt-get install " + pkg + "); tried " + strings.Join(tried, "; ")
	citest.Unavailable(t, "%s", msg)
	return ""
}

// ensureBucket creates a bucket of a fixed name, which may exist from an earlier test run
// on the same server (go test -count=2).
func ensureBucket(t *testing.T, srv *miniotest.Server, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := srv.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		t.Fatalf("make bucket %s: %v", name, err)
	}
}

// peakConcurrency is the most trials that ran at once, from their start and end times.
func peakConcurrency(t *testing.T, trials []taskResult) int {
	t.Helper()
	var runs []interval
	for _, tr := range trials {
		runs = append(runs, interval{wantTime(t, tr.Name+" started_at", tr.StartedAt), wantTime(t, tr.Name+" finished_at", tr.FinishedAt)})
	}
	return mostAtOnce(runs)
}
