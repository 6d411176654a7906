package httpsafe

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Options configure Protect.
type Options struct {
	// Tokens are the accepted bearer tokens with their scopes; none
	// disables authentication.
	Tokens []Token
	// AllowedOrigins are browser origins allowed besides loopback ones.
	AllowedOrigins []string
	// AllowedHosts are Host names served on loopback connections besides
	// loopback ones.
	AllowedHosts []AllowedHost
	Limits       Limits
	// SelfAuthenticated, when set, reports the requests whose handler
	// authenticates them itself (the web console at /ui/, which takes the
	// token once on its sign-in page and then a cookie). They skip the
	// bearer check but not the Host, Origin and body checks.
	SelfAuthenticated func(*http.Request) bool
}

// Protect wraps next with, in order: the body's read deadline, the Host
// check, the Origin check, authentication (GET /healthz stays open), and
// the body limit. The order means a rebound or forged cross-site request
// is refused before its token is even looked at (and /healthz is no
// exception), an unauthenticated client cannot make the server buffer a
// body, and no body, refused or not, takes longer than BodyTimeout.
func Protect(opts Options, next http.Handler) http.Handler {
	h := LimitBody(opts.Limits, next)
	open := isHealthz
	if opts.SelfAuthenticated != nil {
		open = func(r *http.Request) bool { return isHealthz(r) || opts.SelfAuthenticated(r) }
	}
	h = Auth(opts.Tokens, open, h)
	h = CheckOrigin(opts.AllowedOrigins, h)
	return BoundBody(opts.Limits, CheckHost(opts.AllowedHosts, h))
}

func isHealthz(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path == "/healthz"
}

// CheckListen refuses to serve an unauthenticated HTTP listener on anything
// but loopback. addr is a host:port as given to --listen; an empty host
// (":8080") means every interface. insecure overrides the check.
func CheckListen(addr string, haveAuth, insecure bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %v", addr, err)
	}
	if haveAuth || insecure || isLoopbackHost(strings.Trim(host, "[]")) {
		return nil
	}
	where := host
	if where == "" {
		where = "every interface"
	}
	return fmt.Errorf("refusing to listen on %s (%s) without authentication: set server.auth.tokens, listen on 127.0.0.1, or pass --insecure", addr, where)
}
