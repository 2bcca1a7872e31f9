package s3sync

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestZZLarge(t *testing.T) {
	if os.Getenv("PROBE") == "" {
		t.Skip()
	}
	c, err := NewClient(context.Background(), ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	st, err := c.Sync(context.Background(), "/tmp/mb/large", "s3://bench/large-"+time.Now().Format("150405")+"/", Options{StateDir: t.TempDir()})
	t.Log(st, err, time.Since(start))
}
