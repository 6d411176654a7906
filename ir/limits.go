package ir

// Limits and defaults that the checker and the runtime both apply
// (design.md "Limits"). Operators change the server-wide caps under
// limits: in vmcp.yaml.
const (
	// DefaultIterationLimit is limits.maxIterations when vmcp.yaml does not
	// set it: no forEach may allow more iterations.
	DefaultIterationLimit = 1000
	// DefaultMaxIterations is a forEach's maxIterations when the step does
	// not set it.
	DefaultMaxIterations = 100
)
