package s3sync

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Bodies sent with sendfile(2). The SDK hands net/http its body behind wrappers, and
// net/http copies a body that is not a file through a 32 KiB buffer: a read and a write
// system call, and two copies, per 32 KiB. A request whose body is a part of a file instead
// gets, for each attempt, a file description of its own at the part's offset as its body,
// which net/http gives to the kernel to send (sendfile(2): no copy through user memory).
// Measured on loopback: 0.22 s of CPU per GiB sent, against 0.6-0.75 s through the buffer.
// The bytes still leave with the part's CRC32C from the read before the upload, which the
// server verifies.

// fromFile returns the option that sends a request's body, the n bytes of src at off, from
// the file with sendfile(2); nil when src is not a file or the system has no such call.
// progress, when not nil, hears of the bytes sent, once each, however many attempts.
func fromFile(src io.ReaderAt, off, n int64, progress func(int64)) func(*s3.Options) {
	f, ok := src.(*os.File)
	if !ok || runtime.GOOS != "linux" || n == 0 {
		return nil
	}
	return func(o *s3.Options) {
		o.HTTPClient = &fileBodyClient{base: o.HTTPClient, f: f, off: off, n: n, progress: progress}
	}
}

// fileBodyClient swaps a request's body for its own file description at off.
type fileBodyClient struct {
	base     s3.HTTPClient
	f        *os.File
	off, n   int64
	progress func(int64)

	mu   sync.Mutex
	sent int64 // the most bytes any attempt has sent
}

func (c *fileBodyClient) Do(req *http.Request) (*http.Response, error) {
	// Over TLS the bytes pass through user memory to be encrypted anyway: no sendfile.
	if req.Body == nil || req.ContentLength != c.n || req.URL.Scheme != "http" {
		return c.base.Do(req)
	}
	body, err := reopen(c.f)
	if err != nil {
		return c.base.Do(req) // the SDK's body: the same bytes, through a buffer
	}
	if _, err := body.Seek(c.off, io.SeekStart); err != nil {
		body.Close()
		return c.base.Do(req)
	}
	// net/http closes the body once it is sent, or the request failed.
	req.Body = &fileSection{f: body, end: c.off + c.n}
	req.GetBody = nil
	stop := c.watch(body)
	resp, err := c.base.Do(req)
	stop()
	if err == nil && resp.StatusCode/100 == 2 {
		c.report(c.n)
	}
	return resp, err
}

// watch reports the progress of a body sent by the kernel, read from the file offset
// that sendfile(2) advances, until stop is called.
func (c *fileBodyClient) watch(body *os.File) (stop func()) {
	if c.progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(progressInterval / 2)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if pos, err := body.Seek(0, io.SeekCurrent); err == nil {
					c.report(pos - c.off)
				}
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// report passes on the bytes sent beyond the most reported so far.
func (c *fileBodyClient) report(sent int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sent = min(sent, c.n)
	if sent > c.sent {
		if c.progress != nil {
			c.progress(sent - c.sent)
		}
		c.sent = sent
	}
}

// fileSection is a file read from its offset up to end. Being a syscall.Conn, it is what
// net/http hands to sendfile(2); its end keeps net/http's check that the body holds no
// more than its Content-Length from reading on to the end of the file. (No embedded
// *os.File: its WriteTo would read past end.)
type fileSection struct {
	f   *os.File
	end int64
}

func (s *fileSection) Read(p []byte) (int, error) {
	pos, err := s.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	if pos >= s.end {
		return 0, io.EOF
	}
	return s.f.Read(p[:min(int64(len(p)), s.end-pos)])
}

func (s *fileSection) Close() error { return s.f.Close() }

func (s *fileSection) SyscallConn() (syscall.RawConn, error) { return s.f.SyscallConn() }

// reopen opens the file f has open again, as a new file description with an offset of its
// own: through /proc/self/fd, which finds it even when it was renamed or removed since.
func reopen(f *os.File) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd uintptr
	if err := rc.Control(func(d uintptr) { fd = d }); err != nil {
		return nil, err
	}
	g, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		return nil, err
	}
	a, err1 := f.Stat()
	b, err2 := g.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		g.Close()
		return nil, fmt.Errorf("reopen %s: not the same file", f.Name())
	}
	return g, nil
}
