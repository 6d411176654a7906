// Package runtime executes compiled workflow plans against backend MCP
// servers.
//
// In: an [ir.Plan] (from the compiler, or decoded from plan JSON), a
// [Backend] that calls backend tools, and optionally a [SchemaSource] (for
// argument coercion), a [Store] and, per run, an [Elicitor] and an event
// callback. Out: a [Run] record per execution, with the composite tool's
// result, per-step states and a [StepError] that names the failing step
// and its source position. Entry points: [New], which prepares every
// workflow once (templates parsed, input schemas compiled, graph facts
// computed), and [Engine.Run], which validates parameters and executes one
// workflow; [Engine.Status] and [Engine.Cancel] act on runs by id while they
// go; [Engine.Resume] continues a stored run after a crash and
// [Engine.Replay] replays a finished one.
//
// A run is decided by a deterministic [Machine] (plan and step results in,
// actions out: no clock, no randomness, no goroutines) and carried out by
// a driver: the local one here (goroutines, contexts, the store), or
// another built on [Engine.NewMachine], [Machine.ToolCall],
// [Machine.StepInput] and [Engine.ExecuteStep] (the Temporal driver).
//
// The package imports ir, never the parser, checker or planner, so a server
// that runs plans does not link the compiler's front half.
//
// Errors inside templates point at the exact file position through the
// compiler's segment table (ir.Template.Segments and ir.OffsetPos, the
// mapping the compiler itself uses), also inside quoted and block scalars.
//
// Files: engine.go (the API), machine.go (the deterministic run core: the
// ready queue, conditions, failure actions, outcome), scheduler.go (the
// local driver: goroutines, contexts, store writes), restore.go (replay and
// resume), driverapi.go and executestep.go (what other drivers need to
// execute steps), env.go (StepEnv and Clock: the executors' outside
// world), stepview.go (the .steps template data), finally.go (finally steps, after the run's outcome is
// decided), step.go (tool calls, elicitation), relay.go (backends'
// questions during tool calls, put to the run's Elicitor), retry.go (the retry
// policy), foreach.go (iterations and their per-item condition),
// body.go (loop bodies: a DAG of steps per iteration, nested loops),
// subworkflow.go (workflow steps: child runs linked to their parent),
// template.go (templates and their functions), query.go (the query
// function, JMESPath through internal/jmes), queryfuncs.go (its error
// wording), value.go (arguments and coercion), limit.go (the
// size and depth limits on caller and backend arguments, and the cap on
// concurrent backend calls), output.go (step outputs and the composite
// result), input.go (parameter validation), store.go (the in-memory
// store), api.go (the contract with the MCP layer and stores).
package runtime
