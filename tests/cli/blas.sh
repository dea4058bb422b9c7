#!/bin/sh
# blas.sh: without timing (NMT_BLAS_AUTOTUNE=0; the timed choice is tests/cli/blas_tune.sh's),
# nmt runs OpenBLAS's AVX2/AVX-512 kernels on a CPU that has them, even where OpenBLAS does not
# know the CPU and would fall back to SSE3 ones (tools/blas_kernels.c), and a user's
# OPENBLAS_CORETYPE is left alone (and kernels below AVX2 on an AVX2 CPU are pointed out once).
# With OpenBLAS's pthreads build brought in by LD_LIBRARY_PATH (its threads would fight nmt's
# OpenMP ones), nmt warns.
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
# a library user's program cannot be restarted: OpenBLAS's kernels below AVX2 on an AVX2 CPU are
# said once, through the library's log (here a pin plays OpenBLAS's SSE3 fall back on a CPU it
# does not know); not with AVX2 kernels, nor when the products are oneDNN's
head -n 50 "$NMT_SHARED/data/multi30k/tok/train.en" > "$T/s"; head -n 50 "$NMT_SHARED/data/multi30k/tok/train.fr" > "$T/t"
slow_note() { # env...: the note's line count in a one-update training's stderr
    rm -f "$T/m.nmt" "$T/m.nmt".*
    env "$@" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/m.nmt" --emb 4 --hid 4 --att 4 --maxout 2 \
        --max-updates 2 2>&1 | grep -c "OpenBLAS runs its .* kernels on this CPU, which has AVX2"
}
if grep -q ' avx2 ' /proc/cpuinfo && grep -q ' fma ' /proc/cpuinfo; then want=1; else want=0; fi
[ "$(slow_note OPENBLAS_CORETYPE=Prescott)" = $want ] && ok || bad "OPENBLAS_CORETYPE=Prescott: the note should appear $want time(s)"
[ "$(slow_note OPENBLAS_CORETYPE=Prescott NMT_GEMM=onednn)" = 0 ] && ok || bad "NMT_GEMM=onednn: a note about OpenBLAS's kernels"
[ "$(slow_note OPENBLAS_CORETYPE=Haswell)" = 0 ] && ok || bad "OPENBLAS_CORETYPE=Haswell: a note about slow kernels"
finish blas
