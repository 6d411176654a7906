package config

// The telemetry: section of vmcp.yaml turns on tracing (design.md
// "Tracing (OpenTelemetry)"): spans of every run, step attempt and backend
// call, exported over OTLP.
//
//	telemetry:
//	  otlp: {endpoint: 127.0.0.1:4317, protocol: grpc, insecure: true}   # or protocol: http
//	  serviceName: vmcp
//	  sampling: 1.0
//	  traceURL: "http://127.0.0.1:16686/trace/{traceId}"
//
// Without the section tracing is off, unless the standard OTEL_*
// variables ask for it (telemetry/trace.Resolve merges the two: the file
// wins for what it sets). sampling is the share of new traces recorded,
// in (0, 1]; a run that joins a caller's trace follows the caller's
// decision. traceURL, with {traceId} in it, links a run to its trace.

import (
	"net"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// OTLP protocols.
const (
	OTLPGRPC = "grpc"
	OTLPHTTP = "http"
)

// Telemetry is vmcp.yaml's telemetry: section. The zero value (no
// section) traces nothing.
type Telemetry struct {
	// Set reports whether the file has the section.
	Set bool
	// Endpoint is the OTLP receiver: host:port, or for http a URL
	// (http://host:4318) too.
	Endpoint string
	// Protocol is grpc or http ("" when the file leaves it out: grpc).
	Protocol string
	// Insecure sends without TLS.
	Insecure bool
	// ServiceName is the service.name of the spans ("" means vmcp).
	ServiceName string
	// Sampling is the share of new traces recorded, in (0, 1]; 0 when
	// the file leaves it out (then 1, or OTEL_TRACES_SAMPLER_ARG).
	Sampling float64
	// TraceURL is a link to a trace, with {traceId} where its id goes.
	TraceURL string
}

func (l *loader) telemetry(n ast.Node) {
	t := &l.cfg.Telemetry
	t.Set = true
	l.fields(n, "telemetry", []string{"otlp", "serviceName", "sampling", "traceURL"}, func(key string, k, v ast.Node) {
		p := "telemetry." + key
		switch key {
		case "otlp":
			l.fields(v, p, []string{"endpoint", "protocol", "insecure"}, func(key string, k, v ast.Node) {
				p := "telemetry.otlp." + key
				switch key {
				case "endpoint":
					if s, ok := l.str(v, p, p); ok {
						if !validEndpoint(s) {
							l.errorf(v, p, CodeBadValue, "%s %q is not host:port or an http(s) URL (for example 127.0.0.1:4317)", p, s)
						} else {
							t.Endpoint = s
						}
					}
				case "protocol":
					if s, ok := l.oneOf(v, p, p, OTLPGRPC, OTLPHTTP); ok {
						t.Protocol = s
					}
				case "insecure":
					t.Insecure = l.boolean(v, p, p)
				}
			})
		case "serviceName":
			l.nonEmpty(v, p, "vmcp", &t.ServiceName)
		case "sampling":
			if f := l.number(v, p, p); f > 1 {
				l.errorf(v, p, CodeBadValue, "%s is the share of traces recorded, at most 1, not %v", p, f)
			} else {
				t.Sampling = f
			}
		case "traceURL":
			if s, ok := l.str(v, p, p); ok {
				if !strings.Contains(s, "{traceId}") {
					l.errorf(v, p, CodeBadValue, "%s %q has no {traceId} where the trace's id goes (for example http://127.0.0.1:16686/trace/{traceId})", p, s)
				} else {
					t.TraceURL = s
				}
			}
		}
	})
}

// validEndpoint accepts host:port or an http(s) URL.
func validEndpoint(s string) bool {
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		return len(s) > len("https://")
	}
	host, port, err := net.SplitHostPort(s)
	return err == nil && host != "" && port != ""
}
