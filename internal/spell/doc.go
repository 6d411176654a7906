// Package spell measures how far a mistyped name is from the names that
// were valid in its place, for the "did you mean" hints of the compiler's
// diagnostics (checker) and of vmcp.yaml's (config): Distance measures,
// Suggest picks the one candidate to offer (one policy for both) and
// DidYouMean words it. It also converts a field name between camelCase
// and snake_case (Camel, Snake).
package spell
