package runtime

// Searching runs: the order of a run list, the cursor that continues it,
// and RunFilter.Match, the rule every store applies (the memory store
// calls it; SQLite says the same in SQL, and store/storetest holds both to
// it).
//
// A list is newest first: by StartedAt descending, then by ID descending,
// so the order is total even when two runs start in the same nanosecond.
// A page ends at a run; its cursor is that run's (StartedAt, ID), and the
// next page is the runs strictly after it in that order. A run created
// meanwhile starts later, so it is never in a later page, and a run pruned
// meanwhile only leaves the page it was on: pages neither repeat nor skip
// a run that stays.

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RunCursor is a position in a run list: the last run of a page.
type RunCursor struct {
	StartedAt time.Time
	ID        string
}

// CursorOf is the cursor after run.
func CursorOf(run *Run) RunCursor { return RunCursor{StartedAt: run.StartedAt, ID: run.ID} }

// IsZero reports whether c is the start of the list.
func (c RunCursor) IsZero() bool { return c.ID == "" && c.StartedAt.IsZero() }

// Passed reports whether a run that started at startedAt with id comes
// after c in the list's order (it belongs to a later page).
func (c RunCursor) Passed(startedAt time.Time, id string) bool {
	if c.IsZero() {
		return true
	}
	if !startedAt.Equal(c.StartedAt) {
		return startedAt.Before(c.StartedAt)
	}
	return id < c.ID
}

// String is the cursor as an opaque token for URLs (base64url of the
// start time's Unix nanoseconds and the id).
func (c RunCursor) String() string {
	if c.IsZero() {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.StartedAt.UnixNano(), 10) + "." + c.ID))
}

// ParseCursor reads a cursor that String made; "" is the start.
func ParseCursor(s string) (RunCursor, error) {
	if s == "" {
		return RunCursor{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	nanos, id, ok := strings.Cut(string(b), ".")
	n, perr := strconv.ParseInt(nanos, 10, 64)
	if err != nil || !ok || perr != nil || id == "" {
		return RunCursor{}, fmt.Errorf("cursor %q is not one a run list returned", s)
	}
	return RunCursor{StartedAt: time.Unix(0, n).UTC(), ID: id}, nil
}

// Match reports whether run is selected by every field of f but Limit
// and Summary.
func (f RunFilter) Match(run *Run) bool {
	switch {
	case f.Workflow != "" && run.Workflow != f.Workflow,
		f.Status != "" && run.Status != f.Status,
		f.Parent != "" && run.ParentID != f.Parent,
		f.Owner != "" && run.Owner != f.Owner,
		f.Trigger != "" && run.Trigger != f.Trigger,
		!f.StartedFrom.IsZero() && run.StartedAt.Before(f.StartedFrom),
		!f.StartedTo.IsZero() && !run.StartedAt.Before(f.StartedTo),
		!f.After.Passed(run.StartedAt, run.ID):
		return false
	}
	if f.ErrorContains != "" {
		if run.Error == nil {
			return false
		}
		want := asciiLower(f.ErrorContains)
		if !strings.Contains(asciiLower(run.Error.Msg), want) && !strings.Contains(asciiLower(run.Error.Step), want) {
			return false
		}
	}
	return true
}

// asciiLower folds ASCII letters only, as SQLite's LIKE does.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}
