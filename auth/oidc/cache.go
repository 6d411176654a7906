package oidc

// Verified tokens are remembered, so that an MCP client's every request
// with the same token does not pay for the signature again (RS256 costs
// about 55 µs on the shared 2-core VM, the cache lookup about 1 µs:
// bench/mediator BenchmarkPartTokenCheck). The key is the token's SHA-256,
// the value the Principal it authenticates; an entry is used as long as
// the token itself would pass (its exp plus Leeway), never longer, and
// only while the JWKS it was checked against is the one in use and no
// older than MaxAge (keyset.go): a key the issuer withdrew stops its
// cached tokens with the next fetch that sees it gone. The
// cache holds at most maxCached tokens: when it is full, expired entries
// are dropped, and if none are, the whole cache is (a flood of distinct
// valid tokens costs signature checks, nothing worse).
//
// Only tokens that passed every check are cached; a refused token is
// checked again each time (refusals are cheap before the signature, and
// a token with an unknown key id must see a rotated JWKS).

import (
	"crypto/sha256"
	"sync"
	"time"
)

// maxCached bounds the verified-token cache.
const maxCached = 4096

type tokenCache struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]cached
}

type cached struct {
	p     Principal
	gen   uint64    // the key set's generation it was verified with
	until time.Time // when it stops being used
}

func (c *tokenCache) get(key [sha256.Size]byte, gen uint64, now time.Time) (Principal, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok {
		return Principal{}, false
	}
	if e.gen != gen || now.After(e.until) {
		delete(c.m, key)
		return Principal{}, false
	}
	return e.p, true
}

// put remembers p for key until until.
func (c *tokenCache) put(key [sha256.Size]byte, p Principal, gen uint64, now, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[sha256.Size]byte]cached{}
	}
	if len(c.m) >= maxCached {
		for k, q := range c.m {
			if q.gen != gen || now.After(q.until) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxCached {
			clear(c.m)
		}
	}
	c.m[key] = cached{p: p, gen: gen, until: until}
}
