package runtime

// The template data of .steps: shared entries for steps that have not
// finished, and the stepView a chains-only workflow uses instead of maps
// (see machine.go, "Template data").

// Shared .steps entries for steps that have not finished. Never modified.
var (
	pendingEntry = map[string]any{"status": string(StepPending), "output": nil, "content": noContent, "error": ""}
	runningEntry = map[string]any{"status": string(StepRunning), "output": nil, "content": noContent, "error": ""}
)

// stepView is .steps in a workflow whose templates are all field chains
// that read inside a step's entry (workflowPlan.chainsOnly): one slice of
// entries per run, updated in place under the run's lock, instead of a map
// of step ids to three-key maps. Only resolveChain reads it, exactly as it
// would read the map {<id>: {output, status, error}}; no template can yield
// the view or an entry as a value (resolveChain turns an entry into that
// map if it ever would).
type stepView struct {
	byID    map[string]*stepPlan
	entries []stepEntry
}

type stepEntry struct {
	output  any
	content any // map[string]any, never nil once set
	status  any
	err     any // the error message, a string
}

func (e *stepEntry) field(name string) (any, bool) {
	switch name {
	case "output":
		return e.output, true
	case "content":
		return e.content, true
	case "status":
		return e.status, true
	case "error":
		return e.err, true
	}
	return nil, false
}

func (e *stepEntry) asMap() map[string]any {
	return map[string]any{"output": e.output, "content": e.content, "status": e.status, "error": e.err}
}

// Boxed once: the status of a pending and of a running entry.
var (
	pendingValue any = string(StepPending)
	runningValue any = string(StepRunning)
	emptyString  any = ""
)

// Step statuses as template values, boxed once.
var (
	completedValue any = string(StepCompleted)
	failedValue    any = string(StepFailed)
	skippedValue   any = string(StepSkipped)
)

func statusValue(s StepStatus) any {
	switch s {
	case StepCompleted:
		return completedValue
	case StepFailed:
		return failedValue
	case StepSkipped:
		return skippedValue
	case StepPending:
		return pendingValue
	case StepRunning:
		return runningValue
	}
	return string(s)
}
