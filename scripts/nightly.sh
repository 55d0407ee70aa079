#!/usr/bin/env bash
# The nightly chaos workflow's steps (.github/workflows/nightly.yml), runnable
# here one after another:
#
#   scripts/nightly.sh shard K/N        one shard of the matrix  -> reports/shards/shard-K
#   scripts/nightly.sh random BLOCK     one block of random runs -> reports/random/block-BLOCK
#   scripts/nightly.sh merge DIR... [-- REAL_DIR...]
#                                       every shard's reports    -> reports/merged (refused, exit 2,
#                                       unless every K/N of one run is there exactly once), with the
#                                       real columns' cells (each REAL_DIR a calibrate job's report;
#                                       one without its calibration.json is left out, and said so)
#   scripts/nightly.sh calibrate NAME   the real column on the python3 found here -> reports/calibration/NAME
#   scripts/nightly.sh local [N]        N shards one after another, merged, then checked
#                                       against one unsharded run (same cells, same verdicts)
#   scripts/nightly.sh render DIR       a reports folder from another runner, re-rendered by logjam
#                                       (its received matrix.md removed first: someone else's text)
#
# LOGJAM_PROFILE (default nightly; CI here uses local), LOGJAM_SEED (default:
# the time) and LOGJAM_RUN_ID (default: profile, seed and the time) are shared
# by every step, so the shards are shards of one run.
# Exit: 0 as expected, 1 some cell not as expected, 2 bad input or a broken run.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 2
export LOGJAM_PROFILE="${LOGJAM_PROFILE:-nightly}"
export LOGJAM_SEED="${LOGJAM_SEED:-$(( $(date +%s) % 1000000 ))}"
export LOGJAM_RUN_ID="${LOGJAM_RUN_ID:-$LOGJAM_PROFILE-$LOGJAM_SEED-$(date +%s)}"
RANDOM_RUNS="${RANDOM_RUNS:-1000}"

usage() { echo "usage: scripts/nightly.sh shard K/N | random BLOCK | merge DIR... [-- REAL_DIR...] | calibrate NAME | local [N] | render DIR" >&2; exit 2; }

bin_dir="$(mktemp -d)"
trap 'rm -rf "$bin_dir"' EXIT
logjam() {
  if [ ! -x "$bin_dir/logjam" ]; then
    echo "nightly: building logjam (go build: silent, about a minute in a fresh clone)" >&2
    go build -o "$bin_dir/logjam" ./cmd/logjam || exit 2
  fi
  "$bin_dir/logjam" "$@"
}

# worst keeps the worse of two exit statuses (2 > 1 > 0).
worst() { if [ "$1" -ge "$2" ]; then echo "$1"; else echo "$2"; fi; }

shard() {
  local k="${1%/*}"
  logjam chaos -shard "$1" -out "reports/shards/shard-$k"
}

case "${1:-}" in
  shard)
    [ $# -eq 2 ] || usage
    shard "$2"
    ;;
  random)
    [ $# -eq 2 ] || usage
    # Block B plays RANDOM_RUNS random schedules from seed LOGJAM_SEED +
    # B*RANDOM_RUNS (the random family's runs only); its reports and every
    # failing run's evidence go to reports/random/block-B.
    out="reports/random/block-$2"
    mkdir -p "$out"
    LOGJAM_RANDOM_RUNS="$RANDOM_RUNS" LOGJAM_RANDOM_SEED="$(( LOGJAM_SEED + $2 * RANDOM_RUNS ))" \
      logjam chaos -focus 'R seed=' -run-id "$LOGJAM_RUN_ID-random-$2" -out "$out" | tee "$out/table.txt"
    ;;
  calibrate)
    # The real column where this machine's CI has no interpreter or OS of
    # its own (macOS's poll rows, CPython 3.13.8 and later): every row on
    # the python3 on PATH, both bufferings of sys.stderr; the report (the matrix
    # with its real column) goes to reports/calibration/NAME.
    [ $# -eq 2 ] || usage
    case "$2" in *[!a-z0-9.-]*|"") usage ;; esac
    out="reports/calibration/$2"
    mkdir -p "$out"
    LOGJAM_CALIBRATE_PY=default LOGJAM_CALIBRATE_REPORT="$root/$out/calibration.json" \
      go tool ginkgo --timeout 2h --label-filter calibrate ./calibrate
    ;;
  merge)
    shift
    shards=() reals=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do shards+=("$1"); shift; done
    [ $# -gt 0 ] && shift # the --
    for d in "$@"; do
      if [ -f "$d/calibration.json" ]; then
        reals+=(-real "$d")
      else
        echo "nightly: $d holds no calibration.json (its job broke before writing one): left out of the merged matrix" >&2
      fi
    done
    [ "${#shards[@]}" -ge 1 ] || usage
    logjam report merge -out reports/merged "${reals[@]}" "${shards[@]}"
    ;;
  render)
    # The job summary shows each random block's matrix.md: the one the block
    # uploaded is someone else's text, so logjam writes it again from the
    # block's matrix.json and run.json (read as untrusted input, every field
    # escaped); a folder logjam refuses is left with no matrix.md.
    [ $# -eq 2 ] || usage
    rm -f "$2/matrix.md"
    logjam report "$2"
    ;;
  local)
    n="${2:-4}"
    rm -rf reports/shards reports/merged reports/whole
    status=0
    start=$(date +%s)
    mkdir -p reports/shards
    for k in $(seq 1 "$n"); do
      shard "$k/$n" > "reports/shards/shard-$k.log"; s=$?
      echo "nightly: shard $k/$n: exit $s ($(grep -c . "reports/shards/shard-$k.log") lines in reports/shards/shard-$k.log)"
      [ "$s" -eq 2 ] && exit 2
      status=$(worst "$status" "$s")
    done
    sharded=$(( $(date +%s) - start ))
    dirs=()
    for k in $(seq 1 "$n"); do dirs+=("reports/shards/shard-$k"); done
    logjam report merge -out reports/merged "${dirs[@]}" >/dev/null; s=$?
    [ "$s" -eq 2 ] && exit 2
    start=$(date +%s)
    logjam chaos -out reports/whole > reports/whole.log; s=$?
    [ "$s" -eq 2 ] && exit 2
    whole=$(( $(date +%s) - start ))
    echo "nightly: $n shards one after another took ${sharded} s; one unsharded run took ${whole} s"
    logjam report diff reports/whole reports/merged || exit 1
    exit "$status"
    ;;
  *) usage ;;
esac
