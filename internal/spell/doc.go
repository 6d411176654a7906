// Package spell measures how far a mistyped name is from the names that
// were valid in its place, for the "did you mean" hints of the compiler's
// diagnostics (checker) and of vmcp.yaml's (config). Each caller keeps its
// own policy for which candidates to offer; the distance is computed here
// once.
package spell
