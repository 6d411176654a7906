package httpsafe

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestScopesReachTheHandler: the scopes of the token that matched are in
// the request's context, and RequireScope refuses the others with 403 and
// a body naming the missing scope.
func TestScopesReachTheHandler(t *testing.T) {
	tokens := []Token{{Value: "runner", Scopes: []Scope{ScopeRun}}, {Value: "writer", Scopes: []Scope{ScopeRun, ScopeAuthor}}}
	save := RequireScope(ScopeAuthor, "saving a workflow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	h := Protect(Options{Tokens: tokens}, save)
	for token, want := range map[string]int{"runner": http.StatusForbidden, "writer": http.StatusNoContent} {
		req := httptest.NewRequest("POST", "http://localhost/save", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("token %s: status %d; want %d", token, rec.Code, want)
		}
		if want == http.StatusForbidden {
			var body struct{ Error, MissingScope string }
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.MissingScope != "author" || body.Error == "" {
				t.Errorf("403 body = %s (%v); want JSON naming the missing scope author", rec.Body, err)
			}
		}
	}
	// Without tokens nothing is authenticated and every scope is allowed.
	rec := httptest.NewRecorder()
	Protect(Options{}, save).ServeHTTP(rec, httptest.NewRequest("POST", "http://localhost/save", nil))
	if rec.Code != http.StatusNoContent {
		t.Errorf("without tokens: status %d; want 204", rec.Code)
	}
}
