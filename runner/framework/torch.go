package framework

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// torchProbe finds out once per run whether the installed PyTorch accepts
// per_process_memory_fraction in PYTORCH_CUDA_ALLOC_CONF (2.9 and newer). Older versions
// reject options they do not know, so setting it blindly would break their trials.
type torchProbe struct {
	once sync.Once
	ok   bool
}

func (p *torchProbe) supportsFractionConf(env []string) bool {
	p.once.Do(func() { p.ok = torchAtLeast(torchVersion(env), 2, 9) })
	return p.ok
}

// torchVersion reads torch's version from the package metadata, without importing torch
// (which takes seconds). "" when there is no python3 or no torch.
func torchVersion(env []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", "-c", `import importlib.metadata as m; print(m.version("torch"))`)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func torchAtLeast(version string, major, minor int) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(strings.TrimLeft(parts[1], "0") + "0")
	if err1 != nil || err2 != nil {
		return false
	}
	mi /= 10
	return ma > major || ma == major && mi >= minor
}
