#!/usr/bin/env bash
# Runs every fuzz target for SECONDS with its dictionary and seeds, one after the other, printing
# each target's final libFuzzer line, then a table: target, executions, executions per second, final
# coverage (cov: edges, ft: features), corpus size, findings.
#
#   fuzz/run-all.sh SECONDS [FUZZ_BUILD_DIR [SEED_BUILD_DIR [TARGET...]]]
#
# FUZZ_BUILD_DIR (default build-fuzz) holds the harnesses (-DANEC_BUILD_FUZZERS=ON); SEED_BUILD_DIR
# (default build) is a build with tools and test fixtures, passed to fuzz/seeds.sh. Logs, the grown
# corpora and any reproducers stay under $ANEC_FUZZ_OUT (default a new temporary directory), which
# is printed. Exit status 1 when any target found something (crash, leak, timeout, out of memory);
# the end of that target's log (the sanitizer report) is printed.
#
# Extra libFuzzer flags: ANEC_FUZZ_FLAGS, e.g. "-use_value_profile=1", or "-fork=1 -ignore_crashes=1"
# to keep fuzzing past a known crash (each crash is still saved and counted as a finding; fork mode
# counts cov differently, so compare its figures only with other fork-mode runs).
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 SECONDS [FUZZ_BUILD_DIR [SEED_BUILD_DIR [TARGET...]]]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=$1
fuzz_build=${2:-$root/build-fuzz}
seed_build=${3:-$root/build}
shift $(($# < 3 ? $# : 3))
targets=${*:-hal_blob hal_toml schema binary td_chain hwx anec model measurements command package im4p npy eval mil coreml}
out=${ANEC_FUZZ_OUT:-$(mktemp -d /tmp/anec-fuzz.XXXXXX)}
mkdir -p "$out"

row() { printf '%-10s %12s %7s %7s %8s %6s  %s\n' "$@"; }
table=$(row target executions exec/s cov ft corpus findings)
failed=0
for t in $targets; do
  bin=$fuzz_build/fuzz/${t}_fuzz
  [ -x "$bin" ] || { echo "$0: $bin is missing: build $fuzz_build with -DANEC_BUILD_FUZZERS=ON" >&2; exit 2; }
  seeds=$out/$t/seeds corpus=$out/$t/corpus findings=$out/$t/findings log=$out/$t/log
  rm -rf "$seeds"
  mkdir -p "$corpus" "$findings"
  "$root/fuzz/seeds.sh" "$seed_build" "$seeds" "$t"
  status=0
  # New inputs go to the first directory; the seeds stay as they are. The whole log is kept: a
  # crash's stack is in it.
  # shellcheck disable=SC2086
  "$bin" -dict="$root/fuzz/dict/$t.dict" -max_total_time="$seconds" -print_final_stats=1 \
    -rss_limit_mb=4096 -timeout=10 -artifact_prefix="$findings/" ${ANEC_FUZZ_FLAGS:-} \
    "$corpus" "$seeds" >"$log" 2>&1 || status=$?
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 || true)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
  corp=$(sed -nE 's/.* corp: ([0-9]+).*/\1/p' <<<"$last")
  execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -n 1)
  [ -n "$execs" ] || execs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$last") # -fork=N prints no final stats
  rate=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+).*/\1/p' "$log" | tail -n 1)
  [ -n "$rate" ] || rate=$(sed -nE 's/.* exec\/s:? ([0-9]+).*/\1/p' <<<"$last")
  found=$(find "$findings" -type f | wc -l)
  what=none
  if [ "$status" -ne 0 ] || [ "$found" -gt 0 ]; then
    failed=1
    what="exit $status: $(find "$findings" -type f -printf '%f ' | head -c 200)"
    echo "== $t: finding (exit $status); log $log" >&2
    grep -E 'ERROR: |SUMMARY: |runtime error|Test unit written' "$log" >&2 || true
    tail -n 60 "$log" >&2
  fi
  line=$(row "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$what")
  echo "${last:-$t: no coverage line in $log}"
  echo "$line"
  table+=$'\n'"$line"
done
echo
echo "fuzzing ${seconds} s per target; logs, corpora and findings in $out"
echo "$table"
exit $failed
