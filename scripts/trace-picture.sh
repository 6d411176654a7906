#!/usr/bin/env bash
# Takes docs/trace.png: the trace of the demo run (investigate_incident,
# examples/demo/vmcp.yaml) as Jaeger's UI shows it, in headless Chromium.
# Run once by hand when the picture should change; CI does not run it.
#
#   scripts/trace-picture.sh JAEGER_UI_BUILD [OUT.png]
#
# JAEGER_UI_BUILD is a built Jaeger UI (the packages/jaeger-ui/build
# folder of github.com/jaegertracing/jaeger-ui at the tag of the Jaeger
# version, v1.76.0, built with `npm ci && npm run build`): the Jaeger
# that `make jaeger` builds from the Go module proxy serves only a
# placeholder page, as the UI's assets are not in the Go module, so this
# script points Jaeger v2's jaeger_query extension at the built assets
# (ui.assets_path). It needs bin/vmcp (make build; or $VMCP), Jaeger (make jaeger)
# and Chromium (/usr/bin/chromium, Debian's chromium package). It uses
# the loopback ports 17790-17794.
set -euo pipefail
cd "$(dirname "$0")/.."
ui=$(cd "${1:?usage: scripts/trace-picture.sh JAEGER_UI_BUILD [OUT.png]}" && pwd)
out=${2:-docs/trace.png}
vmcp=${VMCP:-bin/vmcp}
jaeger=${JAEGER:-${VMCP_BIN_CACHE:-$HOME/.cache/vmcp/bin}/jaeger-v1.76.0}
chromium=${CHROMIUM:-/usr/bin/chromium}
for f in "$vmcp" "$jaeger" "$chromium" "$ui/index.html"; do
  [[ -e $f ]] || { echo "trace-picture.sh: $f is missing" >&2; exit 1; }
done
go build -o bin/demo-backend ./examples/demo/backends

tmp=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT
cat >"$tmp/jaeger.yaml" <<EOF
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter]}
  telemetry: {metrics: {level: none}, logs: {level: warn}}
extensions:
  jaeger_query:
    storage: {traces: memstore}
    ui: {assets_path: "$ui"}
    http: {endpoint: 127.0.0.1:17790}
    grpc: {endpoint: 127.0.0.1:17791}
  jaeger_storage:
    backends: {memstore: {memory: {max_traces: 100}}}
receivers:
  otlp:
    protocols: {grpc: {endpoint: 127.0.0.1:17792}, http: {endpoint: 127.0.0.1:17793}}
processors:
  batch: {timeout: 100ms}
exporters:
  jaeger_storage_exporter: {trace_storage: memstore}
EOF
"$jaeger" --config "$tmp/jaeger.yaml" >"$tmp/jaeger.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  curl -fs http://127.0.0.1:17790/api/services >/dev/null && break
  sleep 0.2
done

# The demo run, traced through the standard OTEL_* variables.
OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:17793 OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf \
  OTEL_SERVICE_NAME=vmcp OTEL_BSP_SCHEDULE_DELAY=100 \
  "$vmcp" call --config examples/demo/vmcp.yaml investigate_incident \
  --arg incident_id=INC-1234 --arg time_range=2h >"$tmp/result.json"
trace=""
for _ in $(seq 100); do
  trace=$(curl -fs 'http://127.0.0.1:17790/api/traces?service=vmcp&limit=1&lookback=1h' |
    sed -n 's/^{"data":\[{"traceID":"\([0-9a-f]*\)".*/\1/p')
  [[ -n $trace ]] && break
  sleep 0.2
done
[[ -n $trace ]] || { echo "trace-picture.sh: no trace in Jaeger" >&2; cat "$tmp/jaeger.log" >&2; exit 1; }
echo "trace $trace"

# The trace page, expanded, once the UI has drawn it (virtual time lets
# the page's scripts run before the picture is taken).
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$tmp/chromium" --window-size=1400,530 --virtual-time-budget=15000 \
  --screenshot="$tmp/trace.png" "http://127.0.0.1:17790/trace/$trace?uiEmbed=v0" 2>"$tmp/chromium.log" ||
  { cat "$tmp/chromium.log" >&2; exit 1; }
cp "$tmp/trace.png" "$out"
echo "wrote $out"
