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
//   - The wire contract (input.go): workflow and activity names, inputs,
//     the run query and the answer update.
package temporalrun
