#!/bin/sh
# cuda.sh: choosing the CUDA device on a machine without one. With the CUDA backend linked in (nvcc
# was found at build time), --device cuda[:N] on every command that takes a device, and
# NMT_DEVICE=cuda, stop with exit 2 and "no CUDA device: <the driver's reason>"; built without it,
# with "built without CUDA". A malformed cuda:N is refused; the kernel tests run on cuda SKIP,
# saying why. On a machine with a GPU there is nothing to refuse: the case is skipped.
. tests/cli/lib.sh
if command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi -L > /dev/null 2>&1; then
    echo "cuda: SKIP: a GPU is present (scripts/gpu_check.sh checks it)"
    finish cuda; exit
fi
if nm "$NMT_BIN" 2> /dev/null | grep -q ' T cuda_backend_open$'; then
    why='no CUDA device: .'; malformed='expected cuda or cuda:N'
else
    why='built without CUDA'; malformed=$why
fi
# every command under a time limit: a device wrongly accepted would otherwise train or serve on
N="timeout 10 $NMT_BIN"
D=$NMT_SHARED/data/multi30k/tok
head -n 5 "$D/val.en" > "$T/s"; head -n 5 "$D/val.fr" > "$T/t"
for dev in cuda cuda:0 cuda:3; do
    expect_fail "train --device $dev" 2 "$why" $N train --device $dev --src "$T/s" --tgt "$T/t" --model "$T/m.nmt"
    expect_fail "translate --device $dev" 2 "$why" $N translate --device $dev --model "$T/m.nmt"
    expect_fail "score --device $dev" 2 "$why" $N score --device $dev --model "$T/m.nmt" --src "$T/s" --tgt "$T/t"
    expect_fail "align --device $dev" 2 "$why" $N align --device $dev --model "$T/m.nmt" --src "$T/s" --tgt "$T/t"
    expect_fail "serve --device $dev" 2 "$why" $N serve --device $dev --model "$T/m.nmt"
done
[ -e "$T/m.nmt" ] && bad "a refused training wrote its model" || ok
expect_fail "NMT_DEVICE=cuda" 2 "NMT_DEVICE: .*$why" env NMT_DEVICE=cuda $N translate --model "$T/m.nmt"
for dev in cuda:x cuda:-1 cuda: cuda:1x; do
    expect_fail "--device $dev" 2 "$malformed" $N translate --device $dev --model "$T/m.nmt"
done
expect_fail "--device cudax" 2 "unknown device 'cudax'" $N translate --device cudax --model "$T/m.nmt"
# the kernel tests on cuda: SKIP with the reason, nothing failed
for t in test_backend test_backend_pair; do
    p=${NMT_TEST_DIR:-build/tests}/$t
    [ -x "$p" ] || continue
    # each program as it was linked (a CUDA=0 nmt beside CUDA tests, or the other way round)
    nm "$p" 2> /dev/null | grep -q ' T cuda_backend_open$' && w='no CUDA device: .' || w='built without CUDA'
    NMT_DEVICE=cuda "$p" > "$T/out" 2>&1; rc=$?
    if [ $rc -eq 0 ] && grep -q "^$t: SKIP: .*$w" "$T/out" && grep -q "^$t: 0 passed, 0 failed" "$T/out"; then ok
    else bad "$t on cuda: exit $rc: $(head -c 300 "$T/out")"; fi
done
finish cuda
