// Package framework is what runall tells deep-learning frameworks (TensorFlow, JAX,
// PyTorch) so that a trial takes the GPU memory it uses rather than the whole card, and, when
// asked, no more than its need. It is apart from placement: the admitter decides where a
// trial goes; this decides what the trial is told. It knows nothing of the admitter.
package framework

import (
	"fmt"
	"strings"

	"github.com/runall/runall/internal/envlist"
)

// Framework is what runall tells deep-learning frameworks so that a trial takes the memory
// it uses rather than the whole card, and, when asked, no more than its need. It is apart
// from placement: the admitter decides where, this decides what the trial is told.
type Framework struct {
	torch torchProbe
}

// Env adds to env what a trial placed on devices needs: their variables (deviceEnv, from
// the probe), TensorFlow's and JAX's growth settings, its need (bytes per device; total is
// the smallest device's memory), and with capToNeed the frameworks' caps. A variable the
// task's own env: sets (own reports which) is left as the task set it.
func (f *Framework) Env(env, deviceEnv []string, need, total uint64, capToNeed bool, own func(name string) bool) []string {
	for _, kv := range deviceEnv {
		k, v, _ := strings.Cut(kv, "=")
		env = envlist.Set(env, k, v)
	}
	setDefault := func(k, v string) {
		if !own(k) {
			env = envlist.Set(env, k, v)
		}
	}
	setDefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
	setDefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
	env = envlist.Set(env, "RUNALL_GPU_MEMORY", fmt.Sprint(need))
	if total == 0 || need == 0 {
		return env
	}
	frac := fmt.Sprintf("%.3f", float64(need)/float64(total))
	env = envlist.Set(env, "RUNALL_GPU_MEMORY_FRACTION", frac)
	if !capToNeed {
		return env
	}
	setDefault("XLA_PYTHON_CLIENT_MEM_FRACTION", frac)
	if !own("PYTORCH_CUDA_ALLOC_CONF") && f.torch.supportsFractionConf(env) {
		conf := "per_process_memory_fraction:" + frac
		if old, ok := envlist.Lookup(env, "PYTORCH_CUDA_ALLOC_CONF"); ok && old != "" {
			conf = old + "," + conf
		}
		env = envlist.Set(env, "PYTORCH_CUDA_ALLOC_CONF", conf)
	}
	return env
}
