package faketrain

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/runall/runall/runner/metric"
)

// TestModel: the learning rate decides more than the width (the spread of the last epoch's
// accuracy over the rates is several times that over the widths), a large rate leads at
// the first epoch and a moderate one at the last (their curves cross), and the same
// arguments give the same values.
func TestModel(t *testing.T) {
	rates, widths := []float64{1e-4, 1e-3, 1e-2, 1e-1}, []int{64, 256, 1024}
	spread := func(vs []float64) float64 { return slices.Max(vs) - slices.Min(vs) }
	var byRate, byWidth []float64
	for _, lr := range rates {
		byRate = append(byRate, Model(lr, 256, 9).ValAccuracy)
	}
	for _, w := range widths {
		byWidth = append(byWidth, Model(1e-3, w, 9).ValAccuracy)
	}
	if spread(byRate) < 3*spread(byWidth) || spread(byWidth) <= 0 {
		t.Errorf("the last epoch's val_accuracy over the rates %v, over the widths %v: want the rate to matter most, the width a little", byRate, byWidth)
	}
	large, moderate := func(e int) float64 { return Model(1e-1, 256, e).ValAccuracy }, func(e int) float64 { return Model(1e-2, 256, e).ValAccuracy }
	if !(large(1) > moderate(1) && large(9) < moderate(9)) {
		t.Errorf("lr 0.1 against 0.01 at epoch 1: %.3f, %.3f; at epoch 9: %.3f, %.3f: want the curves to cross", large(1), moderate(1), large(9), moderate(9))
	}
	if Model(1e-3, 64, 5) != Model(1e-3, 64, 5) {
		t.Error("the model gave two values for the same arguments")
	}
}

// TestRunIsReadByRunall: what Run prints is what runall's recogniser reads as the model's
// val_accuracy at each epoch; it saves each epoch, and with Resume goes on after the saved
// one, its first line the next epoch.
func TestRunIsReadByRunall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	var out, bar bytes.Buffer
	o := Options{LR: 0.01, Width: 64, Epochs: 3, Batches: 4, Checkpoint: dir, Stdout: &out, Stderr: &bar}
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	got := readVal(t, out.String())
	want := []float64{rounded(Model(0.01, 64, 1)), rounded(Model(0.01, 64, 2)), rounded(Model(0.01, 64, 3))}
	if !slices.Equal(got, want) {
		t.Errorf("val_accuracy read from the output %v, want the model's %v:\n%s", got, want, out.String())
	}
	if !strings.Contains(bar.String(), "100%|██████████| 12/12 [") {
		t.Errorf("no tqdm bar over the 12 batches on stderr: %q", bar.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, ckptFile)); err != nil || string(b) != "epoch 3\n" {
		t.Errorf("checkpoint: %q, %v; want epoch 3", b, err)
	}
	out.Reset()
	o.Epochs, o.Resume = 5, true
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "restored epoch 3") || !strings.Contains(out.String(), "\nEpoch 4/5\n") || strings.Contains(out.String(), "Epoch 3/5") {
		t.Errorf("resumed from epoch 3, it printed:\n%s", out.String())
	}
}

// readVal is the val_accuracy series runall reads from the output.
func readVal(t *testing.T, out string) []float64 {
	t.Helper()
	s := new(metric.Set)
	r := metric.NewReader(s, metric.Formats{})
	for line := range strings.Lines(out) {
		r.Line(strings.TrimSuffix(line, "\n"))
	}
	_, series, warnings := s.Result()
	if len(warnings) > 0 {
		t.Errorf("warnings reading the output: %v", warnings)
	}
	return series["val_accuracy"]
}

// rounded is the value as the Keras line prints it, to 4 places.
func rounded(e Epoch) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(e.ValAccuracy, 'f', 4, 64), 64)
	return v
}
