package httpsafe

// Host validation against DNS rebinding. A web page on attacker.example can
// rebind that name to 127.0.0.1 and then read from a server on loopback with
// the victim's browser: the browser thinks it talks to attacker.example, so
// the Origin check sees a same-origin request (no Origin header on a GET)
// and lets it through. What the browser cannot forge is the Host header,
// which carries the attacker's name. So a request that arrives on a loopback
// connection (the connection's local address, http.LocalAddrContextKey, is a
// loopback IP) must name a loopback host: "localhost", a loopback IP literal
// such as 127.0.0.1 or [::1], with or without a port, or one of the
// configured allowed hosts (server.allowedHosts: a reverse proxy on the same
// machine that keeps the public name, or a name from /etc/hosts).
//
// Connections that arrive on another interface are not checked: rebinding
// only reaches servers that the victim's own machine serves on loopback,
// and a listener beyond loopback needs tokens anyway (CheckListen). A
// request whose local address is unknown is checked, so that a handler
// served some other way fails closed.
//
// An allowed host is "name" (any port) or "name:port" (that port only);
// names are compared case-insensitively and without a trailing dot. IPv6
// literals are written in brackets, as in the Host header: "[fd00::1]:8080".

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// AllowedHost is one parsed server.allowedHosts entry.
type AllowedHost struct {
	// Name is lower-case, without brackets (an IPv6 literal) or trailing dot.
	Name string
	// Port is empty when any port is allowed.
	Port string
}

// String writes the entry back as host[:port], IPv6 literals in brackets.
func (h AllowedHost) String() string {
	name := h.Name
	if strings.Contains(name, ":") {
		name = "[" + name + "]"
	}
	if h.Port == "" {
		return name
	}
	return name + ":" + h.Port
}

// hostLabelsRE is a DNS name: dot-separated labels of letters, digits, '-'
// and '_' (seen in internal names), not starting or ending with '-'.
var hostLabelsRE = regexp.MustCompile(`^([a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$`)

// ParseAllowedHost parses a server.allowedHosts entry. The error says what is
// wrong with it, in words meant to follow the entry's position.
func ParseAllowedHost(s string) (AllowedHost, error) {
	switch {
	case s == "":
		return AllowedHost{}, fmt.Errorf("it is empty")
	case strings.Contains(s, "://"):
		return AllowedHost{}, fmt.Errorf("it is a URL, and a Host header carries only host[:port]")
	case strings.Contains(s, "*"):
		return AllowedHost{}, fmt.Errorf("wildcards are not supported; list each name")
	case strings.ContainsAny(s, "/?#@ \t"):
		return AllowedHost{}, fmt.Errorf("a host has no path, query, user or spaces")
	}
	h, ok := splitHost(s)
	if !ok {
		return AllowedHost{}, fmt.Errorf("an IPv6 address is written in brackets, as in [fd00::1] or [fd00::1]:8080")
	}
	if h.Port != "" || strings.HasSuffix(s, ":") {
		if n, err := strconv.Atoi(h.Port); err != nil || n < 1 || n > 65535 {
			return AllowedHost{}, fmt.Errorf("the port must be a number from 1 to 65535")
		}
	}
	if net.ParseIP(h.Name) == nil && !hostLabelsRE.MatchString(h.Name) {
		return AllowedHost{}, fmt.Errorf("%q is neither a DNS name nor an IP address", h.Name)
	}
	return h, nil
}

// splitHost splits a Host header value (or an allowed-host entry) into its
// normalised name and its port, which may be empty. It reports false for a
// bare IPv6 address, which is ambiguous with a port.
func splitHost(s string) (AllowedHost, bool) {
	name, port := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return AllowedHost{}, false
		}
		name = s[1:end]
		rest := s[end+1:]
		if rest != "" {
			p, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return AllowedHost{}, false
			}
			port = p
		}
	case strings.Count(s, ":") == 1:
		name, port, _ = strings.Cut(s, ":")
	case strings.Count(s, ":") > 1:
		return AllowedHost{}, false
	}
	return AllowedHost{Name: strings.TrimSuffix(strings.ToLower(name), "."), Port: port}, true
}

// CheckHost rejects requests on loopback connections whose Host header is
// neither a loopback name nor one of allowed (see the top of this file).
// Refusals get 403 with a body that names the host and the setting.
func CheckHost(allowed []AllowedHost, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !onLoopback(r) || hostAllowed(r.Host, allowed) {
			next.ServeHTTP(w, r)
			return
		}
		msg := fmt.Sprintf("host %q not allowed: on loopback this server answers only to localhost, 127.0.0.1 and [::1] (any port); add the name to server.allowedHosts to serve it", r.Host)
		if r.Host == "" {
			msg = "missing Host header: on loopback this server answers only to localhost, 127.0.0.1 and [::1]"
		}
		httpError(w, http.StatusForbidden, msg)
	})
}

// onLoopback reports whether r came in on a loopback connection; unknown
// counts as loopback.
func onLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || addr == nil {
		return true
	}
	tcp, ok := addr.(*net.TCPAddr)
	return !ok || tcp.IP.IsLoopback()
}

func hostAllowed(host string, allowed []AllowedHost) bool {
	h, ok := splitHost(host)
	if !ok || h.Name == "" {
		return false
	}
	if isLoopbackHost(h.Name) {
		return true
	}
	for _, a := range allowed {
		if a.Name == h.Name && (a.Port == "" || a.Port == h.Port) {
			return true
		}
	}
	return false
}

// httpError writes a small JSON error body {"error": msg}.
func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	body, _ := json.Marshal(map[string]string{"error": msg})
	_, _ = w.Write(append(body, '\n'))
}
