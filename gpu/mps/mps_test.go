package mps

import (
	"errors"
	"strings"
	"testing"
)

func TestLimitInNVIDIAsForm(t *testing.T) {
	tests := []struct {
		index int
		bytes uint64
		want  string
	}{
		{0, 2 << 30, "0=2G"},
		{1, 512 << 20, "1=512MB"},
		{0, 1<<30 + 1, "0=1025MB"}, // rounded up: the cap never falls below what was admitted
		{0, 1844<<20 - 5, "0=1844MB"},
	}
	for _, tt := range tests {
		got := FormatLimit(tt.index, tt.bytes)
		if got != tt.want {
			t.Errorf("FormatLimit(%d, %d) = %q, want %q", tt.index, tt.bytes, got, tt.want)
		}
		back, err := ParseLimit(got)
		if err != nil || back[tt.index] < tt.bytes {
			t.Errorf("ParseLimit(%q) = %v, %v: want at least %d on device %d", got, back, err, tt.bytes, tt.index)
		}
	}
	got, err := ParseLimit("0=1G,1=512MB")
	if err != nil || got[0] != 1<<30 || got[1] != 512<<20 {
		t.Errorf(`ParseLimit("0=1G,1=512MB") = %v, %v`, got, err)
	}
	for _, bad := range []string{"1G", "x=1G", "0=1T", "0=lots"} {
		if _, err := ParseLimit(bad); err == nil || !strings.Contains(err.Error(), EnvLimit) {
			t.Errorf("ParseLimit(%q): error %v, want one naming %s", bad, err, EnvLimit)
		}
	}
}

func TestModes(t *testing.T) {
	for in, want := range map[string]Mode{"": None, "none": None, "mps": On, "auto": Auto} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("on"); err == nil || !strings.Contains(err.Error(), "want mps, auto or none") {
		t.Errorf(`ParseMode("on"): %v, want an error listing the modes`, err)
	}
}

// Without nvidia-cuda-mps-control on PATH, mps is an error that says what to do, auto says
// why it goes on without MPS, and none does not look.
func TestOpenWithoutTheBinary(t *testing.T) {
	env := []string{"PATH=" + t.TempDir()}
	_, _, err := Open(Options{Mode: On, Environ: env, UUIDs: []string{"GPU-0"}})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "not on PATH") || !strings.Contains(err.Error(), "gpu-isolation: auto") {
		t.Errorf("mps: %v, want ErrUnavailable saying the binary is not on PATH and what to set", err)
	}
	set, note, err := Open(Options{Mode: Auto, Environ: env, UUIDs: []string{"GPU-0"}})
	if set != nil || err != nil || !strings.Contains(note, "running without MPS") {
		t.Errorf("auto: %v, %q, %v: want no set, a note saying it runs without MPS, no error", set, note, err)
	}
	if set, note, err := Open(Options{Mode: None, Environ: env}); set != nil || note != "" || err != nil {
		t.Errorf("none: %v, %q, %v: want nothing", set, note, err)
	}
}

// The log lines runall reads: a client tied to its process group when it connects, and the
// fatal fault that names it.
func TestFaultNamesTheClientFromTheServerLog(t *testing.T) {
	d := &Daemon{set: &Set{pgid: func(pid int) (int, bool) { return pid * 10, true }}, Index: 0}
	d.reset()
	d.serverLine("[2013-08-05 13:00:09.269 Server 13929] New client 14781 connected")
	d.serverLine("[2013-08-05 13:00:09.269 Server 13929] New client 14782 connected")
	if d.fault != nil {
		t.Fatalf("a fault before any: %+v", d.fault)
	}
	d.serverLine("[2013-08-05 13:00:10.000 Server 13929] Client 14782 encountered a fatal GPU exception")
	if d.fault == nil || d.fault.PID != 14782 || d.fault.PGID != 147820 || !strings.HasPrefix(d.fault.What, "a fatal fault: Client 14782") {
		t.Errorf("fault %+v, want client 14782 of group 147820 named", d.fault)
	}
	d2 := &Daemon{set: &Set{}, Index: 1}
	d2.reset()
	d2.controlLine("[2013-08-05 13:02:26.226 Control 13894] Server 13929 exited with status 9")
	if d2.fault == nil || d2.fault.PID != 0 || !strings.Contains(d2.fault.What, "its MPS server died") {
		t.Errorf("fault %+v, want the server's death with no client named", d2.fault)
	}
}
