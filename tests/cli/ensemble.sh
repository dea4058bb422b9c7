#!/bin/sh
# ensemble.sh: `nmt translate` and `nmt score` with several models, on two small models trained
# here (RNNsearch and RecAtt, other seeds): one model given as an ensemble, and two copies of
# one, give its output byte for byte (n-best with scores, soft alignments); the ensemble's score
# of each output equals the mean (or the weighted sum) of the two models' own `nmt score`
# log-probabilities; models with other vocabularies (sizes, words, word against subword model,
# text stages), bad weights, and several models given to commands that take one are refused
# with a message and a non-zero exit.
# kernel sets: all: ensembles against their models (tests/cli/kernels.sh)
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
sed -n 401,800p "$D/train.en" > "$T/s2"; sed -n 401,800p "$D/train.fr" > "$T/t2"
export OMP_WAIT_POLICY=PASSIVE
train() { # OUT SRC TGT VOCAB UPDATES ARCH SEED
    "$NMT_BIN" train --src "$2" --tgt "$3" --model "$1" --emb 16 --hid 16 --att 16 --maxout 8 --vocab "$4" \
        --batch 20 --max-updates "$5" --arch "$6" --seed "$7" --threads 1 --optimizer adam --lr 0.01 2> "$1.log"
    check "$(basename "$1") trained" test -s "$1"
}
train "$T/a.nmt" "$T/s" "$T/t" 300 600 rnnsearch 1
train "$T/b.nmt" "$T/s" "$T/t" 300 600 recatt 2
train "$T/c.nmt" "$T/s" "$T/t" 200 1 rnnsearch 3    # fewer words
train "$T/e.nmt" "$T/s2" "$T/t2" 300 1 rnnsearch 3  # as many words, other ones
# subword models: one as it comes, one whose source stages lowercase (the data is lowercase
# already, so the same pieces: only the stages differ)
SWO="--subwords unigram --subword-vocab 300 --emb 16 --hid 16 --att 16 --maxout 8 --batch 20 --max-updates 1 --threads 1"
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/sw1.nmt" $SWO 2> /dev/null
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/sw2.nmt" $SWO --lowercase --lang en,fr 2> /dev/null
check "subword models trained" test -s "$T/sw1.nmt" -a -s "$T/sw2.nmt"
head -n 8 "$D/val.en" > "$T/v8"
TR="$NMT_BIN translate --beam 4 --threads 1"
A=$T/a.nmt B=$T/b.nmt

# one model as an ensemble, and two copies of one: its output byte for byte
$TR --model "$A" --n-best 3 --alignment soft < "$T/v8" > "$T/one"
$TR --models "$A" --n-best 3 --alignment soft < "$T/v8" > "$T/one_m"
$TR --model "$A" --weights 2.5 --n-best 3 --alignment soft < "$T/v8" > "$T/one_w"
$TR --model "$A" --model "$A" --n-best 3 --alignment soft < "$T/v8" > "$T/two"
$TR --models "$A" "$A" --weights 1,1 --n-best 3 --alignment soft < "$T/v8" > "$T/two_m"
[ -s "$T/one" ] && ok || bad "no output from one model"
cmp -s "$T/one" "$T/one_m" && cmp -s "$T/one" "$T/one_w" && ok || bad "--models A or --weights 2.5 changes one model's output"
# an ensemble's n-best lines have one feature per model (F0= and F1=, here equal): the rest is the model's
nofeat() { awk -F ' \\|\\|\\| ' -v OFS=' ||| ' '{ $(NF - 1) = "F"; print }' "$1"; }
nofeat "$T/one" > "$T/one_nf"; nofeat "$T/two" > "$T/two_nf"; nofeat "$T/two_m" > "$T/two_m_nf"
cmp -s "$T/one_nf" "$T/two_nf" && cmp -s "$T/one_nf" "$T/two_m_nf" && ok || bad "two copies differ from the model: $(diff "$T/one_nf" "$T/two_nf" | head -n 4)"
awk -F ' \\|\\|\\| ' '{ n = split($(NF - 1), f, " "); if (n != 4 || f[1] != "F0=" || f[3] != "F1=" || f[2] != f[4]) bad = 1 } END { exit bad || NR == 0 }' \
    "$T/two" && ok || bad "two copies' features are not F0= x F1= x: $(head -n 2 "$T/two")"

# two models: each output's score is the mean of the models' own log-probabilities (raw scores);
# an output cut at the length limit has no EOS, which forced decoding would add: skipped
check_mean() { # WA WB: translate with weights WA,WB and compare with WA' a + WB' b (normalised)
    $TR --model "$A" --model "$B" --weights "$1,$2" --n-best 3 --no-length-norm < "$T/v8" > "$T/ens"
    awk -F ' \\|\\|\\| ' 'NR == FNR { src[NR - 1] = $0; next } { print src[$1] > "'"$T/es"'"; print $2 > "'"$T/eh"'" }' "$T/v8" "$T/ens"
    "$NMT_BIN" score --model "$A" --src "$T/es" --tgt "$T/eh" --threads 1 > "$T/sa"
    "$NMT_BIN" score --model "$B" --src "$T/es" --tgt "$T/eh" --threads 1 > "$T/sb"
    "$NMT_BIN" score --model "$A" --model "$B" --weights "$1,$2" --src "$T/es" --tgt "$T/eh" --threads 1 > "$T/sab"
    paste -d '\t' "$T/ens" "$T/sa" "$T/sb" "$T/sab" "$T/es" | awk -F '\t' -v wa="$1" -v wb="$2" '{
        split($1, f, " \\|\\|\\| "); nw = split(f[2], w, " "); ns = split($11, s, " "); split(f[3], F, " ");
        mean = (wa * $2 + wb * $5) / (wa + wb); d = f[4] - mean; if (d < 0) d = -d;
        e = $8 - mean; if (e < 0) e = -e; if (e > 3e-6) bad = 1;  # nmt score of the ensemble: the same sum
        if (nw == int(3 * (ns + 1))) next; n++; if (d > 2e-4) bad = 1; if ($2 != $5) differ = 1
        da = F[2] - $2; db = F[4] - $5; if (da < 0) da = -da; if (db < 0) db = -db;  # F0= and F1=: each model its own
        if (F[1] != "F0=" || F[3] != "F1=" || da > 2e-4 || db > 2e-4) bad = 1 }
        END { exit bad || n == 0 || !differ }' \
        && ok || bad "weights $1,$2: scores are not the weighted mean of the models': $(paste "$T/ens" "$T/sa" "$T/sb" | head -n 3)"
}
check_mean 1 1
check_mean 3 1
$TR --model "$A" --model "$B" --alignment soft < "$T/v8" > "$T/ens_al"
awk -F ' \\|\\|\\| ' '{ n = split($2, R, " ; "); for (i = 1; i <= n; i++) { k = split(R[i], w, " "); s = 0; for (j = 1; j <= k; j++) s += w[j];
    if (s < 0.99 || s > 1.01) bad = 1 } } END { exit bad || NR != 8 }' "$T/ens_al" && ok || bad "an ensemble's attention rows are not distributions"

# refusals: other vocabularies (exit 1), bad weights and one-model commands (exit 2)
expect_fail "fewer words" 1 "c.nmt has 200 source words, .*a.nmt 300" $TR --model "$A" --model "$T/c.nmt"
expect_fail "other words" 1 "e.nmt: source vocabulary differs from .*a.nmt's at id [0-9]+ \('" $TR --model "$A" --model "$T/e.nmt"
expect_fail "word and subword model" 1 "sw1.nmt is a subword model and .*a.nmt a word model" $TR --model "$A" --model "$T/sw1.nmt"
expect_fail "other text stages" 1 "sw2.nmt: the source side's text stages differ from .*sw1.nmt's" \
    $TR --model "$T/sw1.nmt" --model "$T/sw2.nmt"
expect_fail "score: other words" 1 "e.nmt: source vocabulary differs" "$NMT_BIN" score --models "$A" "$T/e.nmt" --src "$T/v8" --tgt "$T/v8"
expect_fail "weights count" 2 "--weights gives 3 weights for 2 models" $TR --model "$A" --model "$B" --weights 1,2,3
expect_fail "negative weight" 2 "--weights '1,-2': a weight is not a positive number" $TR --model "$A" --model "$B" --weights 1,-2
expect_fail "weights not numbers" 2 "--weights '1,x'" $TR --model "$A" --model "$B" --weights 1,x
expect_fail "align: one model" 2 "nmt align: error: --model given 2 times: nmt align uses one model only" \
    "$NMT_BIN" align --model "$A" --model "$B" --src "$T/v8" --tgt "$T/v8"
# serve takes several models side by side, by name (tests/cli/serve.sh), not as an ensemble
expect_fail "serve: two models of one name" 1 "nmt serve: error: two models named" \
    "$NMT_BIN" serve --model "$A" --model "$A" --port 0
"$NMT_BIN" translate --help | grep -q -- "--weights W1,W2" && "$NMT_BIN" score --help | grep -q -- "--models FILE" \
    && ok || bad "--help does not show the ensemble options"
finish ensemble
