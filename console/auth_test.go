package console

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/runtime/httpsafe"
)

// signIn goes through the sign-in page with token and returns the
// response of the POST and the browser's cookies after it.
func signIn(t *testing.T, f *fixture, token, next string) (*http.Response, []*http.Cookie) {
	t.Helper()
	form := f.get(t, "/ui/signin?next="+url.QueryEscape(next))
	csrf := csrfOf(t, body(t, form))
	nonce := cookieNamed(form, csrfCookie)
	if nonce == nil {
		t.Fatal("the sign-in page set no CSRF cookie")
	}
	res := f.post(t, "/ui/signin", url.Values{"csrf": {csrf}, "token": {token}, "next": {next}}, nonce)
	jar := []*http.Cookie{}
	for _, name := range []string{sessionCookie, csrfCookie} {
		if c := cookieNamed(res, name); c != nil {
			jar = append(jar, c)
		}
	}
	return res, jar
}

func TestWithoutTokensNoSignIn(t *testing.T) {
	f := newFixture(t)
	if res := f.get(t, "/ui/runs"); res.StatusCode != 200 {
		t.Errorf("/ui/runs without tokens = %d; want 200", res.StatusCode)
	}
	if res := f.get(t, "/ui/signin"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("/ui/signin without tokens = %d; want a redirect to the runs", res.StatusCode)
	}
}

func TestSignInSetsAStrictHttpOnlyCookie(t *testing.T) {
	f := newFixture(t, "s3cret", "other-token")
	// Without the cookie: pages redirect, fragments and streams get 401.
	res := f.get(t, "/ui/runs?status=failed")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/signin?next=%2Fui%2Fruns%3Fstatus%3Dfailed" {
		t.Fatalf("/ui/runs without a cookie = %d %s; want a redirect to sign-in", res.StatusCode, res.Header.Get("Location"))
	}
	for _, path := range []string{"/ui/events", "/ui/runs/x/row", "/ui/runs/x/live"} {
		if res := f.get(t, path); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without a cookie = %d; want 401", path, res.StatusCode)
		}
	}
	if res := f.get(t, "/ui/assets/console.css"); res.StatusCode != 200 {
		t.Errorf("the assets need no sign-in, got %d", res.StatusCode)
	}
	// A wrong token.
	res, jar := signIn(t, f, "guess", "/ui/runs")
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body(t, res), "not one of server.auth.tokens") || len(jar) != 0 {
		t.Errorf("a wrong token = %d, cookies %v; want 401 and no session", res.StatusCode, jar)
	}
	// The right one (the second of the list).
	res, jar = signIn(t, f, "other-token", "/ui/runs?status=failed")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/runs?status=failed" {
		t.Fatalf("sign-in = %d %s; want a redirect back", res.StatusCode, res.Header.Get("Location"))
	}
	s := cookieNamed(res, sessionCookie)
	if s == nil || !s.HttpOnly || s.SameSite != http.SameSiteStrictMode || s.Path != "/ui" || s.Secure || s.MaxAge != int(sessionTTL/time.Second) {
		t.Fatalf("session cookie = %+v; want HttpOnly, SameSite=Strict, Path=/ui, not Secure over plain HTTP", s)
	}
	if strings.Contains(s.Value, "other-token") {
		t.Errorf("the cookie carries the token")
	}
	if res := f.get(t, "/ui/runs", jar...); res.StatusCode != 200 {
		t.Errorf("/ui/runs with the cookie = %d; want 200", res.StatusCode)
	}
	// A forged or expired cookie is no good.
	forged := &http.Cookie{Name: sessionCookie, Value: s.Value[:len(s.Value)-2] + "xx"}
	if res := f.get(t, "/ui/runs", forged); res.StatusCode != http.StatusSeeOther {
		t.Errorf("a forged cookie = %d; want a redirect to sign-in", res.StatusCode)
	}
	f.setClock(time.Now().Add(sessionTTL + time.Minute))
	if res := f.get(t, "/ui/runs", jar...); res.StatusCode != http.StatusSeeOther {
		t.Errorf("an expired cookie = %d; want a redirect to sign-in", res.StatusCode)
	}
}

func TestSignInNeedsItsCSRFToken(t *testing.T) {
	f := newFixture(t, "s3cret")
	form := f.get(t, "/ui/signin")
	nonce := cookieNamed(form, csrfCookie)
	res := f.post(t, "/ui/signin", url.Values{"token": {"s3cret"}}, nonce)
	if res.StatusCode != http.StatusForbidden || cookieNamed(res, sessionCookie) != nil {
		t.Errorf("sign-in without the CSRF field = %d; want 403 and no session", res.StatusCode)
	}
	res = f.post(t, "/ui/signin", url.Values{"token": {"s3cret"}, "csrf": {csrfOf(t, body(t, form))}})
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("sign-in without the CSRF cookie = %d; want 403", res.StatusCode)
	}
}

func TestSecureCookieOverTLS(t *testing.T) {
	f := newFixture(t, "s3cret")
	form := f.get(t, "/ui/signin")
	req := httptest.NewRequest("POST", "https://127.0.0.1/ui/signin", strings.NewReader(url.Values{"token": {"s3cret"}, "csrf": {csrfOf(t, body(t, form))}}.Encode()))
	req.TLS = &tls.ConnectionState{}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res := f.do(t, req, cookieNamed(form, csrfCookie))
	if s := cookieNamed(res, sessionCookie); s == nil || !s.Secure {
		t.Errorf("over TLS the session cookie = %+v; want Secure", s)
	}
}

func TestSignInGoesOnlyToConsolePages(t *testing.T) {
	for next, want := range map[string]string{
		"/ui/runs/abc":         "/ui/runs/abc",
		"//evil.example/ui/":   "/ui/runs",
		"https://evil.example": "/ui/runs",
		"/ui/\\evil":           "/ui/runs",
		"/api/v1/runs":         "/ui/runs",
		"":                     "/ui/runs",
		// Dot segments, plain or escaped, that climb out of /ui/ (found
		// by FuzzConsoleForms: http.Redirect cleans the path, browsers
		// resolve %2e%2e).
		"/ui/../api/v1/runs":      "/ui/runs",
		"/ui/..//evil.example":    "/ui/runs",
		"/ui/%2e%2e/api/v1/runs":  "/ui/runs",
		"/ui/runs/../workflows":   "/ui/runs/../workflows",
		"/ui/runs?status=a/../..": "/ui/runs?status=a/../..",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q; want %q", next, got, want)
		}
	}
}

func TestSignOutEndsTheSession(t *testing.T) {
	f := newFixture(t, "s3cret")
	_, jar := signIn(t, f, "s3cret", "/ui/runs")
	page := body(t, f.get(t, "/ui/runs", jar...))
	res := f.post(t, "/ui/signout", url.Values{"csrf": {csrfOf(t, page)}}, jar...)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out = %d", res.StatusCode)
	}
	if s := cookieNamed(res, sessionCookie); s == nil || s.MaxAge >= 0 {
		t.Errorf("sign-out does not clear the session cookie: %+v", s)
	}
}

func TestCancelNeedsTheCSRFToken(t *testing.T) {
	f := newFixture(t)
	id, done := f.start(t)
	page := f.get(t, "/ui/runs/"+id)
	html := body(t, page)
	if !strings.Contains(html, `data-action="cancel"`) {
		t.Fatalf("a running run has no cancel button")
	}
	nonce := cookieNamed(page, csrfCookie)
	// No token, a wrong one, or another browser's: refused, still running.
	for name, form := range map[string]url.Values{"none": {}, "wrong": {"csrf": {"AAAA"}}} {
		if res := f.post(t, "/ui/runs/"+id+"/cancel", form, nonce); res.StatusCode != http.StatusForbidden {
			t.Errorf("cancel with %s token = %d; want 403", name, res.StatusCode)
		}
	}
	if res := f.post(t, "/ui/runs/"+id+"/cancel", url.Values{"csrf": {csrfOf(t, html)}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("cancel with a token but without its cookie = %d; want 403", res.StatusCode)
	}
	if run, _ := f.engine.Status(t.Context(), id); run.Status.Finished() {
		t.Fatalf("a refused cancel stopped the run: %s", run.Status)
	}
	res := f.post(t, "/ui/runs/"+id+"/cancel", url.Values{"csrf": {csrfOf(t, html)}}, nonce)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/runs/"+id {
		t.Fatalf("cancel = %d %s; want a redirect to the run", res.StatusCode, res.Header.Get("Location"))
	}
	select {
	case run := <-done:
		if run.Status != "cancelled" {
			t.Errorf("status after cancel = %s; want cancelled", run.Status)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not stop")
	}
	f.backend.mu.Lock()
	defer f.backend.mu.Unlock()
	if f.backend.cancelled != 1 {
		t.Errorf("the backend saw %d cancelled calls; want 1", f.backend.cancelled)
	}
}

func TestScopesLimitTheConsole(t *testing.T) {
	f := newScopedFixture(t, []httpsafe.Token{
		{Value: "reader", Scopes: []httpsafe.Scope{httpsafe.ScopeRun}},
		{Value: "author-only", Scopes: []httpsafe.Scope{httpsafe.ScopeAuthor}},
	})
	// Without the run scope there is nothing to see.
	res, jar := signIn(t, f, "author-only", "/ui/runs")
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body(t, res), "needs the run scope") || cookieNamed(res, sessionCookie) != nil {
		t.Errorf("sign-in without the run scope = %d, cookies %v; want 403 naming the scope", res.StatusCode, jar)
	}
	// With run only: the pages, but no cancel.
	_, jar = signIn(t, f, "reader", "/ui/runs")
	id, done := f.start(t)
	page := f.get(t, "/ui/runs/"+id, jar...)
	html := body(t, page)
	if page.StatusCode != 200 || strings.Contains(html, `data-action="cancel"`) || !strings.Contains(html, "needs a token with the admin scope") {
		t.Errorf("a run-scope session's run page = %d; want no cancel button and a note", page.StatusCode)
	}
	res = f.post(t, "/ui/runs/"+id+"/cancel", url.Values{"csrf": {csrfOf(t, html)}}, jar...)
	if msg := body(t, res); res.StatusCode != http.StatusForbidden || !strings.Contains(msg, "needs the admin scope") {
		t.Errorf("cancel with the run scope = %d; want 403 naming the admin scope", res.StatusCode)
	}
	close(f.backend.release)
	if run := <-done; run.Status != "completed" {
		t.Errorf("the run ended %s; a refused cancel must not stop it", run.Status)
	}
}
