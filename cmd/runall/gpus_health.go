package main

import (
	"time"

	"github.com/runall/runall/gpu"
)

// healthJSON is a GPU's health in `runall gpus --json`: "ok" or its faults, each with what
// NVIDIA says to do about it and whether runall takes the GPU out of service for it.
type healthJSON struct {
	Status      string      `json:"status"` // "ok", the faults as the table shows them, or "?" when unread
	Faults      []faultJSON `json:"faults"`
	XidsWatched bool        `json:"xids_watched"` // the driver delivers Xid events for the GPU
	Error       string      `json:"error,omitempty"`
}

type faultJSON struct {
	Kind         string     `json:"kind"` // xid, pending-retirement, remap-failure, ecc, lost
	Xid          uint64     `json:"xid,omitempty"`
	Count        uint64     `json:"count,omitempty"`
	At           *time.Time `json:"at,omitempty"`
	Text         string     `json:"text"`
	Resolution   string     `json:"resolution"`
	OutOfService bool       `json:"out_of_service"`
	MemoryError  bool       `json:"memory_error"`
}

// readHealth is the GPU's health as the probe reads it. A read that failed says so and
// shows "?" rather than "ok": nothing known is not the same as nothing wrong.
func readHealth(probe gpu.Probe, index int) *healthJSON {
	h, err := probe.Health(index)
	out := &healthJSON{Status: h.String(), Faults: []faultJSON{}, XidsWatched: h.XidsWatched}
	if err != nil {
		out.Status, out.Error = "?", err.Error()
	}
	for _, f := range h.Faults() {
		fj := faultJSON{Kind: string(f.Kind), Xid: f.Xid, Count: f.Count, Text: f.String(),
			Resolution: f.Resolution().String(), OutOfService: f.OutOfService(), MemoryError: f.MemoryError()}
		if !f.At.IsZero() {
			fj.At = &f.At
		}
		out.Faults = append(out.Faults, fj)
	}
	return out
}

// healthCell is the HEALTH column: "ok", "?" or the faults.
func healthCell(h *healthJSON) string {
	if h == nil {
		return "?"
	}
	return h.Status
}
