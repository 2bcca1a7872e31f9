package gpusim

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestFormatMeter holds formatMeter to tqdm's own: each want was printed by tqdm 4.64.1's
// tqdm.format_meter(n, total, elapsed, rate=rate) (Debian's python3-tqdm).
func TestFormatMeter(t *testing.T) {
	tests := []struct {
		n, total      int
		elapsed, rate float64
		want          string
	}{
		{0, 20, 0, 0, "  0%|          | 0/20 [00:00<?, ?it/s]"},
		{3, 20, 1.5, 2.0, " 15%|█▌        | 3/20 [00:01<00:08,  2.00it/s]"},
		{7, 20, 3.2, 2.1875, " 35%|███▌      | 7/20 [00:03<00:05,  2.19it/s]"},
		{20, 20, 9.6, 2.08, "100%|██████████| 20/20 [00:09<00:00,  2.08it/s]"},
		{1, 3, 75, 0.0125, " 33%|███▎      | 1/3 [01:15<02:40, 80.00s/it]"},
		{5, 40, 3725, 0.9, " 12%|█▎        | 5/40 [1:02:05<00:38,  1.11s/it]"},
		{13, 16, 2, 6.5, " 81%|████████▏ | 13/16 [00:02<00:00,  6.50it/s]"},
	}
	for _, tt := range tests {
		if got := formatMeter(tt.n, tt.total, tt.elapsed, tt.rate); got != tt.want {
			t.Errorf("formatMeter(%d, %d, %v, %v) =\n%q, want\n%q", tt.n, tt.total, tt.elapsed, tt.rate, got, tt.want)
		}
	}
}

// TestProgressStream: updates "\r"-separated as tqdm writes them to a pipe, at most one per
// mininterval, padded over a longer line before, the last state again at the close, then a
// newline (a real tqdm over 4 steps of 0.15 s wrote
// "\r  0%|          | 0/4 [00:00<?, ?it/s]\r 25%|██▌       | 1/4 [00:00<00:00,  6.54it/s]...
// \r100%|██████████| 4/4 [00:00<00:00,  6.09it/s]\r100%|██████████| 4/4 [00:00<00:00,  6.20it/s]\n").
func TestProgressStream(t *testing.T) {
	clock := time.Unix(0, 0)
	now := func() time.Time { return clock }
	var out bytes.Buffer
	p := NewProgress(&out, 4, now)
	for n := 1; n <= 4; n++ {
		clock = clock.Add(250 * time.Millisecond)
		p.Update(n)
		p.Update(n) // within mininterval: not printed
	}
	p.Close()
	got := out.String()
	if !strings.HasPrefix(got, "\r  0%|          | 0/4 [00:00<?, ?it/s]\r") || !strings.HasSuffix(got, "]\n") {
		t.Fatalf("stream %q: want tqdm's first update, \\r-separated, and a newline at the close", got)
	}
	updates := strings.Split(strings.TrimSuffix(strings.TrimPrefix(got, "\r"), "\n"), "\r")
	want := regexp.MustCompile(`^ *\d+%\|[ ▏▎▍▌▋▊▉█]{10}\| \d/4 \[\d\d:\d\d<(\d\d:\d\d|\?), +(\d+\.\d\dit/s|\?it/s)\]$`)
	if len(updates) != 6 { // 0/4, four steps, the close
		t.Errorf("%d updates %q, want 6", len(updates), updates)
	}
	for _, u := range updates {
		if !want.MatchString(u) {
			t.Errorf("update %q is not in tqdm's format", u)
		}
	}
	if last := updates[len(updates)-1]; !strings.HasPrefix(last, "100%|██████████| 4/4 [00:01<00:00,  4.00it/s]") {
		t.Errorf("last update %q, want 4/4 at 4.00it/s", last)
	}
}
