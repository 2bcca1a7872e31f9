package plan

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAskedValuesAreData: a value a sampler hands out reaches the command as one word of
// text wherever its placeholder stands (bare, in double, single or $” quotes, in a command
// substitution, in a here-document), whatever it holds: nothing it says runs (it was pasted
// into bash -c: ; $(...) and backticks ran, even inside "<lr>", and a quote broke the command).
// Where bash cannot take a value as data (arithmetic, a quoted here-document), only a number
// goes, or the trial is refused.
func TestAskedValuesAreData(t *testing.T) {
	values := []string{"0.01", "1; touch pwned", "$(touch pwned)", "`touch pwned`", `a'b"c\`, "$HOME ${HOME}", "*", "a  b", "x\ny", "-n", "}{", `'"`}
	for _, tc := range []struct {
		cmd, want string // want: the output, with V for the value
	}{
		{`printf '%s|' <v>`, "V|"},
		{`printf '%s|' "<v>"`, "V|"},
		{`printf '%s|' "v=<v>!"`, "v=V!|"},
		{`printf '%s|' 'v=<v>'`, "v=V|"},
		{`printf '%s|' $'v=<v>\t'`, "v=V\t|"},
		{`printf '%s|' --v=<v>`, "--v=V|"},
		{`printf '%s|' "$(printf '%s' <v>)"`, "V|"},
		{`printf '%s|' "$(printf '%s' "<v>")x"`, "Vx|"},
		{"cat <<EOF\n<v>|\nEOF", "V|\n"},
		{`f() { printf '%s|' "$1"; }; f <v>`, "V|"},
		{`printf '%s|' "${UNSET:-<v>}"`, "V|"},
	} {
		for _, v := range values {
			dir := t.TempDir()
			got, err := bindCommand(tc.cmd, []Param{{Name: "v", Value: v}})
			if err != nil {
				t.Errorf("%q with %q: %v", tc.cmd, v, err)
				continue
			}
			c := exec.Command("bash", "-c", got)
			c.Dir, c.Env = dir, []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/x", ParamVar("v") + "=" + v}
			out, err := c.CombinedOutput()
			want := strings.ReplaceAll(tc.want, "V", v)
			if err != nil || string(out) != want {
				t.Errorf("%q with %q: bash -c %q printed %q (%v), want %q", tc.cmd, v, got, out, err, want)
			}
			if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
				t.Errorf("%q with %q: bash -c %q ran the value", tc.cmd, v, got)
			}
		}
	}

	for _, tc := range []struct {
		cmd, value, want, refused string
	}{
		{`echo $((<n> * 2))`, "21", "42\n", ""},
		{`echo $((<n> * 2))`, "a[$(touch pwned)]", "", "used in an arithmetic expression"},
		{`[[ <n> -eq 3 ]] && echo yes`, "3", "yes\n", ""},
		{`[[ <n> -eq 3 ]] && echo yes`, "x[$(touch pwned)]", "", "used in an arithmetic expression"},
		{"cat <<'EOF'\n<n>\nEOF", "1", "", "quoted here-document"},
		{`echo \<n>`, "1", "", "follows a backslash"},
	} {
		got, err := bindCommand(tc.cmd, []Param{{Name: "n", Value: tc.value}})
		if tc.refused != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("%q with %q: got %q, %v; want refused: %s", tc.cmd, tc.value, got, err, tc.refused)
			}
			continue
		}
		out, err := exec.Command("bash", "-c", got).CombinedOutput()
		if err != nil || string(out) != tc.want {
			t.Errorf("%q with %q: bash -c %q printed %q (%v), want %q", tc.cmd, tc.value, got, out, err, tc.want)
		}
	}
}

// TestUnfilledPlaceholderFlagged: a placeholder that no for-each, matrix or sample fills
// stays in the command, where bash reads <width> as redirections: the loader (and so check)
// says so; one in quotes is text, and a search: template's are filled as its trials are made
// (a trial whose sampler gave none is refused).
func TestUnfilledPlaceholderFlagged(t *testing.T) {
	for _, tc := range []struct{ cmd, problem string }{
		{`train --w <width> --h 3`, "cmd: <width> is a placeholder that no for-each, matrix or sample fills"},
		{`train --w "<width>"`, ""},
		{`echo '<b>bold</b>'`, ""},
		{`train <replace>`, "cmd: <replace> is a placeholder"},
		{`bash <exec>`, "cmd: <exec> is a placeholder"},
		{`diff <(ls a) <(ls b) > out`, ""},
	} {
		_, err := loadYAML(t, "tasks:\n  - name: sweep\n    parallel-tasks:\n      - cmd: '"+strings.ReplaceAll(tc.cmd, "'", "''")+"'\n", LoadOptions{})
		switch {
		case tc.problem == "" && err != nil:
			t.Errorf("%q: %v", tc.cmd, err)
		case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)):
			t.Errorf("%q: got %v, want %q", tc.cmd, err, tc.problem)
		}
	}
	tmpl := mustLoadYAML(t, `
config: {objective: {metric: acc, mode: max}}
tasks:
  - name: sweep
    parallel-tasks:
      - cmd: train --lr <lr> --w <width>
        search: {ask: a, tell: b}
        trials: 2
`, LoadOptions{}).Tasks[0].Parallel[0]
	if _, err := tmpl.Instantiate(0, []Param{{Name: "lr", Value: "1"}}); err == nil || !strings.Contains(err.Error(), "the sampler gave no value for <width>") {
		t.Errorf("a trial without width: %v", err)
	}
	if _, err := tmpl.Instantiate(1, []Param{{Name: "lr", Value: "1"}, {Name: "width", Value: "2"}}); err != nil {
		t.Error(err)
	}
}
