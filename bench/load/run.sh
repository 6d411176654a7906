#!/usr/bin/env bash
# The load of docs/performance.md: 200 MCP clients for 30 seconds, 30% of
# the calls MCP tasks, against a real `vmcp run` with the server's caps on,
# then the wait for the server's goroutines and memory to return to
# baseline (about three minutes in all). Flags go to the program
# (`bench/load/run.sh -clients 50 -duration 10s`; -h lists them). It exits
# non-zero when a call failed or the server did not return to baseline.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec nice -n 10 go run ./bench/load "$@"
