#!/usr/bin/env bash
# compare.sh: the CMDB sync in the first wave's dialect
# (cmdb_sync_firstwave.yaml), run by `vmcp call` from this tree and from
# another revision (default 325f719, the first wave's last build),
# alternated in the same rounds, against the same two fake servers.
#
#   bench/cmdb/firstwave/compare.sh [REV] [rounds] [parallelisms]
#   bench/cmdb/firstwave/compare.sh 325f719 6 "10 50"
#
# Parallelism N is server.maxParallel: N, the limit on backend calls in
# flight (the workflow and its loops allow 50). The servers' latencies are
# CMDB_K8S_LATENCY (default 15ms) per list and CMDB_GRAPH_LATENCY (default
# 3ms) per write. Each run's servers append every call to a log
# (examples/cmdb/fake, CMDB_CALL_LOG); "in flight" is the calls' summed
# duration over the span from the first call's start to the last one's
# end. Each round runs both builds at each parallelism, the older first in
# odd rounds and this tree first in even ones, checks that both built the
# same graph, and the summary gives per parallelism each build's median
# wall time and calls in flight and the median and range of the per-round
# ratios this tree / REV (below 1 is faster).
#
# Environment: KEEP=dir keeps the per-run lines there.
set -euo pipefail

rev=${1:-325f719}
rounds=${2:-6}
parallelisms=${3:-10 50}
case $rounds in '' | *[!0-9]* | 0) echo "usage: $0 [REV] [rounds] [parallelisms]" >&2; exit 2 ;; esac
export CMDB_K8S_LATENCY=${CMDB_K8S_LATENCY:-15ms} CMDB_GRAPH_LATENCY=${CMDB_GRAPH_LATENCY:-3ms}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
cleanup() {
	git -C "$root" worktree remove --force "$work/src" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

git -C "$root" worktree add -q --detach "$work/src" "$rev"
echo "building vmcp at $rev and in this tree ($(git -C "$root" rev-parse --short HEAD)), and the servers" >&2
(cd "$work/src" && go build -o "$work/old" ./cmd/vmcp)
(cd "$root" && go build -o "$work/new" ./cmd/vmcp &&
	go build -o "$work/cmdb-k8s" ./examples/cmdb/k8s && go build -o "$work/cmdb-graph" ./examples/cmdb/graph)

for p in $parallelisms; do
	cat >"$work/vmcp-$p.yaml" <<EOF
backends:
  k8s:   {command: $work/cmdb-k8s}
  graph: {command: $work/cmdb-graph}
workflows:
  - $here/cmdb_sync_firstwave.yaml
server:
  transport: stdio
  maxParallel: $p
EOF
done

# run SIDE P ROUND: one sync; appends "p side round wall-ms in-flight calls".
run() {
	local side=$1 p=$2 r=$3 start end
	rm -f "$work/calls.log"
	start=$(date +%s%N)
	CMDB_CALL_LOG=$work/calls.log "$work/$side" call --config "$work/vmcp-$p.yaml" cmdb_sync_firstwave \
		>"$work/$side.json" 2>"$work/$side.err" || { cat "$work/$side.err" >&2; exit 1; }
	end=$(date +%s%N)
	awk -v p="$p" -v side="$side" -v r="$r" -v wall=$(((end - start) / 1000)) '
		{ busy += $2 - $1; if (first == "" || $1 < first) first = $1; if ($2 > last) last = $2 }
		END { printf "%s %s %s %.1f %.2f %d\n", p, side, r, wall / 1000, busy / (last - first), NR }
	' "$work/calls.log" >>"$work/out"
}

for ((r = 1; r <= rounds; r++)); do
	for p in $parallelisms; do
		order="old new"
		((r % 2)) || order="new old"
		for side in $order; do
			echo "round $r/$rounds: parallelism $p, $side" >&2
			run "$side" "$p" "$r"
		done
		cmp -s "$work/old.json" "$work/new.json" || {
			echo "the two builds returned different graphs:" >&2
			cat "$work/old.json" "$work/new.json" >&2
			exit 1
		}
	done
done
[[ -n ${KEEP:-} ]] && mkdir -p "$KEEP" && cp "$work/out" "$KEEP/firstwave-$rev.out"

graph=$(tr -d ' \n' <"$work/new.json" | grep -o '"nodes":[0-9]*,"relationships":[0-9]*')
echo "graph: $graph (both builds); $(awk 'NR == 1 { print $6 }' "$work/out") calls per run; latencies $CMDB_K8S_LATENCY / $CMDB_GRAPH_LATENCY"
sort -k1,1n -k3,3n "$work/out" | awk -v rev="$rev" '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ wall[$1, $2, $3] = $4; flight[$1, $2, $3] = $5; if (!($1 in seen)) { seen[$1] = 1; ps[++np] = $1 } ; if ($3 > nr) nr = $3 }
END {
	printf "%-12s %14s %14s %16s %16s %s\n", "parallelism", rev " ms", "this tree ms", rev " in flight", "this in flight", "ratio (range)"
	for (i = 1; i <= np; i++) {
		p = ps[i]
		delete wo; delete wn; delete fo; delete fn; delete rr
		for (r = 1; r <= nr; r++) {
			wo[r] = wall[p, "old", r]; wn[r] = wall[p, "new", r]; fo[r] = flight[p, "old", r]; fn[r] = flight[p, "new", r]
			rr[r] = wall[p, "new", r] / wall[p, "old", r]
		}
		m = median(rr, nr)
		printf "%-12s %14.0f %14.0f %16.1f %16.1f %.2f (%.2f-%.2f)\n", p, median(wo, nr), median(wn, nr), median(fo, nr), median(fn, nr), m, rr[1], rr[nr]
	}
}'
