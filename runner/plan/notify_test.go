package plan

import (
	"strings"
	"testing"
)

// TestCheckMasksInvalidNotifyURL: a notify url that is not http(s) is reported without its
// path or query, which may hold a token.
func TestCheckMasksInvalidNotifyURL(t *testing.T) {
	for _, url := range []string{"ftp://hooks.example/services/T0/B0/tok-secret-123", "hooks.example/x?token=tok-secret-123", "http:///tok-secret-123"} {
		_, err := loadYAML(t, "config: {notify: {url: \""+url+"\"}}\ntasks: [{cmd: echo}]\n", LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), "notify: url: want an http:// or https:// address") {
			t.Errorf("%s: got %v, want an error", url, err)
			continue
		}
		if strings.Contains(err.Error(), "tok-secret-123") {
			t.Errorf("the error shows the URL's token: %v", err)
		}
	}
}
