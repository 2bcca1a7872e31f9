package plan

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// rawDownload and rawUpload are entries of download: and upload: lists. Environment variables
// in from and to stay as written; they are expanded when the transfer runs.
type (
	rawDownload struct{ rawTransfer }
	rawUpload   struct{ rawTransfer }
	rawTransfer struct {
		node     *yaml.Node
		values   map[string]*yaml.Node // the value nodes of from and to, for their problems
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
}](d *nodeDecoder, p nodePair) []PT {
	var out []PT
	for _, item := range transferItems(d, p) {
		t := PT(new(T))
		d.absorb(t.UnmarshalYAML(item))
		out = append(out, t)
	}
	return out
}

func transferItems(d *nodeDecoder, p nodePair) []*yaml.Node {
	if isNull(p.value) {
		return nil
	}
	if p.value.Kind != yaml.SequenceNode {
		d.errorf(p.value, "%s: want a list of {from, to} entries, got %s", p.name, describeNode(p.value))
		return nil
	}
	return p.value.Content
}

// UnmarshalYAML decodes one download: entry: from an s3:// URL to a local path.
func (t *rawDownload) UnmarshalYAML(n *yaml.Node) error { return t.decode(n, false) }

// UnmarshalYAML decodes one upload: entry: from a local path to an s3:// URL.
func (t *rawUpload) UnmarshalYAML(n *yaml.Node) error { return t.decode(n, true) }

// decode reads one entry of a download: list, or with upload of an upload: list: the keys
// they share, the keys of their own, and checks that one end is S3 and the other local.
func (t *rawTransfer) decode(n *yaml.Node, upload bool) error {
	d := &nodeDecoder{}
	what, where, keys, local, remote := "want a download (a mapping with from: s3://bucket/key and to: path)",
		"a download", downloadKeys, "to", "from"
	if upload {
		what, where, keys, local, remote = "want an upload (a mapping with from: path and to: s3://bucket/prefix)",
			"an upload", uploadKeys, "from", "to"
	}
	ps, ok := t.decodeCommon(d, n, what)
	for _, p := range ps {
		switch {
		case p.name == "from" || p.name == "to" || p.name == "exclude":
		case p.name == "extract" && !upload:
			if b := d.boolean(p); b != nil {
				t.Transfer.Extract = *b
			}
		case p.name == "every" && upload:
			t.Transfer.Every = d.duration(p, "")
		case p.name == "delete" && upload:
			if b := d.boolean(p); b != nil {
				t.Transfer.Delete = *b
			}
		case p.name == "whole-bucket" && upload:
			if b := d.boolean(p); b != nil {
				t.Transfer.WholeBucket = *b
			}
		default:
			d.unknownKey(p, where, keys)
		}
	}
	if ok {
		ends := map[string]string{"from": t.Transfer.From, "to": t.Transfer.To}
		t.checkS3URL(d, remote, ends[remote])
		t.checkPresent(d, local, ends[local])
	}
	return d.err()
}

// decodeCommon reads from, to and exclude, and returns all the pairs for the caller's own keys.
func (t *rawTransfer) decodeCommon(d *nodeDecoder, n *yaml.Node, what string) ([]nodePair, bool) {
	t.node = resolveAlias(n)
	t.values = map[string]*yaml.Node{}
	ps, ok := d.pairs(n, what)
	for _, p := range ps {
		t.values[p.name] = p.value
		switch p.name {
		case "from":
			t.Transfer.From = d.str(p)
		case "to":
			t.Transfer.To = d.str(p)
		case "exclude":
			t.Transfer.Exclude = d.globs(p)
		}
	}
	return ps, ok
}

// at is the node to blame for a problem with key: its value, or the entry when it is missing.
func (t *rawTransfer) at(key string) *yaml.Node {
	if n := t.values[key]; n != nil {
		return n
	}
	return t.node
}

func (t *rawTransfer) checkPresent(d *nodeDecoder, key, v string) {
	if strings.TrimSpace(v) == "" {
		d.errorf(t.at(key), "%s: missing: want a local path", key)
	}
}

func (t *rawTransfer) checkS3URL(d *nodeDecoder, key, v string) {
	rest, ok := strings.CutPrefix(v, "s3://")
	if bucket, _, _ := strings.Cut(rest, "/"); !ok || bucket == "" {
		if v == "" {
			d.errorf(t.at(key), "%s: missing: want an s3://bucket/prefix URL", key)
		} else {
			d.errorf(t.at(key), "%s: want an s3://bucket/prefix URL, got %q", key, v)
		}
	}
}
