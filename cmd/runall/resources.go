package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/size"
)

const resourcesUsage = `Usage: runall resources [--fake-gpus SIZES] [--json]

Shows what runall admits trials by, as it measures it now. Host memory: the container's
memory limit (its memory cgroup's, v2 or v1, or the machine's total where no limit applies),
what is in use under it (page cache the kernel reclaims first left out, as the kubelet counts
it), the room left, and how often the kernel's OOM killer has struck in the container. Then
one line per GPU (its total, used and free memory); 'runall gpus' lists their processes.

A limit that cannot be read is a warning: runall then admits trials by GPU memory only.
See docs/resources.md.

Flags:
`

func runResources(_ context.Context, a *app, args []string) error {
	fs := newFlags(a, "resources", resourcesUsage)
	fakeGPUs := fs.String("fake-gpus", "", "show simulated GPUs of these `SIZES` instead of NVML's (env RUNALL_FAKE_GPUS)")
	asJSON := fs.Bool("json", false, "print JSON (sizes in bytes) instead of a table")
	if done, err := fs.parse(args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("resources: unexpected argument %q", fs.Arg(0))
	}

	hm := hostMemoryJSON{}
	probe := hostmem.Open("")
	hm.Source = probe.String()
	if m, err := probe.Read(); err != nil {
		hm.Error = err.Error()
	} else {
		hm.Limit, hm.Limited, hm.Used, hm.Cache, hm.Room = m.Limit, m.Limited, m.Used, m.Cache, m.Room()
		hm.Available = m.Available
		if m.HasOOMKills {
			hm.OOMKills = &m.OOMKills
		}
		hm.LimitHits = m.LimitHits
	}
	gpus := []deviceJSON{}
	gpuErr := ""
	if gp, err := openProbe(a, *fakeGPUs); err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			return err
		}
		gpuErr = err.Error()
	} else {
		defer gp.Close()
		devs, err := gp.Devices()
		if err != nil {
			gpuErr = err.Error()
		}
		for _, d := range devs {
			gpus = append(gpus, deviceJSON{Index: d.Index, UUID: d.UUID, Name: d.Name, Total: d.Total, Used: d.Used, Free: d.Free})
		}
	}
	if *asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Host     hostMemoryJSON `json:"host_memory"`
			GPUs     []deviceJSON   `json:"gpus"`
			GPUError string         `json:"gpus_error,omitempty"`
		}{hm, gpus, gpuErr})
	}
	return printResources(a.stdout, hm, gpus, gpuErr)
}

type hostMemoryJSON struct {
	Source    string  `json:"source"` // "cgroup v2 /sys/fs/cgroup", "/proc/meminfo"
	Limit     uint64  `json:"limit_bytes"`
	Limited   bool    `json:"limited"` // a cgroup limit below the machine's memory applies
	Used      uint64  `json:"used_bytes"`
	Cache     uint64  `json:"reclaimable_cache_bytes"`
	Room      uint64  `json:"room_bytes"`
	Available uint64  `json:"machine_available_bytes,omitempty"`
	OOMKills  *uint64 `json:"oom_kills,omitempty"`  // absent where the kernel keeps no counter
	LimitHits uint64  `json:"limit_hits,omitempty"` // cgroup v1 memory.failcnt: charges that hit the limit
	Error     string  `json:"error,omitempty"`
}

// deviceJSON is a GPU's memory, without the processes 'runall gpus' lists.
type deviceJSON struct {
	Index int    `json:"index"`
	UUID  string `json:"uuid"`
	Name  string `json:"name"`
	Total uint64 `json:"total_bytes"`
	Used  uint64 `json:"used_bytes"`
	Free  uint64 `json:"free_bytes"`
}

func printResources(w io.Writer, hm hostMemoryJSON, gpus []deviceJSON, gpuErr string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "HOST MEMORY\t(%s)\n", hm.Source)
	if hm.Error != "" {
		fmt.Fprintf(tw, "  unknown\t%s: trials are admitted by GPU memory only\n", hm.Error)
	} else {
		limit := size.Format(hm.Limit)
		if !hm.Limited {
			limit += " (no limit: the machine's memory)"
		}
		fmt.Fprintf(tw, "  limit\t%s\n", limit)
		fmt.Fprintf(tw, "  in use\t%s (reclaimable page cache left out: %s)\n", size.Format(hm.Used), size.Format(hm.Cache))
		room := size.Format(hm.Room)
		if hm.Available > 0 && hm.Limited {
			room += fmt.Sprintf(" (the machine has %s available)", size.Format(hm.Available))
		}
		fmt.Fprintf(tw, "  room\t%s\n", room)
		if hm.OOMKills != nil {
			fmt.Fprintf(tw, "  oom kills\t%d\n", *hm.OOMKills)
		}
		if hm.LimitHits > 0 {
			fmt.Fprintf(tw, "  limit hits\t%d (charges that reached the limit, and made the kernel reclaim)\n", hm.LimitHits)
		}
	}
	fmt.Fprintln(tw, "GPUS")
	if gpuErr != "" {
		fmt.Fprintf(tw, "  none\t%s\n", gpuErr)
	}
	for _, g := range gpus {
		fmt.Fprintf(tw, "  GPU%d\t%s: %s total, %s used, %s free\n", g.Index, g.Name,
			size.Format(g.Total), size.Format(g.Used), size.Format(g.Free))
	}
	return tw.Flush()
}
