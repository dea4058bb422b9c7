#!/bin/sh
# guided.sh: guided alignment training (docs/TRAINING.md): bad links files are refused with
# file:line, as are RNNencdec, subword units and --tokenize; a file of empty lines changes no
# bit; the options read back from --dump-config, are kept by a checkpoint (a stopped and resumed
# run ends with the uninterrupted run's model) and run on the simulated device bit for bit; the
# progress lines show its cost; and
# a small RNNsearch trained on links from `nmt ibm` attends along them on held-out sentences
# clearly more than one trained without (AER of `nmt align` against the IBM links); and the same
# for a Transformer, whose guided head (--alignment-layer, --alignment-head) the model names.
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
export OMP_WAIT_POLICY=PASSIVE
head -n 2000 "$D/train.en" > "$T/s"; head -n 2000 "$D/train.fr" > "$T/t"
head -n 200 "$D/test_2016_flickr.en" > "$T/ts"; head -n 200 "$D/test_2016_flickr.fr" > "$T/tt"
"$NMT_BIN" ibm --src "$T/s" --tgt "$T/t" --sym gdfa --threads 1 > "$T/links" 2> "$T/ibm.err" || bad "nmt ibm: $(tail -n 2 "$T/ibm.err")"
# the held-out sentences' links, from the same corpus with them added
"$NMT_BIN" ibm --src "$T/s" --tgt "$T/t" --test-src "$T/ts" --test-tgt "$T/tt" --sym gdfa --threads 1 > "$T/tlinks" 2> "$T/ibm.err" \
    || bad "nmt ibm on the held-out lines: $(tail -n 2 "$T/ibm.err")"
head -n 40 "$T/s" > "$T/s40"; head -n 40 "$T/t" > "$T/t40"; head -n 40 "$T/links" > "$T/l40"
BASE="--src $T/s40 --tgt $T/t40 --emb 16 --hid 16 --att 16 --maxout 16 --vocab 300 --batch 20 --sort-blocks 2
      --threads 1 --seed 7 --log-every 1000 --optimizer adam --lr 0.01"

train() { # NAME ARGS...: trains $T/NAME.nmt; its stderr in $T/NAME.log
    name=$1; shift
    # shellcheck disable=SC2086
    "$NMT_BIN" train $BASE "$@" --model "$T/$name.nmt" 2> "$T/$name.log" || bad "$name: exit $?: $(tail -n 2 "$T/$name.log")"
}

# ---- bad links files: file:line, the link or token, the counts
awk 'NR == 3 { print "99-0"; next } { print }' "$T/l40" > "$T/past_src"
awk 'NR == 5 { print $0 " 0-77"; next } { print }' "$T/l40" > "$T/past_tgt"
awk 'NR == 7 { print "1-"; next } { print }' "$T/l40" > "$T/dash"
awk 'NR == 8 { print "2-3 4:5"; next } { print }' "$T/l40" > "$T/colon"
head -n 39 "$T/l40" > "$T/short"
words=$(sed -n 3p "$T/s40" | wc -w); twords=$(sed -n 5p "$T/t40" | wc -w)
for c in "past_src|past_src:3: link 99-0 is past the source's $words words" "past_tgt|past_tgt:5: link 0-77 is past the target's $twords words" \
         "dash|dash:7: malformed link '1-'" "colon|colon:8: malformed link '4:5'" \
         "short|short has 39 lines but .*s40 has 40: guided alignment needs one line of links per sentence pair" \
         "absent|absent: No such file or directory"; do
    f=${c%%|*}
    # shellcheck disable=SC2086
    expect_fail "links file $f" 1 "${c#*|}" "$NMT_BIN" train $BASE --model "$T/x.nmt" --max-updates 2 --guided-alignment "$T/$f"
done
# shellcheck disable=SC2086
expect_fail "links file as the cost log" 1 "l40 is both the guided alignment links \(read\) and the cost log \(written\)" \
    "$NMT_BIN" train $BASE --model "$T/x.nmt" --max-updates 2 --guided-alignment "$T/l40" --cost-log "$T/l40"
[ -e "$T/x.nmt" ] && bad "a refused run wrote its model" || ok
# shellcheck disable=SC2086
expect_fail "rnnenc" 1 "guided-alignment: rnnenc has no attention to guide" \
    "$NMT_BIN" train $BASE --model "$T/x.nmt" --max-updates 2 --guided-alignment "$T/l40" --arch rnnenc
expect_fail "subword units" 1 "guided-alignment: the links index the corpus's words, which subword units split" \
    "$NMT_BIN" train --src "$T/s40" --tgt "$T/t40" --model "$T/x.nmt" --max-updates 2 --guided-alignment "$T/l40" --subwords bpe \
    --subword-vocab 300 --threads 1
# shellcheck disable=SC2086
expect_fail "--tokenize" 1 "guided-alignment: the links index the corpus's words, which --tokenize re-tokenizes" \
    "$NMT_BIN" train $BASE --model "$T/x.nmt" --max-updates 2 --guided-alignment "$T/l40" --tokenize en,fr
# shellcheck disable=SC2086
expect_fail "negative weight" 2 "guided-alignment-weight -1: out of range" \
    "$NMT_BIN" train $BASE --model "$T/x.nmt" --guided-alignment "$T/l40" --guided-alignment-weight -1
# shellcheck disable=SC2086
expect_fail "unknown cost" 2 "guided-alignment-cost 'kl': expected ce or mse" \
    "$NMT_BIN" train $BASE --model "$T/x.nmt" --guided-alignment "$T/l40" --guided-alignment-cost kl

# ---- no links is no guidance, bit for bit (every attention variant's way into dα)
sed 's/.*//' "$T/l40" > "$T/empty"
for a in rnnsearch locfer; do
    train "plain_$a" --max-updates 4 --arch $a
    train "empty_$a" --max-updates 4 --arch $a --guided-alignment "$T/empty"
    cmp -s "$T/plain_$a.nmt" "$T/empty_$a.nmt" && ok || bad "$a: a links file of empty lines changed the model"
done
train guided --max-updates 4 --guided-alignment "$T/l40" --cost-log "$T/guided.cost"
cmp -s "$T/plain_rnnsearch.nmt" "$T/guided.nmt" && bad "the links changed nothing" || ok
grep -q "guided alignment: [0-9]* links from .*l40, ce cost, weight 0.1" "$T/guided.log" && ok \
    || bad "no guided alignment in the summary: $(head -n 6 "$T/guided.log")"
awk -F'\t' 'NF != 4 || !($4 > 0) { exit 1 }' "$T/guided.cost" && ok || bad "the cost log lacks the guided cost: $(head -n 2 "$T/guided.cost")"

# ---- a checkpoint keeps the weight and the cost; the links are given again
train full --max-updates 8 --guided-alignment "$T/l40" --guided-alignment-weight 0.5 --guided-alignment-cost mse
train half --max-updates 4 --guided-alignment "$T/l40" --guided-alignment-weight 0.5 --guided-alignment-cost mse
"$NMT_BIN" train --src "$T/s40" --tgt "$T/t40" --threads 1 --model "$T/half.nmt" --resume "$T/half.nmt.ckpt" --max-updates 8 \
    --guided-alignment "$T/l40" 2> "$T/resume.log" || bad "resumed run: $(tail -n 2 "$T/resume.log")"
cmp -s "$T/full.nmt" "$T/half.nmt" && ok || bad "the resumed guided run ends with another model than the uninterrupted one"
grep -q "keeps its checkpoint's settings:.*guided alignment weight 0.5 (not 0.1), guided alignment cost mse (not ce)" "$T/resume.log" \
    && ok || bad "no warning that the checkpoint's weight and cost are kept: $(grep warn "$T/resume.log")"
expect_fail "resumed without the links" 1 "the run trains with guided alignment \(weight 0.5, mse cost\): give --guided-alignment FILE again" \
    "$NMT_BIN" train --src "$T/s40" --tgt "$T/t40" --threads 1 --model "$T/half.nmt" --resume "$T/half.nmt.ckpt" --max-updates 9

# an unguided run resumed with links goes on unguided, and says so
train plainr --max-updates 2
"$NMT_BIN" train --src "$T/s40" --tgt "$T/t40" --threads 1 --model "$T/plainr.nmt" --resume "$T/plainr.nmt.ckpt" --max-updates 4 \
    --guided-alignment "$T/l40" 2> "$T/plainr2.log" || bad "resumed unguided run: $(tail -n 2 "$T/plainr2.log")"
grep -q "keeps its checkpoint's settings:.*no guided alignment (not .*l40)" "$T/plainr2.log" && ok \
    || bad "no warning that the resumed run stays unguided: $(grep warn "$T/plainr2.log")"
grep -q "^guided alignment:" "$T/plainr2.log" && bad "the resumed unguided run reads the links" || ok

# ---- option files and the simulated device
# shellcheck disable=SC2086
"$NMT_BIN" train $BASE --model "$T/x.nmt" --guided-alignment "$T/l40" --guided-alignment-weight 0.25 --guided-alignment-cost mse \
    --dump-config > "$T/c.yaml"
for k in "guided-alignment: $T/l40" "guided-alignment-weight: 0.25" "guided-alignment-cost: mse"; do
    grep -q "^$k\$" "$T/c.yaml" && ok || bad "--dump-config lacks '$k'"
done
# shellcheck disable=SC2086
"$NMT_BIN" train $BASE --model "$T/x.nmt" --dump-config | grep -q guided && bad "a run without guidance dumps guided options" || ok
"$NMT_BIN" train -c "$T/c.yaml" --dump-config > "$T/c2.yaml" && cmp -s "$T/c.yaml" "$T/c2.yaml" && ok \
    || bad "the dumped options do not read back to themselves"
train devsim --max-updates 4 --guided-alignment "$T/l40" --device devsim
cmp -s "$T/guided.nmt" "$T/devsim.nmt" && ok || bad "guided training on the simulated device differs from the CPU's"

# ---- the attention follows the links: 300 updates on 2000 pairs with and without them, AER of
# nmt align on 200 held-out sentences against their IBM links. The attention's weights start
# Glorot-uniform (--init glorot-att): with the paper's N(0, 0.001²) start, whether guidance has
# moved the attention by update 300 depends on the seed (seeds 1, 3, 5, 7: unguided 0.88-0.93,
# ce 0.63-0.71, mse at 1 0.55-0.68; with the paper's start, seed 1 gave ce 0.89 against 0.88)
aer() { # NAME ARGS...
    name=$1; shift
    "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/$name.nmt" --emb 32 --hid 32 --att 32 --maxout 32 --vocab 2000 \
        --batch 40 --max-updates 300 --threads 2 --optimizer adam --lr 0.005 --seed 3 --init glorot-att --log-every 100 "$@" 2> "$T/$name.log" \
        || bad "$name: $(tail -n 2 "$T/$name.log")"
    "$NMT_BIN" align --model "$T/$name.nmt" --src "$T/ts" --tgt "$T/tt" --threads 2 > "$T/$name.align" 2> /dev/null
    "$NMT_BIN" aer --gold "$T/tlinks" --test "$T/$name.align" | awk '$1 == "AER" { print $2 }'
}
a0=$(aer unguided)
a1=$(aer guided_ce --guided-alignment "$T/links")
a2=$(aer guided_mse --guided-alignment "$T/links" --guided-alignment-cost mse --guided-alignment-weight 1)
echo "AER against the IBM links on 200 held-out sentences: unguided $a0, ce (weight 0.1) $a1, mse (weight 1) $a2"
grep -q "update [0-9]* | .* | cost [0-9.]* | guided [0-9.]* | gnorm" "$T/guided_ce.log" && ok \
    || bad "no guided cost in the progress lines: $(grep update "$T/guided_ce.log" | tail -n 1)"
grep -q "| guided" "$T/unguided.log" && bad "a guided cost in an unguided run's progress lines" || ok
awk -v u="$a0" -v g="$a1" 'BEGIN { exit !(u != "" && g != "" && g + 0.1 < u) }' && ok \
    || bad "guided (ce) AER $a1 is not clearly below the unguided $a0"
awk -v u="$a0" -v g="$a2" 'BEGIN { exit !(u != "" && g != "" && g + 0.1 < u) }' && ok \
    || bad "guided (mse) AER $a2 is not clearly below the unguided $a0"
# --guided-alignment ibm: the corpus aligned by nmt ibm --sym gdfa first, kept beside the model
# (the same links, the same model as the file given), and read again while newer than the corpus
train ibm1 --guided-alignment ibm --max-updates 5
"$NMT_BIN" ibm --src "$T/s40" --tgt "$T/t40" --sym gdfa > "$T/l40gdfa" 2> /dev/null
cmp -s "$T/ibm1.nmt.ibm-links" "$T/l40gdfa" && ok || bad "--guided-alignment ibm's links differ from nmt ibm --sym gdfa's"
train ibm2 --guided-alignment "$T/l40gdfa" --max-updates 5
cmp -s "$T/ibm1.nmt" "$T/ibm2.nmt" && ok || bad "--guided-alignment ibm trained another model than its links given as a file"
cp "$T/ibm1.nmt.ibm-links" "$T/ibm3.nmt.ibm-links"
train ibm3 --guided-alignment ibm --max-updates 5
grep -q "the links of .*ibm3.nmt.ibm-links (newer than the corpus)" "$T/ibm3.log" && ok || bad "the kept links were not read again"
cmp -s "$T/ibm1.nmt" "$T/ibm3.nmt" && ok || bad "the kept links trained another model"
# ---- the Transformer: the cost on one head of one decoder layer's encoder-decoder attention
TFB="--src $T/s40 --tgt $T/t40 --vocab 300 --batch 20 --sort-blocks 2 --threads 1 --seed 7 --log-every 1000 --optimizer adam
     --lr 0.01 --arch transformer --dim-model 16 --enc-depth 1 --dec-depth 2 --heads 2 --dim-ffn 32 --transformer-dropout 0.1
     --transformer-dropout-attention 0.1"
tf_train() { # NAME ARGS...: as train, a Transformer
    name=$1; shift
    # shellcheck disable=SC2086
    "$NMT_BIN" train $TFB "$@" --model "$T/$name.nmt" 2> "$T/$name.log" || bad "$name: exit $?: $(tail -n 2 "$T/$name.log")"
}
# shellcheck disable=SC2086
expect_fail "--alignment-layer past the decoder" 1 "alignment-layer 3: the decoder has layers 1 to 2 \(--dec-depth\)" \
    "$NMT_BIN" train $TFB --model "$T/x.nmt" --guided-alignment "$T/l40" --alignment-layer 3
# shellcheck disable=SC2086
expect_fail "--alignment-head past the heads" 1 "alignment-head 2: the heads are 0 to 1 \(--heads 2\)" \
    "$NMT_BIN" train $TFB --model "$T/x.nmt" --guided-alignment "$T/l40" --alignment-head 2
# shellcheck disable=SC2086
expect_fail "--alignment-layer with rnnsearch" 2 "alignment-layer belongs to --arch transformer; not with --arch rnnsearch" \
    "$NMT_BIN" train $BASE --model "$T/x.nmt" --guided-alignment "$T/l40" --alignment-layer 1
header() { head -c 2000 "$1" | tr -d '\\' | grep -ao '"align_[a-z]*":[0-9]*' | tr '\n' ' '; }
weights() { tail -c +$(($(od -An -t u8 -N 8 "$1") + 9)) "$1"; } # a model file's tensors, past its header
tf_train tf_plain --max-updates 4
[ -z "$(header "$T/tf_plain.nmt")" ] && ok || bad "an unguided Transformer names an alignment head: $(header "$T/tf_plain.nmt")"
# a file of empty lines guides nothing: the same weights; the model names the head it would have
# trained (the last layer's head 0), which alignments then read
tf_train tf_empty --max-updates 4 --guided-alignment "$T/empty"
weights "$T/tf_plain.nmt" > "$T/tf_plain.w"
weights "$T/tf_empty.nmt" | cmp -s "$T/tf_plain.w" - && ok || bad "a links file of empty lines changed the Transformer's weights"
[ "$(header "$T/tf_empty.nmt")" = '"align_layer":2 "align_head":1 ' ] && ok \
    || bad "a guided Transformer does not name its head (the last layer's head 0): $(header "$T/tf_empty.nmt")"
tf_train tf_g4 --max-updates 4 --guided-alignment "$T/l40"
weights "$T/tf_g4.nmt" | cmp -s "$T/tf_plain.w" - && bad "the links changed no Transformer weight" || ok
# λ's default is the family's: Garg et al.'s 0.05 for a Transformer, Marian's 0.1 for RNNsearch;
# one given is kept, and a resumed run keeps its checkpoint's
grep -q "guided alignment: .* ce cost, weight 0.05$" "$T/tf_g4.log" && ok \
    || bad "a Transformer's default weight: $(grep 'guided alignment:' "$T/tf_g4.log")"
tf_train tf_w2 --max-updates 1 --guided-alignment "$T/l40" --guided-alignment-weight 0.2
grep -q "guided alignment: .* weight 0.2$" "$T/tf_w2.log" && ok || bad "a weight given: $(grep 'guided alignment:' "$T/tf_w2.log")"
train rnn_w --max-updates 1 --guided-alignment "$T/l40"
grep -q "guided alignment: .* weight 0.1$" "$T/rnn_w.log" && ok || bad "RNNsearch's default weight: $(grep 'guided alignment:' "$T/rnn_w.log")"
"$NMT_BIN" train $TFB --model "$T/tf_w2.nmt" --resume "$T/tf_w2.nmt.ckpt" --max-updates 2 --guided-alignment "$T/l40" \
    2> "$T/tf_w2r.log" || bad "resumed: $(tail -n 2 "$T/tf_w2r.log")"
grep -q "guided alignment: .* weight 0.2$" "$T/tf_w2r.log" && ok || bad "a resumed run's weight: $(grep 'guided alignment:' "$T/tf_w2r.log")"
grep -q "warning: .*guided alignment weight 0.2 (not 0.05)" "$T/tf_w2r.log" && ok \
    || bad "no warning that the checkpoint's weight is kept over the default: $(grep warning "$T/tf_w2r.log")"
# stopped and resumed, and on the simulated device: the uninterrupted CPU run's model bit for bit
G1="--guided-alignment $T/l40 --guided-alignment-cost mse --alignment-layer 1 --alignment-head 1"
# shellcheck disable=SC2086
tf_train tf_full --max-updates 8 $G1
[ "$(header "$T/tf_full.nmt")" = '"align_layer":1 "align_head":2 ' ] && ok \
    || bad "the guided Transformer's config does not name layer 1, head 1: $(header "$T/tf_full.nmt")"
# shellcheck disable=SC2086
tf_train tf_half --max-updates 4 $G1
"$NMT_BIN" train --src "$T/s40" --tgt "$T/t40" --threads 1 --model "$T/tf_half.nmt" --resume "$T/tf_half.nmt.ckpt" --max-updates 8 \
    --guided-alignment "$T/l40" 2> "$T/tf_resume.log" || bad "resumed Transformer: $(tail -n 2 "$T/tf_resume.log")"
cmp -s "$T/tf_full.nmt" "$T/tf_half.nmt" && ok || bad "the resumed guided Transformer ends with another model than the uninterrupted one"
# a model from a file keeps the head it names (a warning names the option not followed); a guided
# run fine-tuning one that names none takes the options' head
"$NMT_BIN" train --src "$T/s40" --tgt "$T/t40" --threads 1 --model "$T/tf_half.nmt" --resume "$T/tf_half.nmt.ckpt" --max-updates 9 \
    --guided-alignment "$T/l40" --arch transformer --alignment-head 0 2> "$T/tf_resume2.log" || bad "resumed: $(tail -n 2 "$T/tf_resume2.log")"
grep -q "warning: the model from the file reports alignments from layer 1, head 1 (which guided alignment trains): --alignment-head is not followed" \
    "$T/tf_resume2.log" && ok || bad "no warning that --alignment-head is not followed: $(grep warn "$T/tf_resume2.log")"
[ "$(header "$T/tf_half.nmt")" = '"align_layer":1 "align_head":2 ' ] && ok || bad "the resumed run changed the head: $(header "$T/tf_half.nmt")"
tf_train tf_tuned --max-updates 2 --pretrained-model "$T/tf_plain.nmt" --guided-alignment "$T/l40" --alignment-head 1
[ "$(header "$T/tf_tuned.nmt")" = '"align_layer":2 "align_head":2 ' ] && ok \
    || bad "a guided run from an unguided model does not name the options' head: $(header "$T/tf_tuned.nmt")"
grep -q "alignment-head is not followed" "$T/tf_tuned.log" && bad "a warning for the head the run follows" || ok
# shellcheck disable=SC2086
tf_train tf_devsim --max-updates 8 $G1 --device devsim
cmp -s "$T/tf_full.nmt" "$T/tf_devsim.nmt" && ok || bad "guided Transformer training on the simulated device differs from the CPU's"
# the sanitizer pass (--quick) stops here: the AER runs below repeat the paths run above, at length
if [ "${1:-}" = --quick ]; then
    echo "guided: the Transformer's AER runs skipped under --quick"
    finish guided
    exit
fi
# AER as above: 200 updates on 2000 pairs, unguided (alignments: the last layer's mean of heads),
# ce on layer 1's head 0, mse on the last layer's head 1; each aligned by the head it trained.
# Seed 3 gave unguided 0.68, ce 0.44, mse 0.42.
tf_aer() { # NAME ARGS...
    name=$1; shift
    "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/$name.nmt" --arch transformer --dim-model 32 --enc-depth 1 --dec-depth 2 \
        --heads 2 --dim-ffn 64 --vocab 2000 --batch 40 --max-updates 200 --threads 2 --optimizer adam --lr 0.005 --seed 3 \
        --log-every 100 "$@" 2> "$T/$name.log" || bad "$name: $(tail -n 2 "$T/$name.log")"
    "$NMT_BIN" align --model "$T/$name.nmt" --src "$T/ts" --tgt "$T/tt" --threads 2 > "$T/$name.align" 2> /dev/null
    "$NMT_BIN" aer --gold "$T/tlinks" --test "$T/$name.align" | awk '$1 == "AER" { print $2 }'
}
t0=$(tf_aer tf_unguided)
t1=$(tf_aer tf_ce --guided-alignment "$T/links" --alignment-layer 1)
t2=$(tf_aer tf_mse --guided-alignment "$T/links" --guided-alignment-cost mse --guided-alignment-weight 1 --alignment-head 1)
echo "Transformer AER against the IBM links on 200 held-out sentences: unguided $t0, ce (layer 1 head 0) $t1, mse (weight 1, head 1) $t2"
awk -v u="$t0" -v g="$t1" 'BEGIN { exit !(u != "" && g != "" && g + 0.1 < u) }' && ok \
    || bad "guided Transformer (ce) AER $t1 is not clearly below the unguided $t0"
awk -v u="$t0" -v g="$t2" 'BEGIN { exit !(u != "" && g != "" && g + 0.1 < u) }' && ok \
    || bad "guided Transformer (mse) AER $t2 is not clearly below the unguided $t0"
finish guided
