package runtime

// Limits on what a run passes on, and on concurrent backend calls.
//
// Values (design.md "Limits"): the caller's arguments of a workflow and the
// arguments of every backend call are measured as a whole, whatever made
// them: a text template (whose output limitWriter caps as it renders), a
// single-action template that passes a value with its type, or a template
// that is the whole arguments object. A value may be at most
// ir.MaxValueBytes as JSON and nested at most ir.MaxArgumentDepth levels,
// the arguments object itself being level 1.
//
// valueMeter walks a value once, adding up its size as JSON (strings are
// counted without escapes, integers by their digits and other scalars as
// 4 bytes, so the count is close to the encoded size) and stopping at
// the first level past the depth limit or the first byte past the size
// limit, so a huge or deep value costs no more than the limit to reject.
// Only when a value is over a limit is it walked again, next to the
// step's argument plan, to name the part that is too big or too deep by
// its path in the workflow (arguments.payload), never by its content:
// errors never echo parameter values.

import (
	"context"
	"fmt"
	"sort"

	"github.com/vmcp-dev/vmcp/ir"
)

// CallLimits bound the backend calls in flight at once, across every run
// that shares a Backend.
type CallLimits struct {
	// Total bounds the calls to all backends together (vmcp's
	// server.maxParallel); <= 0 means no limit.
	Total int
	// PerBackend bounds the calls to each named backend (backends.<name>
	// .maxParallel). A backend that is missing or <= 0 has only Total.
	// With a cap under Total, a backend that stops answering holds at most
	// its own slots, and calls to the others go on.
	PerBackend map[string]int
	// Rates bounds how often each named backend is called (backends.<name>
	// .rateLimit, ratelimit.go); a missing backend has no rate limit.
	Rates map[string]RateLimit
	// Share, when set, divides Rates among the processes that share them
	// (ratelimit.go).
	Share *RateShare
}

// LimitCalls returns a Backend that lets at most the limits' calls to b be
// in flight at once, each backend's calls starting no faster than its rate
// limit. A call first waits for its backend's rate limit, then takes a
// slot of its backend, then one of the total, and gives both back when it returns; the wait counts against
// the step's timeout, and a cancelled run stops waiting. b must return
// when a call's context ends (mcpclient does, even for a backend that
// stopped reading), which is what frees the slots of calls that a stuck
// backend will never answer. With no limits at all, b itself is returned.
func LimitCalls(b Backend, lim CallLimits) Backend {
	l := &limitedBackend{b: b, perBackend: map[string]chan struct{}{}, rates: newRateLimiters(lim.Rates)}
	if lim.Share != nil {
		lim.Share.add(l.rates)
	}
	if lim.Total > 0 {
		l.total = make(chan struct{}, lim.Total)
	}
	names := make([]string, 0, len(lim.PerBackend))
	for name := range lim.PerBackend {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if n := lim.PerBackend[name]; n > 0 {
			l.perBackend[name] = make(chan struct{}, n)
		}
	}
	if l.total == nil && len(l.perBackend) == 0 && len(l.rates) == 0 {
		return b
	}
	return l
}

type limitedBackend struct {
	b          Backend
	total      chan struct{}            // nil: no total limit
	perBackend map[string]chan struct{} // read-only after LimitCalls
	rates      rateLimiters             // read-only after LimitCalls
}

func (l *limitedBackend) CallTool(ctx context.Context, call ToolCall) (*ToolResult, error) {
	return l.callDispatched(ctx, call, nil)
}

// callDispatched is CallTool calling dispatched, when set, once the call
// has its slots and before b gets it (dispatchingBackend).
func (l *limitedBackend) callDispatched(ctx context.Context, call ToolCall, dispatched func()) (*ToolResult, error) {
	if err := l.rates.wait(ctx, call.Backend); err != nil {
		return nil, err
	}
	if own := l.perBackend[call.Backend]; own != nil {
		select {
		case own <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a free call slot of backend %q (at most %d calls at once, backends.%s.maxParallel): %w",
				call.Backend, cap(own), call.Backend, context.Cause(ctx))
		}
		defer func() { <-own }()
	}
	if l.total != nil {
		select {
		case l.total <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a free backend call slot (at most %d calls at once, server.maxParallel): %w", cap(l.total), context.Cause(ctx))
		}
		defer func() { <-l.total }()
	}
	if dispatched != nil {
		dispatched()
	}
	return l.b.CallTool(ctx, call)
}

// overLimit says which value limit a value breaks.
type overLimit int

const (
	withinLimits overLimit = iota
	tooDeep
	tooBig
)

// valueMeter adds up the JSON size of the values given to add.
type valueMeter struct {
	size int
}

// add measures v, which sits inside d containers, and reports the first
// limit the values measured so far break.
func (m *valueMeter) add(v any, d int) overLimit {
	switch x := v.(type) {
	case map[string]any:
		if d+1 > ir.MaxArgumentDepth {
			return tooDeep
		}
		m.size += containerSize(len(x))
		for k, e := range x {
			if r := m.addField(k, e, d+1); r != withinLimits {
				return r
			}
		}
	case []any:
		if d+1 > ir.MaxArgumentDepth {
			return tooDeep
		}
		m.size += containerSize(len(x))
		for _, e := range x {
			if r := m.add(e, d+1); r != withinLimits {
				return r
			}
		}
	case string:
		m.size += len(x) + 2
	case int64:
		m.size += intDigits(x)
	default:
		// null, booleans and other numbers: at most a few bytes each,
		// which only matter in their millions.
		m.size += 4
	}
	if m.size > ir.MaxValueBytes {
		return tooBig
	}
	return withinLimits
}

// addField measures an object's field k with value v, which sits inside
// d containers.
func (m *valueMeter) addField(k string, v any, d int) overLimit {
	m.size += len(k) + 3 // "k":
	return m.add(v, d)
}

// containerSize is the JSON size of an object's or array's braces and
// commas.
func containerSize(n int) int { return 2 + max(n-1, 0) }

// measureValue measures v alone, inside d containers.
func measureValue(v any, d int) (int, overLimit) {
	var m valueMeter
	r := m.add(v, d)
	return m.size, r
}

// measureArgs is measureValue(args, 0) for a call's arguments made by
// plan: when plan is an object, its keys are the arguments' keys (less
// those omitNullActions left out), which are looked up instead of
// iterating the map.
func measureArgs(plan *valuePlan, args map[string]any) overLimit {
	if plan == nil || plan.kind != ir.KindObject {
		_, r := measureValue(args, 0)
		return r
	}
	m := valueMeter{size: containerSize(len(args))}
	for _, k := range plan.keys {
		e, ok := args[k]
		if !ok {
			continue
		}
		if r := m.addField(k, e, 1); r != withinLimits {
			return r
		}
	}
	if m.size > ir.MaxValueBytes {
		return tooBig
	}
	return withinLimits
}

// checkInputLimits rejects caller arguments that are too big or too deep
// with an *InputError that names the parameter, never its value.
func checkInputLimits(workflow string, params map[string]any) error {
	if _, r := measureValue(params, 0); r == withinLimits {
		return nil
	}
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	var problem string
	switch _, r := measureValue(params, 0); r {
	case tooDeep:
		for _, k := range names {
			if _, r := measureValue(params[k], 1); r == tooDeep {
				problem = fmt.Sprintf("parameter %q is nested deeper than %d levels, the limit for argument values; pass a flatter value", k, ir.MaxArgumentDepth)
				break
			}
		}
	case tooBig:
		largest, largestSize := "", -1
		for _, k := range names {
			if n, _ := measureValue(params[k], 1); n > largestSize {
				largest, largestSize = k, n
			}
		}
		problem = fmt.Sprintf("arguments are more than %d bytes as JSON (%s), the limit for argument values; the largest is parameter %q", ir.MaxValueBytes, sizeName(ir.MaxValueBytes), largest)
	}
	return &InputError{Workflow: workflow, Problems: []string{problem}}
}

// checkArgLimits rejects a backend call's arguments that are too big or
// too deep, with an error naming the step, the argument's path in the
// workflow and, for a template, its position.
func checkArgLimits(sp *stepPlan, args map[string]any) *StepError {
	if measureArgs(sp.args, args) == withinLimits {
		return nil
	}
	part, path, r := locateOverLimit(sp.args, args, "arguments")
	pos := sp.step.Pos
	if part != nil && part.t != nil {
		pos = posOr(part.t.src.Pos, pos)
	}
	var msg string
	switch r {
	case tooDeep:
		msg = fmt.Sprintf("%s is nested deeper than %d levels, the limit for argument values; pass a flatter value", path, ir.MaxArgumentDepth)
	default:
		msg = fmt.Sprintf("arguments are more than %d bytes as JSON (%s), the limit for argument values", ir.MaxValueBytes, sizeName(ir.MaxValueBytes))
		if path != "arguments" {
			msg += "; the largest part is " + path
		}
	}
	return &StepError{Step: sp.id, Pos: pos, Msg: msg}
}

// locateOverLimit finds the part of the arguments that breaks a limit,
// following the argument plan vp where it matches the value: for depth
// the first part (in source order) that is too deep, for size the largest
// part. It stops at a template (whose value is data) and returns that
// plan node, the part's path and the limit broken.
func locateOverLimit(vp *valuePlan, v any, path string) (*valuePlan, string, overLimit) {
	return locateAt(vp, v, path, 0)
}

func locateAt(vp *valuePlan, v any, path string, d int) (*valuePlan, string, overLimit) {
	_, whole := measureValue(v, d)
	if vp == nil || vp.t != nil {
		return vp, path, whole
	}
	type part struct {
		plan *valuePlan
		val  any
		path string
	}
	var parts []part
	switch x := v.(type) {
	case map[string]any:
		if vp.kind != ir.KindObject {
			return vp, path, whole
		}
		for i, k := range vp.keys {
			parts = append(parts, part{vp.fields[i], x[k], path + "." + k})
		}
	case []any:
		if vp.kind != ir.KindArray || len(vp.items) != len(x) {
			return vp, path, whole
		}
		for i, it := range vp.items {
			parts = append(parts, part{it, x[i], fmt.Sprintf("%s[%d]", path, i)})
		}
	default:
		return vp, path, whole
	}
	best, bestSize := -1, -1
	for i, p := range parts {
		n, r := measureValue(p.val, d+1)
		if whole == tooDeep && r == tooDeep {
			return locateAt(p.plan, p.val, p.path, d+1)
		}
		if n > bestSize {
			best, bestSize = i, n
		}
	}
	if whole == tooBig && best >= 0 {
		p := parts[best]
		if _, r := measureValue(p.val, d+1); r == tooBig {
			return locateAt(p.plan, p.val, p.path, d+1)
		}
		return p.plan, p.path, tooBig
	}
	return vp, path, whole
}

// intDigits is the length of x in decimal, with its sign.
func intDigits(x int64) int {
	n := 1
	if x < 0 {
		n++ // the sign
	}
	for x <= -10 || x >= 10 { // division truncates toward zero
		x /= 10
		n++
	}
	return n
}

// sizeName prints a byte count in MB, as limits are documented.
func sizeName(n int) string {
	return fmt.Sprintf("%d MB", n>>20)
}
