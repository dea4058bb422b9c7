#!/bin/sh
# train_bf16.sh: `nmt train --precision bf16` through the program: 50 updates whose costs follow
# the FP32 run's (the same batches: each update within 5%, each window of 10 updates within 2%;
# seen at most 1.6% and 0.5%); a bf16 run killed with SIGKILL and resumed ends with exactly the
# parameters of an uninterrupted bf16 run (the checkpoint keeps the precision, whatever the
# resuming command says); an FP32 checkpoint holds no precision field (as before bf16 existed);
# and the refusals: a precision training lacks, and bf16 on a CPU without AVX512_BF16 (or under
# oneDNN's ceiling DNNL_MAX_CPU_ISA), for a new run and for a resumed bf16 one.
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
export OMP_WAIT_POLICY=PASSIVE
ARGS="--src $T/s --tgt $T/t --emb 32 --hid 32 --att 32 --maxout 16 --vocab 300 --batch 20 --threads 1
      --optimizer adam --lr 0.01 --seed 3 --log-every 1000"

expect_fail "precision int8" 2 "--precision" "$NMT_BIN" train $ARGS --model "$T/x.nmt" --precision int8
expect_fail "bf16 without the instructions" 1 "bf16 training needs AVX512_BF16, which this CPU \\(or build\\) lacks" \
    env DNNL_MAX_CPU_ISA=AVX2 "$NMT_BIN" train $ARGS --model "$T/x.nmt" --precision bf16 --max-updates 5

# 50 updates in each precision, the same batches
# shellcheck disable=SC2086
"$NMT_BIN" train $ARGS --model "$T/b.nmt" --max-updates 50 --cost-log "$T/b.cost" --precision bf16 2> "$T/b.log"
if grep -q "needs AVX512_BF16" "$T/b.log"; then
    echo "bf16: not on this CPU; only its refusal is checked"
    finish train_bf16
    exit $?
fi
# shellcheck disable=SC2086
"$NMT_BIN" train $ARGS --model "$T/f.nmt" --max-updates 50 --cost-log "$T/f.cost" 2> "$T/f.log"
grep -q "precision bf16: the step's matrix products in bf16" "$T/b.log" && ok || bad "the bf16 run does not say so: $(head -5 "$T/b.log")"
paste "$T/f.cost" "$T/b.cost" | awk '
    function rel(a, b) { return a > b ? (a - b) / a : (b - a) / a }
    $1 != $4 { bad = 1 } { n++; if ((r = rel($2, $5)) > m) m = r; wf += $2; wb += $5 }
    n % 10 == 0 { if ((r = rel(wf, wb)) > mw) mw = r; wf = wb = 0 }
    END { printf "bf16 against fp32 over %d updates: each within %.4f (allowed 0.05), windows of 10 within %.4f (allowed 0.02)\n", n, m, mw
          exit bad || n != 50 || m > 0.05 || mw > 0.02 }' && ok || bad "bf16 costs stray from fp32's: $(paste "$T/f.cost" "$T/b.cost" | head -3)"
cmp -s "$T/f.cost" "$T/b.cost" && bad "bf16 and fp32 costs are the same to the last digit: bf16 did not run" || ok
# train_state is JSON inside the header's JSON: its quotes are escaped there
if grep -aq 'precision\\":' "$T/f.nmt.ckpt"; then bad "an fp32 checkpoint names a precision"; else ok; fi
grep -aq 'precision\\":\\"bf16' "$T/b.nmt.ckpt" && ok || bad "the bf16 checkpoint does not keep its precision"

# killed after its first checkpoint and resumed (with --precision fp32 given, which the
# checkpoint's bf16 overrides, with a warning) = the uninterrupted bf16 run
RES="$ARGS --max-updates 400 --save-every 7 --precision bf16"
# shellcheck disable=SC2086
"$NMT_BIN" train $RES --model "$T/u.nmt" 2> "$T/u.log"
check "uninterrupted bf16 run" test -s "$T/u.nmt"
# shellcheck disable=SC2086
"$NMT_BIN" train $RES --model "$T/k.nmt" 2> "$T/k.log" &
pid=$!
i=0
while [ ! -s "$T/k.nmt.ckpt" ] && kill -0 $pid 2>/dev/null && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
sleep 0.1
if kill -0 $pid 2>/dev/null; then kill -KILL $pid; wait $pid; ok; else wait $pid; bad "the run ended before it could be killed (make it longer)"; fi
check "a checkpoint survived" test -s "$T/k.nmt.ckpt"
expect_fail "resumed bf16 without the instructions" 1 "bf16 training needs AVX512_BF16" \
    env DNNL_MAX_CPU_ISA=AVX2 "$NMT_BIN" train $ARGS --max-updates 400 --model "$T/k.nmt" --resume "$T/k.nmt.ckpt"
# shellcheck disable=SC2086
"$NMT_BIN" train $ARGS --max-updates 400 --save-every 7 --model "$T/k.nmt" --resume "$T/k.nmt.ckpt" --precision fp32 2>> "$T/k.log"
grep -q "resumed from" "$T/k.log" && ok || bad "no 'resumed from' line"
grep -q "keeps its checkpoint's settings: precision bf16 (not fp32)" "$T/k.log" && ok || bad "no warning that the checkpoint's precision wins: $(grep -i warn "$T/k.log")"
cmp -s "$T/u.nmt" "$T/k.nmt" && ok || bad "the resumed bf16 model differs from the uninterrupted one"
finish train_bf16
