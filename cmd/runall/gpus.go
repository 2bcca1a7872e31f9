package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/gpu/mps"
	"github.com/runall/runall/size"
)

const gpusUsage = `Usage: runall gpus [--fake-gpus SIZES] [--json]

Lists the GPUs runall would place trials on, as it measures them: index, UUID, name, total,
used and free memory, health (HEALTH: ok, or the faults the driver reports: critical Xids,
pages pending retirement, a failed row remapping, uncorrectable ECC errors), utilization (UTIL: the share of the time a kernel ran lately, as
nvidia-smi's GPU-Util), and under each GPU its processes (PID, name, memory, and in UTIL the
share of the time its kernels ran), each marked "here" when its PID names a process of this
pid namespace that uses the GPU. In MPS, which MPS control daemon serves the GPU now: a
runall run's (gpu-isolation: mps; found by the record beside its pipe directory under
$TMPDIR/runall-mps-*), the node's at CUDA_MPS_PIPE_DIRECTORY, or none; whether it answers
get_server_list, its server's PID and how many clients it has; a daemon whose run is gone
(runall was killed) says "left by run pid N (gone)", and the next run with gpu-isolation: mps
on the node stops it once it has no clients. A last line
says how runall can tell its trials' memory apart on a shared GPU: by their processes' PIDs
(NVML's PIDs are this namespace's: recent drivers, VMs, bare metal, hostPID Pods), by the
order processes appear (a container on an older driver, which reports the host's PIDs), or
only from each GPU's growth (no processes reported).

By default runall asks NVML, the NVIDIA driver's library (libnvidia-ml.so.1), and shows only
the GPUs that CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES leave, numbered from 0 in that
order. With --fake-gpus (or RUNALL_FAKE_GPUS)
it lists simulated GPUs instead, whose memory and compute 'runall fake-alloc' claims; their state lives in
RUNALL_FAKE_GPU_STATE (default: $TMPDIR/runall-fake-gpus-<uid>); RUNALL_FAKE_HOST_PIDS=1
makes them report PIDs as a container on an older driver sees them, =none no processes.
See docs/gpu.md.

Exits 1 when there is no usable GPU, saying why.

Flags:
`

func runGPUs(_ context.Context, a *app, args []string) error {
	fs := newFlags(a, "gpus", gpusUsage)
	fakeGPUs := fs.String("fake-gpus", "", "list simulated GPUs of these `SIZES` (e.g. 32GiB,16GiB or 4x16GiB) instead of NVML's (env RUNALL_FAKE_GPUS)")
	asJSON := fs.Bool("json", false, "print JSON (sizes in bytes) instead of a table")
	if done, err := fs.parse(args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("gpus: unexpected argument %q", fs.Arg(0))
	}

	probe, err := openProbe(a, *fakeGPUs)
	if err != nil {
		return err
	}
	defer probe.Close()
	list, err := listGPUs(probe)
	if err != nil {
		return err
	}
	pids, note := pidNamespace(list)
	uuids := make([]string, len(list))
	for i, g := range list {
		uuids[i] = g.UUID
	}
	state, perGPU, err := mpsState(a, *fakeGPUs, uuids)
	if err != nil {
		return err
	}
	for i := range list {
		list[i].MPS = &perGPU[i]
	}
	if *asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			GPUs []gpuJSON `json:"gpus"`
			PIDs string    `json:"process_ids"`
			MPS  mps.State `json:"mps"`
		}{list, pids, state})
	}
	if err := printGPUs(a.stdout, list); err != nil {
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "%s\n%s\n", note, state.Line)
	return err
}

// listGPUs is each GPU as the probe measures it, with its processes and utilization.
func listGPUs(probe gpu.Probe) ([]gpuJSON, error) {
	devs, err := probe.Devices()
	if err != nil {
		return nil, err
	}
	list := make([]gpuJSON, len(devs))
	for i, d := range devs {
		list[i] = gpuJSON{Index: d.Index, UUID: d.UUID, Name: d.Name, Total: d.Total, Used: d.Used, Free: d.Free, Processes: []processJSON{}}
		list[i].Health = readHealth(probe, d.Index) // gpus_health.go
		procs, err := probe.Processes(d.Index)
		if err != nil {
			// Some GPUs (and some container setups) do not report processes; the memory
			// figures are still worth showing.
			list[i].ProcessesError = err.Error()
			continue
		}
		for _, p := range procs {
			list[i].Processes = append(list[i].Processes, processJSON{PID: p.PID, Name: p.Name, Used: p.UsedMemory, Here: p.Local})
		}
		list[i].addUtilization(probe)
	}
	return list, nil
}

// pidNamespace says whose PIDs the driver reports, from what it reports now: "here" (this pid
// namespace's), "elsewhere" (processes, none of them here: the host's), "none" (memory in
// use, no process), or "unknown" (nothing runs). The note says what it means for a run.
func pidNamespace(list []gpuJSON) (pids, note string) {
	procs, here, used := 0, 0, false
	for _, g := range list {
		used = used || g.Used > 0
		for _, p := range g.Processes {
			procs++
			if p.Here {
				here++
			}
		}
	}
	switch {
	case here > 0:
		return "here", "Process IDs are this pid namespace's: runall ties each trial's GPU memory to its own processes."
	case procs > 0:
		return "elsewhere", "No process ID names a process here that uses a GPU (a container on an older driver sees the host's):\n" +
			"runall ties processes to trials by the order they appear on a GPU, launching one trial at a time per GPU."
	case used:
		return "none", "The driver reports no processes: runall estimates each trial's GPU memory from its GPU's growth."
	}
	return "unknown", "No process uses a GPU now: how the driver reports processes shows once one does (runall checks as it runs)."
}

type gpuJSON struct {
	Index          int           `json:"index"`
	UUID           string        `json:"uuid"`
	Name           string        `json:"name"`
	Total          uint64        `json:"total_bytes"`
	Used           uint64        `json:"used_bytes"`
	Free           uint64        `json:"free_bytes"`
	Processes      []processJSON `json:"processes"`
	ProcessesError string        `json:"processes_error,omitempty"`
	// Utilization is NVML's utilization rates (nil when the device reports none, with why).
	Utilization      *utilizationJSON `json:"utilization,omitempty"`
	UtilizationError string           `json:"utilization_error,omitempty"`
	// MPS is the control daemon that serves the GPU now, if any: a run's, or the node's.
	MPS *mps.GPU `json:"mps"`
	// Health is what the driver says of the GPU's faults (gpus_health.go).
	Health *healthJSON `json:"health"`
}

type utilizationJSON struct {
	GPU    uint32 `json:"gpu_percent"`    // of the time a kernel ran
	Memory uint32 `json:"memory_percent"` // of the time memory was read or written
}

type processJSON struct {
	PID  uint32 `json:"pid"`
	Name string `json:"name"`
	Used uint64 `json:"used_bytes"`
	Here bool   `json:"here"` // the PID names a process of this pid namespace that uses the GPU
	// SM is the share of the time its kernels ran lately; absent where the driver did not list
	// it (one that ran no kernel may be listed at 0, or not at all, as drivers differ).
	SM *uint32 `json:"sm_percent,omitempty"`
}

// addUtilization adds the device's utilization and each of its processes' share, as far as
// the device reports them: some GPUs (and drivers) report neither.
func (g *gpuJSON) addUtilization(probe gpu.Probe) {
	u, err := probe.Utilization(g.Index)
	if err != nil {
		g.UtilizationError = err.Error()
		return
	}
	g.Utilization = &utilizationJSON{GPU: u.GPU, Memory: u.Memory}
	procs, err := probe.ProcessUtilization(g.Index)
	if err != nil {
		return // the device's rates are still worth showing
	}
	for _, pu := range procs {
		for k := range g.Processes {
			if g.Processes[k].PID == pu.PID {
				g.Processes[k].SM = &pu.SM
			}
		}
	}
}

// printGPUs writes one row per GPU and, indented beneath it, one per process, with the
// process's memory in the USED column and its kernels' share of the time in UTIL.
func printGPUs(w io.Writer, list []gpuJSON) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tUUID\tNAME\tTOTAL\tUSED\tFREE\tHEALTH\tUTIL\tMPS")
	var errs []string
	for _, g := range list {
		util := "?"
		if g.Utilization != nil {
			util = fmt.Sprintf("%d%%", g.Utilization.GPU)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.Index, g.UUID, g.Name,
			size.Format(g.Total), size.Format(g.Used), size.Format(g.Free), healthCell(g.Health), util, mpsCell(g.MPS))
		if g.ProcessesError != "" {
			// Every row keeps all eight tab-ended cells, or tabwriter would realign the rest.
			fmt.Fprint(tw, "\t  (processes unknown)\t\t\t\t\t\t\t\n")
			errs = append(errs, fmt.Sprintf("gpu %d: %s", g.Index, g.ProcessesError))
		}
		if g.Health != nil && g.Health.Error != "" {
			errs = append(errs, fmt.Sprintf("gpu %d: health: %s", g.Index, g.Health.Error))
		}
		for _, p := range g.Processes {
			name := p.Name
			if name == "" {
				name = "?"
			}
			if p.Here {
				name += " (here)"
			}
			sm := ""
			if p.SM != nil {
				sm = fmt.Sprintf("%d%%", *p.SM)
			}
			fmt.Fprintf(tw, "\t  pid %s\t%s\t\t%s\t\t\t%s\t\n", strconv.FormatUint(uint64(p.PID), 10), name, size.Format(p.Used), sm)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for line := range strings.Lines(buf.String()) {
		// tabwriter pads the last cell of process rows, which must stay tab-ended.
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}
	for _, e := range errs {
		fmt.Fprintln(w, e)
	}
	return nil
}

// mpsCell says in the MPS column which control daemon serves the GPU and what it answered:
// "none", "run pid 123: server 456, 2 clients", "node: no server yet", "run pid 123: no answer",
// "left by run pid 123 (gone): server 456, 0 client(s)" (a killed run's: the next run stops it).
func mpsCell(g *mps.GPU) string {
	if g == nil || g.Daemon == "none" {
		return "none"
	}
	who := "node"
	switch {
	case g.Daemon == "run" && g.RunGone:
		who = fmt.Sprintf("left by run pid %d (gone)", g.RunPID)
	case g.Daemon == "run":
		who = fmt.Sprintf("run pid %d", g.RunPID)
	}
	switch {
	case !g.Answers:
		return who + ": no answer"
	case len(g.Servers) == 0:
		return who + ": no server yet"
	}
	servers := make([]string, len(g.Servers))
	for i, s := range g.Servers {
		servers[i] = strconv.Itoa(s)
	}
	return fmt.Sprintf("%s: server %s, %d client(s)", who, strings.Join(servers, ","), g.Clients)
}
