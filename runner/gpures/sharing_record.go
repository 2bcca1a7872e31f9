package gpures

import (
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sharing"
)

// sharingRecord is what the controller measured, as results.json records it: the record
// keeps its own types so that it imports no controller. Each trial and count converts whole,
// so a figure the controller gains fails to build here until the record has it too.
func sharingRecord(f sharing.Figures) *results.Sharing {
	out := &results.Sharing{}
	for _, t := range f.Trials {
		out.Trials = append(out.Trials, results.SharingTrial(t))
	}
	for _, g := range f.GPUs {
		gpu := results.SharingGPU{GPU: g.GPU}
		for _, c := range g.Counts {
			gpu.Counts = append(gpu.Counts, results.SharingCount(c))
		}
		out.GPUs = append(out.GPUs, gpu)
	}
	return out
}
