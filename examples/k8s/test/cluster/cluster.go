// Package cluster starts a real, one-node Kubernetes cluster for a test: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, containerd and a kubelet, all on loopback, their
// files in a temporary directory, and tears it all down when the test ends (Stop, at the
// test's cleanup), leaving no process, mount or cgroup behind (Leftovers lists what is left,
// empty after a clean teardown). The few paths the kubelet and containerd make outside that
// directory whatever they are told (teardown.go) are removed only when they were absent as
// the cluster started; a cluster a killed test left behind is cleared by the next Start
// (stale.go).
//
//	func TestX(t *testing.T) {
//		c := cluster.Start(t, images...) // skips unless K8S_E2E=1; fails under CI=true if a binary is missing
//		c.Client.BatchV1().Jobs(ns).Create(...)
//	}
//
// The Kubernetes binaries are those `make k8s-bin` builds for the version this module's
// k8s.io/api names; containerd, runc and the CNI plugins are Debian's. Only hostNetwork Pods
// run: the CNI config is loopback alone, so that no Pod gets an address off this machine.
// Container logs are read from the kubelet's log directory (PodLog), not through the
// apiserver, which cannot reach the node's non-loopback address.
package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Cluster is a running cluster.
type Cluster struct {
	Client  kubernetes.Interface
	Config  *rest.Config
	Dir     string        // everything the daemons write: logs, etcd, containerd, the kubelet
	PodLogs string        // the kubelet's podLogsDir: NAMESPACE_POD_UID/CONTAINER/N.log
	Startup time.Duration // from the first daemon started to the node Ready

	bin     binaries
	ctd     ctrClient // containerd's client, for the images and the teardown
	daemons []*daemon // in start order
	before  snapshot  // what was on the machine before the cluster

	stopOnce sync.Once
	stopErr  error
}

const startWait = 90 * time.Second

// Options change the cluster from the default one.
type Options struct {
	// ServiceAccounts turns on ServiceAccount admission and the controllers that make each
	// namespace's default ServiceAccount and publish the root CA, so that a Pod may mount a
	// token and reach the apiserver (on 127.0.0.1, which hostNetwork Pods share).
	ServiceAccounts bool
}

// Start starts a cluster and imports the OCI image archives into its containerd (one must be
// PauseImage). It skips the test unless K8S_E2E=1, or when a binary is missing (outside CI).
func Start(t testing.TB, images ...string) *Cluster {
	t.Helper()
	return StartWith(t, Options{}, images...)
}

// StartWith is Start with o.
func StartWith(t testing.TB, o Options, images ...string) *Cluster {
	t.Helper()
	Skip(t)
	b := findBinaries(t)
	unlock := lockMachine(t)
	if err := reapStale(outside); err != nil {
		unlock()
		t.Fatalf("cluster: %v", err)
	}
	dir, err := os.MkdirTemp("", dirPattern) // short: unix socket paths must stay under 108 bytes
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, marker), nil, 0o644)
	}
	if err != nil {
		unlock()
		t.Fatal(err)
	}
	c := &Cluster{Dir: dir, PodLogs: filepath.Join(dir, "pod-logs"), bin: b, before: takeSnapshot(dir),
		ctd: ctrClient{bin: b.path["ctr"], addr: socket(filepath.Join(dir, "ctd"))}}
	if err := writeAbsent(dir, c.before); err != nil {
		unlock()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("cluster teardown: %v", err)
		}
		unlock()
	})
	t0 := time.Now()
	if err := c.startControlPlane(o); err != nil {
		t.Fatalf("cluster: %v", err)
	}
	if err := c.startNode(images); err != nil {
		t.Fatalf("cluster: %v", err)
	}
	c.Startup = time.Since(t0)
	t.Logf("cluster: ready in %v (%s)", c.Startup.Round(time.Millisecond), dir)
	return c
}

func (c *Cluster) startControlPlane(o Options) error {
	token, err := credentials(filepath.Join(c.Dir, "pki"))
	if err != nil {
		return err
	}
	etcd, peer, api, err := threePorts()
	if err != nil {
		return err
	}
	server := "https://127.0.0.1:" + strconv.Itoa(api)
	kc := filepath.Join(c.Dir, "kubeconfig")
	if err := kubeconfig(kc, server, token); err != nil {
		return err
	}
	c.Config = &rest.Config{Host: server, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return err
	}
	if err := c.run("etcd", etcdArgs(c.Dir, etcd, peer)...); err != nil {
		return err
	}
	if err := c.run("kube-apiserver", apiserverArgs(c.Dir, etcd, api, o)...); err != nil {
		return err
	}
	if err := c.waitFor("the apiserver's /readyz", c.apiserverReady); err != nil {
		return err
	}
	if err := c.run("kube-controller-manager", controllerManagerArgs(c.Dir, kc, o)...); err != nil {
		return err
	}
	return c.run("kube-scheduler", schedulerArgs(kc)...)
}

func (c *Cluster) startNode(images []string) error {
	ctd := filepath.Join(c.Dir, "ctd")
	cfg, err := containerdConfig(ctd, c.bin)
	if err != nil {
		return err
	}
	if err := c.run("containerd", "--config", cfg); err != nil {
		return err
	}
	if err := c.waitFor("containerd", func(ctx context.Context) bool { return c.ctd.run(ctx, "version") == nil }); err != nil {
		return err
	}
	for _, img := range images {
		if err := c.ctd.run(context.Background(), "images", "import", img); err != nil {
			return fmt.Errorf("import %s: %w", img, err)
		}
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	kcfg, err := kubeletConfig(c.Dir, ctd, c.PodLogs, port)
	if err != nil {
		return err
	}
	if err := c.run("kubelet", kubeletArgs(c.Dir, kcfg, filepath.Join(c.Dir, "kubeconfig"))...); err != nil {
		return err
	}
	return c.waitFor("node "+NodeName+" Ready", c.nodeReady)
}

func threePorts() (a, b, d int, err error) {
	ports := make([]int, 3)
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return 0, 0, 0, err
		}
	}
	return ports[0], ports[1], ports[2], nil
}

// run starts one of the cluster's daemons.
func (c *Cluster) run(name string, args ...string) error {
	d, err := startDaemon(c.Dir, name, c.bin.path[name], args...)
	if err != nil {
		return err
	}
	c.daemons = append(c.daemons, d)
	return nil
}

// waitFor polls ok until it holds, a daemon exits, or startWait passes.
func (c *Cluster) waitFor(what string, ok func(context.Context) bool) error {
	deadline := time.Now().Add(startWait)
	for time.Now().Before(deadline) {
		for _, d := range c.daemons {
			if gone, err := d.exited(); gone {
				return fmt.Errorf("waiting for %s: %w", what, err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		done := ok(ctx)
		cancel()
		if done {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s: not after %v (logs in %s)", what, startWait, c.Dir)
}

func (c *Cluster) apiserverReady(ctx context.Context) bool {
	body, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err == nil && string(body) == "ok"
}

func (c *Cluster) nodeReady(ctx context.Context) bool {
	n, err := c.Client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// lockMachine waits until no other cluster runs on this machine, and returns the unlock. Two
// at once would share the paths the kubelet and containerd use whatever they are told (the
// shims' sockets, /var/lib/kubelet/device-plugins), and the first to stop would remove them.
func lockMachine(t testing.TB) func() {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "runall-k8s-cluster.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("cluster lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("cluster lock: %v", err)
	}
	return func() { f.Close() }
}
