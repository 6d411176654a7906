package ir

// Validation: the facts the runtime trusts, checked once, when a plan
// enters from outside the compiler (Decode). A plan the compiler made
// holds them by construction; the runtime reads them as they are and
// computes none of them again:
//
//   - every list of steps (a workflow's, its finally steps', a loop
//     body's) is in plan order: Index is the position, every Deps entry
//     an earlier step and every Dependents entry a later one, and
//     Dependents is exactly the inverse of Deps;
//   - Sinks are the steps without dependents; Levels, CriticalPath and
//     Sinks index inside their list;
//   - step ids are unique across a workflow's steps and finally steps;
//   - the defaults are applied: a step has a type and a positive timeout,
//     a workflow a positive timeout and maxParallel, a loop a positive
//     maxParallel (at most MaxForEachParallel), maxIterations and item
//     name, and exactly one of an inner step and body steps;
//   - no elicitation sits where nobody can answer it (finally, bodies).
//
// Each failure names the workflow and the step, so a plan edited by hand
// or written by another tool is refused with the reason, never run wrong.

import (
	"fmt"
	"slices"
)

// compatibleVersion holds the same facts as Version (vmcpc always planned
// them; only the runtime's trust in them is new), so a plan of it that
// validates is read as Version: Temporal runs started before an upgrade,
// whose input holds such a plan, replay and go on.
const compatibleVersion = "vmcp.plan/v2"

// Validate checks p's version and every workflow (see the file comment),
// and on success records p as of Version.
func Validate(p *Plan) error {
	if p.Version != Version && p.Version != compatibleVersion {
		return versionError(p.Version)
	}
	for _, w := range p.Workflows {
		if w == nil {
			return fmt.Errorf("plan holds a null workflow")
		}
		if err := validateWorkflow(w); err != nil {
			return fmt.Errorf("workflow %q: %w", w.Name, err)
		}
	}
	p.Version = Version
	return nil
}

func validateWorkflow(w *Workflow) error {
	if len(w.Steps) == 0 {
		return fmt.Errorf("has no steps")
	}
	if err := validateSteps(w.Steps, w.Levels, true, w.Sinks, w.CriticalPath); err != nil {
		return err
	}
	if w.Timeout <= 0 || w.MaxParallel <= 0 {
		return fmt.Errorf("timeout (%s) and maxParallel (%d) must be positive; recompile the workflow", w.Timeout.D(), w.MaxParallel)
	}
	if err := validateSteps(w.Finally, w.FinallyLevels, false, nil, nil); err != nil {
		return fmt.Errorf("finally: %w", err)
	}
	ids := make(map[string]bool, len(w.Steps)+len(w.Finally))
	for _, s := range append(slices.Clip(w.Steps), w.Finally...) {
		if ids[s.ID] {
			return fmt.Errorf("duplicate step id %q", s.ID)
		}
		ids[s.ID] = true
	}
	for _, s := range w.Finally {
		if s.Type == StepElicitation {
			return fmt.Errorf("finally step %q is an elicitation; finally steps cannot ask the user", s.ID)
		}
	}
	return nil
}

// validateSteps checks one list of steps and the index lists over it;
// withSinks: the list records its sinks (finally steps do not).
func validateSteps(steps []*Step, levels [][]int, withSinks bool, sinks, path []int) error {
	n := len(steps)
	inRange := func(i int) bool { return i >= 0 && i < n }
	for i, s := range steps {
		if s == nil {
			return fmt.Errorf("step %d is null", i)
		}
		if s.Index != i {
			return fmt.Errorf("step %q has index %d at position %d", s.ID, s.Index, i)
		}
		for _, d := range s.Deps {
			if !inRange(d) || d >= i {
				return fmt.Errorf("step %q depends on index %d, which is not an earlier step", s.ID, d)
			}
		}
		for _, d := range s.Dependents {
			if !inRange(d) || d <= i {
				return fmt.Errorf("step %q has dependent index %d, which is not a later step", s.ID, d)
			}
		}
		if err := validateStep(s); err != nil {
			return err
		}
	}
	// Every index is in range: now Dependents must be Deps reversed.
	for i, s := range steps {
		for _, d := range s.Deps {
			if !slices.Contains(steps[d].Dependents, i) {
				return fmt.Errorf("step %q depends on %q, whose dependents leave it out", s.ID, steps[d].ID)
			}
		}
		for _, d := range s.Dependents {
			if !slices.Contains(steps[d].Deps, i) {
				return fmt.Errorf("step %q lists %q as a dependent, which does not depend on it", s.ID, steps[d].ID)
			}
		}
	}
	for _, lvl := range levels {
		for _, i := range lvl {
			if !inRange(i) {
				return fmt.Errorf("level holds index %d, out of range", i)
			}
		}
	}
	for _, i := range slices.Concat(sinks, path) {
		if !inRange(i) {
			return fmt.Errorf("index %d out of range", i)
		}
	}
	if withSinks {
		var want []int
		for i, s := range steps {
			if len(s.Dependents) == 0 {
				want = append(want, i)
			}
		}
		if !slices.Equal(want, sinks) {
			return fmt.Errorf("sinks %v are not the steps without dependents %v", sinks, want)
		}
	}
	return nil
}

// validateStep checks one step's own fields and its loop body.
func validateStep(s *Step) error {
	switch s.Type {
	case StepTool, StepElicitation, StepForEach, StepWorkflow:
	default:
		return fmt.Errorf("step %q has type %q; want tool, elicitation, forEach or workflow", s.ID, s.Type)
	}
	if s.Timeout <= 0 {
		return fmt.Errorf("step %q has no positive timeout; recompile the workflow", s.ID)
	}
	if s.Type == StepTool && s.Tool == nil {
		return fmt.Errorf("tool step %q has no tool", s.ID)
	}
	if s.Type != StepForEach {
		return nil
	}
	fe := s.ForEach
	if fe == nil || (fe.Step == nil) == (len(fe.Steps) == 0) {
		return fmt.Errorf("forEach step %q needs exactly one of an inner step and body steps", s.ID)
	}
	if fe.MaxParallel < 1 || fe.MaxParallel > MaxForEachParallel || fe.MaxIterations < 1 || fe.ItemVar == "" {
		return fmt.Errorf("forEach step %q needs maxParallel in 1..%d (has %d), a positive maxIterations (has %d) and an item name; recompile the workflow", s.ID, MaxForEachParallel, fe.MaxParallel, fe.MaxIterations)
	}
	if fe.Step != nil {
		if fe.Step.Timeout <= 0 {
			return fmt.Errorf("forEach step %q: its inner step has no positive timeout", s.ID)
		}
		return nil
	}
	for _, b := range fe.Steps {
		if b != nil && b.Type == StepElicitation {
			return fmt.Errorf("forEach step %q: body step %q is an elicitation; a loop body cannot ask the user", s.ID, b.ID)
		}
	}
	if err := validateSteps(fe.Steps, fe.Levels, true, fe.Sinks, fe.CriticalPath); err != nil {
		return fmt.Errorf("body of forEach step %q: %w", s.ID, err)
	}
	return nil
}
