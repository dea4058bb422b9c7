#!/bin/sh
# blas.sh: without timing (NMT_BLAS_AUTOTUNE=0; the timed choice is tests/cli/blas_tune.sh's),
# nmt runs OpenBLAS's AVX2/AVX-512 kernels on a CPU that has them, even where OpenBLAS does not
# know the CPU and would fall back to SSE3 ones (tools/blas_kernels.c), and a user's
# OPENBLAS_CORETYPE is left alone. With OpenBLAS's pthreads build brought in by
# LD_LIBRARY_PATH (its threads would fight nmt's OpenMP ones), nmt warns.
. tests/cli/lib.sh
export NMT_BLAS_AUTOTUNE=0
# the last "Core:" line OpenBLAS prints is the one the final process runs with
core() { env "$@" OPENBLAS_VERBOSE=2 "$NMT_BIN" --version 2>&1 | sed -n 's/^Core: //p' | tail -n 1; }
if grep -q ' avx2 ' /proc/cpuinfo && grep -q ' fma ' /proc/cpuinfo; then
    c=$(core)
    case "$c" in Haswell|SkylakeX|Cooperlake|SapphireRapids|Zen) ok ;; *) bad "AVX2 CPU, kernels '$c'" ;; esac
else
    ok # nothing to choose on a CPU without AVX2
fi
c=$(core OPENBLAS_CORETYPE=Prescott)
[ "$c" = Prescott ] && ok || bad "OPENBLAS_CORETYPE=Prescott gave '$c'"
"$NMT_BIN" --version | grep -q '^nmt ' && ok || bad "--version after the restart"
warn_re='pthreads build'
"$NMT_BIN" --version 2>&1 | grep -q "$warn_re" && bad "warns about the pthreads build with the OpenMP one loaded" || ok
PT=/usr/lib/x86_64-linux-gnu/openblas-pthread
if [ -e "$PT/libopenblas.so.0" ]; then
    LD_LIBRARY_PATH=$PT "$NMT_BIN" --version 2>&1 | grep -q "$warn_re" && ok || bad "no warning with $PT on LD_LIBRARY_PATH"
else
    ok # the pthreads build is not installed: nothing can bring it in
fi
finish blas
