#!/bin/sh
# finetune.sh: nmt train --pretrained-model (fine-tuning, as Marian's option of that name): the run
# starts from the file's weights, vocabularies and text stages with a fresh optimizer. Checked
# against the file itself: a fine-tuning run whose updates cannot move a weight (SGD at a rate of
# 1e-12) translates as the pretrained model does, n-best scores included, where a run from scratch
# with the same options does not; a fine-tuning run stopped and resumed ends with the model of the
# run never stopped; a subword model keeps its SentencePiece models; bad combinations are refused.
. tests/cli/lib.sh
export OMP_WAIT_POLICY=PASSIVE
D=$NMT_SHARED/data/multi30k/tok
head -n 300 "$D/train.en" > "$T/s"; head -n 300 "$D/train.fr" > "$T/t"
sed -n 1001,1200p "$D/train.en" > "$T/s2"; sed -n 1001,1200p "$D/train.fr" > "$T/t2"
head -n 5 "$T/s2" > "$T/probe"
R=$NMT_SHARED/data/multi30k
head -n 200 "$R/train.en" > "$T/rs"; head -n 200 "$R/train.fr" > "$T/rt"
sed -n 501,600p "$R/train.en" > "$T/rs2"; sed -n 501,600p "$R/train.fr" > "$T/rt2"
SMALL="--emb 8 --hid 8 --att 8 --maxout 4 --vocab 100 --threads 1"
STILL="--optimizer sgd --lr 1e-12 --clip 0 --max-updates 2 --threads 1"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/p.nmt" $SMALL --max-updates 10 --optimizer adam --lr 0.01 2> /dev/null
nbest() { "$NMT_BIN" translate --model "$1" --beam 3 --n-best 2 --threads 1 < "$T/probe" 2> /dev/null; }
nbest "$T/p.nmt" > "$T/p.out"

# the pretrained model's weights and vocabularies, on another corpus
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s2" --tgt "$T/t2" --model "$T/f.nmt" --pretrained-model "$T/p.nmt" $STILL 2> "$T/f.err" && ok ||
    bad "fine-tuning: $(tail -n 2 "$T/f.err")"
grep -q "fine-tuning .*p.nmt: its architecture, sizes, vocabularies and weights" "$T/f.err" && ok || bad "the summary does not say fine-tuning: $(head -n 6 "$T/f.err")"
nbest "$T/f.nmt" | cmp -s - "$T/p.out" && ok || bad "a fine-tuned model that cannot move translates otherwise than its pretrained model"
"$NMT_BIN" vocab --model "$T/p.nmt" > "$T/pv" 2> /dev/null; "$NMT_BIN" vocab --model "$T/f.nmt" > "$T/fv" 2> /dev/null
[ -s "$T/pv" ] && cmp -s "$T/pv" "$T/fv" && ok || bad "the fine-tuned model's vocabulary is not the pretrained model's"
# the control: the same run from scratch is another model
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s2" --tgt "$T/t2" --model "$T/c.nmt" $SMALL $STILL 2> /dev/null
nbest "$T/c.nmt" | cmp -s - "$T/p.out" && bad "a model from scratch translates as the pretrained one: the check cannot fail" || ok

# fine-tuning stopped and resumed (the same command again, --resume added): the model of the run
# never stopped, and a warning that --pretrained-model is not read again
FT="--src $T/s2 --tgt $T/t2 --pretrained-model $T/p.nmt --optimizer adam --lr 0.01 --threads 1 --seed 5"
# shellcheck disable=SC2086
"$NMT_BIN" train $FT --model "$T/g.nmt" --max-updates 6 2> /dev/null
# shellcheck disable=SC2086
"$NMT_BIN" train $FT --model "$T/h.nmt" --max-updates 3 2> /dev/null
# shellcheck disable=SC2086
"$NMT_BIN" train $FT --model "$T/h.nmt" --max-updates 6 --resume "$T/h.nmt.ckpt" 2> "$T/h.err" && cmp -s "$T/g.nmt" "$T/h.nmt" &&
    ok || bad "fine-tuning stopped at 3 and resumed to 6 differs from the run to 6: $(tail -n 2 "$T/h.err")"
grep -q "pretrained-model is read when a run starts" "$T/h.err" && ok || bad "no warning that the resumed run ignores --pretrained-model"
grep -q "trains this file's model" "$T/h.err" && bad "a resume that names no size warned about sizes: $(grep warn "$T/h.err")" || ok

# what the file decides and the command line asks otherwise is said: sizes; a word model trained
# on raw text keeps its text stages (train_raw.sh), which a run giving none takes unwarned
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s2" --tgt "$T/t2" --model "$T/q.nmt" --pretrained-model "$T/p.nmt" --arch recatt --emb 64 $STILL 2> "$T/q.err"
grep -q "p.nmt: the run trains this file's model: rnnsearch (not recatt), emb 8 (not 64)" "$T/q.err" && ok ||
    bad "fine-tuning with other sizes: $(grep warn "$T/q.err")"
"$NMT_BIN" train --src "$T/rs" --tgt "$T/rt" --model "$T/pl.nmt" $SMALL --tokenize en,fr --lowercase --max-updates 2 2> /dev/null
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/rs2" --tgt "$T/rt2" --model "$T/fl.nmt" --pretrained-model "$T/pl.nmt.ckpt" $STILL 2> "$T/fl.err"
grep -q "fine-tuning .*pl.nmt.ckpt: its architecture, sizes, vocabularies and weights, its text stages; a fresh" "$T/fl.err" &&
    ok || bad "the summary does not name the file's text stages: $(grep fine-tuning "$T/fl.err")"
grep warning "$T/fl.err" | grep -q "text options\|text stages" && bad "fine-tuning without the text options is warned: $(grep warn "$T/fl.err")" || ok
m1=$(python3 tests/cli/text_meta.py get "$T/pl.nmt.ckpt" text); m2=$(python3 tests/cli/text_meta.py get "$T/fl.nmt" text)
[ -n "$m1" ] && [ "$m1" = "$m2" ] && ok || bad "fine-tuned model's text stages '$m2', the file's '$m1'"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/rs2" --tgt "$T/rt2" --model "$T/fl2.nmt" --pretrained-model "$T/pl.nmt.ckpt" --tokenize en,fr --lowercase $STILL 2> "$T/fl2.err"
grep warning "$T/fl2.err" | grep -q "text options" && bad "a warning with the same text options: $(grep warn "$T/fl2.err")" || ok
nbest "$T/g.nmt" | cmp -s - "$T/p.out" && bad "6 Adam updates of fine-tuning changed nothing" || ok

# a subword model: its SentencePiece models segment the new raw text
"$NMT_BIN" train --src "$T/rs" --tgt "$T/rt" --model "$T/sp.nmt" --subwords unigram --subword-vocab 500 --emb 8 --hid 8 --att 8 \
    --maxout 4 --max-updates 5 --threads 1 --optimizer adam --lr 0.01 2> /dev/null
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/rs2" --tgt "$T/rt2" --model "$T/sf.nmt" --pretrained-model "$T/sp.nmt" $STILL 2> "$T/sf.err" && ok ||
    bad "fine-tuning a subword model: $(tail -n 2 "$T/sf.err")"
head -n 5 "$T/rs2" > "$T/probe"
nbest "$T/sp.nmt" > "$T/sp.out"
[ -s "$T/sp.out" ] && nbest "$T/sf.nmt" | cmp -s - "$T/sp.out" && ok || bad "a fine-tuned subword model translates otherwise"
"$NMT_BIN" segment --model "$T/sp.nmt" < "$T/rs2" > "$T/seg1" 2> /dev/null; "$NMT_BIN" segment --model "$T/sf.nmt" < "$T/rs2" > "$T/seg2" 2> /dev/null
[ -s "$T/seg1" ] && cmp -s "$T/seg1" "$T/seg2" && ok || bad "the fine-tuned subword model segments otherwise"

# refused
expect_fail "pretrained model as the output" 1 "pretrained model" "$NMT_BIN" train --src "$T/s2" --tgt "$T/t2" --model "$T/p.nmt" \
    --pretrained-model "$T/p.nmt"
expect_fail "no such pretrained model" 1 "nope.nmt" "$NMT_BIN" train --src "$T/s2" --tgt "$T/t2" --model "$T/x.nmt" \
    --pretrained-model "$T/nope.nmt"
expect_fail "a word model with subwords" 1 "is a word model: it cannot go on with subword units" "$NMT_BIN" train --src "$T/rs2" \
    --tgt "$T/rt2" --model "$T/x.nmt" --pretrained-model "$T/p.nmt" --subwords unigram
expect_fail "a corpus as the pretrained model" 1 "not an nmt model|safetensors|header" "$NMT_BIN" train --src "$T/s2" --tgt "$T/t2" \
    --model "$T/x.nmt" --pretrained-model "$T/s"
"$NMT_BIN" train --src "$T/s2" --tgt "$T/t2" --model "$T/x.nmt" --pretrained-model "$T/p.nmt" --dump-config > "$T/d.yaml" 2> /dev/null
grep -q "^pretrained-model: .*p.nmt" "$T/d.yaml" && ok || bad "--dump-config lacks pretrained-model"
"$NMT_BIN" train --help | grep -q -- "--pretrained-model" && ok || bad "--help lacks --pretrained-model"
finish finetune
