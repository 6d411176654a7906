package authoring

// What a draft reaches through its workflow steps. A draft's own tool
// steps are held to authoring.backends where they are written
// (forbiddenRefs), but a workflow step runs another served workflow, which
// may call any backend, and that one may run others. Reach follows the
// workflow steps of a workflow (in loops and finally steps too, at any
// depth) through the served workflows they name, each once (workflow steps
// may form cycles only across runs, never in one plan, but a visited set
// keeps the walk linear either way), and collects every backend a tool
// step calls and every workflow it runs on the way. A draft is refused at
// its workflow step when the callee reaches a backend authoring.backends
// does not allow (forbiddenRefs, compile.go), and a draft run needs the scope each workflow it reaches
// needs (checked by the run tool against the caller's token).

import (
	"slices"

	"github.com/vmcp-dev/vmcp/ir"
)

// reached is what one workflow reaches: the backends its tool steps and
// its callees' call, and the workflows it runs, each sorted.
type reached struct {
	Backends  []string
	Workflows []string
}

// reach returns what wf reaches through the workflows of served (by name).
// A callee that is not served adds its name to Workflows only.
func reach(wf *ir.Workflow, served map[string]*ir.Workflow) reached {
	backends, workflows := map[string]bool{}, map[string]bool{}
	var walk func(w *ir.Workflow)
	visit := func(s *ir.Step) {
		switch {
		case s.Tool != nil && s.Tool.Backend != "":
			backends[s.Tool.Backend] = true
		case s.Workflow != nil && !workflows[s.Workflow.Name]:
			workflows[s.Workflow.Name] = true
			if callee := served[s.Workflow.Name]; callee != nil {
				walk(callee)
			}
		}
	}
	walk = func(w *ir.Workflow) {
		ir.EachStep(w.Steps, visit)
		ir.EachStep(w.Finally, visit)
	}
	walk(wf)
	return reached{Backends: sortedKeys(backends), Workflows: sortedKeys(workflows)}
}

// outside returns the first of backends that allowed does not hold, or "".
func outside(backends, allowed []string) string {
	for _, b := range backends {
		if !slices.Contains(allowed, b) {
			return b
		}
	}
	return ""
}
