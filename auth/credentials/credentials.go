package credentials

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// The kinds of credential.
const (
	KindBearer            = "bearer"
	KindHeader            = "header"
	KindClientCredentials = "client-credentials"
	KindTokenExchange     = "token-exchange"
)

// Spec is one backend's backends.<name>.auth.
type Spec struct {
	Kind string
	// Token is bearer's token.
	Token string
	// Header and Value are header's.
	Header, Value string
	// TokenURL, ClientID, ClientSecret, Scopes and Audience are
	// client-credentials' and token-exchange's (Audience is required for
	// token-exchange: the backend the exchanged token is for).
	TokenURL, ClientID, ClientSecret string
	Scopes                           []string
	Audience                         string
}

// Error is a credential that could not be obtained.
type Error struct {
	Backend, TokenURL string
	// Kind is the credential's kind (client-credentials when empty).
	Kind string
	// Answer is what the token endpoint said (its error code and
	// description, or the transport error).
	Answer string
}

func (e *Error) Error() string {
	kind := e.Kind
	if kind == "" {
		kind = KindClientCredentials
	}
	return fmt.Sprintf("backend %q: no access token from %s (auth: %s): %s", e.Backend, e.TokenURL, kind, e.Answer)
}

// tokenTimeout bounds one token request.
const tokenTimeout = 30 * time.Second

// Transport returns next wrapped so that every request carries the
// backend's credential. tokenClient makes the token requests (one with a
// 30 s timeout when nil).
func Transport(backend string, s Spec, next http.RoundTripper, tokenClient *http.Client) (http.RoundTripper, error) {
	if next == nil {
		next = http.DefaultTransport
	}
	switch s.Kind {
	case KindBearer:
		if strings.TrimSpace(s.Token) == "" {
			return nil, fmt.Errorf("backend %q: auth.token is empty", backend)
		}
		return &static{next: next, name: "Authorization", value: "Bearer " + s.Token}, nil
	case KindHeader:
		if s.Header == "" || s.Value == "" {
			return nil, fmt.Errorf("backend %q: auth kind header needs a name and a value", backend)
		}
		return &static{next: next, name: http.CanonicalHeaderKey(s.Header), value: s.Value}, nil
	case KindClientCredentials:
		if s.TokenURL == "" || s.ClientID == "" || s.ClientSecret == "" {
			return nil, fmt.Errorf("backend %q: auth kind client-credentials needs tokenURL, clientID and clientSecret", backend)
		}
		if tokenClient == nil {
			tokenClient = &http.Client{Timeout: tokenTimeout}
		}
		cc := clientcredentials.Config{ClientID: s.ClientID, ClientSecret: s.ClientSecret, TokenURL: s.TokenURL,
			Scopes: s.Scopes, AuthStyle: oauth2.AuthStyleInHeader}
		if s.Audience != "" {
			cc.EndpointParams = url.Values{"audience": {s.Audience}, "resource": {s.Audience}}
		}
		// The token source outlives every call: its requests use a
		// context of their own, bounded by tokenClient's timeout.
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, tokenClient)
		return &oauthTransport{next: next, backend: backend, tokenURL: s.TokenURL, src: cc.TokenSource(ctx)}, nil
	case KindTokenExchange:
		if s.TokenURL == "" || s.ClientID == "" || s.ClientSecret == "" || s.Audience == "" {
			return nil, fmt.Errorf("backend %q: auth kind token-exchange needs tokenURL, clientID, clientSecret and audience", backend)
		}
		if tokenClient == nil {
			tokenClient = &http.Client{Timeout: tokenTimeout}
		}
		cc := clientcredentials.Config{ClientID: s.ClientID, ClientSecret: s.ClientSecret, TokenURL: s.TokenURL,
			Scopes: s.Scopes, AuthStyle: oauth2.AuthStyleInHeader,
			EndpointParams: url.Values{"audience": {s.Audience}, "resource": {s.Audience}}}
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, tokenClient)
		return &exchangeTransport{next: next, backend: backend, tokenURL: s.TokenURL, clientID: s.ClientID, secret: s.ClientSecret,
			audience: s.Audience, scopes: s.Scopes, client: tokenClient, own: cc.TokenSource(ctx), now: time.Now,
			entries: map[string]*exchanged{}}, nil
	case "":
		return nil, fmt.Errorf("backend %q: auth has no kind (bearer, header, client-credentials or token-exchange)", backend)
	}
	return nil, fmt.Errorf("backend %q: auth kind %q is not bearer, header, client-credentials or token-exchange", backend, s.Kind)
}

// static sets one header.
type static struct {
	next        http.RoundTripper
	name, value string
}

func (t *static) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.Header.Set(t.name, t.value)
	return t.next.RoundTrip(r2)
}

// oauthTransport sets the cached access token.
type oauthTransport struct {
	next              http.RoundTripper
	backend, tokenURL string
	src               oauth2.TokenSource
}

func (t *oauthTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tok, err := t.src.Token()
	if err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, &Error{Backend: t.backend, TokenURL: t.tokenURL, Answer: answer(err)}
	}
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return t.next.RoundTrip(r2)
}

// answer is what the token endpoint said: its error code and description
// (RFC 6749 §5.2), else its status; or the transport error. It never holds
// the client secret (the request's Basic header is not in any of these).
func answer(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := ""
		if re.Response != nil {
			status = re.Response.Status
		}
		switch {
		case re.ErrorCode != "" && re.ErrorDescription != "":
			return fmt.Sprintf("%s: %s (%s)", re.ErrorCode, re.ErrorDescription, status)
		case re.ErrorCode != "":
			return fmt.Sprintf("%s (%s)", re.ErrorCode, status)
		}
		body := strings.TrimSpace(string(re.Body))
		if len(body) > 200 {
			body = body[:200] + "..."
		}
		return strings.TrimSpace(status + " " + body)
	}
	return err.Error()
}
