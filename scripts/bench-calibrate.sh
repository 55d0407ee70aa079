#!/usr/bin/env bash
# Measures the real column (the calibrate suite), side by side with a base
# commit, in one run: figures for notes, never asserted by a test.
#
#   scripts/bench-calibrate.sh [-n RUNS] [-base COMMIT]
#
# Two figures, each RUNS times (default 1) for the base commit's checkout
# and for this tree, one after the other in turn (base, this, base, ...), so
# that a load that comes and goes (a shared machine) falls on both alike:
#   make calibrate's command   every interpreter found, both bufferings
#   CI's calibrate step        LOGJAM_CALIBRATE_PY=default (python3 only)
# each as its wall time (the go command's build of the test binary
# included) and the seconds the suite reports ("N s wall" in its report),
# with the real cells that agreed with the model out of those played. The
# base is a clone of this repository at COMMIT (default 41bcc08, before the
# real cells were played side by side) in a temporary folder. One run of
# each tree on row C1 first builds their test binaries and extensions, not
# timed. Nothing is left running or behind.
set -u
cd "$(dirname "$0")/.." || exit 2
root=$(pwd)
runs=1 base=41bcc08
while [ $# -gt 0 ]; do
	case $1 in
	-n) runs=$2; shift 2 ;;
	-base) base=$2; shift 2 ;;
	*) echo "usage: scripts/bench-calibrate.sh [-n RUNS] [-base COMMIT]" >&2; exit 2 ;;
	esac
done
case $runs in '' | *[!0-9]* | 0) echo "bench-calibrate: -n wants a whole number of at least 1" >&2; exit 2 ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-calibrate.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

. scripts/bench-lib.sh
bench_base bench-calibrate

# one TREE NAME [VAR=VALUE...]: one timed run of the calibrate suite;
# appends "wall reported agreed played" to $tmp/NAME.times.
one() {
	local tree=$1 name=$2 n=$(($(cat "$tmp/$2.n" 2>/dev/null || echo 0) + 1))
	shift 2
	echo "$n" >"$tmp/$name.n"
	local out="$tmp/$name.$n" TIMEFORMAT='%R' t
	t=$({ time (cd "$tree" && env "$@" LOGJAM_CALIBRATE_REPORT="$out.json" LOGJAM_REPORTS="$out.reports" \
		go tool ginkgo --timeout 4h --label-filter calibrate ./calibrate >"$out.log" 2>&1); } 2>&1 | tail -1)
	awk -v wall="$t" '
		/^calibrate: interpreters .* s wall$/ { rep = $(NF - 2) }
		/^  python [0-9.]+: [0-9]+ real cells, [0-9]+ agree/ { played += $3; agreed += $6 }
		END { printf "%.1f %s %d %d\n", wall, (rep == "" ? "-" : rep), agreed, played }' "$out.txt" >>"$tmp/$name.times"
}

bench_start bench-calibrate "$runs alternating run(s) of each"

echo "bench-calibrate: building both trees' test binaries and extensions (row C1, not timed)" >&2
for tree in "$tmp/base" "$root"; do
	(cd "$tree" && LOGJAM_CALIBRATE_ROWS=C1 LOGJAM_CALIBRATE_REPORT="$tmp/warm.json" LOGJAM_REPORTS="$tmp/warm" \
		go tool ginkgo --label-filter calibrate ./calibrate >/dev/null 2>&1)
done

for i in $(seq "$runs"); do
	echo "bench-calibrate: every interpreter, run $i of $runs" >&2
	one "$tmp/base" all-base LOGJAM_CALIBRATE_PY=
	one "$root" all-this LOGJAM_CALIBRATE_PY=
	echo "bench-calibrate: python3 only (CI's step), run $i of $runs" >&2
	one "$tmp/base" ci-base LOGJAM_CALIBRATE_PY=default
	one "$root" ci-this LOGJAM_CALIBRATE_PY=default
done

row() { # LABEL NAME COLUMN UNIT
	local b t
	b=$(median "$tmp/$2-base.times" "$3") t=$(median "$tmp/$2-this.times" "$3")
	echo "| $1 | $b $4 | $t $4 | $(ratio "$b" "$t") |"
}
agree() { awk '{ a += $3; p += $4 } END { printf "%d of %d", a, p }' "$tmp/$1.times"; }
end_load=$(loadavg)
echo
echo "Measured by \`scripts/bench-calibrate.sh\` on $started: $cores cores, load $load at the start and $end_load at the end ($machine), side by side with $basedesc (the base); medians of $runs alternating run(s)."
echo
echo "| figure | $basedesc | $this | ratio |"
echo "| --- | --- | --- | --- |"
row '`make calibrate` (every interpreter): wall' all 1 s
row '`make calibrate`: seconds the suite reports' all 2 s
row 'CI'"'"'s step (`LOGJAM_CALIBRATE_PY=default`): wall' ci 1 s
row 'CI'"'"'s step: seconds the suite reports' ci 2 s
echo
echo "Real cells in agreement with the model, every run: base $(agree all-base) and $(agree ci-base); this tree $(agree all-this) and $(agree ci-this)."
