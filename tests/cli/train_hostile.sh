#!/bin/sh
# train_hostile.sh: --resume meets damaged and forged checkpoints. Each changed field (the batch
# size, an index of the saved order, the minibatch starts, a counter of 1e300, NaN optimizer
# state ...) is refused with exit 1 and a message naming the file and the field, before any
# training; an intact copy without checksums (an older file) still resumes.
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
head -n 200 "$D/train.en" > "$T/s"; head -n 200 "$D/train.fr" > "$T/t"
ARGS="--src $T/s --tgt $T/t --arch rnnsearch --emb 8 --hid 8 --att 8 --maxout 4 --vocab 300
      --batch 20 --sort-blocks 3 --threads 1 --seed 5 --log-every 1000 --optimizer adam"
export OMP_WAIT_POLICY=PASSIVE
ED="python3 tests/cli/ckpt_edit.py"
# a save killed half way (a dead PID's temporaries, of checkpoint and model size) is cleaned up
# by the next save of the same file
dead=$(sh -c 'echo $$')
head -c 100000 /dev/zero > "$T/m.nmt.ckpt.tmp.$dead"; head -c 40000 /dev/zero > "$T/m.nmt.tmp.$dead"
# shellcheck disable=SC2086
"$NMT_BIN" train $ARGS --model "$T/m.nmt" --max-updates 12 --save-every 6 2> "$T/log"
check "a checkpoint" test -s "$T/m.nmt.ckpt"
[ ! -e "$T/m.nmt.ckpt.tmp.$dead" ] && [ ! -e "$T/m.nmt.tmp.$dead" ] && ok || bad "stale temporaries left: $(ls "$T" | grep tmp)"
C="$T/m.nmt.ckpt"

# resume_bad NAME PATTERN EDIT...: the edited copy is refused (exit 1, message matching PATTERN)
resume_bad() {
    name=$1 pat=$2; shift 2
    $ED "$C" "$T/bad.ckpt" "$@" || { bad "$name: could not edit the checkpoint"; return; }
    # shellcheck disable=SC2086
    expect_fail "$name" 1 "bad\.ckpt: .*$pat" timeout 60 "$NMT_BIN" train $ARGS --model "$T/r.nmt" --resume "$T/bad.ckpt" --max-updates 30
}
resume_bad "batch size 7" "nb is not the number of minibatches" 'batch=7'
resume_bad "batch size 21 (as many minibatches)" "train.order is not train.shuffled regrouped" 'batch=21'
resume_bad "batch size 1e300" "'batch' is out of range" 'batch=1e300'
resume_bad "batch size a string" "'batch' must be a finite number" 'batch="20"'
resume_bad "sort blocks 0" "'sort_blocks' is out of range" 'sort_blocks=0'
resume_bad "batch x blocks overflow" "'batch' is out of range|overflows" 'batch=100000' 'sort_blocks=100000'
resume_bad "order entry = corpus size" "train.order\[3\] = 200 is out of range" 'train.order[3]=200'
resume_bad "order not a permutation" "train.order is not train.shuffled regrouped" 'train.order[3]=0' 'train.order[4]=0'
resume_bad "shuffled not a permutation" "train.shuffled is not a permutation" 'train.shuffled[5]=7' 'train.shuffled[6]=7'
resume_bad "starts not increasing" "train.starts does not strictly increase" 'train.starts[2]=20'
resume_bad "starts swapped" "train.starts (does not strictly increase|has a minibatch larger)" 'train.starts:swap=1,2'
resume_bad "starts past the corpus" "train.starts\[1\] = 100000 is out of range" 'train.starts[1]=100000'
resume_bad "a minibatch over the batch size" "larger than the batch size|across two blocks" 'train.starts[1]=25'
resume_bad "epoch 1e300" "'epoch' is out of range" 'epoch=1e300'
resume_bad "update 1e300" "'update' is out of range" 'update=1e300'
resume_bad "update off the plan" "update disagrees with epoch, nb and next" 'update=11'
resume_bad "next past nb" "next is past nb|update disagrees" 'next=11'
resume_bad "negative counter" "'val_sent' is out of range" 'val_sent=-5'
resume_bad "fractional counter" "'bad_validations' must be an integer" 'bad_validations=0.5'
resume_bad "NaN in the optimizer state" "optim.adam.0\[7\] = nan is not finite" 'optim.adam.0[7]=nan'
resume_bad "negative second moment" "optim.adam.1\[2\] = -1 is negative" 'optim.adam.1[2]=-1'
resume_bad "unknown optimizer" "'optimizer' must be adadelta" 'optimizer="adamw"'
resume_bad "learning rate 0" "'lr' is out of range" 'lr=0'
resume_bad "dropout 1" "'dropout' is out of range" 'dropout=1'
resume_bad "bad RNG state" "'rng' must be 4 strings" 'rng=["1","2","3","4"]'
resume_bad "all-zero RNG state" "'rng' is all zeros" 'rng=["0000000000000000","0000000000000000","0000000000000000","0000000000000000"]'
resume_bad "unknown field" "'updates' is not a train_state field" 'updates=3'
resume_bad "missing field" "train_state lacks 'next'" 'next=DEL'
# the same damage with the checksums left in place: refused as corrupt before any field is read
python3 - "$C" "$T/crc.ckpt" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.index(b'\\"batch\\":20')
b[i + 10:i + 12] = b"21"
open(sys.argv[2], "wb").write(b)
PY
# shellcheck disable=SC2086
expect_fail "changed field, checksums kept" 1 "crc.ckpt: checksum mismatch in the metadata: the file is corrupt" \
    "$NMT_BIN" train $ARGS --model "$T/r.nmt" --resume "$T/crc.ckpt" --max-updates 30
# a forger who recomputes the checksums still meets the field checks
resume_bad "forged checksums" "train.order\[3\] = 200 is out of range" 'train.order[3]=200' --recrc
# an intact copy without checksums (as written before they existed) resumes
$ED "$C" "$T/old.ckpt"
# shellcheck disable=SC2086
check "an old checkpoint resumes" "$NMT_BIN" train $ARGS --model "$T/r.nmt" --resume "$T/old.ckpt" --max-updates 14 2> "$T/rlog"

# A finished run resumed with a limit it already meets does nothing and succeeds: no update, no
# file rewritten (it used to train one more update and overwrite the model).
cp "$T/m.nmt" "$T/m0.nmt"; cp "$C" "$T/c0.ckpt"
for lim in 10 12; do
    # shellcheck disable=SC2086
    timeout 60 "$NMT_BIN" train $ARGS --model "$T/m.nmt" --resume "$C" --max-updates $lim 2> "$T/flog"; rc=$?
    [ $rc -eq 0 ] && grep -q "nothing to do: the checkpoint is at update 12, --max-updates is $lim" "$T/flog" \
        && ok || bad "finished run, --max-updates $lim: exit $rc: $(tail -n 1 "$T/flog")"
    cmp -s "$T/m.nmt" "$T/m0.nmt" && cmp -s "$C" "$T/c0.ckpt" && ok || bad "finished run, --max-updates $lim: files rewritten"
done

# A kill between a validation and its checkpoint: the log holds the row of update 12, the
# checkpoint is at update 6. The resumed run validates at 12 again; the log must hold that row
# once, as an uninterrupted run's does.
head -n 30 "$NMT_SHARED/data/multi30k/tok/val.en" > "$T/vs"; head -n 30 "$NMT_SHARED/data/multi30k/tok/val.fr" > "$T/vt"
V="$ARGS --valid-src $T/vs --valid-tgt $T/vt --valid-every 6 --model $T/v.nmt"
# shellcheck disable=SC2086
timeout 60 "$NMT_BIN" train $V --max-updates 6 2> "$T/vlog" && cp "$T/v.nmt.ckpt" "$T/v6.ckpt"
# shellcheck disable=SC2086
timeout 60 "$NMT_BIN" train $V --max-updates 12 --resume "$T/v.nmt.ckpt" 2>> "$T/vlog"
cp "$T/v6.ckpt" "$T/v.nmt.ckpt"
# shellcheck disable=SC2086
timeout 60 "$NMT_BIN" train $V --max-updates 12 --resume "$T/v.nmt.ckpt" 2>> "$T/vlog"
rows=$(cut -f1 "$T/v.nmt.log.tsv" | tr '\n' ' ')
[ "$rows" = "update 6 12 " ] && ok || bad "TSV log after a resume from before its last row: updates $rows, expected 'update 6 12'"
# a path that is not UTF-8 (a Latin-1 directory name): the checkpoint's copy of the options, which
# must be UTF-8, holds U+FFFD for the byte; the run once failed at its first checkpoint with "out of memory"
L1="$T/$(printf 'L\351')"
mkdir -p "$L1"
# shellcheck disable=SC2086
timeout 60 "$NMT_BIN" train $ARGS --max-updates 3 --save-every 2 --model "$L1/m.nmt" 2> "$T/l1log"
rc=$?
[ $rc -eq 0 ] && [ -s "$L1/m.nmt" ] && [ -s "$L1/m.nmt.ckpt" ] && ok || bad "a Latin-1 model path: exit $rc: $(tail -n 2 "$T/l1log")"
grep -qa "$(printf 'L\357\277\275')" "$L1/m.nmt.ckpt" && ok || bad "the checkpoint's options do not show the path with U+FFFD"
finish train_hostile
