#!/bin/sh
# train_resume.sh: a training run killed with SIGKILL, or stopped with SIGTERM or SIGHUP (a closed
# terminal), and resumed from its last checkpoint ends with exactly the same parameters as a run
# never interrupted (same seed and thread count): the final model files are compared byte for
# byte. The resumed run warns that the checkpoint's settings win over the options given.
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
head -n 600 "$D/train.en" > "$T/s"; head -n 600 "$D/train.fr" > "$T/t"
head -n 60 "$D/val.en" > "$T/vs"; head -n 60 "$D/val.fr" > "$T/vt"
# Adam with a learning rate that decays on plateaus: the decayed rate is part of the state
ARGS="--src $T/s --tgt $T/t --valid-src $T/vs --valid-tgt $T/vt --valid-every 25 --patience 0
      --arch rnnsearch --emb 24 --hid 32 --att 24 --maxout 16 --vocab 800 --batch 20 --sort-blocks 3
      --max-updates 150 --save-every 7 --threads 1 --seed 5 --log-every 1000 --dropout 0.2
      --optimizer adam --lr 0.2 --lr-decay 0.5"
export OMP_WAIT_POLICY=PASSIVE

# shellcheck disable=SC2086
"$NMT_BIN" train $ARGS --model "$T/a.nmt" --batch-log "$T/a.batches" 2> "$T/a.log"
check "uninterrupted run" test -s "$T/a.nmt"
grep -q "learning rate lowered to" "$T/a.log" && ok || bad "the learning rate never decayed: make the test's rate larger"
# the batch log: one line per update, each a minibatch of 1-based line numbers of the corpus
[ "$(wc -l < "$T/a.batches")" -eq 150 ] && ok || bad "batch log has $(wc -l < "$T/a.batches") lines, expected 150"
awk '{ if (NF < 1 || NF > 20) exit 1; for (i = 1; i <= NF; i++) if ($i < 1 || $i > 600) exit 1 }' "$T/a.batches" \
    && ok || bad "batch log: a minibatch of more than 20 pairs or a line number outside 1..600"

# kill -9 as soon as the first checkpoint is there, then resume
wait_ckpt() { # file, pid: until the file exists or the process ended
    i=0
    while [ ! -s "$1" ] && kill -0 "$2" 2>/dev/null && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
}
# Under nohup SIGHUP is ignored, and nmt leaves it so (a user's nohup must keep working): the HUP
# case needs a shell that does not ignore it.
sigs="KILL TERM HUP"
ign=$(awk '/^SigIgn:/ { print $2 }' /proc/$$/status 2> /dev/null)
if [ -n "$ign" ] && [ $((0x$ign & 1)) -ne 0 ]; then
    sigs="KILL TERM"
    echo "train_resume: SIGHUP is ignored here (nohup?): its case skipped"
fi
for sig in $sigs; do
    m="$T/$sig.nmt"
    # shellcheck disable=SC2086
    "$NMT_BIN" train $ARGS --model "$m" --batch-log "$T/$sig.batches" 2> "$T/$sig.log" &
    pid=$!
    wait_ckpt "$m.ckpt" $pid
    sleep 0.2
    if kill -0 $pid 2>/dev/null; then
        kill -$sig $pid; wait $pid; rc=$?
        ok
    else
        wait $pid; rc=$?
        bad "$sig: the run ended before it could be interrupted (make it longer)"
    fi
    if [ $sig != KILL ]; then # a checkpoint written on the signal, and the command to resume
        if [ $rc -eq 130 ] && grep -q "interrupted at update" "$T/$sig.log"; then ok; else bad "SIG$sig: exit $rc, log: $(tail -n 2 "$T/$sig.log")"; fi
    fi
    check "$sig: a checkpoint survived" test -s "$m.ckpt"
    # shellcheck disable=SC2086
    # the checkpoint's optimizer, rate, dropout and batching win over what the command line says
    "$NMT_BIN" train $ARGS --model "$m" --resume "$m.ckpt" --batch-log "$T/$sig.batches" \
        --batch 7 --optimizer sgd --lr 1 --dropout 0 --lr-decay 0 2>> "$T/$sig.log"
    check "$sig: resumed run finished" test -s "$m"
    if cmp -s "$T/a.nmt" "$m"; then ok; else bad "$sig: resumed model differs from the uninterrupted one"; fi
    grep -q "resumed from" "$T/$sig.log" && ok || bad "$sig: no 'resumed from' line"
    grep -q "nmt train: warning: .*ckpt: the resumed run keeps its checkpoint's settings: optimizer adam (not sgd), dropout 0.2 (not 0), learning-rate decay 0.5 (not 0), batch 20 (not 7)" "$T/$sig.log" \
        && ok || bad "$sig: no warning that the checkpoint's settings win: $(grep -i warn "$T/$sig.log")"
    # updates redone after the checkpoint are not logged twice
    if cmp -s "$T/a.batches" "$T/$sig.batches"; then ok; else bad "$sig: resumed batch log differs from the uninterrupted one"; fi
done

# A signal handler run on the stack of a thread in oneDNN's kernels corrupted the heap: with
# NMT_GEMM=onednn one interrupted run in four to six aborted ("corrupted size vs. prev_size").
# The signals are now taken by a thread of their own (tools/cmd_train.c); sixteen interruptions on
# one thread (where it showed: 2 of 12 aborted, 0 of 12 on two) must all end with the checkpoint
# and exit 130.
n=0
for k in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do # not i: wait_ckpt counts in it
    m="$T/sig$k.nmt"
    # shellcheck disable=SC2086
    NMT_GEMM=onednn "$NMT_BIN" train $ARGS --model "$m" 2> "$T/sig$k.log" &
    pid=$!
    wait_ckpt "$m.ckpt" $pid
    sleep 0.2
    kill -TERM $pid 2> /dev/null; wait $pid; rc=$?
    if [ $rc -eq 130 ] && grep -q "interrupted at update" "$T/sig$k.log"; then n=$((n + 1)); else
        echo "interruption $k: exit $rc: $(tail -n 1 "$T/sig$k.log")"; fi
done
[ $n -eq 16 ] && ok || bad "NMT_GEMM=onednn: $n of 16 interrupted runs ended with their checkpoint and exit 130"
# OpenBLAS's pthreads build starts its threads when it loads, before nmt blocks the signals: a
# signal that reaches one of them is still a stop with a checkpoint (it was the default action's
# exit 143 with no checkpoint)
PT=/usr/lib/x86_64-linux-gnu/openblas-pthread
if [ -e "$PT/libopenblas.so.0" ]; then
    m="$T/pt.nmt"
    # shellcheck disable=SC2086
    LD_LIBRARY_PATH=$PT "$NMT_BIN" train $ARGS --threads 2 --model "$m" 2> "$T/pt.log" &
    pid=$!
    wait_ckpt "$m.ckpt" $pid
    sleep 0.2
    kill -TERM $pid 2> /dev/null; wait $pid; rc=$?
    [ $rc -eq 130 ] && grep -q "interrupted at update" "$T/pt.log" && ok || bad "pthreads OpenBLAS, SIGTERM: exit $rc: $(tail -n 1 "$T/pt.log")"
else
    ok # the pthreads build is not installed
fi

# Adadelta, the default, skips the embedding rows a batch does not touch and owes them their
# decay (src/train/optim.c): a checkpoint must hold what eager updates would have left
# shellcheck disable=SC2086
ADA=$(echo $ARGS | sed 's/--optimizer adam --lr 0.2 --lr-decay 0.5//')
# shellcheck disable=SC2086
"$NMT_BIN" train $ADA --model "$T/b.nmt" 2> "$T/b.log"
check "Adadelta: uninterrupted run" test -s "$T/b.nmt"
# shellcheck disable=SC2086
"$NMT_BIN" train $ADA --model "$T/bk.nmt" 2> "$T/bk.log" &
pid=$!
wait_ckpt "$T/bk.nmt.ckpt" $pid
sleep 0.2
if kill -0 $pid 2>/dev/null; then kill -KILL $pid; wait $pid; ok; else wait $pid; bad "Adadelta: the run ended before it could be killed"; fi
# shellcheck disable=SC2086
"$NMT_BIN" train $ADA --model "$T/bk.nmt" --resume "$T/bk.nmt.ckpt" 2>> "$T/bk.log"
if cmp -s "$T/b.nmt" "$T/bk.nmt"; then ok; else bad "Adadelta: resumed model differs from the uninterrupted one"; fi
# A checkpoint of the earlier format, its Adam state named opt.s1 and opt.s2 (tests/data, written
# at update 10 by the build before optimizer state was named optim.<optimizer>.<i>), resumes to
# the model of a run never interrupted; a new checkpoint names the state by optimizer and index
OLD=tests/data/resume-opt-s.nmt.ckpt
grep -q '"opt.s2"' "$OLD" && ok || bad "$OLD does not hold the earlier names"
head -n 200 "$D/train.en" > "$T/os"; head -n 200 "$D/train.fr" > "$T/ot"
OARGS="--src $T/os --tgt $T/ot --arch rnnsearch --emb 8 --hid 8 --att 8 --maxout 4 --vocab 60 --batch 20
       --save-every 10 --threads 1 --seed 3 --log-every 1000 --optimizer adam --lr 0.01 --max-updates 20"
# The file's first 10 updates ran on OpenBLAS's Haswell kernels; both runs here use them too, or a
# machine whose OpenBLAS picks other kernels rounds the other 10 differently (this test failed
# so on a Zen 4 whose environment, unlike the earlier machines', pins no kernels); on OpenBLAS,
# whatever NMT_GEMM the environment holds
export OPENBLAS_CORETYPE=Haswell NMT_GEMM=openblas
# shellcheck disable=SC2086
"$NMT_BIN" train $OARGS --model "$T/o.nmt" 2> "$T/o.log"
check "old format: uninterrupted run" test -s "$T/o.nmt"
grep -q '"optim.adam.1"' "$T/o.nmt.ckpt" && ! grep -q '"opt.s1"' "$T/o.nmt.ckpt" && ok || bad "new checkpoint: state not named optim.adam.<i>"
head -n 3 "$T/os" | "$NMT_BIN" translate --model "$T/o.nmt.ckpt" --beam 2 > "$T/o.out" 2> "$T/o.err" && [ "$(wc -l < "$T/o.out")" -eq 3 ] \
    && ok || bad "a checkpoint with optim.* tensors does not load as a model: $(head -c 300 "$T/o.err")"
cp "$OLD" "$T/or.nmt.ckpt"
# shellcheck disable=SC2086
"$NMT_BIN" train $OARGS --model "$T/or.nmt" --resume "$T/or.nmt.ckpt" 2> "$T/or.log"
grep -q "resumed from .* at update 10" "$T/or.log" && ok || bad "old format: not resumed: $(tail -n 1 "$T/or.log")"
if cmp -s "$T/o.nmt" "$T/or.nmt"; then ok; else bad "old format: resumed model differs from the uninterrupted one"; fi
# A run that stops on a limit between two validations validates once more, for its report and
# its model; its checkpoint is written first, so that resuming it with a larger limit is the run
# that never stopped (the closing validation once lowered the rate and counted towards patience)
LIM="--src $T/os --tgt $T/ot --valid-src $T/vs --valid-tgt $T/vt --arch rnnsearch --emb 8 --hid 8 --att 8
     --maxout 4 --vocab 60 --batch 20 --threads 1 --seed 3 --log-every 1000 --optimizer adam --lr 0.2
     --lr-decay 0.5 --patience 2 --valid-every 4 --keep-best 2"
# shellcheck disable=SC2086
"$NMT_BIN" train $LIM --max-updates 12 --model "$T/l.nmt" --cost-log "$T/l.cost" 2> "$T/l.log"
# shellcheck disable=SC2086
"$NMT_BIN" train $LIM --max-updates 5 --model "$T/l2.nmt" --cost-log "$T/l2.cost" 2> "$T/l2.log"
grep -q "update 5 .*dev NLL" "$T/l2.log" && ok || bad "no closing validation at update 5: $(tail -n 3 "$T/l2.log")"
# shellcheck disable=SC2086
"$NMT_BIN" train $LIM --max-updates 12 --model "$T/l2.nmt" --cost-log "$T/l2.cost" --resume "$T/l2.nmt.ckpt" 2>> "$T/l2.log"
cmp -s "$T/l.cost" "$T/l2.cost" && ok || bad "stopped at 5 by --max-updates and resumed to 12: costs differ from the run to 12"
cmp -s "$T/l.nmt" "$T/l2.nmt" && ok || bad "stopped at 5 by --max-updates and resumed to 12: another model"
[ ! -e "$T/l2.u5.nmt" ] && [ "$(cut -f1-3 "$T/l.nmt.best.tsv")" = "$(cut -f1-3 "$T/l2.nmt.best.tsv")" ] && ok \
    || bad "--keep-best after the closing validation: $(cat "$T/l2.nmt.best.tsv") against $(cat "$T/l.nmt.best.tsv")"

# What the trainer makes, the checkpoint reader takes back: a learning rate decayed below 1e-300
# (once refused as out of range, so the run could not be resumed)
# shellcheck disable=SC2086
"$NMT_BIN" train $LIM --lr-decay 1e-300 --max-updates 9 --model "$T/r.nmt" 2> "$T/r.log"
# shellcheck disable=SC2086
"$NMT_BIN" train $LIM --lr-decay 1e-300 --max-updates 13 --model "$T/r.nmt" --resume "$T/r.nmt.ckpt" 2>> "$T/r.log" \
    && grep -q "resumed from .* at update 9" "$T/r.log" && ok || bad "a rate decayed below 1e-300 did not resume: $(tail -n 2 "$T/r.log")"
# The count of non-finite updates in a row is state too: stopped and resumed, the run gives up at
# the update the uninterrupted one does
NF="--src $T/os --tgt $T/ot --arch rnnsearch --emb 8 --hid 8 --att 8 --maxout 4 --vocab 60 --batch 20 --threads 1
    --seed 3 --log-every 1000 --optimizer sgd --lr 1e6 --clip 0 --max-nonfinite 3 --save-every 1"
# shellcheck disable=SC2086
"$NMT_BIN" train $NF --max-updates 30 --model "$T/n.nmt" 2> "$T/n.log"
at=$(grep -o "stopped after [0-9]*" "$T/n.log" | grep -o "[0-9]*$" | tail -n 1)
# shellcheck disable=SC2086
"$NMT_BIN" train $NF --max-updates "$((at - 1))" --model "$T/n2.nmt" 2> "$T/n2.log"
# shellcheck disable=SC2086
"$NMT_BIN" train $NF --max-updates 30 --model "$T/n2.nmt" --resume "$T/n2.nmt.ckpt" 2>> "$T/n2.log"
at2=$(grep -o "stopped after [0-9]*" "$T/n2.log" | grep -o "[0-9]*$" | tail -n 1)
grep -Eq "update [0-9]+: the (cost|gradient) is NaN/Inf" "$T/n.log" && ok || bad "a skipped update does not say what went bad: $(grep "update skipped" "$T/n.log" | head -n 1)"
grep -q "non-finite" "$T/n2.log" && [ -n "$at" ] && [ "$at" = "$at2" ] && ok || bad "non-finite updates: the run gave up at ${at:-?}, stopped at $((at - 1)) and resumed at ${at2:-?}: $(tail -n 1 "$T/n2.log")"
# resumed with other architecture or sizes on the command line: the checkpoint's model trains on,
# and a warning says so (it once said nothing)
"$NMT_BIN" train --src "$T/os" --tgt "$T/ot" --model "$T/z.nmt" --emb 4 --hid 4 --att 4 --maxout 2 --vocab 50 --max-updates 2 \
    --threads 1 2> /dev/null
"$NMT_BIN" train --src "$T/os" --tgt "$T/ot" --model "$T/z.nmt" --arch recatt --emb 6 --hid 4 --att 4 --maxout 2 --vocab 30 \
    --max-updates 4 --threads 1 --resume "$T/z.nmt.ckpt" 2> "$T/z.log" && "$NMT_BIN" vocab --model "$T/z.nmt" 2>&1 > /dev/null | grep -q " 50 " &&
    grep -q "z.nmt.ckpt: the run trains this file's model: rnnsearch (not recatt), emb 4 (not 6), vocabularies 50/50 (not 30/30)" "$T/z.log" && ok ||
    bad "resumed with other sizes: $(grep -i warn "$T/z.log")"
finish train_resume
