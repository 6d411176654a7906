package main

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	role := flag.String("role", "", "which backend to be: logs, metrics, traces, analysis or jira")
	latency := flag.Float64("latency", 1, "multiplier for the simulated latencies")
	flag.Parse()
	b := &backend{scale: *latency}
	s := server.NewMCPServer("demo-"+*role, "1.0.0", server.WithToolCapabilities(false))
	switch *role {
	case "logs":
		s.AddTool(mcp.NewTool("fetch_logs",
			mcp.WithDescription("Fetch the log entries recorded around an incident"),
			mcp.WithString("incident_id", mcp.Required(), mcp.Description("Incident identifier")),
			mcp.WithString("time_range", mcp.Description("How far back to look, e.g. 1h")),
			mcp.WithReadOnlyHintAnnotation(true),
		), b.fetchLogs)
	case "metrics":
		s.AddTool(mcp.NewTool("query_metrics",
			mcp.WithDescription("Query the service metrics around an incident"),
			mcp.WithString("incident_id", mcp.Required(), mcp.Description("Incident identifier")),
			mcp.WithString("time_range", mcp.Description("How far back to look, e.g. 1h")),
			mcp.WithReadOnlyHintAnnotation(true),
		), b.queryMetrics)
	case "traces":
		s.AddTool(mcp.NewTool("fetch_traces",
			mcp.WithDescription("Fetch the slowest distributed traces around an incident"),
			mcp.WithString("incident_id", mcp.Required(), mcp.Description("Incident identifier")),
			mcp.WithString("time_range", mcp.Description("How far back to look, e.g. 1h")),
			mcp.WithReadOnlyHintAnnotation(true),
		), b.fetchTraces)
	case "analysis":
		s.AddTool(mcp.NewTool("correlate",
			mcp.WithDescription("Correlate logs, metrics and traces into a finding"),
			mcp.WithObject("logs", mcp.Required(), mcp.Description("Output of fetch_logs")),
			mcp.WithObject("metrics", mcp.Required(), mcp.Description("Output of query_metrics")),
			mcp.WithObject("traces", mcp.Required(), mcp.Description("Output of fetch_traces")),
		), b.correlate)
	case "jira":
		s.AddTool(mcp.NewTool("create_issue",
			mcp.WithDescription("File a ticket"),
			mcp.WithString("title", mcp.Required()),
			mcp.WithString("body", mcp.Required()),
			mcp.WithString("severity", mcp.Description("low, medium, high or critical")),
		), b.createIssue)
	default:
		fmt.Fprintf(os.Stderr, "demo-backend: -role must be logs, metrics, traces, analysis or jira, not %q\n", *role)
		os.Exit(2)
	}
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintf(os.Stderr, "demo-backend %s: %v\n", *role, err)
		os.Exit(1)
	}
}

type backend struct{ scale float64 }

// wait sleeps for the role's latency, or returns early when the call is
// cancelled.
func (b *backend) wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(time.Duration(float64(d) * b.scale))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// seed makes the generated data depend on the incident id only.
func seed(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

func (b *backend) fetchLogs(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id, err := req.RequireString("incident_id")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if err := b.wait(ctx, 300*time.Millisecond); err != nil {
		return nil, err
	}
	n := 40 + int(seed(id)%60)
	out := map[string]any{
		"incident_id": id,
		"time_range":  req.GetString("time_range", "1h"),
		"error_count": n,
		"top_errors": []any{
			map[string]any{"service": "checkout", "message": "upstream timeout calling payments", "count": n / 2},
			map[string]any{"service": "payments", "message": "connection pool exhausted", "count": n / 3},
		},
		"first_error_at": "2026-11-30T09:14:05Z",
	}
	return mcp.NewToolResultStructuredOnly(out), nil
}

func (b *backend) queryMetrics(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id, err := req.RequireString("incident_id")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if err := b.wait(ctx, 400*time.Millisecond); err != nil {
		return nil, err
	}
	p99 := 800 + int(seed(id)%1200)
	out := map[string]any{
		"incident_id":    id,
		"p99_latency_ms": p99,
		"error_rate":     0.12,
		"anomalies": []any{
			map[string]any{"metric": "payments.db.connections", "value": 100, "threshold": 80},
			map[string]any{"metric": "checkout.http.p99_ms", "value": p99, "threshold": 500},
		},
	}
	return mcp.NewToolResultStructuredOnly(out), nil
}

func (b *backend) fetchTraces(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id, err := req.RequireString("incident_id")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if err := b.wait(ctx, 500*time.Millisecond); err != nil {
		return nil, err
	}
	out := map[string]any{
		"incident_id": id,
		"slowest_span": map[string]any{
			"service": "payments", "operation": "db.acquire_connection", "duration_ms": 2400,
		},
		"traces_examined": 1000 + int(seed(id)%500),
	}
	return mcp.NewToolResultStructuredOnly(out), nil
}

func (b *backend) correlate(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	var missing []string
	for _, k := range []string{"logs", "metrics", "traces"} {
		if _, ok := args[k].(map[string]any); !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return mcp.NewToolResultError("correlate needs objects for: " + strings.Join(missing, ", ")), nil
	}
	if err := b.wait(ctx, 200*time.Millisecond); err != nil {
		return nil, err
	}
	logs := args["logs"].(map[string]any)
	metrics := args["metrics"].(map[string]any)
	traces := args["traces"].(map[string]any)
	span, _ := traces["slowest_span"].(map[string]any)
	severity := "medium"
	if p99, ok := metrics["p99_latency_ms"].(float64); ok && p99 > 1000 {
		severity = "high"
	}
	summary := fmt.Sprintf("%v connection pool exhaustion slows checkout", span["service"])
	report := fmt.Sprintf("%v errors since %v; p99 latency %vms; slowest span %v.%v took %vms",
		logs["error_count"], logs["first_error_at"], metrics["p99_latency_ms"],
		span["service"], span["operation"], span["duration_ms"])
	out := map[string]any{"summary": summary, "report": report, "severity": severity}
	return mcp.NewToolResultStructuredOnly(out), nil
}

func (b *backend) createIssue(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	title, err := req.RequireString("title")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if err := b.wait(ctx, 150*time.Millisecond); err != nil {
		return nil, err
	}
	key := fmt.Sprintf("OPS-%d", 1000+seed(title)%9000)
	out := map[string]any{
		"key":      key,
		"url":      "https://jira.example.com/browse/" + key,
		"title":    title,
		"severity": req.GetString("severity", "medium"),
	}
	return mcp.NewToolResultStructuredOnly(out), nil
}
