#!/usr/bin/env bash
# Runs every fuzz target of the module (each `func FuzzX` in a _test.go
# file, found with git grep) for FUZZTIME each, one after the other, and
# prints a summary line per target: its package, the executions, and the
# rate. A failure stops the run; the crasher is then in the package's
# testdata/fuzz/FuzzX/ (go test prints the command that replays it).
#
# FUZZMINIMIZE bounds the minimizing of each new interesting input (go
# test's -fuzzminimizetime; its default, 60s, is spent in full on an input
# of a few KB, because Go's minimizer is quadratic in the input's length,
# and a worker fuzzes nothing meanwhile). FUZZFLAGS is passed on to go test
# (for example -parallel 1 on a busy machine).
#
#   FUZZTIME=20s FUZZMINIMIZE=500x FUZZFLAGS= scripts/fuzz.sh [PATTERN]
#
# With PATTERN, only the targets whose name matches it (grep -E) run.
# With --list, it prints the targets ("dir name" lines) and runs none.
set -euo pipefail

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-20s}
FUZZMINIMIZE=${FUZZMINIMIZE:-500x}
FUZZFLAGS=${FUZZFLAGS:-}
list=false
if [ "${1:-}" = --list ]; then
  list=true
  shift
fi
pattern=${1:-.}

cd "$(dirname "$0")/.."
targets=$(git grep --untracked -n -E '^func Fuzz[A-Za-z0-9_]*\([A-Za-z_][A-Za-z0-9_]* \*testing\.F\)' -- '*_test.go' |
  sed -E 's|^(.*)/[^/]*_test\.go:[0-9]+:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|; s|^[^/]*_test\.go:[0-9]+:func (Fuzz[A-Za-z0-9_]*)\(.*|. \1|' |
  LC_ALL=C sort | grep -E " ($pattern)" || true)
if [ -z "$targets" ]; then
  echo "fuzz.sh: no fuzz target matches $pattern" >&2
  exit 1
fi
if $list; then
  echo "$targets"
  exit 0
fi

summary=""
while read -r dir name; do
  echo "== $name (./$dir, $FUZZTIME)"
  log=$(mktemp)
  # shellcheck disable=SC2086 # FUZZFLAGS is a list of flags
  if ! "$GO" test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZE" $FUZZFLAGS "./$dir" 2>&1 | tee "$log"; then
    rm -f "$log"
    exit 1
  fi
  # The last progress line's rate is of its last interval only (often 0
  # at the end); the summary gives the average over the run.
  last=$(grep -E '^fuzz: elapsed: [0-9]+s, execs: ' "$log" | tail -1 |
    sed -E 's/^fuzz: elapsed: ([0-9]+)s, execs: ([0-9]+) \([0-9]+\/sec\), new interesting: ([0-9]+).*/\1 \2 \3/' || true)
  rm -f "$log"
  if [ -n "$last" ]; then
    read -r secs execs interesting <<<"$last"
    line=$(printf '%9d execs in %3ds (%6d/s), %4d new interesting' "$execs" "$secs" "$((execs / (secs > 0 ? secs : 1)))" "$interesting")
  else
    line="no fuzzing (still gathering the baseline coverage: raise FUZZTIME)"
  fi
  summary+="$(printf '%-18s %-17s %s' "$name" "./$dir" "$line")"$'\n'
done <<<"$targets"
printf '\n%s' "$summary"
