#!/bin/sh
# stress-daemon.sh [N] - run the daemon family's widened cells (the window
# between a Python write dropping the GIL and its write(2) held open by the
# logjam/python-write-gil-dropped failpoint) N times (default 200) and print
# a table of every cell whose verdict ever differed from the expected one.
# LOAD=K also keeps K busy loops running for the whole run (a loaded
# machine); they end with the script. FOCUS picks other cells.
# Exit status: 0 when every run reported every cell, as expected.
set -eu
N=${1:-200}
LOAD=${LOAD:-0}
FOCUS=${FOCUS:-fp=python-write-gil-dropped}
case $N in '' | *[!0-9]*) echo "stress-daemon.sh: N must be a whole number, got '$N'" >&2; exit 2 ;; esac
case $LOAD in '' | *[!0-9]*) echo "stress-daemon.sh: LOAD must be a whole number, got '$LOAD'" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
loadpids=
cleanup() {
	for p in $loadpids; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$root"
go test -c -o "$tmp/daemon.test" ./suites/daemon
i=0
while [ "$i" -lt "$LOAD" ]; do
	sh -c 'while :; do :; done' &
	loadpids="$loadpids $!"
	i=$((i + 1))
done
: >"$tmp/cells"
start=$(date +%s)
first=
short=0
i=1
while [ "$i" -le "$N" ]; do
	rm -f "$tmp/run.json"
	(cd suites/daemon && "$tmp/daemon.test" -ginkgo.focus="$FOCUS" -ginkgo.no-color \
		-ginkgo.json-report="$tmp/run.json" >"$tmp/run.txt" 2>&1) || true
	# One line per cell of the Ginkgo report: expected observed name.
	sed -n 's/.*"AsJSON": "{\\"id\\":\\"[^\\]*\\",\\"name\\":\\"\(.*\)\\",\\"family\\":.*\\"expected\\":\\"\([A-Z]*\)\\",\\"observed\\":\\"\([A-Z]*\)\\".*/\2 \3 \1/p' \
		"$tmp/run.json" 2>/dev/null >"$tmp/run.cells" || true
	n=$(wc -l <"$tmp/run.cells" | tr -d ' ')
	first=${first:-$n}
	if [ "$n" -ne "$first" ] || [ "$n" -eq 0 ]; then
		short=$((short + 1))
		cp "$tmp/run.txt" "$root/stress-daemon-run-$i.txt"
	fi
	cat "$tmp/run.cells" >>"$tmp/cells"
	i=$((i + 1))
done
end=$(date +%s)
cells=$(wc -l <"$tmp/cells" | tr -d ' ')
awk '$1 != $2' "$tmp/cells" >"$tmp/differed"
bad=$(wc -l <"$tmp/differed" | tr -d ' ')
echo "stress-daemon: $N runs of the cells matching '$FOCUS' (LOAD=$LOAD busy loops) in $((end - start))s: $cells cells run ($first a run), $bad verdicts differed, $short runs short of cells"
if [ "$bad" -gt 0 ]; then
	echo "times  expected observed cell"
	sort "$tmp/differed" | uniq -c | sort -rn
fi
[ "$bad" -eq 0 ] && [ "$short" -eq 0 ] && [ "$cells" -gt 0 ]
