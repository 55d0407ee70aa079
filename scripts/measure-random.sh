#!/bin/sh
# Measures random search: throughput, runs to the first failure
# of each known class, replay agreement, shrink ratio, logjam failures.
# Figures for notes, never asserted by a test. Takes about 25 minutes on
# two cores; SCALE=0.1 sh scripts/measure-random.sh is a quick look.
#
#   sh scripts/measure-random.sh [OUTDIR]
set -eu
cd "$(dirname "$0")/.."
out=${1:-reports/measure-random}
scale=${SCALE:-1}
mkdir -p "$out"
bin=$(mktemp -d)/logjam
trap 'rm -rf "$(dirname "$bin")"' EXIT
echo "== building logjam (go build: silent, about a minute in a fresh clone)"
go build -o "$bin" ./cmd/logjam
n() { awk -v n="$1" -v s="$scale" 'BEGIN { v = int(n * s); if (v < 1) v = 1; print v }'; }

echo "== throughput: $(n 1000) runs, all policies, -j 2"
start=$(date +%s.%N)
"$bin" chaos -random "$(n 1000)" -seed 1 -j 2 -shrink-runs 0 >"$out/throughput.txt" || true
end=$(date +%s.%N)
awk -v a="$start" -v b="$end" -v r="$(n 1000)" 'BEGIN { printf "%d runs in %.1f s: %.0f runs per minute\n", r, b - a, r * 60 / (b - a) }' | tee "$out/throughput.sum"

echo "== runs to the first failure of each class: 10 seeds x $(n 1000) runs"
: >"$out/first.tsv"
for k in 1 2 3 4 5 6 7 8 9 10; do
	base=$((k * 100000))
	"$bin" chaos -random "$(n 1000)" -seed "$base" -shrink-runs 0 >"$out/first-$k.txt" || true
	# "  <class>  <count>  seeds: <seed> ...": runs to the first = first seed - base + 1
	sed -n 's/^  \(.*[^ 0-9]\) *[0-9][0-9]*  seeds: \([0-9]*\).*/\1\t\2/p' "$out/first-$k.txt" |
		awk -F'\t' -v b="$base" -v k="$k" '{ print k "\t" $1 "\t" ($2 - b + 1) }' >>"$out/first.tsv"
done
awk -F'\t' -v seeds=10 '
	{ runs[$2] = runs[$2] " " $3; found[$2]++ }
	END {
		printf "%-44s %5s %7s %5s\n", "class", "seeds", "median", "max"
		for (c in runs) {
			n = split(substr(runs[c], 2), v, " ")
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
			med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			printf "%-44s %2d/%d %7s %5s\n", c, n, seeds, med, v[n]
		}
	}' "$out/first.tsv" | sort | tee "$out/first.sum"

echo "== replay agreement: the first 100 failures of $(n 600) runs, 3 replays each"
"$bin" chaos -random "$(n 600)" -seed 424242 -shrink-runs 0 -replays 3 >"$out/replay.txt" || true
sed -n '/^replay agreement/,$p' "$out/replay.txt" | tee "$out/replay.sum"

echo "== shrink ratio: the first failure of each class in $(n 300) runs, 60 child runs each"
"$bin" chaos -random "$(n 300)" -seed 7 -shrink-runs 60 >"$out/shrink.txt" || true
sed -n 's/^  shrunk: *faults \([0-9]*\) -> \([0-9]*\).*/\1 \2/p' "$out/shrink.txt" |
	awk '{ b += $1; a += $2; n++ } END { if (n) printf "%d classes shrunk: %d faults before, %d after (ratio %.2f)\n", n, b, a, a / b }' | tee "$out/shrink.sum"

echo "== logjam and fixed: $(n 10000) runs"
"$bin" chaos -random "$(n 10000)" -seed 900000 -policy logjam,fixed -shrink-runs 20 >"$out/logjam.txt" || true
sed -n '1,8p' "$out/logjam.txt" | tee "$out/logjam.sum"
