package plan

import "github.com/runall/runall/runner/taskfile"

// Faults are a block's rules for trials that go wrong (docs/taskfile.md, "When trials go
// wrong"): its own diverged-on and fail-fast, else config's.
type Faults struct {
	DivergedOn taskfile.DivergedOn
	// FailFast is how many of the block's trials that fail for good alike (one signature),
	// before any succeeded or reported a metric, stop it launching more; 0: off.
	FailFast int
	// Hang is hang detection's and crash loops' rules (hang-after and its kin): config's,
	// under the block's, under the task's own.
	Hang taskfile.Hang
	// block is the block's rules that these refine with a task's own hang keys; nil: these
	// are a block's (or config's) own.
	block *Faults
	// OnOOM is on-oom: a trial that runs out of GPU memory retried with a param halved
	// (the trial's own, else its block's); nil: none.
	OnOOM *taskfile.OnOOM
}

// Block is the rules of the block these belong to: what its trials share (fail-fast counts
// a block's trials by it), whatever hang keys a trial sets of its own.
func (f *Faults) Block() *Faults {
	if f.block != nil {
		return f.block
	}
	return f
}

// faultsOf is block c's rules, its own keys over config's.
func faultsOf(c *taskfile.Task, cfg taskfile.Config) *Faults {
	f := &Faults{DivergedOn: cfg.DivergedOn, FailFast: cfg.FailFast, Hang: cfg.Hang.Over(c.Hang)}
	if c.DivergedOn != nil {
		f.DivergedOn = *c.DivergedOn
	}
	if c.FailFast != 0 {
		f.FailFast = c.FailFast
	}
	f.OnOOM = c.OnOOM
	if f.FailFast == taskfile.FailFastOff {
		f.FailFast = 0
	}
	return f
}

// ConfigFaults are the rules of the tasks in no block: config's.
func (p *Plan) ConfigFaults() Faults {
	return *faultsOf(&taskfile.Task{}, p.Config)
}

// checkFaultKeys reports diverged-on and fail-fast on a task that is not a block.
func checkFaultKeys(d *taskfile.Decoder, t *taskfile.Task) {
	for _, key := range []string{"diverged-on", "fail-fast"} {
		if t.Has(key) && !t.Has("parallel-tasks") {
			d.Errorf(t.Keys[key], "%s: is a rule for a block's trials: set it on the task with parallel-tasks, or in config:", key)
		}
	}
}

// ownHang is in (a block's rules; nil: config's, for a task in no block) with the hang
// keys task c sets over them; in itself where it is a block's and c sets none. Every task
// has rules, so that its command knows its hang rules.
func ownHang(in *Faults, c *taskfile.Task, cfg taskfile.Config) *Faults {
	if in == nil {
		f := faultsOf(c, cfg)
		return f
	}
	if c.Hang == (taskfile.Hang{}) {
		return in
	}
	f := *in
	f.Hang, f.block = f.Hang.Over(c.Hang), in.Block()
	return &f
}
