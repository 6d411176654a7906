package testenv

// A real token exchange server (RFC 8693) for tests: tools/exchangeop, an
// OpenID Provider built on zitadel/oidc's op package, which exchanges an
// access token of another issuer (the tests' Hydra) for a JWT of its own,
// audience-bound to a backend (tools/exchangeop/main.go says how). It is
// built once by scripts/exchangeop.sh (make exchangeop) into
// $HOME/.cache/vmcp/bin/exchangeop-v3.52.0 and found as Hydra is.

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ExchangeOPVersion is the zitadel/oidc version tools/exchangeop is built
// on; ExchangeOPBuild builds it.
const (
	ExchangeOPVersion = "v3.52.0"
	ExchangeOPBuild   = "make exchangeop"
)

// ExchangeOP is a running token exchange server.
type ExchangeOP struct {
	// Issuer is its issuer URL; TokenURL its token endpoint; JWKS its
	// key set's URL.
	Issuer, TokenURL, JWKS string
	// ClientID and ClientSecret are the client that may exchange.
	ClientID, ClientSecret string
	log                    *Buffer
}

// ExchangeOPConfig is what StartExchangeOP serves.
type ExchangeOPConfig struct {
	// SubjectIssuer and SubjectJWKS are the issuer of the tokens it
	// exchanges and its key set; SubjectAudience the audience those
	// tokens must hold (vmcp's).
	SubjectIssuer, SubjectJWKS, SubjectAudience string
	// Audiences are the backends it issues tokens for.
	Audiences []string
	// TTL is the issued tokens' lifetime (5 minutes when zero).
	TTL time.Duration
}

// StartExchangeOP starts the server on a free port in [lo, hi], waits
// until it listens, and stops it when the test ends. Its client is
// vmcp / vmcp-exchange-secret.
func StartExchangeOP(t testing.TB, lo, hi int, c ExchangeOPConfig) *ExchangeOP {
	t.Helper()
	bin, err := findCached("exchangeop-"+ExchangeOPVersion, "the token exchange server tools/exchangeop",
		ExchangeOPBuild+" in the repository (scripts/exchangeop.sh: under a minute)", exec.LookPath, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if c.TTL == 0 {
		c.TTL = 5 * time.Minute
	}
	port := FreePort(t, lo, hi)
	x := &ExchangeOP{ClientID: "vmcp", ClientSecret: "vmcp-exchange-secret", log: &Buffer{}}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:"+strconv.Itoa(port),
		"-client", x.ClientID+":"+x.ClientSecret,
		"-subject-issuer", c.SubjectIssuer, "-subject-jwks", c.SubjectJWKS, "-subject-audience", c.SubjectAudience,
		"-audiences", strings.Join(c.Audiences, ","), "-ttl", c.TTL.String())
	cmd.Stderr = x.log
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		<-done
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if issuer, ok := strings.CutPrefix(sc.Text(), "exchangeop ready "); ok {
				ready <- issuer
			}
		}
		cmd.Wait()
		close(done)
	}()
	select {
	case x.Issuer = <-ready:
	case <-done:
		t.Fatalf("exchangeop exited before it was ready:\n%s", x.log.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("exchangeop not ready after 30 s:\n%s", x.log.String())
	}
	x.TokenURL = x.Issuer + "/oauth/token"
	x.JWKS = x.Issuer + "/keys"
	return x
}

// Log is what the server printed so far.
func (x *ExchangeOP) Log() string { return x.log.String() }

// String names the server in failures.
func (x *ExchangeOP) String() string { return fmt.Sprintf("exchangeop at %s", x.Issuer) }
