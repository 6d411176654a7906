package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/runtime"
)

// searchRuns makes the runs testSearch and testPages look through: a
// failed run per minute from base, alternating owners, triggers and
// errors, plus three runs that start in the same nanosecond.
func searchRuns(t *testing.T, s runtime.Store) {
	t.Helper()
	ctx := context.Background()
	add := func(id, wf, owner, trigger string, at time.Time, err *runtime.StepError) {
		r := newRun(id, wf, at, "a")
		r.Owner, r.Trigger = owner, trigger
		mustCreate(t, s, r)
		if err != nil {
			r.Status, r.EndedAt, r.Error = runtime.RunFailed, at.Add(time.Second), err
			if e := s.FinishRun(ctx, r); e != nil {
				t.Fatalf("FinishRun(%s) = %v", id, e)
			}
		}
	}
	add("r1", "sync", "ada", "schedule:nightly", base, &runtime.StepError{Step: "fetch_logs", Msg: "backend github: 502 Bad Gateway"})
	add("r2", "sync", "bob", "", base.Add(time.Minute), &runtime.StepError{Step: "post", Msg: "100% of the quota used_up"})
	add("r3", "report", "ada", "rerun:r1", base.Add(2*time.Minute), nil)
	add("r4", "sync", "ada", "schedule:nightly", base.Add(3*time.Minute), nil)
	tie := base.Add(4 * time.Minute)
	add("t-a", "tie", "", "", tie, nil)
	add("t-c", "tie", "", "", tie, nil)
	add("t-b", "tie", "", "", tie, nil)
}

// testSearch: every filter of a search, alone and together.
func testSearch(t *testing.T, s runtime.Store) {
	searchRuns(t, s)
	cases := []struct {
		name string
		f    runtime.RunFilter
		want []string
	}{
		{"owner", runtime.RunFilter{Owner: "ada"}, []string{"r4", "r3", "r1"}},
		{"trigger", runtime.RunFilter{Trigger: "schedule:nightly"}, []string{"r4", "r1"}},
		{"from", runtime.RunFilter{StartedFrom: base.Add(3 * time.Minute)}, []string{"t-c", "t-b", "t-a", "r4"}},
		{"to", runtime.RunFilter{StartedTo: base.Add(time.Minute)}, []string{"r1"}},
		{"range", runtime.RunFilter{StartedFrom: base.Add(time.Minute), StartedTo: base.Add(3 * time.Minute)}, []string{"r3", "r2"}},
		{"error message, any case", runtime.RunFilter{ErrorContains: "bad gateway"}, []string{"r1"}},
		{"error step", runtime.RunFilter{ErrorContains: "FETCH_LOGS"}, []string{"r1"}},
		{"error with LIKE's wildcards taken literally", runtime.RunFilter{ErrorContains: "100%"}, []string{"r2"}},
		{"underscore literal", runtime.RunFilter{ErrorContains: "d_u"}, []string{"r2"}},
		{"underscore is no wildcard", runtime.RunFilter{ErrorContains: "f_the"}, nil},
		{"error of a run without one", runtime.RunFilter{ErrorContains: "502", Workflow: "report"}, nil},
		{"together", runtime.RunFilter{Workflow: "sync", Owner: "ada", Status: runtime.RunFailed, ErrorContains: "502", Trigger: "schedule:nightly", StartedTo: base.Add(time.Hour)}, []string{"r1"}},
	}
	for _, c := range cases {
		got := ids(mustList(t, s, c.f))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: ListRuns(%+v) = %v; want %v", c.name, c.f, got, c.want)
		}
		// A store's filter is runtime.RunFilter.Match.
		var matched []string
		for _, r := range mustList(t, s, runtime.RunFilter{Limit: 100}) {
			if c.f.Match(r) {
				matched = append(matched, r.ID)
			}
		}
		if !slices.Equal(matched, c.want) {
			t.Errorf("%s: RunFilter.Match selects %v; the store %v", c.name, matched, c.want)
		}
	}
}

// testPages: pages of two, each continuing after the cursor of the one
// before, list every run once in the list's order, ties broken by id.
func testPages(t *testing.T, s runtime.Store) {
	searchRuns(t, s)
	all := ids(mustList(t, s, runtime.RunFilter{Limit: 100}))
	if want := []string{"t-c", "t-b", "t-a", "r4", "r3", "r2", "r1"}; !slices.Equal(all, want) {
		t.Fatalf("ListRuns = %v; want %v (newest first, then by id descending)", all, want)
	}
	var paged []string
	f := runtime.RunFilter{Limit: 2, Summary: true}
	for range 10 {
		page := mustList(t, s, f)
		paged = append(paged, ids(page)...)
		if len(page) < 2 {
			break
		}
		// The cursor goes through its string form, as in a URL.
		c, err := runtime.ParseCursor(runtime.CursorOf(page[len(page)-1]).String())
		if err != nil {
			t.Fatal(err)
		}
		f.After = c
	}
	if diff := cmp.Diff(all, paged); diff != "" {
		t.Errorf("pages of 2 differ from the whole list (-want +got):\n%s", diff)
	}
	// A filtered listing pages the same way.
	first := mustList(t, s, runtime.RunFilter{Owner: "ada", Limit: 1})
	rest := mustList(t, s, runtime.RunFilter{Owner: "ada", After: runtime.CursorOf(first[0])})
	if got := append(ids(first), ids(rest)...); strings.Join(got, ",") != "r4,r3,r1" {
		t.Errorf("ada's runs in pages = %v; want r4,r3,r1", got)
	}
}
