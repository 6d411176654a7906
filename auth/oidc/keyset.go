package oidc

// The issuer's signing keys: its JWKS (jwks_uri), fetched once and cached.
//
// A token names its key (the JWS header's kid). A kid the cache has is
// verified with that key and no request is made. A kid the cache does not
// have means the issuer rotated its keys, or the token is forged: the set
// is fetched again, and the token checked against the new set. So that
// tokens with made-up key ids cannot turn vmcp into a load generator
// against the IdP, fetches are single-flight (callers that arrive while
// one is under way wait for it and share its answer) and at most one
// starts per MinRefresh: a caller that needs a fetch sooner waits for the
// next slot instead of failing, so a genuine rotation never fails a token
// (it is at most MinRefresh late), and a flood of forged key ids costs
// the IdP one request per MinRefresh. A set older than MaxAge is fetched
// again before it is used, so that a key the issuer withdrew stops
// working even if tokens keep naming it.
//
// A key verifies a token only if its use is "sig" (or unset) and, when it
// names an algorithm, that algorithm is the token's. A token without a
// kid is tried against every signing key.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// keySet is a cached JWKS; it implements go-oidc's KeySet.
type keySet struct {
	url        string
	client     *http.Client
	algs       []jose.SignatureAlgorithm
	minRefresh time.Duration
	maxAge     time.Duration
	now        func() time.Time
	sleep      func(context.Context, time.Duration) error // sleepCtx; tests fake it

	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetched time.Time     // when keys were fetched (zero: never)
	started time.Time     // when the last fetch started
	flight  chan struct{} // closed when the fetch under way ends; nil when none is
	err     error         // the last fetch's error
	fetches int           // fetches made (tests and metrics)
	gen     uint64        // counts the fetches that changed the set (the token cache's key)
	raw     []byte        // the last fetched set, to tell whether a fetch changed it
	waiting int           // callers waiting for a fetch under way (tests)
}

// maxJWKS bounds the JWKS document read.
const maxJWKS = 1 << 20

// VerifySignature checks the JWS raw against the issuer's keys and
// returns its payload.
func (s *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSigned(raw, s.algs)
	if err != nil {
		return nil, err
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("the token must have exactly one signature")
	}
	h := jws.Signatures[0].Header
	keys, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	if p, ok := verifyWith(jws, h, keys); ok {
		return p, nil
	}
	if keys, err = s.refresh(ctx, keys); err != nil {
		return nil, err
	}
	if p, ok := verifyWith(jws, h, keys); ok {
		return p, nil
	}
	if h.KeyID == "" {
		return nil, errors.New("no key of the issuer's JWKS verifies the signature")
	}
	return nil, fmt.Errorf("no key of the issuer's JWKS with key id %q verifies the signature", h.KeyID)
}

// verifyWith tries the keys that may have signed a token with header h.
func verifyWith(jws *jose.JSONWebSignature, h jose.Header, keys []jose.JSONWebKey) ([]byte, bool) {
	for _, k := range keys {
		if h.KeyID != "" && k.KeyID != h.KeyID {
			continue
		}
		if k.Use != "" && k.Use != "sig" || k.Algorithm != "" && k.Algorithm != h.Algorithm {
			continue
		}
		if !k.Valid() || !k.IsPublic() {
			continue
		}
		if p, err := jws.Verify(k); err == nil {
			return p, true
		}
	}
	return nil, false
}

// current returns the cached keys, fetching them first when there are
// none yet or they are older than maxAge.
func (s *keySet) current(ctx context.Context) ([]jose.JSONWebKey, error) {
	s.mu.Lock()
	keys, fetched := s.keys, s.fetched
	s.mu.Unlock()
	if !fetched.IsZero() && s.now().Sub(fetched) < s.maxAge {
		return keys, nil
	}
	return s.refresh(ctx, keys)
}

// refresh fetches the set again unless another caller did since stale
// was read (then it returns theirs), waiting for the fetch under way or
// for the next MinRefresh slot.
func (s *keySet) refresh(ctx context.Context, stale []jose.JSONWebKey) ([]jose.JSONWebKey, error) {
	for {
		s.mu.Lock()
		if !s.fetched.IsZero() && !sameKeys(s.keys, stale) {
			keys := s.keys
			s.mu.Unlock()
			return keys, nil
		}
		if f := s.flight; f != nil {
			s.waiting++
			s.mu.Unlock()
			select {
			case <-f:
			case <-ctx.Done():
				s.mu.Lock()
				s.waiting--
				s.mu.Unlock()
				return nil, ctx.Err()
			}
			s.mu.Lock()
			s.waiting--
			keys, err := s.keys, s.err
			s.mu.Unlock()
			if err != nil {
				return nil, err
			}
			return keys, nil
		}
		wait := s.minRefresh - s.now().Sub(s.started)
		if s.started.IsZero() || wait <= 0 {
			f := make(chan struct{})
			s.flight, s.started = f, s.now()
			s.fetches++
			s.mu.Unlock()
			keys, raw, err := s.fetch(ctx)
			s.mu.Lock()
			s.err = err
			if err == nil {
				s.keys, s.fetched = keys, s.now()
				if !bytes.Equal(raw, s.raw) {
					s.raw = raw
					s.gen++
				}
			}
			s.flight = nil
			close(f)
			s.mu.Unlock()
			if err != nil {
				return nil, err
			}
			return keys, nil
		}
		s.mu.Unlock()
		if err := s.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sameKeys reports whether a and b are the same fetched set (the same
// backing array: a fetch always makes a new one).
func sameKeys(a, b []jose.JSONWebKey) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// generation names the key set in use: it changes when a fetch brings a
// different set. ok is false when the set is older than maxAge (or there
// is none), so nothing verified with it should be trusted without a
// fresh look.
func (s *keySet) generation() (gen uint64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen, !s.fetched.IsZero() && s.now().Sub(s.fetched) < s.maxAge
}

// fetch reads the JWKS document and returns its keys and the keys' JSON.
// It does not use the caller's context for cancellation (the fetch is
// shared), only a timeout.
func (s *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, []byte, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("fetching the issuer's JWKS: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKS))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the issuer's JWKS %s: %v", s.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("fetching the issuer's JWKS %s: %s", s.url, resp.Status)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, nil, fmt.Errorf("the issuer's JWKS %s: %v", s.url, err)
	}
	// A key of a type go-jose does not know is skipped, not fatal: the
	// others still verify.
	keys := make([]jose.JSONWebKey, 0, len(set.Keys))
	for _, r := range set.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(r); err == nil {
			keys = append(keys, k)
		}
	}
	raw := make([][]byte, len(set.Keys))
	for i, k := range set.Keys {
		raw[i] = k
	}
	return keys, bytes.Join(raw, []byte{','}), nil
}

// fetchTimeout bounds one discovery or JWKS request.
const fetchTimeout = 10 * time.Second
