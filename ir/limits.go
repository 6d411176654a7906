package ir

// Limits that the compiler and the runtime both enforce (design.md
// "Limits"), declared once here.
const (
	// MaxArgumentDepth is how deeply an argument value may nest: an object
	// or array inside another counts one level more, and the arguments
	// object of a call (or the caller's arguments of a workflow) is level 1.
	MaxArgumentDepth = 100
	// MaxValueBytes bounds what one template renders, and the size as JSON
	// of a whole value passed on: the caller's arguments of a workflow and
	// the arguments of each backend call.
	MaxValueBytes = 10 << 20
)
