package s3sync

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestSyncTakesDotDotAfterLinks (issue 42, point 1, second bullet): a local side with a ".."
// after a link is where the kernel takes it: uploading base/link/../src (link to
// base/real/deep) sends base/real/src, not the decoy base/src; downloading into
// base/link/../out fills base/real/out and makes no base/out.
func TestSyncTakesDotDotAfterLinks(t *testing.T) {
	c, st := newMemClient(t)
	opts := Options{StateDir: t.TempDir()}
	base := t.TempDir()
	writeTree(t, filepath.Join(base, "real", "src"), map[string]string{"model.pt": "the trial's"})
	writeTree(t, filepath.Join(base, "src"), map[string]string{"decoy.txt": "not this"})
	if err := os.MkdirAll(filepath.Join(base, "real", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "real", "deep"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	mustSync(t, c, base+"/link/../src/", "s3://b/p/", opts)
	if objs := memObjects(st, "b"); !reflect.DeepEqual(objs, map[string]string{"p/model.pt": "the trial's"}) {
		t.Errorf("uploaded %v, want base/real/src's model.pt", objs)
	}
	mustSync(t, c, "s3://b/p/", base+"/link/../out", opts)
	if tree := readTree(t, filepath.Join(base, "real", "out")); !reflect.DeepEqual(tree, map[string]string{"model.pt": "the trial's"}) {
		t.Errorf("base/real/out holds %v", tree)
	}
	if _, err := os.Stat(filepath.Join(base, "out")); err == nil {
		t.Error("base/out, the text's, was made")
	}
}

// TestDeleteGuardFollowsLinks (issue 42, point 1): --delete into a link to / is the
// filesystem's root, as the kernel takes it. Only the guard is called: nothing is synced.
func TestDeleteGuardFollowsLinks(t *testing.T) {
	base := t.TempDir()
	if err := os.Symlink("/", filepath.Join(base, "root")); err != nil {
		t.Fatal(err)
	}
	for _, dst := range []string{filepath.Join(base, "root"), base + "/root/."} {
		if err := checkDelete("s3://b/p/", dst, Options{Delete: true}); !errors.Is(err, ErrDeleteGuard) {
			t.Errorf("checkDelete into %s: %v, want ErrDeleteGuard", dst, err)
		}
	}
	if err := checkDelete("s3://b/p/", base, Options{Delete: true}); err != nil {
		t.Errorf("checkDelete into a directory of its own: %v", err)
	}
}
