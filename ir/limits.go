package ir

import "time"

// Limits and defaults that the compiler and the runtime both enforce
// (design.md "Limits"), declared once here. Operators change the
// server-wide caps under limits: in vmcp.yaml.
const (
	// MaxArgumentDepth is how deeply an argument value may nest: an object
	// or array inside another counts one level more, and the arguments
	// object of a call (or the caller's arguments of a workflow) is level 1.
	MaxArgumentDepth = 100
	// MaxValueBytes bounds what one template renders, and the size as JSON
	// of a whole value passed on: the caller's arguments of a workflow and
	// the arguments of each backend call.
	MaxValueBytes = 10 << 20
	// DefaultIterationLimit is limits.maxIterations when vmcp.yaml does not
	// set it: no forEach may allow more iterations.
	DefaultIterationLimit = 1000
	// DefaultMaxIterations is a forEach's maxIterations when the step does
	// not set it.
	DefaultMaxIterations = 100
	// MaxLoopDepth is how deeply forEach loops nest through their bodies
	// (steps:); a top-level loop is depth 1, and the limit holds for the
	// innermost loop whether its body is steps: or a single step:.
	MaxLoopDepth = 3
	// DefaultMaxParallel is a workflow's maxParallel, and a forEach's,
	// when it does not set one.
	DefaultMaxParallel = 10
	// MaxForEachParallel is the most iterations a forEach runs at once.
	MaxForEachParallel = 50
	// MaxRetries is the most retries onError may ask for; more are capped.
	MaxRetries = 10
)

// The timeouts and the retry delay that apply when the workflow or the
// step does not set them.
const (
	DefaultWorkflowTimeout = 30 * time.Minute
	DefaultStepTimeout     = 5 * time.Minute
	DefaultRetryDelay      = time.Second
)
