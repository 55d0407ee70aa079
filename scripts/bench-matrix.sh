#!/usr/bin/env bash
# Measures the local matrix and random search, side by side with a base
# commit, in one run: figures for notes and the README, never asserted by
# a test.
#
#   scripts/bench-matrix.sh [-n RUNS] [-fresh RUNS] [-base COMMIT] [-readme]
#
# Each figure is the median of RUNS (default 5) runs of the base commit's
# checkout and of this tree, one after the other in turn (base, this, base,
# this, ...), so that a load that comes and goes (a shared machine) falls on
# both alike; the ratio is this tree's median over the base's. Measured:
#   ./logjam chaos                      warm (after one run that builds): wall, user + system CPU
#   ./logjam chaos -random 200 -seed 7  wall, CPU
#   ./logjam chaos -random 400 -seed 1 -shrink-runs 0   random runs a minute, without shrinking (one run)
#   ./logjam chaos -v in a fresh clone with empty module, build and suite
#     caches (GOMODCACHE, GOCACHE, XDG_CACHE_HOME): the wall time to its
#     first cell's line and to its end (the median of -fresh RUNS, default
#     2, each tree first in every other pair; each downloads the modules
#     and builds everything)
# and, from this tree's last matrix, the spec and cell counts and each
# family's seconds. -readme writes the same figures into README.md between
# its "bench-matrix" markers (the README's timings and counts come from
# here, never by hand). The base is a clone of this repository at COMMIT
# (default: 788a711, issue 36's base) in a temporary folder; both use a
# suite cache of their own for the warm runs (XDG_CACHE_HOME; the go
# command's build cache stays the user's), so another checkout's builds
# cannot evict an entry between two runs. This tree's fresh clone is of its
# HEAD (what is committed). Nothing is left running or behind.
set -u
cd "$(dirname "$0")/.." || exit 2
root=$(pwd)
runs=5 freshruns=2 base=788a711 readme=0
while [ $# -gt 0 ]; do
	case $1 in
	-n) runs=$2; shift 2 ;;
	-fresh) freshruns=$2; shift 2 ;;
	-base) base=$2; shift 2 ;;
	-readme) readme=1; shift ;;
	*) echo "usage: scripts/bench-matrix.sh [-n RUNS] [-fresh RUNS] [-base COMMIT] [-readme]" >&2; exit 2 ;;
	esac
done
case $runs in '' | *[!0-9]* | 0) echo "bench-matrix: -n wants a whole number of at least 1" >&2; exit 2 ;; esac
case $freshruns in '' | *[!0-9]* | 0) echo "bench-matrix: -fresh wants a whole number of at least 1" >&2; exit 2 ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-matrix.XXXXXX") || exit 2
# The module cache's files are read-only: make them writable to remove them.
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
GOCACHE=$(go env GOCACHE) || exit 2
export GOCACHE XDG_CACHE_HOME="$tmp/cache"
mkdir -p "$XDG_CACHE_HOME"

. scripts/bench-lib.sh
bench_base bench-matrix

# one TREE NAME ARGS...: one timed run; appends "wall user+sys user sys" to
# $tmp/NAME.times, its output to $tmp/NAME.out.
one() {
	local tree=$1 name=$2
	shift 2
	local TIMEFORMAT='%R %U %S' t
	t=$({ time (cd "$tree" && ./logjam "$@" >"$tmp/$name.out" 2>&1) ; } 2>&1 | tail -1)
	set -- $t
	awk -v r="$1" -v u="$2" -v s="$3" 'BEGIN { printf "%.2f %.2f %.2f %.2f\n", r, u + s, u, s }' >>"$tmp/$name.times"
}

# fresh COMMIT NAME: ./logjam chaos -v in a fresh clone of this repository
# at COMMIT, with empty module, build and suite caches; appends "total
# first" (seconds to its end and to its first cell's line) to
# $tmp/NAME.times, its output to $tmp/NAME.out.
fresh() {
	local commit=$1 name=$2 dir="$tmp/fresh" start first="" line now
	chmod -R u+w "$dir" 2>/dev/null
	rm -rf "$dir" && mkdir -p "$dir/mod" "$dir/build" "$dir/xdg" || return
	git clone -q --no-checkout "$root" "$dir/src" && git -C "$dir/src" checkout -q "$commit" || return
	start=$EPOCHREALTIME
	while IFS= read -r line; do
		printf '%s\n' "$line"
		if [ -z "$first" ] && [[ $line =~ ^logjam:\ \[[0-9]+/[0-9]+\]\  ]] && [[ $line != *"specs done"* ]]; then
			first=$EPOCHREALTIME
		fi
	done < <(cd "$dir/src" && GOMODCACHE="$dir/mod" GOCACHE="$dir/build" XDG_CACHE_HOME="$dir/xdg" ./logjam chaos -v 2>&1) >"$tmp/$name.out"
	now=$EPOCHREALTIME
	awk -v s="$start" -v e="$now" -v f="${first:-$now}" 'BEGIN { printf "%.1f %.1f\n", e - s, f - s }' >>"$tmp/$name.times"
	chmod -R u+w "$dir" 2>/dev/null
	rm -rf "$dir"
	sync
}

bench_start bench-matrix "$runs alternating runs of each"

echo "bench-matrix: building both trees' suites (one run each, not timed)" >&2
(cd "$tmp/base" && ./logjam chaos -out "$tmp/warm-base" >/dev/null 2>&1)
(cd "$root" && ./logjam chaos -out "$tmp/warm-this" >/dev/null 2>&1)

for i in $(seq "$runs"); do
	echo "bench-matrix: ./logjam chaos, run $i of $runs" >&2
	one "$tmp/base" chaos-base chaos -out "$tmp/m-base"
	one "$root" chaos-this chaos -out "$tmp/m-this"
done
for i in $(seq "$runs"); do
	echo "bench-matrix: ./logjam chaos -random 200 -seed 7, run $i of $runs" >&2
	one "$tmp/base" r200-base chaos -random 200 -seed 7
	one "$root" r200-this chaos -random 200 -seed 7
done
echo "bench-matrix: ./logjam chaos -random 400 -seed 1 -shrink-runs 0 (throughput)" >&2
one "$tmp/base" tp-base chaos -random 400 -seed 1 -shrink-runs 0
one "$root" tp-this chaos -random 400 -seed 1 -shrink-runs 0
head=$(git rev-parse HEAD)
# The second of two fresh runs was 15-20 s slower, whichever tree it was
# (the first one's gigabyte of caches being written back and removed):
# each tree goes first in every other pair, and the first run's writes are
# flushed (sync) before the next starts. Use an even -fresh.
for i in $(seq "$freshruns"); do
	echo "bench-matrix: ./logjam chaos -v in a fresh clone, empty caches, run $i of $freshruns" >&2
	if [ $((i % 2)) = 1 ]; then
		fresh "$base" fresh-base
		fresh "$head" fresh-this
	else
		fresh "$head" fresh-this
		fresh "$base" fresh-base
	fi
done

for f in chaos r200; do
	for t in base this; do
		eval "${f}_${t}_wall=\$(median \"\$tmp/$f-$t.times\" 1)"
		eval "${f}_${t}_cpu=\$(median \"\$tmp/$f-$t.times\" 2)"
		eval "${f}_${t}_user=\$(median \"\$tmp/$f-$t.times\" 3)"
		eval "${f}_${t}_sys=\$(median \"\$tmp/$f-$t.times\" 4)"
	done
done
fresh_base_wall=$(median "$tmp/fresh-base.times" 1) fresh_base_first=$(median "$tmp/fresh-base.times" 2)
fresh_this_wall=$(median "$tmp/fresh-this.times" 1) fresh_this_first=$(median "$tmp/fresh-this.times" 2)
tp_base=$(awk '{ printf "%.0f", 400 * 60 / $1 }' "$tmp/tp-base.times")
tp_this=$(awk '{ printf "%.0f", 400 * 60 / $1 }' "$tmp/tp-this.times")
same=$(cmp -s "$tmp/r200-base.out" "$tmp/r200-this.out" && echo "the same output" || echo "OUTPUTS DIFFER")
counts=$(sed -n 's/.*\[\([0-9]*\)\/[0-9]*\] specs done (\([0-9]*\) cells.*/\1 specs, \2 cells/p' "$tmp/chaos-this.out" | tail -1)
families=$(sed -n 's/^logjam: \([a-z0-9]*\) *[0-9]* cells,.* \([0-9.]*\) s$/\1 \2/p' "$tmp/chaos-this.out" | tr '\n' ',' | sed 's/,$//; s/,/, /g')
procs=$(sed -n 's/.*shard all, \(procs fitted[^)]*)\), \([0-9]* CPU slots\).*/\1, \2/p' "$tmp/chaos-this.out" | head -1)
endload=$(loadavg)

table() {
	echo "| figure (median of $runs alternating runs) | $basedesc | $this | ratio |"
	echo "| --- | --- | --- | --- |"
	echo "| \`./logjam chaos -v\`, fresh clone, empty module, build and suite caches: to the first cell's line (median of $freshruns) | $fresh_base_first s | $fresh_this_first s | $(ratio "$fresh_base_first" "$fresh_this_first") |"
	echo "| \`./logjam chaos -v\`, fresh clone, empty caches: to its end (median of $freshruns) | $fresh_base_wall s | $fresh_this_wall s | $(ratio "$fresh_base_wall" "$fresh_this_wall") |"
	echo "| \`./logjam chaos\`, warm: wall | $chaos_base_wall s | $chaos_this_wall s | $(ratio "$chaos_base_wall" "$chaos_this_wall") |"
	echo "| \`./logjam chaos\`, warm: CPU (user + system) | $chaos_base_cpu s ($chaos_base_user + $chaos_base_sys) | $chaos_this_cpu s ($chaos_this_user + $chaos_this_sys) | $(ratio "$chaos_base_cpu" "$chaos_this_cpu") |"
	echo "| \`./logjam chaos -random 200 -seed 7\`: wall | $r200_base_wall s | $r200_this_wall s | $(ratio "$r200_base_wall" "$r200_this_wall") |"
	echo "| \`./logjam chaos -random 200 -seed 7\`: CPU | $r200_base_cpu s | $r200_this_cpu s | $(ratio "$r200_base_cpu" "$r200_this_cpu") |"
	echo "| random runs a minute, without shrinking (\`-random 400 -seed 1 -shrink-runs 0\`, one run) | $tp_base | $tp_this | $(ratio "$tp_base" "$tp_this") |"
}

echo
echo "$cores cores, load $load at the start ($started), $endload at the end; $machine; base $basedesc, this tree $this"
table
echo
echo "this tree's matrix: $counts; $procs"
echo "its families' seconds (last run): $families"
echo "-random 200 -seed 7: $same"

if [ "$readme" = 1 ]; then
	{
		echo "<!-- bench-matrix: written by scripts/bench-matrix.sh -readme; rerun it, do not edit by hand -->"
		echo "Measured by \`scripts/bench-matrix.sh -n $runs\` on $started: $cores cores, load $load at the start and"
		echo "$endload at the end (a machine shared with other work; $machine), side by side with $basedesc (issue"
		echo "36's base; its local matrix replayed every column of the row schedules). This tree's matrix: $counts; $procs."
		echo "Its families' seconds, last run: $families."
		echo
		table
		echo "<!-- /bench-matrix -->"
	} >"$tmp/block"
	awk -v block="$tmp/block" '
		/^<!-- bench-matrix/ { while ((getline l < block) > 0) print l; skip = 1; next }
		/^<!-- \/bench-matrix -->/ { skip = 0; next }
		!skip { print }' README.md >"$tmp/README.md" && cp "$tmp/README.md" README.md
	grep -q '^<!-- bench-matrix' README.md || echo "bench-matrix: README.md has no bench-matrix markers: nothing written" >&2
fi
