package testenv

// A Jaeger all-in-one for the tracing tests: Jaeger v2 (v1.76.0's
// cmd/jaeger, the OpenTelemetry-collector-based one), configured by a
// YAML file written for the test: the otlp receiver (gRPC and HTTP), the
// jaeger_storage extension with memory storage, and jaeger_query with
// its HTTP (and gRPC) port, every one on a loopback port of the test's
// range; its own metrics are off. The binary is built once by
// `make jaeger` (scripts/jaeger.sh) into $HOME/.cache/vmcp/bin and
// looked up there, then on PATH. A missing binary fails the test with the
// command that builds it; it never skips it.
//
// Readiness is asked of the query API itself (GET /api/services answers
// 200), and the tests read spans back through it: Traces(service), Trace(id).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// JaegerVersion is the Jaeger the tests run (tools/jaeger/go.mod pins it).
const JaegerVersion = "v1.76.0"

// JaegerInstall builds it.
const JaegerInstall = "make jaeger (scripts/jaeger.sh: builds tools/jaeger's pinned cmd/jaeger into $HOME/.cache/vmcp/bin)"

// JaegerServer is a running Jaeger.
type JaegerServer struct {
	// OTLPGRPC and OTLPHTTP are the receiver's host:port; Query is the
	// query API's base URL (http://127.0.0.1:port).
	OTLPGRPC, OTLPHTTP, Query string
	cmd                       *exec.Cmd
	log                       *Buffer
	done                      chan struct{}
}

// JaegerBin returns the Jaeger binary's path, or fails the test naming the
// command that builds it.
func JaegerBin(t testing.TB) string {
	t.Helper()
	var tried []string
	if home := os.Getenv("HOME"); home != "" {
		p := filepath.Join(home, ".cache", "vmcp", "bin", "jaeger-"+JaegerVersion)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
		tried = append(tried, p)
	}
	if p, err := exec.LookPath("jaeger-" + JaegerVersion); err == nil {
		return p
	}
	t.Fatalf("Jaeger %s is not built (not at %v nor on PATH); build it with %s (several minutes, once)", JaegerVersion, tried, JaegerInstall)
	return ""
}

// jaegerConfig is the all-in-one's configuration; %d are the OTLP gRPC,
// OTLP HTTP, query HTTP, query gRPC and health check ports.
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    resource:
      service.name: jaeger
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:%[3]d
    grpc:
      endpoint: 127.0.0.1:%[4]d
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%[1]d
      http:
        endpoint: 127.0.0.1:%[2]d
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`

// StartJaeger starts Jaeger on free ports in [lo, hi] (four of them),
// waits until its query API answers (at most 60s), and stops it when the
// test ends.
func StartJaeger(t testing.TB, lo, hi int) *JaegerServer {
	t.Helper()
	bin := JaegerBin(t)
	grpcPort, httpPort := FreePort(t, lo, hi), FreePort(t, lo, hi)
	queryPort, queryGRPC := FreePort(t, lo, hi), FreePort(t, lo, hi)
	cfg := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jaegerConfig, grpcPort, httpPort, queryPort, queryGRPC), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &JaegerServer{
		OTLPGRPC: "127.0.0.1:" + strconv.Itoa(grpcPort),
		OTLPHTTP: "127.0.0.1:" + strconv.Itoa(httpPort),
		Query:    "http://127.0.0.1:" + strconv.Itoa(queryPort),
		log:      &Buffer{},
		done:     make(chan struct{}),
	}
	s.cmd = exec.Command(bin, "--config", cfg)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	t.Cleanup(s.Stop)
	if err := s.waitReady(60 * time.Second); err != nil {
		t.Fatalf("Jaeger (query %s): %v\nlog:\n%s", s.Query, err, s.log.String())
	}
	return s
}

func (s *JaegerServer) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return errors.New("jaeger exited before it was ready")
		default:
		}
		resp, err := http.Get(s.Query + "/api/services")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /api/services: %s", resp.Status)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %v: %v", limit, last)
}

// Stop ends Jaeger (SIGTERM to its process group, SIGKILL after 10s).
func (s *JaegerServer) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// Log is what Jaeger printed so far.
func (s *JaegerServer) Log() string { return s.log.String() }

// JaegerTrace is one trace as the query API returns it.
type JaegerTrace struct {
	TraceID   string                   `json:"traceID"`
	Spans     []JaegerSpan             `json:"spans"`
	Processes map[string]JaegerProcess `json:"processes"`
}

// JaegerSpan is one span of a JaegerTrace.
type JaegerSpan struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []JaegerRef `json:"references"`
	StartTime     int64       `json:"startTime"` // µs since the epoch
	Duration      int64       `json:"duration"`  // µs
	Tags          []JaegerTag `json:"tags"`
	Logs          []JaegerLog `json:"logs"` // the span's events
	ProcessID     string      `json:"processID"`
}

// JaegerLog is a span event: its name is the field "event".
type JaegerLog struct {
	Fields []JaegerTag `json:"fields"`
}

// Event is the span's first event of that name, as its fields by key
// (nil when it has none).
func (s JaegerSpan) Event(name string) map[string]string {
	for _, l := range s.Logs {
		fields := map[string]string{}
		for _, f := range l.Fields {
			fields[f.Key] = fmt.Sprint(f.Value)
		}
		if fields["event"] == name {
			return fields
		}
	}
	return nil
}

// JaegerRef is a span reference (CHILD_OF the parent).
type JaegerRef struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// JaegerTag is a span attribute.
type JaegerTag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// JaegerProcess is a trace's service.
type JaegerProcess struct {
	ServiceName string      `json:"serviceName"`
	Tags        []JaegerTag `json:"tags"`
}

// Tag is the value of the process's resource attribute key ("" when
// absent).
func (p JaegerProcess) Tag(key string) string {
	for _, t := range p.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// Parent is the span's CHILD_OF parent span id, or "".
func (s JaegerSpan) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Tag is the value of attribute key as a string ("" when absent).
func (s JaegerSpan) Tag(key string) string {
	for _, t := range s.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// Traces returns the traces of service (up to 100), as the query API's
// GET /api/traces?service= finds them.
func (s *JaegerServer) Traces(service string) ([]JaegerTrace, error) {
	q := url.Values{"service": {service}, "limit": {"100"}, "lookback": {"1h"}}
	return s.get("/api/traces?" + q.Encode())
}

// Trace returns the trace of id (GET /api/traces/{id}).
func (s *JaegerServer) Trace(id string) (JaegerTrace, error) {
	ts, err := s.get("/api/traces/" + url.PathEscape(id))
	if err != nil {
		return JaegerTrace{}, err
	}
	if len(ts) != 1 {
		return JaegerTrace{}, fmt.Errorf("trace %s: %d traces in the answer", id, len(ts))
	}
	return ts[0], nil
}

func (s *JaegerServer) get(path string) ([]JaegerTrace, error) {
	resp, err := http.Get(s.Query + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, ErrNoTrace
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	var out struct {
		Data []JaegerTrace `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("GET %s: %v", path, err)
	}
	return out.Data, nil
}

// ErrNoTrace is Trace's error for a trace Jaeger does not (yet) hold.
var ErrNoTrace = errors.New("jaeger: no such trace")

// WaitTrace polls Trace(id) until it holds at least n spans (at most
// 30s): Jaeger's batch processor stores spans shortly after they come.
func (s *JaegerServer) WaitTrace(t testing.TB, id string, n int) JaegerTrace {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last JaegerTrace
	var err error
	for time.Now().Before(deadline) {
		last, err = s.Trace(id)
		if err == nil && len(last.Spans) >= n {
			return last
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("trace %s: want at least %d spans, have %d (last error %v)\njaeger log:\n%s", id, n, len(last.Spans), err, s.Log())
	return last
}
