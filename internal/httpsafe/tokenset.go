package httpsafe

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"
)

// TokenSet holds the SHA-256 digests of the configured tokens and their
// scopes, for lookups in constant time (see the top of auth.go). Blank
// tokens are dropped, so they match nothing. Both Auth (the bearer
// header) and the web console's sign-in page check tokens with it.
type TokenSet struct {
	digests [][sha256.Size]byte
	ids     []Identity
}

// NewTokenSet returns the set of the non-blank tokens.
func NewTokenSet(tokens []Token) *TokenSet {
	s := &TokenSet{}
	for _, t := range tokens {
		if strings.TrimSpace(t.Value) != "" {
			s.digests = append(s.digests, sha256.Sum256([]byte(t.Value)))
			s.ids = append(s.ids, Identity{Subject: t.Subject(), Scopes: t.Scopes, Authenticated: true})
		}
	}
	return s
}

// Lookup returns the identity token authenticates (surrounding spaces
// trimmed), and whether it is one of the set. Every digest is compared,
// whichever matches.
func (s *TokenSet) Lookup(token string) (Identity, bool) {
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	match, which := 0, 0
	for i := range s.digests {
		eq := subtle.ConstantTimeCompare(got[:], s.digests[i][:])
		match |= eq
		which = subtle.ConstantTimeSelect(eq, i, which)
	}
	if match != 1 {
		return Identity{}, false
	}
	return s.ids[which], true
}

// HasSubject reports whether a static token has subject as its subject.
func (s *TokenSet) HasSubject(subject string) bool {
	for _, id := range s.ids {
		if id.Subject == subject {
			return true
		}
	}
	return false
}
