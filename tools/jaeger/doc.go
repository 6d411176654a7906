// Package jaeger is a tools module, not code: its go.mod pins the Jaeger
// all-in-one (github.com/jaegertracing/jaeger/cmd/jaeger, v2, the
// OpenTelemetry-collector-based one) that the tracing tests export spans to
// and read them back from. scripts/jaeger.sh builds it into
// $HOME/.cache/vmcp/bin/jaeger-<version>; the main module never imports it
// (./... does not descend into a nested module).
package jaeger
