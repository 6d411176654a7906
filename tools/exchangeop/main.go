// Command exchangeop is the token exchange server (RFC 8693) of vmcp's
// identity tests: a real OpenID Provider built with zitadel/oidc's op
// package, which exchanges an access token from another issuer (the tests'
// Ory Hydra, which has no token exchange) for a JWT access token of its
// own, audience-bound to the backend that asked.
//
// Why a program of our own: zitadel/oidc's example server exchanges only
// the tokens it issued itself. The op package asks its storage to verify
// other tokens (op.TokenExchangeTokensVerifierStorage); this program is
// the example server's in-memory storage plus that one method, which
// checks the subject token's signature against the subject issuer's JWKS,
// its iss, its exp and that its aud holds -subject-audience (the token was
// minted for vmcp, which is who exchanges it).
//
// Grants, at <issuer>/oauth/token:
//   - token exchange (urn:ietf:params:oauth:grant-type:token-exchange) by
//     the -client (HTTP Basic), subject_token_type access_token, an
//     audience among -audiences: a JWT with sub = the subject token's
//     subject, aud = the requested audience, living -ttl.
//   - client credentials by the same client: a JWT with sub = the client
//     id and aud = -audiences (vmcp's own token for a backend).
//
// Its keys are at <issuer>/keys; discovery at the usual well-known path.
// It prints "exchangeop ready <issuer>" once it listens.
package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/client/rp"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	subjectIssuer := flag.String("subject-issuer", "", "issuer of the subject tokens (Hydra's)")
	subjectJWKS := flag.String("subject-jwks", "", "JWKS URL of the subject issuer")
	subjectAudience := flag.String("subject-audience", "", "audience a subject token must hold (vmcp's)")
	client := flag.String("client", "vmcp:vmcp-secret", "the client that may exchange, id:secret")
	audiences := flag.String("audiences", "", "comma-separated audiences tokens may be exchanged for")
	ttl := flag.Duration("ttl", 5*time.Minute, "lifetime of an issued token")
	flag.Parse()
	id, secret, ok := strings.Cut(*client, ":")
	if !ok || *subjectIssuer == "" || *subjectJWKS == "" || *subjectAudience == "" || *audiences == "" {
		log.Fatal("exchangeop: -client id:secret, -subject-issuer, -subject-jwks, -subject-audience and -audiences are required")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))

	st := &exchangeStorage{
		Storage: storage.NewStorageWithClients(storage.NewUserStore(issuer),
			map[string]*storage.Client{id: storage.WebClient(id, secret)}),
		clientID: id, secret: secret,
		audiences: strings.Split(*audiences, ","), ttl: *ttl,
		subjectAudience: *subjectAudience,
		subject: op.NewAccessTokenVerifier(*subjectIssuer,
			rp.NewRemoteKeySet(&http.Client{Timeout: 10 * time.Second}, *subjectJWKS)),
	}
	provider, err := op.NewProvider(&op.Config{
		CryptoKey:             sha256.Sum256([]byte("exchangeop")),
		GrantTypeRefreshToken: false,
	}, st, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("exchangeop ready " + issuer)
	log.Fatal(http.Serve(ln, provider))
}

// exchangeStorage is the example server's storage with vmcp's client
// issuing JWTs, and subject tokens of another issuer accepted.
type exchangeStorage struct {
	*storage.Storage
	clientID, secret string
	audiences        []string
	ttl              time.Duration
	subjectAudience  string
	subject          *op.AccessTokenVerifier
}

var (
	_ op.TokenExchangeStorage               = (*exchangeStorage)(nil)
	_ op.TokenExchangeTokensVerifierStorage = (*exchangeStorage)(nil)
	_ op.ClientCredentialsStorage           = (*exchangeStorage)(nil)
)

// jwtClient is the example's web client issuing JWT access tokens, with
// the two grants this server has.
type jwtClient struct{ op.Client }

func (jwtClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }
func (jwtClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeTokenExchange, oidc.GrantTypeClientCredentials}
}

func (s *exchangeStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return jwtClient{c}, nil
}

// CreateAccessToken is the example's, living -ttl.
func (s *exchangeStorage) CreateAccessToken(ctx context.Context, r op.TokenRequest) (string, time.Time, error) {
	id, _, err := s.Storage.CreateAccessToken(ctx, r)
	return id, time.Now().Add(s.ttl), err
}

// VerifyExchangeSubjectToken checks a token of the subject issuer.
func (s *exchangeStorage) VerifyExchangeSubjectToken(ctx context.Context, token string, tokenType oidc.TokenType) (string, string, map[string]any, error) {
	if tokenType != oidc.AccessTokenType {
		return "", "", nil, fmt.Errorf("subject_token_type %s is not supported (only %s)", tokenType, oidc.AccessTokenType)
	}
	claims, err := op.VerifyAccessToken[*oidc.AccessTokenClaims](ctx, token, s.subject)
	if err != nil {
		return "", "", nil, err
	}
	if !slices.Contains(claims.Audience, s.subjectAudience) {
		return "", "", nil, fmt.Errorf("the subject token's aud %v does not hold %s", claims.Audience, s.subjectAudience)
	}
	return claims.JWTID, claims.Subject, claims.Claims, nil
}

// VerifyExchangeActorToken: this server takes no actor tokens.
func (s *exchangeStorage) VerifyExchangeActorToken(context.Context, string, oidc.TokenType) (string, string, map[string]any, error) {
	return "", "", nil, errors.New("actor tokens are not supported")
}

// ValidateTokenExchangeRequest allows an access token for one of the
// audiences, for the token's own subject (no impersonation).
func (s *exchangeStorage) ValidateTokenExchangeRequest(ctx context.Context, r op.TokenExchangeRequest) error {
	if r.GetRequestedTokenType() == "" {
		r.SetRequestedTokenType(oidc.AccessTokenType)
	}
	if r.GetRequestedTokenType() != oidc.AccessTokenType {
		return fmt.Errorf("requested_token_type %s is not supported", r.GetRequestedTokenType())
	}
	aud := r.GetAudience()
	if len(aud) != 1 || !slices.Contains(s.audiences, aud[0]) {
		return oidc.ErrInvalidTarget().WithDescription("audience %v is not one this server issues tokens for", aud)
	}
	r.SetCurrentScopes(r.GetScopes())
	return nil
}

func (s *exchangeStorage) GetPrivateClaimsFromTokenExchangeRequest(context.Context, op.TokenExchangeRequest) (map[string]any, error) {
	return nil, nil
}

// ClientCredentials accepts vmcp's client.
func (s *exchangeStorage) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	if id != s.clientID || secret != s.secret {
		return nil, errors.New("wrong client id or secret")
	}
	return s.GetClientByClientID(ctx, id)
}

func (s *exchangeStorage) ClientCredentialsTokenRequest(_ context.Context, id string, scopes []string) (op.TokenRequest, error) {
	return &oidc.JWTTokenRequest{Subject: id, Audience: s.audiences, Scopes: scopes}, nil
}
