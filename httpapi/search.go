package httpapi

// Searching runs over the API: the query parameters of GET /api/v1/runs,
// read by ParseFilter and written by Query (vmcp runs list and the
// console's links build the same URLs), and ListPage, one page and the
// cursor of the next.

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vmcp-dev/vmcp/runtime"
)

// FilterError is a query parameter that is not a valid filter.
type FilterError struct{ Msg string }

func (e *FilterError) Error() string { return e.Msg }

// ParseFilter reads a run search from query parameters: workflow, status,
// parent, owner, trigger, from and to (RFC 3339 times, or dates
// YYYY-MM-DD in UTC; from inclusive, to exclusive), error (text in the
// error's message or step, ignoring ASCII case), limit (1 to MaxLimit,
// default DefaultLimit) and cursor (a RunList's nextCursor).
func ParseFilter(q url.Values) (runtime.RunFilter, error) {
	f := runtime.RunFilter{Workflow: q.Get("workflow"), Status: runtime.RunStatus(q.Get("status")), Parent: q.Get("parent"),
		Owner: q.Get("owner"), Trigger: q.Get("trigger"), ErrorContains: q.Get("error"), Limit: DefaultLimit}
	if f.Status != "" && !statuses[f.Status] {
		names := make([]string, 0, len(statuses))
		for s := range statuses {
			names = append(names, string(s))
		}
		sort.Strings(names)
		return f, &FilterError{fmt.Sprintf("status %q is not one of %s", f.Status, strings.Join(names, ", "))}
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > MaxLimit {
			return f, &FilterError{fmt.Sprintf("limit must be a whole number from 1 to %d, not %q", MaxLimit, l)}
		}
		f.Limit = n
	}
	var err error
	if f.StartedFrom, err = parseTime(q, "from"); err != nil {
		return f, err
	}
	if f.StartedTo, err = parseTime(q, "to"); err != nil {
		return f, err
	}
	if !f.StartedFrom.IsZero() && !f.StartedTo.IsZero() && !f.StartedFrom.Before(f.StartedTo) {
		return f, &FilterError{fmt.Sprintf("from (%s) must be before to (%s)", q.Get("from"), q.Get("to"))}
	}
	if f.After, err = runtime.ParseCursor(q.Get("cursor")); err != nil {
		return f, &FilterError{err.Error()}
	}
	return f, nil
}

// parseTime reads a time parameter: RFC 3339, or a date in UTC.
func parseTime(q url.Values, name string) (time.Time, error) {
	s := q.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02T15:04", s); err == nil { // an HTML datetime-local field, in UTC
		return t, nil
	}
	return time.Time{}, &FilterError{fmt.Sprintf("%s must be an RFC 3339 time (2026-12-02T20:00:00Z) or a date (2026-12-02), not %q", name, s)}
}

// Query is f as ParseFilter's parameters (those that are set; the limit
// when it is not the default).
func Query(f runtime.RunFilter) url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("workflow", f.Workflow)
	set("status", string(f.Status))
	set("parent", f.Parent)
	set("owner", f.Owner)
	set("trigger", f.Trigger)
	set("error", f.ErrorContains)
	if !f.StartedFrom.IsZero() {
		q.Set("from", f.StartedFrom.UTC().Format(time.RFC3339Nano))
	}
	if !f.StartedTo.IsZero() {
		q.Set("to", f.StartedTo.UTC().Format(time.RFC3339Nano))
	}
	set("cursor", f.After.String())
	if f.Limit > 0 && f.Limit != DefaultLimit {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	return q
}

// ListPage lists one page of f (f.Limit runs, DefaultLimit when 0) and
// returns the cursor of the next page, zero when this one is the last:
// it asks the store for one run more than the page to tell.
func ListPage(ctx context.Context, l Lister, f runtime.RunFilter) ([]*runtime.Run, runtime.RunCursor, error) {
	if f.Limit <= 0 {
		f.Limit = DefaultLimit
	}
	limit := f.Limit
	f.Limit++
	runs, err := l.ListRuns(ctx, f)
	if err != nil || len(runs) <= limit {
		return runs, runtime.RunCursor{}, err
	}
	runs = runs[:limit]
	return runs, runtime.CursorOf(runs[limit-1]), nil
}
