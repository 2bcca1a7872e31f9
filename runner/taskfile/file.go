package taskfile

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// File is the whole task file.
type File struct {
	Node   *yaml.Node
	Config *ConfigBlock // nil when the file has no config:
	Tasks  []*Task
	S3     *S3Block // nil when the file has no s3:
}

var topLevelKeys = []string{"config", "tasks", "s3", "$include"}

// UnmarshalYAML decodes the top level of a task file whose includes have been spliced in.
func (f *File) UnmarshalYAML(n *yaml.Node) error {
	d := &Decoder{}
	f.Node = ResolveAlias(n)
	ps, ok := d.Pairs(n, "want a mapping with a tasks: list at the top of the file")
	if !ok {
		return d.Err()
	}
	sawTasks := false
	for _, p := range ps {
		switch {
		case (p.Name == "config" || p.Name == "s3") && isNull(p.Value):
			// An empty block is no block: the defaults.
		case p.Name == "config":
			f.Config = &ConfigBlock{}
			d.Absorb(f.Config.UnmarshalYAML(p.Value))
		case p.Name == "tasks":
			sawTasks = true
			f.Tasks = decodeTaskList(d, p)
		case p.Name == "s3":
			f.S3 = &S3Block{}
			d.Absorb(f.S3.UnmarshalYAML(p.Value))
		case strings.HasPrefix(p.Name, "x-"):
			// Holders of anchors for the rest of the file, as in docker-compose.
		default:
			if s := Suggest(p.Name, topLevelKeys); s != "" {
				d.Errorf(p.Key, "unknown key %q (did you mean %q?)", p.Name, s)
			} else {
				d.Errorf(p.Key, "unknown top-level key %q: want config, tasks, s3, $include, or a name starting with x- to hold anchors", p.Name)
			}
		}
	}
	if !sawTasks {
		d.Errorf(f.Node, "no tasks: key: a task file needs a tasks: list")
	}
	return d.Err()
}
