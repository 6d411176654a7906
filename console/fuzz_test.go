package console

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/fuzzkit"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Console forms FuzzConsoleForms posts or queries (form % 4).
const (
	formSignIn = iota // POST /ui/signin with the input as the form
	formRuns          // GET /ui/runs?<input>: the runs list's filter
	formRow           // GET /ui/runs/{a run}/row?<input>: a live row's filter
	formCancel        // POST /ui/runs/{id}/cancel, the id and the form from the input
	formCount
)

// csrfMark in an input stands for the browser's valid CSRF token, which
// changes from process to process.
const csrfMark = "@csrf@"

// FuzzConsoleForms sends the console's forms and filters, in process
// (httptest), with arbitrary contents: the sign-in form (token, next,
// csrf), the runs list's filter (workflow, status, limit) on the page and
// on a live row, and the cancel form. A signed-in browser (admin) sends
// all but the sign-in. Whatever the input, the answer is never a 5xx; a
// redirect stays on the console (the sign-in's next is never another
// site nor another path of the listener); a value of the input that holds
// markup never comes back unescaped in an HTML answer (a plain-text error
// may quote it); and the body holds no Go rendering of values
// (fuzzkit.GoText).
//
// (The console has no form for answers to elicitations: questions are
// answered over MCP.)
//
//	go test -run '^$' -fuzz '^FuzzConsoleForms$' -fuzztime 30s -fuzzminimizetime 500x ./console
func FuzzConsoleForms(f *testing.F) {
	for _, s := range []struct {
		form       byte
		id, values string
	}{
		{formSignIn, "", "csrf=" + csrfMark + "&token=s3cret&next=%2Fui%2Fruns%3Fstatus%3Dfailed"},
		{formSignIn, "", "csrf=" + csrfMark + "&token=wrong&next=%2F%2Fevil.example"},
		{formSignIn, "", "csrf=" + csrfMark + "&token=s3cret&next=%2Fui%2F..%2F%2Fevil.example"},
		{formSignIn, "", "csrf=" + csrfMark + "&token=reader&next=/ui/runs/x"},
		{formSignIn, "", "csrf=stale&token=s3cret&next=%3Cb%3Ex"},
		{formRuns, "", "workflow=quick&status=completed&limit=5"},
		{formRuns, "", "status=nope&limit=0"},
		{formRuns, "", "workflow=%3Cscript%3E&limit=99999999999999999999"},
		{formRow, "", "workflow=failing&status=failed"},
		{formCancel, "run-1", "csrf=" + csrfMark},
		{formCancel, "nope", "csrf=" + csrfMark},
		{formCancel, "run-1", "csrf=AAAA"},
	} {
		f.Add(s.form, s.id, s.values)
	}
	fx := newFormsFixture(f)
	f.Fuzz(func(t *testing.T, form byte, id, values string) {
		if len(id)+len(values) > fuzzkit.MaxInput {
			return
		}
		req := fx.request(form%formCount, id, values)
		if req == nil {
			return
		}
		rec := httptest.NewRecorder()
		fx.f.c.ServeHTTP(rec, req)
		fx.check(t, form%formCount, rec, id+values, values)
	})
}

// formsFixture is FuzzConsoleForms's console, built once: tokens s3cret
// (every scope) and reader (read only), two finished runs (run-1 of
// quick, and one of failing), the sign-in
// page's CSRF cookie and token, and an admin's signed-in cookies and CSRF
// token.
type formsFixture struct {
	f                   *fixture
	signInCSRF, csrf    string
	signInJar, adminJar []*http.Cookie
	rowID               string
	// plain are the pages of each form for an empty input: a value
	// found in one of them is the page's own markup, not an echo.
	plain [formCount]string
}

func newFormsFixture(tb testing.TB) *formsFixture {
	tb.Helper()
	fx := &formsFixture{f: newScopedFixture(tb, []httpsafe.Token{
		{Value: "s3cret", Scopes: httpsafe.Scopes},
		{Value: "reader", Scopes: []httpsafe.Scope{httpsafe.ScopeRun}},
	})}
	fx.rowID = "run-1"
	if _, err := fx.f.engine.Run(context.Background(), "quick", nil, runtime.RunOptions{RunID: fx.rowID, OnEvent: fx.f.c.Observe}); err != nil {
		tb.Fatal(err)
	}
	fx.f.run(tb, "failing", map[string]any{"text": "<b>disk full</b>"})
	page := fx.f.get(tb, "/ui/signin")
	fx.signInCSRF = csrfOf(tb, body(tb, page))
	fx.signInJar = []*http.Cookie{cookieNamed(page, csrfCookie)}
	form := url.Values{"csrf": {fx.signInCSRF}, "token": {"s3cret"}}
	res := fx.f.post(tb, "/ui/signin", form, fx.signInJar...)
	for _, name := range []string{sessionCookie, csrfCookie} {
		c := cookieNamed(res, name)
		if c == nil {
			tb.Fatalf("signing in set no %s cookie (%d)", name, res.StatusCode)
		}
		fx.adminJar = append(fx.adminJar, c)
	}
	fx.csrf = csrfOf(tb, body(tb, fx.f.get(tb, "/ui/runs", fx.adminJar...)))
	for form := range byte(formCount) {
		rec := httptest.NewRecorder()
		fx.f.c.ServeHTTP(rec, fx.request(form, fx.rowID, ""))
		fx.plain[form] = rec.Body.String()
	}
	return fx
}

// request is the request of form with the input's id and values, or nil
// when the id cannot be a path segment of a request.
func (fx *formsFixture) request(form byte, id, values string) *http.Request {
	var method, path string
	jar, csrf := fx.adminJar, fx.csrf
	switch form {
	case formSignIn:
		method, path, jar, csrf = http.MethodPost, "/ui/signin", fx.signInJar, fx.signInCSRF
	case formRuns:
		method, path = http.MethodGet, "/ui/runs?"+values
	case formRow:
		method, path = http.MethodGet, "/ui/runs/"+url.PathEscape(fx.rowID)+"/row?"+values
	case formCancel:
		if id == "" {
			return nil
		}
		method, path = http.MethodPost, "/ui/runs/"+url.PathEscape(id)+"/cancel"
	}
	u, err := url.Parse("http://127.0.0.1" + path)
	if err != nil {
		return nil // not a URL a browser sends
	}
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(strings.ReplaceAll(values, csrfMark, url.QueryEscape(csrf)))
	}
	// The URL as parsed, not as a request line: a query may hold a space
	// the server's reader would refuse before the console sees it.
	req := httptest.NewRequest(method, "http://127.0.0.1/", body)
	req.URL, req.RequestURI = u, u.RequestURI()
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, c := range jar {
		req.AddCookie(c)
	}
	return req
}

// check holds an answer to form to FuzzConsoleForms's properties.
func (fx *formsFixture) check(t *testing.T, form byte, rec *httptest.ResponseRecorder, input, values string) {
	t.Helper()
	res := rec.Result()
	page := rec.Body.String()
	if res.StatusCode >= 500 {
		t.Fatalf("status %d for %q: %s", res.StatusCode, input, page)
	}
	if loc := res.Header.Get("Location"); loc != "" {
		if !strings.HasPrefix(loc, Prefix) || strings.HasPrefix(loc, "//") || strings.Contains(loc, "\\") {
			t.Errorf("redirect to %q, off the console", loc)
		}
	}
	html := strings.HasPrefix(res.Header.Get("Content-Type"), "text/html")
	if q, err := url.ParseQuery(values); err == nil && html {
		for _, vs := range q {
			for _, v := range vs {
				if strings.ContainsAny(v, "<>") && strings.Contains(page, v) && !strings.Contains(fx.plain[form], v) {
					t.Errorf("the value %q comes back unescaped", v)
				}
			}
		}
	}
	if g := fuzzkit.GoText(page, input); g != "" {
		t.Errorf("the answer renders Go's %q:\n%s", g, page)
	}
}
