package console

// Sign-in, the session cookie and CSRF tokens.
//
// With tokens configured, every console page but the sign-in page and the
// assets needs the session cookie. GET /ui/signin shows a form; POST
// /ui/signin checks the token in constant time (httpsafe.TokenSet),
// stores a session server-side (sessions.go) and sets the cookie
// vmcp_session to the session's random id. The session keeps the scopes
// of the token signed in with: as in the API, reading runs needs run and
// cancelling one admin (httpsafe.Allowed, with the scopes put into the
// request's context). POST /ui/signout deletes the session, so its cookie
// stops working at once. Failed sign-ins are throttled per client
// address (sessions.go): past Limits.SigninFailures, 429 with Retry-After.
//
// The cookie carries no token material and is worth nothing to anyone but
// this process; a restart signs everyone out. The session holds the
// identity of the token signed in with (httpsafe.Identity: its subject
// and scopes), which the request's context then carries
// (httpsafe.WithIdentity), so the console reads and cancels the runs the
// API would let the token read and cancel (the caller's own; every run
// for admin). It is HttpOnly (no script can read it), SameSite=Strict (no
// other site's page can send it), Path=/ui, and Secure when the request
// came over TLS. A session lasts Limits.SessionTTL.
//
// CSRF: every state-changing request (sign-in, sign-out, cancel) carries a
// token in the form field "csrf" or the X-CSRF-Token header:
//
//	csrf = HMAC-SHA256(key, "csrf." + vmcp_csrf cookie + "." + vmcp_session cookie)
//
// key is 32 random bytes made when the console starts. vmcp_csrf is a
// random value that any page sets when the browser has none (also without
// tokens, and before sign-in, so the sign-in form is protected too). A
// page of another origin can neither read the cookies nor compute the
// HMAC, so it cannot forge the token; SameSite=Strict and the listener's
// Origin check are two more walls.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
)

const (
	sessionCookie = "vmcp_session"
	csrfCookie    = "vmcp_csrf"
	csrfField     = "csrf"
	csrfHeader    = "X-CSRF-Token"
)

type authenticator struct {
	tokens   *httpsafe.TokenSet // nil: no sign-in needed
	key      []byte
	now      func() time.Time
	ttl      time.Duration
	sessions sessionTable
	failed   throttle
}

func newAuthenticator(tokens []httpsafe.Token, l Limits) (*authenticator, error) {
	a := &authenticator{key: make([]byte, 32), now: time.Now, ttl: l.SessionTTL,
		sessions: sessionTable{byID: map[string]session{}},
		failed:   throttle{limit: l.SigninFailures, window: l.SigninLockout, byClient: map[string]failures{}}}
	if _, err := rand.Read(a.key); err != nil {
		return nil, err
	}
	if len(tokens) > 0 {
		a.tokens = httpsafe.NewTokenSet(tokens)
	}
	return a, nil
}

func (a *authenticator) enabled() bool { return a.tokens != nil }

func (a *authenticator) mac(parts ...string) string {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte(strings.Join(parts, ".")))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func randomString() string {
	b := make([]byte, 18)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// newSession stores a session for the identity of a token and returns
// its cookie value.
func (a *authenticator) newSession(who httpsafe.Identity) string {
	now := a.now()
	return a.sessions.add(who, now, now.Add(a.ttl))
}

// session reads the request's session cookie: its id and identity, and
// whether it names a session that has not ended. Without tokens every
// request is the local operator (and the id is "").
func (a *authenticator) session(r *http.Request) (string, httpsafe.Identity, bool) {
	if !a.enabled() {
		return "", httpsafe.LocalOperator, true
	}
	id := cookieValue(r, sessionCookie)
	if id == "" {
		return "", httpsafe.Identity{}, false
	}
	s, ok := a.sessions.get(id, a.now())
	if !ok {
		return "", httpsafe.Identity{}, false
	}
	return id, s.id, true
}

// signedIn reports whether the request has a valid session.
func (a *authenticator) signedIn(r *http.Request) bool {
	_, _, ok := a.session(r)
	return ok
}

func cookieValue(r *http.Request, name string) string {
	if ck, err := r.Cookie(name); err == nil {
		return ck.Value
	}
	return ""
}

func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/ui", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}

// csrfToken returns the CSRF token for the browser that sent r, first
// giving it a vmcp_csrf cookie when it has none (the cookie is then also
// put on r, so the token matches what the browser sends next).
func (a *authenticator) csrfToken(w http.ResponseWriter, r *http.Request) string {
	nonce := cookieValue(r, csrfCookie)
	if nonce == "" {
		nonce = randomString()
		setCookie(w, r, csrfCookie, nonce, 0)
		r.AddCookie(&http.Cookie{Name: csrfCookie, Value: nonce})
	}
	return a.mac("csrf", nonce, cookieValue(r, sessionCookie))
}

// validCSRF checks the request's CSRF token against its cookies.
func (a *authenticator) validCSRF(r *http.Request) bool {
	nonce := cookieValue(r, csrfCookie)
	if nonce == "" {
		return false
	}
	got := r.Header.Get(csrfHeader)
	if got == "" {
		got = r.PostFormValue(csrfField)
	}
	want := a.mac("csrf", nonce, cookieValue(r, sessionCookie))
	return subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// signedIn wraps a handler that needs a session. A page asked for
// without one is redirected to the sign-in page (which brings the browser
// back afterwards); fragments, event streams and POSTs get 401. A POST
// also needs its CSRF token (403 otherwise). The session's scopes go into
// the request's context, and every page needs the run scope (reading
// runs and workflows).
func (c *Console) signedIn(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, who, ok := c.auth.session(r)
		if ok && c.auth.enabled() {
			r = r.WithContext(withSession(httpsafe.WithIdentity(r.Context(), who), id))
		}
		if !ok {
			if r.Method == http.MethodGet && isPage(r.URL.Path) {
				http.Redirect(w, r, "/ui/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte("not signed in: open /ui/signin and sign in with a token from server.auth.tokens\n"))
			return
		}
		if r.Method == http.MethodPost && !c.auth.validCSRF(r) {
			c.errorPage(w, r, http.StatusForbidden, "This form's CSRF token is missing or stale (the server may have restarted). Reload the page and try again.")
			return
		}
		if r.URL.Path != "/ui/signout" && !httpsafe.Allowed(r.Context(), httpsafe.ScopeRun) {
			c.errorPage(w, r, http.StatusForbidden, httpsafe.ForbiddenMessage(httpsafe.ScopeRun, "The console (reading runs)"))
			return
		}
		h(w, r)
	}
}

// isPage reports whether path is a full page (worth a redirect to the
// sign-in page), not a fragment or an event stream.
func isPage(path string) bool {
	switch {
	case path == "/ui/events", strings.HasSuffix(path, "/row"), strings.HasSuffix(path, "/live"):
		return false
	}
	return true
}

// safeNext is the page to go to after sign-in: a console path, never
// another site ("//evil.example" and "/\evil" are not paths of ours) nor
// another path of the listener ("/ui/../api", "/ui/%2e%2e/api": the path
// is held to the prefix once its dot segments are resolved, as
// http.Redirect and browsers resolve them).
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix) || strings.ContainsAny(next, "\\") || strings.HasPrefix(next, "//") {
		return "/ui/runs"
	}
	u, err := url.Parse(next)
	if err != nil || u.Host != "" || u.Scheme != "" || !strings.HasPrefix(path.Clean(u.Path)+"/", Prefix) {
		return "/ui/runs"
	}
	return next
}

type signinData struct {
	Next    string
	Problem string
}

func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if !c.auth.enabled() {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	c.full(w, r, http.StatusOK, "signin.html", "Sign in", "", signinData{Next: next})
}

func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.PostFormValue("next"))
	if !c.auth.enabled() {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	if !c.auth.validCSRF(r) {
		c.full(w, r, http.StatusForbidden, "signin.html", "Sign in", "", signinData{Next: next,
			Problem: "The sign-in form was stale (its CSRF token did not match). Try again."})
		return
	}
	client := httpsafe.ClientKeyOf(r.RemoteAddr)
	if wait, blocked := c.auth.failed.blocked(client, c.auth.now()); blocked {
		secs := int((wait + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		c.full(w, r, http.StatusTooManyRequests, "signin.html", "Sign in", "", signinData{Next: next,
			Problem: fmt.Sprintf("Too many failed sign-ins from %s (server.console.signinFailures is %d). Try again in %d s.", client, c.auth.failed.limit, secs)})
		return
	}
	who, ok := c.auth.tokens.Lookup(r.PostFormValue("token"))
	if !ok {
		c.auth.failed.fail(client, c.auth.now())
		c.log.Warn("console: sign-in with a wrong token", "remote", r.RemoteAddr)
		c.full(w, r, http.StatusUnauthorized, "signin.html", "Sign in", "", signinData{Next: next,
			Problem: "That token is not one of server.auth.tokens."})
		return
	}
	if !who.Allowed(httpsafe.ScopeRun) {
		c.full(w, r, http.StatusForbidden, "signin.html", "Sign in", "", signinData{Next: next,
			Problem: httpsafe.ForbiddenMessage(httpsafe.ScopeRun, "The console (reading runs)")})
		return
	}
	c.auth.failed.succeed(client)
	setCookie(w, r, sessionCookie, c.auth.newSession(who), int(c.auth.ttl/time.Second))
	// A new CSRF nonce as well: a token seen before sign-in is not valid after.
	setCookie(w, r, csrfCookie, randomString(), 0)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) signout(w http.ResponseWriter, r *http.Request) {
	if id, _, ok := c.auth.session(r); ok && id != "" {
		c.auth.sessions.end(id)
		c.events.endOwner(id)
	}
	setCookie(w, r, sessionCookie, "", -1)
	setCookie(w, r, csrfCookie, "", -1)
	http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
}
