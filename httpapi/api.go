package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/vmcp-dev/vmcp/auth/access"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Engine is what the API needs from the engine (*runtime.Engine).
type Engine interface {
	Status(ctx context.Context, id string) (*runtime.Run, error)
	Cancel(ctx context.Context, id string) error
}

// Lister reads the run history (any runtime.Store).
type Lister interface {
	GetRun(ctx context.Context, id string) (*runtime.Run, error)
	ListRuns(ctx context.Context, filter runtime.RunFilter) ([]*runtime.Run, error)
}

// MaxLimit is the largest limit GET /api/v1/runs accepts.
const MaxLimit = 1000

// DefaultLimit is the limit when the request gives none.
const DefaultLimit = 50

// Options configure the API.
type Options struct {
	// Engine answers status and cancel; nil makes cancel answer 501 and
	// status read from Store only.
	Engine Engine
	// Store lists runs; required.
	Store Lister
	// Rerun starts re-runs (POST /api/v1/runs/{id}/rerun); nil answers
	// 501.
	Rerun runtime.Rerunner
	// Ready reports each backend's connection error (nil when connected);
	// nil means ready.
	Ready func() map[string]error
	// Draining, when set and true, makes /readyz answer 503: the process
	// is shutting down, finishing its runs, and takes no new calls (a load
	// balancer sends them elsewhere). /healthz stays ok.
	Draining func() bool
	// Metrics serves GET /metrics; nil leaves the route out.
	Metrics http.Handler
	// CancelWait is how long POST cancel waits for the run to reach a final
	// status before answering 202 (default 5s).
	CancelWait time.Duration
	Logger     *slog.Logger
}

// API is the operations API handler.
type API struct {
	opts Options
	mux  *http.ServeMux
	log  *slog.Logger
}

// New builds the API.
func New(opts Options) (*API, error) {
	if opts.Store == nil {
		return nil, errors.New("httpapi: no store")
	}
	if opts.CancelWait <= 0 {
		opts.CancelWait = 5 * time.Second
	}
	// Every handler sees only the caller's runs (package access).
	opts.Store = access.Store(opts.Store)
	if opts.Engine != nil {
		opts.Engine = access.Engine(opts.Engine)
	}
	a := &API{opts: opts, mux: http.NewServeMux(), log: opts.Logger}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.mux.HandleFunc("GET /api/v1/runs", a.list)
	a.mux.HandleFunc("GET /api/v1/runs/{id}", a.show)
	a.mux.HandleFunc("POST /api/v1/runs/{id}/cancel", a.cancel)
	a.mux.HandleFunc("POST /api/v1/runs/{id}/rerun", a.rerun)
	a.mux.HandleFunc("GET /healthz", a.healthz)
	a.mux.HandleFunc("GET /readyz", a.readyz)
	if opts.Metrics != nil {
		a.mux.Handle("GET /metrics", opts.Metrics)
	}
	return a, nil
}

// Patterns are the ServeMux patterns the API answers, for mounting it in
// another mux next to /mcp.
func (a *API) Patterns() []string {
	p := []string{"/api/v1/", "GET /healthz", "GET /readyz"}
	if a.opts.Metrics != nil {
		p = append(p, "GET /metrics")
	}
	return p
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// RunSummary is one run in a list.
type RunSummary struct {
	ID       string `json:"id"`
	Workflow string `json:"workflow"`
	// WorkflowVersion is the version of the workflow the run ran (see
	// runtime.Run), and Draft marks the run of an unsaved draft.
	WorkflowVersion string `json:"workflowVersion,omitempty"`
	Draft           bool   `json:"draft,omitempty"`
	ParentID        string `json:"parentId,omitempty"`
	ParentStep      string `json:"parentStep,omitempty"`
	Trigger         string `json:"trigger,omitempty"`
	// TraceID is the run's trace id when vmcp traces (telemetry:).
	TraceID string `json:"traceId,omitempty"`
	// Owner is who started the run (runtime.Run.Owner).
	Owner      string             `json:"owner,omitempty"`
	Status     runtime.RunStatus  `json:"status"`
	StartedAt  time.Time          `json:"startedAt"`
	EndedAt    time.Time          `json:"endedAt,omitzero"`
	DurationMS int64              `json:"durationMs"`
	StepCount  int                `json:"stepCount"`
	Finished   int                `json:"finishedSteps"`
	Error      *runtime.StepError `json:"error,omitempty"`
	// FinallyFailed names the finally steps that failed; they do not
	// change Status.
	FinallyFailed []string `json:"finallyFailed,omitempty"`
}

// RunList is the body of GET /api/v1/runs.
type RunList struct {
	Runs []RunSummary `json:"runs"`
	// NextCursor, when set, continues the list: pass it as cursor (with
	// the same filters) for the next page.
	NextCursor string `json:"nextCursor,omitempty"`
}

// RunDetail is the body of GET /api/v1/runs/{id} and of cancel.
type RunDetail struct {
	RunSummary
	Output any          `json:"output,omitempty"`
	Steps  []StepDetail `json:"steps"`
	// Children are the runs its workflow steps started, newest first
	// (see Children).
	Children []RunSummary `json:"children,omitempty"`
}

// StepDetail is one step of a RunDetail.
type StepDetail struct {
	runtime.StepState
	DurationMS int64 `json:"durationMs"`
	// Finally marks a finally step (see runtime.Run.IsFinally).
	Finally bool `json:"finally,omitempty"`
	// Iterations are a loop body's runs, one per item, each with its body
	// steps' records (taken from the loop's output, see
	// runtime/body.go); empty for other steps.
	Iterations []IterationDetail `json:"iterations,omitempty"`
}

// IterationDetail is one iteration of a loop with a body.
type IterationDetail struct {
	Index int `json:"index"`
	// Label names the iteration's item (runtime.ItemLabel), as its
	// error does: `name "web-2"`, or the start of the item's JSON.
	Label  string       `json:"label"`
	Status string       `json:"status"`
	Error  string       `json:"error,omitempty"`
	Steps  []StepDetail `json:"steps"`
}

// bodyIterations reads the iterations of a loop with a body from its
// output ({iterations: [{index, item, status, error, steps: {id: record}}]}),
// whether it comes from memory or was decoded from a store's JSON. Body
// steps are ordered by start time, then id, for a timeline.
func bodyIterations(output any, now time.Time) []IterationDetail {
	out, _ := output.(map[string]any)
	list, _ := out["iterations"].([]any)
	var its []IterationDetail
	for k, x := range list {
		it, _ := x.(map[string]any)
		recs, ok := it["steps"].(map[string]any)
		if !ok {
			return nil // not a loop with a body
		}
		d := IterationDetail{Index: k, Label: runtime.ItemLabel(it["item"])}
		d.Status, _ = it["status"].(string)
		d.Error, _ = it["error"].(string)
		for id, r := range recs {
			rec, _ := r.(map[string]any)
			st := StepDetail{StepState: runtime.StepState{ID: id, Output: rec["output"]}}
			if s, ok := rec["status"].(string); ok {
				st.Status = runtime.StepStatus(s)
			}
			st.Error, _ = rec["error"].(string)
			switch n := rec["attempts"].(type) {
			case int64:
				st.Attempts = int(n)
			case float64:
				st.Attempts = int(n)
			}
			st.StartedAt = recordTime(rec["startedAt"])
			st.EndedAt = recordTime(rec["endedAt"])
			if !st.StartedAt.IsZero() {
				st.DurationMS = durationMS(st.StartedAt, st.EndedAt, now)
			}
			st.Iterations = bodyIterations(st.Output, now)
			d.Steps = append(d.Steps, st)
		}
		sort.Slice(d.Steps, func(i, j int) bool {
			a, b := d.Steps[i], d.Steps[j]
			switch {
			case a.StartedAt.IsZero() != b.StartedAt.IsZero():
				return b.StartedAt.IsZero() // steps that never started last
			case !a.StartedAt.Equal(b.StartedAt):
				return a.StartedAt.Before(b.StartedAt)
			}
			return a.ID < b.ID
		})
		its = append(its, d)
	}
	return its
}

func recordTime(v any) time.Time {
	s, _ := v.(string)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Error is the body of every error response.
type Error struct {
	Error string `json:"error"`
}

// Summarize makes the list form of a run. Durations of runs still going
// count up to now.
func Summarize(r *runtime.Run, now time.Time) RunSummary {
	s := RunSummary{ID: r.ID, Workflow: r.Workflow, WorkflowVersion: r.WorkflowVersion, Draft: r.Draft, ParentID: r.ParentID, ParentStep: r.ParentStep, Owner: r.Owner, Trigger: r.Trigger, TraceID: r.TraceID,
		Status: r.Status, StartedAt: r.StartedAt, EndedAt: r.EndedAt,
		DurationMS: durationMS(r.StartedAt, r.EndedAt, now), StepCount: len(r.Steps), Error: r.Error,
		FinallyFailed: r.FailedFinally()}
	for _, st := range r.Steps {
		switch st.Status {
		case runtime.StepCompleted, runtime.StepFailed, runtime.StepSkipped:
			s.Finished++
		}
	}
	return s
}

// Detail makes the full form of a run.
func Detail(r *runtime.Run, now time.Time) RunDetail {
	d := RunDetail{RunSummary: Summarize(r, now), Output: r.Output, Steps: make([]StepDetail, len(r.Steps))}
	for i, st := range r.Steps {
		d.Steps[i] = StepDetail{StepState: st, Finally: r.IsFinally(i), Iterations: bodyIterations(st.Output, now)}
		if !st.StartedAt.IsZero() {
			d.Steps[i].DurationMS = durationMS(st.StartedAt, st.EndedAt, now)
		}
	}
	return d
}

// Children lists the child runs of run id (those its workflow steps
// started), newest first, at most MaxLimit.
func Children(ctx context.Context, store Lister, id string, now time.Time) ([]RunSummary, error) {
	runs, err := store.ListRuns(ctx, runtime.RunFilter{Parent: id, Limit: MaxLimit, Summary: true})
	if err != nil {
		return nil, err
	}
	var out []RunSummary
	for _, r := range runs {
		out = append(out, Summarize(r, now))
	}
	return out, nil
}

func durationMS(start, end, now time.Time) int64 {
	if start.IsZero() {
		return 0
	}
	if end.IsZero() {
		end = now
	}
	return end.Sub(start).Milliseconds()
}

var statuses = map[runtime.RunStatus]bool{
	runtime.RunPending: true, runtime.RunRunning: true, runtime.RunCompleted: true, runtime.RunFailed: true,
	runtime.RunCancelled: true, runtime.RunTimedOut: true, runtime.RunInterrupted: true,
}

func (a *API) list(w http.ResponseWriter, r *http.Request) {
	f, err := ParseFilter(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	out := RunList{Runs: []RunSummary{}}
	// A caller who sees only its own runs and asks for another owner's
	// gets none (the store would be narrowed to its own).
	if own := httpsafe.Caller(r.Context()).OwnerFilter(); own != "" && f.Owner != "" && f.Owner != own {
		writeJSON(w, http.StatusOK, out)
		return
	}
	f.Summary = true // the list shows summaries
	runs, next, err := ListPage(r.Context(), a.opts.Store, f)
	if err != nil {
		a.internal(w, "listing runs", err)
		return
	}
	now := time.Now()
	for _, run := range runs {
		out.Runs = append(out.Runs, Summarize(run, now))
	}
	out.NextCursor = next.String()
	writeJSON(w, http.StatusOK, out)
}

// get reads a run from the engine (live record) or, failing that, the store.
func (a *API) get(ctx context.Context, id string) (*runtime.Run, error) {
	if a.opts.Engine != nil {
		run, err := a.opts.Engine.Status(ctx, id)
		if err == nil || !errors.Is(err, runtime.ErrRunNotFound) {
			return run, err
		}
	}
	return a.opts.Store.GetRun(ctx, id)
}

func (a *API) show(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	run, err := a.get(r.Context(), id)
	if errors.Is(err, runtime.ErrRunNotFound) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no run %q", id))
		return
	}
	if err != nil {
		a.internal(w, "reading run "+id, err)
		return
	}
	now := time.Now()
	d := Detail(run, now)
	if d.Children, err = Children(r.Context(), a.opts.Store, id, now); err != nil {
		a.internal(w, "listing the child runs of "+id, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// cancel asks the engine to stop the run, then polls until the run has a
// final status or CancelWait passes: 200 with the final record, or 202 with
// the record as it is when it has not stopped yet.
func (a *API) cancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if a.opts.Engine == nil {
		writeError(w, http.StatusNotImplemented, "this server cannot cancel runs")
		return
	}
	err := a.opts.Engine.Cancel(r.Context(), id)
	if errors.Is(err, runtime.ErrRunNotFound) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no run %q", id))
		return
	}
	if err != nil {
		a.internal(w, "cancelling run "+id, err)
		return
	}
	a.log.Info("run cancel requested over the API", "run_id", id)
	deadline := time.Now().Add(a.opts.CancelWait)
	for {
		run, err := a.get(r.Context(), id)
		if err != nil {
			a.internal(w, "reading run "+id, err)
			return
		}
		if run.Status.Finished() {
			writeJSON(w, http.StatusOK, Detail(run, time.Now()))
			return
		}
		if time.Now().After(deadline) {
			writeJSON(w, http.StatusAccepted, Detail(run, time.Now()))
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// rerun starts a finished run's workflow again with the same arguments
// (runtime.PrepareRerun): on the version the run had, or with
// ?current=true the one served now. It answers 201 with the new run as
// it started; 404 for an unknown run, 409 for one that cannot be re-run.
func (a *API) rerun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if a.opts.Rerun == nil {
		writeError(w, http.StatusNotImplemented, "this server cannot re-run runs")
		return
	}
	current, err := boolParam(r, "current")
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	run, err := a.opts.Rerun.Rerun(r.Context(), id, current)
	switch {
	case errors.Is(err, runtime.ErrRunNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("no run %q", id))
		return
	case runtime.IsRerunError(err):
		writeError(w, http.StatusConflict, err.Error())
		return
	case err != nil:
		a.internal(w, "re-running run "+id, err)
		return
	}
	a.log.Info("run re-run requested over the API", "run_id", id, "new_run_id", run.ID, "current", current)
	w.Header().Set("Location", "/api/v1/runs/"+run.ID)
	writeJSON(w, http.StatusCreated, Detail(run, time.Now()))
}

// boolParam reads a query parameter that is true, false or absent.
func boolParam(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s must be true or false, not %q", name, v)
	}
	return b, nil
}

func (a *API) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}

// Readiness is the body of GET /readyz.
type Readiness struct {
	Ready    bool              `json:"ready"`
	Draining bool              `json:"draining,omitempty"`
	Backends map[string]string `json:"backends"`
}

func (a *API) readyz(w http.ResponseWriter, _ *http.Request) {
	out := Readiness{Ready: true, Backends: map[string]string{}}
	if a.opts.Ready != nil {
		for name, err := range a.opts.Ready() {
			if err != nil {
				out.Ready = false
				out.Backends[name] = err.Error()
			} else {
				out.Backends[name] = "ok"
			}
		}
	}
	if a.opts.Draining != nil && a.opts.Draining() {
		out.Ready, out.Draining = false, true
	}
	code := http.StatusOK
	if !out.Ready {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, out)
}

func (a *API) internal(w http.ResponseWriter, what string, err error) {
	a.log.Error("api: "+what, "err", err)
	writeError(w, http.StatusInternalServerError, what+": "+err.Error())
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // "<" and "&" in outputs stay readable
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, Error{Error: msg})
}
