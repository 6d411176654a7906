#!/usr/bin/env bash
# compare.sh: vmcp (BenchmarkVMCP in bench/thvshapes) against ToolHive's
# composite-tool engine (BenchmarkToolHive here), both loading the same six
# shape files (shapes/*.yaml, one vMCP config each), side by side.
#
#   bench/toolhive/compare.sh [rounds]        (default 4)
#
# It builds both test binaries once, then runs the rounds alternating
# (vmcp, then ToolHive, in each round) so that load on a shared machine
# falls on both alike, and prints per shape the min and median ns/step of
# each engine and the ratio of the medians (ToolHive / vmcp), in wall time
# and in CPU time.
#
# Environment: BENCHTIME (default 0.5s) is each benchmark's -test.benchtime;
# TH_GOTOOLCHAIN is the GOTOOLCHAIN that builds the ToolHive side (default:
# the toolchain line of bench/toolhive/go.mod, else local); KEEP=dir keeps
# the raw benchmark output there.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-4}
benchtime=${BENCHTIME:-0.5s}
shapes='chain10|chain100|wide100|fanout3_fanin1|diamond|foreach100'

case $rounds in '' | *[!0-9]* | 0) echo "usage: $0 [rounds]" >&2; exit 2 ;; esac

th_toolchain=${TH_GOTOOLCHAIN:-$(awk '$1 == "toolchain" { print $2 }' "$here/go.mod")}
th_toolchain=${th_toolchain:-local}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "building vmcp ./bench/thvshapes test binary ($(cd "$root" && go version))" >&2
(cd "$root" && go test -c -o "$work/vmcp.test" ./bench/thvshapes)
echo "building bench/toolhive test binary ($(cd "$here" && GOTOOLCHAIN=$th_toolchain go version))" >&2
(cd "$here" && GOTOOLCHAIN=$th_toolchain go test -c -o "$work/toolhive.test" .)
th_version=$(cd "$here" && GOTOOLCHAIN=$th_toolchain go list -m -f '{{.Version}}' github.com/stacklok/toolhive)

# A test binary runs in its package's directory, as go test runs it.
for ((r = 1; r <= rounds; r++)); do
	echo "round $r/$rounds: vmcp" >&2
	(cd "$root/bench/thvshapes" && "$work/vmcp.test" -test.run '^$' \
		-test.bench "^BenchmarkVMCP\$/^($shapes)\$" -test.benchtime "$benchtime") >>"$work/vmcp.out"
	echo "round $r/$rounds: ToolHive" >&2
	(cd "$here" && "$work/toolhive.test" -test.run '^$' \
		-test.bench "^BenchmarkToolHive\$/^($shapes)\$" -test.benchtime "$benchtime") >>"$work/toolhive.out"
done

if [[ -n ${KEEP:-} ]]; then
	mkdir -p "$KEEP"
	cp "$work/vmcp.out" "$work/toolhive.out" "$KEEP/"
fi

# "engine shape metric value", one line per metric of a benchmark result
# (ns/step: wall time; cpu-ns/step: the process's CPU time, its garbage
# collector and every thread included). A result line is
# "BenchmarkRun/chain10-2  N  x ns/op ... y ns/step ..."; the -2 is GOMAXPROCS.
extract() {
	awk -v engine="$1" '$1 ~ /^Benchmark[A-Za-z]+\// {
		name = $1
		sub(/^Benchmark[A-Za-z]+\//, "", name)
		sub(/-[0-9]+$/, "", name)
		for (i = 3; i <= NF; i++) if ($i == "ns/step" || $i == "cpu-ns/step") print engine, name, $i, $(i - 1)
	}' "$2"
}

{
	extract vmcp "$work/vmcp.out"
	extract toolhive "$work/toolhive.out"
} | sort -k1,1 -k2,2 -k3,3 -k4,4g | awk -v order="$shapes" -v rounds="$rounds" \
	-v benchtime="$benchtime" -v thv="$th_version" '
function median(key,   n) {
	n = cnt[key]
	if (n % 2) return val[key, (n + 1) / 2]
	return (val[key, n / 2] + val[key, n / 2 + 1]) / 2
}
{
	key = $1 SUBSEP $2 SUBSEP $3
	val[key, ++cnt[key]] = $4 + 0
}
END {
	printf "%-16s %10s %10s %12s %12s %7s   %10s %12s %7s\n", "", "vmcp", "vmcp", "ToolHive", "ToolHive", "wall", "vmcp CPU", "ToolHive CPU", "CPU"
	printf "%-16s %10s %10s %12s %12s %7s   %10s %12s %7s\n", "shape", "min", "median", "min", "median", "ratio", "median", "median", "ratio"
	n = split(order, names, "|")
	for (i = 1; i <= n; i++) {
		s = names[i]
		v = "vmcp" SUBSEP s SUBSEP "ns/step"
		t = "toolhive" SUBSEP s SUBSEP "ns/step"
		vc = "vmcp" SUBSEP s SUBSEP "cpu-ns/step"
		tc = "toolhive" SUBSEP s SUBSEP "cpu-ns/step"
		if (!cnt[v] || !cnt[t] || !cnt[vc] || !cnt[tc]) {
			printf "%-16s missing results (vmcp %d, ToolHive %d)\n", s, cnt[v], cnt[t]
			bad = 1
			continue
		}
		vm = median(v)
		tm = median(t)
		vcm = median(vc)
		tcm = median(tc)
		printf "%-16s %10.0f %10.0f %12.0f %12.0f %6.1fx   %10.0f %12.0f %6.1fx\n", s, val[v, 1], vm, val[t, 1], tm, tm / vm, vcm, tcm, tcm / vcm
	}
	printf "ns per step (per backend call); ratios of the medians; %d rounds of -test.benchtime %s each; ToolHive %s\n", rounds, benchtime, thv
	exit bad
}'
