package credentials

// token-exchange (RFC 8693): a backend that must know on whose behalf vmcp
// calls it gets, on every tool call, a token of its own for the run's
// caller: the caller's OAuth access token (the subject token, which vmcp
// verified; httpsafe.SubjectToken) is exchanged at the backend's tokenURL
// for one whose audience is the backend. The caller's token itself is sent
// only to the token endpoint, never to the backend.
//
// The cache: one entry per caller token (by its SHA-256), holding the
// exchanged token until shortly (10 s, as golang.org/x/oauth2's cache)
// before it expires. Keyed by the token, not by its subject, an exchanged
// token serves only the caller token it was exchanged for: a run whose
// token has expired cannot borrow the exchange of a newer token of the
// same subject, and the token endpoint judges every caller token once.
// Each entry has its own lock, held while it fetches: concurrent calls
// with one token that find no fresh exchange wait for one and share it,
// while other callers' calls go on. A failed exchange is not cached; the
// next call asks again. Entries whose token expired are dropped when a
// new one is added, so the map holds at most the caller tokens of the
// last token lifetime.
//
// vmcp's own requests to the backend, which act for no caller (the
// session's initialize and tools/list, the event stream, closing the
// session), carry vmcp's own token: the client credentials grant of the
// same client at the same endpoint, for the same audience. A tool call
// without a caller's token (a run started with a static token, by a
// schedule, or resumed after a restart) is refused before it is sent
// (CheckCaller).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
)

// The RFC 8693 names.
const (
	grantTokenExchange   = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
)

// expiryMargin is how long before its expiry a token is fetched again
// (golang.org/x/oauth2's for client credentials).
const expiryMargin = 10 * time.Second

// ActsForCaller reports whether a backend whose credential is kind calls
// on behalf of the run's caller (and so needs the caller's token).
func ActsForCaller(kind string) bool { return kind == KindTokenExchange }

// CheckCaller returns an error naming the backend when ctx carries no
// caller's OAuth access token to exchange.
func CheckCaller(ctx context.Context, backend string) error {
	if httpsafe.SubjectToken(ctx) != "" {
		return nil
	}
	return fmt.Errorf("backend %q (auth: token-exchange) is called on behalf of the run's caller, and this run has no caller's OAuth access token to exchange: start it with a token from server.auth.oidc's issuer (a run started with a static token, by a schedule or over stdio, run by the Temporal executor, or resumed after a restart, has none)", backend)
}

// exchangeTransport sets the exchanged token of the request's caller, or
// vmcp's own token on requests that act for no caller.
type exchangeTransport struct {
	next              http.RoundTripper
	backend, tokenURL string
	clientID, secret  string
	audience          string
	scopes            []string
	client            *http.Client
	own               oauth2.TokenSource
	now               func() time.Time

	mu      sync.Mutex
	entries map[string]*exchanged // by the caller token's SHA-256
}

// exchanged is the token exchanged for one caller token.
type exchanged struct {
	mu  sync.Mutex // held while fetching
	tok string
	exp time.Time
}

// defaultLifetime is how long a token whose answer gives no expires_in is
// used.
const defaultLifetime = time.Minute

func (t *exchangeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var tok string
	var err error
	if subjectToken := httpsafe.SubjectToken(r.Context()); subjectToken != "" {
		tok, err = t.exchange(r.Context(), subjectToken)
	} else {
		var ot *oauth2.Token
		if ot, err = t.own.Token(); err == nil {
			tok = ot.AccessToken
		} else {
			err = &Error{Backend: t.backend, TokenURL: t.tokenURL, Kind: KindTokenExchange + ", vmcp's own token", Answer: answer(err)}
		}
	}
	if err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, err
	}
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+tok)
	return t.next.RoundTrip(r2)
}

// exchange returns the token cached for subjectToken, or exchanges
// subjectToken for a new one.
func (t *exchangeTransport) exchange(ctx context.Context, subjectToken string) (string, error) {
	sum := sha256.Sum256([]byte(subjectToken))
	e := t.entry(hex.EncodeToString(sum[:]))
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tok != "" && t.now().Add(expiryMargin).Before(e.exp) {
		return e.tok, nil
	}
	tok, exp, err := t.fetch(ctx, subjectToken)
	if err != nil {
		return "", &Error{Backend: t.backend, TokenURL: t.tokenURL, Kind: KindTokenExchange, Answer: err.Error()}
	}
	e.tok, e.exp = tok, exp
	return tok, nil
}

// entry returns the entry of a caller token's key, adding it (and
// dropping the expired ones) when there is none.
func (t *exchangeTransport) entry(key string) *exchanged {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[key]; ok {
		return e
	}
	now := t.now()
	for s, e := range t.entries {
		// TryLock: an entry being fetched is in use.
		if e.mu.TryLock() {
			stale := e.tok == "" || now.After(e.exp)
			e.mu.Unlock()
			if stale {
				delete(t.entries, s)
			}
		}
	}
	e := &exchanged{}
	t.entries[key] = e
	return e
}

// tokenResponse is the token endpoint's answer (RFC 8693 §2.2, RFC 6749
// §5.2 for errors).
type tokenResponse struct {
	AccessToken      string `json:"access_token"`
	IssuedTokenType  string `json:"issued_token_type"`
	TokenType        string `json:"token_type"`
	ExpiresIn        int64  `json:"expires_in"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// fetch makes one exchange request; its error is the endpoint's answer.
func (t *exchangeTransport) fetch(ctx context.Context, subjectToken string) (string, time.Time, error) {
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subjectToken},
		"subject_token_type":   {tokenTypeAccessToken},
		"requested_token_type": {tokenTypeAccessToken},
		"audience":             {t.audience},
		"resource":             {t.audience},
	}
	if len(t.scopes) > 0 {
		form.Set("scope", strings.Join(t.scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", time.Time{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 §2.3.1: the id and secret are form-encoded, then Basic.
	req.SetBasicAuth(url.QueryEscape(t.clientID), url.QueryEscape(t.secret))
	resp, err := t.client.Do(req)
	if err != nil {
		// The request's URL and form are not in a *url.Error's text
		// beyond the endpoint; the subject token and secret never are.
		return "", time.Time{}, fmt.Errorf("%s", strings.ReplaceAll(err.Error(), subjectToken, "[subject token]"))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var tr tokenResponse
	jerr := json.Unmarshal(body, &tr)
	switch {
	case resp.StatusCode != http.StatusOK && tr.Error != "" && tr.ErrorDescription != "":
		return "", time.Time{}, fmt.Errorf("%s: %s (%s)", tr.Error, tr.ErrorDescription, resp.Status)
	case resp.StatusCode != http.StatusOK && tr.Error != "":
		return "", time.Time{}, fmt.Errorf("%s (%s)", tr.Error, resp.Status)
	case resp.StatusCode != http.StatusOK || jerr != nil:
		b := strings.TrimSpace(string(body))
		if len(b) > 200 {
			b = b[:200] + "..."
		}
		return "", time.Time{}, fmt.Errorf("%s", strings.TrimSpace(resp.Status+" "+b))
	case tr.AccessToken == "":
		return "", time.Time{}, fmt.Errorf("the answer (%s) has no access_token", resp.Status)
	case tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer"):
		return "", time.Time{}, fmt.Errorf("the answer's token_type is %q, not Bearer", tr.TokenType)
	}
	life := defaultLifetime
	if tr.ExpiresIn > 0 {
		life = time.Duration(tr.ExpiresIn) * time.Second
	}
	return tr.AccessToken, t.now().Add(life), nil
}
