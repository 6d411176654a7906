package temporalrun

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/vmcp-dev/vmcp/runtime"
)

// start runs the step of a (an ActionStart) on a coroutine of its own.
func (d *driver) start(ctx workflow.Context, a runtime.Action) {
	step := d.m.Step(a.Step)
	workflow.Go(ctx, func(ctx workflow.Context) {
		d.send(event{result: &runtime.StepResult{
			Step: a.Step, Status: runtime.StepFailed, Attempts: 1,
			Err: &runtime.StepError{Step: step.ID, Pos: step.Pos, Msg: fmt.Sprintf("steps of type %s do not run on the Temporal executor yet", step.Type)},
		}})
	})
}
