#!/bin/sh
# stress-daemon.sh [N] - run the daemon family's widened cells (the window
# between a Python write dropping the GIL and its write(2) held open by the
# logjam/python-write-gil-dropped failpoint) N times (default 200) and print
# a table of every cell whose verdict ever differed from the expected one.
# LOAD=K also keeps K busy loops running for the whole run (a loaded
# machine); they end with the script. Exit status: 0 when nothing differed.
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
go build -o "$tmp/logjam" ./cmd/logjam
i=0
while [ "$i" -lt "$LOAD" ]; do
	sh -c 'while :; do :; done' &
	loadpids="$loadpids $!"
	i=$((i + 1))
done
runs=0 cells=0 bad=0 errors=0
start=$(date +%s)
i=1
while [ "$i" -le "$N" ]; do
	(cd suites/daemon && "$tmp/daemon.test" -ginkgo.focus="$FOCUS" -ginkgo.no-color \
		-ginkgo.json-report="$tmp/run.json" >"$tmp/run.txt" 2>&1) || true
	if "$tmp/logjam" report "$tmp/run.json" >"$tmp/matrix.txt" 2>&1 || [ -s "$tmp/matrix.txt" ]; then
		n=$(sed -n 's/^\([0-9]*\) cells, .*/\1/p' "$tmp/matrix.txt")
		cells=$((cells + ${n:-0}))
		sed -n 's/^rerun: .*--focus .\(.*\). .*/\1/p' "$tmp/matrix.txt" >>"$tmp/differed"
	else
		errors=$((errors + 1))
		cp "$tmp/run.txt" "$tmp/error-$i.txt"
	fi
	runs=$((runs + 1))
	i=$((i + 1))
done
end=$(date +%s)
touch "$tmp/differed"
bad=$(wc -l <"$tmp/differed" | tr -d ' ')
echo "stress-daemon: $runs runs of the cells matching '$FOCUS' (LOAD=$LOAD busy loops) in $((end - start))s: $cells cells run, $bad verdicts differed, $errors runs without a report"
if [ "$bad" -gt 0 ]; then
	echo "times  cell"
	sed 's/\\//g' "$tmp/differed" | sort | uniq -c | sort -rn
fi
[ "$bad" -eq 0 ] && [ "$errors" -eq 0 ]
