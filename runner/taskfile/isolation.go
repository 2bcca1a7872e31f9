package taskfile

import "fmt"

// Isolation is gpu-isolation: whether the trials that share a GPU run as clients of its MPS
// server (gpu/mps starts the servers: it reads this value, this package knows no daemon).
type Isolation string

// The isolations: no MPS (the default), MPS or a clear error, MPS where it can be had.
const (
	IsolationNone Isolation = "none"
	IsolationMPS  Isolation = "mps"
	IsolationAuto Isolation = "auto"
)

// ParseIsolation reads a gpu-isolation value; "" is none.
func ParseIsolation(s string) (Isolation, error) {
	switch i := Isolation(s); i {
	case IsolationNone, IsolationMPS, IsolationAuto:
		return i, nil
	case "":
		return IsolationNone, nil
	}
	return "", fmt.Errorf("gpu-isolation %q: want mps, auto or none", s)
}
