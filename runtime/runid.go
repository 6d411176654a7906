package runtime

import "github.com/google/uuid"

// NewRunID mints a run id: a random (version 4) UUID in its canonical
// text form. Every run id vmcp makes is minted here: the engine's, the
// Temporal runner's, the MCP server's (which logs the id before the run
// starts, and whose task ids are run ids with the owner's tag in their
// last six bytes, mcpserver/tasks.go) and vmcp run's re-runs. A child
// run under Temporal takes its parent's id with the step and a count
// appended instead, so that a replay makes the same one.
func NewRunID() string { return uuid.NewString() }

// EnsureRunID returns o.RunID, minting it first when it is empty.
func (o *RunOptions) EnsureRunID() string {
	if o.RunID == "" {
		o.RunID = NewRunID()
	}
	return o.RunID
}
