package postgres

// Column encodings, the same as the SQLite store's (store/sqlite):
// times are BIGINT Unix nanoseconds (a timestamptz keeps microseconds, and
// a run's record must round-trip to the nanosecond), JSON values are TEXT
// (jsonb would reorder keys and refuse the damaged rows that Unreadable
// reports), and an output over Options.MaxOutputBytes is replaced by a
// truncation marker. Free text (a step's error and note) has its NUL bytes
// and invalid UTF-8 replaced, which PostgreSQL's TEXT refuses.

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// runRow is a run encoded for the runs table.
type runRow struct {
	out, errJSON, params sql.NullString
	steps                []stepRow
}

// encodeRun turns a run's output, error, params and steps into column
// values. Params are never truncated: a resumed run needs them whole.
func (s *Store) encodeRun(run *runtime.Run) (row runRow, err error) {
	row.out, _, err = s.encodeOutput(run.Output)
	if err != nil {
		return row, fmt.Errorf("run %s output: %w", run.ID, err)
	}
	if row.errJSON, err = encodeError(run.Error); err != nil {
		return row, err
	}
	if row.params, err = encodeJSON(run.Params); err != nil {
		return row, fmt.Errorf("run %s params: %w", run.ID, err)
	}
	row.steps = make([]stepRow, len(run.Steps))
	for i, st := range run.Steps {
		if row.steps[i], err = s.stepRow(st); err != nil {
			return row, fmt.Errorf("run %s step %s: %w", run.ID, st.ID, err)
		}
	}
	return row, nil
}

// stepRow is a step encoded for the steps table.
type stepRow struct {
	id, status, err, note string
	attempts              int
	started, ended        sql.NullInt64
	output, content       sql.NullString
	truncated             bool
}

func (s *Store) stepRow(st runtime.StepState) (stepRow, error) {
	out, truncated, err := s.encodeOutput(st.Output)
	if err != nil {
		return stepRow{}, err
	}
	var content sql.NullString
	contentCut := 0
	if st.Content != nil {
		if content, contentCut, err = s.encodeOutput(st.Content); err != nil {
			return stepRow{}, err
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
		msg := fmt.Sprintf("%s of %d bytes truncated by the store (limit %d bytes)", cut.what, cut.bytes, s.opts.MaxOutputBytes)
		if note == "" {
			note = msg
		} else {
			note += "; " + msg
		}
	}
	return stepRow{id: st.ID, status: string(st.Status), attempts: st.Attempts, err: cleanText(st.Error), note: cleanText(note),
		started: nullNanos(st.StartedAt), ended: nullNanos(st.EndedAt), output: out, content: content,
		truncated: truncated > 0 || contentCut > 0}, nil
}

// cleanText makes s storable as TEXT: invalid UTF-8 and NUL become U+FFFD.
func cleanText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// encodeOutput returns v as JSON text (NULL for nil). When the JSON is over
// MaxOutputBytes it returns the truncation marker instead and the original
// size.
func (s *Store) encodeOutput(v any) (sql.NullString, int, error) {
	if v == nil {
		return sql.NullString{}, 0, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return sql.NullString{}, 0, err
	}
	limit := s.opts.MaxOutputBytes
	if limit <= 0 || len(b) <= limit {
		return sql.NullString{String: string(b), Valid: true}, 0, nil
	}
	preview := b[:min(len(b), max(limit/2, 16), 4096)]
	for !utf8.Valid(preview) && len(preview) > 0 {
		preview = preview[:len(preview)-1]
	}
	marker, err := json.Marshal(map[string]any{"truncated": true, "bytes": len(b), "limit": limit, "preview": string(preview)})
	if err != nil {
		return sql.NullString{}, 0, err
	}
	return sql.NullString{String: string(marker), Valid: true}, len(b), nil
}

func decodeJSON(s sql.NullString) (any, error) {
	if !s.Valid {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal([]byte(s.String), &v); err != nil {
		return nil, err
	}
	return v, nil
}

// encodeJSON returns v as JSON text, NULL for a nil map.
func encodeJSON(v map[string]any) (sql.NullString, error) {
	if v == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// decodeObject reads a JSON object column (params, content); NULL is nil.
func decodeObject(s sql.NullString) (map[string]any, error) {
	v, err := decodeJSON(s)
	if err != nil || v == nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errNotObject
	}
	return m, nil
}

var errNotObject = errors.New("not a JSON object")

func encodeError(e *runtime.StepError) (sql.NullString, error) {
	if e == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// unreadable collects, per run id, what of the run's row could not be
// read: the column (with its step), and what is wrong with it by its
// position, never its content. A nil unreadable collects nothing.
type unreadable map[string][]string

func (u unreadable) add(id, what string, err error) {
	if u != nil {
		u[id] = append(u[id], what+" "+jsonProblem(err))
	}
}

func (u unreadable) addStep(id string, st *runtime.StepState, what string, err error) string {
	u.add(id, fmt.Sprintf("step %q %s", st.ID, what), err)
	msg := fmt.Sprintf("the store cannot read this step's %s: it %s", what, jsonProblem(err))
	if st.Note == "" {
		return msg
	}
	return st.Note + "; " + msg
}

func jsonProblem(err error) string {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("is not valid JSON (at byte %d)", syn.Offset)
	case errors.Is(err, errNotObject):
		return "is not a JSON object"
	}
	return "does not hold what vmcp stores there"
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func nullNanos(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// interruptedError builds the error recorded on an interrupted run;
// reason, when set, says why the run could not resume.
func interruptedError(at time.Time, reason, last string, lastAt time.Time, finished, total int) *runtime.StepError {
	msg := "run interrupted: vmcp stopped while the run was going"
	if reason != "" {
		msg += " and it cannot resume: " + reason
	}
	msg += fmt.Sprintf("; marked interrupted at %s", at.UTC().Format(time.RFC3339Nano))
	if last != "" {
		msg += fmt.Sprintf("; last finished step %q at %s", last, lastAt.UTC().Format(time.RFC3339Nano))
	} else {
		msg += "; no step had finished"
	}
	msg += fmt.Sprintf(" (%d of %d steps finished)", finished, total)
	return &runtime.StepError{Pos: ir.Pos{}, Msg: msg}
}
