# lib.sh: helpers for the shell tests in tests/cli (sourced, not run). Each case is one check;
# `finish NAME` prints "NAME: P passed, F failed" and sets the exit status.
NMT_BIN=${NMT_BIN:-bin/nmt}
NMT_SHARED=${NMT_SHARED:-../shared}
pass=0; fail=0
T=$(mktemp -d "${TMPDIR:-/tmp}/nmt-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*" >&2; }

# expect_fail NAME EXIT_CODE PATTERN command...: the command exits with EXIT_CODE and its
# stderr matches the grep -E PATTERN.
expect_fail() {
    name=$1 code=$2 pat=$3; shift 3
    "$@" > "$T/out" 2> "$T/err"; rc=$?
    if [ "$rc" -ne "$code" ]; then bad "$name: exit $rc, expected $code; stderr: $(head -c 300 "$T/err")"; return; fi
    if ! grep -Eq -- "$pat" "$T/err"; then bad "$name: stderr does not match /$pat/: $(head -c 300 "$T/err")"; return; fi
    ok
}

# check NAME command...: the command succeeds.
check() {
    name=$1; shift
    if "$@"; then ok; else bad "$name"; fi
}

finish() {
    echo "$1: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
