#!/bin/sh
# cuda_sim.sh: the CUDA backend's kernels executed on the CPU by the project's CUDA emulation
# (tests/cudasim, docs/CUDA.md): `make test-cuda-sim` builds it and runs its checks (kernel tests
# under three warp schedules, forced decoding and training against the CPU, injected bugs), whose
# tally this case takes over. SKIP where the toolkit's headers, g++ or x86-64 are missing, and in
# the sanitizer pass: the emulation is an AddressSanitizer build of its own, run once.
. tests/cli/lib.sh
B=$(dirname "${NMT_TEST_DIR:-build/tests}")
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
skip() { echo "cuda_sim: SKIP: $1"; finish cuda_sim; exit; }
if [ ! -f "$CUDA_HOME/include/cuda_runtime_api.h" ] || [ ! -f "$CUDA_HOME/include/cublas_v2.h" ]; then
    skip "no CUDA toolkit headers in $CUDA_HOME/include (cuda_runtime_api.h, cublas_v2.h)"
fi
command -v g++ > /dev/null 2>&1 || skip "no g++"
[ "$(uname -m)" = x86_64 ] || skip "the emulation's fibers switch stacks on x86-64 only"
case $B in *asan*|*san*) skip "the sanitizer pass: the emulation runs under its own AddressSanitizer build in the plain pass" ;; esac
make --no-print-directory -s test-cuda-sim BUILD="$B" SHARED="$NMT_SHARED" > "$T/out" 2>&1
rc=$?
grep -E '^cuda_sim: FAIL|rror' "$T/out" | head -n 20 >&2
line=$(grep -E '^cuda_sim: [0-9]+ passed, [0-9]+ failed$' "$T/out" | tail -n 1)
if [ -z "$line" ]; then
    bad "make test-cuda-sim: exit $rc, no tally: $(tail -c 400 "$T/out")"
    finish cuda_sim
    exit
fi
# shellcheck disable=SC2034 # finish (lib.sh) reports them
pass=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
fail=$(echo "$line" | sed -E 's/.*passed, ([0-9]+) failed/\1/')
[ $rc -ne 0 ] && [ "$fail" -eq 0 ] && bad "make test-cuda-sim: exit $rc"
finish cuda_sim
