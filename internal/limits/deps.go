package main

import (
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
)

// module is the path every package of the module starts with; the tables below name the
// module's packages without it.
const module = "github.com/runall/runall/"

// A fence says what one package may depend on (go list -deps): may lists each dependency,
// a package of the module by its path inside it ("runner/plan"), another module's by its
// whole path, either with "/..." for everything under it. Anything else is an offender, and
// so is an entry that names nothing the package depends on, so that the list only shrinks.
// indirect are entries of may that it reaches only through another: never its own import.
// limit is how many packages outside the standard library it may depend on, itself counted
// (as go list -deps lists it), measured when the table was last written: check prints the
// count beside it, so that growth is seen.
type fence struct {
	pkg      string
	limit    int
	may      []string
	indirect []string
	why      string
}

// What the fences allow, layer by layer: the task file's grammar; the plan, which the grammar,
// a shell's syntax, an environment list (a task's variables) and what a name reaches
// (internal/pathname: paths judged as the kernel resolves them, issue 42, point 1, and the one
// plain-name rule for a value put into a path) make, each a leaf of the standard library's;
// the records (results, with its Pareto fronts, and the event stream) over the plan.
var (
	grammarDeps = []string{"runner/taskfile", "runner/earlystop", "runner/metric", "internal/lazyre", "size", "gopkg.in/yaml.v3"}
	planDeps    = append(slices.Clip(grammarDeps), "runner/plan", "mvdan.cc/sh/v3/...", "internal/envlist", "internal/pathname")
	recordDeps  = append(slices.Clip(planDeps), "runner/results", "runner/importance", "runner/event")
)

// fences: one table, one entry a fenced package. Records and grammar (taskfile, plan,
// results, event) import nothing that starts a process, reads NVML or talks to S3; the
// scheduler and the masker know the records, not the resources or processes; the book of
// needs and the sharing controller are leaves. The scheduler's waiting line is its own
// (sched.Line; runner/simulate predicts with it), and the results' Pareto fronts are theirs
// (results/pareto.go, Assess its one user): neither is a leaf of its own. runner/mask keeps its gates (a task, an
// event, the results whole: gate.go) and reads the plan's env: and commands for secrets, so
// it stands on the records (15), not on a leaf (5 would take its gates into runner/'s root,
// which holds the masker already; not worth a second home). runner/trial reaches no S3 client:
// runner/checkpoint is handed its store (the run builds runner/checkpoint/s3store), and the GPU,
// MPS, health, on-oom and host rooms live with their resources (runner/gpures, runner/hostres),
// so it reaches neither the admitters nor go-nvml: 24, under the target of 40 (37 before the
// rooms moved); runner/failclass, the leaf where a failed attempt's class is decided (issue
// 44), a command asks as its attempt ends.
var fences = []fence{
	{pkg: "k8spod", limit: 1,
		why: "the Pod's progress reaches the API server by plain HTTPS: no client-go, nothing of the run"},
	{pkg: "runner/taskfile", limit: 6, may: grammarDeps,
		why: "the task file's grammar owns its values and knows no daemon, process or store"},
	{pkg: "runner/plan", limit: 11, may: planDeps,
		why: "the plan is the task file understood: grammar, not what runs it"},
	{pkg: "runner/results", limit: 2, may: []string{"runner/importance"},
		why: "the results record defines its own types and imports no controller that fills them"},
	{pkg: "runner/event", limit: 14, may: recordDeps,
		why: "the event stream carries the plan's tasks and the results' records, nothing that acts"},
	{pkg: "runner/sched", limit: 15, may: recordDeps,
		why: "the scheduler knows trials, not the resources they are admitted by, the processes they run as, or S3"},
	{pkg: "runner/mask", limit: 15, may: recordDeps,
		why: "the masker is given the names it masks and passes the records' gates: it knows no S3 client"},
	{pkg: "runner/needs", limit: 2, may: []string{"size"},
		why: "the book of needs is a leaf the admitters share"},
	{pkg: "runner/failclass", limit: 2, may: []string{"internal/lazyre"},
		why: "a failure's class is decided from values it is told: it knows no task, process or resource"},
	{pkg: "runner/sharing", limit: 1,
		why: "the sharing controller decides from the rates it is told: the run fills the records from its figures"},
	{pkg: "runner/checkpoint", limit: 4, may: []string{"runner/results", "runner/importance", "internal/pathname"},
		why: "the checkpoint keeper is handed its store: the S3 one (runner/checkpoint/s3store) is built by the run, so it knows no S3 client"},
	{pkg: "runner/trial", limit: 24, may: append(slices.Clip(recordDeps),
		"runner/sched", "runner/failclass", "runner/executor", "runner/proc", "runner/progress", "runner/checkpoint",
		"internal/owned", "internal/outfile", "golang.org/x/sys/..."),
		why: "a trial's launch knows neither the run that drives it nor the consumers of its events, and no S3 client: its checkpoints' store is handed to it"},
}

// dependencyReport checks every fence against go list in root (a checkout of the module):
// each offender goes to say, and each package's count beside its limit to w.
func dependencyReport(root string, w io.Writer, say func(string, ...any)) error {
	fmt.Fprintln(w, "fences: packages outside the standard library each fenced package depends on, itself counted, and its limit")
	for _, f := range fences {
		deps, err := goList(root, "{{if not .Standard}}{{.ImportPath}}{{end}}", "-deps", "./"+f.pkg)
		if err != nil {
			return err
		}
		imports, err := goList(root, "{{join .Imports \"\\n\"}}", "./"+f.pkg)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %-17s %4d of %d\n", f.pkg, len(deps), f.limit)
		for _, bad := range f.offenders(deps, imports) {
			say("%s: %s (internal/limits/deps.go): %s", f.pkg, bad, f.why)
		}
	}
	return nil
}

// offenders are what breaks f, given the package's dependencies outside the standard
// library (itself among them) and its own imports.
func (f fence) offenders(deps, imports []string) []string {
	var out []string
	if len(deps) > f.limit {
		out = append(out, fmt.Sprintf("%d dependencies outside the standard library, more than %d", len(deps), f.limit))
	}
	used := map[string]bool{}
	for _, p := range f.may {
		used[p] = names(p, module+f.pkg) // a list shared by layers names the package itself
	}
	var banned []string             // the module's packages, and the other modules
	others := map[string][]string{} // another module's packages, by the module
	for _, d := range deps {
		if d == module+f.pkg {
			continue
		}
		if i := slices.IndexFunc(f.may, func(p string) bool { return names(p, d) }); i >= 0 {
			used[f.may[i]] = true
			continue
		}
		mod := d
		if !strings.HasPrefix(d, module) {
			parts := strings.SplitN(d, "/", 4) // host, owner, repository: the module, near enough
			mod = strings.Join(parts[:min(3, len(parts))], "/")
		}
		if len(others[mod]) == 0 {
			banned = append(banned, mod)
		}
		others[mod] = append(others[mod], d)
	}
	for _, mod := range banned {
		what := others[mod][0]
		if len(others[mod]) > 1 {
			what = fmt.Sprintf("%d packages under %s (%s among them)", len(others[mod]), mod, others[mod][0])
		}
		out = append(out, fmt.Sprintf("depends on %s (go list -deps ./%s), which its fence does not allow", what, f.pkg))
	}
	for _, p := range f.may {
		if !used[p] {
			out = append(out, fmt.Sprintf("its fence allows %s, on which it no longer depends: strike it", p))
		}
	}
	for _, imp := range imports {
		if slices.ContainsFunc(f.indirect, func(p string) bool { return names(p, imp) }) {
			out = append(out, fmt.Sprintf("imports %s itself, which it may reach only through another package", imp))
		}
	}
	return out
}

// names reports whether pattern (a table's entry) names the package pkg (a whole path).
func names(pattern, pkg string) bool {
	if !strings.Contains(strings.Split(pattern, "/")[0], ".") {
		pattern = module + pattern
	}
	if under, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == under || strings.HasPrefix(pkg, under+"/")
	}
	return pkg == pattern
}

// goList is what go list -f format says of args, run in root: its lines that are not empty.
func goList(root, format string, args ...string) ([]string, error) {
	cmd := exec.Command("go", append([]string{"list", "-f", format}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", strings.Join(args, " "), err)
	}
	var lines []string
	for l := range strings.Lines(string(out)) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}
