package cluster

import (
	"fmt"
	"os"
	"path/filepath"
)

// PauseImage is the Pods' sandbox image, built by scripts/k8s-image.sh and imported with the
// test's images.
const PauseImage = "docker.io/local/pause:1"

// containerdConfig writes containerd's config under c: its own root, state and socket, runc
// with cgroupfs, and a CNI config with the loopback plugin alone, so that no Pod gets an
// address off loopback (only hostNetwork Pods run). restrict_oom_score_adj: runc cannot lower
// oom_score_adj below its own here (no CAP_SYS_RESOURCE in this VM).
func containerdConfig(c string, b binaries) (string, error) {
	if err := os.MkdirAll(filepath.Join(c, "cni"), 0o755); err != nil {
		return "", err
	}
	cni := `{"cniVersion":"1.0.0","name":"lo-only","plugins":[{"type":"loopback"}]}`
	if err := os.WriteFile(filepath.Join(c, "cni", "10-lo.conflist"), []byte(cni), 0o644); err != nil {
		return "", err
	}
	cfg := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = %[7]q
        SystemdCgroup = false
        Root = %[8]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[9]q
    conf_dir = %[10]q
`, filepath.Join(c, "root"), filepath.Join(c, "state"), socket(c), socket(c)+".ttrpc",
		filepath.Join(c, "opt"), PauseImage, b.path["runc"], filepath.Join(c, "runc"),
		b.cniDir, filepath.Join(c, "cni"))
	path := filepath.Join(c, "config.toml")
	return path, os.WriteFile(path, []byte(cfg), 0o644)
}

func socket(c string) string { return filepath.Join(c, "containerd.sock") }

// kubeletConfig writes the kubelet's configuration: cgroupfs on this machine's cgroup v1
// without QoS cgroups or node-allocatable enforcement, no swap or local-storage checks, its
// own port on loopback, container logs under podLogs (read there: the node's address is not
// loopback, so the apiserver cannot reach the kubelet for kubectl logs).
func kubeletConfig(dir, containerd, podLogs string, port int) (string, error) {
	cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: %d
readOnlyPort: 0
healthzPort: 0
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://%s
evictionHard: {memory.available: "100Mi", nodefs.available: "1%%", imagefs.available: "1%%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
localStorageCapacityIsolation: false
resolvConf: ""
podLogsDir: %s
syncFrequency: 5s
nodeStatusUpdateFrequency: 5s
serializeImagePulls: false
`, port, socket(containerd), podLogs)
	path := filepath.Join(dir, "kubelet.yaml")
	return path, os.WriteFile(path, []byte(cfg), 0o644)
}

func kubeletArgs(dir, config, kubeconfig string) []string {
	return []string{"--config", config, "--kubeconfig", kubeconfig, "--hostname-override", NodeName,
		"--root-dir", filepath.Join(dir, "kubelet"), "--cert-dir", filepath.Join(dir, "kubelet-pki")}
}

// NodeName is the one node's name.
const NodeName = "node1"
