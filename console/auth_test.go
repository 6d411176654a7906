package console

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
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
	if s == nil || !s.HttpOnly || s.SameSite != http.SameSiteStrictMode || s.Path != "/ui" || s.Secure || s.MaxAge != int(DefaultSessionTTL/time.Second) {
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
	f.setClock(time.Now().Add(DefaultSessionTTL + time.Minute))
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

// TestRerunButtonNeedsTheCSRFToken: a finished run's page has a re-run
// button; without the page's CSRF token the post is refused and nothing
// runs; with it a new run of the same workflow and arguments starts, the
// browser goes to its page, which links back to the run it re-ran, as
// does its row in the runs list. A running run has no button.
func TestRerunButtonNeedsTheCSRFToken(t *testing.T) {
	f := newFixture(t)
	orig := f.run(t, "other", map[string]any{"who": "ada"})
	page := f.get(t, "/ui/runs/"+orig.ID)
	html := body(t, page)
	if !strings.Contains(html, `data-action="rerun"`) || !strings.Contains(html, `data-action="rerun-current"`) {
		t.Fatalf("a finished run's page has no re-run buttons:\n%s", html)
	}
	nonce := cookieNamed(page, csrfCookie)
	countRuns := func() int {
		runs, err := f.store.ListRuns(t.Context(), runtime.RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(runs)
	}
	for name, form := range map[string]url.Values{"no": {"current": {"false"}}, "a wrong": {"csrf": {"AAAA"}, "current": {"false"}}} {
		if res := f.post(t, "/ui/runs/"+orig.ID+"/rerun", form, nonce); res.StatusCode != http.StatusForbidden {
			t.Errorf("re-run with %s token = %d; want 403", name, res.StatusCode)
		}
	}
	if n := countRuns(); n != 1 {
		t.Fatalf("refused re-runs left %d runs; want 1 (none started)", n)
	}
	res := f.post(t, "/ui/runs/"+orig.ID+"/rerun", url.Values{"csrf": {csrfOf(t, html)}, "current": {"false"}}, nonce)
	loc := res.Header.Get("Location")
	newID, ok := strings.CutPrefix(loc, "/ui/runs/")
	if res.StatusCode != http.StatusSeeOther || !ok || newID == orig.ID {
		t.Fatalf("re-run = %d to %q; want a redirect to the new run's page", res.StatusCode, loc)
	}
	again, err := f.store.GetRun(t.Context(), newID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Trigger != "rerun:"+orig.ID || again.Workflow != "other" || again.Status != runtime.RunCompleted ||
		fmt.Sprint(again.Params) != fmt.Sprint(orig.Params) || fmt.Sprint(again.Output) != fmt.Sprint(orig.Output) {
		t.Errorf("re-run = trigger %q, %s %s, params %v, output %v; want rerun:%s, other completed, params %v, output %v",
			again.Trigger, again.Workflow, again.Status, again.Params, again.Output, orig.ID, orig.Params, orig.Output)
	}
	if html := body(t, f.get(t, loc)); !strings.Contains(html, `data-rerun-of="`+orig.ID+`"`) {
		t.Errorf("the re-run's page does not link to the run it re-ran:\n%s", html)
	}
	if html := body(t, f.get(t, "/ui/runs")); !strings.Contains(html, `re-run of <a href="/ui/runs/`+orig.ID+`">`) {
		t.Errorf("the runs list does not mark the re-run:\n%s", html)
	}
	id, done := f.start(t)
	if html := body(t, f.get(t, "/ui/runs/"+id)); strings.Contains(html, `data-action="rerun"`) {
		t.Errorf("a running run has a re-run button")
	}
	close(f.backend.release)
	<-done
}

// TestRerunOfAnOldVersionExplains: re-running a run of a version no
// longer served shows why, and offers the current version, instead of
// starting anything.
func TestRerunOfAnOldVersionExplains(t *testing.T) {
	f := newFixture(t)
	old := &runtime.Run{ID: "old-one", Workflow: "quick", WorkflowVersion: "v0", Status: runtime.RunCompleted,
		StartedAt: time.Now(), EndedAt: time.Now(), Steps: []runtime.StepState{{ID: "say", Status: runtime.StepCompleted}}}
	if err := f.store.CreateRun(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	page := f.get(t, "/ui/runs/old-one")
	html := body(t, page)
	res := f.post(t, "/ui/runs/old-one/rerun", url.Values{"csrf": {csrfOf(t, html)}, "current": {"false"}}, cookieNamed(page, csrfCookie))
	msg := body(t, res)
	if res.StatusCode != http.StatusConflict || !strings.Contains(msg, "it ran version v0 of workflow &#34;quick&#34;") || !strings.Contains(msg, "re-run it with the current version") {
		t.Errorf("re-run of an old version = %d:\n%s\nwant 409 naming the version and offering the current one", res.StatusCode, msg)
	}
	res = f.post(t, "/ui/runs/old-one/rerun", url.Values{"csrf": {csrfOf(t, html)}, "current": {"true"}}, cookieNamed(page, csrfCookie))
	if res.StatusCode != http.StatusSeeOther {
		t.Errorf("re-run on the current version = %d; want a redirect to the new run", res.StatusCode)
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
	// With run only: its own runs, with their cancel button; another
	// owner's run is not found, as an unknown id is, and cannot be
	// cancelled.
	_, jar = signIn(t, f, "reader", "/ui/runs")
	mine, _ := f.startAs(t, httpsafe.TokenSubject("reader"))
	page := f.get(t, "/ui/runs/"+mine, jar...)
	html := body(t, page)
	if page.StatusCode != 200 || !strings.Contains(html, `data-action="cancel"`) || !strings.Contains(html, `data-owner="`+httpsafe.TokenSubject("reader")+`"`) {
		t.Errorf("a run-scope session's own run page = %d; want its owner and a cancel button", page.StatusCode)
	}
	id, done := f.startAs(t, "someone-else")
	other := f.get(t, "/ui/runs/"+id, jar...)
	unknown := f.get(t, "/ui/runs/no-such-run", jar...)
	otherHTML := strings.ReplaceAll(body(t, other), id, "ID")
	if unknownHTML := strings.ReplaceAll(body(t, unknown), "no-such-run", "ID"); other.StatusCode != 404 || otherHTML != unknownHTML {
		t.Errorf("another owner's run page = %d %q; want 404 as for an unknown id, %q", other.StatusCode, otherHTML, unknownHTML)
	}
	res = f.post(t, "/ui/runs/"+id+"/cancel", url.Values{"csrf": {csrfOf(t, html)}}, jar...)
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("cancel of another owner's run with the run scope = %d; want 404", res.StatusCode)
	}
	close(f.backend.release)
	if run := <-done; run.Status != "completed" {
		t.Errorf("the run ended %s; a refused cancel must not stop it", run.Status)
	}
}
