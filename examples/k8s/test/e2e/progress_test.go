package e2e

import (
	"context"
	"net/url"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/runall/runall/examples/k8s/test/cluster"
)

// TestProgressAnnotations (issue 46, point 5): examples/k8s/progress/claims on a cluster with
// ServiceAccounts: each runall Pod patches its own annotations with its sweep's figures
// through the apiserver (the overlay's ServiceAccount, Role and mounted token; the apiserver
// on 127.0.0.1, which the hostNetwork Pods share, set in the ConfigMap as a kubelet would set
// it for the kubernetes Service), its last patch saying nothing runs or waits and counting
// the sweep's every trial (its scope the sweep: the figures merged from the claims store,
// whichever Pod ran what).
func TestProgressAnnotations(t *testing.T) {
	e := setupWith(t, cluster.Options{ServiceAccounts: true})
	waitFor(t, time.Minute, "the namespace's default ServiceAccount", func() bool {
		_, err := e.c.Client.CoreV1().ServiceAccounts(e.ns).Get(context.Background(), "default", metav1.GetOptions{})
		return err == nil
	})
	u, err := url.Parse(e.c.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	e.apply(t, "progress/claims", stepsFile(n, 3), func(ex *example) {
		ex.configMap.Data["KUBERNETES_SERVICE_HOST"] = u.Hostname()
		ex.configMap.Data["KUBERNETES_SERVICE_PORT"] = u.Port()
	})
	if end := e.waitJobEnd(t, claimsJob, 4*time.Minute); end != batchv1.JobComplete {
		t.Fatalf("the Job ended %s, want Complete; logs:\n%s", end, e.logs(t))
	}
	done := 0
	for _, p := range e.pods(t) {
		a := p.Annotations
		if a["runall.dev/done"] == "" {
			t.Errorf("%s: no progress annotations (%v); its log:\n%s", p.Name, a, e.c.PodLog(t, e.ns, p.Name, "trials"))
			continue
		}
		if a["runall.dev/running"] != "0" || a["runall.dev/waiting"] != "0" {
			t.Errorf("%s ended with %v: something still running or waiting", p.Name, a)
		}
		d, _ := strconv.Atoi(a["runall.dev/done"])
		if d != n || a["runall.dev/scope"] != "sweep" {
			t.Errorf("%s ended with %v: want the sweep's %d trials done, scope sweep", p.Name, a, n)
		}
		done = max(done, d)
		t.Logf("%s: done %s, running %s, waiting %s, best %q, eta %q", p.Name, a["runall.dev/done"], a["runall.dev/running"],
			a["runall.dev/waiting"], a["runall.dev/best"], a["runall.dev/eta"])
	}
	if done == 0 {
		t.Errorf("no Pod said it saw a task done")
	}
}
