package mps

import (
	"fmt"
	"strings"
)

// State is what `runall gpus` says of MPS: whether gpu-isolation: mps could run here, and
// whether a node's daemon serves the GPUs, with its servers.
type State struct {
	Control string `json:"control"`              // the path of nvidia-cuda-mps-control; "" when not on PATH
	Node    string `json:"node_pipe,omitempty"`  // CUDA_MPS_PIPE_DIRECTORY, when set
	Answers bool   `json:"node_answers"`         // a daemon answers there
	Servers []int  `json:"node_servers"`         // its servers' PIDs (get_server_list)
	Mode    string `json:"gpu_isolation"`        // what gpu-isolation: mps would do: "node", "per-gpu" or "unavailable"
	Line    string `json:"-"`                    // the same in words
	Err     string `json:"node_error,omitempty"` // why the node's daemon did not answer
}

// Look says what MPS can be had with environ (its PATH and CUDA_MPS_PIPE_DIRECTORY).
func Look(environ []string) State {
	st := State{Control: lookPath(environ, Binary)}
	if pipe, ok := lookup(environ, EnvPipe); ok && pipe != "" && st.Control != "" {
		st.Node = pipe
		d := &Daemon{set: &Set{bin: st.Control, environ: environ}, Pipe: pipe}
		servers, err := d.Servers()
		st.Answers, st.Servers = err == nil, servers
		if err != nil {
			st.Err = firstLine(err.Error())
		}
	}
	switch {
	case st.Answers:
		st.Mode = "node"
		st.Line = fmt.Sprintf("MPS: a node's control daemon answers at %s=%s (servers: %s): gpu-isolation: mps makes trials its clients.", EnvPipe, st.Node, pids(st.Servers))
	case st.Control != "":
		st.Mode = "per-gpu"
		st.Line = fmt.Sprintf("MPS: %s (%s): gpu-isolation: mps starts one control daemon per GPU for a run.", Binary, st.Control)
		if st.Node != "" {
			st.Line += fmt.Sprintf(" (Nothing answers at %s=%s: %s.)", EnvPipe, st.Node, st.Err)
		}
	default:
		st.Mode = "unavailable"
		st.Line = fmt.Sprintf("MPS: %s is not on PATH: gpu-isolation: mps fails, auto runs without MPS (docs/gpu.md#mps).", Binary)
	}
	return st
}

func pids(ps []int) string {
	if len(ps) == 0 {
		return "none yet"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ", ")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
