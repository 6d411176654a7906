package runtime

// Preparation: New turns each ir.Workflow into a workflowPlan once. Every
// template is parsed, every argument tree is converted into a valuePlan
// whose template leaves point at parsed templates, the input schema is
// compiled. The IR is trusted: the graph facts the planner wrote (Deps,
// Dependents, Sinks, Remaining, the indexes in plan order) and the
// checker's defaults are read as they are, never computed or checked
// again; a plan reaches New from the compiler or through ir.Decode, which
// validates it once, and tests build theirs with internal/irbuild, which
// runs the planner. What is computed here is what the IR does not hold:
// parsed templates, compiled schemas and the weighted ready-queue
// priorities (priority.go). Runs never parse or compile anything.

import (
	"fmt"
	"sync"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vmcp-dev/vmcp/ir"
)

type workflowPlan struct {
	wf *ir.Workflow
	// digest is ir.Digest(wf), recorded on each run (Run.PlanDigest) so
	// a run resumed after a restart can tell that the workflow changed.
	digest string
	// steps are the workflow's steps, then its finally steps: nmain
	// top-level steps, the finally steps from index nmain on.
	steps []*stepPlan
	nmain int
	byID  map[string]*stepPlan
	roots []int
	// finallyRoots are the finally steps without dependencies; they become
	// ready once every top-level step has ended (see finally.go).
	finallyRoots []int
	// sinks are the top-level steps no step depends on.
	sinks []int
	// pendingView is .steps before a run starts, every step pending;
	// each run clones it.
	pendingView map[string]any
	// pendingSteps is Run.Steps before a run starts; each run copies it.
	pendingSteps []StepState
	// pendingCounts is each step's number of dependencies; each run
	// copies it into its counters.
	pendingCounts []int32
	// chainsOnly: every template is a field chain reading inside .steps
	// entries, so runs keep .steps as a stepView, not maps.
	chainsOnly bool
	// chainRoots holds the first field of every chain, when chainsOnly.
	chainRoots map[string]bool
	// readsWorkflow: some template may read .workflow, so runs keep it
	// current (see refreshWorkflow). Decided from the template texts: a
	// template that never names "workflow" cannot reach it.
	readsWorkflow bool
	// weight and prio are each step's static weight and priority, and
	// loops the top-level forEach steps whose weight a run learns from
	// their collection; watchers[i] lists the loops whose collection reads
	// step i (nil without loops). See priority.go.
	weight   []int32
	prio     []int32
	loops    []watchedLoop
	watchers [][]int32
	// scratch pools the *runScratch of finished runs.
	scratch     sync.Pool
	timeout     time.Duration
	maxParallel int
	input       *jsonschema.Schema
	// noParams is a run's parameters when it is given none (defaults
	// applied, declared ones null), or noParamsErr why a run needs some:
	// validated once, as a scheduled run or a call without arguments
	// would every time (checkParams copies it).
	noParams    map[string]any
	noParamsErr error
	vars        []varPlan
	output      []*outputPlan
}

type varPlan struct {
	name  string
	value *valuePlan
}

type stepPlan struct {
	step       *ir.Step
	index      int
	id         string
	kind       string
	ndeps      int
	dependents []int
	timeout    time.Duration
	cond       *tmpl
	args       *valuePlan
	message    *tmpl
	answer     *jsonschema.Schema // an elicitation step's form
	collection *tmpl
	// argSchema is the compiled input schema this tool step's arguments
	// were last checked against (argschema.go), shared by its runs.
	argSchema atomic.Pointer[argSchema]
	// argCheck is the step's own fast check for that schema (argfast.go).
	argCheck atomic.Pointer[plannedCheck]
	items    *valuePlan // a literal collection
	inner    *stepPlan
	body     *bodyPlan // a forEach's steps: (body.go); nil with inner
	// finally marks a finally step; its Deps count from base, the index of
	// the first finally step.
	finally bool
	base    int
	// sharedForEach: no template of inner can yield the .forEach map.
	sharedForEach bool
	// callee is the workflow a workflow step runs (see linkCallees).
	callee *workflowPlan
	// calls is the mean time of the step's calls, a tool step's only:
	// the quick-step bet's measure (quick.go).
	calls callTime
	// iterTime is the mean time of a forEach step's iterations: the
	// quick-loop bet's measure (quick.go).
	iterTime callTime
	// retry policy
	action     string
	maxRetries int
	retryDelay time.Duration
	tuning     retryTuning
}

type outputPlan struct {
	prop     *ir.OutputProperty
	value    *tmpl
	props    []*outputPlan
	required map[string]bool
}

// valuePlan is an ir.Value ready to evaluate.
type valuePlan struct {
	kind    string
	literal any
	t       *tmpl
	keys    []string
	fields  []*valuePlan
	items   []*valuePlan
	// static is true when the tree has no templates, so its literal can
	// be copied instead of evaluated.
	static bool
	// paramFields: some field of the object is exactly {{.params.P}}
	// (see omitNullActions).
	paramFields bool
}

func prepareWorkflow(wf *ir.Workflow, funcs template.FuncMap) (*workflowPlan, error) {
	if len(wf.Steps) == 0 {
		return nil, fmt.Errorf("workflow %q (%s) has no steps", wf.Name, wf.Pos)
	}
	wp := &workflowPlan{
		wf:          wf,
		digest:      ir.Digest(wf),
		byID:        make(map[string]*stepPlan, len(wf.Steps)),
		timeout:     wf.Timeout.D(),
		maxParallel: wf.MaxParallel,
	}
	for _, s := range wf.Steps {
		sp, err := prepareStep(s, funcs)
		if err != nil {
			return nil, fmt.Errorf("workflow %q: %w", wf.Name, err)
		}
		wp.steps = append(wp.steps, sp)
		wp.byID[s.ID] = sp
	}
	wp.nmain = len(wp.steps)
	if err := wp.prepareFinally(funcs); err != nil {
		return nil, err
	}
	wp.sinks = wf.Sinks
	wp.preparePriorities()
	wp.pendingView = make(map[string]any, len(wp.steps))
	wp.pendingSteps = make([]StepState, len(wp.steps))
	wp.pendingCounts = make([]int32, len(wp.steps))
	for i, sp := range wp.steps {
		wp.pendingView[sp.id] = pendingEntry
		wp.pendingSteps[i] = StepState{ID: sp.id, Status: StepPending}
		wp.pendingCounts[i] = int32(sp.ndeps)
		switch {
		case sp.finally && sp.ndeps == 0:
			wp.finallyRoots = append(wp.finallyRoots, sp.index)
		case sp.finally:
		case sp.ndeps == 0:
			wp.roots = append(wp.roots, sp.index)
		}
	}
	var err error
	if wp.input, err = compileInputSchema(wf); err != nil {
		return nil, err
	}
	wp.noParams, wp.noParamsErr = wp.validateParams(nil)
	for _, v := range wf.Vars {
		vp, err := prepareValue(v.Value, funcs, 0)
		if err != nil {
			return nil, fmt.Errorf("workflow %q: var %q: %w", wf.Name, v.Name, err)
		}
		wp.vars = append(wp.vars, varPlan{name: v.Name, value: vp})
	}
	if wf.Output != nil {
		if wp.output, err = prepareOutput(wf.Output.Properties, funcs); err != nil {
			return nil, fmt.Errorf("workflow %q: output: %w", wf.Name, err)
		}
	}
	// A loop body's iterations copy .steps as a map (body.go).
	wp.chainsOnly = wp.templatesAreEntryChains() && !wp.hasBodies()
	if wp.chainsOnly {
		wp.chainRoots = map[string]bool{}
		wp.eachTemplate(func(t *tmpl) {
			wp.chainRoots[t.chain[0]] = true
			if len(t.chain) >= 2 && t.chain[0] == "steps" {
				if sp := wp.byID[t.chain[1]]; sp != nil {
					t.entry = sp.index + 1
				}
			}
		})
	}
	wp.eachTemplate(func(t *tmpl) {
		wp.readsWorkflow = wp.readsWorkflow || t.mayReadWorkflow()
	})
	return wp, nil
}

// hasBodies reports whether some forEach of the workflow has a body.
func (wp *workflowPlan) hasBodies() bool {
	for _, sp := range wp.steps {
		if sp.body != nil {
			return true
		}
	}
	return false
}

// templatesAreEntryChains reports whether every template of the workflow
// is a plain field chain (see tmpl.chain) that, when it reads .steps, reads
// inside one step's entry (.steps.<id>.<field>...). Then nothing but
// resolveChain ever reads a .steps entry, and never as a whole value.
func (wp *workflowPlan) templatesAreEntryChains() bool {
	ok := true
	wp.eachTemplate(func(t *tmpl) { ok = ok && t.isEntryChain() })
	return ok
}

// eachTemplate calls f with every template of the workflow.
func (wp *workflowPlan) eachTemplate(f func(*tmpl)) {
	for _, sp := range wp.steps {
		sp.eachTemplate(f)
	}
	for _, v := range wp.vars {
		v.value.eachTemplate(f)
	}
	eachOutputTemplate(wp.output, f)
}

func (sp *stepPlan) eachTemplate(f func(*tmpl)) {
	if sp == nil {
		return
	}
	for _, t := range []*tmpl{sp.cond, sp.message, sp.collection} {
		if t != nil {
			f(t)
		}
	}
	sp.args.eachTemplate(f)
	sp.items.eachTemplate(f)
	sp.inner.eachTemplate(f)
	if sp.body != nil {
		for _, b := range sp.body.steps {
			b.eachTemplate(f)
		}
		eachOutputTemplate(sp.body.output, f)
	}
}

// eachStep calls f with sp, its inner step and, at any depth, its body
// steps.
func (sp *stepPlan) eachStep(f func(*stepPlan)) {
	if sp == nil {
		return
	}
	f(sp)
	if sp.inner != nil {
		f(sp.inner)
	}
	if sp.body != nil {
		for _, b := range sp.body.steps {
			b.eachStep(f)
		}
	}
}

// eachOutputTemplate calls f with every value template of output
// properties, nested ones included.
func eachOutputTemplate(ops []*outputPlan, f func(*tmpl)) {
	for _, op := range ops {
		if op.value != nil {
			f(op.value)
		}
		eachOutputTemplate(op.props, f)
	}
}

func (v *valuePlan) eachTemplate(f func(*tmpl)) {
	if v == nil {
		return
	}
	if v.t != nil {
		f(v.t)
	}
	for _, x := range v.fields {
		x.eachTemplate(f)
	}
	for _, x := range v.items {
		x.eachTemplate(f)
	}
}

func (t *tmpl) isEntryChain() bool {
	if t == nil {
		return true
	}
	return t.chain != nil && (t.chain[0] != "steps" || len(t.chain) >= 3)
}

func prepareStep(s *ir.Step, funcs template.FuncMap) (*stepPlan, error) {
	sp := &stepPlan{
		step:       s,
		index:      s.Index,
		ndeps:      len(s.Deps),
		dependents: s.Dependents,
		id:         s.ID,
		kind:       s.Type,
		timeout:    s.Timeout.D(),
		action:     s.OnError.Action,
		maxRetries: s.OnError.MaxRetries,
		retryDelay: s.OnError.RetryDelay.D(),
		tuning:     newRetryTuning(s.OnError),
	}
	if sp.action != ir.ActionRetry {
		// As in ToolHive, maxRetries has no effect under another action.
		sp.maxRetries = 0
	}
	var err error
	parse := func(t *ir.Template) *tmpl {
		if t == nil || err != nil {
			return nil
		}
		var p *tmpl
		p, err = parseTemplate(t, funcs)
		return p
	}
	sp.cond = parse(s.Condition)
	switch sp.kind {
	case ir.StepTool:
		if s.Tool == nil {
			return nil, fmt.Errorf("tool step %q (%s) names no tool", s.ID, s.Pos)
		}
		if !s.Tool.Resolved() {
			return nil, fmt.Errorf("tool step %q (%s): tool %q is not resolved to backend.tool; vmcp run resolves it against the backends' tools when it starts", s.ID, s.Tool.Pos, s.Tool.Ref)
		}
		if sp.args, err = prepareValue(s.Arguments, funcs, 0); err != nil {
			return nil, fmt.Errorf("step %q: %w", s.ID, err)
		}
	case ir.StepElicitation:
		sp.message = parse(s.Message)
		answer, aerr := compileAnswerSchema(s)
		if aerr != nil {
			return nil, aerr
		}
		sp.answer = answer
	case ir.StepWorkflow:
		if s.Workflow == nil || s.Workflow.Name == "" {
			return nil, fmt.Errorf("workflow step %q (%s) names no workflow", s.ID, s.Pos)
		}
		if sp.args, err = prepareValue(s.Arguments, funcs, 0); err != nil {
			return nil, fmt.Errorf("step %q: %w", s.ID, err)
		}
	case ir.StepForEach:
		fe := s.ForEach
		if fe == nil || (fe.Step == nil) == (len(fe.Steps) == 0) || (fe.Collection == nil && fe.Items == nil) {
			return nil, fmt.Errorf("forEach step %q (%s) needs a collection and exactly one of an inner step and body steps", s.ID, s.Pos)
		}
		sp.collection = parse(fe.Collection)
		if err == nil && fe.Items != nil {
			sp.items, err = prepareValue(fe.Items, funcs, 0)
		}
		if err == nil && len(fe.Steps) > 0 {
			if sp.body, err = prepareBody(fe, funcs); err != nil {
				return nil, fmt.Errorf("forEach step %q: %w", s.ID, err)
			}
		}
		if err == nil && fe.Step != nil {
			inner, ierr := prepareStep(fe.Step, funcs)
			if ierr != nil {
				return nil, ierr
			}
			if inner.kind != ir.StepTool && inner.kind != ir.StepWorkflow {
				return nil, fmt.Errorf("forEach step %q (%s): the inner step must be a tool or workflow step", s.ID, s.Pos)
			}
			if fe.Step.Timeout <= 0 {
				inner.timeout = 0 // bounded by the forEach step's timeout only
			}
			sp.inner = inner
			// Only a chain that is exactly .forEach yields the map
			// itself; without one, workers may reuse it (runForEach).
			sp.sharedForEach = true
			inner.eachTemplate(func(t *tmpl) {
				if len(t.chain) == 1 && t.chain[0] == "forEach" {
					sp.sharedForEach = false
				}
			})
		}
	default:
		return nil, fmt.Errorf("step %q (%s) has unknown type %q", s.ID, s.Pos, s.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("step %q: %w", s.ID, err)
	}
	return sp, nil
}

func prepareValue(v *ir.Value, funcs template.FuncMap, d int) (*valuePlan, error) {
	if v == nil {
		return nil, nil
	}
	if d > maxArgumentDepth {
		return nil, fmt.Errorf("arguments are nested deeper than %d levels", maxArgumentDepth)
	}
	vp := &valuePlan{kind: v.Kind, static: true}
	switch v.Kind {
	case ir.KindLiteral, "":
		vp.kind = ir.KindLiteral
		vp.literal = v.Literal
	case ir.KindTemplate:
		if v.Template == nil {
			return nil, fmt.Errorf("template value without a template")
		}
		t, err := parseTemplate(v.Template, funcs)
		if err != nil {
			return nil, err
		}
		vp.t = t
		vp.static = false
	case ir.KindObject:
		for _, f := range v.Fields {
			fv, err := prepareValue(f.Value, funcs, d+1)
			if err != nil {
				return nil, err
			}
			vp.keys = append(vp.keys, f.Key)
			vp.fields = append(vp.fields, fv)
			if fv != nil && fv.t != nil && fv.t.isParam() {
				vp.paramFields = true
			}
			if fv != nil && !fv.static {
				vp.static = false
			}
		}
	case ir.KindArray:
		for _, it := range v.Items {
			iv, err := prepareValue(it, funcs, d+1)
			if err != nil {
				return nil, err
			}
			vp.items = append(vp.items, iv)
			if iv != nil && !iv.static {
				vp.static = false
			}
		}
	default:
		return nil, fmt.Errorf("unknown value kind %q", v.Kind)
	}
	return vp, nil
}

func prepareOutput(props []*ir.OutputProperty, funcs template.FuncMap) ([]*outputPlan, error) {
	var out []*outputPlan
	for _, p := range props {
		op := &outputPlan{prop: p}
		if p.Value != nil {
			t, err := parseTemplate(p.Value, funcs)
			if err != nil {
				return nil, fmt.Errorf("property %q: %w", p.Name, err)
			}
			op.value = t
		}
		if len(p.Properties) > 0 {
			sub, err := prepareOutput(p.Properties, funcs)
			if err != nil {
				return nil, err
			}
			op.props = sub
		}
		if len(p.Required) > 0 {
			op.required = make(map[string]bool, len(p.Required))
			for _, r := range p.Required {
				op.required[r] = true
			}
		}
		out = append(out, op)
	}
	return out, nil
}
