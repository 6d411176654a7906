package temporalrun

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/runtime/semantictest"
)

// kinds records which steps ran as local activities and which as
// activities, from the SDK test environment's listeners.
type kinds struct {
	mu            sync.Mutex
	local, remote []string
}

func (k *kinds) listen(env *testsuite.TestWorkflowEnvironment) {
	env.SetOnLocalActivityStartedListener(func(_ *activity.Info, _ context.Context, args []any) {
		if len(args) == 1 {
			if in, ok := args[0].(CallInput); ok {
				k.mu.Lock()
				k.local = append(k.local, in.Call.StepID)
				k.mu.Unlock()
			}
		}
	})
	env.SetOnActivityStartedListener(func(_ *activity.Info, _ context.Context, args converter.EncodedValues) {
		var in CallInput
		if args.Get(&in) == nil {
			k.mu.Lock()
			k.remote = append(k.remote, in.Call.StepID)
			k.mu.Unlock()
		}
	})
}

func (k *kinds) sorted() (local, remote []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	local, remote = slices.Clone(k.local), slices.Clone(k.remote)
	slices.Sort(local)
	slices.Sort(remote)
	return local, remote
}

// runQuick runs workflow in the test environment on a worker with local
// options lo and returns the run and which steps ran how.
func runQuick(t *testing.T, plan *ir.Plan, workflow string, backend runtime.Backend, lo LocalOptions) (*runtime.Run, *kinds) {
	t.Helper()
	k := &kinds{}
	run := runInTestEnvWith(t, plan, workflow, nil, backend, lo, func(env *testsuite.TestWorkflowEnvironment, _ *Input) { k.listen(env) })
	return run, k
}

const quickPlan = `
compositeTools:
  - name: mixed
    description: quick steps, one that may not run twice, one of an unmeasured tool
    steps:
      - {id: a, tool: b.echo, idempotent: true, arguments: {text: "a"}}
      - {id: b, tool: b.echo, idempotent: true, dependsOn: [a], arguments: {text: "{{.steps.a.output.text}}b"}}
      - {id: c, tool: b.echo, dependsOn: [a], arguments: {text: "c"}}
      - {id: d, tool: b.other, idempotent: true, dependsOn: [b, c], arguments: {text: "{{.steps.b.output.text}}d"}}
`

func echoBackend() *fakeBackend {
	echo := func(_ context.Context, args map[string]any) (*runtime.ToolResult, error) {
		return structured(map[string]any{"text": args["text"]}), nil
	}
	return &fakeBackend{tools: map[string]func(context.Context, map[string]any) (*runtime.ToolResult, error){"b.echo": echo, "b.other": echo}}
}

func TestQuickStepsThatMayRunTwiceRunAsLocalActivities(t *testing.T) {
	plan := compile(t, quickPlan)
	run, k := runQuick(t, plan, "mixed", echoBackend(), LocalOptions{Tools: []string{"b.echo"}})
	if run.Status != runtime.RunCompleted || run.Output.(map[string]any)["text"] != "abd" {
		t.Fatalf("run = %s %v, output %v; want completed with abd", run.Status, run.Error, run.Output)
	}
	local, remote := k.sorted()
	// c may not run twice; d's tool is neither known nor measured quick.
	if want := []string{"a", "b"}; !slices.Equal(local, want) {
		t.Errorf("local activities ran %v; want %v", local, want)
	}
	if want := []string{"c", "d"}; !slices.Equal(remote, want) {
		t.Errorf("activities ran %v; want %v", remote, want)
	}
}

func TestLocalActivitiesOffRunsEveryStepAsAnActivity(t *testing.T) {
	plan := compile(t, quickPlan)
	_, k := runQuick(t, plan, "mixed", echoBackend(), LocalOptions{Tools: []string{"b.echo"}, Off: true})
	if local, remote := k.sorted(); len(local) != 0 || len(remote) != 4 {
		t.Errorf("local activities %v, activities %v; want none and all four", local, remote)
	}
}

func TestCallTimesMakeAToolQuickAndSlow(t *testing.T) {
	c := newCallTimes(LocalOptions{Tools: []string{"b.known"}})
	if c.quick("b.echo") {
		t.Fatal("an unmeasured tool is quick; want not until a call is timed")
	}
	if !c.quick("b.known") {
		t.Fatal("a tool listed in LocalOptions.Tools is not quick")
	}
	c.note("b.echo", 50*time.Microsecond)
	if !c.quick("b.echo") {
		t.Fatal("a tool whose call took 50µs is not quick")
	}
	// A tool that turns slow stops being quick within a few calls: each
	// counts for at most callCap.
	n := 0
	for c.quick("b.echo") {
		c.note("b.echo", time.Minute)
		n++
	}
	if n > 4 {
		t.Errorf("%d slow calls before the tool stopped being quick; want at most 4", n)
	}
	if got := c.quickTools(compile(t, quickPlan)); !slices.Equal(got, []string(nil)) {
		t.Errorf("quickTools = %v; want none (b.echo turned slow, b.other unmeasured)", got)
	}
	if (&callTimes{opts: LocalOptions{Off: true}, known: map[string]bool{"b.known": true}}).quick("b.known") {
		t.Error("with Off, a known tool is quick")
	}
}

// TestSemanticsOnTemporalLocalActivities runs the shared semantics suite
// with every tool idempotent (idempotentHint) and taken for quick by the
// workers, so every tool step runs as a local activity: the semantics are
// the same as with activities.
func TestSemanticsOnTemporalLocalActivities(t *testing.T) {
	var locals sync.Map
	semantictest.Run(t, func(t *testing.T, plan *ir.Plan, opts runtime.Options, workflow string, params map[string]any, ro runtime.RunOptions) (*runtime.Run, error) {
		opts.Schemas = idempotentTools{opts.Schemas}
		opts.Backend = countLocal{opts.Backend, &locals, t.Name()}
		return temporalExecutorWith(t, plan, opts, workflow, params, ro, LocalOptions{Tools: planTools(plan)})
	})
	n := 0
	locals.Range(func(any, any) bool { n++; return true })
	t.Logf("%d cases made calls from local activities", n)
	if n < 20 {
		t.Errorf("%d cases made a call from a local activity; want most of the suite's", n)
	}
}

// idempotentTools says every tool is idempotent; a tool it has no schema
// for gets an open one.
type idempotentTools struct{ runtime.SchemaSource }

func (s idempotentTools) InputSchema(backend, tool string) (map[string]any, bool) {
	if s.SchemaSource != nil {
		if schema, ok := s.SchemaSource.InputSchema(backend, tool); ok {
			return schema, true
		}
	}
	return map[string]any{"type": "object"}, true
}

func (idempotentTools) ToolHints(string, string) (runtime.ToolHints, bool) {
	return runtime.ToolHints{Idempotent: true}, true
}

// countLocal notes the cases whose calls came from a local activity.
type countLocal struct {
	runtime.Backend
	cases *sync.Map
	name  string
}

func (b countLocal) CallTool(ctx context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	if activity.IsActivity(ctx) && activity.GetInfo(ctx).IsLocalActivity {
		b.cases.Store(b.name, true)
	}
	return b.Backend.CallTool(ctx, call)
}

// planTools are the backend.tool names plan's steps call.
func planTools(plan *ir.Plan) []string {
	var out []string
	for _, wf := range plan.Workflows {
		visit := func(s *ir.Step) {
			if s.Tool != nil {
				out = append(out, s.Tool.Backend+"."+s.Tool.Name)
			}
		}
		ir.EachStep(wf.Steps, visit)
		ir.EachStep(wf.Finally, visit)
	}
	return out
}

// TestBudgetFirst: a local attempt's end is its budget only when the
// activity's deadline comes before the step's; at or after it (callLocal
// gave the budget the step's remaining time) it is the step's timeout,
// which the semantic suite's "step timeout" case once saw reported as a
// budget when the two deadlines fell within a millisecond.
func TestBudgetFirst(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		name        string
		local, step time.Duration // from now; step 0: no step deadline
		noLocal     bool
		want        bool
	}{
		{name: "the budget ends first", local: 10 * time.Millisecond, step: time.Second, want: true},
		{name: "the same instant is the step's", local: 20 * time.Millisecond, step: 20 * time.Millisecond, want: false},
		{name: "the step ends first", local: 21 * time.Millisecond, step: 20 * time.Millisecond, want: false},
		{name: "no step deadline", local: 10 * time.Millisecond, want: true},
		{name: "no activity deadline", noLocal: true, step: time.Second, want: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			if !c.noLocal {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, now.Add(c.local))
				defer cancel()
			}
			var step time.Time
			if c.step != 0 {
				step = now.Add(c.step)
			}
			if got := budgetFirst(ctx, step); got != c.want {
				t.Errorf("budgetFirst = %v; want %v", got, c.want)
			}
		})
	}
}
