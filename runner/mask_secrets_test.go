package runner

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSecretsLeakThroughThreeGaps (issue: secrets leak through three gaps): (a) a task named
// by a command that holds a secret, and a matrix value that is one; (b) a secret a setup
// task exports; (c) a secret across the 64 KiB split of a long line. Nothing runall writes,
// no file name in the log directory, shows any of them.
func TestSecretsLeakThroughThreeGaps(t *testing.T) {
	const (
		hf     = "hf_secret_value_1234"
		wandb  = "wandb-exported-42-secret" // made by the shell: only the export shows it
		middle = "middle-secret-token-xyz"
	)
	pad := 64<<10 - len(middle)/2
	res, out, err := runFile(t, `
tasks:
  - cmd: export WANDB_API_KEY="wandb-exported-$((6*7))-secret"
  - cmd: echo "key=$WANDB_API_KEY"
  - cmd: echo train --token `+hf+`
  - name: sweep
    parallel-tasks:
      - name: trial <replace>
        for-each: [`+hf+`]
        cmd: echo one
  - name: long
    cmd: head -c `+strconv.Itoa(pad)+` /dev/zero | tr '\0' x; echo "$MIDDLE_TOKEN"
`, Options{Environ: []string{"HF_TOKEN=" + hf, "MIDDLE_TOKEN=" + middle}})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	secrets := []string{hf, wandb, middle}
	leaks := func(what, s string) {
		t.Helper()
		joined := strings.ReplaceAll(s, "\n", "")
		for _, secret := range secrets {
			if strings.Contains(joined, secret) {
				t.Errorf("%s shows %q", what, secret)
			}
		}
	}
	leaks("the output", out)
	b, _ := json.Marshal(res)
	leaks("the results", string(b))
	err = filepath.WalkDir(filepath.Dir(res.LogDir), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		leaks("a file name", path)
		if d.Type().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			leaks(path, string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "key=****") {
		t.Errorf("the exported secret is not masked in the output:\n%s", out)
	}
}
