package e2e

// Searching runs through a real vmcp run process: runs started by a
// schedule and by a client, found by trigger, owner, error text and time
// over the API, `vmcp runs list --url` and the console's runs page in
// Debian's chromium (the search typed into the form ends up in the URL).
// VMCP_SCREENSHOTS=1 also writes docs/console-search.png.

import (
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// searchPortLo and searchPortHi are this file's ports.
const searchPortLo, searchPortHi = 17550, 17599

const searchConfig = `
backends:
  tb: {command: "${TB}"}
state: {store: sqlite, path: "${DIR}/state.db"}
schedules:
  - {name: tick, workflow: ping, every: 1s, arguments: {label: tick}}
compositeTools:
  - name: ping
    description: Echo the label
    parameters:
      label: {type: string, required: true}
    steps:
      - {id: echo, tool: tb.echo, arguments: {text: "{{.params.label}}"}}
  - name: boom
    description: Fail with the message
    parameters:
      message: {type: string, required: true}
    steps:
      - {id: explode, tool: tb.fail, arguments: {message: "{{.params.message}}"}}
`

func TestSearchRuns(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (apt-get install -y chromium; .ci/run does it): %v", err)
	}
	mcpURL, _ := httpVMCPOn(t, writeConfig(t, searchConfig, ""), searchPortLo, searchPortHi)
	base := strings.TrimSuffix(mcpURL, "/mcp")
	c := testenv.HTTPClient(t, mcpURL)
	before := time.Now().UTC()
	disk := runID(t, mustCall(t, c, "boom", map[string]any{"message": "disk full on web-1"}))
	quota := runID(t, mustCall(t, c, "boom", map[string]any{"message": "Quota exceeded"}))
	list := func(query string) httpapi.RunList {
		t.Helper()
		var l httpapi.RunList
		getJSON(t, base+"/api/v1/runs?"+query, &l)
		return l
	}
	ids := func(l httpapi.RunList) []string {
		out := []string{}
		for _, r := range l.Runs {
			out = append(out, r.ID)
		}
		return out
	}
	waitFor(t, "two runs of schedule tick", func() bool { return len(list("trigger=schedule:tick").Runs) >= 2 })

	// The API.
	for _, r := range list("trigger=schedule:tick").Runs {
		if r.Trigger != "schedule:tick" || r.Owner != "schedule:tick" || r.Workflow != "ping" {
			t.Errorf("trigger=schedule:tick gave run %s: trigger %q, owner %q, %s", r.ID, r.Trigger, r.Owner, r.Workflow)
		}
	}
	if got := ids(list("owner=schedule:tick&workflow=boom")); len(got) != 0 {
		t.Errorf("owner=schedule:tick&workflow=boom = %v; want none", got)
	}
	if got := ids(list("error=DISK+FULL")); !slices.Equal(got, []string{disk}) {
		t.Errorf("error=DISK FULL = %v; want [%s]", got, disk)
	}
	if got := ids(list("workflow=boom&status=failed&from=" + url.QueryEscape(before.Format(time.RFC3339Nano)))); !slices.Equal(got, []string{quota, disk}) {
		t.Errorf("failed boom runs since the test began = %v; want [%s %s]", got, quota, disk)
	}
	page1 := list("workflow=boom&limit=1")
	page2 := list("workflow=boom&limit=1&cursor=" + url.QueryEscape(page1.NextCursor))
	if got := append(ids(page1), ids(page2)...); !slices.Equal(got, []string{quota, disk}) || page1.NextCursor == "" || page2.NextCursor != "" {
		t.Errorf("boom in pages of one = %v (cursors %q, %q); want [%s %s], a cursor after the first page only", got, page1.NextCursor, page2.NextCursor, quota, disk)
	}

	// The CLI, over the API.
	out, errOut, code := run(t, time.Minute, t.TempDir(), bins.vmcp, "runs", "list", "--url", base, "--error", "quota", "--json")
	var cli httpapi.RunList
	if code != 0 || json.Unmarshal([]byte(out), &cli) != nil || !slices.Equal(ids(cli), []string{quota}) {
		t.Errorf("vmcp runs list --error quota = exit %d %s %s; want the run %s", code, out, errOut, quota)
	}
	out, _, code = run(t, time.Minute, t.TempDir(), bins.vmcp, "runs", "list", "--url", base, "--trigger", "schedule:tick", "--limit", "1")
	if code != 0 || !strings.Contains(out, "ping") || !strings.Contains(out, "more runs: add --cursor ") {
		t.Errorf("vmcp runs list --trigger schedule:tick --limit 1 = exit %d:\n%s\nwant a ping run and the next page's cursor", code, out)
	}

	// The console: the search typed into the form is the page's URL.
	b := newBrowser(t, chromium)
	b.do(t, chromedp.Navigate(base+"/ui/runs"))
	b.waitJS(t, "the runs list", `!!document.getElementById('runs')`)
	b.do(t, chromedp.SendKeys(chromedp.CSS(`input[name=error]`), "disk"), chromedp.Click(chromedp.CSS(`form.filter button[type=submit]`)))
	b.waitJS(t, "the search's page", `location.search.includes('error=disk')`)
	rows := b.eval(t, `[...document.querySelectorAll('#runs [data-run]')].map(r => r.dataset.run).join(' ')`)
	if rows != disk {
		t.Errorf("the console's search for error disk shows %q; want only %s", rows, disk)
	}
	b.do(t, chromedp.Navigate(base+"/ui/runs?trigger=schedule:tick&limit=2"))
	b.waitJS(t, "the schedule's runs", `document.querySelectorAll('#runs [data-run]').length === 2`)
	if n := b.eval(t, `String(document.querySelectorAll('#runs [data-trigger="schedule:tick"]').length)`); n != "2" {
		t.Errorf("%s of 2 rows name the trigger schedule:tick", n)
	}
	b.do(t, chromedp.Click(chromedp.CSS(`[data-action=next-page]`)))
	b.waitJS(t, "the next page", `location.search.includes('cursor=') && !!document.querySelector('[data-action=first-page]')`)
	if os.Getenv("VMCP_SCREENSHOTS") == "1" {
		b.do(t, chromedp.EmulateViewport(1400, 560))
		b.do(t, chromedp.Navigate(base+"/ui/runs?workflow=boom&status=failed&error=disk"))
		b.waitJS(t, "the search", `document.readyState === 'complete'`)
		png := b.shot(t, chromedp.CaptureScreenshot(), "runs search")
		if err := os.WriteFile(filepath.Join(testenv.RepoRoot(), "docs", "console-search.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
