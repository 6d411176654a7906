package httpsafe

// The listener's connection caps. Listen accepts a connection, then:
//
//  1. Counts it against its client (ClientKey: the IPv4 address, or the
//     /64 of an IPv6 one, which one host usually holds whole). A client
//     already at MaxConnectionsPerClient gets a 429 written straight onto
//     the socket, naming the setting, and the connection is closed; it
//     never takes one of the MaxConnections slots. Refusals run on their
//     own goroutines, at most maxRefusing at once (past that a refused
//     connection is closed without a word), so a flood cannot stall Accept.
//  2. Waits for one of the MaxConnections slots, as netutil.LimitListener
//     does: while every slot is held, Accept does not return, and further
//     clients wait unserved in the kernel's accept queue until one closes.
//
// A connection gives back its slot and its client's count when it is
// closed (once, however often Close is called). So one address cannot hold
// every slot with idle, slow or streaming connections; the rest of the
// slots stay for other clients (load balancers' health checks among them).
// The refusal is plain HTTP/1.1, as the listener serves (TLS, when there is
// any, ends at a proxy in front, whose address is then every client's:
// raise MaxConnectionsPerClient to MaxConnections there).

import (
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// maxRefusing bounds the refusals being written at once.
const maxRefusing = 64

// refuseLinger is how long a refused connection is read from (and
// discarded) after the refusal, so that closing it does not reset the
// connection before the client has read the 429.
const refuseLinger = time.Second

// ClientKey is the client that a connection's remote address counts
// against: the IP for IPv4, the /64 prefix for IPv6, the whole address
// string for anything else.
func ClientKey(addr net.Addr) string {
	host := addr.String()
	if ta, ok := addr.(*net.TCPAddr); ok {
		if ip4 := ta.IP.To4(); ip4 != nil {
			return ip4.String()
		}
		return (&net.IPNet{IP: ta.IP.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}

// ClientKeyOf is ClientKey of a request's RemoteAddr ("ip:port").
func ClientKeyOf(remoteAddr string) string {
	if ap, err := net.ResolveTCPAddr("tcp", remoteAddr); err == nil {
		return ClientKey(ap)
	}
	return remoteAddr
}

// capListener implements the caps above around a net.Listener.
type capListener struct {
	net.Listener
	perClient int
	slots     chan struct{} // one token per open connection
	refusing  chan struct{} // one token per refusal being written
	done      chan struct{} // closed by Close
	closeOnce sync.Once

	mu      sync.Mutex
	clients map[string]int // open connections by ClientKey
}

func newCapListener(ln net.Listener, l Limits) *capListener {
	return &capListener{
		Listener: ln, perClient: l.MaxConnectionsPerClient,
		slots: make(chan struct{}, l.MaxConnections), refusing: make(chan struct{}, maxRefusing),
		done: make(chan struct{}), clients: map[string]int{},
	}
}

// Accept returns the next connection that is under both caps.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := ClientKey(c.RemoteAddr())
		if !l.admit(key) {
			l.refuse(c, key)
			continue
		}
		select {
		case l.slots <- struct{}{}:
			return &capConn{Conn: c, l: l, key: key}, nil
		case <-l.done:
			l.release(key)
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// Close closes the listener and wakes an Accept waiting for a slot.
func (l *capListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// admit counts a connection of key, unless key is at its cap. A per-client
// cap as large as MaxConnections is no cap: such a client waits for a slot
// as every other does.
func (l *capListener) admit(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients[key] >= l.perClient && l.perClient < cap(l.slots) {
		return false
	}
	l.clients[key]++
	return true
}

func (l *capListener) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients[key]--; l.clients[key] <= 0 {
		delete(l.clients, key)
	}
}

// refuse answers a connection over its client's cap with a 429 and closes
// it, on its own goroutine.
func (l *capListener) refuse(c net.Conn, key string) {
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		msg := fmt.Sprintf("too many connections from %s: at most %d at once from one address (server.maxConnectionsPerClient); close one and retry\n", key, l.perClient)
		c.SetDeadline(time.Now().Add(refuseLinger))
		fmt.Fprintf(c, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(msg), msg)
		if tc, ok := c.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
		io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// capConn gives back its slot and its client's count when closed.
type capConn struct {
	net.Conn
	l    *capListener
	key  string
	once sync.Once
}

// Close gives the counts back first, so that a client that sees the
// connection closed finds its slot free.
func (c *capConn) Close() error {
	c.once.Do(func() {
		c.l.release(c.key)
		<-c.l.slots
	})
	return c.Conn.Close()
}
