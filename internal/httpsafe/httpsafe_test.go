package httpsafe

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// echo answers 200 with the request body.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	fmt.Fprintf(w, "ok:%s", b)
})

func TestCheckListen(t *testing.T) {
	tests := []struct {
		addr             string
		auth, insecure   bool
		wantErrSubstring string
	}{
		{"127.0.0.1:8080", false, false, ""},
		{"127.0.0.2:8080", false, false, ""},
		{"localhost:8080", false, false, ""},
		{"[::1]:8080", false, false, ""},
		{"0.0.0.0:8080", false, false, "refusing to listen on 0.0.0.0:8080"},
		{":8080", false, false, "every interface"},
		{"[::]:8080", false, false, "without authentication"},
		{"192.168.1.10:8080", false, false, "--insecure"},
		{"0.0.0.0:8080", true, false, ""},
		{"0.0.0.0:8080", false, true, ""},
		{"no-port", false, false, "missing port"},
	}
	for _, tt := range tests {
		err := CheckListen(tt.addr, tt.auth, tt.insecure)
		switch {
		case tt.wantErrSubstring == "" && err != nil:
			t.Errorf("CheckListen(%q, auth=%v, insecure=%v) = %v; want nil", tt.addr, tt.auth, tt.insecure, err)
		case tt.wantErrSubstring != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErrSubstring)):
			t.Errorf("CheckListen(%q, auth=%v, insecure=%v) = %v; want an error containing %q", tt.addr, tt.auth, tt.insecure, err, tt.wantErrSubstring)
		}
	}
}

func TestAuth(t *testing.T) {
	h := Protect(Options{Tokens: AllScopes("s3cret-one", "second-token")}, echo)
	tests := []struct {
		name, method, path, header string
		wantCode                   int
		wantChallenge              string
	}{
		{"no header", "POST", "/mcp", "", 401, `Bearer realm="vmcp"`},
		{"wrong token", "POST", "/mcp", "Bearer nope", 401, `Bearer realm="vmcp", error="invalid_token"`},
		{"prefix of a token", "POST", "/mcp", "Bearer s3cret", 401, `Bearer realm="vmcp", error="invalid_token"`},
		{"token plus suffix", "POST", "/mcp", "Bearer s3cret-one2", 401, `Bearer realm="vmcp", error="invalid_token"`},
		{"basic scheme", "GET", "/api/v1/runs", "Basic s3cret-one", 401, `Bearer realm="vmcp"`},
		{"first token", "POST", "/mcp", "Bearer s3cret-one", 200, ""},
		{"second token, lower-case scheme", "GET", "/api/v1/runs", "bearer second-token", 200, ""},
		{"healthz is open", "GET", "/healthz", "", 200, ""},
		{"readyz is not", "GET", "/readyz", "", 401, `Bearer realm="vmcp"`},
		{"metrics is not", "GET", "/metrics", "", 401, `Bearer realm="vmcp"`},
		{"POST healthz is not open", "POST", "/healthz", "", 401, `Bearer realm="vmcp"`},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, "http://localhost"+tt.path, strings.NewReader("x"))
		if tt.header != "" {
			req.Header.Set("Authorization", tt.header)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.wantCode {
			t.Errorf("%s: %s %s = %d; want %d", tt.name, tt.method, tt.path, rec.Code, tt.wantCode)
		}
		if got := rec.Header().Get("WWW-Authenticate"); got != tt.wantChallenge {
			t.Errorf("%s: WWW-Authenticate = %q; want %q", tt.name, got, tt.wantChallenge)
		}
		if strings.Contains(rec.Body.String(), "s3cret") || strings.Contains(rec.Body.String(), "second-token") {
			t.Errorf("%s: response body %q echoes a token", tt.name, rec.Body.String())
		}
	}
}

func TestAuthDisabledWithoutTokens(t *testing.T) {
	for _, tokens := range [][]string{nil, {}} {
		rec := httptest.NewRecorder()
		Protect(Options{Tokens: AllScopes(tokens...)}, echo).ServeHTTP(rec, httptest.NewRequest("POST", "http://localhost/mcp", strings.NewReader("hi")))
		if rec.Code != 200 || rec.Body.String() != "ok:hi" {
			t.Errorf("with tokens %q, POST /mcp = %d %q; want 200 ok:hi", tokens, rec.Code, rec.Body.String())
		}
	}
}

// TestAuthBlankTokensFailClosed is the "empty token turns authentication
// off" attack one layer down: a blank configured token must not disable
// authentication, nor be matched by an empty or blank bearer token.
func TestAuthBlankTokensFailClosed(t *testing.T) {
	for _, tokens := range [][]string{{""}, {"  "}, {"", "\t"}} {
		h := Protect(Options{Tokens: AllScopes(tokens...)}, echo)
		for _, header := range []string{"", "Bearer ", "Bearer  ", "Bearer \t"} {
			req := httptest.NewRequest("POST", "http://localhost/mcp", strings.NewReader("hi"))
			if header != "" {
				req.Header.Set("Authorization", header)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != 401 {
				t.Errorf("with tokens %q, POST /mcp with Authorization %q = %d %q; want 401", tokens, header, rec.Code, rec.Body.String())
			}
		}
	}
	// A blank entry beside a real token does not get in the way of it.
	req := httptest.NewRequest("POST", "http://localhost/mcp", strings.NewReader("hi"))
	req.Header.Set("Authorization", "Bearer real")
	rec := httptest.NewRecorder()
	Protect(Options{Tokens: AllScopes("", "real")}, echo).ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("with tokens [\"\" real], the token real = %d; want 200", rec.Code)
	}
}

func TestOrigin(t *testing.T) {
	h := Protect(Options{AllowedOrigins: []string{"https://app.example.com", "http://tools.internal:3000/"}}, echo)
	tests := []struct {
		origin string
		want   int
	}{
		{"", 200},
		{"http://localhost", 200},
		{"http://localhost:5173", 200},
		{"https://127.0.0.1:8443", 200},
		{"http://127.9.9.9", 200},
		{"http://[::1]:3000", 200},
		{"https://app.example.com", 200},
		{"HTTPS://APP.EXAMPLE.COM", 200},
		{"http://tools.internal:3000", 200},
		{"http://tools.internal:3001", 403},
		{"https://app.example.com.evil.net", 403},
		{"http://evil.example", 403},
		{"http://localhost.evil.example", 403},
		{"null", 403},
		{"file://localhost", 403},
		{"http://192.168.0.5", 403},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("POST", "http://localhost/mcp", strings.NewReader("x"))
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("POST /mcp with Origin %q = %d; want %d", tt.origin, rec.Code, tt.want)
		}
	}
}

// listen binds a loopback port from this package's test range.
func listen(t *testing.T) net.Listener {
	t.Helper()
	for port := 17500; port < 17520; port++ {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			return ln
		}
	}
	t.Fatal("no free port in 17500-17519")
	return nil
}

func serve(t *testing.T, l Limits, h http.Handler) string {
	t.Helper()
	ln := listen(t)
	srv := NewServer(LimitBody(l, h), l)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func TestLimitBodyOverHTTP(t *testing.T) {
	url := serve(t, Limits{MaxBody: 1024, BodyTimeout: 300 * time.Millisecond}, echo)
	big := strings.Repeat("a", 1025)
	tests := []struct {
		name     string
		body     io.Reader
		wantCode int
		wantBody string
	}{
		{"small body reaches the handler intact", strings.NewReader("hello"), 200, "ok:hello"},
		{"exactly the limit", strings.NewReader(big[:1024]), 200, "ok:" + big[:1024]},
		{"over the limit with Content-Length", strings.NewReader(big), 413, ""},
		// io.MultiReader hides the length, so the client sends it chunked.
		{"over the limit, chunked", io.MultiReader(strings.NewReader(big)), 413, ""},
	}
	for _, tt := range tests {
		resp, err := http.Post(url+"/mcp", "application/json", tt.body)
		if err != nil {
			t.Fatalf("%s: POST: %v", tt.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.wantCode || (tt.wantBody != "" && string(b) != tt.wantBody) {
			t.Errorf("%s: POST = %d %.40q; want %d %.40q", tt.name, resp.StatusCode, b, tt.wantCode, tt.wantBody)
		}
	}
}

// TestSlowBody sends headers, then dribbles a body slower than the body
// timeout allows: the server must answer 408 instead of waiting forever.
func TestSlowBody(t *testing.T) {
	url := serve(t, Limits{BodyTimeout: 200 * time.Millisecond}, echo)
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 512)
	n, _ := conn.Read(buf)
	if !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 408") {
		t.Errorf("slow body got %q; want an HTTP/1.1 408 response", buf[:n])
	}
}

// TestLongResponseSurvives checks the reason NewServer sets no ReadTimeout:
// a handler that streams for longer than the body timeout keeps its
// context.
func TestLongResponseSurvives(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		select {
		case <-time.After(600 * time.Millisecond):
			fmt.Fprint(w, "done")
		case <-r.Context().Done():
			http.Error(w, "cancelled", 500)
		}
	})
	url := serve(t, Limits{BodyTimeout: 100 * time.Millisecond}, h)
	resp, err := http.Post(url+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "done" {
		t.Errorf("a 600ms handler behind a 100ms body timeout = %d %q; want 200 done", resp.StatusCode, b)
	}
}

func TestNewServerTimeouts(t *testing.T) {
	srv := NewServer(echo, Limits{})
	if srv.ReadHeaderTimeout != DefaultReadHeaderTimeout || srv.IdleTimeout != DefaultIdleTimeout ||
		srv.ReadTimeout != 0 || srv.WriteTimeout != 0 || srv.MaxHeaderBytes != DefaultMaxHeaderBytes {
		t.Errorf("NewServer timeouts = header %v idle %v read %v write %v maxHeader %d; want %v %v 0 0 %d",
			srv.ReadHeaderTimeout, srv.IdleTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.MaxHeaderBytes,
			DefaultReadHeaderTimeout, DefaultIdleTimeout, DefaultMaxHeaderBytes)
	}
}
