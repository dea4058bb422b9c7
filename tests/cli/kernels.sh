#!/bin/sh
# kernels.sh: the model's tests again under each of OpenBLAS's kernel sets this CPU can run
# besides the one OpenBLAS picks by itself (which the suite has just used), so that a CPU we may
# land on (AVX2 only: Haswell's and Zen's kernels) is not first met by CI: their products round
# rows otherwise than the AVX-512 ones. With --quick (sanitizer builds) one set and the fast tests.
# Then, on a CPU with AVX512_VNNI, the int8 tests once more as an AVX2 machine runs them (oneDNN
# held to AVX2: int8 in its u8 form), beside OpenBLAS's Haswell kernels.
. tests/cli/lib.sh
dir=${NMT_TEST_DIR:-build/tests}
quick=0
[ "${1:-}" = --quick ] && quick=1
tests="test_backend test_beam test_sample test_ensemble test_golden test_decode_lowp test_optim"
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { for f in "$@"; do case "$flags " in *" $f "*) ;; *) return 1 ;; esac; done; }
core() { env "$@" OPENBLAS_VERBOSE=2 "$dir/test_backend" 2>&1 | sed -n 's/^Core: //p' | tail -n 1; }
own=$(core)
sets=""
has avx2 fma && sets="Haswell Zen"
has avx512f avx512vl avx512bw avx512dq avx512cd && sets="$sets SkylakeX"
has avx512f avx512vl avx512bw avx512dq avx512_bf16 && sets="$sets Cooperlake"
[ $quick = 1 ] && sets=$(echo "$sets" | cut -d' ' -f1) && tests="test_beam test_sample"
ran=0
for s in $sets; do
    [ "$s" = "$own" ] && continue
    c=$(core OPENBLAS_CORETYPE="$s")
    [ "$c" = "$s" ] && ok || { bad "OPENBLAS_CORETYPE=$s ran '$c'"; continue; }
    # the slowest model test (its quick form) once, under the first set (AVX2 kernels on an
    # AVX-512 CPU)
    these=$tests
    [ $ran = 0 ] && [ $quick = 0 ] && these="$tests test_model"
    for t in $these; do
        arg=""; [ "$t" = test_model ] && arg=--quick
        out=$(OPENBLAS_CORETYPE=$s "$dir/$t" $arg 2>&1); rc=$?
        if [ $rc -eq 0 ] && printf '%s\n' "$out" | tail -n 1 | grep -q ' 0 failed$'; then ok; else
            bad "$t under OPENBLAS_CORETYPE=$s (exit $rc): $(printf '%s\n' "$out" | grep FAIL | head -n 3)"
        fi
    done
    ran=$((ran + 1))
done
if [ $quick = 0 ] && has avx2 fma avx512_vnni; then
    for t in test_backend_lowp test_decode_lowp; do
        out=$(ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell "$dir/$t" 2>&1); rc=$?
        if [ $rc -eq 0 ] && printf '%s\n' "$out" | tail -n 1 | grep -q ' 0 failed$'; then ok; else
            bad "$t under ONEDNN_MAX_CPU_ISA=AVX2 (exit $rc): $(printf '%s\n' "$out" | grep FAIL | head -n 3)"
        fi
        [ $t = test_backend_lowp ] && { printf '%s\n' "$out" | grep -q 'weights of 31 levels (AVX2)' && ok ||
            bad "test_backend_lowp under ONEDNN_MAX_CPU_ISA=AVX2 did not run int8's AVX2 form"; }
    done
fi
finish kernels
