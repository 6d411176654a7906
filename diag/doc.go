// Package diag holds the compiler's one diagnostic type and the printers
// for it.
//
// In: diagnostics produced by the parser, checker and planner, and the
// source text of the files they name. Out: a sorted, de-duplicated, capped
// [List], printed as text (Go-toolchain style with the source line and a
// caret), JSON, or GitHub workflow annotations. Entry points: [List.Add],
// [List.Sorted], [Print].
package diag
