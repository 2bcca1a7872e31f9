package checkprint

import (
	"bytes"
	"strings"
	"testing"

	"github.com/runall/runall/runner/plan"
)

// TestCheckSaysCheckpointDirectory: check's description of a trial names its checkpoint:
// directory, and its block's says where the copies are kept (the claims prefix, the S3
// upload destination, or the log directory) and what runall does to the directory's other
// files.
func TestCheckSaysCheckpointDirectory(t *testing.T) {
	const trials = `tasks:
  - name: sweep
    parallel-tasks:
      - name: lr=<lr>
        cmd: python train.py --lr <lr>
        matrix: {lr: [0.1, 0.01]}
        checkpoint: {dir: ckpt/<lr>, every: 2s}
`
	for _, tc := range []struct{ name, head, where string }{
		{"log dir", "", "copies kept in the log directory, <log-dir>/state/checkpoints/<trial>/"},
		{"s3", "s3:\n  upload: [{from: out, to: \"s3://bucket/runs/\"}]\n", "copies kept under s3://bucket/runs/.runall-checkpoints/<trial>/"},
		{"claims", "config:\n  claims: s3://bucket/sweep/\n", "copies kept under the claims prefix s3://bucket/sweep/checkpoints/<trial>/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustLoadYAML(t, tc.head+trials, plan.LoadOptions{})
			var b bytes.Buffer
			Write(&b, p)
			out := b.String()
			for _, want := range []string{"checkpoint ckpt/0.1 every 2s\n", "checkpoint ckpt/0.01 every 2s\n",
				"checkpoints (2 trials): " + tc.where,
				"the newest copy replaces the trial's directory, and the files in it that the copy does not hold are deleted",
				"with no copy kept, the directory is left as it is", "--fresh drops the copies and empties it"} {
				if !strings.Contains(out, want) {
					t.Errorf("check does not say %q:\n%s", want, out)
				}
			}
		})
	}
}
