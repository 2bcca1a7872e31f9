package metric

import "testing"

// FuzzMayBeKeras: the cheap test that lets a line skip the Keras regexps never turns away a
// line that one of them matches.
func FuzzMayBeKeras(f *testing.F) {
	for _, s := range []string{
		"Epoch 2/5",
		"  Epoch 10/10  ",
		"293/293 [==============================] - 39s 132ms/step - loss: 0.41 - accuracy: 0.88",
		"293/293 ━━━━━━━━━━━━━━━━━━━━ 39s 132ms/step - accuracy: 0.88 - loss: 0.41",
		" - 39s - loss: 0.41 - val_loss: 0.45",
		"\t12/293 [>....] - ETA: 36s - loss: 0.70",
		"\r 5/20 [==>...] - ETA: 1s\r20/20 [======] - 1s 5ms/step - loss: 0.3",
		"line 1 of 10000: lorem ipsum dolor sit amet",
		"{'eval_loss': 0.41, 'epoch': 1.0}",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if (kerasHeadRE.MatchString(s) || kerasEpochRE.MatchString(s)) && !mayBeKeras(s) {
			t.Errorf("mayBeKeras(%q) = false, but a Keras regexp matches it", s)
		}
	})
}
