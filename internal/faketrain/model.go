// Package faketrain is the demo's simulated trainer (runall fake-train): a training loop that
// prints what a small PyTorch script prints, a tqdm bar over its batches and a Keras-style
// line at each epoch's end, its validation accuracy a fixed function of its learning rate,
// its width and the epoch, and that saves a checkpoint each epoch and resumes from it. It
// needs no GPU and no Python, so that runall demo shows metrics, ranking, early stopping and
// importance with nothing installed but runall.
package faketrain

import (
	"hash/fnv"
	"math"
	"strconv"
)

// Epoch is what the simulated model reports at the end of an epoch, as Keras names it.
type Epoch struct {
	Loss, Accuracy, ValLoss, ValAccuracy float64
}

// bestLR is the learning rate the simulated model learns best at.
const bestLR = 1e-2

// Model is the simulated model's validation curve. The learning rate matters most: each
// decade away from bestLR lowers the accuracy it can reach, and a larger rate climbs faster
// at first, so that a large rate leads early and a moderate one overtakes it (the curves
// cross). The width matters a little: a wider model reaches a little higher. A jitter of
// ±0.004, drawn from the hyperparameters and the epoch, makes the curves look measured; the
// same arguments give the same values on every run.
func Model(lr float64, width, epoch int) Epoch {
	d := math.Log10(lr / bestLR) // decades away from the best rate
	ceiling := 0.95 - 0.09*d*d + 0.006*math.Log2(float64(width)/64)
	ceiling = min(max(ceiling, 0.15), 0.99)
	speed := min(max(0.8*math.Sqrt(lr/bestLR), 0.05), 2)
	val := 0.1 + (ceiling-0.1)*(1-math.Exp(-speed*float64(epoch))) + jitter(lr, width, epoch)
	train := min(val+0.03*(1-math.Exp(-0.3*float64(epoch))), 0.999) // a little above: it has seen them
	return Epoch{Loss: -math.Log(train), Accuracy: train, ValLoss: -math.Log(val) * 1.1, ValAccuracy: val}
}

// jitter is a value in [-0.004, 0.004] that depends on the arguments alone.
func jitter(lr float64, width, epoch int) float64 {
	h := fnv.New32a()
	h.Write([]byte(strconv.FormatFloat(lr, 'g', -1, 64) + "/" + strconv.Itoa(width) + "/" + strconv.Itoa(epoch)))
	return (float64(h.Sum32()%1001)/1000 - 0.5) * 0.008
}
