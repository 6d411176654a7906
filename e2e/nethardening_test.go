package e2e

// Issue 23, items 5-7, against a real `vmcp run --transport http`: console
// event streams cannot take every connection slot, slow and greedy clients
// cannot hold the listener, sign-out ends the session, and failed sign-ins
// are throttled per client address. Clients of a second address dial from
// 127.0.0.2 (all of 127.0.0.0/8 is loopback on Linux).

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// Ports of these tests: 17800-17849.
const netPortLo, netPortHi = 17800, 17849

const netToken = "net-e2e-token"

// netConfig serves one quick workflow behind netToken; SERVER is replaced
// by further server: lines.
const netConfig = `
backends:
  tb: {command: ${TB}, args: [-record, ${REC}]}
server:
  auth: {tokens: [` + netToken + `]}
SERVER
compositeTools:
  - name: quick
    description: Echo once
    steps:
      - {id: say, tool: tb.echo, arguments: {text: hello}}
`

// startNetVMCP starts vmcp with netConfig and the server lines, and
// returns its base URL (http://127.0.0.1:port).
func startNetVMCP(t *testing.T, server string) string {
	t.Helper()
	cfg := writeConfig(t, strings.Replace(netConfig, "SERVER", server, 1), t.TempDir()+"/rec")
	mcpURL, _, _ := startHTTPVMCP(t, cfg, netPortLo, netPortHi)
	return strings.TrimSuffix(mcpURL, "/mcp")
}

// httpFrom is an HTTP client with a cookie jar that dials from the
// loopback address from and does not follow redirects.
func httpFrom(t *testing.T, from string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Jar: jar, Transport: tr, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// get GETs base+path and returns the status, the body and the response.
func get(t *testing.T, c *http.Client, base, path string) (int, string, *http.Response) {
	t.Helper()
	resp, err := c.Get(base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

// csrfOf is the CSRF token of the form on base+page.
func csrfOf(t *testing.T, c *http.Client, base, page string) string {
	t.Helper()
	code, body, _ := get(t, c, base, page)
	m := csrfRE.FindStringSubmatch(body)
	if code != 200 || m == nil {
		t.Fatalf("GET %s = %d without a CSRF field:\n%s", page, code, body)
	}
	return m[1]
}

// post POSTs a form to base+path.
func post(t *testing.T, c *http.Client, base, path string, form url.Values) (int, string, *http.Response) {
	t.Helper()
	resp, err := c.PostForm(base+path, form)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

// signIn submits token on the sign-in page with client c.
func signIn(t *testing.T, c *http.Client, base, token string) (int, string, *http.Response) {
	t.Helper()
	csrf := csrfOf(t, c, base, "/ui/signin")
	return post(t, c, base, "/ui/signin", url.Values{"csrf": {csrf}, "token": {token}, "next": {"/ui/runs"}})
}

// sessionCookie signs in from 127.0.0.1 and returns the vmcp_session value.
func sessionCookie(t *testing.T, base string) string {
	t.Helper()
	c := httpFrom(t, "127.0.0.1")
	if code, body, _ := signIn(t, c, base, netToken); code != http.StatusSeeOther {
		t.Fatalf("sign-in = %d; want 303\n%s", code, body)
	}
	u, _ := url.Parse(base + "/ui/")
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "vmcp_session" {
			return ck.Value
		}
	}
	t.Fatal("sign-in set no vmcp_session cookie")
	return ""
}

// stream is a raw GET /ui/events on its own connection.
type stream struct {
	conn net.Conn
	r    *bufio.Reader
	body io.Reader // a served stream's events
}

func openStream(t *testing.T, base, cookie string) *stream {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET /ui/events HTTP/1.1\r\nHost: localhost\r\nCookie: vmcp_session=%s\r\n\r\n", cookie)
	return &stream{conn: conn, r: bufio.NewReader(conn)}
}

// status reads the stream's response head within wait: its status and,
// for a refusal, its body; answered is false when nothing came.
func (s *stream) status(wait time.Duration) (code int, body string, answered bool) {
	s.conn.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(s.r, nil)
	if err != nil {
		return 0, err.Error(), false
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
	}
	s.body = resp.Body
	return resp.StatusCode, body, true
}

// ended reads a served stream to its end within wait.
func (s *stream) ended(wait time.Duration) ([]byte, error) {
	s.conn.SetReadDeadline(time.Now().Add(wait))
	return io.ReadAll(s.body)
}

// healthz GETs /healthz on a fresh connection from 127.0.0.1.
func healthz(t *testing.T, base string, wait time.Duration) (int, bool) {
	t.Helper()
	k := testenv.DialRaw(t, strings.TrimPrefix(base, "http://"))
	defer k.Close()
	k.Get(t, "/healthz")
	return k.Response(t, wait)
}

// TestConsoleStreamsLeaveConnections: with server.maxConnections 64, one
// session's 7th event stream gets 429, and of 80 more streams (six per
// session) only those up to server.console.maxEventStreams (a quarter of
// 64) are served; the rest get 503 naming the setting and their
// connections are closed. /healthz and an MCP call are still answered.
// Before the fix the first 64 streams took every connection and neither
// /healthz nor the MCP call was answered at all.
func TestConsoleStreamsLeaveConnections(t *testing.T) {
	base := startNetVMCP(t, "  maxConnections: 64\n  maxConnectionsPerClient: 64")
	const perSession, total = 6, 16 // the defaults (64/4)

	first := sessionCookie(t, base)
	for i := range perSession {
		if code, body, ok := openStream(t, base, first).status(30 * time.Second); code != 200 {
			t.Fatalf("stream %d of one session = %d %q (answered %v); want 200", i+1, code, body, ok)
		}
	}
	code, body, ok := openStream(t, base, first).status(30 * time.Second)
	if code != http.StatusTooManyRequests || !strings.Contains(body, "server.console.maxEventStreamsPerSession") {
		t.Errorf("a session's stream %d = %d %q (answered %v); want 429 naming server.console.maxEventStreamsPerSession", perSession+1, code, body, ok)
	}

	var cookies []string
	for range 80 / perSession {
		cookies = append(cookies, sessionCookie(t, base))
	}
	streams := make([]*stream, 80)
	for i := range streams {
		streams[i] = openStream(t, base, cookies[i%len(cookies)])
	}
	type answer struct {
		code int
		body string
		ok   bool
	}
	answers := make([]answer, len(streams))
	var wg sync.WaitGroup
	for i, s := range streams {
		wg.Go(func() {
			code, body, ok := s.status(30 * time.Second)
			answers[i] = answer{code, body, ok}
		})
	}
	wg.Wait()
	served, refused := 0, 0
	for i, a := range answers {
		switch {
		case a.code == 200:
			served++
		case a.code == http.StatusServiceUnavailable && strings.Contains(a.body, "server.console.maxEventStreams"):
			refused++
			if b, err := io.ReadAll(streams[i].r); err != nil {
				t.Errorf("a refused stream's connection was not closed: %q, %v", b, err)
			}
		default:
			t.Errorf("stream %d = %d %q (answered %v); want 200, or 503 naming server.console.maxEventStreams", i, a.code, a.body, a.ok)
		}
	}
	if served != total-perSession || refused != 80-served {
		t.Errorf("of 80 streams %d were served and %d refused; want %d served (maxEventStreams %d less the %d open) and the rest refused", served, refused, total-perSession, total, perSession)
	}

	if code, ok := healthz(t, base, 30*time.Second); code != 200 {
		t.Errorf("GET /healthz with the streams open = %d (answered %v); want 200", code, ok)
	}
	mc := testenv.HTTPClientHeaders(t, base+"/mcp", map[string]string{"Authorization": "Bearer " + netToken})
	if res := mustCall(t, mc, "quick", nil); res.IsError || !strings.Contains(testenv.ResultText(res), "hello") {
		t.Errorf("an MCP call with the streams open = %s; want hello", testenv.ResultText(res))
	}
}

// TestSlowClientsCannotHoldTheListener: one address holds at most
// server.maxConnectionsPerClient connections (the next gets 429 naming the
// setting, and is closed), another address is served meanwhile, a slot is
// given back when a connection closes, and a body trickled a byte at a
// time is cut off with 408 after server.bodyTimeout and its connection
// closed. Before the fix the 9th connection waited unserved.
func TestSlowClientsCannotHoldTheListener(t *testing.T) {
	base := startNetVMCP(t, "  maxConnections: 64\n  maxConnectionsPerClient: 8\n  bodyTimeout: 2s")
	addr := strings.TrimPrefix(base, "http://")
	var held []*testenv.RawConn
	for i := range 8 {
		k := testenv.DialRaw(t, addr)
		k.Get(t, "/healthz")
		if code, ok := k.Response(t, 30*time.Second); code != 200 {
			t.Fatalf("connection %d: GET /healthz = %d (answered %v); want 200", i+1, code, ok)
		}
		held = append(held, k)
	}

	over := testenv.DialRaw(t, addr)
	over.Get(t, "/healthz")
	b, err := over.ReadToClose(30 * time.Second)
	if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 429 ") || !strings.Contains(string(b), "server.maxConnectionsPerClient") {
		t.Errorf("a 9th connection from 127.0.0.1 over maxConnectionsPerClient 8 = %q, %v; want 429 naming server.maxConnectionsPerClient, then closed", b, err)
	}

	other := httpFrom(t, "127.0.0.2")
	if code, _, _ := get(t, other, base, "/healthz"); code != 200 {
		t.Errorf("GET /healthz from 127.0.0.2 while 127.0.0.1 is at its cap = %d; want 200", code)
	}

	held[0].Close()
	held[1].Close()
	waitFor(t, "a slot of 127.0.0.1 to be given back", func() bool {
		k := testenv.DialRaw(t, addr)
		defer k.Close()
		k.Get(t, "/healthz")
		code, _ := k.Response(t, 30*time.Second)
		return code == 200
	})

	// With the token the body is cut off with 408; without it the request
	// is refused (401) before its body is read, and net/http's draining of
	// that body must not outlast bodyTimeout either.
	for _, tt := range []struct{ auth, want string }{
		{"Authorization: Bearer " + netToken + "\r\n", "HTTP/1.1 408 "},
		{"", "HTTP/1.1 401 "},
	} {
		if b, err := trickle(t, addr, tt.auth); err != nil || !strings.HasPrefix(string(b), tt.want) {
			t.Errorf("a trickled body (%q) = %q, %v; want %q and the connection closed", tt.auth, b, err, tt.want)
		}
	}
}

// trickle POSTs /mcp a body of 1000 bytes, one byte every 300 ms (five
// minutes in all), and reads what comes back until the server closes the
// connection or a minute has passed.
func trickle(t *testing.T, addr, auth string) ([]byte, error) {
	t.Helper()
	slow, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	io.WriteString(slow, "POST /mcp HTTP/1.1\r\nHost: localhost\r\n"+auth+"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			time.Sleep(300 * time.Millisecond)
			if _, err := io.WriteString(slow, " "); err != nil {
				return
			}
		}
	}()
	slow.SetReadDeadline(time.Now().Add(60 * time.Second))
	return io.ReadAll(slow)
}

// TestSignOutEndsSessionAndSigninIsThrottled: after sign-out the old
// cookie gets the sign-in page and 401, and the session's open event
// stream ends; after server.console.signinFailures wrong tokens from one
// address, sign-in from there gets 429 with Retry-After (the right token
// too), while another address signs in. Before the fix the old cookie
// kept working and sign-in was never refused.
func TestSignOutEndsSessionAndSigninIsThrottled(t *testing.T) {
	base := startNetVMCP(t, "  console: {signinFailures: 5, signinLockout: 10m}")
	c := httpFrom(t, "127.0.0.1")
	if code, body, _ := signIn(t, c, base, netToken); code != http.StatusSeeOther {
		t.Fatalf("sign-in = %d; want 303\n%s", code, body)
	}
	u, _ := url.Parse(base + "/ui/")
	old := c.Jar.Cookies(u)
	cookie := ""
	for _, ck := range old {
		if ck.Name == "vmcp_session" {
			cookie = ck.Value
		}
	}
	live := openStream(t, base, cookie)
	if code, body, ok := live.status(30 * time.Second); code != 200 {
		t.Fatalf("GET /ui/events signed in = %d %q (answered %v); want 200", code, body, ok)
	}
	csrf := csrfOf(t, c, base, "/ui/runs")
	if code, body, _ := post(t, c, base, "/ui/signout", url.Values{"csrf": {csrf}}); code != http.StatusSeeOther {
		t.Fatalf("sign-out = %d; want 303\n%s", code, body)
	}
	if b, err := live.ended(30 * time.Second); err != nil {
		t.Errorf("the session's event stream after sign-out: %q, %v; want it ended", b, err)
	}

	replay := httpFrom(t, "127.0.0.1")
	replay.Jar.SetCookies(u, old)
	if code, _, resp := get(t, replay, base, "/ui/runs"); code != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/ui/signin") {
		t.Errorf("GET /ui/runs with the cookie of a signed-out session = %d (Location %q); want 303 to /ui/signin", code, resp.Header.Get("Location"))
	}
	if code, _, _ := get(t, replay, base, "/ui/events"); code != http.StatusUnauthorized {
		t.Errorf("GET /ui/events with the cookie of a signed-out session = %d; want 401", code)
	}

	for i := range 5 {
		if code, _, _ := signIn(t, c, base, "wrong-"+fmt.Sprint(i)); code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d = %d; want 401", i+1, code)
		}
	}
	for _, tok := range []string{"wrong-again", netToken} {
		code, body, resp := signIn(t, c, base, tok)
		if code != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "Too many failed sign-ins") {
			t.Errorf("sign-in with %q after 5 failures = %d (Retry-After %q); want 429 with Retry-After and the reason\n%s", tok, code, resp.Header.Get("Retry-After"), body)
		}
	}
	if code, body, _ := signIn(t, httpFrom(t, "127.0.0.2"), base, netToken); code != http.StatusSeeOther {
		t.Errorf("sign-in from 127.0.0.2 while 127.0.0.1 is throttled = %d; want 303\n%s", code, body)
	}
}
