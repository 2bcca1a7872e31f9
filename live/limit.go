package live

import (
	"net"
	"sync"
	"sync/atomic"
)

// limitListener accepts at most n connections at once: more wait in the kernel's queue
// until one closes. Each accepted TCP connection's send buffer is bounded, so that a client
// that stops reading holds little of runall's memory before its writes time out.
func limitListener(ln net.Listener, n int) *limited {
	return &limited{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limited struct {
	net.Listener
	slots     chan struct{} // one taken before each Accept, given back as its connection closes
	conns     atomic.Int64  // connections open
	done      chan struct{}
	closeOnce sync.Once
}

// sendBuffer is each connection's kernel send buffer: enough for a page in a few round
// trips, little for a client that never reads.
const sendBuffer = 256 << 10

func (l *limited) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(sendBuffer)
	}
	l.conns.Add(1)
	return &slotConn{Conn: c, release: sync.OnceFunc(func() {
		l.conns.Add(-1)
		<-l.slots
	})}, nil
}

// open is how many connections are open.
func (l *limited) open() int { return int(l.conns.Load()) }

func (l *limited) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// slotConn gives its slot back when closed.
type slotConn struct {
	net.Conn
	release func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
