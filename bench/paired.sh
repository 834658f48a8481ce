#!/bin/bash
# Whole-process times of two or more builds, their runs alternated so that a host whose speed drifts
# slows each build alike: each build runs ARGS (output to /dev/null) RUNS times, in turn with the
# others, and is reported with its fastest and median wall time, its median CPU time (user + sys)
# and its largest peak RSS, from /usr/bin/time.
#
#   bench/paired.sh RUNS 'ARGS' BINARY...
#   bench/paired.sh 7 'estimate --format json g1m.json --target h13' /tmp/anec.before build/tools/anec
set -euo pipefail
if [ $# -lt 3 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 RUNS 'ARGS' BINARY..." >&2
  exit 2
fi
runs=$1 args=$2
shift 2
for b in "$@"; do
  [ -x "$b" ] || { echo "$0: $b is not an executable" >&2; exit 2; }
done
samples=$(mktemp)
trap 'rm -f "$samples" "$samples.t"' EXIT
for ((k = 0; k < runs; ++k)); do
  for b in "$@"; do
    # shellcheck disable=SC2086 # ARGS is split into words on purpose
    /usr/bin/time -f "%e %U %S %M" -o "$samples.t" "$b" $args > /dev/null 2>&1 || true
    echo "$b $(tail -1 "$samples.t")" >> "$samples"
  done
done
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
printf '%-28s %9s %11s %15s %12s\n' binary "wall min" "wall median" "CPU median" "peak RSS"
for b in "$@"; do
  rows=$(awk -v b="$b" '$1 == b' "$samples")
  min=$(awk '{print $2}' <<< "$rows" | sort -n | head -1)
  wall=$(awk '{print $2}' <<< "$rows" | median)
  cpu=$(awk '{printf "%.2f\n", $3 + $4}' <<< "$rows" | median)
  rss=$(awk '{print $5}' <<< "$rows" | sort -n | tail -1)
  printf '%-28s %8ss %10ss %14ss %9s KiB\n' "$b" "$min" "$wall" "$cpu" "$rss"
done
