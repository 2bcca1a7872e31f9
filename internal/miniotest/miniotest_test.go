package miniotest

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func get(t *testing.T, srv *Server, bucket, key string) string {
	t.Helper()
	out, err := srv.Client().GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	b, _ := io.ReadAll(out.Body)
	return string(b)
}

func TestShared(t *testing.T) {
	srv := Shared(t)
	if Shared(t) != srv {
		t.Fatal("Shared started a second server")
	}
	bucket := srv.NewBucket(t)
	if len(bucket) > 63 || strings.ToLower(bucket) != bucket {
		t.Errorf("bucket name %q is not valid", bucket)
	}
	srv.Put(t, bucket, "k", []byte("v"))
	if got := get(t, srv, bucket, "k"); got != "v" {
		t.Errorf("got %q", got)
	}
	env := strings.Join(srv.Env(), "\n")
	for _, want := range []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey, "AWS_ENDPOINT_URL=" + srv.Endpoint} {
		if !strings.Contains(env, want) {
			t.Errorf("Env lacks %s", want)
		}
	}
}

func TestRestartKeepsData(t *testing.T) {
	srv := Start(t)
	bucket := srv.NewBucket(t)
	srv.Put(t, bucket, "k", []byte("before"))
	endpoint := srv.Endpoint
	srv.Restart(t)
	if srv.Endpoint != endpoint {
		t.Errorf("endpoint moved from %s to %s", endpoint, srv.Endpoint)
	}
	if got := get(t, srv, bucket, "k"); got != "before" {
		t.Errorf("after restart got %q", got)
	}
	srv.Stop()
	srv.Stop() // a second Stop does nothing
}
