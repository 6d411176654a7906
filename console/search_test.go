package console

import (
	"context"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

// TestRunsSearchIsInTheURL: every filter of the runs page is a query
// parameter, the form shows the search it ran, and pages follow the
// cursor in "Older runs" links until the last page.
func TestRunsSearchIsInTheURL(t *testing.T) {
	f := newFixture(t)
	start := func(wf, text, owner, trigger string) *runtime.Run {
		run, err := f.engine.Run(context.Background(), wf, map[string]any{"text": text}, runtime.RunOptions{Owner: owner, Trigger: trigger, OnEvent: f.c.Observe})
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	a := start("failing", "disk full on web-1", "ada", "schedule:nightly")
	b := start("echo", "hi", "bob", "")
	mid := time.Now().UTC()
	c := start("failing", "quota exceeded", "ada", "")
	d := start("echo", "again", "ada", "schedule:nightly")
	cases := []struct {
		query string
		want  []string
	}{
		{"owner=ada", []string{d.ID, c.ID, a.ID}},
		{"trigger=schedule%3Anightly", []string{d.ID, a.ID}},
		{"error=DISK+FULL", []string{a.ID}},
		{"from=" + url.QueryEscape(mid.Format(time.RFC3339Nano)), []string{d.ID, c.ID}},
		{"owner=ada&status=failed&to=" + url.QueryEscape(mid.Format(time.RFC3339Nano)), []string{a.ID}},
	}
	for _, cs := range cases {
		res := f.get(t, "/ui/runs?"+cs.query)
		page := body(t, res)
		if got := rowIDs(page); res.StatusCode != 200 || !slices.Equal(got, cs.want) {
			t.Errorf("/ui/runs?%s = %d rows %v; want %v", cs.query, res.StatusCode, got, cs.want)
		}
	}
	// The form holds the search it shows.
	page := body(t, f.get(t, "/ui/runs?owner=ada&error=disk+full&trigger=schedule%3Anightly"))
	for _, in := range []string{`name="owner" value="ada"`, `name="error" value="disk full"`, `name="trigger" value="schedule:nightly"`} {
		if !strings.Contains(page, in) {
			t.Errorf("the runs page's form lacks %s", in)
		}
	}
	// Pages of one: "Older runs" to the end, then no link; "Newest" on
	// every later page.
	next := regexp.MustCompile(`<a href="/ui/runs\?([^"]+)" data-action="next-page">`)
	var paged []string
	query := "limit=1"
	for i := 0; i < 10; i++ {
		page := body(t, f.get(t, "/ui/runs?"+query))
		paged = append(paged, rowIDs(page)...)
		if i > 0 && !strings.Contains(page, `data-action="first-page"`) {
			t.Errorf("page %d has no link to the newest runs", i+1)
		}
		m := next.FindStringSubmatch(page)
		if m == nil {
			break
		}
		query = html.UnescapeString(m[1])
	}
	if want := []string{d.ID, c.ID, b.ID, a.ID}; !slices.Equal(paged, want) {
		t.Errorf("pages of one = %v; want %v", paged, want)
	}
	for _, bad := range []string{"from=yesterday", "cursor=nonsense"} {
		if res := f.get(t, "/ui/runs?"+bad); res.StatusCode != 400 || !strings.Contains(body(t, res), "data-error") {
			t.Errorf("/ui/runs?%s = %d; want 400 with a notice", bad, res.StatusCode)
		}
	}
	// A live row follows the whole search: a run outside it is 204.
	if res := f.get(t, "/ui/runs/"+b.ID+"/row?owner=ada"); res.StatusCode != 204 {
		t.Errorf("bob's row under owner=ada = %d; want 204", res.StatusCode)
	}
	if res := f.get(t, "/ui/runs/"+d.ID+"/row?owner=ada&trigger=schedule%3Anightly"); res.StatusCode != 200 {
		t.Errorf("d's row under its own search = %d; want 200", res.StatusCode)
	}
}

// TestOwnerSearchStaysWithinWhatTheCallerSees: a caller without admin
// who asks for another owner's runs gets none, not its own.
func TestOwnerSearchStaysWithinWhatTheCallerSees(t *testing.T) {
	f := newScopedFixture(t, []httpsafe.Token{{Value: "ada-token", Name: "ada", Scopes: []httpsafe.Scope{httpsafe.ScopeRun}}})
	mine, err := f.engine.Run(context.Background(), "quick", nil, runtime.RunOptions{Owner: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.engine.Run(context.Background(), "quick", nil, runtime.RunOptions{Owner: "bob"}); err != nil {
		t.Fatal(err)
	}
	_, ada := signIn(t, f, "ada-token", "/ui/runs")
	for query, want := range map[string][]string{"": {mine.ID}, "owner=ada": {mine.ID}, "owner=bob": nil} {
		if got := rowIDs(body(t, f.get(t, "/ui/runs?"+query, ada...))); !slices.Equal(got, want) {
			t.Errorf("ada's /ui/runs?%s = %v; want %v", query, got, want)
		}
	}
}
