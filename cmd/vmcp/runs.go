package main

// `vmcp runs list|show|cancel|rerun`: the run history for people. The commands
// talk to the HTTP API of a running vmcp (--url, --token; the token may
// also come from VMCP_TOKEN so it stays out of shell history), or, for list
// and show, read a SQLite state file directly (--db), which works whether or
// not a vmcp is running on it. Cancel and rerun always go through the API,
// because only the process running workflows can stop or start one.
//
// show prints a timeline: one row per step in plan order with its status,
// attempts, start offset and duration, and a bar placing the step inside
// the run's total time (like `vmcpc plan`'s level timeline, but measured).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/postgres"
	"github.com/vmcp-dev/vmcp/store/sqlite"
)

// runsSource is where the runs commands read from.
type runsSource interface {
	// list returns a page of runs and the next page's cursor ("" at
	// the end).
	list(ctx context.Context, f runtime.RunFilter) (httpapi.RunList, error)
	show(ctx context.Context, id string) (httpapi.RunDetail, error)
	cancel(ctx context.Context, id string) (httpapi.RunDetail, error)
	rerun(ctx context.Context, id string, current bool) (httpapi.RunDetail, error)
	Close() error
}

type runsFlags struct {
	url, token, db string
	jsonOut        bool
}

func newRunsCmd(io streams) *cobra.Command {
	var rf runsFlags
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List, inspect and cancel workflow runs",
		Long: `List, inspect and cancel the runs of a vmcp server, through its HTTP API
(--url, with --token or VMCP_TOKEN when the server requires one), or read
the run store directly with --db (list and show only): a SQLite state file,
or the postgres://... URL replicas share.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&rf.url, "url", "http://127.0.0.1:8080", "base URL of a running vmcp's HTTP listener")
	pf.StringVar(&rf.token, "token", "", "bearer token for the API (default $VMCP_TOKEN)")
	pf.StringVar(&rf.db, "db", "", "read this SQLite state file, or this postgres:// database, instead of asking a server")
	pf.BoolVar(&rf.jsonOut, "json", false, "print the API's JSON instead of text")

	// The search flags are the API's query parameters (httpapi.ParseFilter
	// reads and checks both).
	search := map[string]*string{}
	list := &cobra.Command{
		Use:   "list [--workflow NAME] [--status STATUS] [--owner O] [--trigger T] [--from TIME] [--to TIME] [--error TEXT] [--limit N] [--cursor C]",
		Short: "List runs, newest first",
		Long: `List runs, newest first, at most --limit of them. The filters combine: a
workflow, a status, an owner, a trigger (schedule:NAME, rerun:ID), a start time
range (--from inclusive, --to exclusive; RFC 3339 times or dates in UTC) and
text in the error's message or step (ASCII case ignored). When more runs match
than one page holds, the last line gives the --cursor of the next page.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			for name, v := range search {
				if *v != "" {
					q.Set(name, *v)
				}
			}
			filter, err := httpapi.ParseFilter(q)
			if err != nil {
				return usageErrorf("--%v", err)
			}
			src, err := rf.open("")
			if err != nil {
				return err
			}
			defer src.Close()
			page, err := src.list(cmd.Context(), filter)
			if err != nil {
				return failuref("%v", err)
			}
			if rf.jsonOut {
				return printJSON(io.out, page)
			}
			printRunList(io.out, page.Runs)
			if page.NextCursor != "" {
				fmt.Fprintf(io.out, "more runs: add --cursor %s\n", page.NextCursor)
			}
			return nil
		},
	}
	for _, fl := range []struct{ name, def, usage string }{
		{"workflow", "", "only runs of this workflow"},
		{"status", "", "only runs with this status (pending, running, completed, failed, cancelled, timed_out, interrupted)"},
		{"owner", "", "only runs of this owner (a token's name, or schedule:NAME)"},
		{"trigger", "", "only runs with this trigger (schedule:NAME, rerun:ID)"},
		{"from", "", "only runs that started at or after this time (RFC 3339, or a date in UTC)"},
		{"to", "", "only runs that started before this time (RFC 3339, or a date in UTC)"},
		{"error", "", "only runs whose error's message or step contains this text"},
		{"parent", "", "only the child runs of this run (started by its workflow steps)"},
		{"limit", "20", "at most this many runs (1 to 1000)"},
		{"cursor", "", "the page after this cursor (printed after a full page)"},
	} {
		search[fl.name] = list.Flags().String(fl.name, fl.def, fl.usage)
	}

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a run's steps as a timeline",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := rf.open("")
			if err != nil {
				return err
			}
			defer src.Close()
			d, err := src.show(cmd.Context(), args[0])
			if err != nil {
				return failuref("%v", err)
			}
			if rf.jsonOut {
				return printJSON(io.out, d)
			}
			printRunDetail(io.out, d, time.Now())
			return nil
		},
	}

	cancel := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a running run (its backend calls are cancelled)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := rf.open("cancel")
			if err != nil {
				return err
			}
			defer src.Close()
			d, err := src.cancel(cmd.Context(), args[0])
			if err != nil {
				return failuref("%v", err)
			}
			if rf.jsonOut {
				return printJSON(io.out, d)
			}
			if d.Status.Finished() {
				fmt.Fprintf(io.out, "run %s: %s\n", d.ID, d.Status)
			} else {
				fmt.Fprintf(io.out, "run %s: cancel requested; still %s\n", d.ID, d.Status)
			}
			return nil
		},
	}
	var current bool
	rerun := &cobra.Command{
		Use:   "rerun ID",
		Short: "Run a finished run's workflow again with the same arguments",
		Long: `Run a finished run's workflow again with the same arguments, as a new run
whose trigger is rerun:ID. It runs the workflow version the run had, and fails
when that version is no longer served; --current runs the version served now.
It prints the new run's id and returns as soon as the run has started.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := rf.open("rerun")
			if err != nil {
				return err
			}
			defer src.Close()
			d, err := src.rerun(cmd.Context(), args[0], current)
			if err != nil {
				return failuref("%v", err)
			}
			if rf.jsonOut {
				return printJSON(io.out, d)
			}
			fmt.Fprintf(io.out, "run %s: re-run of %s started (%s)\n", d.ID, args[0], d.Status)
			return nil
		},
	}
	rerun.Flags().BoolVar(&current, "current", false, "run the workflow version served now, not the one the run had")
	cmd.AddCommand(list, show, cancel, rerun)
	return cmd
}

// open opens the source the flags name; serverOnly, when set, is a
// command that needs a running vmcp (not --db).
func (rf runsFlags) open(serverOnly string) (runsSource, error) {
	if rf.db != "" {
		if serverOnly != "" {
			return nil, usageErrorf("%s needs a running vmcp: use --url, not --db", serverOnly)
		}
		if strings.HasPrefix(rf.db, "postgres://") || strings.HasPrefix(rf.db, "postgresql://") {
			// As a replica opens it, holding no lease and never
			// announcing itself; it reads in repeatable-read snapshots.
			s, err := postgres.Open(context.Background(), rf.db, postgres.Options{})
			if err != nil {
				return nil, failuref("%v", err)
			}
			return dbSource{s}, nil
		}
		s, err := sqlite.OpenReadOnly(rf.db)
		if err != nil {
			return nil, failuref("%v", err)
		}
		return dbSource{s}, nil
	}
	u, err := url.Parse(rf.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageErrorf("--url must be an http(s) URL such as http://127.0.0.1:8080, not %q", rf.url)
	}
	token := rf.token
	if token == "" {
		token = os.Getenv("VMCP_TOKEN")
	}
	return &apiSource{base: strings.TrimSuffix(rf.url, "/"), token: token, client: &http.Client{Timeout: 30 * time.Second}}, nil
}

// dbSource reads a run store: a SQLite state file or a postgres database.
type dbSource struct {
	s interface {
		httpapi.Lister
		Close() error
	}
}

func (d dbSource) list(ctx context.Context, f runtime.RunFilter) (httpapi.RunList, error) {
	f.Summary = true
	runs, next, err := httpapi.ListPage(ctx, d.s, f)
	if err != nil {
		return httpapi.RunList{}, err
	}
	now := time.Now()
	out := httpapi.RunList{Runs: make([]httpapi.RunSummary, 0, len(runs)), NextCursor: next.String()}
	for _, r := range runs {
		out.Runs = append(out.Runs, httpapi.Summarize(r, now))
	}
	return out, nil
}

func (d dbSource) show(ctx context.Context, id string) (httpapi.RunDetail, error) {
	r, err := d.s.GetRun(ctx, id)
	if err != nil {
		return httpapi.RunDetail{}, err
	}
	now := time.Now()
	detail := httpapi.Detail(r, now)
	detail.Children, err = httpapi.Children(ctx, d.s, id, now)
	return detail, err
}

func (d dbSource) cancel(context.Context, string) (httpapi.RunDetail, error) {
	return httpapi.RunDetail{}, fmt.Errorf("cannot cancel through a state file")
}

func (d dbSource) rerun(context.Context, string, bool) (httpapi.RunDetail, error) {
	return httpapi.RunDetail{}, fmt.Errorf("cannot re-run through a state file")
}

func (d dbSource) Close() error { return d.s.Close() }

// apiSource talks to a running vmcp.
type apiSource struct {
	base, token string
	client      *http.Client
}

func (a *apiSource) list(ctx context.Context, f runtime.RunFilter) (httpapi.RunList, error) {
	q := httpapi.Query(f)
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out httpapi.RunList
	err := a.do(ctx, "GET", "/api/v1/runs?"+q.Encode(), &out)
	return out, err
}

func (a *apiSource) show(ctx context.Context, id string) (httpapi.RunDetail, error) {
	var d httpapi.RunDetail
	err := a.do(ctx, "GET", "/api/v1/runs/"+url.PathEscape(id), &d)
	return d, err
}

func (a *apiSource) cancel(ctx context.Context, id string) (httpapi.RunDetail, error) {
	var d httpapi.RunDetail
	err := a.do(ctx, "POST", "/api/v1/runs/"+url.PathEscape(id)+"/cancel", &d)
	return d, err
}

func (a *apiSource) rerun(ctx context.Context, id string, current bool) (httpapi.RunDetail, error) {
	var d httpapi.RunDetail
	path := "/api/v1/runs/" + url.PathEscape(id) + "/rerun"
	if current {
		path += "?current=true"
	}
	err := a.do(ctx, "POST", path, &d)
	return d, err
}

func (a *apiSource) Close() error { return nil }

func (a *apiSource) do(ctx context.Context, method, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, nil)
	if err != nil {
		return err
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, a.base+path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, a.base+path, err)
	}
	if resp.StatusCode >= 300 {
		var e httpapi.Error
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s: %s", resp.Status, e.Error)
		}
		if resp.StatusCode == http.StatusUnauthorized {
			return fmt.Errorf("%s: pass --token or set VMCP_TOKEN", resp.Status)
		}
		return fmt.Errorf("%s %s: %s", method, a.base+path, resp.Status)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the API's JSON: %w", method, a.base+path, err)
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // "<" and "&" in outputs stay readable
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

const timeLayout = "2006-01-02 15:04:05.000Z07:00"

// printRunList prints one line per run.
func printRunList(w io.Writer, runs []httpapi.RunSummary) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "no runs")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWORKFLOW\tSTATUS\tSTARTED (UTC)\tDURATION\tSTEPS")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/%d\n", r.ID, r.Workflow, r.Status,
			r.StartedAt.UTC().Format("2006-01-02 15:04:05"), fmtMS(r.DurationMS), r.Finished, r.StepCount)
	}
	tw.Flush()
}

// timelineWidth is the number of cells of a timeline bar.
const timelineWidth = 40

// maxIterationRows is how many iterations of a loop body runs show lists
// (the API returns them all).
const maxIterationRows = 10

// printRunDetail prints the run's header and its step timeline. now places
// the end of runs and steps that are still going.
func printRunDetail(w io.Writer, d httpapi.RunDetail, now time.Time) {
	fmt.Fprintf(w, "run       %s\nworkflow  %s\n", d.ID, d.Workflow)
	if d.WorkflowVersion != "" {
		draft := ""
		if d.Draft {
			draft = " (a draft, never saved)"
		}
		fmt.Fprintf(w, "version   %s%s\n", d.WorkflowVersion, draft)
	}
	if d.ParentID != "" {
		fmt.Fprintf(w, "parent    %s (step %s)\n", d.ParentID, d.ParentStep)
	}
	if d.Owner != "" {
		fmt.Fprintf(w, "owner     %s\n", d.Owner)
	}
	if d.Trigger != "" {
		fmt.Fprintf(w, "trigger   %s\n", d.Trigger)
	}
	fmt.Fprintf(w, "status    %s\n", d.Status)
	fmt.Fprintf(w, "started   %s\n", d.StartedAt.UTC().Format(timeLayout))
	end := d.EndedAt
	if end.IsZero() {
		fmt.Fprintf(w, "ended     (still going)\n")
		end = now
	} else {
		fmt.Fprintf(w, "ended     %s\n", d.EndedAt.UTC().Format(timeLayout))
	}
	total := end.Sub(d.StartedAt)
	fmt.Fprintf(w, "duration  %s\nsteps     %d of %d finished\n", fmtMS(total.Milliseconds()), d.Finished, d.StepCount)
	if e := d.Error; e != nil {
		switch {
		case e.Step != "":
			fmt.Fprintf(w, "error     %s\n", e.Error())
		case e.Pos.IsValid():
			fmt.Fprintf(w, "error     %s: %s\n", e.Pos, e.Msg)
		default:
			fmt.Fprintf(w, "error     %s\n", e.Msg)
		}
	}
	if len(d.FinallyFailed) > 0 {
		fmt.Fprintf(w, "finally   failed: %s (the status is the outcome before the finally steps)\n", strings.Join(d.FinallyFailed, ", "))
	}
	if len(d.Steps) == 0 {
		return
	}
	fmt.Fprintln(w)
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "STEP\tSTATUS\tTRIES\tSTART\tDURATION\tTIMELINE (0 → %s)\n", fmtMS(total.Milliseconds()))
	row := func(id string, st httpapi.StepDetail) {
		start, dur := "-", "-"
		if !st.StartedAt.IsZero() {
			start = "+" + fmtMS(st.StartedAt.Sub(d.StartedAt).Milliseconds())
			dur = fmtMS(st.DurationMS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", id, st.Status, st.Attempts, start, dur, bar(d.StartedAt, total, st, now))
	}
	// A loop body's steps follow their loop, one row per iteration and
	// step, named loop[index].step and indented per nesting level.
	var bodyRows func(prefix, indent string, its []httpapi.IterationDetail)
	bodyRows = func(prefix, indent string, its []httpapi.IterationDetail) {
		for k, it := range its {
			if k == maxIterationRows {
				fmt.Fprintf(tw, "%s%s[...]\t%d more iterations\t\t\t\t\n", indent, prefix, len(its)-k)
				break
			}
			for _, st := range it.Steps {
				name := fmt.Sprintf("%s[%d].%s", prefix, it.Index, st.ID)
				row(indent+name, st)
				bodyRows(name, indent+"  ", st.Iterations)
			}
		}
	}
	for _, st := range d.Steps {
		id := st.ID
		if st.Finally {
			id += " (finally)"
		}
		row(id, st)
		bodyRows(st.ID, "  ", st.Iterations)
	}
	tw.Flush()
	w.Write(buf.Bytes())
	var bodyErrors func(prefix string, its []httpapi.IterationDetail)
	bodyErrors = func(prefix string, its []httpapi.IterationDetail) {
		for _, it := range its {
			for _, st := range it.Steps {
				name := fmt.Sprintf("%s[%d].%s", prefix, it.Index, st.ID)
				if st.Error != "" && len(st.Iterations) == 0 {
					fmt.Fprintf(w, "  %s: error: %s\n", name, st.Error)
				}
				bodyErrors(name, st.Iterations)
			}
		}
	}
	for _, st := range d.Steps {
		if st.Error != "" {
			fmt.Fprintf(w, "  %s: error: %s\n", st.ID, st.Error)
		}
		if st.Note != "" {
			fmt.Fprintf(w, "  %s: note: %s\n", st.ID, st.Note)
		}
		bodyErrors(st.ID, st.Iterations)
	}
	if len(d.Children) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CHILD RUN\tSTEP\tWORKFLOW\tSTATUS\tDURATION")
		for _, c := range d.Children {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.ID, c.ParentStep, c.Workflow, c.Status, fmtMS(c.DurationMS))
		}
		tw.Flush()
	}
}

// bar draws where a step ran inside the run: '#' for the time it ran,
// '>' at the end of a step still running, spaces elsewhere. A step that ran
// gets at least one cell, so a fast step is still visible.
func bar(runStart time.Time, total time.Duration, st httpapi.StepDetail, now time.Time) string {
	cells := []byte(strings.Repeat(" ", timelineWidth))
	if !st.StartedAt.IsZero() && total > 0 {
		end := st.EndedAt
		running := end.IsZero()
		if running {
			end = now
		}
		from := cell(st.StartedAt.Sub(runStart), total)
		to := cell(end.Sub(runStart), total)
		if to <= from {
			to = from + 1
		}
		if from >= timelineWidth {
			from, to = timelineWidth-1, timelineWidth
		}
		to = min(to, timelineWidth)
		for i := from; i < to; i++ {
			cells[i] = '#'
		}
		if running {
			cells[to-1] = '>'
		}
	}
	return "|" + string(cells) + "|"
}

func cell(d, total time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(int64(d) * timelineWidth / int64(total))
}

// fmtMS prints milliseconds the way a person reads a duration.
func fmtMS(ms int64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%dms", ms)
	case ms < 60_000:
		return fmt.Sprintf("%.2fs", float64(ms)/1000)
	default:
		return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
	}
}
