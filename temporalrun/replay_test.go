package temporalrun

// Determinism is checked against recorded histories: testdata/histories
// holds real histories of vmcp runs on a Temporal dev server (tool steps
// with retries and their jitter, an elicitation answered by an update, a
// child workflow, a cancel; quick steps as local activities, one retried,
// one past its budget going on as an activity), and
// TestReplayRecordedHistories replays each through the current Workflow
// with worker.NewWorkflowReplayer, with the histories recorded before
// local activities existed (testdata/histories/before-local-activities,
// kept as they were: runs in flight at an upgrade must finish). A change
// that makes the driver decide differently on the same history (another
// command order, a timer more or less, a jitter not drawn through
// SideEffect) fails it; such a change needs Temporal's workflow versioning
// (workflow.GetVersion) so runs in flight keep their path.
//
// go test ./temporalrun -run TestReplayRecordedHistories -update
// records them again (it starts a dev server: see internal/testenv).

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
)

var update = flag.Bool("update", false, "record testdata/histories again on a Temporal dev server")

const historyDir = "testdata/histories"

// recorded are the runs whose histories are kept.
var recorded = []struct {
	name, src, workflow string
	params              map[string]any
	// during acts on the run while it runs (answers, cancels).
	during func(t *testing.T, c client.Client, id string)
	// local is the worker's local-activity options.
	local LocalOptions
}{
	{
		name: "tools_retry",
		src: `
compositeTools:
  - name: flaky
    description: tool steps, a retried failure, a parallel pair
    parameters: {who: {type: string}}
    steps:
      - id: a
        tool: b.flaky
        onError: {action: retry, maxRetries: 3, retryDelay: 200ms}
      - id: b
        tool: b.echo
        dependsOn: [a]
        arguments: {text: "{{.params.who}}"}
      - id: c
        tool: b.echo
        dependsOn: [a]
        arguments: {text: "c"}
`,
		workflow: "flaky", params: map[string]any{"who": "ada"},
	},
	{
		name: "elicitation",
		src: `
compositeTools:
  - name: ask
    description: an answered question
    steps:
      - id: q
        type: elicitation
        message: "ok?"
        schema: {type: object, properties: {ok: {type: boolean}}}
      - id: after
        tool: b.echo
        dependsOn: [q]
        arguments: {text: "{{.steps.q.output.action}}"}
`,
		workflow: "ask",
		during: func(t *testing.T, c client.Client, id string) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for ctx.Err() == nil { // the question opens with the first workflow task
				v, err := c.QueryWorkflow(ctx, id, "", QueryRun)
				var snap Snapshot
				if err == nil && v.Get(&snap) == nil && len(snap.Questions) == 1 {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			_, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: UpdateAnswer, WaitForStage: client.WorkflowUpdateStageCompleted,
				Args: []any{Answer{Seq: 1, Result: runtime.ElicitResult{Action: runtime.ElicitAccept, Content: map[string]any{"ok": true}}}}})
			if err != nil {
				t.Errorf("answer: %v", err)
			}
		},
	},
	{
		name: "child_cancel",
		src: `
compositeTools:
  - name: inner
    description: the child
    steps:
      - id: x
        tool: b.echo
        arguments: {text: "inner"}
  - name: outer
    description: a child workflow, then a call that is cancelled, then finally
    steps:
      - id: sub
        type: workflow
        workflow: inner
      - id: wait
        tool: b.block
        dependsOn: [sub]
    finally:
      - id: cleanup
        tool: b.echo
        arguments: {text: "{{.workflow.status}}"}
`,
		workflow: "outer",
		during: func(t *testing.T, c client.Client, id string) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for blocked.Load() == 0 && ctx.Err() == nil {
				time.Sleep(20 * time.Millisecond)
			}
			if err := c.CancelWorkflow(ctx, id, ""); err != nil {
				t.Errorf("cancel: %v", err)
			}
		},
	},
	{
		name: "local_activities",
		src: `
compositeTools:
  - name: quick
    description: quick steps that may run twice (local activities), one retried, one that turns slow, one that may not run twice
    steps:
      - id: a
        tool: b.echo
        idempotent: true
        arguments: {text: "a"}
      - id: b
        tool: b.flaky
        idempotent: true
        dependsOn: [a]
        onError: {action: retry, maxRetries: 3, retryDelay: 50ms}
      - id: c
        tool: b.echo
        dependsOn: [a]
        arguments: {text: "c"}
      - id: d
        tool: b.slowonce
        idempotent: true
        dependsOn: [b, c]
`,
		workflow: "quick",
		local:    LocalOptions{Tools: []string{"b.echo", "b.flaky", "b.slowonce"}},
	},
}

// beforeLocalActivities holds histories recorded before quick steps ran as
// local activities (before workflow.GetVersion(localActivitiesChange)):
// runs in flight then must finish on the old path. -update does not
// touch them.
const beforeLocalActivities = "testdata/histories/before-local-activities"

func TestReplayRecordedHistories(t *testing.T) {
	if *update {
		recordHistories(t)
	}
	files, _ := filepath.Glob(filepath.Join(historyDir, "*.json"))
	sort.Strings(files)
	if len(files) != len(recorded) {
		t.Fatalf("%d recorded histories in %s; want %d (run this test with -update)", len(files), historyDir, len(recorded))
	}
	old, _ := filepath.Glob(filepath.Join(beforeLocalActivities, "*.json"))
	sort.Strings(old)
	if len(old) != 3 {
		t.Fatalf("%d histories in %s; want the 3 recorded before local activities", len(old), beforeLocalActivities)
	}
	for _, f := range append(files, old...) {
		name, _ := filepath.Rel(historyDir, f)
		t.Run(filepath.ToSlash(name), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replaying %s: %v", f, err)
			}
		})
	}
}

// TestReplayCatchesADifferentPath shows the replayer is a real check: a
// workflow function that decides differently (here: calls nothing) fails
// on a recorded history.
func TestReplayCatchesADifferentPath(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(func(ctx workflow.Context, in Input) (*runtime.Run, error) {
		return &runtime.Run{ID: in.RunID, Status: runtime.RunCompleted}, nil
	}, workflow.RegisterOptions{Name: WorkflowName})
	err := r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join(historyDir, "tools_retry.json"))
	if err == nil {
		t.Fatal("replaying tools_retry.json with a workflow that calls nothing succeeded; want a non-determinism error")
	}
}

// recordHistories runs every recorded case on a dev server and writes its
// history.
func recordHistories(t *testing.T) {
	ts := testenv.StartTemporal(t, 17470, 17489)
	c, err := client.Dial(client.Options{HostPort: ts.Address, Namespace: ts.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := os.MkdirAll(historyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, rc := range recorded {
		plan := compile(t, rc.src)
		queue := "record-" + rc.name
		w := worker.New(c, queue, worker.Options{})
		Register(w, replayBackend(), rc.local)
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		id := "replay-" + rc.name
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		wr, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, WorkflowName,
			Input{Plan: plan, Workflow: rc.workflow, Params: rc.params, RunID: id, Elicit: true, HeartbeatTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if rc.during != nil {
			rc.during(t, c, id)
		}
		var run runtime.Run
		if err := wr.Get(ctx, &run); err != nil {
			t.Fatalf("%s: %v", rc.name, err)
		}
		cancel()
		w.Stop()
		out, err := exec.Command(ts.Bin, "workflow", "show", "--workflow-id", id, "--address", ts.Address, "--output", "json").Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("temporal workflow show: %v\n%s", err, ee.Stderr)
			}
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(historyDir, rc.name+".json"), out, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %s: run %s", rc.name, run.Status)
	}
}

// blocked counts calls of b.block in progress.
var blocked atomic.Int32

// replayBackend is the recorded runs' backend: echo, a tool that fails
// twice, one that is slow once, and one that blocks until cancelled.
func replayBackend() runtime.Backend {
	var flaky, slow atomic.Int32
	return &fakeBackend{tools: map[string]func(context.Context, map[string]any) (*runtime.ToolResult, error){
		"b.echo": func(_ context.Context, args map[string]any) (*runtime.ToolResult, error) {
			return structured(map[string]any{"text": args["text"]}), nil
		},
		"b.flaky": func(context.Context, map[string]any) (*runtime.ToolResult, error) {
			if flaky.Add(1) < 3 {
				return nil, errors.New("connection reset")
			}
			return text("ok"), nil
		},
		"b.slowonce": func(ctx context.Context, _ map[string]any) (*runtime.ToolResult, error) {
			if slow.Add(1) == 1 { // past localBudget: the call goes on as an activity
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(localBudget + time.Second):
				}
			}
			return text("done"), nil
		},
		"b.block": func(ctx context.Context, _ map[string]any) (*runtime.ToolResult, error) {
			blocked.Add(1)
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}}
}
