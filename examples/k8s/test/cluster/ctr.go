package cluster

import (
	"context"
	"fmt"
	"os/exec"
)

// ctrClient runs containerd's client against the cluster's containerd, in the kubelet's
// namespace: the images it imports and the containers its teardown kills.
type ctrClient struct {
	bin  string // the ctr binary
	addr string // containerd's socket
}

func (c ctrClient) args(args []string) []string {
	return append([]string{"--address", c.addr, "-n", "k8s.io"}, args...)
}

// run runs ctr with args; its output is in the error when it fails.
func (c ctrClient) run(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, c.bin, c.args(args)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr %v: %w: %s", args, err, out)
	}
	return nil
}

// output runs ctr with args and returns what it printed.
func (c ctrClient) output(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, c.bin, c.args(args)...).Output()
	return string(out), err
}
