// Package fakebackend is the in-process backend the engine's tests call:
// the runtime's own unit tests and the semantics suite every driver runs
// (runtime/semantictest) share it, so a case means the same on each.
//
// In: a table of Tools by "backend.tool", each saying how that tool
// behaves (latency, failures, hangs, results). Out: a toolcall.Backend
// that answers accordingly and records every call, the attempts per
// step, how many calls ran at once and how many saw their context end.
// Entry point: New.
package fakebackend
