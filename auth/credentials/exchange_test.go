package credentials

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
)

// exchangeServer is a token endpoint with both grants: an exchange
// answers "x-<subject token>-<n>", client credentials "own-<n>".
type exchangeServer struct {
	*httptest.Server
	exchanges, own atomic.Int64
	expiresIn      int
	release        chan struct{}
	mu             sync.Mutex
	forms          []map[string]string
}

func newExchangeServer(t *testing.T, expiresIn int) *exchangeServer {
	es := &exchangeServer{expiresIn: expiresIn}
	es.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		form := map[string]string{}
		for k := range r.PostForm {
			form[k] = r.PostForm.Get(k)
		}
		es.mu.Lock()
		es.forms = append(es.forms, form)
		es.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if id, secret, _ := r.BasicAuth(); id != "vmcp" || secret != "s3cret-value" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client","error_description":"Client authentication failed."}`))
			return
		}
		var tok string
		switch form["grant_type"] {
		case grantTokenExchange:
			n := es.exchanges.Add(1)
			if es.release != nil {
				<-es.release
			}
			if form["subject_token"] == "revoked" {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"subject_token is invalid"}`))
				return
			}
			tok = fmt.Sprintf("x-%s-%d", form["subject_token"], n)
		case "client_credentials":
			tok = fmt.Sprintf("own-%d", es.own.Add(1))
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": es.expiresIn,
			"issued_token_type": tokenTypeAccessToken})
	}))
	t.Cleanup(es.Close)
	return es
}

func exchangeSpec(url string) Spec {
	return Spec{Kind: KindTokenExchange, TokenURL: url, ClientID: "vmcp", ClientSecret: "s3cret-value", Audience: "https://api.test/mcp"}
}

// asCaller is ctx as a request of subject authenticated with token.
func asCaller(subject, token string) context.Context {
	return httpsafe.WithSubjectToken(httpsafe.WithIdentity(context.Background(), httpsafe.Identity{Subject: subject}), token)
}

// getCtx is a call for the caller in ctx, its request carrying a
// caller's Authorization header that the transport must replace.
func getCtx(ctx context.Context, rt http.RoundTripper, url string) error {
	return getWith(ctx, rt, url, "Authorization", "Bearer the-callers-token")
}

// TestTokenExchangePerSubject: ten concurrent calls of alice make one
// exchange and share its token; bob gets his own; later calls reuse the
// cache; vmcp's own requests carry a client credentials token; the
// backend never sees a caller's token.
func TestTokenExchangePerSubject(t *testing.T) {
	srv, seen := backendServer(t)
	es := newExchangeServer(t, 3600)
	es.release = make(chan struct{})
	rt, err := Transport("api", exchangeSpec(es.URL), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	alice := asCaller("alice", "alice-token")
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- getCtx(alice, rt, srv.URL) }()
	}
	for es.exchanges.Load() == 0 {
		runtime.Gosched() // the first exchange has not arrived yet
	}
	close(es.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, ctx := range []context.Context{alice, asCaller("bob", "bob-token"), asCaller("bob", "bob-token"), context.Background()} {
		if err := getCtx(ctx, rt, srv.URL); err != nil {
			t.Fatal(err)
		}
	}
	if n := es.exchanges.Load(); n != 2 {
		t.Errorf("%d exchanges for alice's 11 calls and bob's 2; want 2", n)
	}
	got := seen()
	var want []string
	for range 11 {
		want = append(want, "Bearer x-alice-token-1|")
	}
	want = append(want, "Bearer x-bob-token-2|", "Bearer x-bob-token-2|", "Bearer own-1|")
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the backend saw %q;\nwant %q", got, want)
	}
	es.mu.Lock()
	defer es.mu.Unlock()
	f := es.forms[0]
	if f["grant_type"] != grantTokenExchange || f["subject_token"] != "alice-token" || f["subject_token_type"] != tokenTypeAccessToken ||
		f["requested_token_type"] != tokenTypeAccessToken || f["audience"] != "https://api.test/mcp" || f["resource"] != "https://api.test/mcp" {
		t.Errorf("exchange form = %v", f)
	}
	if own := es.forms[len(es.forms)-1]; own["grant_type"] != "client_credentials" || own["audience"] != "https://api.test/mcp" {
		t.Errorf("vmcp's own token request = %v", own)
	}
}

// TestTokenExchangeIsPerCallerToken: an exchange serves only the caller
// token it was made for. alice's new token (a later sign-in, or her old
// one refreshed) gets its own exchange, and a run still holding her old
// token keeps the old exchange: it never borrows the newer one.
func TestTokenExchangeIsPerCallerToken(t *testing.T) {
	srv, seen := backendServer(t)
	es := newExchangeServer(t, 3600)
	rt, err := Transport("api", exchangeSpec(es.URL), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"alice-old", "alice-new", "alice-old", "alice-new"} {
		if err := getCtx(asCaller("alice", tok), rt, srv.URL); err != nil {
			t.Fatal(err)
		}
	}
	want := "Bearer x-alice-old-1| Bearer x-alice-new-2| Bearer x-alice-old-1| Bearer x-alice-new-2|"
	if got := strings.Join(seen(), " "); got != want {
		t.Errorf("the backend saw %q;\nwant %q", got, want)
	}
}

// TestTokenExchangeRefreshesAnExpiringToken: a token that expires within
// the 10 s margin is exchanged again on the next call.
func TestTokenExchangeRefreshesAnExpiringToken(t *testing.T) {
	srv, seen := backendServer(t)
	es := newExchangeServer(t, 5)
	rt, err := Transport("api", exchangeSpec(es.URL), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := getCtx(asCaller("alice", "a"), rt, srv.URL); err != nil {
			t.Fatal(err)
		}
	}
	if got := seen(); len(got) != 2 || got[0] != "Bearer x-a-1|" || got[1] != "Bearer x-a-2|" {
		t.Errorf("the backend saw %q; want a new token on each call", got)
	}
}

func TestTokenExchangeErrorNamesTheBackendAndTheAnswer(t *testing.T) {
	srv, seen := backendServer(t)
	es := newExchangeServer(t, 3600)
	rt, err := Transport("api", exchangeSpec(es.URL), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = getCtx(asCaller("alice", "revoked"), rt, srv.URL)
	for _, want := range []string{`backend "api": no access token from ` + es.URL + " (auth: token-exchange)", "invalid_grant: subject_token is invalid (400 Bad Request)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %q holds the client secret", err)
	}
	// A failure is not cached: the next call asks again.
	_ = getCtx(asCaller("alice", "revoked"), rt, srv.URL)
	if n := es.exchanges.Load(); n != 2 {
		t.Errorf("%d exchanges after two refused ones; want 2", n)
	}
	if len(seen()) != 0 {
		t.Error("the backend was called without a credential")
	}
}

func TestCheckCaller(t *testing.T) {
	if err := CheckCaller(asCaller("alice", "a"), "api"); err != nil {
		t.Errorf("CheckCaller with a token = %v", err)
	}
	static := httpsafe.WithIdentity(context.Background(), httpsafe.Identity{Subject: "ops"})
	if err := CheckCaller(static, "api"); err == nil || !strings.Contains(err.Error(), `backend "api" (auth: token-exchange) is called on behalf of the run's caller, and this run has no caller's OAuth access token`) {
		t.Errorf("CheckCaller without a token = %v", err)
	}
	if _, err := Transport("b", Spec{Kind: KindTokenExchange, TokenURL: "http://x", ClientID: "c", ClientSecret: "s"}, nil, nil); err == nil || !strings.Contains(err.Error(), "needs tokenURL, clientID, clientSecret and audience") {
		t.Errorf("Transport without audience = %v", err)
	}
}
