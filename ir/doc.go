// Package ir defines the execution plan that the compiler produces and the
// runtime executes: plain, exported, versioned data with no behaviour beyond
// encoding.
//
// In: nothing (it depends on no other vmcp package). Out: [Plan], which
// round-trips through JSON unchanged. Entry points: [Encode] and [Decode];
// Decode refuses a plan whose Version is not [Version] and checks that the
// graph indexes are consistent, so that a hand-edited plan cannot crash the
// runtime.
//
// Every step, template and output property keeps its source [Pos], so that a
// failure at run time can point at the YAML line that caused it; a template
// also keeps the parser's segment table ([Template.Segments]), and
// [OffsetPos] (segments.go) is the one mapping from a byte offset inside a
// template to a file line and column, used by the checker and the runtime
// alike. limits.go holds the value limits both sides enforce.
package ir
