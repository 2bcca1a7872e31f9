package report

import "github.com/runall/runall/runner/results"

// gpuHealth says, in the page's header, each fault the run saw on a GPU, when, and what
// runall did: the live page shows a GPU taken out of service as it happens.
func (p *page) gpuHealth() {
	for _, g := range p.run.GPUs {
		for _, f := range g.Faults {
			did := "recorded; the GPU stays in service"
			if f.Action == results.GPUHealthOutOfService {
				did = "out of service: its trials went on elsewhere, and none was placed on it after"
			}
			p.printf("<p class=\"meta gpu-health\">GPU%d: %s (NVIDIA: %s), seen %s: %s</p>\n",
				g.GPU, esc(f.Fault), esc(f.Resolution), esc(f.Seen.Format("15:04:05")), esc(did))
		}
	}
}
