package s3sync

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type tarEntry struct {
	name, body, link string
	typ              byte // tar.TypeReg when 0
}

func tarBytes(t testing.TB, entries []tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.link}
		if typ != tar.TypeReg {
			hdr.Size = 0
		}
		if typ == tar.TypeDir {
			hdr.Mode = 0o755
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tarGz(t testing.TB, entries []tarEntry) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(tarBytes(t, entries))
	zw.Close()
	return buf.Bytes()
}

func zipBytes(t testing.TB, entries []tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		body := e.body
		switch e.typ {
		case tar.TypeSymlink:
			hdr.SetMode(fs.ModeSymlink | 0o777)
			body = e.link
		case tar.TypeDir:
			hdr.SetMode(fs.ModeDir | 0o755)
		default:
			hdr.SetMode(0o644)
		}
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeArchive(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExtract(t *testing.T) {
	entries := []tarEntry{
		{name: "top/", typ: tar.TypeDir},
		{name: "top/a.txt", body: "a"},
		{name: "./top/sub/b.txt", body: "b"},
		{name: "top/link", typ: tar.TypeSymlink, link: "sub/b.txt"},
		{name: "top/uplink", typ: tar.TypeSymlink, link: "../top/a.txt"},
	}
	want := map[string]string{
		"top/a.txt": "a", "top/sub/b.txt": "b", "top/link": "-> sub/b.txt", "top/uplink": "-> ../top/a.txt",
	}
	for name, data := range map[string][]byte{
		"x.zip":    zipBytes(t, entries),
		"x.tar":    tarBytes(t, entries),
		"x.tar.gz": tarGz(t, entries),
		"x.tgz":    tarGz(t, entries),
		"x.bin":    tarGz(t, entries), // recognised by content
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"top/a.txt": "old", "other": "kept"})
			if err := extract(writeArchive(t, name, data), dir); err != nil {
				t.Fatal(err)
			}
			w := map[string]string{"other": "kept"}
			for k, v := range want {
				w[k] = v
			}
			if tree := readTree(t, dir); !reflect.DeepEqual(tree, w) {
				t.Errorf("tree = %v, want %v", tree, w)
			}
		})
	}
}

func TestExtractHardLink(t *testing.T) {
	dir := t.TempDir()
	data := tarBytes(t, []tarEntry{{name: "f", body: "data"}, {name: "g", typ: tar.TypeLink, link: "f"}})
	if err := extract(writeArchive(t, "h.tar", data), dir); err != nil {
		t.Fatal(err)
	}
	if tree := readTree(t, dir); !reflect.DeepEqual(tree, map[string]string{"f": "data", "g": "data"}) {
		t.Errorf("tree = %v", tree)
	}
}

func TestExtractRefusesEscapes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []tarEntry
		naming  string // the entry the error must name
	}{
		{"zip slip", []tarEntry{{name: "ok.txt", body: "ok"}, {name: "../evil", body: "x"}}, "../evil"},
		{"nested zip slip", []tarEntry{{name: "a/../../evil", body: "x"}}, "a/../../evil"},
		{"absolute", []tarEntry{{name: "/tmp/evil", body: "x"}}, "/tmp/evil"},
		{"symlink out", []tarEntry{{name: "ok.txt", body: "ok"}, {name: "link", typ: tar.TypeSymlink, link: "../../etc"}}, "link"},
		{"absolute symlink", []tarEntry{{name: "link", typ: tar.TypeSymlink, link: "/etc/passwd"}}, "link"},
		{"write through symlink", []tarEntry{
			{name: "sub/", typ: tar.TypeDir},
			{name: "l", typ: tar.TypeSymlink, link: "sub"},
			{name: "l/f", body: "x"},
		}, "l/f"},
		// issue 42: one rule with a checkpoint manifest's links (pathname.Links), as the
		// kernel resolves them once all are made.
		{"the manifest's chain", []tarEntry{
			{name: "a", typ: tar.TypeSymlink, link: "."},
			{name: "a/a/a/step", typ: tar.TypeSymlink, link: "../../../evil"},
		}, "a/a/a/step"},
		{"a target through a link", []tarEntry{
			{name: "a", typ: tar.TypeSymlink, link: "."},
			{name: "up", typ: tar.TypeSymlink, link: "a/.."},
		}, "up"},
		{"a later link on an earlier one's way", []tarEntry{
			{name: "up", typ: tar.TypeSymlink, link: "a/.."},
			{name: "a", typ: tar.TypeSymlink, link: "."},
		}, "up"},
	} {
		for _, kind := range []string{"tar.gz", "zip"} {
			t.Run(tc.name+" "+kind, func(t *testing.T) {
				data := tarGz(t, tc.entries)
				if kind == "zip" {
					data = zipBytes(t, tc.entries)
				}
				parent := t.TempDir()
				dir := filepath.Join(parent, "a", "b")
				err := extract(writeArchive(t, "x."+kind, data), dir)
				if err == nil || !strings.Contains(err.Error(), `"`+tc.naming+`"`) {
					t.Fatalf("err = %v, want a refusal naming %q", err, tc.naming)
				}
				if tree := readTree(t, parent); len(tree) != 0 {
					t.Errorf("files written: %v", tree)
				}
			})
		}
	}
	t.Run("hard link out", func(t *testing.T) {
		data := tarBytes(t, []tarEntry{{name: "h", typ: tar.TypeLink, link: "../../etc/passwd"}})
		err := extract(writeArchive(t, "x.tar", data), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), `"h"`) {
			t.Fatalf("err = %v, want a refusal naming h", err)
		}
	})
}

func TestExtractDoesNotWriteThroughDestinationSymlink(t *testing.T) {
	outside := t.TempDir()
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	data := tarBytes(t, []tarEntry{{name: "d/f", body: "x"}})
	if err := extract(writeArchive(t, "x.tar", data), dir); err == nil {
		t.Fatal("no error extracting through a symlink that leaves the destination")
	}
	if tree := readTree(t, outside); len(tree) != 0 {
		t.Errorf("files written outside: %v", tree)
	}
}

func TestExtractUnknownFormat(t *testing.T) {
	err := extract(writeArchive(t, "x.rar", []byte("Rar!")), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "not a .zip") {
		t.Errorf("err = %v", err)
	}
}

// extract unpacks archive (.zip, .tar, .tar.gz or .tgz; recognised by name, else by
// content) into dir, as a download with extract: does.
func extract(archive, dir string) error {
	_, err := extractFile(context.Background(), archive, filepath.Base(archive), dir, nil)
	return err
}
