package trace

// Settings from vmcp.yaml's telemetry: section and the standard
// OpenTelemetry environment variables. The file wins for what it sets;
// the variables fill in the rest:
//
//	OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none   tracing off
//	OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT                 turns tracing on
//	OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL                 grpc, http/protobuf
//	OTEL_SERVICE_NAME                                    the service name
//	OTEL_TRACES_SAMPLER_ARG                              the sampling ratio
//
// The exporters read the others themselves (OTEL_EXPORTER_OTLP_HEADERS,
// _INSECURE, _TIMEOUT, the certificates); so does the resource
// (OTEL_RESOURCE_ATTRIBUTES).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vmcp-dev/vmcp/config"
)

// Settings are the resolved tracing settings.
type Settings struct {
	// Endpoint is the file's OTLP endpoint: host:port or a URL; "" lets
	// the exporter take OTEL_EXPORTER_OTLP_*ENDPOINT (or its default,
	// localhost:4317 or localhost:4318).
	Endpoint string
	// Protocol is config.OTLPGRPC or config.OTLPHTTP.
	Protocol    string
	Insecure    bool
	ServiceName string
	// Sampling is the share of new traces recorded, in (0, 1].
	Sampling float64
	// TraceURL links a trace: {traceId} is replaced by its id.
	TraceURL string
}

// Resolve merges the telemetry: section with the environment (getenv).
// on is false when tracing is off: neither asks for it, or the
// environment turns the SDK off.
func Resolve(t config.Telemetry, getenv func(string) string) (s Settings, on bool, err error) {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return Settings{}, false, nil
	}
	envEndpoint := first(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	if !t.Set && envEndpoint == "" {
		return Settings{}, false, nil
	}
	s = Settings{Endpoint: t.Endpoint, Insecure: t.Insecure, TraceURL: t.TraceURL, Protocol: t.Protocol}
	if s.Protocol == "" {
		switch p := first(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), getenv("OTEL_EXPORTER_OTLP_PROTOCOL")); p {
		case "", "grpc":
			s.Protocol = config.OTLPGRPC
		case "http/protobuf", "http/json", "http":
			s.Protocol = config.OTLPHTTP
		default:
			return Settings{}, false, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q is not grpc or http/protobuf", p)
		}
	}
	s.ServiceName = first(t.ServiceName, getenv("OTEL_SERVICE_NAME"), "vmcp")
	s.Sampling = t.Sampling
	if s.Sampling == 0 {
		s.Sampling = 1
		if a := getenv("OTEL_TRACES_SAMPLER_ARG"); a != "" {
			f, perr := strconv.ParseFloat(a, 64)
			if perr != nil || f < 0 || f > 1 {
				return Settings{}, false, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG %q is not a ratio between 0 and 1", a)
			}
			s.Sampling = f
		}
	}
	return s, true, nil
}

func first(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// URL is the link to trace traceID, or "" without a TraceURL.
func (s Settings) URL(traceID string) string {
	if s.TraceURL == "" || traceID == "" {
		return ""
	}
	return strings.ReplaceAll(s.TraceURL, "{traceId}", traceID)
}
