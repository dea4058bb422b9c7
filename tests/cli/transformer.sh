#!/bin/sh
# transformer.sh: --arch transformer from the command line (docs/TRAINING.md): a small model
# trains with dropout and label smoothing, a run stopped and resumed ends with the uninterrupted
# run's model bit for bit, the simulated device gives the CPU's model byte for byte, the model
# translates (beam and n-best), averages and scores, and options of the other family are refused.
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
export OMP_WAIT_POLICY=PASSIVE
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
head -n 20 "$D/val.en" > "$T/vs"; head -n 20 "$D/val.fr" > "$T/vt"
BASE="--src $T/s --tgt $T/t --arch transformer --dim-model 16 --enc-depth 2 --dec-depth 1 --heads 2 --dim-ffn 32
      --vocab 300 --batch 20 --sort-blocks 2 --threads 1 --seed 7 --log-every 1000 --optimizer adam --lr 0.01
      --transformer-dropout 0.1 --transformer-dropout-attention 0.1 --transformer-dropout-ffn 0.1 --label-smoothing 0.1"
train() { # NAME ARGS...: trains $T/NAME.nmt; its stderr in $T/NAME.log
    name=$1; shift
    # shellcheck disable=SC2086
    "$NMT_BIN" train $BASE "$@" --model "$T/$name.nmt" 2> "$T/$name.log" || bad "$name: exit $?: $(tail -n 2 "$T/$name.log")"
}
train full --max-updates 30
train half --max-updates 15
# shellcheck disable=SC2086
"$NMT_BIN" train $BASE --model "$T/half.nmt" --resume "$T/half.nmt.ckpt" --max-updates 30 2> "$T/resume.log" \
    || bad "resumed run: $(tail -n 2 "$T/resume.log")"
cmp -s "$T/full.nmt" "$T/half.nmt" && ok || bad "the resumed run ends with another model than the uninterrupted one"
# the sizes the run asked for are the checkpoint's: no warning that it trains another model
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --arch transformer --threads 1 --model "$T/half1.nmt" --resume "$T/half.nmt.ckpt" \
    --max-updates 31 2> "$T/resume1.log" || bad "resume without the sizes: $(tail -n 2 "$T/resume1.log")"
grep -q "trains this file's model" "$T/resume1.log" && bad "resume warns of sizes never asked: $(grep "file's model" "$T/resume1.log")" || ok
"$NMT_BIN" train $BASE --model "$T/half2.nmt" --resume "$T/half.nmt.ckpt" --max-updates 31 --dec-depth 3 2> "$T/resume2.log"
grep -q "trains this file's model: 1 decoder layers (not 3)" "$T/resume2.log" && ok || bad "resume with another depth: $(grep "file's model" "$T/resume2.log")"
train sim --max-updates 30 --device devsim
cmp -s "$T/full.nmt" "$T/sim.nmt" && ok || bad "the simulated device trains another model than the CPU"
train nodrop --max-updates 30 --transformer-dropout 0 --transformer-dropout-attention 0 --transformer-dropout-ffn 0
cmp -s "$T/full.nmt" "$T/nodrop.nmt" && bad "dropout changed nothing" || ok
# translate: a line out per line in, n-best in Marian's format, the same on the simulated device
"$NMT_BIN" translate --model "$T/full.nmt" --beam 4 --threads 1 < "$T/vs" > "$T/out" 2> "$T/tr.err" || bad "translate: $(tail -n 2 "$T/tr.err")"
[ "$(wc -l < "$T/out")" -eq 20 ] && ok || bad "translate wrote $(wc -l < "$T/out") lines for 20"
NMT_DEVICE=devsim "$NMT_BIN" translate --model "$T/full.nmt" --beam 4 --threads 1 < "$T/vs" > "$T/out.sim" 2> "$T/tr.err"
cmp -s "$T/out" "$T/out.sim" && ok || bad "the simulated device translates otherwise"
"$NMT_BIN" translate --model "$T/full.nmt" --beam 4 --n-best 4 --threads 1 < "$T/vs" > "$T/nbest" 2> "$T/tr.err" || bad "n-best: $(tail -n 2 "$T/tr.err")"
[ "$(grep -c '^19 ||| ' "$T/nbest")" -eq 4 ] && ok || bad "n-best: not 4 hypotheses for line 19: $(tail -n 2 "$T/nbest")"
# averaging two of the run's models gives a model that translates
"$NMT_BIN" average --out "$T/avg.nmt" "$T/full.nmt" "$T/nodrop.nmt" 2> "$T/avg.err" || bad "average: $(tail -n 2 "$T/avg.err")"
"$NMT_BIN" translate --model "$T/avg.nmt" --beam 2 --threads 1 < "$T/vs" > "$T/out.avg" 2> "$T/tr.err" || bad "translate the average"
# refusals: the other family's options, sizes that do not fit
expect_fail "--heads with rnnsearch" 2 "--heads belongs to --arch transformer" \
    "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/x.nmt" --heads 4
expect_fail "--hid with a transformer" 2 "--hid belongs to the recurrent models" \
    "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/x.nmt" --arch transformer --hid 32
expect_fail "heads that do not divide d" 1 "the model size 16 is not divisible by 3 heads" \
    "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/x.nmt" --arch transformer --dim-model 16 --heads 3
expect_fail "tied all over two vocabularies" 1 "tying all embeddings needs one joint vocabulary" \
    "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/x.nmt" --arch transformer --dim-model 16 --heads 2 --tied-embeddings-all \
    --src-vocab 200 --tgt-vocab 300
expect_fail "tied all over two word lists" 1 "--tied-embeddings-all needs one joint vocabulary, but entry 2 is" \
    "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/x.nmt" --arch transformer --dim-model 16 --heads 2 --tied-embeddings-all \
    --vocab 300
# the preset is the options it names, and no more (docs/TRAINING.md)
TH="--arch transformer --dim-model 128 --enc-depth 4 --dec-depth 4 --heads 4 --dim-ffn 256 --transformer-ffn-activation relu
    --vocab 10000 --tied-embeddings --transformer-dropout 0.3 --label-smoothing 0.1 --optimizer adam --lr 0.002 --clip 5
    --lr-warmup 1000 --lr-decay-inv-sqrt 1000 --max-epochs 0 --max-time 3600 --patience 5"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/p1.nmt" --preset transformer-hour --max-updates 2 --threads 1 2> "$T/p1.log" \
    || bad "--preset transformer-hour: $(tail -n 2 "$T/p1.log")"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/p2.nmt" $TH --max-updates 2 --threads 1 2> "$T/p2.log" \
    || bad "the preset's options: $(tail -n 2 "$T/p2.log")"
cmp -s "$T/p1.nmt" "$T/p2.nmt" && ok || bad "--preset transformer-hour trains another model than its options"
grep -q "4 + 4 layers, 4 heads, feed-forward 256 (relu), pre-norm" "$T/p1.log" && ok || bad "the preset's model: $(grep '^transformer:' "$T/p1.log")"
# --dump-config of a Transformer run reads back (-c) into the same run: its sizes and dropouts
# listed, given or not, and none of the recurrent models' options, which -c would refuse
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/p3.nmt" --preset transformer-hour --dim-ffn 128 --max-updates 2 \
    --threads 1 --dump-config > "$T/p3.yml" 2> "$T/p3.log" || bad "--dump-config: $(tail -n 2 "$T/p3.log")"
for k in "dim-model: 128" "enc-depth: 4" "heads: 4" "dim-ffn: 128" "transformer-norm: pre" "transformer-dropout: 0.3"; do
    grep -qx "$k" "$T/p3.yml" && ok || bad "the Transformer's dump has no '$k'"
done
grep -qE "^(emb|hid|att|maxout|window|init|dropout|dropout-rnn):" "$T/p3.yml" \
    && bad "the Transformer's dump lists a recurrent model's option: $(grep -E '^(emb|hid|init|dropout):' "$T/p3.yml")" || ok
"$NMT_BIN" train -c "$T/p3.yml" 2> "$T/p3.log" || bad "-c a Transformer's dump: $(tail -n 2 "$T/p3.log")"
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/p4.nmt" --preset transformer-hour --dim-ffn 128 --max-updates 2 \
    --threads 1 2> "$T/p4.log"
cmp -s "$T/p3.nmt" "$T/p4.nmt" && ok || bad "-c a Transformer's dump trains another model than its options"
finish transformer
