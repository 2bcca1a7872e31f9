package s3sync

import (
	"context"
	"fmt"
)

// Deleting what the source lacks, and forgetting what neither side has.

// deleteOrphans removes destination files that the source lacks.
func (j *job) deleteOrphans(ctx context.Context, bucket string, orphans []*pair, up bool) {
	if len(orphans) == 0 {
		return
	}
	for _, p := range orphans {
		if j.opts.DryRun {
			j.m.n.deleted.Add(1)
			j.m.action(j.deleteAction(bucket, p, up))
		}
	}
	if j.opts.DryRun {
		return
	}
	if up {
		keys := make([]string, len(orphans))
		for i, p := range orphans {
			keys[i] = p.key
		}
		if err := j.c.store.remove(ctx, bucket, keys); err != nil {
			j.fail(j.c.wrap(err, "delete under s3://%s", bucket))
			return
		}
		for _, p := range orphans {
			j.m.n.deleted.Add(1)
			j.rec.drop(p.rel)
			j.m.action(j.deleteAction(bucket, p, up))
		}
		return
	}
	for _, p := range orphans {
		if err := j.root.Remove(p.rel); err != nil {
			j.fail(fmt.Errorf("delete %s: %w", p.path, err))
			continue
		}
		j.m.n.deleted.Add(1)
		j.rec.drop(p.rel)
		j.m.action(j.deleteAction(bucket, p, up))
	}
}

func (j *job) deleteAction(bucket string, p *pair, up bool) Action {
	a := Action{Op: OpDelete, Path: p.path, URL: location{bucket, p.key}.String()}
	if up {
		a.Path, a.Size = "", p.remote.size
	} else {
		a.URL, a.Size = "", p.local.Size
	}
	return a
}

// prune drops record entries for files that are on neither side any more.
func (j *job) prune(pairs, orphans []*pair) {
	keep := make(map[string]bool, len(pairs)+len(orphans))
	for _, p := range pairs {
		keep[p.rel] = true
	}
	for _, p := range orphans {
		keep[p.rel] = true
	}
	j.rec.mu.Lock()
	defer j.rec.mu.Unlock()
	for rel := range j.rec.rec.Files {
		if !keep[rel] {
			delete(j.rec.rec.Files, rel)
		}
	}
}
