package gpu

import "testing"

func TestFaultTable(t *testing.T) {
	tests := []struct {
		fault        Fault
		resolution   Resolution
		outOfService bool
		memory       bool
		kills        Kills
	}{
		{Fault{Kind: FaultXid, Xid: 13}, RestartApp, false, false, KillsNone},
		{Fault{Kind: FaultXid, Xid: 31}, RestartApp, false, false, KillsNone},
		{Fault{Kind: FaultXid, Xid: 43}, RestartApp, false, false, KillsNone},
		{Fault{Kind: FaultXid, Xid: 48}, ResetGPU, true, true, KillsRunning},
		{Fault{Kind: FaultXid, Xid: 63}, ResetGPU, true, false, KillsNone},
		{Fault{Kind: FaultXid, Xid: 64}, ContactSupport, true, false, KillsNone},
		{Fault{Kind: FaultXid, Xid: 79}, ContactSupport, true, false, KillsAll},
		{Fault{Kind: FaultXid, Xid: 94}, ResetGPU, true, true, KillsRunning},
		{Fault{Kind: FaultXid, Xid: 95}, ResetGPU, true, true, KillsRunning},
		{Fault{Kind: FaultXid, Xid: 119}, ResetGPU, true, false, KillsNone},
		{Fault{Kind: FaultXid, Xid: 120}, ResetGPU, true, false, KillsNone},
		{Fault{Kind: FaultXid, Xid: 999}, ResolutionUnknown, false, false, KillsNone}, // recorded only
		{Fault{Kind: FaultPendingRetirement}, ResetGPU, true, false, KillsNone},
		{Fault{Kind: FaultRemapFailure}, ContactSupport, true, false, KillsNone},
		{Fault{Kind: FaultECC, Count: 1}, ResetGPU, true, true, KillsRunning},
		{Fault{Kind: FaultLost}, ContactSupport, true, false, KillsAll},
	}
	for _, tt := range tests {
		f := tt.fault
		if f.Resolution() != tt.resolution || f.OutOfService() != tt.outOfService || f.MemoryError() != tt.memory || f.Kills() != tt.kills {
			t.Errorf("%s: resolution %q, out of service %v, memory %v, kills %d; want %q, %v, %v, %d", f,
				f.Resolution(), f.OutOfService(), f.MemoryError(), f.Kills(), tt.resolution, tt.outOfService, tt.memory, tt.kills)
		}
	}
}

func TestHealthString(t *testing.T) {
	h := Health{Xids: []XidEvent{{Xid: 13}, {Xid: 48}}, PendingRetirement: true}
	if got, want := h.String(), "xid 13 (Graphics Engine Exception), xid 48 (double bit ECC error), pages pending retirement"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if f, out := h.OutOfService(); !out || f.Xid != 48 {
		t.Errorf("OutOfService = %v %v, want the first fault beyond restarting the application (Xid 48)", f, out)
	}
	if (Health{}).String() != "ok" {
		t.Errorf("zero Health = %q, want ok", Health{})
	}
}
