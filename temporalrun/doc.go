// Package temporalrun is vmcp's Temporal executor (executor: {kind:
// temporal}; design.md "Scale-out on Temporal"): each run is a Temporal
// workflow whose input is the compiled plan, driven by the same run core
// (runtime.Machine) as the local driver.
//
// In: a compiled ir.Plan, a Temporal client and task queue, vmcp's run
// store; on the workers, a runtime.Backend. Out: runs performed by any
// number of workers, recorded in the run store with the same records and
// events as local runs.
//
// Entry points:
//   - Runner (runner.go, follow.go, reattach.go): the vmcp run side. It
//     implements what the MCP server, the HTTP API and MCP Tasks need (Run,
//     Workflows, Status, Cancel, Store), starts each run on Temporal and
//     follows it into the store; Reattach picks up runs an earlier vmcp run
//     left going.
//   - NewWorker and Register (worker.go): the `vmcp worker` side, with the
//     workflow function Workflow (workflow.go, exec.go, questions.go) and
//     the activities (activity.go): one backend call, or one step whole.
//     A quick step that may run twice (quick.go) runs its call as a local
//     activity instead, inside the workflow task that started it, so a
//     chain or a ready set of quick steps costs one workflow task rather
//     than a round of server trips per step.
//
// Resume and idempotency on Temporal: a step whose start is in the
// history (a regular activity) is never called twice unless it may run
// twice; a worker lost in its call interrupts the run there otherwise. A
// local activity leaves no trace until its workflow task completes, so
// only steps that may run twice (idempotent: true, idempotentHint,
// readOnlyHint) take that path: a worker lost before the task completed
// has them called again by the next worker, as the resume rule allows.
// Which tools counted as quick is recorded once per run (SideEffect,
// behind workflow.GetVersion), so replays on any worker decide alike, and
// runs started before local activities existed finish on their old path.
//   - The wire contract (input.go): workflow and activity names, inputs,
//     the run query and the answer update.
package temporalrun
