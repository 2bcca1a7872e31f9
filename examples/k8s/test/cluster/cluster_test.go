package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMain(m *testing.M) {
	code := m.Run()
	CleanupImages()
	os.Exit(code)
}

// TestClusterRunsAPodAndLeavesNothing: a Pod of the runall image runs on the real kubelet as
// the image's non-root user, its log is read from the kubelet's directory, and after Stop no
// process, mount, cgroup or directory of the cluster is left.
func TestClusterRunsAPodAndLeavesNothing(t *testing.T) {
	c := Start(t, Images(t)...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			HostNetwork:   true,
			Containers: []corev1.Container{{
				Name: "c", Image: RunallImage, ImagePullPolicy: corev1.PullNever,
				Command: []string{"sh", "-c", "echo uid=$(id -u) && runall --version && sleep 300"},
			}},
		},
	}
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var log string
	for log == "" || !strings.Contains(log, "runall") {
		if ctx.Err() != nil {
			t.Fatalf("the Pod's log never showed runall's version: %q", log)
		}
		time.Sleep(300 * time.Millisecond)
		log = c.PodLog(t, "default", "hello", "c")
	}
	if !strings.Contains(log, "uid=10001") {
		t.Errorf("the Pod ran as %q, want the image's user 10001", log)
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if left := c.Leftovers(); len(left) > 0 {
		t.Errorf("left behind after Stop:\n%s", strings.Join(left, "\n"))
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "kubelet")); err == nil {
		t.Errorf("%s/kubelet still there", c.Dir)
	}
}
