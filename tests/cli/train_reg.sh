#!/bin/sh
# train_reg.sh: nmt train's options from Marian (docs/TRAINING.md): label smoothing, the
# learning-rate warm-up and inverse-square-root decay, variational dropout on the embeddings and
# the recurrent states, tied embeddings. Each changes training, reads back from --dump-config, is
# kept by a checkpoint (a run stopped and resumed with other values on its command line ends with
# the model of the run never stopped, byte for byte), and leaves validation alone (the dev NLL is
# the one nmt score gives); bad values are refused.
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
head -n 300 "$D/train.en" > "$T/s"; head -n 300 "$D/train.fr" > "$T/t"
head -n 40 "$D/val.en" > "$T/vs"; head -n 40 "$D/val.fr" > "$T/vt"
export OMP_WAIT_POLICY=PASSIVE
BASE="--src $T/s --tgt $T/t --emb 16 --hid 16 --att 16 --maxout 16 --vocab 300 --batch 20 --sort-blocks 2
      --threads 1 --seed 7 --log-every 1000 --optimizer adam --lr 0.01"

train() { # NAME ARGS...: trains $T/NAME.nmt; its stderr in $T/NAME.log
    name=$1; shift
    # shellcheck disable=SC2086
    "$NMT_BIN" train $BASE "$@" --model "$T/$name.nmt" 2> "$T/$name.log" || bad "$name: exit $?: $(tail -n 2 "$T/$name.log")"
}

# NAME "ARGS" "OTHER" WARNING: 8 updates with ARGS, and the same run stopped after 4 and resumed
# with OTHER instead of ARGS, which must keep ARGS (and say so: WARNING, when not empty) and end
# with the same model
resume_check() {
    train "$1" $2 --max-updates 8
    train "$1r" $2 --max-updates 4
    # shellcheck disable=SC2086
    "$NMT_BIN" train $BASE $3 --max-updates 8 --model "$T/$1r.nmt" --resume "$T/$1r.nmt.ckpt" 2>> "$T/$1r.log" \
        || bad "$1: resumed run failed: $(tail -n 2 "$T/$1r.log")"
    grep -q "resumed from .* at update 4" "$T/$1r.log" && ok || bad "$1: not resumed at update 4"
    cmp -s "$T/$1.nmt" "$T/$1r.nmt" && ok || bad "$1: the resumed model differs from the uninterrupted one"
    if [ -n "$4" ]; then
        grep -q "keeps its checkpoint's settings:.*$4" "$T/$1r.log" && ok || bad "$1: no warning '$4': $(grep warn "$T/$1r.log")"
    fi
    cmp -s "$T/plain.nmt" "$T/$1.nmt" && bad "$1: '$2' changed nothing" || ok
}

train plain --max-updates 8

# ---- label smoothing
resume_check ls "--label-smoothing 0.1" "--label-smoothing 0" "label smoothing 0.1 (not 0)"
grep -q "label smoothing 0.1" "$T/ls.log" && ok || bad "no label smoothing in the summary: $(head -n 5 "$T/ls.log")"

# ---- the learning-rate schedule: past both limits within the 8 updates
resume_check lr "--lr-warmup 6 --lr-decay-inv-sqrt 6" "--lr-warmup 0" "warm-up 6 (not 0), inverse-square-root decay 6 (not 0)"
train warm --max-updates 8 --lr-warmup 6
train decay --max-updates 8 --lr-decay-inv-sqrt 6
cmp -s "$T/warm.nmt" "$T/lr.nmt" || cmp -s "$T/decay.nmt" "$T/lr.nmt" && bad "warm-up or decay alone gives the model of both" || ok
# a warm-up longer than the run is allowed (as in Marian) but said
train long --max-updates 3 --lr-warmup 5
grep -q "warm-up (5 updates) is longer than the run (3)" "$T/long.log" && ok || bad "no warning for a warm-up past the run: $(tail -n 2 "$T/long.log")"
grep -q "longer than the run" "$T/warm.log" && bad "a warning for a warm-up inside the run" || ok

# ---- variational dropout
resume_check drop "--dropout-emb 0.3 --dropout-rnn 0.3" "--dropout-emb 0" "embedding dropout 0.3 (not 0), recurrent dropout 0.3 (not 0)"
train demb --max-updates 8 --dropout-emb 0.3
train drnn --max-updates 8 --dropout-rnn 0.3
cmp -s "$T/demb.nmt" "$T/plain.nmt" || cmp -s "$T/drnn.nmt" "$T/plain.nmt" && bad "--dropout-emb or --dropout-rnn alone changed nothing" || ok

# ---- tied embeddings: one stored matrix, translation works, a resumed run stays tied
resume_check tied "--tied-embeddings" "" ""
grep -aq 'tied_embeddings\\":true' "$T/tied.nmt" && ! grep -aq '"out_W"' "$T/tied.nmt" && grep -aq '"out_W"' "$T/plain.nmt" \
    && ok || bad "the tied model's file does not store Et alone and say so"
head -n 3 "$T/s" | "$NMT_BIN" translate --model "$T/tied.nmt" --beam 2 --threads 1 > "$T/tied.out" 2> "$T/tied.err" \
    && [ "$(wc -l < "$T/tied.out")" -eq 3 ] && ok || bad "translating with the tied model: $(head -c 300 "$T/tied.err")"
# shellcheck disable=SC2086
expect_fail "tied, emb 16 and maxout 8" 1 "tied embeddings need the embedding size equal to the maxout size.*emb 16, maxout 8" \
    "$NMT_BIN" train $BASE --maxout 8 --tied-embeddings --max-updates 1 --model "$T/bad.nmt"

# ---- validation is the plain model: the dev NLL per sentence in the log is the mean of -log p
# that nmt score gives the model saved at that validation, with every training term on
train dev --max-updates 6 --valid-src "$T/vs" --valid-tgt "$T/vt" --valid-every 6 --label-smoothing 0.3 --dropout-emb 0.3 \
    --dropout-rnn 0.3 --dropout 0.3 --lr-warmup 3
"$NMT_BIN" score --model "$T/dev.nmt" --src "$T/vs" --tgt "$T/vt" --threads 1 > "$T/dev.score" 2> "$T/dev.err" \
    || bad "nmt score: $(head -c 300 "$T/dev.err")"
want=$(awk '{ s -= $1 } END { printf "%.4f", s / NR }' "$T/dev.score")
got=$(awk -F'\t' 'NR == 2 { print $6 }' "$T/dev.nmt.log.tsv")
awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(d < 0.002 && d > -0.002) }' && ok \
    || bad "dev NLL $got per sentence is not the plain NLL nmt score gives, $want"

# ---- option files, --help and bad values
# shellcheck disable=SC2086
"$NMT_BIN" train $BASE --model "$T/x.nmt" --label-smoothing 0.125 --lr-warmup 5 --lr-decay-inv-sqrt 7 --dropout-emb 0.25 \
    --dropout-rnn 0.5 --tied-embeddings --dump-config > "$T/c.yaml"
for k in "label-smoothing: 0.125" "lr-warmup: 5" "lr-decay-inv-sqrt: 7" "dropout-emb: 0.25" "dropout-rnn: 0.5" "tied-embeddings: true"; do
    grep -q "^$k\$" "$T/c.yaml" && ok || bad "--dump-config lacks '$k'"
done
"$NMT_BIN" train -c "$T/c.yaml" --dump-config > "$T/c2.yaml" && cmp -s "$T/c.yaml" "$T/c2.yaml" && ok \
    || bad "the dumped options do not read back to themselves"
"$NMT_BIN" train --help > "$T/help"
for o in --label-smoothing --lr-warmup --lr-decay-inv-sqrt --dropout-emb --dropout-rnn --tied-embeddings; do
    grep -q -- "$o" "$T/help" && ok || bad "--help lacks $o"
done
# shellcheck disable=SC2086
expect_fail "label smoothing 1" 2 "label-smoothing.*out of range" "$NMT_BIN" train $BASE --model "$T/x.nmt" --label-smoothing 1
# shellcheck disable=SC2086
expect_fail "negative recurrent dropout" 2 "dropout-rnn.*out of range" "$NMT_BIN" train $BASE --model "$T/x.nmt" --dropout-rnn -0.1
# shellcheck disable=SC2086
expect_fail "warm-up not a number" 2 "lr-warmup.*not an integer" "$NMT_BIN" train $BASE --model "$T/x.nmt" --lr-warmup x
echo "dev NLL: log $got, nmt score $want"
finish train_reg
