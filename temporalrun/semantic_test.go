package temporalrun

// The runtime's shared semantics suite (runtime/semantictest) on the
// Temporal driver, in the SDK's test environment: every case runs as a
// Temporal workflow, its backend calls as activities, its retry waits and
// timeouts on Temporal timers (skipped in test time), its questions
// relayed as updates, as vmcp run's follower relays them.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/runtime/semantictest"
)

// TestSemanticsOnTemporal runs every case of the runtime's semantics suite
// on the Temporal driver: the semantics cannot drift between executors.
// Values that cross Temporal's payloads come back as JSON numbers
// (float64); the suite compares numbers by value, as a client sees them.
func TestSemanticsOnTemporal(t *testing.T) {
	semantictest.Run(t, temporalExecutor)
}

// temporalExecutor is the Temporal driver as a semantictest.Executor.
func temporalExecutor(t *testing.T, plan *ir.Plan, opts runtime.Options, workflow string, params map[string]any, ro runtime.RunOptions) (*runtime.Run, error) {
	return temporalExecutorWith(t, plan, opts, workflow, params, ro, LocalOptions{})
}

// temporalExecutorWith is temporalExecutor on workers with local options lo.
func temporalExecutorWith(t *testing.T, plan *ir.Plan, opts runtime.Options, workflow string, params map[string]any, ro runtime.RunOptions, lo LocalOptions) (*runtime.Run, error) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	// The test environment reports a cancelled activity at once, while the
	// call itself learns of the cancel with its next heartbeat (as on a
	// real server, where WaitForCancellation waits for that). Wait for the
	// calls to end before the case checks what the backend saw.
	calls := &inFlight{Backend: opts.Backend}
	defer calls.wait(t)
	Register(env, calls, lo)
	in := Input{Plan: plan, Tools: toolsOf(plan, opts.Schemas), Workflow: workflow, Params: params, RunID: "run-1",
		Elicit: ro.Elicitor != nil, HeartbeatTimeout: 150 * time.Millisecond}
	if ro.Elicitor != nil {
		relayQuestions(t, env, ro.Elicitor)
	}
	env.ExecuteWorkflow(WorkflowName, in)
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		if ie := inputError(err); ie != nil {
			return nil, ie
		}
		return nil, err
	}
	var run runtime.Run
	if err := env.GetWorkflowResult(&run); err != nil {
		return nil, err
	}
	return &run, nil
}

// inFlight is a backend that knows how many calls are in progress.
type inFlight struct {
	runtime.Backend
	mu sync.Mutex
	n  int
}

func (b *inFlight) CallTool(ctx context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	b.add(1)
	defer b.add(-1)
	return b.Backend.CallTool(ctx, call)
}

func (b *inFlight) add(d int) {
	b.mu.Lock()
	b.n += d
	b.mu.Unlock()
}

// wait waits (at most 10s) until no call is in progress.
func (b *inFlight) wait(t *testing.T) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		n := b.n
		b.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d backend calls still in progress 10s after the run ended (a cancel did not reach them)", n)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// toolsOf is the catalog of plan's tools as schemas knows them (schemas,
// and annotations when it has them), as vmcp run puts it in the input.
func toolsOf(plan *ir.Plan, schemas runtime.SchemaSource) *catalog.Catalog {
	if schemas == nil {
		return nil
	}
	c := catalog.New()
	for _, wf := range plan.Workflows {
		visit := func(s *ir.Step) {
			if s.Tool == nil {
				return
			}
			if _, dup := c.Tool(s.Tool.Backend, s.Tool.Name); dup {
				return
			}
			schema, ok := schemas.InputSchema(s.Tool.Backend, s.Tool.Name)
			if !ok {
				return
			}
			tool := &catalog.Tool{Name: s.Tool.Name, InputSchema: schema}
			if h, ok := schemas.(runtime.ToolHintSource); ok {
				if hints, ok := h.ToolHints(s.Tool.Backend, s.Tool.Name); ok {
					tool.Annotations = &ir.Annotations{ReadOnlyHint: &hints.ReadOnly, IdempotentHint: &hints.Idempotent}
				}
			}
			b := c.Backends[s.Tool.Backend]
			if b == nil {
				b = &catalog.Backend{}
				c.Backends[s.Tool.Backend] = b
			}
			b.Tools = append(b.Tools, tool)
		}
		ir.EachStep(wf.Steps, visit)
		ir.EachStep(wf.Finally, visit)
	}
	return c
}

// relayQuestions does in the test environment what vmcp run's follower
// does: it reads the open questions, asks el, and sends each answer back
// as an update. It looks every second of workflow time (time skips to the
// next timer, so this costs nothing); an elicitor that does not answer
// within 100ms of real time is left alone, and the question's own timer
// decides, as when a client never answers.
func relayQuestions(t *testing.T, env *testsuite.TestWorkflowEnvironment, el runtime.Elicitor) {
	asked := map[int]bool{}
	var look func()
	look = func() {
		defer env.RegisterDelayedCallback(look, time.Second)
		v, err := env.QueryWorkflow(QueryRun)
		if err != nil {
			return
		}
		var snap Snapshot
		if v.Get(&snap) != nil {
			return
		}
		for _, q := range snap.Questions {
			if asked[q.Seq] {
				continue
			}
			asked[q.Seq] = true
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			res, err := el.Elicit(ctx, runtime.ElicitRequest{RunID: "run-1", StepID: q.StepID, Message: q.Message, Schema: q.Schema})
			timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
			cancel()
			if timedOut {
				continue
			}
			ans := Answer{Seq: q.Seq, Result: res}
			if err != nil {
				ans = Answer{Seq: q.Seq, Err: err.Error()}
			}
			env.UpdateWorkflow(UpdateAnswer, "", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnComplete: func(any, error) {},
				OnReject: func(err error) { t.Errorf("answer to question %d refused: %v", q.Seq, err) },
			}, ans)
		}
	}
	env.RegisterDelayedCallback(look, time.Millisecond)
}
