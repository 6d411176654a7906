package temporalrun

import (
	"errors"

	"go.temporal.io/sdk/workflow"

	"github.com/vmcp-dev/vmcp/runtime"
)

// Workflow is a vmcp run as a Temporal workflow.
func Workflow(ctx workflow.Context, in Input) (*runtime.Run, error) {
	return nil, errors.New("not yet: waiting for the run core")
}
