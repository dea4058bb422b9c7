#!/bin/sh
# run.sh BUILD [--quick] [--no-total]: runs every test program in BUILD/tests and every
# tests/cli/*.sh case, and sums their "name: P passed, F failed" lines into BUILD/.tally.
# A program that crashes or exits non-zero without reporting a failure counts as one failure.
# Each line gives the test's wall time; BUILD/.times lists them for sorting.
# --quick is passed to the programs (sanitizer builds run smaller versions of slow checks).
# NMT_TEST_JOBS tests run at once (default: the number of CPUs): most keep one core busy or less,
# so two at a time on two cores take about half the time; the longest start first.
if [ "${1:-}" = --one ]; then shift; one=1; else one=0; fi
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
# the models several CLI cases share (tests/cli/lib.sh, model): trained afresh in each run, by
# the first case that asks (two cases asking at once may both train; the first to finish is kept)
export NMT_FIXTURES="$(cd "$build" && pwd)/fixtures"
tally="$build/.tally"
log="$build/test.log"
res="$build/.results" # one file per test: its output, then its tally and times lines

# GNU time, where present, gives each test's CPU seconds (what says whether a case keeps a core busy)
timed() { "$@"; }
if [ -x /usr/bin/time ] && /usr/bin/time -f '' true 2>/dev/null; then
    timed() { /usr/bin/time -f '@cpu %U %S' "$@"; }
fi

run_one() { # name, command...
    name=$1; shift
    t0=$(date +%s)
    out=$(timed "$@" 2>&1); rc=$?
    secs=$(($(date +%s) - t0))
    cpu=$(printf '%s\n' "$out" | sed -n 's/^@cpu \([0-9.]*\) \([0-9.]*\)$/\1 \2/p' | awk '{ printf "%d", $1 + $2 + 0.5 }')
    line=$(printf '%s\n' "$out" | grep -E '^[A-Za-z0-9_./-]+: [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -z "$line" ]; then
        p=0; f=1
    else
        p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\1/')
        f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\2/')
        [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
    fi
    r="$res/$(echo "$name" | tr / _)"
    printf '%s\n' "$out" > "$r.log"
    echo "$p $f" > "$r.tally"
    echo "$secs ${cpu:-?} $build $name" > "$r.time"
    # one write per test, so that lines of tests running at once do not interleave
    if [ "$f" -ne 0 ]; then
        msg="FAIL $build $name ($p passed, $f failed, exit $rc, ${secs} s)
$(printf '%s\n' "$out" | grep -E 'FAIL|error|ERROR|Sanitizer|runtime error' | head -n 20 | sed 's/^/    /')"
    else
        msg="ok   $build $name ($p passed, ${secs} s)"
    fi
    printf '%s\n' "$msg"
}

if [ $one = 1 ]; then # run.sh --one BUILD QUICK NAME COMMAND...: one test, for the pool below
    quick=$1; shift
    [ "$quick" = - ] && quick=""
    name=$1; shift
    # shellcheck disable=SC2086
    run_one "$name" "$@" $quick
    exit 0
fi

rm -rf "$NMT_FIXTURES" "$res"
mkdir -p "$res"
# The tests, the longest first (their order in the last full runs on two cores; a new test
# goes by its name), so that the last to start is a short one.
list() {
    for t in "$build"/tests/test_*; do
        case $t in *.o|*.d) continue ;; esac
        [ -x "$t" ] && echo "$(basename "$t") $t"
    done
    for c in tests/cli/*.sh; do
        [ -f "$c" ] || continue
        case $(basename "$c") in lib*) continue ;; esac
        echo "cli/$(basename "$c" .sh) sh $c"
    done
}
slow="cli/cuda_sim cli/mpi cli/options cli/bleu cli/serve test_gradcheck_f64 cli/blas_tune cli/train_resume test_bleu cli/plot
      cli/lowp cli/ibm cli/ensemble cli/devsim cli/kernels cli/python test_model cli/train_raw cli/subword cli/config"
{
    for s in $slow; do list | awk -v s="$s" '$1 == s'; done
    list | awk -v s=" $(echo $slow) " 'index(s, " " $1 " ") == 0'
} > "$res/.list"
jobs=${NMT_TEST_JOBS:-$(nproc 2> /dev/null || echo 1)}
[ "$jobs" -ge 1 ] 2> /dev/null || jobs=1
# shellcheck disable=SC2016
xargs -P "$jobs" -L 1 sh "$0" --one "$build" "${quick:--}" < "$res/.list"

# the tallies, times and log in the list's order, whatever order the tests ended in
: > "$tally"; : > "$log"; : > "$build/.times"
while read -r name _; do
    r="$res/$(echo "$name" | tr / _)"
    if [ -f "$r.tally" ]; then cat "$r.tally" >> "$tally"; cat "$r.time" >> "$build/.times"; cat "$r.log" >> "$log"
    else echo "0 1" >> "$tally"; echo "FAIL $build $name: did not run"; fi
done < "$res/.list"
[ "$total" -eq 1 ] && sh tests/total.sh "$tally"
exit 0
