package taskfile

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// DownloadEntry and UploadEntry are entries of download: and upload: lists. Environment variables
// in from and to stay as written; they are expanded when the transfer runs.
type (
	DownloadEntry struct{ TransferEntry }
	UploadEntry   struct{ TransferEntry }
	TransferEntry struct {
		Node     *yaml.Node
		Values   map[string]*yaml.Node // the value nodes of from and to, for their problems
		Transfer Transfer
	}
)

var (
	downloadKeys = []string{"from", "to", "extract", "exclude"}
	uploadKeys   = []string{"from", "to", "every", "exclude", "delete", "whole-bucket"}
)

// decodeTransfers decodes each item of a downloads: or uploads: list into a new T.
func decodeTransfers[T any, PT interface {
	*T
	UnmarshalYAML(*yaml.Node) error
}](d *Decoder, p Pair) []PT {
	var out []PT
	for _, item := range transferItems(d, p) {
		t := PT(new(T))
		d.Absorb(t.UnmarshalYAML(item))
		out = append(out, t)
	}
	return out
}

func transferItems(d *Decoder, p Pair) []*yaml.Node {
	if isNull(p.Value) {
		return nil
	}
	if p.Value.Kind != yaml.SequenceNode {
		d.Errorf(p.Value, "%s: want a list of {from, to} entries, got %s", p.Name, describeNode(p.Value))
		return nil
	}
	return p.Value.Content
}

// UnmarshalYAML decodes one download: entry: from an s3:// URL to a local path.
func (t *DownloadEntry) UnmarshalYAML(n *yaml.Node) error { return t.decode(n, false) }

// UnmarshalYAML decodes one upload: entry: from a local path to an s3:// URL.
func (t *UploadEntry) UnmarshalYAML(n *yaml.Node) error { return t.decode(n, true) }

// decode reads one entry of a download: list, or with upload of an upload: list: the keys
// they share, the keys of their own, and checks that one end is S3 and the other local.
func (t *TransferEntry) decode(n *yaml.Node, upload bool) error {
	d := &Decoder{}
	what, where, keys, local, remote := "want a download (a mapping with from: s3://bucket/key and to: path)",
		"a download", downloadKeys, "to", "from"
	if upload {
		what, where, keys, local, remote = "want an upload (a mapping with from: path and to: s3://bucket/prefix)",
			"an upload", uploadKeys, "from", "to"
	}
	ps, ok := t.decodeCommon(d, n, what)
	for _, p := range ps {
		switch {
		case p.Name == "from" || p.Name == "to" || p.Name == "exclude":
		case p.Name == "extract" && !upload:
			if b := d.Boolean(p); b != nil {
				t.Transfer.Extract = *b
			}
		case p.Name == "every" && upload:
			t.Transfer.Every = d.Duration(p, "")
		case p.Name == "delete" && upload:
			if b := d.Boolean(p); b != nil {
				t.Transfer.Delete = *b
			}
		case p.Name == "whole-bucket" && upload:
			if b := d.Boolean(p); b != nil {
				t.Transfer.WholeBucket = *b
			}
		default:
			d.UnknownKey(p, where, keys)
		}
	}
	if ok {
		ends := map[string]string{"from": t.Transfer.From, "to": t.Transfer.To}
		t.checkS3URL(d, remote, ends[remote])
		t.checkPresent(d, local, ends[local])
	}
	return d.Err()
}

// decodeCommon reads from, to and exclude, and returns all the pairs for the caller's own keys.
func (t *TransferEntry) decodeCommon(d *Decoder, n *yaml.Node, what string) ([]Pair, bool) {
	t.Node = ResolveAlias(n)
	t.Values = map[string]*yaml.Node{}
	ps, ok := d.Pairs(n, what)
	for _, p := range ps {
		t.Values[p.Name] = p.Value
		switch p.Name {
		case "from":
			t.Transfer.From = d.Str(p)
		case "to":
			t.Transfer.To = d.Str(p)
		case "exclude":
			t.Transfer.Exclude = d.Globs(p)
		}
	}
	return ps, ok
}

// at is the node to blame for a problem with key: its value, or the entry when it is missing.
func (t *TransferEntry) At(key string) *yaml.Node {
	if n := t.Values[key]; n != nil {
		return n
	}
	return t.Node
}

func (t *TransferEntry) checkPresent(d *Decoder, key, v string) {
	if strings.TrimSpace(v) == "" {
		d.Errorf(t.At(key), "%s: missing: want a local path", key)
	}
}

func (t *TransferEntry) checkS3URL(d *Decoder, key, v string) {
	rest, ok := strings.CutPrefix(v, "s3://")
	if bucket, _, _ := strings.Cut(rest, "/"); !ok || bucket == "" {
		if v == "" {
			d.Errorf(t.At(key), "%s: missing: want an s3://bucket/prefix URL", key)
		} else {
			d.Errorf(t.At(key), "%s: want an s3://bucket/prefix URL, got %q", key, v)
		}
	}
}
