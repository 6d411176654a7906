package mcpserver

// Rules of the Tasks extension's wire that its conformance scenarios check
// (e2e TestConformanceTasks runs them against `vmcp run`): server/discover
// without the 2025-11-25 tasks slot, the routing headers of requests that
// tasks serve, and questions asked at the same time.

import (
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
)

const twoQuestionsWorkflow = `
compositeTools:
  - name: two_questions
    description: Ask two questions at once
    steps:
      - id: first
        type: elicitation
        message: First?
        schema: {type: object, properties: {answer: {type: string}}, required: [answer]}
      - id: second
        type: elicitation
        message: Second?
        schema: {type: object, properties: {answer: {type: string}}, required: [answer]}
`

func TestTasksExtensionWireRules(t *testing.T) {
	plan, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(twoQuestionsWorkflow)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	eng, err := runtime.New(plan, runtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Runner: eng, Tasks: TaskOptions{Runs: eng}})
	if err != nil {
		t.Fatal(err)
	}
	url := serveHTTP(t, srv, 17390)
	c := &testenv.ExtTasks{URL: url}

	t.Run("server/discover has the extension, not the 2025-11-25 slot", func(t *testing.T) {
		caps, _ := c.Result(t, "server/discover", nil)["capabilities"].(map[string]any)
		if _, ok := caps["tasks"]; ok {
			t.Errorf("server/discover capabilities = %v; want no tasks slot (2025-11-25's, negotiated in initialize)", caps)
		}
		ext, _ := caps["extensions"].(map[string]any)
		if _, ok := ext[TasksExtension]; !ok {
			t.Errorf("server/discover capabilities = %v; want extensions[%s]", caps, TasksExtension)
		}
	})

	t.Run("questions asked at the same time wait together", func(t *testing.T) {
		id := c.StartTask(t, "two_questions", nil)
		var task map[string]any
		for range 100 { // the two steps start one after the other
			if task = c.Wait(t, id, "input_required"); len(inputKeys(task)) == 2 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		keys := inputKeys(task)
		if len(keys) != 2 {
			t.Fatalf("inputRequests = %v; want the two questions", task["inputRequests"])
		}
		answer := func(key, text string) {
			c.Result(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
				key: map[string]any{"action": "accept", "content": map[string]any{"answer": text}}}})
		}
		answer(keys[0], "one")
		// At once: the answered question is gone, the other still waits.
		if task := c.Result(t, "tasks/get", map[string]any{"taskId": id}); task["status"] != "input_required" || !slices.Equal(inputKeys(task), keys[1:]) {
			t.Fatalf("after answering %s: status %v, inputRequests %v; want input_required with only %s", keys[0], task["status"], inputKeys(task), keys[1])
		}
		answer(keys[1], "two")
		done := c.Wait(t, id, "completed")
		sc := done["result"].(map[string]any)["structuredContent"].(map[string]any)
		if len(sc) == 0 {
			t.Errorf("completed task result = %v; want the answers", done["result"])
		}
	})

	t.Run("routing headers", func(t *testing.T) {
		id := c.StartTask(t, "two_questions", nil)
		defer c.Result(t, "tasks/cancel", map[string]any{"taskId": id})
		// The task asks first, so that "untouched" below means the rejected
		// requests changed nothing, not that the run had not got there yet.
		c.Wait(t, id, "input_required")
		for _, tt := range []struct {
			name    string
			method  string
			params  map[string]any
			headers map[string]string
		}{
			{"tasks/get naming another task", "tasks/get", map[string]any{"taskId": id}, map[string]string{"Mcp-Name": "another-task"}},
			{"tasks/cancel without Mcp-Name", "tasks/cancel", map[string]any{"taskId": id}, map[string]string{"Mcp-Name": ""}},
			{"tasks/get sent as tasks/cancel", "tasks/get", map[string]any{"taskId": id}, map[string]string{"Mcp-Method": "tasks/cancel"}},
			{"tools/call sent as tasks/get", "tools/call", map[string]any{"name": "two_questions"}, map[string]string{"Mcp-Method": "tasks/get"}},
		} {
			bad := &testenv.ExtTasks{URL: url, Headers: tt.headers}
			if r := bad.Request(t, tt.method, tt.params); r.Error == nil || r.Error.Code != mcp.HEADER_MISMATCH {
				t.Errorf("%s = %+v; want error %d (header mismatch)", tt.name, r, mcp.HEADER_MISMATCH)
			}
		}
		if task := c.Get(t, id); task.Error != nil || task.Result["status"] != "input_required" {
			t.Errorf("the task after the rejected requests = %+v; want it untouched, input_required", task)
		}
	})
}

// inputKeys is the sorted keys of a task's inputRequests.
func inputKeys(task map[string]any) []string {
	var keys []string
	reqs, _ := task["inputRequests"].(map[string]any)
	for k := range reqs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
