#!/usr/bin/env bash
# The vmcp demo: compile the incident investigation workflow, print its
# plan, run it once against five small MCP servers (logs 300ms, metrics
# 400ms, traces 500ms, correlate 200ms, create ticket 150ms) with vmcp call,
# show that the three fetches ran in parallel, then serve it with vmcp run
# to a real MCP client (the MCP Inspector CLI). Run it with `make demo`
# (which builds bin/ and installs the npm packages first).
set -euo pipefail
cd "$(dirname "$0")/../.."
for b in vmcp vmcpc; do
  if [[ ! -x bin/$b ]]; then
    echo "run.sh: bin/$b is missing: run make build first" >&2
    exit 1
  fi
done
# examples/demo/vmcp.yaml starts ../../bin/demo-backend (relative to the
# config file): this one.
go build -o bin/demo-backend ./examples/demo/backends

echo "== The plan (bin/vmcpc plan examples/incident_investigation.yaml)"
bin/vmcpc plan examples/incident_investigation.yaml
echo

echo "== Running investigate_incident through vmcp (bin/vmcp call)"
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
start=$(date +%s%N)
status=0
timeout 60 bin/vmcp call --config examples/demo/vmcp.yaml investigate_incident \
  --arg incident_id=INC-1234 --arg time_range=2h --timeline >"$out" 2>"$err" || status=$?
wall=$(( ($(date +%s%N) - start) / 1000000 ))
cat "$err"
echo
echo "== Result (stdout of vmcp call)"
cat "$out"
if [[ $status -ne 0 ]]; then
  echo "run.sh: vmcp call exited $status" >&2
  exit "$status"
fi
echo

# The timeline lines read: "  STEP |bars| STARTms → ENDms  STATUS".
awk -v wall="$wall" '
  /^timeline \(total/ { gsub(/[^0-9]/, "", $3); total = $3 + 0 }
  $1 ~ /^fetch_/ {
    n = split($0, f, "|"); rest = f[n]
    gsub(/ms/, "", rest); split(rest, t, " ")
    s = t[1] + 0; e = t[3] + 0
    if (count == 0 || s > maxStart) maxStart = s
    if (count == 0 || e < minEnd) minEnd = e
    if (e - s > longest) longest = e - s
    sum += e - s; count++
  }
  END {
    if (count != 3) { print "run.sh: expected 3 fetch steps in the timeline, saw " count > "/dev/stderr"; exit 1 }
    printf "== Parallelism\n"
    printf "One after another the three fetches would take %dms; the longest alone took %dms.\n", sum, longest
    printf "All three were running together from %dms to %dms after the start.\n", maxStart, minEnd
    printf "The workflow took %dms in total (the whole vmcp call, with starting the five backends: %dms).\n", total, wall
    if (maxStart >= minEnd) { print "run.sh: the fetches did not overlap" > "/dev/stderr"; exit 1 }
    if (total >= sum + 350) { print "run.sh: the run took as long as running the fetches in sequence" > "/dev/stderr"; exit 1 }
    print "=> the fetches ran in parallel."
  }
' "$err"
echo

# The main job: vmcp serving the workflow as one MCP tool to a real MCP
# client. The MCP Inspector's CLI (from npm, pinned in package.json) starts
# `vmcp run` over stdio, calls investigate_incident, and prints the result.
inspector=node_modules/.bin/mcp-inspector
if [[ ! -x $inspector ]]; then
  echo "run.sh: $inspector is missing: run npm install (make demo does)" >&2
  exit 1
fi
echo "== Serving it over MCP: the MCP Inspector calls the investigate_incident tool of bin/vmcp run"
echo "   $inspector --cli --method tools/call --tool-name investigate_incident --tool-arg incident_id=INC-1234 -- bin/vmcp run --config examples/demo/vmcp.yaml"
result=$(timeout 90 "$inspector" --cli -q \
  --method tools/call --tool-name investigate_incident --tool-arg incident_id=INC-1234 \
  -- bin/vmcp run --config examples/demo/vmcp.yaml --log-level warn)
echo "$result"
if ! grep -q '"ticket": "OPS-' <<<"$result" || grep -q '"isError": true' <<<"$result"; then
  echo "run.sh: the MCP client did not get the workflow's result" >&2
  exit 1
fi
echo "=> one tool call from an MCP client ran the whole five-step workflow."
