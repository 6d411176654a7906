// Command demo-backend is a small MCP server (stdio) standing in for the
// systems of the incident investigation example
// (examples/incident_investigation.yaml). One binary plays one role, chosen
// with -role:
//
//	logs      fetch_logs     (300ms)  log entries and error counts
//	metrics   query_metrics  (400ms)  metric series and anomalies
//	traces    fetch_traces   (500ms)  slow traces and their spans
//	analysis  correlate      (200ms)  summary, report and severity
//	jira      create_issue   (150ms)  a ticket key and URL
//
// The data is generated deterministically from the incident id, so the demo
// prints the same result every time. -latency scales every delay (0 makes
// them instant, for tests). Logs go to stderr; stdout carries only MCP.
package main
