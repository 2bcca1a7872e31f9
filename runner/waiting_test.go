package runner

import "testing"

// A large trial first in line is overtaken by smaller ones that fit, but at most
// max-parallel-commands times; then it holds the line until it fits.
func TestRunBoundedWaiting(t *testing.T) {
	const limit = 3
	res, out, err := runFile(t, `
config: {max-parallel-commands: 3, order: file}
tasks:
  - name: sweep
    parallel-tasks:
      - name: first
        gpu-memory: 3GiB
        cmd: `+fakeAlloc("3GiB", "1s")+`
      - name: big
        gpu-memory: 8GiB
        cmd: `+fakeAlloc("8GiB", "100ms")+`
      - name: small<replace>
        gpu-memory: 3GiB
        cmd: `+fakeAlloc("3GiB", "300ms")+`
        for-each: [1, 2, 3, 4, 5, 6, 7, 8]
`, Options{Resources: ResourceOptions{Probe: fakeGPUs(t, 10<<30)}})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	big := byName(res)["big"]
	overtook := 0
	for _, r := range res.Tasks {
		if r.Name != "first" && r.Name != "big" && r.StartedAt.Before(big.StartedAt) {
			overtook++
		}
	}
	if overtook == 0 || overtook > limit {
		t.Errorf("big was overtaken %d times, want 1 to %d (a bounded number)\n%s", overtook, limit, out)
	}
	if big.PassedOver != overtook {
		t.Errorf("big's result says it was passed over %d times; %d trials behind it started first", big.PassedOver, overtook)
	}
}
