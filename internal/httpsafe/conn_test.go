package httpsafe

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// serveHandler serves h with NewServer(h, l) on a Listen(l) listener on a
// loopback port of this package's range, until the test ends.
func serveHandler(t *testing.T, l Limits, h http.Handler) string {
	t.Helper()
	var ln net.Listener
	for port := 17500; port < 17520 && ln == nil; port++ {
		ln, _ = Listen(fmt.Sprintf("127.0.0.1:%d", port), l)
	}
	if ln == nil {
		t.Fatal("no free port in 17500-17519")
	}
	srv := NewServer(h, l)
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return "http://" + ln.Addr().String()
}

// TestListenCapsConnections fills the connection cap with idle keep-alive
// connections (one of them after a 401): a further connection is accepted
// by the kernel but not served, and is served as soon as one closes.
func TestListenCapsConnections(t *testing.T) {
	h := Protect(Options{Tokens: AllScopes("tok")}, echo)
	addr := serveHandler(t, Limits{MaxConnections: 3}, h)[len("http://"):]
	var held []*testenv.RawConn
	for i, path := range []string{"/healthz", "/healthz", "/mcp"} {
		k := testenv.DialRaw(t, addr)
		k.Get(t, path)
		want := 200
		if path == "/mcp" {
			want = 401
		}
		if code, ok := k.Response(t, 10*time.Second); !ok || code != want {
			t.Fatalf("connection %d: GET %s = %d (answered %v); want %d", i+1, path, code, ok, want)
		}
		held = append(held, k)
	}

	extra := testenv.DialRaw(t, addr)
	extra.Get(t, "/healthz")
	if code, ok := extra.Response(t, 500*time.Millisecond); ok {
		t.Fatalf("a 4th connection over a cap of 3 was served (%d)", code)
	}
	held[2].Close()
	if code, ok := extra.Response(t, 10*time.Second); !ok || code != 200 {
		t.Fatalf("after a held connection closed, the waiting one got %d (answered %v); want 200", code, ok)
	}
	// The held connections are still served.
	held[0].Get(t, "/healthz")
	if code, ok := held[0].Response(t, 10*time.Second); !ok || code != 200 {
		t.Errorf("a held keep-alive connection got %d (answered %v); want 200", code, ok)
	}
}

// TestIdleTimeoutClosesKeepAlive: an idle keep-alive connection is closed
// by the server after IdleTimeout, which frees its slot under the cap.
func TestIdleTimeoutClosesKeepAlive(t *testing.T) {
	addr := serveHandler(t, Limits{IdleTimeout: 200 * time.Millisecond, MaxConnections: 1}, echo)[len("http://"):]
	k := testenv.DialRaw(t, addr)
	k.Get(t, "/healthz")
	if code, ok := k.Response(t, 10*time.Second); !ok || code != 200 {
		t.Fatalf("GET /healthz = %d (answered %v); want 200", code, ok)
	}
	if b, err := k.ReadToClose(10 * time.Second); err != nil || len(b) > 0 {
		t.Fatalf("reading an idle keep-alive connection = %q, %v; want it closed (closed by the server)", b, err)
	}
	next := testenv.DialRaw(t, addr)
	next.Get(t, "/healthz")
	if code, ok := next.Response(t, 10*time.Second); !ok || code != 200 {
		t.Errorf("the next connection under a cap of 1 got %d (answered %v); want 200", code, ok)
	}
}

// TestReadHeaderTimeoutClosesSilentConnection: a connection that never
// sends its request headers is closed after ReadHeaderTimeout.
func TestReadHeaderTimeoutClosesSilentConnection(t *testing.T) {
	addr := serveHandler(t, Limits{ReadHeaderTimeout: 200 * time.Millisecond}, echo)[len("http://"):]
	k := testenv.DialRaw(t, addr)
	k.Write(t, "GET /healthz HTTP/1.1\r\nHost: local")
	b, err := k.ReadToClose(10 * time.Second)
	if err != nil {
		t.Fatalf("reading a connection with unfinished headers = %q, %v; want it closed by the server", b, err)
	}
}

func TestNewServerUsesLimits(t *testing.T) {
	srv := NewServer(echo, Limits{ReadHeaderTimeout: 3 * time.Second, IdleTimeout: 7 * time.Second, MaxHeaderBytes: 999})
	if srv.ReadHeaderTimeout != 3*time.Second || srv.IdleTimeout != 7*time.Second || srv.MaxHeaderBytes != 999 {
		t.Errorf("NewServer = header %v idle %v maxHeader %d; want 3s 7s 999", srv.ReadHeaderTimeout, srv.IdleTimeout, srv.MaxHeaderBytes)
	}
}

// BenchmarkCheckHost is the cost the Host check adds to every request on
// a loopback connection.
func BenchmarkCheckHost(b *testing.B) {
	h := CheckHost([]AllowedHost{{Name: "vmcp.test"}, {Name: "proxy.test", Port: "8443"}}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, host := range []string{"localhost:8080", "127.0.0.1:8080", "proxy.test:8443"} {
		b.Run(host, func(b *testing.B) {
			req, _ := http.NewRequest("GET", "http://"+host+"/api/v1/runs", nil)
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
		})
	}
}

// TestListenCapsConnectionsPerClient: a client at MaxConnectionsPerClient
// gets 429 naming the setting, and the connection is closed; once one of
// its connections closes, the next is served.
func TestListenCapsConnectionsPerClient(t *testing.T) {
	addr := serveHandler(t, Limits{MaxConnections: 10, MaxConnectionsPerClient: 2}, echo)[len("http://"):]
	var held []*testenv.RawConn
	for i := range 2 {
		k := testenv.DialRaw(t, addr)
		k.Get(t, "/healthz")
		if code, ok := k.Response(t, 10*time.Second); !ok || code != 200 {
			t.Fatalf("connection %d: GET /healthz = %d (answered %v); want 200", i+1, code, ok)
		}
		held = append(held, k)
	}
	over := testenv.DialRaw(t, addr)
	over.Get(t, "/healthz")
	b, err := over.ReadToClose(10 * time.Second)
	if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 429 ") || !strings.Contains(string(b), "at most 2 at once from one address (server.maxConnectionsPerClient)") {
		t.Fatalf("a 3rd connection over a per-client cap of 2 = %q, %v; want 429 naming the setting, then closed", b, err)
	}
	held[0].Close()
	for served := false; !served; {
		k := testenv.DialRaw(t, addr)
		k.Get(t, "/healthz")
		code, _ := k.Response(t, 10*time.Second)
		k.Close()
		served = code == 200
	}
}

func TestClientKey(t *testing.T) {
	for _, tt := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 5}, "192.0.2.7"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:192.0.2.7"), Port: 5}, "192.0.2.7"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:aaaa::1"), Port: 5}, "2001:db8:1:2::/64"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:bbbb::9"), Port: 6}, "2001:db8:1:2::/64"},
	} {
		if got := ClientKey(tt.addr); got != tt.want {
			t.Errorf("ClientKey(%v) = %q; want %q", tt.addr, got, tt.want)
		}
	}
	if got := ClientKeyOf("[2001:db8:1:2:aaaa::1]:443"); got != "2001:db8:1:2::/64" {
		t.Errorf("ClientKeyOf = %q; want the /64", got)
	}
}

func TestDefaultPerClient(t *testing.T) {
	for _, tt := range [][2]int{{1024, 128}, {64, 8}, {4, 4}, {1, 1}} {
		if got := DefaultPerClient(tt[0]); got != tt[1] {
			t.Errorf("DefaultPerClient(%d) = %d; want %d", tt[0], got, tt[1])
		}
	}
}
