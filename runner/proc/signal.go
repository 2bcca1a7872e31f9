package proc

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// SignalName is a signal's name as kill(1) and the kernel's logs spell it: "SIGKILL", where
// syscall.Signal's String says "killed".
func SignalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return fmt.Sprintf("signal %d", int(sig))
}
