package schedule

// The startup check of the schedules against the compiled workflows.

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/internal/spell"
	"github.com/vmcp-dev/vmcp/runtime"
)

// The codes of Check's diagnostics.
const (
	CodeUnknownWorkflow = "unknown_workflow" // a schedule's workflow is not served
	CodeBadArguments    = "bad_arguments"    // a schedule's arguments do not match the workflow's parameters
)

// Check reports, at the config's positions, every schedule whose workflow
// is not among workflows (the served ones' names) and every one whose
// arguments validate (the engine's ValidateParams) refuses. A workflow
// that did not compile is not served, so it is reported here too, after
// the compiler's own errors.
func Check(schedules []*config.Schedule, workflows []string, validate func(workflow string, params map[string]any) error) diag.List {
	var out diag.List
	served := map[string]bool{}
	for _, w := range workflows {
		served[w] = true
	}
	for i, s := range schedules {
		path := "schedules[" + strconv.Itoa(i) + "]"
		if !served[s.Workflow] {
			msg := "schedule %q runs workflow %q, which is not served"
			if near := closest(s.Workflow, workflows); near != "" {
				out.Errorf(s.WorkflowPos, path+".workflow", CodeUnknownWorkflow, msg+"; did you mean %s?", s.Name, s.Workflow, near)
			} else {
				out.Errorf(s.WorkflowPos, path+".workflow", CodeUnknownWorkflow, msg+" (the workflows are: %s)", s.Name, s.Workflow, strings.Join(workflows, ", "))
			}
			continue
		}
		if err := validate(s.Workflow, copyArgs(s.Arguments)); err != nil {
			var ie *runtime.InputError
			if errors.As(err, &ie) {
				out.Errorf(s.ArgumentsPos, path+".arguments", CodeBadArguments, "schedule %q: the arguments do not match the parameters of workflow %q: %s", s.Name, s.Workflow, strings.Join(ie.Problems, "; "))
			} else {
				out.Errorf(s.ArgumentsPos, path+".arguments", CodeBadArguments, "schedule %q: %v", s.Name, err)
			}
		}
	}
	return out
}

// closest names the workflows within edit distance 2 of name, closest
// first, as "a" or "a or b".
func closest(name string, names []string) string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, n := range names {
		if d := spell.Distance(name, n); d < 3 {
			cs = append(cs, cand{n, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for _, c := range cs {
		out = append(out, c.name)
	}
	return strings.Join(out, " or ")
}
