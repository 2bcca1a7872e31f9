package plan

import (
	"slices"
	"strings"
)

// The placeholders of for-each, matrix and sample (<name>, as the task file is expanded)
// and of search (as its sampler hands out each trial) are filled in the same texts of a
// task: name, cmd, cwd, url, log-path, metrics, checkpoint, tags, env values and upload from/to. The
// two task types list them below, side by side; fill replaces them in both.

// fill replaces r's placeholders in each text.
func fill(r *strings.Replacer, texts []*string) {
	for _, s := range texts {
		*s = r.Replace(*s)
	}
}

// placeholderTexts points to every text of t a placeholder is filled in. Its tags, env and
// uploads are copied first, so that the pointers reach t's own and not those of the task it
// was copied from.
func (t *rawTask) placeholderTexts() []*string {
	texts := []*string{&t.name, &t.cmd, &t.cwd, &t.url, &t.logPath, &t.metrics, &t.checkpoint.dir}
	t.tags, t.env, t.upload = slices.Clone(t.tags), slices.Clone(t.env), slices.Clone(t.upload)
	for i := range t.tags {
		texts = append(texts, &t.tags[i])
	}
	for i := range t.env {
		texts = append(texts, &t.env[i].Value)
	}
	for i, u := range t.upload {
		cu := *u
		t.upload[i] = &cu
		texts = append(texts, &cu.Transfer.From, &cu.Transfer.To)
	}
	return texts
}

// placeholderTexts is the same texts of a plan task (a search template's).
func (t *Task) placeholderTexts() []*string {
	texts := []*string{&t.Name, &t.Cmd, &t.Cwd, &t.URL, &t.LogPath, &t.Metrics}
	t.Tags, t.Env, t.Upload = slices.Clone(t.Tags), slices.Clone(t.Env), slices.Clone(t.Upload)
	if t.Checkpoint != nil {
		c := *t.Checkpoint
		t.Checkpoint = &c
		texts = append(texts, &c.Dir)
	}
	for i := range t.Tags {
		texts = append(texts, &t.Tags[i])
	}
	for i := range t.Env {
		texts = append(texts, &t.Env[i].Value)
	}
	for i := range t.Upload {
		texts = append(texts, &t.Upload[i].From, &t.Upload[i].To)
	}
	return texts
}
