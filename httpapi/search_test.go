package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

func TestSearchRuns(t *testing.T) {
	f := newFixture(t)
	start := func(wf, owner, trigger string) *runtime.Run {
		run, err := f.eng.Run(context.Background(), wf, nil, runtime.RunOptions{Owner: owner, Trigger: trigger})
		if err != nil {
			t.Fatalf("Run(%s) = %v", wf, err)
		}
		return run
	}
	a := start("quick", "ada", "schedule:nightly")
	b := start("broken", "bob", "")
	mid := time.Now()
	c := start("quick", "ada", "")
	d := start("broken", "ada", "schedule:nightly")
	ids := func(query string) []string {
		t.Helper()
		var list httpapi.RunList
		if code := f.do(t, "GET", "/api/v1/runs"+query, &list); code != 200 {
			t.Fatalf("GET /api/v1/runs%s = %d; want 200", query, code)
		}
		out := []string{}
		for _, r := range list.Runs {
			out = append(out, r.ID)
		}
		return out
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"?owner=ada", []string{d.ID, c.ID, a.ID}},
		{"?trigger=schedule:nightly", []string{d.ID, a.ID}},
		{"?error=QUOTA", []string{d.ID, b.ID}},
		{"?error=step", []string{}},
		{"?from=" + url.QueryEscape(mid.Format(time.RFC3339Nano)), []string{d.ID, c.ID}},
		{"?to=" + url.QueryEscape(mid.Format(time.RFC3339Nano)), []string{b.ID, a.ID}},
		{"?owner=ada&error=quota&trigger=schedule:nightly&workflow=broken&status=failed", []string{d.ID}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ids(tt.query)); diff != "" {
			t.Errorf("GET /api/v1/runs%s ids differ (-want +got):\n%s", tt.query, diff)
		}
	}

	// Pages of one follow nextCursor to the end, the last page without one.
	var paged []string
	query := "?limit=1"
	for range 10 {
		var list httpapi.RunList
		f.do(t, "GET", "/api/v1/runs"+query, &list)
		for _, r := range list.Runs {
			paged = append(paged, r.ID)
		}
		if list.NextCursor == "" {
			break
		}
		query = "?limit=1&cursor=" + url.QueryEscape(list.NextCursor)
	}
	if want := []string{d.ID, c.ID, b.ID, a.ID}; !slices.Equal(paged, want) {
		t.Errorf("pages of one = %v; want %v", paged, want)
	}
	var full httpapi.RunList
	f.do(t, "GET", "/api/v1/runs?limit=4", &full)
	if full.NextCursor != "" {
		t.Errorf("a page holding every run has nextCursor %q; want none", full.NextCursor)
	}

	for _, bad := range []string{"?from=yesterday", "?cursor=nonsense", "?from=2026-12-02&to=2026-12-01"} {
		var e httpapi.Error
		if code := f.do(t, "GET", "/api/v1/runs"+bad, &e); code != 400 || e.Error == "" {
			t.Errorf("GET /api/v1/runs%s = %d %q; want 400 with a message", bad, code, e.Error)
		}
	}
}

func TestFilterQueryRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 2, 20, 0, 0, 5, time.UTC)
	f := runtime.RunFilter{Workflow: "w", Status: runtime.RunFailed, Owner: "ada", Trigger: "schedule:x", ErrorContains: "50%",
		StartedFrom: at, StartedTo: at.Add(time.Hour), After: runtime.RunCursor{StartedAt: at, ID: "r1"}, Limit: 7}
	got, err := httpapi.ParseFilter(httpapi.Query(f))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, got); diff != "" {
		t.Errorf("ParseFilter(Query(f)) differs (-want +got):\n%s", diff)
	}
	day, err := httpapi.ParseFilter(url.Values{"from": {"2026-12-02"}})
	if err != nil || !day.StartedFrom.Equal(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("from=2026-12-02 = %v, %v; want midnight UTC", day.StartedFrom, err)
	}
}

// TestOwnerFilterForACallerWithoutAdmin: another owner's runs are none,
// not the caller's own.
func TestOwnerFilterForACallerWithoutAdmin(t *testing.T) {
	store := runtime.NewMemoryStore(0)
	for _, r := range []*runtime.Run{{ID: "a1", Workflow: "w", Owner: "ada", Status: runtime.RunCompleted, StartedAt: time.Now()},
		{ID: "b1", Workflow: "w", Owner: "bob", Status: runtime.RunCompleted, StartedAt: time.Now()}} {
		if err := store.CreateRun(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	api, err := httpapi.New(httpapi.Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	h := httpsafe.Protect(httpsafe.Options{Tokens: []httpsafe.Token{{Value: "ada-token", Name: "ada", Scopes: []httpsafe.Scope{httpsafe.ScopeRun}}}}, api)
	for query, want := range map[string][]string{"": {"a1"}, "owner=ada": {"a1"}, "owner=bob": {}} {
		req := httptest.NewRequest("GET", "http://127.0.0.1/api/v1/runs?"+query, nil)
		req.Header.Set("Authorization", "Bearer ada-token")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var list httpapi.RunList
		if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
			t.Fatalf("GET ?%s = %d %s", query, rec.Code, rec.Body)
		}
		got := []string{}
		for _, r := range list.Runs {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("ada's GET /api/v1/runs?%s = %v; want %v", query, got, want)
		}
	}
}
