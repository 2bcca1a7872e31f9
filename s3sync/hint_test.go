package s3sync

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// status403 is an HTTP response error as the SDK's transport returns one.
type status403 struct{ msg string }

func (e status403) Error() string       { return e.msg }
func (e status403) HTTPStatusCode() int { return 403 }

// With no credentials anywhere, the SDK's last try is the EC2 metadata service, which may
// answer 403: that is reported as no credentials, not as credentials lacking permission.
func TestHintNoCredentials(t *testing.T) {
	imds := status403{"operation error ec2imds: GetMetadata, http response error StatusCode: 403, request to EC2 IMDS failed"}
	noCreds := fmt.Errorf("operation error S3: ListObjectsV2, get identity: get credentials: failed to refresh cached credentials, no EC2 IMDS role found, %w", imds)
	denied := fmt.Errorf("operation error S3: ListObjectsV2, %w", status403{"https response error StatusCode: 403, api error AccessDenied"})
	for _, tc := range []struct {
		err       error
		want, not string
	}{
		{noCreds, "no credentials found", "lack permission"},
		{denied, "lack permission", "no credentials"},
	} {
		got := withHint(tc.err).Error()
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("withHint(%q) = %q; want it to say %q and not %q", tc.err, got, tc.want, tc.not)
		}
		if !errors.Is(withHint(tc.err), tc.err) {
			t.Errorf("withHint(%q) loses the error's chain", tc.err)
		}
	}
}
