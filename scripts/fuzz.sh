#!/bin/sh
# fuzz.sh DIR SECONDS HARNESS...: runs each libFuzzer program DIR/fuzz_<harness> for SECONDS
# (or FUZZ_RUNS executions, when set and reached first),
# from the committed seeds (fuzz/corpus/<harness>) plus what earlier runs found (DIR/corpus),
# and prints one summary line per harness: executions, time, coverage, crashes. Crash inputs
# are kept in DIR/artifacts/<harness>/; the script exits 1 if there is any (copy each one into
# fuzz/regressions/<harness>/ once fixed, so that `make test` replays it).
set -u
# One thread: the fuzz build has no OpenMP of its own, so nmt_set_threads cannot reach OpenBLAS's
# OpenMP threads, whose waiting on busy cores made one input take up to 2 s (docs/FUZZING.md)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
dir=$1 secs=$2; shift 2
status=0
for h in "$@"; do
    mkdir -p "$dir/corpus/$h" "$dir/artifacts/$h"
    log="$dir/$h.log"
    "$dir/fuzz_$h" -max_total_time="$secs" -runs="${FUZZ_RUNS:--1}" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$dir/artifacts/$h/" "$dir/corpus/$h" "fuzz/corpus/$h" > "$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
    crashes=$(ls "$dir/artifacts/$h" | wc -l)
    took=$(sed -n 's/.*Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
    echo "fuzz $h: ${execs:-?} executions in ${took:-$secs}s, cov ${cov:-?}, $crashes crash inputs (exit $rc, log $log)"
    if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
        status=1
        grep -m 3 -E 'ERROR|SUMMARY|runtime error' "$log" | sed 's/^/    /'
    fi
done
exit $status
