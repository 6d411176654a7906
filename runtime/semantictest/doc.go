// Package semantictest is the runtime's semantics suite, shared by every
// executor of vmcp workflows: the local driver (runtime's own tests run
// it, and replay every recorded run) and the Temporal driver run the very
// same cases.
//
// In: an Executor, which runs one workflow of a plan against the suite's
// in-process fake backend and elicitor and returns the final run record.
// Out: one subtest per case, checking the run's status, output, step
// statuses and attempts, the error's text and position, and the
// case's own checks (backend calls, step outputs). Entry point: Run.
//
// The cases build their plans in Go (build, tool, when, ...), as the
// runtime's unit tests do, so each case states exactly the IR it runs.
package semantictest
