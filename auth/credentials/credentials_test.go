package credentials

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// backendServer records the Authorization header of every request.
func backendServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key"))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// tokenServer is a token endpoint that checks the client's credentials
// and hands out numbered tokens that live expiresIn seconds.
type tokenServer struct {
	*httptest.Server
	hits      atomic.Int64
	expiresIn int
	release   chan struct{} // when set, each request waits on it
	form      chan map[string]string
}

func newTokenServer(t *testing.T, expiresIn int) *tokenServer {
	ts := &tokenServer{expiresIn: expiresIn, form: make(chan map[string]string, 100)}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := ts.hits.Add(1)
		if ts.release != nil {
			<-ts.release
		}
		id, secret, ok := r.BasicAuth()
		_ = r.ParseForm()
		ts.form <- map[string]string{"grant_type": r.Form.Get("grant_type"), "scope": r.Form.Get("scope"), "audience": r.Form.Get("audience"), "resource": r.Form.Get("resource")}
		w.Header().Set("Content-Type", "application/json")
		if !ok || id != "vmcp" || secret != "s3cret-value" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client","error_description":"Client authentication failed."}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("tok-%d", n), "token_type": "bearer", "expires_in": ts.expiresIn})
	}))
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, rt http.RoundTripper, url string, header ...string) error {
	t.Helper()
	return getWith(context.Background(), rt, url, header...)
}

// getWith GETs url through rt with ctx and the header pairs.
func getWith(ctx context.Context, rt http.RoundTripper, url string, header ...string) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func TestStaticKindsReplaceTheCallersHeader(t *testing.T) {
	srv, seen := backendServer(t)
	bearer, err := Transport("b", Spec{Kind: KindBearer, Token: "backend-token"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	header, err := Transport("h", Spec{Kind: KindHeader, Header: "x-api-key", Value: "k1"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := get(t, bearer, srv.URL, "Authorization", "Bearer the-callers-token"); err != nil {
		t.Fatal(err)
	}
	if err := get(t, header, srv.URL); err != nil {
		t.Fatal(err)
	}
	if got := seen(); len(got) != 2 || got[0] != "Bearer backend-token|" || got[1] != "|k1" {
		t.Errorf("the backend saw %q; want the bearer token (not the caller's), then the API key", got)
	}
}

// TestClientCredentialsFetchesOnceForConcurrentCalls: twenty calls at
// once, with no token yet, make one token request and all carry its
// token; later calls reuse it.
func TestClientCredentialsFetchesOnceForConcurrentCalls(t *testing.T) {
	srv, seen := backendServer(t)
	ts := newTokenServer(t, 3600)
	ts.release = make(chan struct{})
	rt, err := Transport("api", Spec{Kind: KindClientCredentials, TokenURL: ts.URL, ClientID: "vmcp", ClientSecret: "s3cret-value",
		Scopes: []string{"a", "b"}, Audience: "https://api.test/mcp"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- get(t, rt, srv.URL) }()
	}
	for ts.hits.Load() == 0 {
		runtime.Gosched() // the first caller's token request has not arrived yet
	}
	close(ts.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if err := get(t, rt, srv.URL); err != nil {
			t.Fatal(err)
		}
	}
	if n := ts.hits.Load(); n != 1 {
		t.Errorf("token endpoint hit %d times for 23 calls; want 1", n)
	}
	for _, s := range seen() {
		if s != "Bearer tok-1|" {
			t.Fatalf("the backend saw %q; want Bearer tok-1 on every call", s)
		}
	}
	form := <-ts.form
	if form["grant_type"] != "client_credentials" || form["scope"] != "a b" || form["audience"] != "https://api.test/mcp" || form["resource"] != "https://api.test/mcp" {
		t.Errorf("token request form = %v", form)
	}
}

// TestClientCredentialsRefreshesAnExpiringToken: a token that expires
// within the cache's margin (10 s) is fetched again on the next call.
func TestClientCredentialsRefreshesAnExpiringToken(t *testing.T) {
	srv, seen := backendServer(t)
	ts := newTokenServer(t, 5)
	rt, err := Transport("api", Spec{Kind: KindClientCredentials, TokenURL: ts.URL, ClientID: "vmcp", ClientSecret: "s3cret-value"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := get(t, rt, srv.URL); err != nil {
			t.Fatal(err)
		}
	}
	if got := seen(); len(got) != 2 || got[0] != "Bearer tok-1|" || got[1] != "Bearer tok-2|" {
		t.Errorf("the backend saw %q; want a fresh token on each call (each expires within 10 s)", got)
	}
}

func TestClientCredentialsErrorNamesTheBackendAndTheAnswer(t *testing.T) {
	srv, seen := backendServer(t)
	ts := newTokenServer(t, 3600)
	rt, err := Transport("api", Spec{Kind: KindClientCredentials, TokenURL: ts.URL, ClientID: "vmcp", ClientSecret: "wrong-secret-value"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = get(t, rt, srv.URL)
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("get = %v; want an *Error", err)
	}
	for _, want := range []string{`backend "api"`, ts.URL, "invalid_client", "Client authentication failed", "401"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "wrong-secret-value") {
		t.Errorf("error %q holds the client secret", err)
	}
	if len(seen()) != 0 {
		t.Error("the backend was called without a credential")
	}
}

func TestSpecProblems(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: KindBearer}, "auth.token is empty"},
		{Spec{Kind: KindHeader, Header: "X"}, "needs a name and a value"},
		{Spec{Kind: KindClientCredentials, TokenURL: "http://x"}, "needs tokenURL, clientID and clientSecret"},
		{Spec{}, "has no kind"},
		{Spec{Kind: "kerberos"}, `"kerberos" is not`},
	} {
		if _, err := Transport("b", tc.spec, nil, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Transport(%+v) = %v; want %q", tc.spec, err, tc.want)
		}
	}
}
