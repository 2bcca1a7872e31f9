package main_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/runall/runall/internal/eventually"
)

// TestClaimsLeaseTo2099EndToEnd: a runall is killed while it runs trial slow, and its claim
// is overwritten with one whose lease and renewal run to 2099 (on MinIO). The next runall
// says that it waits for slow, held by whom until when, what it does not trust, and takes
// slow over after the sweep's lease instead of waiting until killed. The lease is 5 s: the
// next runall first runs the quick trials, and a loaded CI machine took longer than a 2 s
// lease to do so, so that slow's claim went stale before it was waited on.
func TestClaimsLeaseTo2099EndToEnd(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	a := c.withEnv("SLOW=60").start("--log-dir", "logs0", "--lease", "5s", testdata("claims/slow.yml"))
	var first []string
	eventually.True(t, "trial slow to start", func() bool {
		i := slices.IndexFunc(c.lines("trials.txt"), func(l string) bool { return strings.HasPrefix(l, "start slow ") })
		if i >= 0 {
			first = strings.Fields(c.lines("trials.txt")[i]) // start slow RUNALL_PID TRIAL_PGID
		}
		return i >= 0
	})
	pgid, _ := strconv.Atoi(first[3])
	a.signal(syscall.SIGKILL)
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	_ = a.cmd.Wait()
	held := c.keys(c.prefix + "claims/")
	if len(held) != 1 {
		t.Fatalf("claims %q, want the one of trial slow", held)
	}
	body := fmt.Sprintf(`{"owner":{"host":"elsewhere","pid":7,"run_id":"theirs"},"token":"x","lease_ms":%d,"renewed_at":"2099-01-01T00:00:00Z"}`,
		time.Until(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)).Milliseconds())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.srv.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(c.bucket), Key: aws.String(held[0]),
		Body: strings.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	b := c.withEnv("SLOW=0").start("--log-dir", "logs1", "--lease", "5s", testdata("claims/slow.yml"))
	eventually.True(t, "the next runall to run trial slow to its end", func() bool {
		return slices.ContainsFunc(c.lines("trials.txt"), func(l string) bool { return strings.HasPrefix(l, "end slow ") })
	})
	r := b.wait()
	r.wantCode(t, 0)
	for _, want := range []string{"[slow] waiting: another runall's claim under ", ": held by elsewhere pid 7 (run theirs) until ",
		"is longer than the sweep's 5s", "its renewal is dated 2099-01-01T00:00:00Z, in the future"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the runall does not say %q\n%v", want, r)
		}
	}
}
