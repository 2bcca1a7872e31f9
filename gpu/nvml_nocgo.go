//go:build !cgo

package gpu

import "fmt"

// OpenNVML always fails in a binary built without cgo: go-nvml loads libnvidia-ml.so.1
// through cgo.
func OpenNVML(opts NVMLOptions) (Probe, error) {
	return nil, fmt.Errorf("%w: this runall was built without cgo, so it cannot load NVML (rebuild with CGO_ENABLED=1); %s", ErrNoGPU, noGPUHint)
}
