package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

// DefaultLimit is how many runs the runs list shows unless ?limit= says
// otherwise (at most httpapi.MaxLimit).
const DefaultLimit = 200

// runStatuses are the run statuses in the order the filter lists them.
var runStatuses = []runtime.RunStatus{runtime.RunPending, runtime.RunRunning, runtime.RunCompleted, runtime.RunFailed,
	runtime.RunCancelled, runtime.RunTimedOut, runtime.RunInterrupted}

// runFilter is the runs list's query: ?workflow=&status=&limit=.
type runFilter struct {
	Workflow string
	Status   string
	Limit    int
}

// Query writes the filter back as a query string (without limit when it
// is the default), for links and fragment requests.
func (f runFilter) Query() string {
	q := url.Values{}
	if f.Workflow != "" {
		q.Set("workflow", f.Workflow)
	}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	if f.Limit != DefaultLimit && f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	return q.Encode()
}

func (f runFilter) matches(s httpapi.RunSummary) bool {
	return (f.Workflow == "" || s.Workflow == f.Workflow) && (f.Status == "" || string(s.Status) == f.Status)
}

// parseFilter reads the filter; the error says what is wrong and how to
// fix it.
func parseFilter(q url.Values) (runFilter, error) {
	f := runFilter{Workflow: q.Get("workflow"), Status: q.Get("status"), Limit: DefaultLimit}
	if f.Status != "" && !slices.Contains(runStatuses, runtime.RunStatus(f.Status)) {
		names := make([]string, len(runStatuses))
		for i, s := range runStatuses {
			names[i] = string(s)
		}
		return f, fmt.Errorf("unknown status %q: the statuses are %s", f.Status, strings.Join(names, ", "))
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > httpapi.MaxLimit {
			return f, fmt.Errorf("limit must be a whole number from 1 to %d, not %q", httpapi.MaxLimit, l)
		}
		f.Limit = n
	}
	return f, nil
}

type runsData struct {
	Filter    runFilter
	Workflows []string
	Statuses  []runtime.RunStatus
	Rows      []template.HTML // rendered by rowHTML
	More      bool            // the list was cut at the limit
	MoreQuery string          // the query of the page with more runs
	Notice    string
	Since     int64 // when the page was rendered, Unix ms (see events.go)
}

func (c *Console) runsPage(w http.ResponseWriter, r *http.Request) {
	d := runsData{Statuses: runStatuses, Since: c.opts.Now().UnixMilli()}
	for _, wf := range c.opts.Engine.Workflows() {
		d.Workflows = append(d.Workflows, wf.Name)
	}
	f, err := parseFilter(r.URL.Query())
	d.Filter = f
	if err != nil {
		d.Notice = err.Error()
		c.full(w, r, http.StatusBadRequest, "runs.html", "Runs", "runs", d)
		return
	}
	if f.Workflow != "" && !slices.Contains(d.Workflows, f.Workflow) {
		d.Notice = fmt.Sprintf("No workflow named %q is served now; runs of it are shown if the store still has them.", f.Workflow)
	}
	// One more than the limit tells whether there are more.
	runs, err := c.opts.Store.ListRuns(r.Context(), runtime.RunFilter{Workflow: f.Workflow, Status: runtime.RunStatus(f.Status), Limit: f.Limit + 1, Summary: true})
	if err != nil {
		c.internal(w, r, "listing runs", err)
		return
	}
	if len(runs) > f.Limit {
		runs, d.More = runs[:f.Limit], true
		more := f
		more.Limit = min(httpapi.MaxLimit, f.Limit*5)
		if more.Limit == f.Limit {
			d.More = false // at the cap: the filters narrow it
		}
		d.MoreQuery = more.Query()
	}
	now := c.opts.Now()
	d.Rows = make([]template.HTML, len(runs))
	for i, run := range runs {
		if d.Rows[i], err = c.rowHTML(httpapi.Summarize(run, now)); err != nil {
			c.internal(w, r, "rendering the row of run "+run.ID, err)
			return
		}
	}
	c.full(w, r, http.StatusOK, "runs.html", "Runs", "runs", d)
}

// runRow serves one row of the runs list, for live updates: 204 when the
// run does not match the list's filter (given in the query).
func (c *Console) runRow(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	run, ok := c.lookup(w, r)
	if !ok {
		return
	}
	s := httpapi.Summarize(run, c.opts.Now())
	if !f.matches(s) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	row, err := c.rowHTML(s)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	io.WriteString(w, string(row))
}

// rowCacheSize bounds the rows kept by rowHTML; the cache is emptied when
// it is full (finished runs are rendered again at the next look).
const rowCacheSize = 4096

// rowCache keeps the rendered rows of finished runs, which no longer
// change: the runs list with 1,000 runs is mostly these, and executing
// the row template costs about 30 µs a row (BenchmarkRunsPage1000). A row
// is keyed by run id, status and end time, so a run that changes again
// (resumed after an interruption) gets a new entry.
type rowCache struct {
	mu   sync.Mutex
	rows map[rowKey]template.HTML
}

type rowKey struct {
	id     string
	status runtime.RunStatus
	ended  int64
}

// rowHTML renders one row of the runs list (the "runrow" template), from
// the cache when the run has finished.
func (c *Console) rowHTML(s httpapi.RunSummary) (template.HTML, error) {
	key := rowKey{s.ID, s.Status, s.EndedAt.UnixNano()}
	finished := s.Status.Finished()
	if finished {
		c.rows.mu.Lock()
		row, ok := c.rows.rows[key]
		c.rows.mu.Unlock()
		if ok {
			return row, nil
		}
	}
	var b strings.Builder
	if err := c.pages["runrow"].ExecuteTemplate(&b, "runrow", rowOf(s)); err != nil {
		return "", err
	}
	row := template.HTML(b.String()) // html/template's own output
	if finished {
		c.rows.mu.Lock()
		if len(c.rows.rows) >= rowCacheSize {
			clear(c.rows.rows)
		}
		c.rows.rows[key] = row
		c.rows.mu.Unlock()
	}
	return row, nil
}

// lookup reads the run named by the path, answering 404 itself.
func (c *Console) lookup(w http.ResponseWriter, r *http.Request) (*runtime.Run, bool) {
	id := r.PathValue("id")
	run, err := c.getRun(r.Context(), id)
	if errors.Is(err, runtime.ErrRunNotFound) {
		c.errorPage(w, r, http.StatusNotFound, fmt.Sprintf("There is no run %q: it may have been dropped from the store (state.retention), or the id is mistyped.", id))
		return nil, false
	}
	if err != nil {
		c.internal(w, r, "reading run "+id, err)
		return nil, false
	}
	return run, true
}

func (c *Console) runPage(w http.ResponseWriter, r *http.Request) {
	run, ok := c.lookup(w, r)
	if !ok {
		return
	}
	v, err := c.buildRun(r.Context(), run)
	if err != nil {
		c.internal(w, r, "reading the runs of "+run.ID, err)
		return
	}
	v.CSRF = c.auth.csrfToken(w, r)
	c.full(w, r, http.StatusOK, "run.html", run.Workflow+" "+shortID(run.ID), "runs", v)
}

// runLive serves the part of the run page that changes while it runs.
func (c *Console) runLive(w http.ResponseWriter, r *http.Request) {
	run, ok := c.lookup(w, r)
	if !ok {
		return
	}
	v, err := c.buildRun(r.Context(), run)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	v.CSRF = c.auth.csrfToken(w, r)
	c.render(w, http.StatusOK, "runlive", v)
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// stepOutput serves the full output of one step as JSON: path is the step
// path of the page ("fetch", "loop/2/inner"; empty for the run's result).
// It is served as JSON with nosniff, so it is never run as a page.
func (c *Console) stepOutput(w http.ResponseWriter, r *http.Request) {
	run, ok := c.lookup(w, r)
	if !ok {
		return
	}
	path := r.PathValue("path")
	var v any
	if path == "" {
		v = run.Output
	} else {
		var err error
		if v, err = findOutput(httpapi.Detail(run, c.opts.Now()).Steps, path); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// findOutput walks a step path: step ids, with an iteration index after
// each loop ("loop/2/inner").
func findOutput(steps []httpapi.StepDetail, path string) (any, error) {
	parts := strings.Split(path, "/")
	for {
		id := parts[0]
		i := slices.IndexFunc(steps, func(s httpapi.StepDetail) bool { return s.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("the run has no step %q here (the path is step ids and iteration numbers: loop/2/inner)", id)
		}
		st := steps[i]
		if len(parts) == 1 {
			return st.Output, nil
		}
		k, err := strconv.Atoi(parts[1])
		if err != nil || k < 0 || k >= len(st.Iterations) || len(parts) < 3 {
			return nil, fmt.Errorf("step %q has no iteration %q (it has %d)", id, parts[1], len(st.Iterations))
		}
		steps, parts = st.Iterations[k].Steps, parts[2:]
	}
}

// rerun starts a finished run again from its page (runtime.Rerunner) and
// shows the new run's page; the form's current field (true) asks for the
// workflow version served now.
func (c *Console) rerun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !httpsafe.Allowed(r.Context(), httpsafe.ScopeAdmin) {
		c.errorPage(w, r, http.StatusForbidden, httpsafe.ForbiddenMessage(httpsafe.ScopeAdmin, "Re-running a run"))
		return
	}
	if c.opts.Rerun == nil {
		c.errorPage(w, r, http.StatusNotImplemented, "This console cannot re-run runs.")
		return
	}
	current := r.PostFormValue("current") == "true"
	run, err := c.opts.Rerun.Rerun(r.Context(), id, current)
	switch {
	case errors.Is(err, runtime.ErrRunNotFound):
		c.errorPage(w, r, http.StatusNotFound, fmt.Sprintf("There is no run %q to re-run.", id))
		return
	case runtime.IsRerunError(err):
		c.errorPage(w, r, http.StatusConflict, strings.Replace(err.Error(), "--current (?current=true)", "the current version", 1)+".")
		return
	case err != nil:
		c.internal(w, r, "re-running run "+id, err)
		return
	}
	c.log.Info("run re-run requested from the console", "run_id", id, "new_run_id", run.ID, "current", current)
	http.Redirect(w, r, "/ui/runs/"+url.PathEscape(run.ID), http.StatusSeeOther)
}

// cancel stops a running run from its page and shows the page again
// once the run has stopped or CancelWait has passed. Whoever sees a run
// may cancel it (the caller's own runs; every run for admin).
func (c *Console) cancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	err := c.runs.Cancel(r.Context(), id)
	if errors.Is(err, runtime.ErrRunNotFound) {
		c.errorPage(w, r, http.StatusNotFound, fmt.Sprintf("There is no run %q to cancel.", id))
		return
	}
	if err != nil {
		c.internal(w, r, "cancelling run "+id, err)
		return
	}
	c.log.Info("run cancel requested from the console", "run_id", id)
	deadline := time.Now().Add(c.opts.CancelWait)
	for time.Now().Before(deadline) {
		run, err := c.getRun(r.Context(), id)
		if err != nil || run.Status.Finished() {
			break
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	http.Redirect(w, r, "/ui/runs/"+url.PathEscape(id), http.StatusSeeOther)
}
