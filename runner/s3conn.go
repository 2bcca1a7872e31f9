package runner

import (
	"context"
	"errors"
	"os"
	"sync"

	"github.com/runall/runall/internal/envlist"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/s3sync"
)

// s3Conn is the run's one S3 client, made on first use with the task file's settings (its
// endpoint and region, ${VAR}s from the run's environment) and handed to all that reach S3:
// the transfers, the claims queue and the checkpoints. A failure to make it is not kept:
// the next use tries again.
type s3Conn struct {
	spec plan.S3Spec
	base []string // the run's environment (baseEnv)

	mu     sync.Mutex
	client *s3sync.Client
	made   int // how many clients it made: one a run (tests)
}

func newS3Conn(p *plan.Plan, base []string) *s3Conn {
	c := &s3Conn{base: base}
	if p.S3 != nil {
		c.spec = *p.S3
	}
	return c
}

// get is the run's client, made now if it is not yet.
func (c *s3Conn) get(ctx context.Context) (*s3sync.Client, error) {
	if c == nil {
		return nil, errors.New("no S3 client was given to this part of the run")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client != nil {
		return c.client, nil
	}
	lookup := getenv(c.base)
	client, err := s3sync.NewClient(ctx, s3sync.ClientOptions{
		Endpoint: os.Expand(c.spec.Endpoint, lookup), Region: os.Expand(c.spec.Region, lookup), Getenv: lookup,
	})
	if err != nil {
		return nil, err
	}
	c.client = client
	c.made++
	return client, nil
}

// getenv looks names up in env, for os.Expand.
func getenv(env []string) func(string) string {
	return func(name string) string { v, _ := envlist.Lookup(env, name); return v }
}
