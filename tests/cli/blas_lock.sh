#!/bin/sh
# blas_lock.sh: the OpenBLAS kernel cache (tools/blas_kernels.c) cannot stop nmt commands: a lock
# held for ever (a process stopped while timing) is waited for NMT_BLAS_LOCK_WAIT seconds, then
# the command goes on without the cache, saying so; a FIFO at the cache's path or its lock's is
# not opened for reading (it would block) nor replaced, and said.
. tests/cli/lib.sh
unset OPENBLAS_CORETYPE NMT_GEMM
export NMT_BLAS_AUTOTUNE=1 XDG_CACHE_HOME="$T/cache" # tests/run.sh turns timing off for the rest of the suite
F=$T/cache/nmt/blas-kernels
mkdir -p "$T/cache/nmt"
run() { NMT_BLAS_LOCK_WAIT=1 timeout 20 "$NMT_BIN" --version > /dev/null 2> "$T/err"; }
if ! grep -qw avx2 /proc/cpuinfo; then
    finish blas_lock # nothing is timed without AVX2: no cache, no lock
    exit $?
fi
# one process that takes the lock and sleeps (exec: the sleeper itself holds it)
sh -c 'exec 9> "$1"; flock 9; exec sleep 60' sh "$F.lock" &
holder=$!
sleep 0.3
kill -STOP $holder 2> /dev/null # as Ctrl-Z would
run; rc=$?
[ $rc = 0 ] && grep -q "still held after 1 s.*going on without" "$T/err" && ok || bad "a held lock: exit $rc: $(cat "$T/err")"
kill -CONT $holder 2> /dev/null; kill $holder 2> /dev/null; wait $holder 2> /dev/null
rm -f "$F.lock"
mkfifo "$F"
run; rc=$?
[ $rc = 0 ] && grep -q "blas-kernels: not a regular file" "$T/err" && ok || bad "a FIFO as the cache: exit $rc: $(cat "$T/err")"
[ -p "$F" ] && ok || bad "the FIFO was replaced"
rm -f "$F"
mkfifo "$F.lock"
run; rc=$?
[ $rc = 0 ] && grep -q "blas-kernels.lock: not a regular file" "$T/err" && ok || bad "a FIFO as the lock: exit $rc: $(cat "$T/err")"
finish blas_lock
