package s3sync

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMatcher(t *testing.T) {
	for _, tc := range []struct {
		patterns []string
		rel      string
		want     bool
	}{
		{[]string{"*.tmp"}, "x.tmp", true},
		{[]string{"*.tmp"}, "a/b/x.tmp", true},
		{[]string{"*.tmp"}, "x.tmp.keep", false},
		{[]string{"logs/*.txt"}, "logs/a.txt", true},
		{[]string{"logs/*.txt"}, "logs/sub/a.txt", false},
		{[]string{"logs/**/*.txt"}, "logs/sub/deep/a.txt", true},
		{[]string{"logs/**/*.txt"}, "logs/a.txt", true},
		{[]string{"**/ckpt-*"}, "runs/1/ckpt-5/model.pt", true},
		{[]string{".git"}, ".git/config", true},
		{[]string{".git"}, "sub/.git/HEAD", true},
		{[]string{"cache/"}, "cache/x", true},
		{[]string{"sub/deep"}, "sub/deep/c.txt", true},
		{[]string{"sub/deep"}, "other/sub/deep/c.txt", false},
		{nil, "anything", false},
	} {
		m, err := newMatcher(tc.patterns)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.excluded(tc.rel); got != tc.want {
			t.Errorf("%q excluded(%q) = %v, want %v", tc.patterns, tc.rel, got, tc.want)
		}
	}
	if _, err := newMatcher([]string{"[a"}); err == nil {
		t.Error("bad pattern: no error")
	}
}

func TestParseS3URL(t *testing.T) {
	for _, tc := range []struct {
		in          string
		bucket, key string
		bad         bool
	}{
		{in: "s3://b", bucket: "b"},
		{in: "s3://b/", bucket: "b"},
		{in: "s3://b/p/q/", bucket: "b", key: "p/q/"},
		{in: "s3://b/file.zip", bucket: "b", key: "file.zip"},
		{in: "s3:///x", bad: true},
		{in: "/local", bad: true},
	} {
		loc, err := parseS3URL(tc.in)
		if (err != nil) != tc.bad || loc.bucket != tc.bucket || loc.key != tc.key {
			t.Errorf("parseS3URL(%q) = %+v, %v", tc.in, loc, err)
		}
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 10_276_044: "9.8 MiB", 4 << 30: "4.0 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
	s := Stats{Files: 1000, Bytes: 10_276_044, Elapsed: 1234 * time.Millisecond}
	if got, want := s.String(), "synced 1000 files (9.8 MiB), skipped 0 (0 B) in 1.2s"; got != want {
		t.Errorf("Stats.String() = %q, want %q", got, want)
	}
	p := Progress{Files: 412, FilesTotal: 1000, Bytes: 4 << 20, BytesTotal: 10 << 20, Rate: 2 << 20, ETA: 3 * time.Second}
	if got, want := FormatProgress(p), "412/1000 files, 4.0 MiB/10.0 MiB, 2.0 MiB/s, ETA 3s"; got != want {
		t.Errorf("FormatProgress = %q, want %q", got, want)
	}
}

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolveSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts ClientOptions
		env  map[string]string
		want settings
		bad  string
	}{
		{name: "standard", env: map[string]string{
			"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_SESSION_TOKEN": "TOK",
			"AWS_REGION": "eu-west-1", "AWS_ENDPOINT_URL": "http://e:9000", "endpoint_url": "http://legacy",
			"aws_access_key_id": "legacyAK", "aws_secret_access_key": "legacySK",
		}, want: settings{endpoint: "http://e:9000", region: "eu-west-1", accessKey: "AK", secretKey: "SK", sessionToken: "TOK"}},
		{name: "s3 endpoint wins", env: map[string]string{"AWS_ENDPOINT_URL_S3": "http://s3:1", "AWS_ENDPOINT_URL": "http://all:1"},
			want: settings{endpoint: "http://s3:1"}},
		{name: "legacy", env: map[string]string{
			"endpoint_url": "http://m:9000", "aws_access_key_id": "AK", "aws_secret_access_key": "SK", "region_name": "r1",
		}, want: settings{endpoint: "http://m:9000", region: "r1", accessKey: "AK", secretKey: "SK"}},
		{name: "options win", opts: ClientOptions{Endpoint: "https://o", Region: "o-1"},
			env: map[string]string{"AWS_ENDPOINT_URL": "http://e", "AWS_REGION": "e-1"}, want: settings{endpoint: "https://o", region: "o-1"}},
		{name: "unsigned", env: map[string]string{"signature_version": "UNSIGNED"}, want: settings{anonymous: true}},
		{name: "half a key", env: map[string]string{"AWS_ACCESS_KEY_ID": "AK"}, bad: "AWS_SECRET_ACCESS_KEY is not"},
		{name: "endpoint without scheme", opts: ClientOptions{Endpoint: "minio:9000"}, bad: "not an http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveSettings(tc.opts, envOf(tc.env))
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("err = %v, want %q", err, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.warnings = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("settings = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestNewClientDoesNotLeakSecrets(t *testing.T) {
	const secret = "s3cr3t-value-that-must-not-show"
	c, err := NewClient(context.Background(), ClientOptions{Getenv: envOf(map[string]string{
		"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": secret, "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
	})})
	if err != nil {
		t.Fatal(err)
	}
	err = c.wrap(errors.New("server said: bad signature for "+secret), "upload x")
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error shows the secret: %v", err)
	}
	for _, name := range []string{"AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "AWS_SESSION_TOKEN"} {
		found := false
		for _, n := range SecretEnvNames() {
			found = found || n == name
		}
		if !found {
			t.Errorf("SecretEnvNames lacks %s", name)
		}
	}
}

func TestProgressReaderCountsBytesOnce(t *testing.T) {
	var total int64
	r := &progressReader{r: strings.NewReader("0123456789"), fn: func(n int64) { total += n }}
	buf := make([]byte, 4)
	r.Read(buf) // 4
	r.Read(buf) // 8
	r.Seek(0, io.SeekStart)
	io.ReadAll(r) // a retry reads all 10 again
	if total != 10 {
		t.Errorf("counted %d bytes, want 10", total)
	}
}

func TestMeterRateIsRecent(t *testing.T) {
	m := &meter{start: time.Now().Add(-time.Minute)}
	// A minute of nothing, then 10 MiB within the window: the rate follows the recent
	// pace, not the average since the start.
	m.recent = []sample{{at: time.Now().Add(-2 * time.Second), bytes: 0}}
	m.n.bytes.Store(10 << 20)
	m.n.bytesTotal.Store(20 << 20)
	p := m.snapshot(false)
	if p.Rate < 4<<20 || p.Rate > 6<<20 {
		t.Errorf("rate %s/s, want about 5 MiB/s (10 MiB in 2 s)", FormatBytes(int64(p.Rate)))
	}
	if p.ETA < time.Second || p.ETA > 3*time.Second {
		t.Errorf("ETA %v, want about 2s at the recent rate", p.ETA)
	}
	if done := m.snapshot(true); done.Rate > 1<<20 {
		t.Errorf("final rate %s/s, want the average over the whole sync", FormatBytes(int64(done.Rate)))
	}
}
