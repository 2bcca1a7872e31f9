package framework

import "testing"

func TestTorchAtLeast(t *testing.T) {
	for _, c := range []struct {
		version string
		want    bool
	}{
		{"2.9.0", true}, {"2.10.1+cu126", true}, {"3.0", true}, {"2.8.1", false},
		{"1.13.1", false}, {"", false}, {"2", false}, {"x.y", false},
	} {
		if got := torchAtLeast(c.version, 2, 9); got != c.want {
			t.Errorf("torchAtLeast(%q, 2, 9) = %v, want %v", c.version, got, c.want)
		}
	}
}
