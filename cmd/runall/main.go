// Command runall runs a bashful-style tasks file: setup steps in order, then parallel
// hyperparameter trials packed onto GPUs by measured free memory, with datasets synced in from
// S3 before and outputs synced out during and after.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"syscall"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/runner"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/s3sync"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// app is what a subcommand gets from main: its streams and environment. Subcommands return
// errors; only main turns them into exit codes.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	environ        func() []string
}

// usageError is a mistake on the command line: exit 2, with a hint to --help.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

type command struct {
	name, summary string
	run           func(ctx context.Context, a *app, args []string) error
	// tidy is how long the command gets, once a signal has cancelled its context, to tidy
	// up (sync's partial files, fake-alloc's claim) before runall exits anyway; 0 for a
	// command with nothing to tidy, which ends at once.
	tidy time.Duration
}

var commands = []command{
	{"run", "run a tasks file (the default: `runall tasks.yml` is `runall run tasks.yml`)", runRun, 0},
	{"demo", "run the built-in demo: a sweep packed onto two simulated 32 GiB GPUs", runDemo, 0},
	{"check", "validate a tasks file and print its plan", runCheck, 0},
	{"gpus", "list the GPUs runall sees, their memory and processes", runGPUs, 0},
	{"resources", "show the container's host memory (limit, use, room, OOM kills) and the GPUs", runResources, 0},
	{"sync", "sync a local directory and an s3:// prefix, either way", runSync, tidyWait},
	{"report", "write an HTML report of a run: trials, GPU timeline, metrics", runReport, 0},
	{"fake-alloc", "claim simulated GPU memory (for trials on --fake-gpus)", runFakeAlloc, tidyWait},
	{"fake-train", "the demo's simulated trainer: Keras-style epoch lines and a tqdm bar, no GPU", runFakeTrain, tidyWait},
	{"version", "print runall's version", runVersion, 0},
}

const mainUsage = `runall runs a tasks file: setup steps in order, then parallel trials packed onto
GPUs by measured free memory, with S3 sync around them.

Usage:
  runall [flags] FILE [ARGS...]     run a tasks file (see runall run --help)
  runall COMMAND [flags] [ARGS...]

Commands:
%s
Run 'runall COMMAND --help' for a command's flags. Documentation: README.md and docs/.
`

// gcPercent is how much runall's heap grows before a garbage collection while it runs a
// tasks file, unless GOGC is set. runall supervises: it holds 1-2 MB live for a thousand
// trials, and with Go's default (100, and a 4 MB minimum goal) garbage would take the rest of
// that goal in the memory it shares with the trials. 50 lowers peak RSS by 1-2 MB for a few
// percent more of runall's own CPU (docs/benchmarks.md, core benchmark). sync keeps Go's
// default: it is busy rather than waiting, and well within its memory.
const gcPercent = 50

// tuneGC sets gcPercent unless GOGC says otherwise.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

func main() {
	a := &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, environ: os.Environ}
	if code, ok := asMPS(a, os.Args[0], os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Exit(realMain(a, os.Args[1:]))
}

func realMain(a *app, args []string) int {
	cmd, rest := pickCommand(args)
	if cmd == nil {
		if len(rest) == 0 || rest[0] == "-h" || rest[0] == "--help" || rest[0] == "help" {
			printUsage(a.stdout)
			if len(rest) == 0 {
				return 2
			}
			return 0
		}
		if rest[0] == "--version" || rest[0] == "-version" {
			return exitCode(a, runVersion(context.Background(), a, nil))
		}
		// run installs its own signal handling: it forwards signals to tasks and uploads
		// outputs before it ends.
		return exitCode(a, flagsFirst(args, commands[0].run(context.Background(), a, args)))
	}
	if cmd.name == "run" || cmd.name == "demo" {
		return exitCode(a, cmd.run(context.Background(), a, rest))
	}
	return exitCode(a, runStoppable(a, cmd, rest))
}

// stopSignals stop runall gracefully: SIGINT (130), SIGTERM (143), SIGHUP (129, a closed
// terminal or ssh session) and SIGQUIT (131: Ctrl-\, or an image's STOPSIGNAL), each with
// its results, report and final upload. Go's own SIGQUIT (a dump of every goroutine, exit 2,
// the trials left running) would leave no record and read as a task-file error.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// keepRunningWithoutStdout makes a closed stdout or stderr (runall ... | head -1) no reason
// to stop a run: with SIGPIPE delivered to a channel rather than left to its default, a
// write to a closed pipe fails with EPIPE instead of killing runall, and the run goes on to
// its end, its record (log directory, results, report, uploads) complete. Tasks still get
// the default SIGPIPE: a handled signal is reset by exec, where an ignored one would not be.
func keepRunningWithoutStdout() (stop func()) {
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	return func() { signal.Stop(pipe) }
}

// tidyWait is the most a command that tidies up after a signal gets to do it.
const tidyWait = 3 * time.Second

// runStoppable runs a command that does not handle signals itself, so that SIGINT or SIGTERM
// stops it promptly whatever it is doing (a long check included): its context is cancelled,
// and it ends with 130 or 143 once it has returned or at the latest cmd.tidy later.
func runStoppable(a *app, cmd *command, args []string) error {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals...)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.run(ctx, a, args) }()
	select {
	case err := <-done:
		return err
	case s := <-sigs:
		cancel()
		if cmd.tidy > 0 {
			select {
			case <-done:
			case <-sigs: // a second signal: no more waiting
			case <-time.After(cmd.tidy):
			}
		}
		sig, _ := s.(syscall.Signal)
		return &runner.InterruptedError{Signal: sig}
	}
}

func pickCommand(args []string) (*command, []string) {
	if len(args) == 0 {
		return nil, args
	}
	for i := range commands {
		if commands[i].name == args[0] {
			return &commands[i], args[1:]
		}
	}
	return nil, args
}

// flagsFirst says where a command's flags go when a task file that does not exist is named
// as a command is: `runall --fresh demo` read "demo" as the file to run.
func flagsFirst(args []string, err error) error {
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		return err
	}
	name := filepath.Base(pe.Path)
	if c, _ := pickCommand([]string{name}); c == nil || !slices.Contains(args, name) {
		return err
	}
	return fmt.Errorf("%w (%s is a command: its flags go after it, as in runall %s --help)", err, name, name)
}

func printUsage(w io.Writer) {
	var list string
	for _, c := range commands {
		list += fmt.Sprintf("  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, mainUsage, list)
}

// exitCode maps an error to runall's exit codes: 0 ok, 1 a task failed, 2 usage or task-file
// error, 129/130/131/143 interrupted by SIGHUP/SIGINT/SIGQUIT/SIGTERM.
func exitCode(a *app, err error) int {
	if err == nil {
		return 0
	}
	var usage usageError
	var interrupted *runner.InterruptedError
	switch {
	case errors.As(err, &interrupted):
		fmt.Fprintf(a.stderr, "runall: %v\n", err)
		return 128 + int(interrupted.Signal)
	case errors.Is(err, runner.ErrTaskFailed):
		return 1 // the summary has already said which
	case errors.As(err, &usage):
		fmt.Fprintf(a.stderr, "runall: %v\nRun 'runall --help' for usage.\n", err)
		return 2
	case errors.Is(err, errSilentUsage):
		return 2
	}
	fmt.Fprintf(a.stderr, "runall: %v\n", err)
	if errors.Is(err, runner.ErrIncompleteRecord) {
		return 1 // the tasks ran; what records them could not all be written
	}
	var fileErr *plan.FileError
	if errors.As(err, &fileErr) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) ||
		errors.Is(err, claims.ErrOtherSweep) || errors.Is(err, claims.ErrLeaseDiffers) || errors.Is(err, s3sync.ErrDeleteGuard) {
		return 2 // the task file is wrong or cannot be read
	}
	return 1
}

// errSilentUsage is a usage error whose message has already been printed (by flag parsing).
var errSilentUsage = errors.New("usage error")

func runVersion(_ context.Context, a *app, _ []string) error {
	fmt.Fprintf(a.stdout, "runall %s\n", version)
	return nil
}

// flags is a subcommand's flag set with its usage text.
type flags struct {
	*flag.FlagSet
	a     *app
	usage string
}

func newFlags(a *app, name, usage string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(a.stderr)
	fs.Usage = func() {} // parse prints the help, or where to find it
	return &flags{FlagSet: fs, a: a, usage: usage}
}

// parse parses args. -h or --help prints the usage and the flags on stdout (to page or
// grep them); a mistake is printed on stderr. done is true when the subcommand has nothing
// more to do: after help (err is nil) or a mistake (errSilentUsage).
func (f *flags) parse(args []string) (done bool, err error) {
	err = f.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		f.printHelp()
		return true, nil
	case err != nil:
		return true, f.mistake()
	}
	return false, nil
}

// mistake follows the message of a flag that could not be parsed: where to look.
func (f *flags) mistake() error {
	fmt.Fprintf(f.a.stderr, "Run 'runall %s --help' for the flags.\n", f.Name())
	return errSilentUsage
}

// wantsHelp reports whether args ask for help before a "--".
func wantsHelp(args []string) bool {
	for _, arg := range args {
		switch arg {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// printHelp prints the usage and the flags on stdout.
func (f *flags) printHelp() {
	fmt.Fprint(f.a.stdout, f.usage)
	f.SetOutput(f.a.stdout)
	f.PrintDefaults()
	f.SetOutput(f.a.stderr)
}
