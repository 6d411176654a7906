package e2e

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Ports of the sign-in redirect test: 17850-17899.
const signinPortLo, signinPortHi = 17850, 17899

// TestSignInNextStaysOnTheConsole signs in to a real `vmcp run --transport
// http` console with a next that climbs out of /ui/ through dot segments,
// plain and escaped (as FuzzConsoleForms found): the browser is sent to
// the runs list, not to /api/v1/runs, and a next inside the console is
// kept.
func TestSignInNextStaysOnTheConsole(t *testing.T) {
	cfg := writeConfig(t, `
backends:
  tb: {command: ${TB}, args: [-record, ${REC}]}
server:
  auth: {tokens: [`+consoleToken+`]}
compositeTools:
  - name: quick
    description: Echo once
    steps:
      - {id: say, tool: tb.echo, arguments: {text: hello}}
`, filepath.Join(t.TempDir(), "rec.log"))
	mcpURL, _ := httpVMCPOn(t, cfg, signinPortLo, signinPortHi)
	base := strings.TrimSuffix(mcpURL, "/mcp")
	for next, want := range map[string]string{
		"/ui/../api/v1/runs":     "/ui/runs",
		"/ui/%2e%2e/api/v1/runs": "/ui/runs",
		"/ui/workflows":          "/ui/workflows",
	} {
		if got := signInTo(t, base, next); got != want {
			t.Errorf("signing in with next %q goes to %q; want %q", next, got, want)
		}
	}
}

// signInTo goes through the console's sign-in form with next and returns
// where the answer redirects.
func signInTo(t *testing.T, base, next string) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(base + "/ui/signin")
	if err != nil {
		t.Fatal(err)
	}
	page, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("the sign-in page (%d) has no CSRF field:\n%s", res.StatusCode, page)
	}
	form := url.Values{"csrf": {string(m[1])}, "token": {consoleToken}, "next": {next}}
	req, err := http.NewRequest(http.MethodPost, base+"/ui/signin", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, ck := range res.Cookies() {
		req.AddCookie(ck)
	}
	res, err = c.Do(req)
	if err != nil && !errors.Is(err, http.ErrUseLastResponse) {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in with next %q = %d; want 303", next, res.StatusCode)
	}
	return res.Header.Get("Location")
}
