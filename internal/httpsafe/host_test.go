package httpsafe

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestParseAllowedHost(t *testing.T) {
	tests := []struct {
		in      string
		want    AllowedHost
		wantErr string
	}{
		{"vmcp.example.com", AllowedHost{Name: "vmcp.example.com"}, ""},
		{"VMCP.Example.COM.", AllowedHost{Name: "vmcp.example.com"}, ""},
		{"vmcp.internal:8443", AllowedHost{Name: "vmcp.internal", Port: "8443"}, ""},
		{"my_host", AllowedHost{Name: "my_host"}, ""},
		{"10.0.0.5", AllowedHost{Name: "10.0.0.5"}, ""},
		{"10.0.0.5:80", AllowedHost{Name: "10.0.0.5", Port: "80"}, ""},
		{"[fd00::1]", AllowedHost{Name: "fd00::1"}, ""},
		{"[FD00::1]:8080", AllowedHost{Name: "fd00::1", Port: "8080"}, ""},
		{"", AllowedHost{}, "it is empty"},
		{"https://vmcp.example.com", AllowedHost{}, "it is a URL"},
		{"*.example.com", AllowedHost{}, "wildcards are not supported"},
		{"vmcp.example.com/mcp", AllowedHost{}, "no path"},
		{"user@vmcp.example.com", AllowedHost{}, "no path, query, user"},
		{"fd00::1", AllowedHost{}, "in brackets"},
		{"[fd00::1", AllowedHost{}, "in brackets"},
		{"[fd00::1]8080", AllowedHost{}, "in brackets"},
		{"vmcp.example.com:http", AllowedHost{}, "the port must be a number"},
		{"vmcp.example.com:70000", AllowedHost{}, "the port must be a number"},
		{"vmcp.example.com:", AllowedHost{}, "the port must be a number"},
		{"-bad-.example", AllowedHost{}, `"-bad-.example" is neither a DNS name nor an IP address`},
		{"a..b", AllowedHost{}, "neither a DNS name"},
	}
	for _, tt := range tests {
		got, err := ParseAllowedHost(tt.in)
		switch {
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("ParseAllowedHost(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseAllowedHost(%q) = %+v, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
		}
	}
}

func TestAllowedHostString(t *testing.T) {
	for _, in := range []string{"vmcp.example.com", "vmcp.internal:8443", "[fd00::1]", "[fd00::1]:8080", "10.0.0.5:80"} {
		h, err := ParseAllowedHost(in)
		if err != nil {
			t.Fatal(err)
		}
		if h.String() != in {
			t.Errorf("ParseAllowedHost(%q).String() = %q; want it back", in, h.String())
		}
	}
}

func mustHosts(t *testing.T, entries ...string) []AllowedHost {
	t.Helper()
	var out []AllowedHost
	for _, e := range entries {
		h, err := ParseAllowedHost(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}

// TestCheckHost runs the Host check with the connection's local address
// set as net/http sets it: loopback, another interface, and unknown.
func TestCheckHost(t *testing.T) {
	h := Protect(Options{AllowedHosts: mustHosts(t, "vmcp.test", "proxy.test:8443", "[fd00::7]")}, echo)
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	loopback6 := &net.TCPAddr{IP: net.IPv6loopback, Port: 8080}
	lan := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8080}
	tests := []struct {
		local net.Addr // nil: no local address in the context
		host  string
		want  int
	}{
		{loopback, "localhost", 200},
		{loopback, "localhost:8080", 200},
		{loopback, "LocalHost:1", 200},
		{loopback, "localhost.:8080", 200},
		{loopback, "127.0.0.1", 200},
		{loopback, "127.0.0.1:8080", 200},
		{loopback, "127.1.2.3:9", 200},
		{loopback, "[::1]", 200},
		{loopback6, "[::1]:8080", 200},
		{loopback, "vmcp.test", 200},
		{loopback, "VMCP.test:8080", 200},
		{loopback, "proxy.test:8443", 200},
		{loopback, "[fd00::7]:1", 200},
		{loopback, "proxy.test", 403},
		{loopback, "proxy.test:8444", 403},
		{loopback, "attacker.example", 403},
		{loopback6, "attacker.example:8080", 403},
		{loopback, "localhost.attacker.example", 403},
		{loopback, "vmcp.test.attacker.example", 403},
		{loopback, "127.0.0.1.nip.io", 403},
		{loopback, "10.0.0.5:8080", 403},
		{loopback, "::1", 403},
		{loopback, "", 403},
		{nil, "attacker.example", 403},
		{nil, "localhost", 200},
		{lan, "attacker.example", 200},
		{lan, "10.0.0.5:8080", 200},
	}
	for _, tt := range tests {
		for _, path := range []string{"/mcp", "/healthz", "/api/v1/runs/x", "/metrics"} {
			req := httptest.NewRequest("GET", "http://localhost"+path, nil)
			req.Host = tt.host
			if tt.local != nil {
				req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, tt.local))
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Errorf("GET %s with Host %q on local address %v = %d %s; want %d", path, tt.host, tt.local, rec.Code, rec.Body.String(), tt.want)
			}
		}
	}
}

// TestCheckHostOverHTTP sends the rebinding request itself, over a real
// loopback connection, and reads the refusal.
func TestCheckHostOverHTTP(t *testing.T) {
	url := serveHandler(t, Limits{}, Protect(Options{AllowedHosts: mustHosts(t, "vmcp.test")}, echo))
	addr := strings.TrimPrefix(url, "http://")
	for _, tt := range []struct {
		host     string
		wantCode int
		wantBody string
	}{
		{"attacker.example", 403, `{"error":"host \"attacker.example\" not allowed: on loopback this server answers only to localhost, 127.0.0.1 and [::1] (any port); add the name to server.allowedHosts to serve it"}`},
		{"localhost:" + addr[strings.LastIndexByte(addr, ':')+1:], 200, "ok:"},
		{addr, 200, "ok:"},
		{"vmcp.test", 200, "ok:"},
	} {
		code, body := rawGet(t, addr, tt.host, "/healthz")
		if code != tt.wantCode || body != tt.wantBody {
			t.Errorf("GET /healthz with Host %q = %d %s; want %d %s", tt.host, code, body, tt.wantCode, tt.wantBody)
		}
	}
}

// rawGet sends a GET with exactly the Host header given, on its own
// connection, and returns the status code and the trimmed body.
func rawGet(t *testing.T, addr, host, path string) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %s with Host %q: %v", path, host, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, strings.TrimSpace(string(b))
}
