#!/bin/sh
# outputs.sh: outputs that would destroy inputs are refused before anything is written (the
# model over the corpus, a log over a corpus, the checkpoint over the model, the model over the
# checkpoint being resumed, lex --out over its source), by identity as well as by name; two
# trainings of one model exclude each other; and the silent limits now speak (targets over 1200
# words in score and align, lex lines over 4096 words, --batch x --sort-blocks past an int).
. tests/cli/lib.sh
export OMP_WAIT_POLICY=PASSIVE
D=$NMT_SHARED/data/multi30k/tok
head -n 100 "$D/train.en" > "$T/s"; head -n 100 "$D/train.fr" > "$T/t"
cp "$T/s" "$T/s.keep"; cp "$T/t" "$T/t.keep"
SMALL="--emb 4 --hid 4 --att 4 --maxout 2 --vocab 50 --batch 10 --threads 1"
TR="$NMT_BIN train --src $T/s --tgt $T/t $SMALL"

refuse() { # name pattern args...: exit 1 with the message, and both corpora untouched
    name=$1 pat=$2; shift 2
    # shellcheck disable=SC2086
    expect_fail "$name" 1 "$pat" timeout 60 $TR --max-updates 2 "$@"
    cmp -s "$T/s" "$T/s.keep" && cmp -s "$T/t" "$T/t.keep" && ok || { bad "$name: an input was changed"; cp "$T/s.keep" "$T/s"; cp "$T/t.keep" "$T/t"; }
}
refuse "--model = the source" "s is both the source corpus \(read\) and the model \(written\)" --model "$T/s"
refuse "--model = the target, another spelling" "is both the target corpus \(read\) and the model" --model "$T/../$(basename "$T")/t"
ln -s "$T/s" "$T/link"
refuse "--model = a link to the source" "link is both the source corpus" --model "$T/link"
refuse "--log = the target" "is both the target corpus \(read\) and the training log" --model "$T/m.nmt" --log "$T/t"
refuse "--checkpoint = the source" "is both the source corpus \(read\) and the checkpoint" --model "$T/m.nmt" --checkpoint "$T/s"
refuse "--batch-log = the source" "is both the source corpus \(read\) and the batch log" --model "$T/m.nmt" --batch-log "$T/s"
refuse "--checkpoint = --model (new files)" "new.nmt is both the model and the checkpoint" --model "$T/new.nmt" --checkpoint "$T/new.nmt"
[ ! -e "$T/new.nmt" ] && ok || bad "a refused run created its model"
# shellcheck disable=SC2086
$TR --model "$T/m.nmt" --max-updates 4 --save-every 2 2> /dev/null
cp "$T/m.nmt.ckpt" "$T/c.keep"
refuse "--model = the checkpoint resumed" "m.nmt.ckpt is both the checkpoint being resumed \(read\) and the model" \
    --model "$T/m.nmt.ckpt" --checkpoint "$T/other.ckpt" --resume "$T/m.nmt.ckpt" --max-updates 6
cmp -s "$T/m.nmt.ckpt" "$T/c.keep" && ok || bad "the checkpoint being resumed was overwritten"
# shellcheck disable=SC2086
check "resuming into the same checkpoint is the normal case" $TR --model "$T/m.nmt" --resume "$T/m.nmt.ckpt" --max-updates 6 2> /dev/null

# one training per model at a time
$TR --model "$T/lk.nmt" --max-updates 100000 --save-every 1000 2> /dev/null &
pid=$!
i=0; while [ ! -e "$T/lk.nmt.lock" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
# shellcheck disable=SC2086
expect_fail "a second training of the same model" 1 "lk.nmt is in use by another process \(.*lk.nmt.lock is locked\)" \
    timeout 60 $TR --model "$T/lk.nmt" --max-updates 2
kill $pid 2> /dev/null; wait $pid 2> /dev/null
[ ! -e "$T/lk.nmt.lock" ] && ok || bad "the lock file outlived its run"
# the killed run left its checkpoint: starting over it is asked for
# shellcheck disable=SC2086
check "the model is free again" timeout 60 $TR --model "$T/lk.nmt" --max-updates 2 --overwrite 2> /dev/null

# lex --out over an input
printf '0-0\n' > "$T/a1"; head -n 1 "$T/s" > "$T/s1"; head -n 1 "$T/t" > "$T/t1"; cp "$T/s1" "$T/s1.keep"
expect_fail "lex --out = --src" 1 "s1 is both the source corpus \(read\) and the table" "$NMT_BIN" lex --src "$T/s1" --tgt "$T/t1" --align "$T/a1" --out "$T/s1"
cmp -s "$T/s1" "$T/s1.keep" && ok || bad "lex overwrote its source"
expect_fail "lex --out = --align" 1 "a1 is both the alignments \(read\) and the table" "$NMT_BIN" lex --src "$T/s1" --tgt "$T/t1" --align "$T/a1" --out "$T/a1"

# silent limits
awk 'BEGIN { for (i = 0; i < 5000; i++) printf "w%d ", i; print "" }' > "$T/long"
printf '0-0\n' > "$T/along"
expect_fail "lex --align: a line over 4096 words" 1 "long:1: 5000 words, more than the limit of 4096" \
    "$NMT_BIN" lex --src "$T/long" --tgt "$T/long" --align "$T/along" --out "$T/lexl"
head -n 1 "$T/s" > "$T/one"
awk 'BEGIN { for (i = 0; i < 1300; i++) printf "le "; print "" }' > "$T/tlong"
expect_fail "score: a target over 1200 words" 1 "target 1 \(of 1\) has 1300 words, more than the limit of 1200" \
    "$NMT_BIN" score --model "$T/m.nmt" --src "$T/one" --tgt "$T/tlong"
expect_fail "align: a target over 1200 words" 1 "target 1 \(of 1\) has 1300 words, more than the limit of 1200" \
    "$NMT_BIN" align --model "$T/m.nmt" --src "$T/one" --tgt "$T/tlong"
# shellcheck disable=SC2086
expect_fail "--batch x --sort-blocks past an int" 1 "batch 100000 x sort blocks 100000 = 10000000000 pairs per block" \
    timeout 60 $TR --model "$T/ov.nmt" --max-updates 2 --batch 100000 --sort-blocks 100000
finish outputs
