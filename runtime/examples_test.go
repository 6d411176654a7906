package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

type M = map[string]any
type A = []any

// scripted is a fake backend whose tools are Go functions of the arguments
// and the attempt number.
type scripted struct {
	tools map[string]func(args M, attempt int) (*runtime.ToolResult, error)

	mu       sync.Mutex
	args     map[string][]M // by step id
	attempts map[string]int
}

func newScripted(tools map[string]func(M, int) (*runtime.ToolResult, error)) *scripted {
	return &scripted{tools: tools, args: map[string][]M{}, attempts: map[string]int{}}
}

func (s *scripted) CallTool(ctx context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	name := call.Backend + "." + call.Tool
	s.mu.Lock()
	s.args[call.StepID] = append(s.args[call.StepID], call.Arguments)
	s.attempts[name]++
	attempt := s.attempts[name]
	s.mu.Unlock()
	fn, ok := s.tools[name]
	if !ok {
		return nil, fmt.Errorf("fake backend has no tool %s", name)
	}
	return fn(call.Arguments, attempt)
}

func (s *scripted) argsOf(step string) []M {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.args[step]
}

// returns answers with a fixed structured result.
func returns(v M) func(M, int) (*runtime.ToolResult, error) {
	return func(M, int) (*runtime.ToolResult, error) { return &runtime.ToolResult{Structured: v}, nil }
}

// echo answers with {"received": arguments}.
func echo(args M, _ int) (*runtime.ToolResult, error) {
	return &runtime.ToolResult{Structured: M{"received": args}}, nil
}

func toolError(text string) func(M, int) (*runtime.ToolResult, error) {
	return func(M, int) (*runtime.ToolResult, error) {
		return &runtime.ToolResult{IsError: true, Content: []runtime.Content{{Type: "text", Text: text}}}, nil
	}
}

func failFirst(n int, then func(M, int) (*runtime.ToolResult, error)) func(M, int) (*runtime.ToolResult, error) {
	return func(args M, attempt int) (*runtime.ToolResult, error) {
		if attempt <= n {
			return nil, fmt.Errorf("connection reset")
		}
		return then(args, attempt)
	}
}

type answer runtime.ElicitResult

func (a answer) Elicit(context.Context, runtime.ElicitRequest) (runtime.ElicitResult, error) {
	return runtime.ElicitResult(a), nil
}

type exampleCase struct {
	file, workflow, name string
	params               M
	tools                map[string]func(M, int) (*runtime.ToolResult, error)
	elicitor             runtime.Elicitor
	status               runtime.RunStatus
	output               any
	steps                map[string]runtime.StepStatus
	check                func(t *testing.T, run *runtime.Run, be *scripted)
}

// compileExample compiles one example file and shortens retry delays so
// retries take milliseconds.
func compileExample(t *testing.T, file string) *ir.Plan {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	p, diags := compiler.Compile([]compiler.Source{{Name: "examples/" + file, Src: src}}, compiler.Options{})
	if p == nil {
		t.Fatalf("Compile(%s) failed:\n%v", file, diags)
	}
	for _, w := range p.Workflows {
		for _, s := range w.Steps {
			if s.OnError.Action == ir.ActionRetry {
				s.OnError.RetryDelay = ir.Duration(time.Millisecond)
			}
		}
	}
	return p
}

func exampleCases() []exampleCase {
	return []exampleCase{
		{
			file: "composite_tools_config.yaml", workflow: "create_and_notify", name: "default body",
			params: M{"title": "Login broken"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"github.create_issue": returns(M{"url": "https://github.com/o/r/issues/7", "number": float64(7)}),
				"slack.post_message":  echo,
			},
			status: runtime.RunCompleted,
			output: M{"received": M{"message": "Issue created: https://github.com/o/r/issues/7"}},
			check: func(t *testing.T, _ *runtime.Run, be *scripted) {
				if diff := cmp.Diff([]M{{"title": "Login broken", "body": ""}}, be.argsOf("create_issue")); diff != "" {
					t.Errorf("create_issue arguments (-want +got):\n%s", diff)
				}
			},
		},
		{
			file: "composite_tools_config.yaml", workflow: "backup_and_verify", name: "snapshot retried once",
			params: M{"database": "orders"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"db.create_snapshot":      failFirst(1, returns(M{"id": "snap-1"})),
				"db.verify_snapshot":      returns(M{"checksum": "c0ffee"}),
				"inventory.record_backup": echo,
			},
			status: runtime.RunCompleted,
			output: M{"received": M{"database": "orders", "snapshot_id": "snap-1", "checksum": "c0ffee"}},
			check: func(t *testing.T, run *runtime.Run, _ *scripted) {
				if run.Steps[0].ID != "snapshot" || run.Steps[0].Attempts != 2 {
					t.Errorf("snapshot attempts = %d; want 2", run.Steps[0].Attempts)
				}
			},
		},
		{
			file: "default_results.yaml", workflow: "qualify_lead", name: "no enrichment, good score",
			params: M{"email": "ada@example.com"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"crm.find_contact":   returns(M{"name": "Ada", "domain": "example.com"}),
				"scoring.score_lead": returns(M{"score": float64(80), "tier": "A"}),
				"slack.post_message": echo,
			},
			status: runtime.RunCompleted,
			steps:  map[string]runtime.StepStatus{"enrich": runtime.StepSkipped, "score": runtime.StepCompleted, "notify_sales": runtime.StepCompleted},
			output: M{"received": M{"channel": "#sales", "text": "Ada (unknown) scored 80, tier A"}},
			check: func(t *testing.T, _ *runtime.Run, be *scripted) {
				want := []M{{"contact": M{"name": "Ada", "domain": "example.com"}, "employees": int64(0)}}
				if diff := cmp.Diff(want, be.argsOf("score")); diff != "" {
					t.Errorf("score arguments (-want +got):\n%s", diff)
				}
			},
		},
		{
			file: "default_results.yaml", workflow: "qualify_lead", name: "enrichment, scoring fails",
			params: M{"email": "ada@example.com", "enrich": true},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"crm.find_contact":          returns(M{"name": "Ada", "domain": "example.com"}),
				"enrichment.lookup_company": returns(M{"company": "Example Ltd", "employees": float64(120)}),
				"scoring.score_lead":        toolError("model unavailable"),
			},
			status: runtime.RunCompleted,
			steps:  map[string]runtime.StepStatus{"enrich": runtime.StepCompleted, "score": runtime.StepFailed, "notify_sales": runtime.StepSkipped},
			output: nil,
			check: func(t *testing.T, _ *runtime.Run, be *scripted) {
				if got := be.argsOf("score"); len(got) != 1 || got[0]["employees"] != float64(120) {
					t.Errorf("score arguments = %v; want employees 120 from enrichment", got)
				}
			},
		},
		{
			file: "diamond.yaml", workflow: "diamond_transform", name: "merge both sides",
			params: M{"dataset": "sales"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"api.fetch":       returns(M{"rows": A{float64(1), float64(2), float64(3)}}),
				"transform.left":  returns(M{"sum": float64(6)}),
				"transform.right": returns(M{"count": float64(3)}),
				"combine.merge":   echo,
			},
			status: runtime.RunCompleted,
			output: M{"received": M{"left": M{"sum": float64(6)}, "right": M{"count": float64(3)}}},
			check: func(t *testing.T, _ *runtime.Run, be *scripted) {
				if diff := cmp.Diff([]M{{"rows": A{float64(1), float64(2), float64(3)}}}, be.argsOf("process_left")); diff != "" {
					t.Errorf("process_left gets the rows as an array (-want +got):\n%s", diff)
				}
			},
		},
		deployCase("approved", answer{Action: runtime.ElicitAccept, Content: M{"approve": true}}, runtime.RunCompleted,
			M{"received": M{"channel": "#deploys", "text": "api v1.2.0 -> staging: https://staging.example.com/api"}},
			map[string]runtime.StepStatus{"approve": runtime.StepCompleted, "deploy": runtime.StepCompleted, "announce": runtime.StepCompleted}),
		deployCase("approved but approve=false skips deploy", answer{Action: runtime.ElicitAccept, Content: M{"approve": false}}, runtime.RunCompleted,
			M{"received": M{"channel": "#deploys", "text": "api v1.2.0 -> staging: not deployed"}},
			map[string]runtime.StepStatus{"deploy": runtime.StepSkipped, "announce": runtime.StepCompleted}),
		deployCase("declined skips the rest", answer{Action: runtime.ElicitDecline}, runtime.RunCompleted, nil,
			map[string]runtime.StepStatus{"approve": runtime.StepCompleted, "deploy": runtime.StepSkipped, "announce": runtime.StepSkipped}),
		deployCase("cancelled aborts", answer{Action: runtime.ElicitCancel}, runtime.RunFailed, nil,
			map[string]runtime.StepStatus{"approve": runtime.StepFailed, "deploy": runtime.StepPending}),
		deployCase("approved from the console records who answered", answer{Action: runtime.ElicitAccept, Content: M{"approve": true}, By: "token:ops"}, runtime.RunCompleted,
			M{"received": M{"channel": "#deploys", "text": "api v1.2.0 -> staging: https://staging.example.com/api"}},
			map[string]runtime.StepStatus{"approve": runtime.StepCompleted, "deploy": runtime.StepCompleted}).with(func(t *testing.T, run *runtime.Run, _ *scripted) {
			want := M{"action": "accept", "content": M{"approve": true}, "answeredBy": "token:ops"}
			if diff := cmp.Diff(want, stepOf(run, "approve").Output); diff != "" {
				t.Errorf("approve's output (-want +got):\n%s", diff)
			}
		}),
		deployCase("cancelled from the console names who cancelled", answer{Action: runtime.ElicitCancel, By: "token:ops"}, runtime.RunFailed, nil,
			map[string]runtime.StepStatus{"approve": runtime.StepFailed}).with(func(t *testing.T, run *runtime.Run, _ *scripted) {
			if e := stepOf(run, "approve").Error; !strings.HasSuffix(e, "(answered by token:ops)") {
				t.Errorf("approve's error = %q; want it to name who cancelled", e)
			}
		}),
		{
			file: "fan_out_fan_in.yaml", workflow: "engineering_digest", name: "digest",
			params: M{"repo": "o/r"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"github.list_pull_requests": returns(M{"items": A{"pr 1", "pr 2"}}),
				"github.search_issues":      returns(M{"items": A{"issue 9"}}),
				"ci.list_failed_runs":       returns(M{"runs": A{}}),
				"sonar.quality_gate":        returns(M{"conditions": A{M{"metric": "coverage", "ok": true}}}),
				"llm.summarize": func(M, int) (*runtime.ToolResult, error) {
					return &runtime.ToolResult{Content: []runtime.Content{{Type: "text", Text: "2 PRs, 1 stale issue, CI green"}}}, nil
				},
				"slack.post_message": echo,
			},
			status: runtime.RunCompleted,
			output: M{"received": M{"channel": "#engineering", "text": "2 PRs, 1 stale issue, CI green"}},
			check: func(t *testing.T, _ *runtime.Run, be *scripted) {
				want := []M{{
					"title": "Digest for o/r over the last 7 days",
					"sections": A{
						M{"name": "Pull requests", "items": A{"pr 1", "pr 2"}},
						M{"name": "Stale issues", "items": A{"issue 9"}},
						M{"name": "CI failures", "items": A{}},
						M{"name": "Quality gate", "items": A{M{"metric": "coverage", "ok": true}}},
					},
				}}
				if diff := cmp.Diff(want, be.argsOf("summarize")); diff != "" {
					t.Errorf("summarize arguments (-want +got):\n%s", diff)
				}
				if got := be.argsOf("ci_failures"); len(got) != 1 || got[0]["days"] != int64(7) {
					t.Errorf("ci_failures arguments = %v; want days 7 as a number", got)
				}
			},
		},
		{
			file: "foreach_vulnerability_scan.yaml", workflow: "scan_image_vulnerabilities", name: "one query fails",
			params: M{"image": "ghcr.io/o/app:1"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"oci.get_image_packages": returns(M{"packages": A{
					M{"name": "left-pad", "version": "1.0.0", "ecosystem": "npm"},
					M{"name": "openssl", "version": "3.0.1", "ecosystem": "Debian"},
					M{"name": "requests", "version": "2.0.0", "ecosystem": "PyPI"},
				}}),
				"osv.query_vulnerability": func(args M, _ int) (*runtime.ToolResult, error) {
					if args["name"] == "openssl" || args["package_name"] == "openssl" {
						return &runtime.ToolResult{IsError: true, Content: []runtime.Content{{Type: "text", Text: "rate limited"}}}, nil
					}
					return &runtime.ToolResult{Structured: M{"vulns": A{}, "package": args["package_name"]}}, nil
				},
				"reports.vulnerability_summary": func(args M, _ int) (*runtime.ToolResult, error) {
					return &runtime.ToolResult{Structured: M{"image": args["image"], "scanned": args["scanned"], "failed": args["failed_queries"], "results": float64(len(args["results"].(A)))}}, nil
				},
			},
			status: runtime.RunCompleted,
			steps:  map[string]runtime.StepStatus{"check_each": runtime.StepCompleted},
			output: M{"image": "ghcr.io/o/app:1", "scanned": int64(3), "failed": int64(1), "results": float64(3)},
			check: func(t *testing.T, run *runtime.Run, _ *scripted) {
				it := run.Steps[1].Output.(M)["iterations"].(A)
				second := it[1].(M)
				if second["status"] != "failed" || !strings.Contains(second["error"].(string), "rate limited") {
					t.Errorf("iteration 1 = %v; want failed with the tool's text", second)
				}
				first := it[0].(M)
				if diff := cmp.Diff(M{"vulns": A{}, "package": "left-pad"}, first["output"]); diff != "" {
					t.Errorf("iteration 0 output (-want +got):\n%s", diff)
				}
			},
		},
		{
			file: "incident_investigation.yaml", workflow: "investigate_incident", name: "ticket filed",
			params: M{"incident_id": "INC-42"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"logs.fetch_logs":       returns(M{"lines": float64(120)}),
				"metrics.query_metrics": returns(M{"p99_ms": float64(950)}),
				"traces.fetch_traces": func(M, int) (*runtime.ToolResult, error) {
					return &runtime.ToolResult{Content: []runtime.Content{{Type: "text", Text: "trace a"}, {Type: "text", Text: "trace b"}}}, nil
				},
				"analysis.correlate": returns(M{"summary": "DB saturation", "report": "long report", "severity": "high"}),
				"jira.create_issue":  returns(M{"key": "OPS-17"}),
			},
			status: runtime.RunCompleted,
			output: M{"ticket": "OPS-17", "summary": "DB saturation", "severity": "high"},
			check: func(t *testing.T, _ *runtime.Run, be *scripted) {
				want := []M{{"logs": M{"lines": float64(120)}, "metrics": M{"p99_ms": float64(950)}, "traces": M{"text": "trace a", "text_1": "trace b"}}}
				if diff := cmp.Diff(want, be.argsOf("correlate")); diff != "" {
					t.Errorf("correlate arguments (-want +got):\n%s", diff)
				}
				if got := be.argsOf("fetch_logs"); len(got) != 1 || got[0]["time_range"] != "1h" {
					t.Errorf("fetch_logs arguments = %v; want the default time_range 1h", got)
				}
			},
		},
		{
			file: "k8s_stream.yaml", workflow: "triage_ticket", name: "draft reply",
			params: M{"ticket_id": "T-1"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"helpdesk.get_ticket":  returns(M{"subject": "Cannot log in"}),
				"kb.search":            returns(M{"results": A{M{"id": "KB-1"}}}),
				"helpdesk.draft_reply": echo,
			},
			status: runtime.RunCompleted,
			output: M{"received": M{"ticket_id": "T-1", "articles": A{M{"id": "KB-1"}}}},
		},
		{
			file: "k8s_stream.yaml", workflow: "close_stale_tickets", name: "close two",
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"helpdesk.search_tickets": returns(M{"tickets": A{M{"id": "T-1"}, M{"id": "T-2"}}}),
				"helpdesk.close_ticket":   echo,
			},
			status: runtime.RunCompleted,
			output: M{"count": int64(2), "completed": int64(2), "failed": int64(0), "skipped": int64(0), "iterations": A{
				M{"index": int64(0), "item": M{"id": "T-1"}, "status": "completed", "error": "", "output": M{"received": M{"id": "T-1", "note": "Closed after 30 days without a reply."}}},
				M{"index": int64(1), "item": M{"id": "T-2"}, "status": "completed", "error": "", "output": M{"received": M{"id": "T-2", "note": "Closed after 30 days without a reply."}}},
			}},
			check: func(t *testing.T, _ *runtime.Run, be *scripted) {
				if got := be.argsOf("find_stale"); len(got) != 1 || got[0]["inactive_days"] != int64(30) {
					t.Errorf("find_stale arguments = %v; want inactive_days 30 (typed default)", got)
				}
			},
		},
		{
			file: "nested_loops.yaml", workflow: "sync_namespaces", name: "pods and kinds per namespace",
			params: M{"cluster": "prod"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"k8s.get_cluster":     returns(M{"id": "c-1"}),
				"k8s.list_namespaces": returns(M{"items": A{M{"name": "default"}, M{"name": "empty"}}}),
				"k8s.list_resources": func(args M, _ int) (*runtime.ToolResult, error) {
					if args["kind"] == "Pod" && args["namespace"] == "empty" {
						return &runtime.ToolResult{Structured: M{"items": A{}}}, nil
					}
					n := fmt.Sprint(args["namespace"], "/", args["kind"])
					items := A{M{"uid": n + "-1", "name": "a"}}
					if args["kind"] == "Pod" {
						items = append(items, M{"uid": n + "-2", "name": "b"})
					}
					return &runtime.ToolResult{Structured: M{"items": items}}, nil
				},
				"graph.merge_nodes": func(args M, _ int) (*runtime.ToolResult, error) {
					return &runtime.ToolResult{Structured: M{"merged": float64(len(args["items"].(A)))}}, nil
				},
			},
			status: runtime.RunCompleted,
			steps:  map[string]runtime.StepStatus{"per_namespace": runtime.StepCompleted},
			output: M{"namespaces": int64(2), "synced": A{
				M{"namespace": "default", "pods": int64(2), "kinds": A{
					M{"kind": "ConfigMap", "merged": int64(1)}, M{"kind": "Secret", "merged": int64(1)}, M{"kind": "Service", "merged": int64(1)},
				}},
				M{"namespace": "empty", "pods": int64(0), "kinds": A{
					M{"kind": "ConfigMap", "merged": int64(1)}, M{"kind": "Secret", "merged": int64(1)}, M{"kind": "Service", "merged": int64(1)},
				}},
			}},
			check: func(t *testing.T, run *runtime.Run, be *scripted) {
				if got := len(be.argsOf("write_resources")); got != 6 {
					t.Errorf("write_resources ran %d times; want 6 (2 namespaces x 3 kinds)", got)
				}
				for _, a := range be.argsOf("write_pods") {
					if a["cluster"] != "c-1" {
						t.Errorf("write_pods cluster = %v; want c-1 from the top-level step", a["cluster"])
					}
				}
				second := run.Steps[2].Output.(M)["iterations"].(A)[1].(M)
				if st := second["steps"].(M)["write_pods"].(M)["status"]; st != "skipped" {
					t.Errorf("write_pods in the empty namespace = %v; want skipped", st)
				}
			},
		},
		{
			file: "subworkflow_triage.yaml", workflow: "summarize_service", name: "typed defaults",
			params: M{"service": "api"},
			tools:  triageTools(),
			status: runtime.RunCompleted,
			output: M{"service": "api", "errors": int64(3), "last_deploy": "v1.2"},
			check: func(t *testing.T, _ *runtime.Run, be *scripted) {
				if got := be.argsOf("errors"); len(got) != 1 || got[0]["minutes"] != int64(60) {
					t.Errorf("count_errors arguments = %v; want minutes 60 (the default)", got)
				}
			},
		},
		{
			file: "subworkflow_triage.yaml", workflow: "triage_incident", name: "child runs for the primary and each dependent",
			params: M{"incident_id": "INC-7"},
			tools:  triageTools(),
			status: runtime.RunCompleted,
			steps:  map[string]runtime.StepStatus{"primary": runtime.StepCompleted, "dependents": runtime.StepCompleted},
			output: M{"received": M{"text": "api: 3 errors since v1.2", "details": A{
				M{"index": int64(0), "item": "db", "status": "completed", "error": "", "output": M{"service": "db", "errors": int64(3), "last_deploy": "v1.2"}},
				M{"index": int64(1), "item": "cache", "status": "completed", "error": "", "output": M{"service": "cache", "errors": int64(3), "last_deploy": "v1.2"}},
			}}},
			check: func(t *testing.T, run *runtime.Run, be *scripted) {
				// summarize_service ran three times, "30" coerced to the
				// callee's integer window_minutes for the primary.
				minutes := map[any]int{}
				for _, a := range be.argsOf("errors") {
					minutes[a["minutes"]]++
				}
				if minutes[int64(30)] != 1 || minutes[int64(60)] != 2 {
					t.Errorf("count_errors minutes = %v; want 30 once (primary) and 60 twice", minutes)
				}
			},
		},
		{
			file: "output_schema.yaml", workflow: "repo_health_report", name: "typed nested output",
			params: M{"repo": "o/r"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"github.get_repository": returns(M{"full_name": "o/r", "stargazers_count": float64(1234), "default_branch": "main"}),
				"github.count_issues":   returns(M{"count": float64(12), "labels": A{"bug", "docs"}}),
				"ci.latest_run":         returns(M{"conclusion": "success", "html_url": "https://ci/run/1"}),
			},
			status: runtime.RunCompleted,
			output: M{
				"repository": M{"name": "o/r", "stars": int64(1234), "license": "none"},
				"issues":     M{"open": int64(12), "labels": A{"bug", "docs"}},
				"ci":         M{"conclusion": "success", "url": "https://ci/run/1"},
				"healthy":    true,
			},
			check: func(t *testing.T, _ *runtime.Run, be *scripted) {
				if got := be.argsOf("ci_status"); len(got) != 1 || got[0]["branch"] != "main" {
					t.Errorf("ci_status arguments = %v; want branch main", got)
				}
			},
		},
		{
			file: "release_announcement.json", workflow: "announce_release", name: "mail fails and is tolerated",
			params: M{"repo": "o/r", "tag": "v1.4.0"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"github.generate_release_notes": returns(M{"body": "Fixes"}),
				"github.create_release":         returns(M{"html_url": "https://github.com/o/r/releases/v1.4.0"}),
				"slack.post_message":            echo,
				"mail.send":                     toolError("SMTP down"),
			},
			status: runtime.RunCompleted,
			steps:  map[string]runtime.StepStatus{"chat": runtime.StepCompleted, "mail": runtime.StepFailed},
			output: M{
				"chat": M{"received": M{"channel": "#releases", "text": "o/r v1.4.0 is out: https://github.com/o/r/releases/v1.4.0"}},
				"mail": nil,
			},
		},
		{
			file: "finally_cleanup.yaml", workflow: "locked_deploy", name: "deploy fails, lock released",
			params: M{"service": "api"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"locks.acquire": returns(M{"token": "L-1"}),
				"ci.deploy":     toolError("rollout stuck"),
				"locks.release": echo,
				"chat.post":     echo,
			},
			status: runtime.RunFailed,
			steps:  map[string]runtime.StepStatus{"deploy": runtime.StepFailed, "release": runtime.StepCompleted, "report": runtime.StepCompleted},
			check: func(t *testing.T, _ *runtime.Run, be *scripted) {
				if diff := cmp.Diff([]M{{"token": "L-1"}}, be.argsOf("release")); diff != "" {
					t.Errorf("release arguments (-want +got):\n%s", diff)
				}
				want := []M{{"text": "deploy of api: failed (lock release: completed)"}}
				if diff := cmp.Diff(want, be.argsOf("report")); diff != "" {
					t.Errorf("report arguments (-want +got):\n%s", diff)
				}
			},
		},
		{
			file: "finally_cleanup.yaml", workflow: "locked_deploy", name: "no lock, nothing to release",
			params: M{"service": "api"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"locks.acquire": toolError("lock held by another deploy"),
				"chat.post":     echo,
			},
			status: runtime.RunFailed,
			steps:  map[string]runtime.StepStatus{"lock": runtime.StepFailed, "deploy": runtime.StepPending, "release": runtime.StepSkipped, "report": runtime.StepCompleted},
			check: func(t *testing.T, _ *runtime.Run, be *scripted) {
				want := []M{{"text": "deploy of api: failed (lock release: skipped)"}}
				if diff := cmp.Diff(want, be.argsOf("report")); diff != "" {
					t.Errorf("report arguments (-want +got):\n%s", diff)
				}
			},
		},
		{
			file: "retry_fallback.yaml", workflow: "resilient_geocode", name: "primary answers after retries",
			params: M{"address": "Unter den Linden 1"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"primary_geo.geocode": failFirst(2, returns(M{"lat": 52.517, "lon": 13.389})),
			},
			status: runtime.RunCompleted,
			steps:  map[string]runtime.StepStatus{"try_primary": runtime.StepCompleted, "use_fallback": runtime.StepSkipped},
			output: M{"provider": "primary", "latitude": 52.517, "longitude": 13.389},
		},
		{
			file: "retry_fallback.yaml", workflow: "resilient_geocode", name: "primary fails, fallback answers",
			params: M{"address": "Champs-Elysees"},
			tools: map[string]func(M, int) (*runtime.ToolResult, error){
				"primary_geo.geocode":   failFirst(100, nil),
				"secondary_geo.geocode": returns(M{"lat": 48.87, "lon": 2.3}),
			},
			status: runtime.RunCompleted,
			steps:  map[string]runtime.StepStatus{"try_primary": runtime.StepFailed, "use_fallback": runtime.StepCompleted},
			output: M{"provider": "secondary", "latitude": 48.87, "longitude": 2.3},
			check: func(t *testing.T, run *runtime.Run, _ *scripted) {
				if a := run.Steps[0].Attempts; a != 4 {
					t.Errorf("try_primary attempts = %d; want 4 (1 + maxRetries 3)", a)
				}
			},
		},
	}
}

func deployCase(name string, el runtime.Elicitor, status runtime.RunStatus, output any, steps map[string]runtime.StepStatus) exampleCase {
	return exampleCase{
		file: "elicitation_deploy.yaml", workflow: "deploy_with_approval", name: name,
		params: M{"service": "api"},
		tools: map[string]func(M, int) (*runtime.ToolResult, error){
			"ci.build":           returns(M{"artifact": "api@sha256:ab", "version": "v1.2.0"}),
			"ci.run_tests":       returns(M{"passed": float64(42)}),
			"k8s.rollout":        returns(M{"url": "https://staging.example.com/api"}),
			"slack.post_message": echo,
		},
		elicitor: &recordingElicitor{inner: el},
		status:   status,
		output:   output,
		steps:    steps,
	}
}

// with adds a check to the case.
func (c exampleCase) with(check func(*testing.T, *runtime.Run, *scripted)) exampleCase {
	c.check = check
	return c
}

// stepOf is run's record of step id.
func stepOf(run *runtime.Run, id string) runtime.StepState {
	for _, st := range run.Steps {
		if st.ID == id {
			return st
		}
	}
	return runtime.StepState{}
}

type recordingElicitor struct {
	inner runtime.Elicitor
	mu    sync.Mutex
	msgs  []string
}

func (r *recordingElicitor) Elicit(ctx context.Context, req runtime.ElicitRequest) (runtime.ElicitResult, error) {
	r.mu.Lock()
	r.msgs = append(r.msgs, req.Message)
	r.mu.Unlock()
	return r.inner.Elicit(ctx, req)
}

// TestExamples runs every workflow of every file in examples/ against a
// fake backend and checks its output, step states and backend arguments.
func TestExamples(t *testing.T) {
	covered := map[string]bool{}
	plans := map[string]*ir.Plan{}
	for _, c := range exampleCases() {
		t.Run(c.workflow+"/"+c.name, func(t *testing.T) {
			p, ok := plans[c.file]
			if !ok {
				p = compileExample(t, c.file)
				plans[c.file] = p
			}
			covered[c.file+":"+c.workflow] = true
			be := newScripted(c.tools)
			e, err := runtime.New(p, runtime.Options{Backend: be})
			if err != nil {
				t.Fatalf("New(%s) = %v", c.file, err)
			}
			run, err := e.Run(context.Background(), c.workflow, c.params, runtime.RunOptions{Elicitor: c.elicitor})
			if err != nil {
				t.Fatalf("Run(%s) error = %v", c.workflow, err)
			}
			if run.Status != c.status {
				t.Fatalf("Run(%s).Status = %s (error %v); want %s", c.workflow, run.Status, run.Error, c.status)
			}
			if diff := cmp.Diff(c.output, run.Output); diff != "" {
				t.Errorf("Run(%s).Output mismatch (-want +got):\n%s", c.workflow, diff)
			}
			for _, s := range run.Steps {
				if want, ok := c.steps[s.ID]; ok && s.Status != want {
					t.Errorf("step %s status = %s; want %s (error %q)", s.ID, s.Status, want, s.Error)
				}
			}
			if re, ok := c.elicitor.(*recordingElicitor); ok {
				want := []string{"Build v1.2.0 of api passed 42 tests. Deploy it to staging?"}
				if diff := cmp.Diff(want, re.msgs); diff != "" {
					t.Errorf("elicitation messages (-want +got):\n%s", diff)
				}
			}
			if c.status == runtime.RunFailed && (run.Error == nil || !strings.HasPrefix(run.Error.Pos.File, "examples/")) {
				t.Errorf("Run(%s).Error = %v; want a position in the example file", c.workflow, run.Error)
			}
			if c.check != nil {
				c.check(t, run, be)
			}
		})
	}
	// Every workflow of every example file must have a case.
	files, _ := filepath.Glob(filepath.Join("..", "examples", "*"))
	var missing []string
	for _, f := range files {
		base := filepath.Base(f)
		if !strings.HasSuffix(base, ".yaml") && !strings.HasSuffix(base, ".yml") && !strings.HasSuffix(base, ".json") {
			continue
		}
		p, ok := plans[base]
		if !ok {
			p = compileExample(t, base)
		}
		for _, w := range p.Workflows {
			if !covered[base+":"+w.Name] {
				missing = append(missing, base+":"+w.Name)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("examples without a run test: %v", missing)
	}
}

// triageTools are the backend tools of subworkflow_triage.yaml.
func triageTools() map[string]func(M, int) (*runtime.ToolResult, error) {
	return map[string]func(M, int) (*runtime.ToolResult, error){
		"incidents.get":     returns(M{"service": "api", "dependents": A{"db", "cache"}}),
		"logs.count_errors": returns(M{"count": float64(3)}),
		"deploy.history":    returns(M{"latest": "v1.2"}),
		"chat.post":         echo,
	}
}
