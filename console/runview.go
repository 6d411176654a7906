package console

// The view models of the run pages: a run's record (httpapi.Detail, the
// same form the API serves) joined with what the plan says about each
// step (its source position, tool and dependencies), laid out on the
// timeline's axis.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// maxOutputShown is how many bytes of a value's JSON a page shows; the
// rest is behind the "full output" link.
const maxOutputShown = 4096

// maxChildDepth is how deep child runs open in place; deeper ones are
// links to their own page.
const maxChildDepth = 4

// maxChildrenShown is how many child runs a step shows in place.
const maxChildrenShown = 50

// runRow is one line of the runs list.
type runRow struct {
	ID, Workflow, Status string
	Started, StartedISO  string
	Duration             string
	Finished, StepCount  int
	Error                string
	ParentID, ParentStep string
	FinallyFailed        string
	Version              string // the workflow version it ran
	Draft                bool   // a draft run (vmcp_workflow_run)
	Owner                string // who started it (runtime.Run.Owner)
	Trigger              string // what started it, when not a client (rerun:ID)
	RerunOf              string // the run it re-ran, from Trigger
	TraceID              string // its trace's id, when vmcp traces
}

func rowOf(s httpapi.RunSummary) runRow {
	r := runRow{ID: s.ID, Workflow: s.Workflow, Status: string(s.Status),
		Started: s.StartedAt.UTC().Format("2006-01-02 15:04:05"), StartedISO: s.StartedAt.UTC().Format(time.RFC3339Nano),
		Duration: formatDuration(time.Duration(s.DurationMS) * time.Millisecond),
		Finished: s.Finished, StepCount: s.StepCount, ParentID: s.ParentID, ParentStep: s.ParentStep,
		FinallyFailed: strings.Join(s.FinallyFailed, ", "), Version: s.WorkflowVersion, Draft: s.Draft, Owner: s.Owner,
		Trigger: s.Trigger, TraceID: s.TraceID}
	if id, ok := strings.CutPrefix(s.Trigger, runtime.TriggerRerun); ok {
		r.RerunOf = id
	}
	if s.Error != nil {
		r.Error = clip(s.Error.Error(), 240)
	}
	return r
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// outputView is a value shown as JSON text, truncated visibly.
type outputView struct {
	Present   bool
	Text      string
	Truncated bool
	Shown     int
	Total     int
	Link      string // the full JSON, from the console
	APILink   string // the run in the API
}

func outputOf(v any, link, apiLink string) outputView {
	if v == nil {
		return outputView{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the page escapes it; "<" stays readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return outputView{Present: true, Text: "(this value cannot be shown as JSON: " + err.Error() + ")"}
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	o := outputView{Present: true, Total: len(b), Link: link, APILink: apiLink}
	if len(b) <= maxOutputShown {
		o.Text, o.Shown = string(b), len(b)
		return o
	}
	n := maxOutputShown
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	o.Text, o.Shown, o.Truncated = string(b[:n]), n, true
	return o
}

// stepRow is one step on the timeline.
type stepRow struct {
	Key        string // unique on the page: the step path, prefixed by child run ids
	ID         string
	Status     string
	Attempts   int
	Action     string
	Pos        string
	Critical   bool
	Finally    bool
	Iteration  int // the iteration index of a body step; -1 at top level
	Start      string
	Duration   string
	Bar        bar
	Output     outputView
	Error      string
	Note       string
	Iterations []iterationView
	Items      []itemView
	Children   []childView
	MoreKids   int // child runs not shown in place
}

// Open reports whether the row has anything to open in place.
func (s stepRow) Open() bool {
	return s.Output.Present || s.Error != "" || s.Note != "" || len(s.Iterations) > 0 || len(s.Items) > 0 || len(s.Children) > 0
}

type iterationView struct {
	Key    string
	Index  int
	Label  string // names the item (runtime.ItemLabel)
	Status string
	Error  string
	Steps  []stepRow
}

// itemView is one iteration of a loop over a single inner step, which has
// no times of its own (the loop's output holds them).
type itemView struct {
	Index  int
	Status string
	Error  string
	Item   outputView
	Output outputView
}

type childView struct {
	ID, Workflow, Status string
	Error                string
	Steps                []stepRow
	Deep                 bool // beyond maxChildDepth: a link only
}

// runView is the run page.
type runView struct {
	Row      runRow
	Running  bool
	Axis     axis
	Steps    []stepRow
	Finally  []stepRow
	Output   outputView
	Error    string
	ErrorPos string
	ErrStep  string
	APILink  string
	// TraceLink is the link to the run's trace (Options.TraceURL), or "".
	TraceLink string
	Children  int
	CSRF      string
	// Admin: the session's token has the admin scope (re-runs need it).
	Admin bool
	// CanRerun: the console can re-run this run (it has finished and was
	// no draft); the button also needs the admin scope.
	CanRerun bool
	// Questions are the elicitations the run waits on, as forms (on the
	// full page only: a live refresh would wipe what is being typed).
	Questions []questionView
	// Asking names the steps whose questions wait now, space-separated,
	// in the live part too: the page reloads to show (or drop) a form
	// when it differs from the forms shown.
	Asking  string
	Missing string // why the plan's step details are missing
	Since   int64  // when the page was rendered, Unix ms (see events.go)
}

// builder builds a runView; it keeps the axis, the clock and the console
// for child runs.
type builder struct {
	c    *Console
	ctx  context.Context
	axis axis
	now  time.Time
}

func (c *Console) buildRun(ctx context.Context, run *runtime.Run) (runView, error) {
	now := c.opts.Now()
	d := httpapi.Detail(run, now)
	end := run.EndedAt
	if end.IsZero() {
		end = now
	}
	b := &builder{c: c, ctx: ctx, axis: newAxis(run.StartedAt, end), now: now}
	v := runView{Row: rowOf(d.RunSummary), Running: !run.Status.Finished(), Axis: b.axis, Since: now.UnixMilli(),
		CanRerun: c.opts.Rerun != nil && run.Status.Finished() && !run.Draft,
		Admin:    httpsafe.Allowed(ctx, httpsafe.ScopeAdmin),
		APILink:  "/api/v1/runs/" + url.PathEscape(run.ID)}
	if c.opts.TraceURL != nil && run.TraceID != "" {
		v.TraceLink = c.opts.TraceURL(run.TraceID)
	}
	v.Output = outputOf(run.Output, outputLink(run.ID, ""), v.APILink)
	if run.Error != nil {
		v.Error, v.ErrStep = run.Error.Msg, run.Error.Step
		if run.Error.Pos.IsValid() {
			v.ErrorPos = run.Error.Pos.String()
		}
	}
	wf, ok := c.opts.Engine.Workflow(run.Workflow)
	if !ok {
		v.Missing = "The workflow " + strconv.Quote(run.Workflow) + " is not served now, so the steps are shown without their plan."
		wf = &ir.Workflow{}
	}
	main, fin := d.Steps, []httpapi.StepDetail(nil)
	if run.FinallyFrom > 0 && run.FinallyFrom <= len(d.Steps) {
		main, fin = d.Steps[:run.FinallyFrom], d.Steps[run.FinallyFrom:]
	}
	kids, err := b.children(run.ID)
	if err != nil {
		return v, err
	}
	v.Steps = b.scope("", "", run.ID, main, scopeInfo(wf.Steps, runCriticalPath(wf.Steps, main, end)), run.StartedAt, -1, kids, 0)
	finStart := run.StartedAt
	for _, s := range main {
		if s.EndedAt.After(finStart) {
			finStart = s.EndedAt
		}
	}
	v.Finally = b.scope("", "", run.ID, fin, scopeInfo(wf.Finally, nil), finStart, -1, kids, 0)
	for i := range v.Finally {
		v.Finally[i].Finally = true
	}
	for _, k := range kids {
		v.Children += len(k)
	}
	return v, nil
}

// children lists the child runs of run id by the step that started them.
func (b *builder) children(id string) (map[string][]httpapi.RunSummary, error) {
	list, err := httpapi.Children(b.ctx, b.c.opts.Store, id, b.now)
	if err != nil {
		return nil, err
	}
	out := map[string][]httpapi.RunSummary{}
	for i := len(list) - 1; i >= 0; i-- { // oldest first, as they ran
		out[list[i].ParentStep] = append(out[list[i].ParentStep], list[i])
	}
	return out, nil
}

// scope lays out the records of one scope. prefix is the path prefix of
// its rows ("" at the top of a run, "loop/3/" in an iteration); runID is
// the run they belong to (for output links), and ns prefixes the rows'
// keys (the run id for a child run, so keys stay unique on the page).
func (b *builder) scope(ns, prefix, runID string, recs []httpapi.StepDetail, info map[string]stepInfo, scopeStart time.Time, iteration int, kids map[string][]httpapi.RunSummary, depth int) []stepRow {
	byID := make(map[string]httpapi.StepDetail, len(recs))
	for _, r := range recs {
		byID[r.ID] = r
	}
	rows := make([]stepRow, 0, len(recs))
	for _, st := range recs {
		in := info[st.ID]
		var deps []httpapi.StepDetail
		var depIDs []string
		for _, d := range in.Deps {
			if rec, ok := byID[d]; ok {
				deps, depIDs = append(deps, rec), append(depIDs, d)
			}
		}
		path := prefix + st.ID
		row := stepRow{Key: ns + path, ID: st.ID, Status: statusOf(st.Status), Attempts: st.Attempts, Action: in.Action, Pos: in.Pos,
			Critical: in.Critical, Iteration: iteration, Error: st.Error, Note: st.Note,
			Bar: b.axis.place(st, deps, depIDs, scopeStart, b.now)}
		if !st.StartedAt.IsZero() {
			row.Start = "+" + formatDuration(st.StartedAt.Sub(b.axis.start))
			row.Duration = formatDuration(time.Duration(st.DurationMS) * time.Millisecond)
		}
		row.Output = outputOf(st.Output, outputLink(runID, path), "/api/v1/runs/"+url.PathEscape(runID))
		if len(st.Iterations) > 0 {
			bodyInfo := scopeInfo(in.Body, nil)
			for _, it := range st.Iterations {
				ip := path + "/" + strconv.Itoa(it.Index) + "/"
				row.Iterations = append(row.Iterations, iterationView{Key: ns + strings.TrimSuffix(ip, "/"), Index: it.Index, Label: it.Label, Status: it.Status, Error: it.Error,
					Steps: b.scope(ns, ip, runID, it.Steps, bodyInfo, st.StartedAt, it.Index, kids, depth)})
			}
		} else {
			row.Items = itemsOf(st.Output, outputLink(runID, path))
		}
		for i, k := range kids[st.ID] {
			if i >= maxChildrenShown {
				row.MoreKids = len(kids[st.ID]) - maxChildrenShown
				break
			}
			row.Children = append(row.Children, b.child(k, depth+1))
		}
		rows = append(rows, row)
	}
	return rows
}

// child lays out a child run's steps on the same axis.
func (b *builder) child(s httpapi.RunSummary, depth int) childView {
	cv := childView{ID: s.ID, Workflow: s.Workflow, Status: string(s.Status)}
	if s.Error != nil {
		cv.Error = s.Error.Error()
	}
	if depth > maxChildDepth {
		cv.Deep = true
		return cv
	}
	run, err := b.c.getRun(b.ctx, s.ID)
	if err != nil {
		cv.Error = "cannot read this run: " + err.Error()
		return cv
	}
	d := httpapi.Detail(run, b.now)
	wf, ok := b.c.opts.Engine.Workflow(run.Workflow)
	if !ok {
		wf = &ir.Workflow{}
	}
	kids, err := b.children(run.ID)
	if err != nil {
		cv.Error = "cannot list its child runs: " + err.Error()
	}
	main := d.Steps
	if run.FinallyFrom > 0 && run.FinallyFrom <= len(d.Steps) {
		main = d.Steps[:run.FinallyFrom]
	}
	end := run.EndedAt
	if end.IsZero() {
		end = b.now
	}
	cv.Steps = b.scope(run.ID+":", "", run.ID, main, scopeInfo(wf.Steps, runCriticalPath(wf.Steps, main, end)), run.StartedAt, -1, kids, depth)
	return cv
}

// itemsOf reads the iterations of a loop over a single inner step from
// its output ({iterations: [{index, item, status, output, error}]}).
func itemsOf(output any, link string) []itemView {
	out, _ := output.(map[string]any)
	list, _ := out["iterations"].([]any)
	var items []itemView
	for k, x := range list {
		it, _ := x.(map[string]any)
		if it == nil {
			continue
		}
		iv := itemView{Index: k}
		iv.Status, _ = it["status"].(string)
		iv.Error, _ = it["error"].(string)
		iv.Item = outputOf(it["item"], link, "")
		iv.Output = outputOf(it["output"], link, "")
		items = append(items, iv)
	}
	return items
}

// outputLink is the console URL of the full JSON of a step's output
// (path "" is the run's result).
func outputLink(runID, path string) string {
	return "/ui/runs/" + url.PathEscape(runID) + "/output/" + path
}
