package failclass

import "testing"

// TestOf: what runall saw decides first (runall stopped, then a fault of the GPU), then the known error texts, then the exit.
func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    Attempt
		want Class
	}{
		{"runall stopped", Attempt{Saw: Preempted, ExitCode: -1, Signal: "SIGTERM"}, Preempted},
		{"timeout", Attempt{Saw: Timeout, ExitCode: -1, Signal: "SIGKILL"}, Timeout},
		{"diverged", Attempt{Saw: Diverged, ExitCode: -1, Signal: "SIGTERM"}, Diverged},
		{"OOM killer", Attempt{Saw: OOM, ExitCode: -1, Signal: "SIGKILL"}, OOM},
		{"PyTorch OOM", Attempt{ExitCode: 1, Lines: []string{"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"}}, OOM},
		{"TensorFlow OOM", Attempt{ExitCode: 1, Lines: []string{"ResourceExhaustedError: OOM when allocating tensor with shape[64,1024]"}}, OOM},
		{"NCCL watchdog", Attempt{ExitCode: -1, Signal: "SIGABRT", Lines: []string{"[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)"}}, Hung},
		{"ECC", Attempt{ExitCode: 1, Lines: []string{"RuntimeError: CUDA error: uncorrectable ECC error encountered"}}, GPUFault},
		{"GPU out of service", Attempt{ExitCode: 1, GPU: "xid 79 (GPU has fallen off the bus)", Lines: []string{"CUDA out of memory"}}, GPUFault},
		{"GPU out of service, runall timed it out", Attempt{Saw: Timeout, ExitCode: -1, GPU: "xid 79 (GPU has fallen off the bus)"}, GPUFault},
		{"GPU out of service, runall stopped", Attempt{Saw: Preempted, ExitCode: -1, GPU: "xid 79 (GPU has fallen off the bus)"}, Preempted},
		{"exit 127", Attempt{ExitCode: 127, Lines: []string{"bash: line 1: pyhton: command not found"}}, NotRunnable},
		{"exit 126", Attempt{ExitCode: 126}, NotRunnable},
		{"unstarted", Attempt{ExitCode: -1, Unstarted: true}, NotRunnable},
		{"missing python script", Attempt{ExitCode: 2, Lines: []string{"python: can't open file '/w/trian.py': [Errno 2] No such file or directory"}}, Crashed},
		{"exit 1", Attempt{ExitCode: 1}, Crashed},
		{"a signal", Attempt{ExitCode: -1, Signal: "SIGSEGV"}, Crashed},
	} {
		if got := Of(tc.a); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSignature: two trials that hit one bug at other steps, paths and addresses share a
// signature; another exit or another message does not.
func TestSignature(t *testing.T) {
	a := Attempt{ExitCode: 1, Lines: []string{"Epoch 3/10", "Traceback (most recent call last):", `  File "/runs/a/train.py", line 88, in <module>`,
		"RuntimeError: bad value 0.0312 at step 17 (tensor at 0x7f3a2c00)"}}
	b := Attempt{ExitCode: 1, Lines: []string{"Traceback (most recent call last):", `  File "/runs/b/train.py", line 88, in <module>`,
		"RuntimeError: bad value 12 at step 4 (tensor at 0x55d1)", ""}}
	sa, sb := Signature(Crashed, a), Signature(Crashed, b)
	if want := "crashed exit 1: RuntimeError: bad value <n> at step <n> (tensor at <addr>)"; sa != want {
		t.Errorf("signature %q, want %q", sa, want)
	}
	if sa != sb {
		t.Errorf("one bug, two signatures: %q and %q", sa, sb)
	}
	other := b
	other.ExitCode = 2
	if Signature(Crashed, other) == sa {
		t.Error("another exit code gave the same signature")
	}
	other = Attempt{ExitCode: 1, Lines: []string{"ValueError: bad shape (3, 4)"}}
	if Signature(Crashed, other) == sa {
		t.Error("another error gave the same signature")
	}
	if got := Signature(NotRunnable, Attempt{ExitCode: 127, Lines: []string{"sh: 1: /opt/x/pyhton3: not found"}}); got != "not-runnable exit 127: sh: <n>: <path>: not found" {
		t.Errorf("not-runnable: %q", got)
	}
	if got := Signature(Crashed, Attempt{ExitCode: -1, Signal: "SIGSEGV"}); got != "crashed SIGSEGV" {
		t.Errorf("a signal and no lines: %q", got)
	}
}

// TestErrorLine: a known error text wins over the lines after it; else the last error; else
// the last line.
func TestErrorLine(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"torch.OutOfMemoryError: CUDA out of memory.", "Exception ignored in atexit"}, "torch.OutOfMemoryError: CUDA out of memory."},
		{[]string{"ValueError: x", "cleaning up", "  "}, "ValueError: x"},
		{[]string{"epoch 1", "epoch 2"}, "epoch 2"},
		{nil, ""},
	} {
		if got := ErrorLine(tc.lines); got != tc.want {
			t.Errorf("ErrorLine(%q) = %q, want %q", tc.lines, got, tc.want)
		}
	}
}
