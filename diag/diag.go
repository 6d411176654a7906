package diag

import (
	"fmt"
	"sort"

	"github.com/vmcp-dev/vmcp/ir"
)

// Severity orders diagnostics: errors stop compilation, warnings do not.
type Severity int

const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// MarshalText makes severities print as words in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Diagnostic is one problem found in a source file.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	Pos      ir.Pos   `json:"pos"`
	// Path is the YAML path of the offending node, e.g. steps[3].dependsOn[0].
	Path string `json:"path,omitempty"`
	// Code is stable across releases (unknown_step, dependency_cycle, ...),
	// so tools and tests can match on it.
	Code    string `json:"code"`
	Message string `json:"message"`
	// Detail adds lines printed under the caret (cycle links, hints).
	Detail []string `json:"detail,omitempty"`
}

func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s", d.Pos, d.Severity, d.Message)
}

// MaxDiagnostics caps how many diagnostics Sorted returns, so that one
// broken file cannot bury the rest.
const MaxDiagnostics = 100

// List collects diagnostics from every stage.
type List []Diagnostic

// Add appends a diagnostic.
func (l *List) Add(d Diagnostic) { *l = append(*l, d) }

// Errorf appends an error diagnostic.
func (l *List) Errorf(pos ir.Pos, path, code, format string, args ...any) {
	l.Add(Diagnostic{Severity: Error, Pos: pos, Path: path, Code: code, Message: fmt.Sprintf(format, args...)})
}

// Warnf appends a warning diagnostic.
func (l *List) Warnf(pos ir.Pos, path, code, format string, args ...any) {
	l.Add(Diagnostic{Severity: Warning, Pos: pos, Path: path, Code: code, Message: fmt.Sprintf(format, args...)})
}

// HasErrors reports whether any diagnostic is an error.
func (l List) HasErrors() bool {
	for _, d := range l {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Errors returns only the error diagnostics.
func (l List) Errors() List {
	var out List
	for _, d := range l {
		if d.Severity == Error {
			out = append(out, d)
		}
	}
	return out
}

// Sorted returns the diagnostics ordered by file, line, column, severity and
// message, without duplicates, capped at MaxDiagnostics. When the cap cuts
// the list, a final diagnostic says how many were left out.
func (l List) Sorted() List {
	out := make(List, len(l))
	copy(out, l)
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	dedup := out[:0]
	for i, d := range out {
		if i > 0 && same(d, out[i-1]) {
			continue
		}
		dedup = append(dedup, d)
	}
	if len(dedup) > MaxDiagnostics {
		marker := tooMany(dedup[MaxDiagnostics:])
		dedup = append(dedup[:MaxDiagnostics:MaxDiagnostics], marker)
	}
	return dedup
}

// Codes of the diagnostic that ends a capped list.
const (
	CodeTooManyErrors   = "too_many_errors"
	CodeTooManyWarnings = "too_many_warnings"
)

// tooMany is the marker that stands for the dropped diagnostics. It is an
// error only when an error was dropped: warnings alone never make a
// compilation fail, however many there are.
func tooMany(dropped List) Diagnostic {
	if dropped.HasErrors() {
		return Diagnostic{
			Severity: Error,
			Code:     CodeTooManyErrors,
			Message:  fmt.Sprintf("too many diagnostics: %d more not shown", len(dropped)),
		}
	}
	return Diagnostic{
		Severity: Warning,
		Code:     CodeTooManyWarnings,
		Message:  fmt.Sprintf("too many diagnostics: %d more warnings not shown", len(dropped)),
	}
}

func less(a, b Diagnostic) bool {
	if a.Pos.File != b.Pos.File {
		return a.Pos.File < b.Pos.File
	}
	if a.Pos.Line != b.Pos.Line {
		return a.Pos.Line < b.Pos.Line
	}
	if a.Pos.Col != b.Pos.Col {
		return a.Pos.Col < b.Pos.Col
	}
	if a.Severity != b.Severity {
		return a.Severity < b.Severity
	}
	if a.Code != b.Code {
		return a.Code < b.Code
	}
	return a.Message < b.Message
}

func same(a, b Diagnostic) bool {
	return a.Pos == b.Pos && a.Severity == b.Severity && a.Code == b.Code && a.Message == b.Message
}

// Err wraps a List as an error, for callers that want one value.
type Err struct{ List List }

func (e *Err) Error() string {
	errs := e.List.Errors().Sorted()
	switch len(errs) {
	case 0:
		return "no errors"
	case 1:
		return errs[0].String()
	}
	return fmt.Sprintf("%s (and %d more errors)", errs[0], len(errs)-1)
}
