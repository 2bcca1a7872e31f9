package gpusim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// MPSClient is what makes a fake-alloc process a client of a simulated MPS server, as
// CUDA_MPS_PIPE_DIRECTORY makes a CUDA process one of a real server's.
type MPSClient struct {
	Pipe   string         // CUDA_MPS_PIPE_DIRECTORY; "" runs without MPS
	Limits map[int]uint64 // CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, by the index the process sees
	// FaultAfter makes the process cause a fatal GPU fault this long after its start (0:
	// never), as a kernel's illegal memory access does: every client of its server is lost.
	FaultAfter time.Duration
}

// joined reports whether the process became a client of a server, from the context join
// returned.
func (m MPSClient) joined(ctx context.Context) bool { return ctx.Value(joinedKey{}) != nil }

type joinedKey struct{}

// errMPSLost is the cause of a client's end when its server went away.
var errMPSLost = errors.New("MPS client terminated")

// join connects to the server when m.Pipe is set. The context it returns ends when the server
// drops this client; end turns that into the CUDA error a real client prints.
func (m MPSClient) join(ctx context.Context, stderr io.Writer) (context.Context, func(error) error, error) {
	if m.Pipe == "" {
		return ctx, func(err error) error { return err }, nil
	}
	conn, err := net.DialTimeout("unix", filepath.Join(m.Pipe, MPSSocket), 2*time.Second)
	if err != nil {
		// No daemon answers: CUDA runs the process without MPS, as the documentation says.
		return ctx, func(err error) error { return err }, nil
	}
	fmt.Fprintf(conn, "client %d\n", os.Getpid())
	reply, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(reply, "ok ") {
		conn.Close()
		fmt.Fprintln(stderr, "RuntimeError: CUDA error: MPS server is not ready to accept new MPS client requests")
		return ctx, nil, fmt.Errorf("fake-alloc: %s", strings.TrimSpace(cmpOr(reply, "the MPS server did not answer")))
	}
	ctx, cancel := context.WithCancelCause(context.WithValue(ctx, joinedKey{}, true))
	go func() {
		_, _ = io.Copy(io.Discard, conn)
		cancel(errMPSLost)
	}()
	var faulted atomic.Bool
	if m.FaultAfter > 0 {
		t := time.AfterFunc(m.FaultAfter, func() {
			faulted.Store(true)
			_, _ = mpsCommand(m.Pipe, fmt.Sprintf("fault %d", os.Getpid()))
		})
		context.AfterFunc(ctx, func() { t.Stop() })
	}
	end := func(err error) error {
		lost := errors.Is(context.Cause(ctx), errMPSLost) // before the close, which would read as lost
		conn.Close()
		if !lost {
			return err
		}
		if faulted.Load() {
			fmt.Fprintln(stderr, "RuntimeError: CUDA error: an illegal memory access was encountered")
			return errors.New("fake-alloc: a fatal GPU fault (an illegal memory access)")
		}
		fmt.Fprintln(stderr, "RuntimeError: CUDA error: MPS client terminated")
		return fmt.Errorf("fake-alloc: %w: its MPS server went away", errMPSLost)
	}
	return ctx, end, nil
}

func cmpOr(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
