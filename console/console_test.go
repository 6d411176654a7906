package console

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/runtime"
)

// rowIDs are the run ids of a runs page, in order.
func rowIDs(page string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`<div class="r" role="row" data-run="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestRunsListIsNewestFirstAndFiltered(t *testing.T) {
	f := newFixture(t)
	a := f.run(t, "quick", nil)
	b := f.run(t, "other", nil)
	c := f.run(t, "quick", nil)
	res := f.get(t, "/ui/runs")
	page := body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("GET /ui/runs = %d:\n%s", res.StatusCode, page)
	}
	if got, want := strings.Join(rowIDs(page), " "), strings.Join([]string{c.ID, b.ID, a.ID}, " "); got != want {
		t.Errorf("rows = %s; want newest first: %s", got, want)
	}
	if got := rowIDs(body(t, f.get(t, "/ui/runs?workflow=other"))); len(got) != 1 || got[0] != b.ID {
		t.Errorf("?workflow=other rows = %v; want [%s]", got, b.ID)
	}
	if got := rowIDs(body(t, f.get(t, "/ui/runs?status=failed"))); len(got) != 0 {
		t.Errorf("?status=failed rows = %v; want none", got)
	}
	if got := rowIDs(body(t, f.get(t, "/ui/runs?limit=2"))); len(got) != 2 {
		t.Errorf("?limit=2 shows %d rows", len(got))
	}
	for _, q := range []string{"status=done", "limit=0", "limit=1001", "limit=x"} {
		res := f.get(t, "/ui/runs?"+q)
		page := body(t, res)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(page, `data-error`) {
			t.Errorf("?%s = %d; want 400 with a notice", q, res.StatusCode)
		}
		if q == "status=done" && !strings.Contains(page, "the statuses are pending, running, completed") {
			t.Errorf("?status=done does not list the statuses:\n%s", page)
		}
	}
}

func TestRunRowFragmentFollowsTheFilter(t *testing.T) {
	f := newFixture(t)
	run := f.run(t, "quick", nil)
	res := f.get(t, "/ui/runs/"+run.ID+"/row")
	if page := body(t, res); res.StatusCode != 200 || !strings.HasPrefix(page, `<div class="r" role="row" data-run="`+run.ID+`" data-status="completed">`) {
		t.Errorf("row fragment = %d %q", res.StatusCode, page)
	}
	if res := f.get(t, "/ui/runs/"+run.ID+"/row?workflow=other"); res.StatusCode != http.StatusNoContent {
		t.Errorf("a row outside the filter = %d; want 204", res.StatusCode)
	}
	if res := f.get(t, "/ui/runs/nope/row"); res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown run's row = %d; want 404", res.StatusCode)
	}
}

// stepHooks reads data-step/data-status pairs of top-level rows.
func stepHooks(page string) map[string]string {
	out := map[string]string{}
	re := regexp.MustCompile(`class="step[^"]*" data-step="([^"]+)" data-status="([^"]+)" data-key="[^"]+">`)
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		out[m[1]] = m[2]
	}
	return out
}

func TestRunPageHooksStatusesAndPositions(t *testing.T) {
	f := newFixture(t)
	run := f.run(t, "mixed", nil)
	page := body(t, f.get(t, "/ui/runs/"+run.ID))
	got := stepHooks(page)
	want := map[string]string{"fine": "completed", "broken": "failed", "never": "skipped", "loop": "completed"}
	for id, st := range want {
		if got[id] != st {
			t.Errorf("step %s: data-status %q; want %q (all: %v)", id, got[id], st, got)
		}
	}
	// Each loop iteration's body step is a row of its own.
	for _, it := range []string{"0", "1"} {
		if !strings.Contains(page, `data-step="inner" data-status="completed" data-key="loop/`+it+`/inner" data-iteration="`+it+`"`) {
			t.Errorf("no row for iteration %s's inner step", it)
		}
	}
	// The failed step's error, with the step's file:line:col.
	if !strings.Contains(page, "disk full") || !regexp.MustCompile(`data-pos>wf\.yaml:\d+:\d+<`).MatchString(page) {
		t.Errorf("the failed step's error or position is missing")
	}
	if strings.Contains(page, `data-action="cancel"`) {
		t.Errorf("a finished run has a cancel button")
	}
}

// TestRunPageNamesIterationsByItem: each iteration of a loop body is
// headed by its index and its item's label, and its error names the item
// the same way.
func TestRunPageNamesIterationsByItem(t *testing.T) {
	f := newFixture(t)
	run := f.run(t, "named", nil)
	page := body(t, f.get(t, "/ui/runs/"+run.ID))
	for i, name := range []string{"web-1", "web-2"} {
		idx := strconv.Itoa(i)
		head := `<span class="id">iteration ` + idx + `</span> <span class="item-label mono" data-item-label>(name &#34;` + name + `&#34;)</span>`
		if !strings.Contains(page, head) {
			t.Errorf("iteration %d is not headed by its item's label %s", i, head)
		}
		msg := `iteration ` + idx + ` (name &#34;` + name + `&#34;): step &#34;ping&#34;: `
		if !strings.Contains(page, msg) {
			t.Errorf("iteration %d's error does not name its item: no %s", i, msg)
		}
	}
}

func TestFailedRunShowsErrorWithPosition(t *testing.T) {
	f := newFixture(t)
	run := f.run(t, "failing", map[string]any{"text": "quota exceeded"})
	page := body(t, f.get(t, "/ui/runs/"+run.ID))
	want := regexp.MustCompile(`Step boom failed</strong> at <span class="pos mono" data-pos>wf\.yaml:\d+:\d+</span>`)
	if !want.MatchString(page) || !strings.Contains(page, "quota exceeded") {
		t.Errorf("the run error is not shown with its position:\n%s", page)
	}
}

func TestOutputsAreEscapedText(t *testing.T) {
	f := newFixture(t)
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	ok := f.run(t, "echo", map[string]any{"text": evil})
	bad := f.run(t, "failing", map[string]any{"text": evil})
	for _, path := range []string{"/ui/runs/" + ok.ID, "/ui/runs/" + bad.ID, "/ui/runs"} {
		page := body(t, f.get(t, path))
		if strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") {
			t.Errorf("%s: an output or error went into the page as HTML", path)
		}
		if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s: the escaped text is missing", path)
		}
	}
}

func TestLongOutputIsTruncatedVisibly(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("abcdefghij", 1000)
	run := f.run(t, "echo", map[string]any{"text": long})
	page := body(t, f.get(t, "/ui/runs/"+run.ID))
	marker := regexp.MustCompile(`truncated: (\d+) of (\d+) bytes shown · <a href="(/ui/runs/[^"]+/output/out)">`)
	m := marker.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no truncation marker on the page")
	}
	if m[1] != "4096" {
		t.Errorf("shown %s bytes; want 4096", m[1])
	}
	res := f.get(t, m[3])
	full := body(t, res)
	if res.Header.Get("Content-Type") != "application/json; charset=utf-8" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("the full output is served as %q (nosniff %q)", res.Header.Get("Content-Type"), res.Header.Get("X-Content-Type-Options"))
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(full), &v); err != nil || v["text"] != long {
		t.Errorf("the full output is not the whole value (err %v)", err)
	}
	if res := f.get(t, "/ui/runs/"+run.ID+"/output/nope"); res.StatusCode != 404 {
		t.Errorf("an unknown step's output = %d; want 404", res.StatusCode)
	}
	if out := body(t, f.get(t, "/ui/runs/"+run.ID+"/output/")); !strings.Contains(out, "abcdefghij") {
		t.Errorf("the run's result is not served at output/")
	}
}

func TestLoopBodyOutputByPath(t *testing.T) {
	f := newFixture(t)
	run := f.run(t, "mixed", nil)
	out := body(t, f.get(t, "/ui/runs/"+run.ID+"/output/loop/1/inner"))
	if !strings.Contains(out, `"item b"`) {
		t.Errorf("loop/1/inner = %s; want iteration 1's output", out)
	}
	if res := f.get(t, "/ui/runs/"+run.ID+"/output/loop/7/inner"); res.StatusCode != 404 || !strings.Contains(body(t, res), "no iteration") {
		t.Errorf("a missing iteration is not a clear 404")
	}
}

func TestWorkflowPages(t *testing.T) {
	f := newFixture(t)
	list := body(t, f.get(t, "/ui/workflows"))
	for _, name := range []string{"quick", "other", "mixed"} {
		if !strings.Contains(list, `<tr data-workflow="`+name+`">`) {
			t.Errorf("the workflows list lacks %s", name)
		}
	}
	page := body(t, f.get(t, "/ui/workflows/mixed"))
	for _, step := range []string{"fine", "broken", "never", "loop", "loop/inner"} {
		if !strings.Contains(page, `data-step="`+step+`"`) {
			t.Errorf("the plan graph lacks step %s", step)
		}
	}
	if !strings.Contains(page, `<span class="src-line" id="L1">`) || !strings.Contains(page, "Steps that end every way") {
		t.Errorf("the workflow page lacks its source")
	}
	other := body(t, f.get(t, "/ui/workflows/other"))
	if !regexp.MustCompile(`<tr data-param="who"><td class="mono">who</td><td>string</td><td></td><td class="mono">&#34;world&#34;</td><td>whom to greet</td></tr>`).MatchString(other) {
		t.Errorf("the parameters table is wrong:\n%s", other)
	}
	res := f.get(t, "/ui/workflows/nope")
	if msg := body(t, res); res.StatusCode != 404 || !strings.Contains(msg, "the workflows are: blocked, echo, failing, flaky, mixed, named, other, parent, quick") {
		t.Errorf("an unknown workflow = %d:\n%s", res.StatusCode, msg)
	}
	svg := f.get(t, "/ui/workflows/mixed/plan.svg")
	if svg.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(body(t, svg), "<svg") {
		t.Errorf("plan.svg is not an SVG document")
	}
}

func TestPagesCarrySecurityHeaders(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/ui/runs", "/ui/workflows", "/ui/assets/console.js", "/ui/nope"} {
		res := f.get(t, path)
		csp := res.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-eval") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", path)
		}
	}
	if res := f.get(t, "/ui/nope"); res.StatusCode != 404 {
		t.Errorf("/ui/nope = %d", res.StatusCode)
	}
	if res := f.get(t, "/ui/"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/runs" {
		t.Errorf("/ui/ = %d %s; want a redirect to /ui/runs", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestRetriedStepShowsItsAttempts(t *testing.T) {
	f := newFixture(t)
	run := f.run(t, "flaky", nil)
	page := body(t, f.get(t, "/ui/runs/"+run.ID))
	if !strings.Contains(page, `data-step="shaky" data-status="completed"`) || !strings.Contains(page, `data-attempts="2" title="2 attempts: 1 retried">×2</span>`) {
		t.Errorf("the retried step does not show its two attempts:\n%s", page)
	}
	if !strings.Contains(page, `class="bar st-completed retried"`) {
		t.Errorf("the retried step's bar is not marked")
	}
}

func TestChildRunsAndItemsOpenInPlace(t *testing.T) {
	f := newFixture(t)
	run := f.run(t, "parent", nil)
	kids, err := f.store.ListRuns(t.Context(), runtime.RunFilter{Parent: run.ID})
	if err != nil || len(kids) != 1 {
		t.Fatalf("child runs = %v, %v", kids, err)
	}
	child := kids[0].ID
	page := body(t, f.get(t, "/ui/runs/"+run.ID))
	// The child run's steps, inside the workflow step's row, keyed by the
	// child's id.
	for _, want := range []string{
		`data-child-run="` + child + `" data-status="completed"`,
		`data-step="say" data-status="completed" data-key="` + child + `:say"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the parent's page lacks %s", want)
		}
	}
	// A loop over one step: its iterations as a table, item and output.
	for _, want := range []string{`<tr data-iteration="0" data-status="completed">`, `<tr data-iteration="1" data-status="completed">`, `&#34;got y&#34;`} {
		if !strings.Contains(page, want) {
			t.Errorf("the loop's iterations lack %s", want)
		}
	}
}
