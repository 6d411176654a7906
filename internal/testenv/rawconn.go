package testenv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

// RawConn is a client connection that writes HTTP/1.1 requests by hand
// and stays open between them, as an idle keep-alive connection does. The
// connection-cap and idle-timeout tests hold many of them.
type RawConn struct {
	conn net.Conn
	r    *bufio.Reader
}

// DialRaw opens a RawConn to addr (host:port); the test closes it.
func DialRaw(t testing.TB, addr string) *RawConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &RawConn{conn: conn, r: bufio.NewReader(conn)}
}

// Get writes a keep-alive GET of path with Host: localhost.
func (c *RawConn) Get(t testing.TB, path string) {
	t.Helper()
	if _, err := fmt.Fprintf(c.conn, "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
}

// Response reads one response within wait and discards its body;
// answered is false when none came in that time.
func (c *RawConn) Response(t testing.TB, wait time.Duration) (code int, answered bool) {
	t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(c.r, nil)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return 0, false
	}
	if err != nil {
		t.Fatalf("reading a response: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, true
}

// Write sends raw bytes, such as a request that never finishes its headers.
func (c *RawConn) Write(t testing.TB, s string) {
	t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		t.Fatal(err)
	}
}

// ReadToClose reads until the server closes the connection; the error is
// the read deadline's when it has not closed it within wait.
func (c *RawConn) ReadToClose(wait time.Duration) ([]byte, error) {
	c.conn.SetReadDeadline(time.Now().Add(wait))
	return io.ReadAll(c.r)
}

// Close closes the connection (the test's cleanup closes it too).
func (c *RawConn) Close() error { return c.conn.Close() }
