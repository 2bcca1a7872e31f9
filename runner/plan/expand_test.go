package plan

import (
	"errors"
	"strings"
	"testing"
)

// TestUnsetVariableDeletesBucket (issue: an unset variable deletes a bucket): a ${VAR}
// unset or empty in an S3 URL, a transfer's local path, url:, metrics:, cwd: or notify's
// url is a problem naming the key, its place and the variable; ${VAR:-default}, task env:
// and runall's own variables count as set; delete: true to a bucket's root needs
// whole-bucket: true.
func TestUnsetVariableDeletesBucket(t *testing.T) {
	p, err := loadYAML(t, `config:
  notify: {url: "https://hooks.example/${HOOK}"}
s3:
  download: [{from: "s3://data/${DATASET}/", to: "data/"}]
  upload:
    - {from: out/, to: "s3://victim/${RUN_PREFIX}", delete: true}
    - {from: "${OUT}/", to: "s3://victim/ok/${RUNALL_RUN_ID}/${SET}"}
    - {from: out/, to: "s3://victim/${MAYBE:-runs}/x", delete: true}
    - {from: out/, to: "s3://victim/", delete: true}
    - {from: out/, to: "s3://other", delete: true, whole-bucket: true}
tasks:
  - cmd: export LATER=x
  - cmd: train
    env: {MINE: "m", EMPTY: "${NOPE}"}
    cwd: "${WORK}"
    url: "https://scripts.example/${SCRIPT}"
    metrics: "${MINE}/${LATER}/${METRICS_DIR}/m.json"
    upload: [{from: "${EMPTY}", to: "s3://b/${RUNALL_TASK_NAME}"}]
`, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = p.CheckVars([]string{"SET=1", "EMPTY_IN_ENV="})
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v, want a *FileError", err)
	}
	got := err.Error()
	for _, want := range []string{
		`tasks.yml:2:17: notify: url: ${HOOK} is unset or empty`,
		`tasks.yml:4:21: s3: download: from: ${DATASET} is unset or empty: "s3://data/${DATASET}/" would expand to "s3://data//"`,
		`tasks.yml:6:24: s3: upload: to: ${RUN_PREFIX} is unset or empty: "s3://victim/${RUN_PREFIX}" would expand to "s3://victim/" (set it, or write ${RUN_PREFIX:-default})`,
		`tasks.yml:7:14: s3: upload: from: ${OUT} is unset or empty: "${OUT}/" would expand to "/"`,
		`tasks.yml:9:24: upload to s3://victim/ with delete: true would delete every other object of the bucket`,
		`tasks.yml:15:10: cwd: ${WORK} is unset or empty`,
		`tasks.yml:16:10: url: ${SCRIPT} is unset or empty`,
		`tasks.yml:17:14: metrics: ${METRICS_DIR} is unset or empty`,
		`tasks.yml:18:21: upload: from: ${EMPTY} is unset or empty`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	for _, notWant := range []string{"${SET}", "RUNALL_RUN_ID", "MAYBE", "s3://other", "metrics: ${MINE}", "metrics: ${LATER}", "RUNALL_TASK_NAME"} {
		if strings.Contains(got, notWant) {
			t.Errorf("%s is reported:\n%s", notWant, got)
		}
	}
	if len(fe.Problems) != 9 {
		t.Errorf("%d problems, want 9:\n%s", len(fe.Problems), got)
	}
}

func TestExpandStrict(t *testing.T) {
	env := map[string]string{"A": "a", "E": ""}
	lookup := func(n string) (string, bool) { v, ok := env[n]; return v, ok }
	for _, tc := range []struct{ in, want, err string }{
		{"s3://b/$A/${A}x", "s3://b/a/ax", ""},
		{"${E:-d}/${U:-e/f}", "d/e/f", ""},
		{"cost $5 and $ and ${ and ${1}", "cost $5 and $ and ${ and ${1}", ""},
		{"s3://b/${U}", "s3://b/", "${U} is unset or empty"},
		{"$E/x", "/x", "${E} is unset or empty"},
	} {
		got, err := ExpandStrict(tc.in, lookup)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: got %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && !errors.Is(err, ErrUnsetVar) {
			t.Errorf("%q: %v is not ErrUnsetVar", tc.in, err)
		}
	}
	if got := Expand("${U}/${E:-d}/${A:-x}/$A", lookup); got != "/d/a/a" {
		t.Errorf("Expand: got %q, want /d/a/a", got)
	}
}

// TestLogPathVarsChecked: log-path:, config's and a task's, is expanded at run time as cwd:
// is, so a ${VAR} in it unset or empty is a problem at its key, as for cwd:; a task's env:
// and runall's own variables count as set.
func TestLogPathVarsChecked(t *testing.T) {
	p, err := loadYAML(t, `config:
  log-path: "${LOGS_AT}/all.log"
tasks:
  - cmd: train
    env: {SUB: "s"}
    log-path: "${SUB}/${RUNALL_TASK_NAME}/${NOPE}.log"
`, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = p.CheckVars(nil)
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v, want a *FileError", err)
	}
	got := err.Error()
	for _, want := range []string{
		`tasks.yml:2:13: config: log-path: ${LOGS_AT} is unset or empty: "${LOGS_AT}/all.log" would expand to "/all.log"`,
		`tasks.yml:6:15: log-path: ${NOPE} is unset or empty`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if len(fe.Problems) != 2 {
		t.Errorf("%d problems, want 2:\n%s", len(fe.Problems), got)
	}
}
