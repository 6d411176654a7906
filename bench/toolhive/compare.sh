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
# each engine and the ratio of the medians (ToolHive / vmcp), then the
# per-round ratios (median and range), in wall time
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

# Per-round ratios: round r's ToolHive result over round r's vmcp result
# (the two ran one after the other), median and range over the rounds.
perround() { # file engine
	awk -v e="$2" '$1 ~ /^Benchmark[A-Za-z]+\// {
		n = $1; sub(/^Benchmark[A-Za-z]+\//, "", n); sub(/-[0-9]+$/, "", n); r[n]++
		for (i = 3; i <= NF; i++) { if ($i == "ns/step") w = $(i - 1); if ($i == "cpu-ns/step") c = $(i - 1) }
		print n, r[n], e, w, c
	}' "$1"
}
{
	perround "$work/vmcp.out" vmcp
	perround "$work/toolhive.out" toolhive
} | awk -v order="$shapes" '
function med(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ w[$1, $2, $3] = $4; c[$1, $2, $3] = $5; if ($2 > rounds[$1]) rounds[$1] = $2 }
END {
	printf "\nper-round ratios (ToolHive / vmcp), median (min-max)\n%-16s %22s %22s\n", "shape", "wall", "CPU"
	m = split(order, names, "|")
	for (k = 1; k <= m; k++) {
		s = names[k]; n = 0
		for (r = 1; r <= rounds[s]; r++) if (w[s, r, "vmcp"] > 0 && w[s, r, "toolhive"] > 0) {
			n++; wr[n] = w[s, r, "toolhive"] / w[s, r, "vmcp"]; cr[n] = c[s, r, "toolhive"] / c[s, r, "vmcp"]
		}
		if (!n) continue
		wm = med(wr, n); cm = med(cr, n)
		printf "%-16s %6.1fx (%4.1f-%4.1f) %6.1fx (%4.1f-%4.1f)\n", s, wm, wr[1], wr[n], cm, cr[1], cr[n]
	}
}'
