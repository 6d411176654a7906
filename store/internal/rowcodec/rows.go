package rowcodec

// Whole rows: a run and its steps as the runs and steps tables hold them,
// encoded for a write (EncodeRun, EncodeStep) and read back from a query
// (ScanRun, ScanStep). The two stores differ only in their drivers
// (database/sql and pgx, which both scan rows with Scan(dest ...any)) and
// in what their TEXT columns accept (Clean).

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/vmcp-dev/vmcp/runtime"
)

// Scanner is one row of a query: a *sql.Rows or a pgx.Rows.
type Scanner interface {
	Scan(dest ...any) error
}

// RunRow is a run encoded for the runs table.
type RunRow struct {
	Out, ErrJSON, Params sql.NullString
	Steps                []StepRow
}

// StepRow is a step encoded for the steps table.
type StepRow struct {
	ID, Status, Err, Note string
	Attempts              int
	Started, Ended        sql.NullInt64
	Output, Content       sql.NullString
	Truncated             bool
}

// Codec encodes runs and steps for one store: outputs over MaxOutputBytes
// (when > 0) become truncation markers, and Clean, when set, makes free
// text (a step's error and note) storable.
type Codec struct {
	MaxOutputBytes int
	Clean          func(string) string
}

// EncodeRun turns a run's output, error, params and steps into column
// values. Params are never truncated: a resumed run needs them whole.
func (c Codec) EncodeRun(run *runtime.Run) (row RunRow, err error) {
	row.Out, _, err = EncodeOutput(run.Output, c.MaxOutputBytes)
	if err != nil {
		return row, fmt.Errorf("run %s output: %w", run.ID, err)
	}
	if row.ErrJSON, err = EncodeError(run.Error); err != nil {
		return row, err
	}
	if row.Params, err = EncodeJSON(run.Params); err != nil {
		return row, fmt.Errorf("run %s params: %w", run.ID, err)
	}
	row.Steps = make([]StepRow, len(run.Steps))
	for i, st := range run.Steps {
		if row.Steps[i], err = c.EncodeStep(st); err != nil {
			return row, fmt.Errorf("run %s step %s: %w", run.ID, st.ID, err)
		}
	}
	return row, nil
}

// EncodeStep turns a step into column values. A truncated output or
// content is said in the step's note, with its size and the limit.
func (c Codec) EncodeStep(st runtime.StepState) (StepRow, error) {
	out, truncated, err := EncodeOutput(st.Output, c.MaxOutputBytes)
	if err != nil {
		return StepRow{}, err
	}
	var content sql.NullString
	contentCut := 0
	if st.Content != nil {
		if content, contentCut, err = EncodeOutput(st.Content, c.MaxOutputBytes); err != nil {
			return StepRow{}, err
		}
	}
	note := st.Note
	for _, cut := range []struct {
		what  string
		bytes int
	}{{"output", truncated}, {"content", contentCut}} {
		if cut.bytes == 0 {
			continue
		}
		msg := fmt.Sprintf("%s of %d bytes truncated by the store (limit %d bytes)", cut.what, cut.bytes, c.MaxOutputBytes)
		if note == "" {
			note = msg
		} else {
			note += "; " + msg
		}
	}
	errText := st.Error
	if c.Clean != nil {
		errText, note = c.Clean(errText), c.Clean(note)
	}
	return StepRow{ID: st.ID, Status: string(st.Status), Attempts: st.Attempts, Err: errText, Note: note,
		Started: NullNanos(st.StartedAt), Ended: NullNanos(st.EndedAt), Output: out, Content: content,
		Truncated: truncated > 0 || contentCut > 0}, nil
}

// ScanRun reads one row of the runs columns both stores select, in their
// order (id, workflow, status, started_at, ended_at, output, error,
// finally_from, parent_id, parent_step, workflow_version, draft, params,
// plan_digest, owner, trigger, trace). A JSON column that cannot be
// decoded reads as nil and is added to bad (when not nil); only a failed
// Scan is an error. The run's Steps are empty, for ScanStep to fill.
func ScanRun(row Scanner, bad Unreadable) (*runtime.Run, error) {
	var (
		r                    runtime.Run
		status               string
		started              int64
		ended                sql.NullInt64
		out, errJSON, params sql.NullString
		trace                string
	)
	if err := row.Scan(&r.ID, &r.Workflow, &status, &started, &ended, &out, &errJSON, &r.FinallyFrom, &r.ParentID, &r.ParentStep,
		&r.WorkflowVersion, &r.Draft, &params, &r.PlanDigest, &r.Owner, &r.Trigger, &trace); err != nil {
		return nil, err
	}
	DecodeTrace(&r, trace)
	r.Status = runtime.RunStatus(status)
	r.StartedAt = FromNanos(started)
	if ended.Valid {
		r.EndedAt = FromNanos(ended.Int64)
	}
	var err error
	if r.Output, err = DecodeJSON(out); err != nil {
		bad.Add(r.ID, "output", err)
	}
	if r.Params, err = DecodeObject(params); err != nil {
		bad.Add(r.ID, "params", err)
	}
	if errJSON.Valid {
		r.Error = new(runtime.StepError)
		if err := json.Unmarshal([]byte(errJSON.String), r.Error); err != nil {
			r.Error = nil
			bad.Add(r.ID, "error", err)
		}
	}
	r.Steps = []runtime.StepState{}
	return &r, nil
}

// ScanStep reads one row of the step columns both stores select (run_id,
// id, status, attempts, started_at, ended_at, output, error, note,
// content) and returns the step's run id and the step. A JSON column that
// cannot be decoded reads as nil, and the step's note says so
// (Unreadable.AddStep).
func ScanStep(row Scanner, bad Unreadable) (string, runtime.StepState, error) {
	var (
		runID, status    string
		st               runtime.StepState
		started, ended   sql.NullInt64
		out, content     sql.NullString
		errText, noteTxt string
	)
	if err := row.Scan(&runID, &st.ID, &status, &st.Attempts, &started, &ended, &out, &errText, &noteTxt, &content); err != nil {
		return "", st, err
	}
	st.Status = runtime.StepStatus(status)
	if started.Valid {
		st.StartedAt = FromNanos(started.Int64)
	}
	if ended.Valid {
		st.EndedAt = FromNanos(ended.Int64)
	}
	st.Error, st.Note = errText, noteTxt
	var err error
	if st.Output, err = DecodeJSON(out); err != nil {
		st.Note = bad.AddStep(runID, &st, "output", err)
	}
	if st.Content, err = DecodeObject(content); err != nil {
		st.Note = bad.AddStep(runID, &st, "content", err)
	}
	return runID, st, nil
}
