#!/usr/bin/env bash
# compile-ratio.sh: the compile against goccy/go-yaml's own parse of the
# same file, in the same rounds (./compiler).
#
#   bench/compile-ratio.sh [rounds]     (default 6)
#
# Each round runs goccy's parse and vmcp's compile of one file of 1, 10
# and 50 workflows of 100 steps twice: as two sub-benchmarks one after
# the other (BenchmarkCompileVsGoccy, "blocks"), and in short turns of
# each, about a tenth of a second long, alternated
# (BenchmarkCompileVsGoccyAlternated, "alternated"), where a burst of load
# falls on both alike. The script prints per size and way
# the median ns/step of each and the median and range of the rounds'
# ratios (compile / goccy). The settled bound is 1.5. BENCHTIME (default
# 1s) is each benchmark's time.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-6}
case $rounds in '' | *[!0-9]* | 0) echo "usage: $0 [rounds]" >&2; exit 2 ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go test -c -o "$work/compiler.test" ./compiler)
for ((r = 1; r <= rounds; r++)); do
	echo "round $r/$rounds" >&2
	(cd "$root/compiler" && "$work/compiler.test" -test.run '^$' -test.bench '^BenchmarkCompileVsGoccy(Alternated)?$' \
		-test.benchtime "${BENCHTIME:-1s}") | sed "s/^/$r /" >>"$work/out"
done
# "round size side time ns/step" per result and side (the time is ns/op
# for blocks and ns/step for the alternated: only its ratio counts), then
# per size the medians and the per-round ratios.
awk '$2 ~ /^BenchmarkCompileVsGoccy\// {
	split($2, p, "/"); side = p[3]; sub(/-[0-9]+$/, "", side)
	for (i = 3; i <= NF; i++) { if ($i == "ns/op") op = $(i - 1); if ($i == "ns/step") st = $(i - 1) }
	print $1, p[2] " blocks", side, op, st
}
$2 ~ /^BenchmarkCompileVsGoccyAlternated\// {
	split($2, p, "/"); size = p[2]; sub(/-[0-9]+$/, "", size)
	for (i = 3; i <= NF; i++) { if ($i == "goccy-ns/step") g = $(i - 1); if ($i == "compile-ns/step") c = $(i - 1) }
	print $1, size " alternated", "goccy", g, g
	print $1, size " alternated", "compile", c, c
}' "$work/out" | sort -k2,2V -k3,3 -k1,1n | awk '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function flush(   i, n, g, c, r) {
	if (size == "") return
	n = 0
	for (i in gop) if (i in cop) { n++; g[n] = gst[i]; c[n] = cst[i]; r[n] = cop[i] / gop[i] }
	if (n == 0) return
	mg = median(g, n); mc = median(c, n); m = median(r, n)
	printf "%-25s goccy %8.0f ns/step   compile %8.0f ns/step   ratio %.2f (%.2f-%.2f)\n", size, mg, mc, m, r[1], r[n]
}
{
	key = $2 " " $3
	if (key != size) { flush(); size = key; delete gop; delete cop; delete gst; delete cst }
	if ($4 == "goccy") { gop[$1] = $5; gst[$1] = $6 } else { cop[$1] = $5; cst[$1] = $6 }
}
END { flush() }'
