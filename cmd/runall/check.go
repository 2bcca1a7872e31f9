package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/runall/runall/runner/plan"
)

const checkUsage = `Usage: runall check [--tags a,b] [--max-tasks N] FILE [ARGS...]

Check validates a tasks file and prints its plan: the setup steps in order, each parallel
block's trials with their GPU needs, and the S3 transfers. ARGS replace $1..$n and $* in
commands, as for runall run. It exits 0 when the file is valid, 2 with every problem listed
when it is not. Flags go before FILE.

Flags:
`

// runCheck loads a tasks file and prints its plan.
func runCheck(_ context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(a.stderr)
	tags := fs.String("tags", "", "keep only tasks with one of these comma-separated `tags` (own or inherited)")
	maxTasks := fs.Int("max-tasks", 0, "refuse a file that expands to more than `N` tasks (default: config max-tasks, else 100000)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), checkUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errSilentUsage
	}
	if fs.NArg() == 0 {
		return usagef("check: missing the tasks file")
	}
	plan, err := plan.Load(fs.Arg(0), plan.LoadOptions{Args: fs.Args()[1:], Tags: splitList(*tags), MaxTasks: *maxTasks})
	if err != nil {
		return err
	}
	for _, w := range plan.Warnings {
		fmt.Fprintf(a.stderr, "%s: warning: %s\n", w.Pos, w.Msg)
	}
	plan.Describe(a.stdout)
	return nil
}
