package temporalrun

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/vmcp-dev/vmcp/runtime"
)

func TestWorkflowSettlesSkippedStepsAndShapesTheResult(t *testing.T) {
	plan := compile(t, `
compositeTools:
  - name: skipper
    description: every step is skipped
    parameters: {go: {type: boolean, default: false}}
    steps:
      - id: a
        tool: b.t
        condition: "{{.params.go}}"
        defaultResults: {n: 1}
      - id: c
        tool: b.t
        dependsOn: [a]
        condition: "{{.params.go}}"
        defaultResults: {n: 2}
`)
	run := runInTestEnv(t, plan, "skipper", nil, &fakeBackend{})
	if run.Status != runtime.RunCompleted {
		t.Fatalf("status = %s (error %v); want completed", run.Status, run.Error)
	}
	for _, st := range run.Steps {
		if st.Status != runtime.StepSkipped {
			t.Errorf("step %s status = %s; want skipped", st.ID, st.Status)
		}
	}
	out, _ := run.Output.(map[string]any)
	if out["n"] != float64(2) {
		t.Errorf("output = %v; want the sink's defaultResults {n: 2}", run.Output)
	}
}

func TestWorkflowToolStepsPassOutputsAlong(t *testing.T) {
	plan := compile(t, `
compositeTools:
  - name: chain
    description: a then b, b reads a
    parameters: {who: {type: string}}
    steps:
      - id: a
        tool: b.greet
        arguments: {name: "{{.params.who}}"}
      - id: b
        tool: b.shout
        dependsOn: [a]
        arguments: {text: "{{.steps.a.output.greeting}}", n: 2}
`)
	fb := &fakeBackend{tools: map[string]func(context.Context, map[string]any) (*runtime.ToolResult, error){
		"b.greet": func(_ context.Context, args map[string]any) (*runtime.ToolResult, error) {
			return structured(map[string]any{"greeting": "hello " + args["name"].(string)}), nil
		},
		"b.shout": func(_ context.Context, args map[string]any) (*runtime.ToolResult, error) {
			return text(strings.ToUpper(args["text"].(string))), nil
		},
	}}
	run := runInTestEnv(t, plan, "chain", map[string]any{"who": "ada"}, fb)
	if run.Status != runtime.RunCompleted {
		t.Fatalf("status = %s (error %v); want completed", run.Status, run.Error)
	}
	if got := fb.callsTo("b"); len(got) != 1 || got[0].Arguments["text"] != "hello ada" || got[0].RunID != "run-1" {
		t.Fatalf("calls of b = %+v; want one with text \"hello ada\" for run-1", got)
	}
	out, _ := run.Output.(map[string]any)
	if out["text"] != "HELLO ADA" {
		t.Errorf("output = %v; want the content map {text: HELLO ADA}", run.Output)
	}
	for _, st := range run.Steps {
		if st.Status != runtime.StepCompleted || st.Attempts != 1 || st.StartedAt.IsZero() || st.EndedAt.Before(st.StartedAt) {
			t.Errorf("step %+v; want completed once with times", st)
		}
	}
}

func TestWorkflowRetriesWithTimersThenFailsAsLocally(t *testing.T) {
	plan := compile(t, `
compositeTools:
  - name: flaky
    description: retries a tool that fails twice
    steps:
      - id: a
        tool: b.flaky
        onError: {action: retry, maxRetries: 3, retryDelay: 2s}
      - id: never
        tool: b.fail
        dependsOn: [a]
        onError: {action: retry, maxRetries: 1, retryDelay: 1s, retryOn: [error]}
`)
	var n int
	fb := &fakeBackend{tools: map[string]func(context.Context, map[string]any) (*runtime.ToolResult, error){
		"b.flaky": func(context.Context, map[string]any) (*runtime.ToolResult, error) {
			n++
			if n < 3 {
				return nil, errors.New("connection reset")
			}
			return structured(map[string]any{"ok": true}), nil
		},
		"b.fail": func(context.Context, map[string]any) (*runtime.ToolResult, error) {
			return &runtime.ToolResult{IsError: true, Content: []runtime.Content{{Type: "text", Text: "no such thing"}}}, nil
		},
	}}
	run := runInTestEnv(t, plan, "flaky", nil, fb)
	if run.Status != runtime.RunFailed {
		t.Fatalf("status = %s; want failed", run.Status)
	}
	if a := run.Steps[0]; a.Status != runtime.StepCompleted || a.Attempts != 3 {
		t.Errorf("step a = %+v; want completed on attempt 3", a)
	}
	// Two waits of 2s*1.5^k +/-50%: at least 1s + 1.5s apart.
	if gap := run.Steps[0].EndedAt.Sub(run.Steps[0].StartedAt); gap < 2500*time.Millisecond {
		t.Errorf("step a took %s of workflow time; want the retry delays (>= 2.5s)", gap)
	}
	want := `b.fail returned an error: no such thing (not retried: the failure kind is toolError, and retryOn is [error])`
	if st := run.Steps[1]; st.Status != runtime.StepFailed || st.Error != want || st.Attempts != 1 {
		t.Errorf("step never = %+v; want failed once with %q", st, want)
	}
	if run.Error == nil || run.Error.Step != "never" {
		t.Errorf("run error = %v; want step never's", run.Error)
	}
}

func TestWorkflowAttemptTimeoutAndStepTimeout(t *testing.T) {
	plan := compile(t, `
compositeTools:
  - name: slow
    description: a slow tool
    steps:
      - id: a
        tool: b.slow
        timeout: 1s
`)
	fb := &fakeBackend{tools: map[string]func(context.Context, map[string]any) (*runtime.ToolResult, error){
		"b.slow": func(ctx context.Context, _ map[string]any) (*runtime.ToolResult, error) {
			<-ctx.Done() // the activity's deadline ends the call
			return nil, ctx.Err()
		},
	}}
	run := runInTestEnv(t, plan, "slow", nil, fb)
	if st := run.Steps[0]; st.Status != runtime.StepFailed || st.Error != "timed out after 1s" {
		t.Fatalf("step a = %+v; want failed: timed out after 1s", st)
	}
}

func TestWorkflowElicitationAnsweredByUpdate(t *testing.T) {
	plan := compile(t, `
compositeTools:
  - name: ask
    description: asks a question
    steps:
      - id: q
        type: elicitation
        message: "Deploy {{.workflow.id}}?"
        schema: {type: object, properties: {ok: {type: boolean}}}
`)
	var asked []Question
	run := runInTestEnv(t, plan, "ask", nil, &fakeBackend{}, func(env *testsuite.TestWorkflowEnvironment, in *Input) {
		in.Elicit = true
		env.RegisterDelayedCallback(func() {
			v, err := env.QueryWorkflow(QueryRun)
			if err != nil {
				t.Errorf("query: %v", err)
				return
			}
			var snap Snapshot
			if err := v.Get(&snap); err != nil {
				t.Errorf("query answer: %v", err)
			}
			asked = snap.Questions
			// A wrong sequence number is refused by the validator.
			env.UpdateWorkflow(UpdateAnswer, "bad", &testsuite.TestUpdateCallback{
				OnAccept: func() { t.Error("an answer to question 7 was accepted") },
				OnReject: func(error) {}, OnComplete: func(any, error) {},
			}, Answer{Seq: 7})
			env.UpdateWorkflow(UpdateAnswer, "good", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("answer rejected: %v", err) }, OnComplete: func(any, error) {},
			}, Answer{Seq: 1, Result: runtime.ElicitResult{Action: runtime.ElicitAccept, Content: map[string]any{"ok": true}}})
		}, time.Second)
	})
	if len(asked) != 1 || asked[0].Message != "Deploy run-1?" || asked[0].StepID != "q" {
		t.Fatalf("questions while waiting = %+v; want one for q, \"Deploy run-1?\"", asked)
	}
	out, _ := run.Output.(map[string]any)
	content, _ := out["content"].(map[string]any)
	if run.Status != runtime.RunCompleted || out["action"] != "accept" || content["ok"] != true {
		t.Fatalf("run %s output %v; want completed with the accepted answer", run.Status, run.Output)
	}
}

func TestWorkflowElicitationTimesOutOnItsTimer(t *testing.T) {
	plan := compile(t, `
compositeTools:
  - name: ask
    description: nobody answers
    steps:
      - id: q
        type: elicitation
        message: "anyone?"
        schema: {type: object, properties: {ok: {type: boolean}}}
        timeout: 30s
        onCancel: {action: continue}
`)
	run := runInTestEnv(t, plan, "ask", nil, &fakeBackend{}, func(_ *testsuite.TestWorkflowEnvironment, in *Input) { in.Elicit = true })
	out, _ := run.Output.(map[string]any)
	if run.Status != runtime.RunCompleted || out["action"] != "timeout" {
		t.Fatalf("run %s output %v; want completed with action timeout", run.Status, run.Output)
	}
	if d := run.Steps[0].EndedAt.Sub(run.Steps[0].StartedAt); d != 30*time.Second {
		t.Errorf("the question waited %s of workflow time; want its 30s timeout", d)
	}
}

func TestWorkflowCancelStopsTheCallAndRunsFinally(t *testing.T) {
	plan := compile(t, `
compositeTools:
  - name: long
    description: cancelled mid-call
    steps:
      - id: a
        tool: b.block
    finally:
      - id: cleanup
        tool: b.note
        arguments: {status: "{{.workflow.status}}"}
`)
	stopped := make(chan struct{})
	fb := &fakeBackend{tools: map[string]func(context.Context, map[string]any) (*runtime.ToolResult, error){
		"b.block": func(ctx context.Context, _ map[string]any) (*runtime.ToolResult, error) {
			<-ctx.Done()
			close(stopped)
			return nil, ctx.Err()
		},
		"b.note": func(context.Context, map[string]any) (*runtime.ToolResult, error) { return text("noted"), nil },
	}}
	run := runInTestEnv(t, plan, "long", nil, fb, func(env *testsuite.TestWorkflowEnvironment, in *Input) {
		in.HeartbeatTimeout = time.Second // the cancel reaches the call with the next heartbeat
		env.SetTestTimeout(30 * time.Second)
		env.RegisterDelayedCallback(env.CancelWorkflow, 100*time.Millisecond)
	})
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Error("the backend call's context did not end on cancel")
	}
	if run.Status != runtime.RunCancelled || run.Steps[0].Status != runtime.StepFailed || run.Steps[0].Error != "cancelled" {
		t.Fatalf("run %s, step a %+v; want cancelled with a failed: cancelled", run.Status, run.Steps[0])
	}
	if calls := fb.callsTo("cleanup"); len(calls) != 1 || calls[0].Arguments["status"] != "cancelled" {
		t.Errorf("finally calls = %+v; want one with status cancelled", calls)
	}
}

func TestWorkflowOutputOverThePayloadLimitFailsNamingTheStep(t *testing.T) {
	plan := compile(t, `
compositeTools:
  - name: big
    description: a tool that answers 3 MB
    steps:
      - id: dump
        tool: b.dump
`)
	fb := &fakeBackend{tools: map[string]func(context.Context, map[string]any) (*runtime.ToolResult, error){
		"b.dump": func(context.Context, map[string]any) (*runtime.ToolResult, error) {
			return text(strings.Repeat("x", 3<<20)), nil
		},
	}}
	run := runInTestEnv(t, plan, "big", nil, fb)
	st := run.Steps[0]
	if run.Status != runtime.RunFailed || st.Status != runtime.StepFailed {
		t.Fatalf("run %s, step %s; want both failed", run.Status, st.Status)
	}
	for _, want := range []string{`the output of step "dump" (b.dump) is 3145`, "over Temporal's payload limit of 2097152 bytes"} {
		if !strings.Contains(st.Error, want) {
			t.Errorf("step error %q; want it to contain %q", st.Error, want)
		}
	}
	if n := len(fb.callsTo("dump")); n != 1 {
		t.Errorf("the tool was called %d times; want once (the limit is not retried)", n)
	}
}
