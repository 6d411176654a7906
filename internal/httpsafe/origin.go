package httpsafe

// Origin validation. The MCP streamable HTTP transport specification asks
// servers to validate the Origin header of every request, because a web page
// on an attacker's domain can make the victim's browser reach a server on
// localhost (DNS rebinding). A request passes when it has no Origin header
// (not a browser), or when its origin is loopback (http or https to
// localhost, 127.0.0.0/8 or ::1, any port), or when it equals one of the
// configured origins exactly (scheme://host[:port], compared
// case-insensitively). Anything else, "null" included, gets 403.

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// CheckOrigin rejects requests whose Origin is neither loopback nor in
// allowed. Allowed entries are origins such as "https://app.example.com".
func CheckOrigin(allowed []string, next http.Handler) http.Handler {
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[strings.ToLower(strings.TrimSuffix(a, "/"))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || ok[strings.ToLower(origin)] || loopbackOrigin(origin) {
			next.ServeHTTP(w, r)
			return
		}
		httpError(w, http.StatusForbidden, "origin not allowed")
	})
}

func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

// isLoopbackHost reports whether host is "localhost" or a loopback IP.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
