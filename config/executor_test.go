package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadExecutor(t *testing.T) {
	tests := []struct {
		name string
		src  string
		env  map[string]string
		want Executor
	}{
		{
			name: "no section: local, with the Temporal defaults ready",
			src:  "backends: {a: {command: srv}}\n",
			want: Executor{Kind: "local", Address: "127.0.0.1:7233", Namespace: "default", TaskQueue: "vmcp", HeartbeatTimeout: 10 * time.Second, LocalActivities: true},
		},
		{
			name: "kind temporal alone takes the defaults",
			src:  "executor: {kind: temporal}\n",
			want: Executor{Kind: "temporal", Address: "127.0.0.1:7233", Namespace: "default", TaskQueue: "vmcp", HeartbeatTimeout: 10 * time.Second, LocalActivities: true},
		},
		{
			name: "every field, snake_case, from the environment",
			src:  "executor:\n  kind: temporal\n  address: \"${TEMPORAL}\"\n  namespace: prod\n  task_queue: vmcp-prod\n  heartbeat_timeout: 3s\n  local_activities: false\n  quick_tools: [gh.list_issues, kube.get]\n",
			env:  map[string]string{"TEMPORAL": "temporal.internal:7233"},
			want: Executor{Kind: "temporal", Address: "temporal.internal:7233", Namespace: "prod", TaskQueue: "vmcp-prod", HeartbeatTimeout: 3 * time.Second,
				LocalActivities: false, QuickTools: []string{"gh.list_issues", "kube.get"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"vmcp.yaml": tt.src})
			c, err := Load(filepath.Join(dir, "vmcp.yaml"), envOf(tt.env))
			if err != nil {
				t.Fatalf("Load(%q): %v", tt.src, err)
			}
			if diff := cmp.Diff(tt.want, c.Executor); diff != "" {
				t.Errorf("Load(%q).Executor (-want +got):\n%s", tt.src, diff)
			}
			if got := c.Executor.Temporal(); got != (tt.want.Kind == "temporal") {
				t.Errorf("Temporal() = %v for kind %q", got, tt.want.Kind)
			}
		})
	}
}

func TestLoadExecutorErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "unknown kind",
			src:  "executor:\n  kind: kubernetes\n",
			want: []string{`vmcp.yaml:2:9: error: executor.kind "kubernetes" is not one of local, temporal`},
		},
		{
			name: "misspelt field gets a suggestion",
			src:  "executor:\n  kind: temporal\n  taskQeue: q\n",
			want: []string{`vmcp.yaml:3:3: error: unknown key "taskQeue" in executor; did you mean taskQueue?`},
		},
		{
			name: "a quick tool without its backend",
			src:  "executor:\n  kind: temporal\n  quickTools: [gh.list_issues, list_pods]\n",
			want: []string{`vmcp.yaml:3:32: error: executor.quickTools[1] "list_pods" is not backend.tool (for example github.list_issues)`},
		},
		{
			name: "address without a port",
			src:  "executor: {kind: temporal, address: temporal.internal}\n",
			want: []string{`vmcp.yaml:1:37: error: executor.address "temporal.internal" is not host:port (for example 127.0.0.1:7233)`},
		},
		{
			name: "empty namespace and task queue",
			src:  "executor:\n  kind: temporal\n  namespace: \"\"\n  taskQueue: \"\"\n",
			want: []string{
				`vmcp.yaml:3:14: error: executor.namespace is empty; leave it out for "default"`,
				`vmcp.yaml:4:14: error: executor.taskQueue is empty; leave it out for "vmcp"`,
			},
		},
		{
			name: "heartbeat timeout not positive",
			src:  "executor: {kind: temporal, heartbeatTimeout: 0s}\n",
			want: []string{`vmcp.yaml:1:46: error: executor.heartbeatTimeout must be positive, not 0s`},
		},
		{
			name: "not a mapping",
			src:  "executor: temporal\n",
			want: []string{`vmcp.yaml:1:11: error: executor must be a mapping, not a string`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"vmcp.yaml": tt.src})
			c, err := Load(filepath.Join(dir, "vmcp.yaml"), nil)
			if err == nil {
				t.Fatalf("Load(%q) = %+v; want an error", tt.src, c.Executor)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Load(%q) error =\n%s\nwant it to contain %q", tt.src, msg, w)
				}
			}
		})
	}
}
