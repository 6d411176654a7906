package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadTelemetry(t *testing.T) {
	tests := []struct {
		name string
		src  string
		env  map[string]string
		want Telemetry
	}{
		{
			name: "no section: off",
			src:  "backends: {a: {command: srv}}\n",
			want: Telemetry{},
		},
		{
			name: "design.md's example",
			src:  "telemetry:\n  otlp: {endpoint: 127.0.0.1:4317, protocol: grpc, insecure: true}\n  serviceName: vmcp\n  sampling: 1.0\n  traceURL: \"http://127.0.0.1:16686/trace/{traceId}\"\n",
			want: Telemetry{Set: true, Endpoint: "127.0.0.1:4317", Protocol: "grpc", Insecure: true, ServiceName: "vmcp", Sampling: 1, TraceURL: "http://127.0.0.1:16686/trace/{traceId}"},
		},
		{
			name: "http with a URL from the environment, snake_case",
			src:  "telemetry:\n  otlp: {endpoint: \"${OTLP}\", protocol: http}\n  service_name: gw\n  sampling: 0.01\n",
			env:  map[string]string{"OTLP": "https://otel.internal:4318"},
			want: Telemetry{Set: true, Endpoint: "https://otel.internal:4318", Protocol: "http", ServiceName: "gw", Sampling: 0.01},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"vmcp.yaml": tt.src})
			c, err := Load(filepath.Join(dir, "vmcp.yaml"), envOf(tt.env))
			if err != nil {
				t.Fatalf("Load(%q): %v", tt.src, err)
			}
			if diff := cmp.Diff(tt.want, c.Telemetry); diff != "" {
				t.Errorf("Load(%q).Telemetry (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

func TestLoadTelemetryErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "unknown protocol",
			src:  "telemetry:\n  otlp: {endpoint: 127.0.0.1:4317, protocol: thrift}\n",
			want: []string{`vmcp.yaml:2:46: error: telemetry.otlp.protocol "thrift" is not one of grpc, http`},
		},
		{
			name: "endpoint without a port",
			src:  "telemetry:\n  otlp:\n    endpoint: collector\n",
			want: []string{`vmcp.yaml:3:15: error: telemetry.otlp.endpoint "collector" is not host:port or an http(s) URL (for example 127.0.0.1:4317)`},
		},
		{
			name: "sampling over 1 and not positive",
			src:  "telemetry:\n  sampling: 2\n",
			want: []string{`vmcp.yaml:2:13: error: telemetry.sampling is the share of traces recorded, at most 1, not 2`},
		},
		{
			name: "sampling zero",
			src:  "telemetry:\n  sampling: 0\n",
			want: []string{`vmcp.yaml:2:13: error: telemetry.sampling must be a positive number, not 0`},
		},
		{
			name: "traceURL without the id",
			src:  "telemetry:\n  traceURL: http://jaeger/trace\n",
			want: []string{`vmcp.yaml:2:13: error: telemetry.traceURL "http://jaeger/trace" has no {traceId}`},
		},
		{
			name: "misspelt field gets a suggestion",
			src:  "telemetry:\n  serviceNmae: x\n",
			want: []string{`vmcp.yaml:2:3: error: unknown key "serviceNmae" in telemetry; did you mean serviceName?`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"vmcp.yaml": tt.src})
			c, err := Load(filepath.Join(dir, "vmcp.yaml"), nil)
			if err == nil {
				t.Fatalf("Load(%q) = %+v; want an error", tt.src, c.Telemetry)
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
