package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// problems loads text and returns its problems as "line:col: msg" lines.
func problems(t *testing.T, text string, opts LoadOptions, others ...string) string {
	t.Helper()
	_, err := loadYAML(t, text, opts, others...)
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("Load: got %v, want a *FileError", err)
	}
	var lines []string
	for _, p := range fe.Problems {
		lines = append(lines, fmt.Sprintf("%s:%d:%d: %s", p.Pos.File, p.Pos.Line, p.Pos.Column, p.Msg))
	}
	return strings.Join(lines, "\n")
}

func TestMaxTasks(t *testing.T) {
	sweep := "tasks:\n  - name: s\n    parallel-tasks:\n      - name: t-<a>-<b>\n        cmd: echo <a> <b>\n        matrix:\n          a: [1, 2, 3]\n          b: [1, 2, 3]\n"
	// 1 block + 9 trials: exactly 10 is allowed, 9 is not.
	if p := mustLoadYAML(t, "config:\n  max-tasks: 10\n"+sweep, LoadOptions{}); len(p.Trials()) != 9 {
		t.Fatalf("trials: %d", len(p.Trials()))
	}
	got := problems(t, "config:\n  max-tasks: 9\n"+sweep, LoadOptions{})
	if !strings.HasPrefix(got, "tasks.yml:8:9: matrix: 2 keys of 3 × 3 values make 9 tasks, and the file 10 in all, more than max-tasks (9)") {
		t.Errorf("got %s", got)
	}
	// The option wins over the file, both ways.
	if _, err := loadYAML(t, "config:\n  max-tasks: 9\n"+sweep, LoadOptions{MaxTasks: 10}); err != nil {
		t.Errorf("--max-tasks 10: %v", err)
	}
	if _, err := loadYAML(t, sweep, LoadOptions{MaxTasks: 5}); err == nil {
		t.Error("--max-tasks 5: loaded")
	}
	if got := problems(t, "config:\n  max-tasks: 0\n"+sweep, LoadOptions{}); !strings.Contains(got, "max-tasks: want a whole number of at least 1") {
		t.Errorf("max-tasks 0: %s", got)
	}
}

// TestMaxTasksSearch: a search's trials count against max-tasks, and the advice leaves out
// shards, which search: cannot use.
func TestMaxTasksSearch(t *testing.T) {
	file := "config:\n  max-tasks: 5\ntasks:\n  - name: s\n    parallel-tasks:\n      - name: t\n        cmd: train --lr <lr>\n" +
		"        search: {ask: ask.sh, tell: tell.sh}\n        trials: 12\n"
	got := problems(t, file, LoadOptions{})
	if !strings.Contains(got, "more than max-tasks (5)") || strings.Contains(got, "shards") {
		t.Errorf("got %s", got)
	}
}

// TestMaxTasksCountsWithoutExpanding: a matrix whose product overflows int64 is refused, by
// count, with no copy made.
func TestMaxTasksCountsWithoutExpanding(t *testing.T) {
	var b strings.Builder
	b.WriteString("tasks:\n  - name: x\n    cmd: echo\n    matrix:\n")
	values := "[" + strings.Repeat("v, ", 999) + "v]"
	for i := range 8 { // 1000^8 = 10^24
		fmt.Fprintf(&b, "      k%d: %s\n", i, values)
	}
	got := problems(t, b.String(), LoadOptions{})
	if !strings.Contains(got, "make more than 10^18 tasks") {
		t.Errorf("got %s", got)
	}
}

// TestAliasBomb: anchors that alias each other tenfold per level would decode into 10^9
// tasks; the file is refused before decoding.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("x-0: &l0 {name: a, cmd: echo}\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "x-%d: &l%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("tasks:\n  - name: s\n    parallel-tasks: *l9\n")
	got := problems(t, b.String(), LoadOptions{})
	if !strings.Contains(got, "aliases (*name) expand this file to more than 4000000 YAML nodes") {
		t.Errorf("got %s", got)
	}
}

// TestIncludeLoadsBounded: two files that include the next one twice, ten deep, would be
// read 2^10 times; past the bound the loader stops reading.
func TestIncludeLoadsBounded(t *testing.T) {
	var others []string
	for i := range 11 {
		body := "- name: leaf\n  cmd: echo\n"
		if i < 10 {
			body = fmt.Sprintf("- $include f%d.yml\n- $include f%d.yml\n", i+1, i+1)
		}
		others = append(others, fmt.Sprintf("f%d.yml", i), body)
	}
	got := problems(t, "tasks:\n  - $include f0.yml\n", LoadOptions{}, others...)
	if !strings.Contains(got, "more than 1000 includes in all") {
		t.Errorf("got %s", got)
	}
}

func TestDuplicateNamesWarn(t *testing.T) {
	p := mustLoadYAML(t, `tasks:
  - name: setup
    cmd: make
  - name: setup
    cmd: make
  - name: sweep
    parallel-tasks:
      - name: same
        cmd: echo <replace>
        for-each: [a, b]
`, LoadOptions{})
	var got []string
	for _, w := range p.Warnings {
		got = append(got, w.Pos.String()+": "+w.Msg)
	}
	want := []string{
		`tasks.yml:4:5: the name "setup" is also used at tasks.yml:2:5: results, logs and the summary will not tell the two apart; rename one`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The two setup steps run the same command in different places: their keys (and so
	// their durations and resume markers) differ.
	if got := taskNames(p.Tasks[2].Parallel); !slices.Equal(got, []string{"same [replace=a]", "same [replace=b]"}) {
		t.Errorf("the copies are named %q: not told apart", got)
	}
	if p.Tasks[0].Key == p.Tasks[1].Key {
		t.Error("identical tasks at two places share a key")
	}
}

func TestArgsWithNUL(t *testing.T) {
	got := problems(t, "tasks:\n  - name: a\n    cmd: echo $1\n", LoadOptions{Args: []string{"a\x00b"}})
	if !strings.Contains(got, "argument $1 holds a NUL character") {
		t.Errorf("got %s", got)
	}
}
