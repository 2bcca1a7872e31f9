package cluster

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

// Kueue's names in the test cluster: one ResourceFlavor, one ClusterQueue whose quota stands
// in for the GPUs (CPU: the node has no GPU, and every Pod of the tests requests 100m CPU:
// KueueQuota is three Pods' worth), a LocalQueue in each namespace asked for, and two
// WorkloadPriorityClasses.
const (
	KueueFlavor       = "default-flavor"
	KueueClusterQueue = "runall-cq"
	KueueLocalQueue   = "runall" // examples/k8s/kueue's queue-name
	KueueQuota        = "300m"   // of CPU
	KueueLow          = "sweep"  // value 100: the sweeps
	KueueHigh         = "urgent" // value 1000: preempts a sweep that holds its quota
)

// kueueEtc is where Kueue v0.17.0 reads its metrics certificate (cmd/kueue/main.go), whatever
// it is told.
const kueueEtc = "/etc/kueue"

// KueueGVR are the resources of Kueue the tests read and make.
var (
	KueueWorkloads      = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
	kueueFlavors        = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"}
	kueueClusterQueues  = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	kueueLocalQueues    = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}
	kueuePriorities     = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloadpriorityclasses"}
	customResourceDefns = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// kueueDir is where scripts/kueue-bin.sh left Kueue ($KUEUE_BIN/kueue, its CRDs in
// $KUEUE_BIN/../crd): $KUEUE_BIN, else what that script says it built.
func kueueDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("KUEUE_BIN"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		script := filepath.Join(dir, "scripts", "kueue-bin.sh")
		if _, err := os.Stat(script); err != nil {
			continue
		}
		out, err := exec.Command(script, "--built").Output()
		if err != nil {
			unavailable(t, "Kueue is not built: run make k8s-bin (or set KUEUE_BIN)")
		}
		return strings.TrimSpace(string(out))
	}
	unavailable(t, "no scripts/kueue-bin.sh above the test: set KUEUE_BIN")
	return ""
}

// KueueOptions change Kueue from the one StartKueue starts.
type KueueOptions struct {
	// ElasticJobs turns on Kueue's alpha feature gate ElasticJobsViaWorkloadSlices: a Job
	// annotated kueue.x-k8s.io/elastic-job: "true" (examples/k8s/kueue/claims-elastic) then
	// changes its parallelism while it runs, each scale-up a new Workload slice admitted in
	// place of the old one, instead of being suspended and queued again.
	ElasticJobs bool
	// Quota is the ClusterQueue's quota of CPU, KueueQuota when empty.
	Quota string
}

// StartKueue starts Kueue's controller manager on the host against the cluster, as
// examples/k8s/kueue expects it: its CRDs, no webhooks in the apiserver (a Job in a queue is
// created suspended, as the overlay does) and no certificate management, Jobs with a
// queue-name label alone; then the queues of the constants above, the LocalQueue in each of
// namespaces. Stopped with the cluster.
func (c *Cluster) StartKueue(t testing.TB, namespaces ...string) {
	t.Helper()
	c.StartKueueWith(t, KueueOptions{}, namespaces...)
}

// StartKueueWith is StartKueue with o.
func (c *Cluster) StartKueueWith(t testing.TB, o KueueOptions, namespaces ...string) {
	t.Helper()
	dir := kueueDir(t)
	t0 := time.Now()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	k := kueueSetup{c, dyn, o.Quota}
	if k.quota == "" {
		k.quota = KueueQuota
	}
	gates := "VisibilityOnDemand=false"
	if o.ElasticJobs {
		gates += ",ElasticJobsViaWorkloadSlices=true"
	}
	if err := k.crds(dir); err != nil {
		t.Fatalf("kueue: %v", err)
	}
	if _, err := c.Client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kueue-system"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// With its certificate management off, Kueue reads a metrics certificate from a fixed
	// path whether it serves metrics or not: one of its own there, removed with the cluster
	// when the test made the directory.
	if _, err := os.Stat(kueueEtc); os.IsNotExist(err) {
		t.Cleanup(func() { os.RemoveAll(kueueEtc) })
	}
	if err := webhookCert(filepath.Join(kueueEtc, "metrics", "certs")); err != nil {
		t.Fatalf("kueue: %v", err)
	}
	cfg, probe, err := kueueConfig(filepath.Join(c.Dir, "kueue"))
	if err != nil {
		t.Fatalf("kueue: %v", err)
	}
	c.bin.path["kueue"] = filepath.Join(dir, "kueue")
	if err := c.run("kueue", "--config", cfg, "--kubeconfig", filepath.Join(c.Dir, "kubeconfig"),
		"--feature-gates", gates, "--zap-log-level", "2"); err != nil {
		t.Fatalf("kueue: %v", err)
	}
	if err := c.waitFor("Kueue's /readyz", func(ctx context.Context) bool { return httpOK(ctx, probe+"/readyz") }); err != nil {
		t.Fatalf("kueue: %v", err)
	}
	if err := k.queues(namespaces); err != nil {
		t.Fatalf("kueue: %v", err)
	}
	t.Logf("kueue: ready in %v", time.Since(t0).Round(time.Millisecond))
}

// kueueSetup makes Kueue's objects in the cluster.
type kueueSetup struct {
	c     *Cluster
	dyn   dynamic.Interface
	quota string // the ClusterQueue's CPU
}

// crds creates Kueue's CRDs (dir/../crd) and waits until they are established.
func (k kueueSetup) crds(dir string) error {
	c, dyn := k.c, k.dyn
	crds, err := filepath.Glob(filepath.Join(dir, "..", "crd", "*.yaml"))
	if err != nil || len(crds) == 0 {
		return fmt.Errorf("no CRDs in %s/../crd (%v): run make k8s-bin", dir, err)
	}
	for _, f := range crds {
		if err := createAll(context.Background(), dyn, customResourceDefns, "", f); err != nil {
			return err
		}
	}
	return c.waitFor("Kueue's CRDs established", func(ctx context.Context) bool {
		for _, f := range crds {
			u, err := dyn.Resource(customResourceDefns).Get(ctx, crdName(f), metav1.GetOptions{})
			if err != nil || !conditionTrue(u, "Established") {
				return false
			}
		}
		return true
	})
}

// kueueConfig writes Kueue's configuration in dir, and returns its path and the base URL of
// its health probes. The webhook server still listens (Kueue cannot run without it), on
// loopback with a certificate of its own, but no apiserver configuration points at it.
func kueueConfig(dir string) (path, probeURL string, err error) {
	if err := webhookCert(filepath.Join(dir, "certs")); err != nil {
		return "", "", err
	}
	probe, err := freePort()
	if err != nil {
		return "", "", err
	}
	hook, err := freePort()
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(dir, "config.yaml")
	return path, "http://127.0.0.1:" + strconv.Itoa(probe), os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
manageJobsWithoutQueueName: false
integrations:
  frameworks: ["batch/job"]
`, probe, hook, filepath.Join(dir, "certs"))), 0o600)
}

// httpOK says whether a GET of url answers 200.
func httpOK(ctx context.Context, url string) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}

// queues creates the ResourceFlavor, the ClusterQueue, the priorities and a LocalQueue in
// each namespace, and waits until the ClusterQueue is active.
func (k kueueSetup) queues(namespaces []string) error {
	c, dyn := k.c, k.dyn
	type object struct {
		gvr  schema.GroupVersionResource
		ns   string
		yaml string
	}
	objs := []object{
		{kueueFlavors, "", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: " + KueueFlavor + "}\n"},
		{kueueClusterQueues, "", fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %s}
spec:
  namespaceSelector: {}
  preemption:
    withinClusterQueue: LowerPriority
  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors:
        - name: %s
          resources:
            - {name: cpu, nominalQuota: %s}
            - {name: memory, nominalQuota: 64Gi}
`, KueueClusterQueue, KueueFlavor, k.quota)},
		{kueuePriorities, "", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: " + KueueLow + "}\nvalue: 100\n"},
		{kueuePriorities, "", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: " + KueueHigh + "}\nvalue: 1000\n"},
	}
	for _, ns := range namespaces {
		objs = append(objs, object{kueueLocalQueues, ns, fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: %s}\nspec: {clusterQueue: %s}\n", KueueLocalQueue, KueueClusterQueue)})
	}
	for _, o := range objs {
		if err := createYAML(context.Background(), dyn, o.gvr, o.ns, []byte(o.yaml)); err != nil {
			return err
		}
	}
	return c.waitFor("the ClusterQueue active", func(ctx context.Context) bool {
		u, err := dyn.Resource(kueueClusterQueues).Get(ctx, KueueClusterQueue, metav1.GetOptions{})
		return err == nil && conditionTrue(u, "Active")
	})
}

// crdName is the name of the CRD in file f (kueue.x-k8s.io_workloads.yaml: workloads.kueue.x-k8s.io).
func crdName(f string) string {
	base := strings.TrimSuffix(filepath.Base(f), ".yaml")
	group, plural, _ := strings.Cut(base, "_")
	return plural + "." + group
}

// conditionTrue says whether u's status has condition typ True.
func conditionTrue(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}

// createAll creates every document of file f.
func createAll(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, f string) error {
	data, err := os.ReadFile(f)
	if err != nil {
		return err
	}
	return createYAML(ctx, dyn, gvr, ns, data)
}

// createYAML creates the documents of data as gvr in ns.
func createYAML(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string, data []byte) error {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %w", gvr.Resource, err)
		}
		if obj == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		var r dynamic.ResourceInterface = dyn.Resource(gvr)
		if ns != "" {
			r = dyn.Resource(gvr).Namespace(ns)
		}
		if _, err := r.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
}

// webhookCert writes a self-signed certificate for 127.0.0.1 as tls.crt and tls.key in dir:
// Kueue's webhook server will not start without one.
func webhookCert(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kueue-webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
}
