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
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/internal/rowcodec"
)

// runRow is a run encoded for the runs table.
type runRow struct {
	out, errJSON, params sql.NullString
	steps                []stepRow
}

// encodeRun turns a run's output, error, params and steps into column
// values. Params are never truncated: a resumed run needs them whole.
func (s *Store) encodeRun(run *runtime.Run) (row runRow, err error) {
	row.out, _, err = rowcodec.EncodeOutput(run.Output, s.opts.MaxOutputBytes)
	if err != nil {
		return row, fmt.Errorf("run %s output: %w", run.ID, err)
	}
	if row.errJSON, err = rowcodec.EncodeError(run.Error); err != nil {
		return row, err
	}
	if row.params, err = rowcodec.EncodeJSON(run.Params); err != nil {
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
	out, truncated, err := rowcodec.EncodeOutput(st.Output, s.opts.MaxOutputBytes)
	if err != nil {
		return stepRow{}, err
	}
	var content sql.NullString
	contentCut := 0
	if st.Content != nil {
		if content, contentCut, err = rowcodec.EncodeOutput(st.Content, s.opts.MaxOutputBytes); err != nil {
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
		started: rowcodec.NullNanos(st.StartedAt), ended: rowcodec.NullNanos(st.EndedAt), output: out, content: content,
		truncated: truncated > 0 || contentCut > 0}, nil
}

// cleanText makes s storable as TEXT: invalid UTF-8 and NUL become U+FFFD.
func cleanText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
