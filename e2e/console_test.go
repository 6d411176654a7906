package e2e

// The web console in a real browser: Debian's chromium, headless, driven
// with chromedp, against a real `vmcp run --transport http` process with
// real stdio backends (the test backend and the demo's five). One vmcp
// and one browser serve every subtest of TestConsoleInBrowser, in order:
// sign-in first (the server has a token), so the browser then holds the
// cookie for the rest.
//
// VMCP_SCREENSHOTS=1 also writes docs/console-runs.png,
// docs/console-run.png and docs/console-plan.png (for docs/console.md).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/sqlite"
)

// Ports of the console tests: 17800-17899.
const consolePortLo, consolePortHi = 17800, 17899

const consoleToken = "console-e2e-token"

const consoleConfig = `
backends:
  tb: {command: ${TB}, args: [-record, ${REC}]}
  logs: {command: ${DEMO}, args: [-role, logs]}
  metrics: {command: ${DEMO}, args: [-role, metrics]}
  traces: {command: ${DEMO}, args: [-role, traces]}
  analysis: {command: ${DEMO}, args: [-role, analysis]}
  jira: {command: ${DEMO}, args: [-role, jira]}
workflows: [${INCIDENT}]
server:
  auth: {tokens: [` + consoleToken + `]}
state: {store: sqlite, path: ${DIR}/state.db}
authoring: {enabled: true}
compositeTools:
  - name: quick
    description: Echo once
    steps:
      - {id: say, tool: tb.echo, arguments: {text: hello}}
  - name: nap
    description: Nap, then echo
    parameters:
      ms: {type: number, required: true}
      label: {type: string, required: true}
    steps:
      - {id: nap, tool: tb.sleep, arguments: {ms: "{{.params.ms}}", label: "{{.params.label}}"}}
      - {id: after, tool: tb.echo, dependsOn: [nap], arguments: {text: woke}}
  - name: mixed
    description: Steps that end every way, a loop with a body, and a big output
    parameters:
      filler: {type: string, required: true}
    steps:
      - {id: fine, tool: tb.echo, arguments: {text: fine}}
      - id: broken
        tool: tb.fail
        arguments: {message: disk full}
        onError: {action: continue}
      - id: never
        tool: tb.echo
        condition: "{{eq 1 2}}"
        arguments: {text: not this}
      - id: loop
        type: forEach
        collection: [a, b, c]
        itemVar: x
        steps:
          - {id: inner, tool: tb.echo, arguments: {text: "item {{.forEach.x}}"}}
      - {id: big, tool: tb.echo, arguments: {text: "{{.params.filler}}"}}
  - name: html_output
    description: An output and an error that look like HTML
    parameters:
      text: {type: string, required: true}
    steps:
      - {id: echo_html, tool: tb.echo, arguments: {text: "{{.params.text}}"}}
      - {id: fail_html, tool: tb.fail, dependsOn: [echo_html], arguments: {message: "{{.params.text}}"}}
`

// prefilledRuns is how many finished runs the store holds before vmcp
// starts, for the runs list's load time.
const prefilledRuns = 1000

func TestConsoleInBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (apt-get install -y chromium; .ci/run does it): %v", err)
	}
	rec := filepath.Join(t.TempDir(), "rec.log")
	cfgText := strings.ReplaceAll(consoleConfig, "${INCIDENT}", filepath.Join(testenv.RepoRoot(), "examples", "incident_investigation.yaml"))
	cfg := writeConfig(t, cfgText, rec)
	prefill(t, filepath.Join(filepath.Dir(cfg), "state.db"), prefilledRuns)
	mcpURL, stderr := httpVMCPOn(t, cfg, consolePortLo, consolePortHi)
	base := strings.TrimSuffix(mcpURL, "/mcp")
	mc := testenv.HTTPClientHeaders(t, mcpURL, map[string]string{"Authorization": "Bearer " + consoleToken})
	b := newBrowser(t, chromium)
	defer func() {
		if t.Failed() {
			t.Logf("vmcp stderr:\n%s", stderr.String())
		}
	}()

	t.Run("signin", func(t *testing.T) {
		b.do(t, chromedp.Navigate(base+"/ui/runs?status=completed"))
		loc := b.location(t)
		if !strings.HasPrefix(loc, base+"/ui/signin?next=") {
			t.Fatalf("without the cookie /ui/runs went to %s; want the sign-in page", loc)
		}
		b.do(t, chromedp.SendKeys(chromedp.CSS(`input[name=token]`), "not-the-token"), chromedp.Click(chromedp.CSS(`[data-action=signin]`)))
		b.waitJS(t, "the wrong token refused", `document.querySelector('[data-error]') && document.querySelector('[data-error]').textContent.includes('not one of')`)
		b.do(t, chromedp.SendKeys(chromedp.CSS(`input[name=token]`), consoleToken), chromedp.Click(chromedp.CSS(`[data-action=signin]`)))
		b.waitJS(t, "the runs list after sign-in", `location.pathname === '/ui/runs' && !!document.getElementById('runs')`)
		if loc := b.location(t); loc != base+"/ui/runs?status=completed" {
			t.Errorf("after sign-in the browser is at %s; want the page it asked for, %s", loc, base+"/ui/runs?status=completed")
		}
		if cookies := b.eval(t, `document.cookie`); strings.Contains(cookies, "vmcp_session") {
			t.Errorf("a script can read the session cookie (%q); it must be HttpOnly", cookies)
		}
	})

	t.Run("runs list updates live", func(t *testing.T) {
		b.do(t, chromedp.Navigate(base+"/ui/runs"))
		b.waitJS(t, "the runs list", `!!document.getElementById('runs')`)
		b.eval(t, `window.__sameDocument = 'yes'`) // gone if the page reloads
		done := mustCall(t, mc, "quick", nil)
		doneID := runID(t, done)
		b.waitJS(t, "the finished run's row, live", fmt.Sprintf(`!!document.querySelector('#runs [data-run=%q][data-status=completed]')`, doneID))
		calls := callAsync(t, mc, "nap", map[string]any{"ms": 1500, "label": "live"})
		running := b.waitJS(t, "a running nap row", `(() => { const r = [...document.querySelectorAll('#runs [data-run][data-status=running]')].find(r => r.querySelector('a[href="/ui/workflows/nap"]')); return r ? r.dataset.run : ''; })()`)
		res := <-calls
		if res.err != nil {
			t.Fatal(res.err)
		}
		if id := runID(t, res.res); id != running {
			t.Fatalf("the running row was run %s; the call ran %s", running, id)
		}
		b.waitJS(t, "the running row turning completed", fmt.Sprintf(`!!document.querySelector('#runs [data-run=%q][data-status=completed]')`, running))
		if got := b.eval(t, `window.__sameDocument || 'reloaded'`); got != "yes" {
			t.Errorf("the page reloaded (%s); the rows should update in place", got)
		}
		order := b.eval(t, `[...document.querySelectorAll('#runs [data-run]')].slice(0, 2).map(r => r.dataset.run).join(' ')`)
		if order != running+" "+doneID {
			t.Errorf("the first rows are %q; want the newest first: %q", order, running+" "+doneID)
		}
	})

	t.Run("run page shows each step", func(t *testing.T) {
		filler := strings.Repeat("0123456789", 600) // 6,000 bytes: over the page's 4,096
		id := runID(t, mustCall(t, mc, "mixed", map[string]any{"filler": filler}))
		b.do(t, chromedp.Navigate(base+"/ui/runs/"+id))
		b.waitJS(t, "the run page", `!!document.querySelector('[data-run-status=completed]')`)
		got := b.evalMap(t, `Object.fromEntries([...document.querySelectorAll('#live [data-step]:not([data-iteration])')].map(e => [e.dataset.step, e.dataset.status]))`)
		want := map[string]string{"fine": "completed", "broken": "failed", "never": "skipped", "loop": "completed", "big": "completed"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("step statuses on the page = %v; want %v", got, want)
		}
		// The loop's iterations open in place, each with its body step.
		b.do(t, chromedp.Click(chromedp.CSS(`details[data-step=loop] > summary`)))
		iters := b.eval(t, `[...document.querySelectorAll('details[data-step=loop] details.iter')].map(d => d.dataset.iteration + ':' + d.dataset.status).join(' ')`)
		if iters != "0:completed 1:completed 2:completed" {
			t.Errorf("loop iterations = %q; want three completed", iters)
		}
		b.do(t, chromedp.Click(chromedp.CSS(`details.iter[data-iteration="1"] > summary`)))
		inner := b.eval(t, `(() => { const s = document.querySelector('details.iter[data-iteration="1"] [data-step=inner]'); return s ? s.dataset.status + ' ' + s.textContent : 'none'; })()`)
		if !strings.HasPrefix(inner, "completed") || !strings.Contains(inner, `item b`) {
			t.Errorf("iteration 1's body step reads %q; want completed, with output \"item b\"", inner)
		}
		// The failed step shows its error and its source position.
		b.do(t, chromedp.Click(chromedp.CSS(`details[data-step=broken] > summary`)))
		broken := b.eval(t, `document.querySelector('details[data-step=broken] .detail').textContent`)
		if !strings.Contains(broken, "disk full") || !regexp.MustCompile(`vmcp\.yaml:\d+:\d+`).MatchString(broken) {
			t.Errorf("the failed step's details read %q; want the error and its file:line:col", broken)
		}
		// A big output is cut visibly, with a link to all of it.
		b.do(t, chromedp.Click(chromedp.CSS(`details[data-step=big] > summary`)))
		trunc := b.eval(t, `(() => { const p = document.querySelector('details[data-step=big] [data-truncated]'); return p ? p.textContent + ' ' + p.querySelector('a').getAttribute('href') : 'no marker'; })()`)
		if !strings.Contains(trunc, "truncated") || !strings.Contains(trunc, "/ui/runs/"+id+"/output/big") {
			t.Errorf("the big output's marker reads %q; want a truncation note with a link to the full output", trunc)
		}
		full := b.eval(t, fmt.Sprintf(`fetch('/ui/runs/%s/output/big').then(r => r.text())`, id))
		if !strings.Contains(full, filler) {
			t.Errorf("the full-output link does not give the whole output (%d bytes)", len(full))
		}
	})

	t.Run("cancel from the page", func(t *testing.T) {
		calls := callAsync(t, mc, "nap", map[string]any{"ms": 60000, "label": "cancel-me"})
		b.do(t, chromedp.Navigate(base+"/ui/runs?workflow=nap&status=running"))
		id := b.waitJS(t, "the running nap", `(() => { const r = document.querySelector('#runs [data-run][data-status=running]'); return r ? r.dataset.run : ''; })()`)
		waitFor(t, "the backend to start the nap", func() bool { return strings.Contains(readFile(rec), "start cancel-me") })
		b.do(t, chromedp.Navigate(base+"/ui/runs/"+id))
		// Clicked from script: the live part of the page may be swapped
		// in between a query and a click from outside.
		b.waitJS(t, "the cancel button", `(() => { const b = document.querySelector('[data-action=cancel]'); if (b) b.click(); return !!b; })()`)
		b.waitJS(t, "the run page saying cancelled", `!!document.querySelector('[data-run-status=cancelled]')`)
		if n := b.eval(t, `String(document.querySelectorAll('[data-action=cancel]').length)`); n != "0" {
			t.Errorf("a cancelled run still has %s cancel button(s)", n)
		}
		waitFor(t, "the backend to see the cancel", func() bool { return strings.Contains(readFile(rec), "cancelled cancel-me") })
		select {
		case res := <-calls:
			if res.err == nil && !res.res.IsError {
				t.Errorf("the cancelled call succeeded: %s", testenv.ResultText(res.res))
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the cancelled call did not return within 30s")
		}
	})

	t.Run("workflow page draws every step", func(t *testing.T) {
		for name, want := range map[string][]string{
			"investigate_incident": {"correlate", "create_ticket", "fetch_logs", "fetch_metrics", "fetch_traces"},
			"mixed":                {"big", "broken", "fine", "loop", "loop/inner", "never"},
		} {
			b.do(t, chromedp.Navigate(base+"/ui/workflows/"+name))
			b.waitJS(t, "the plan graph", `!!document.querySelector('.graph svg')`)
			got := b.eval(t, `[...document.querySelectorAll('.graph svg [data-step]')].map(e => e.dataset.step).sort().join(' ')`)
			if got != strings.Join(want, " ") {
				t.Errorf("%s: the SVG's steps are %q; want %q", name, got, strings.Join(want, " "))
			}
			if src := b.eval(t, `document.querySelector('pre.source') ? document.querySelector('pre.source').textContent : ''`); !strings.Contains(src, "name: "+name) && !strings.Contains(src, "name: "+name+"\n") {
				t.Errorf("%s: the page does not show the workflow's source", name)
			}
		}
	})

	t.Run("authored workflow versions", func(t *testing.T) {
		draft := func(says string) string {
			return "name: hello_world\ndescription: Say something\nsteps:\n  - {id: say_it, tool: tb.echo, arguments: {text: " + says + "}}\n"
		}
		for i, says := range []string{"first", "second"} {
			res := mustCall(t, mc, "vmcp_workflow_save", map[string]any{"source": draft(says), "replace": i > 0})
			if res.IsError {
				t.Fatalf("save: %s", testenv.ResultText(res))
			}
		}
		b.do(t, chromedp.Navigate(base+"/ui/workflows"))
		row := b.waitJS(t, "the authored workflow's row", `(() => { const r = document.querySelector('tr[data-workflow=hello_world]'); return r ? r.textContent : ''; })()`)
		if !strings.Contains(row, "authored") || !strings.Contains(row, "v2") {
			t.Errorf("the row reads %q; want authored, v2", row)
		}
		if files := b.eval(t, `document.querySelector('tr[data-workflow=quick] [data-version]').dataset.version`); !strings.HasPrefix(files, "sha256:") {
			t.Errorf("a workflow from files has version %q; want its plan hash", files)
		}
		b.do(t, chromedp.Navigate(base+"/ui/workflows/hello_world"))
		b.waitJS(t, "the workflow page", `!!document.querySelector('.graph svg [data-step=say_it]')`)
		versions := b.eval(t, `[...document.querySelectorAll('table.versions tr[data-version]')].map(r => r.dataset.version).join(' ')`)
		src := b.eval(t, `document.querySelector('pre.source').textContent`)
		if versions != "2 1" || !strings.Contains(src, "text: second") {
			t.Errorf("versions %q, source %q; want versions 2 1 and the second source", versions, src)
		}
		b.do(t, chromedp.Navigate(base+"/ui/workflows/hello_world?version=1"))
		if src := b.eval(t, `document.querySelector('pre.source').textContent`); !strings.Contains(src, "text: first") {
			t.Errorf("version 1's source reads %q", src)
		}
	})

	t.Run("outputs are text, never HTML", func(t *testing.T) {
		evil := `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"><b>bold</b>`
		res, err := callTool(t, mc, "html_output", map[string]any{"text": evil}, nil)
		if err != nil {
			t.Fatal(err)
		}
		id := runID(t, res)
		for _, page := range []string{"/ui/runs/" + id, "/ui/runs"} {
			b.do(t, chromedp.Navigate(base+page))
			b.waitJS(t, page, `document.readyState === 'complete'`)
			if got := b.eval(t, `String(window.__pwned)`); got != "undefined" {
				t.Fatalf("%s: a script from a step output ran (window.__pwned = %s)", page, got)
			}
			if n := b.eval(t, `String(document.querySelectorAll('main script, main img, main b').length)`); n != "0" {
				t.Errorf("%s: the output became %s element(s)", page, n)
			}
		}
		b.do(t, chromedp.Navigate(base+"/ui/runs/"+id))
		b.do(t, chromedp.Click(chromedp.CSS(`details[data-step=echo_html] > summary`)))
		text := b.eval(t, `document.querySelector('details[data-step=echo_html] [data-output]').textContent`)
		if !strings.Contains(text, `<script>window.__pwned = 1</script>`) {
			t.Errorf("the output is not shown as text: %q", text)
		}
		errText := b.eval(t, `document.querySelector('.run-error').textContent`)
		if !strings.Contains(errText, "<img src=x") || !regexp.MustCompile(`vmcp\.yaml:\d+:\d+`).MatchString(errText) {
			t.Errorf("the run's error reads %q; want the HTML as text, with the step's file:line:col", errText)
		}
	})

	t.Run("a thousand runs", func(t *testing.T) {
		before := b.cpu(t)
		b.do(t, chromedp.Navigate(base+"/ui/runs?limit=1000"))
		b.waitJS(t, "the list", `document.readyState === 'complete'`)
		after := b.cpu(t)
		rows := b.eval(t, `String(document.querySelectorAll('#runs [data-run]').length)`)
		if rows != "1000" {
			t.Errorf("the list shows %s rows; want 1000", rows)
		}
		// Measured, not asserted (the machine is shared, and this vmcp is
		// built with -race): the server's part (request to the last byte)
		// and the browser's (parse, style, layout, to the load event).
		ms := b.eval(t, `(() => { const n = performance.getEntriesByType('navigation')[0]; return 'server and transfer ' + Math.round(n.responseEnd - n.requestStart) + 'ms, browser ' + Math.round(n.loadEventEnd - n.responseEnd) + 'ms, total ' + Math.round(n.loadEventEnd - n.startTime) + 'ms'; })()`)
		t.Logf("the runs list with 1,000 runs: %s", ms)
		// The main thread's CPU time (thread ticks), which the other
		// processes on this machine do not inflate.
		t.Logf("the browser's main thread spent %.0fms of CPU on it (layout %.0fms, style %.0fms, script %.0fms)",
			1000*(after["TaskDuration"]-before["TaskDuration"]), 1000*(after["LayoutDuration"]-before["LayoutDuration"]),
			1000*(after["RecalcStyleDuration"]-before["RecalcStyleDuration"]), 1000*(after["ScriptDuration"]-before["ScriptDuration"]))
	})

	if os.Getenv("VMCP_SCREENSHOTS") == "1" {
		t.Run("screenshots", func(t *testing.T) { screenshots(t, b, base, mc) })
	}
}

// screenshots writes the pictures of docs/console.md into docs/.
func screenshots(t *testing.T, b *browser, base string, mc *client.Client) {
	docs := filepath.Join(testenv.RepoRoot(), "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	save := func(name string, png []byte) {
		if err := os.WriteFile(filepath.Join(docs, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote docs/%s (%d bytes)", name, len(png))
	}
	id := runID(t, mustCall(t, mc, "investigate_incident", map[string]any{"incident_id": "INC-1234", "time_range": "2h"}))
	// The viewport, as a person sees the page (PNG).
	b.do(t, chromedp.EmulateViewport(1400, 760))
	b.do(t, chromedp.Navigate(base+"/ui/runs"))
	b.waitJS(t, "the list", `document.readyState === 'complete'`)
	save("console-runs.png", b.shot(t, chromedp.CaptureScreenshot(), "runs list"))
	b.do(t, chromedp.EmulateViewport(1400, 660))
	b.do(t, chromedp.Navigate(base+"/ui/runs/"+id))
	b.waitJS(t, "the run", `!!document.querySelector('[data-run-status=completed]')`)
	// The three fetches ran at once: their bars overlap.
	overlap := b.eval(t, `(() => { const r = ['fetch_logs','fetch_metrics','fetch_traces'].map(s => document.querySelector('[data-step='+s+'] .bar').getBoundingClientRect()); return String(Math.min(...r.map(x => x.right)) > Math.max(...r.map(x => x.left))); })()`)
	if overlap != "true" {
		t.Errorf("the three fetches' bars do not overlap on the timeline")
	}
	save("console-run.png", b.shot(t, chromedp.CaptureScreenshot(), "run timeline"))
	b.do(t, chromedp.EmulateViewport(1400, 900))
	b.do(t, chromedp.Navigate(base+"/ui/workflows/investigate_incident"))
	b.waitJS(t, "the graph", `!!document.querySelector('.graph svg')`)
	save("console-plan.png", b.shot(t, chromedp.Screenshot(chromedp.CSS(`.graph`)), "plan graph"))
}

// browser is one headless chromium for the whole test.
type browser struct {
	ctx context.Context
}

func newBrowser(t *testing.T, path string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 900))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first Run starts the browser, which lives as long as the context
	// of that call: so no deadline here (chromedp gives up by itself when
	// the browser does not start).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &browser{ctx: ctx}
}

// do runs actions one after another, with a 30s deadline for all. An
// action that finds its node gone (the browser's "No node with given id
// found": the page was replaced between chromedp's query and the action,
// as after a form's navigation, before chromedp has read the new
// document) is tried again, up to five times: it did nothing, since its
// node was not there, so trying it again is safe, where running the whole
// list again would repeat the clicks that did happen.
func (b *browser) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	for _, a := range actions {
		err := chromedp.Do(ctx, a)
		for try := 1; err != nil && try < 5 && strings.Contains(err.Error(), "No node with given id found"); try++ {
			time.Sleep(100 * time.Millisecond)
			err = chromedp.Do(ctx, a)
		}
		if err != nil {
			t.Fatalf("browser: %v", err)
		}
	}
}

func (b *browser) location(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return loc
}

// eval evaluates a JavaScript expression (awaiting a promise) that gives
// a string.
func (b *browser) eval(t *testing.T, js string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[*string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("browser: %s: %v", js, err)
	}
	if v == nil {
		return ""
	}
	return *v
}

func (b *browser) evalMap(t *testing.T, js string) map[string]string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal([]byte(b.eval(t, "JSON.stringify("+js+")")), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// waitJS waits up to 15s for a JavaScript expression to be truthy and
// returns its value as a string. It evaluates the expression afresh every
// 50ms (not with chromedp.Poll, whose page may be replaced by a
// navigation under it).
func (b *browser) waitJS(t *testing.T, what, js string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
		cancel()
		last = err
		if err == nil {
			switch x := v.(type) {
			case bool:
				if x {
					return "true"
				}
			case string:
				if x != "" {
					return x
				}
			case nil:
			default:
				return fmt.Sprint(x)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	text := b.eval(t, `document.body ? document.body.innerText.slice(0, 2000) : '(no page)'`)
	t.Fatalf("waiting for %s: not within 15s (last error: %v)\nthe page at %s reads:\n%s", what, last, b.location(t), text)
	return ""
}

// cpu reads the page's performance metrics, durations in seconds of the
// main thread's CPU time (Performance.getMetrics in thread ticks).
func (b *browser) cpu(t *testing.T) map[string]float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	m, err := chromedp.Run(ctx, chromedp.Action[map[string]float64](func(ctx context.Context, tg *chromedp.Target) (map[string]float64, error) {
		if _, err := cdp.Call(ctx, tg, performance.Enable, performance.EnableParams{TimeDomain: performance.EnableTimeDomainThreadTicks}); err != nil {
			return nil, err
		}
		res, err := cdp.Call(ctx, tg, performance.GetMetrics, cdp.Empty{})
		if err != nil {
			return nil, err
		}
		out := map[string]float64{}
		for _, x := range res.Metrics {
			out[x.Name] = x.Value
		}
		return out, nil
	}))
	if err != nil {
		t.Fatalf("performance metrics: %v", err)
	}
	return m
}

func (b *browser) shot(t *testing.T, a chromedp.Action[[]byte], what string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("screenshot of the %s: %v", what, err)
	}
	return png
}

type callResult struct {
	res *mcp.CallToolResult
	err error
}

// callAsync calls a tool on another goroutine (with a deadline of two
// minutes); the result, or the error, arrives on the channel.
func callAsync(t *testing.T, c interface {
	CallTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error)
}, name string, args map[string]any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctx, req)
		ch <- callResult{res, err}
	}()
	return ch
}

// runID reads the run id from a workflow result's _meta.
func runID(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.Meta != nil {
		if id, ok := res.Meta.AdditionalFields["vmcp/runId"].(string); ok && id != "" {
			return id
		}
	}
	t.Fatalf("the result names no run id: %+v", res.Meta)
	return ""
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// prefill stores n finished runs of investigate_incident (one in 17
// failed) in the SQLite state file, newest a minute ago.
func prefill(t *testing.T, path string, n int) {
	t.Helper()
	s, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	ids := []string{"fetch_logs", "fetch_metrics", "fetch_traces", "correlate", "create_ticket"}
	start := time.Now().Add(-time.Minute)
	for i := range n {
		at := start.Add(-time.Duration(i) * 37 * time.Second)
		run := &runtime.Run{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Workflow: "investigate_incident", Status: runtime.RunRunning, StartedAt: at}
		for _, id := range ids {
			run.Steps = append(run.Steps, runtime.StepState{ID: id, Status: runtime.StepPending})
		}
		if err := s.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		for k := range run.Steps {
			run.Steps[k].Status, run.Steps[k].Attempts = runtime.StepCompleted, 1
			run.Steps[k].StartedAt = at.Add(time.Duration(max(0, k-2)) * 500 * time.Millisecond)
			run.Steps[k].EndedAt = run.Steps[k].StartedAt.Add(time.Duration(300+100*(k%3)) * time.Millisecond)
		}
		run.Status, run.EndedAt = runtime.RunCompleted, at.Add(1300*time.Millisecond)
		if i%17 == 5 {
			last := &run.Steps[len(run.Steps)-1]
			last.Status, last.Error = runtime.StepFailed, "jira: 503 Service Unavailable"
			run.Status = runtime.RunFailed
			run.Error = &runtime.StepError{Step: "create_ticket", Pos: ir.Pos{File: "examples/incident_investigation.yaml", Line: 60, Col: 9}, Msg: last.Error}
		}
		if err := s.FinishRun(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
}
