#!/usr/bin/env bash
# vs.sh: one benchmark of this tree against the same benchmark at another
# revision, alternated in the same rounds, as per-round ratios.
#
#   bench/vs.sh REV PKG BENCH [rounds]     (default 6 rounds)
#   bench/vs.sh 325f719 ./runtime 'BenchmarkRun$' 6
#
# It builds PKG's test binary from this tree and from REV (checked out in
# a detached worktree under a temporary directory), then runs the rounds
# alternating (REV first, then this tree, in each round) so that load on a
# shared machine falls on both alike. For every sub-benchmark both report,
# it prints each build's median of ns/step and cpu-ns/step (or ns/op when
# a benchmark reports no ns/step) and the median and range of the
# per-round ratios this tree / REV: below 1 is faster.
#
# Environment: BENCHTIME (default 0.4s) is -test.benchtime; KEEP=dir keeps
# the raw outputs there; NEWBENCH is this tree's benchmark when it has
# another name (BenchmarkRunNoSchemas against REV's BenchmarkRun), its
# results then paired with REV's by their sub-benchmark names.
#
# Both test binaries' live heap at start is printed first (what every
# garbage collection marks again besides the benchmark's own data: under
# Go's minimum heap goal of 4 MB a cycle comes as often in both binaries,
# so a bigger start heap costs the benchmark more per cycle).
# BALLAST_KB=n gives REV's binary n KB more of live heap at start (a
# throwaway test file in its worktree, 128-byte objects with pointers),
# so that a difference in what the two test binaries link can be told
# from one in the code measured: set it to the difference printed.
set -euo pipefail

rev=${1:?usage: $0 REV PKG BENCH [rounds]}
pkg=${2:?usage: $0 REV PKG BENCH [rounds]}
bench=${3:?usage: $0 REV PKG BENCH [rounds]}
rounds=${4:-6}
benchtime=${BENCHTIME:-0.4s}
case $rounds in '' | *[!0-9]* | 0) echo "usage: $0 REV PKG BENCH [rounds]" >&2; exit 2 ;; esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
cleanup() {
	git -C "$root" worktree remove --force "$work/old" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

git -C "$root" worktree add -q --detach "$work/old" "$rev"
if [[ -n ${BALLAST_KB:-} ]]; then
	name=$(cd "$work/old" && go list -f '{{.Name}}' "$pkg")
	cat >"$work/old/$pkg/zz_vs_ballast_test.go" <<EOF
package $name

type vsBallastNode struct {
	next *vsBallastNode
	v    any
	pad  [13]uintptr
}

var vsBallast = func() *vsBallastNode {
	var head *vsBallastNode
	for i := 0; i < ${BALLAST_KB} * 1024 / 128; i++ {
		head = &vsBallastNode{next: head, v: i}
	}
	return head
}()
EOF
fi
echo "building $pkg at $rev" >&2
(cd "$work/old" && go test -c -o "$work/old.test" "$pkg")
echo "building $pkg in this tree ($(git -C "$root" rev-parse --short HEAD))" >&2
(cd "$root" && go test -c -o "$work/new.test" "$pkg")

# The live heap at start: a heap profile of every allocation, written
# after a collection, by a binary that runs nothing.
for side in old new; do
	dir=$root/$pkg
	[[ $side == old ]] && dir=$work/old/$pkg
	(cd "$dir" && GODEBUG=memprofilerate=1 "$work/$side.test" -test.run '^$' -test.memprofilerate 1 \
		-test.memprofile "$work/$side.heap" >/dev/null 2>&1)
	label=$rev${BALLAST_KB:+ + ${BALLAST_KB} KB ballast}
	[[ $side == new ]] && label="this tree"
	go tool pprof -sample_index=inuse_space -top -nodecount=1 "$work/$side.test" "$work/$side.heap" 2>/dev/null |
		sed -n "s/.* of \([0-9.]*[kMG]*B\) total.*/live heap at start, $label: \1/p" >&2
done

# A test binary runs in its package's directory, as go test runs it.
for ((r = 1; r <= rounds; r++)); do
	for side in old new; do
		echo "round $r/$rounds: $side" >&2
		dir=$root/$pkg b=${NEWBENCH:-$bench}
		[[ $side == old ]] && dir=$work/old/$pkg b=$bench
		(cd "$dir" && "$work/$side.test" -test.run '^$' -test.bench "$b" \
			-test.benchtime "$benchtime" -test.benchmem) | sed "s/^/$side $r /" >>"$work/out"
	done
done
if [[ -n ${KEEP:-} ]]; then
	mkdir -p "$KEEP" && cp "$work/out" "$KEEP/vs-$rev.out"
fi

# "side round name metric value" for each result line's ns/step,
# cpu-ns/step and ns/op; then per name and metric the medians and the
# per-round ratios.
awk '$3 ~ /^Benchmark/ {
	name = $3; sub(/-[0-9]+$/, "", name); sub(/^Benchmark[A-Za-z0-9_]*\//, "", name)
	perstep = 0
	for (i = 5; i <= NF; i++) if ($i == "ns/step") perstep = 1
	for (i = 5; i <= NF; i++) if ($i == "ns/step" || $i == "cpu-ns/step" || ($i == "ns/op" && !perstep)) print $1, $2, name, $i, $(i - 1)
}' "$work/out" | sort -k3,3 -k4,4 -k2,2n | awk -v rev="$rev" '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function flush(   n, i, no, nn, nr, ro, rn, rr) {
	if (key == "") return
	no = nn = nr = 0
	for (i in old) { ro[++no] = old[i]; if (i in new) rr[++nr] = new[i] / old[i] }
	for (i in new) rn[++nn] = new[i]
	if (nr == 0) return
	mo = median(ro, no); mn = median(rn, nn); m = median(rr, nr)
	printf "%-40s %-12s %12.0f %12.0f %6.2f (%.2f-%.2f)\n", kname, kmetric, mo, mn, m, rr[1], rr[nr]
}
BEGIN { printf "%-40s %-12s %12s %12s %s\n", "benchmark", "metric", rev, "this tree", "ratio (range)" }
{
	k = $3 SUBSEP $4
	if (k != key) { flush(); key = k; kname = $3; kmetric = $4; delete old; delete new }
	if ($1 == "old") old[$2] = $5; else new[$2] = $5
}
END { flush() }'
