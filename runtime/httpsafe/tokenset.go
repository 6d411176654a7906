package httpsafe

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"
)

// TokenSet holds the SHA-256 digests of the configured tokens, for
// comparisons in constant time (see the top of auth.go). Blank tokens are
// dropped, so they match nothing. Both Auth (the bearer header) and the
// web console's sign-in page check tokens with it.
type TokenSet struct {
	digests [][sha256.Size]byte
}

// NewTokenSet returns the set of the non-blank tokens.
func NewTokenSet(tokens []string) *TokenSet {
	s := &TokenSet{}
	for _, t := range tokens {
		if strings.TrimSpace(t) != "" {
			s.digests = append(s.digests, sha256.Sum256([]byte(t)))
		}
	}
	return s
}

// Match reports whether token (surrounding spaces trimmed) is one of the
// set. Every digest is compared, whichever matches.
func (s *TokenSet) Match(token string) bool {
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	match := 0
	for i := range s.digests {
		match |= subtle.ConstantTimeCompare(got[:], s.digests[i][:])
	}
	return match == 1
}
