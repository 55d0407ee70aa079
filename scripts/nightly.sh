#!/usr/bin/env bash
# The nightly chaos workflow's steps (.github/workflows/nightly.yml), runnable
# here one after another:
#
#   scripts/nightly.sh shard K/N        one shard of the matrix  -> reports/shards/shard-K
#   scripts/nightly.sh random BLOCK     one block of random runs -> reports/random/block-BLOCK
#   scripts/nightly.sh merge DIR...     the shards' reports      -> reports/merged
#   scripts/nightly.sh local [N]        N shards one after another, merged, then checked
#                                       against one unsharded run (same cells, same verdicts)
#
# LOGJAM_PROFILE (default nightly; CI here uses local) and LOGJAM_SEED (default:
# the time) are shared by every step, so the shards are shards of one run.
# Exit: 0 as expected, 1 some cell not as expected, 2 bad input or a broken run.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 2
export LOGJAM_PROFILE="${LOGJAM_PROFILE:-nightly}"
export LOGJAM_SEED="${LOGJAM_SEED:-$(( $(date +%s) % 1000000 ))}"
RANDOM_RUNS="${RANDOM_RUNS:-1000}"

usage() { echo "usage: scripts/nightly.sh shard K/N | random BLOCK | merge DIR... | local [N]" >&2; exit 2; }

bin_dir="$(mktemp -d)"
trap 'rm -rf "$bin_dir"' EXIT
logjam() {
  if [ ! -x "$bin_dir/logjam" ]; then
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
    # Block B plays the seeds LOGJAM_SEED + B*RANDOM_RUNS onwards (logjam
    # chaos -random N -seed S runs seeds S..S+N-1; issue 12).
    mkdir -p reports/random
    logjam chaos -random "$RANDOM_RUNS" -seed "$(( LOGJAM_SEED + $2 * RANDOM_RUNS ))" | tee "reports/random/block-$2.txt"
    ;;
  merge)
    shift
    [ $# -ge 1 ] || usage
    logjam report merge -out reports/merged "$@"
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
