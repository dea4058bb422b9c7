#!/bin/sh
# run.sh BUILD [--quick] [--no-total]: runs every test program in BUILD/tests and every
# tests/cli/*.sh case, and sums their "name: P passed, F failed" lines into BUILD/.tally.
# A program that crashes or exits non-zero without reporting a failure counts as one failure.
# Each line gives the test's wall time; BUILD/.times lists them for sorting.
# --quick is passed to the programs (sanitizer builds run smaller versions of slow checks).
build=$1; shift
quick=""; total=1
for a in "$@"; do
    case $a in --quick) quick=--quick ;; --no-total) total=0 ;; esac
done
export NMT_SHARED="${NMT_SHARED:-../shared}"
export NMT_BIN="${NMT_BIN:-bin/nmt}"
export OMP_WAIT_POLICY=PASSIVE
# nmt's choice of OpenBLAS's kernels by timing stays off (no test may depend on a timing, nor
# write into the user's cache); tests/cli/blas_tune.sh turns it on in a cache of its own
export NMT_BLAS_AUTOTUNE=0
# the test programs, for the CLI case that reruns them under other kernel sets (kernels.sh)
export NMT_TEST_DIR="$build/tests"
# the models several CLI cases share (tests/cli/lib.sh, model): trained afresh in each run
export NMT_FIXTURES="$(cd "$build" && pwd)/fixtures"
rm -rf "$NMT_FIXTURES"
tally="$build/.tally"
: > "$tally"
log="$build/test.log"
: > "$log"
: > "$build/.times" # seconds per test, to find what makes the suite long: sort -n BUILD/.times

run_one() { # name, command...
    name=$1; shift
    t0=$(date +%s)
    out=$("$@" 2>&1); rc=$?
    secs=$(($(date +%s) - t0))
    printf '%s\n' "$out" >> "$log"
    line=$(printf '%s\n' "$out" | grep -E '^[A-Za-z0-9_./-]+: [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -z "$line" ]; then
        p=0; f=1
    else
        p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\1/')
        f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\2/')
        [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
    fi
    if [ "$f" -ne 0 ]; then
        echo "FAIL $build $name ($p passed, $f failed, exit $rc, ${secs} s)"
        printf '%s\n' "$out" | grep -E 'FAIL|error|ERROR|Sanitizer|runtime error' | head -n 20 | sed 's/^/    /'
    else
        echo "ok   $build $name ($p passed, ${secs} s)"
    fi
    echo "$p $f" >> "$tally"
    echo "$secs $build $name" >> "$build/.times"
}

for t in "$build"/tests/test_*; do
    case $t in *.o|*.d) continue ;; esac
    [ -x "$t" ] || continue
    run_one "$(basename "$t")" "$t" $quick
done
for c in tests/cli/*.sh; do
    [ -f "$c" ] || continue
    case $(basename "$c") in lib*) continue ;; esac
    run_one "cli/$(basename "$c" .sh)" sh "$c" $quick
done
[ "$total" -eq 1 ] && sh tests/total.sh "$tally"
exit 0
