#!/bin/sh
# attention_alignment.sh: the attention-as-alignment experiments of lab/JOURNAL.md (issue "nmt align").
#   lab/attention_alignment.sh DIR train VOCAB            Multi30k en->fr RNNsearch, SMALL, shortlist VOCAB
#                                                   (DIR/m30k-VOCAB.nmt; the variants table's recipe)
#   lab/attention_alignment.sh DIR aer NAME MODEL TRAIN_PREFIX ...
#                                                   AER/SAER of MODEL's forced attention on the
#                                                   Hansards and ALIBI gold sets, unknown-word rates
#                                                   under its vocabulary, and the IBM aligner trained
#                                                   on TRAIN_PREFIX.{en,fr} (the model's own data)
#   lab/attention_alignment.sh DIR unk MODEL              test_2016_flickr BLEU before/after --unk-replace
#   lab/attention_alignment.sh DIR heatmaps MODEL OUT     Figure 3: the attention over the model's own beam-12
#                                                   translation of one chosen sentence and three random
#                                                   10-20-word test_2016_flickr sentences (OUT/heatmap-*)
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NMT=${NMT:-$ROOT/bin/nmt}
SHARED=${NMT_SHARED:-$ROOT/../shared}
M=$SHARED/data/multi30k/tok
A=$SHARED/data/alignment/en-fr
THREADS=${THREADS:-1}
export OMP_WAIT_POLICY=PASSIVE LC_ALL=C.UTF-8   # sed's \L lowercases UTF-8 letters
DIR=$1; MODE=$2; shift 2
. "$ROOT/lab/lib.sh"
mkdir -p "$DIR"

case "$MODE" in
train)
    v=$1; n=m30k-$v; start=$(date +%s); rc=0
    "$NMT" train --src $M/train.en --tgt $M/train.fr --valid-src $M/val.en --valid-tgt $M/val.fr \
        --model "$DIR/$n.nmt" --emb 256 --hid 256 --att 256 --maxout 256 --vocab "$v" \
        --max-len 50 --optimizer adam --lr 0.002 --clip 1 --max-updates 726 --valid-every 242 \
        --threads "$THREADS" --seed 1 --log-every 100 > "$DIR/$n.out" 2> "$DIR/$n.err" || rc=$?
    echo "$n rc=$rc wall_s=$(( $(date +%s) - start ))" >> "$DIR/done.txt" ;;
aer)
    printf 'aligner\tgold\tAER\tSAER\tprecision\trecall\n'
    while [ $# -ge 3 ]; do
        name=$1; model=$2; tp=$3; shift 3
        T=$DIR/$name; mkdir -p "$T"
        "$NMT" vocab --size "${VOCAB:-10000}" "$tp.en" 2> /dev/null | cut -f2 > "$T/voc.en"
        "$NMT" vocab --size "${VOCAB:-10000}" "$tp.fr" 2> /dev/null | cut -f2 > "$T/voc.fr"
        for g in hansards_naacl2003 alibi_literary; do
            gold_text $g en > "$T/$g.en"; gold_text $g fr > "$T/$g.fr"
            echo "# $name, vocabulary ${VOCAB:-10000}: unknown words in $g: en $(unk_rate "$T/voc.en" "$T/$g.en")," \
                 "fr $(unk_rate "$T/voc.fr" "$T/$g.fr")" >&2
            "$NMT" align --model "$model" --src "$T/$g.en" --tgt "$T/$g.fr" --threads "$THREADS" > "$T/$g.att"
            "$NMT" align --model "$model" --src "$T/$g.en" --tgt "$T/$g.fr" --threads "$THREADS" --soft > "$T/$g.soft"
            aer_row "$name attention" $g "$T/$g.att" "$T/$g.soft"
            # the IBM aligner on the same training text, the gold pairs appended (as fast_align is run)
            "$NMT" ibm --src "$tp.en" --tgt "$tp.fr" --test-src "$T/$g.en" --test-tgt "$T/$g.fr" \
                --sym gdfa --threads "$THREADS" > "$T/$g.ibm" 2> /dev/null
            aer_row "$name IBM gdfa" $g "$T/$g.ibm"
        done
    done ;;
unk)
    model=$1; T=$DIR/unk; mkdir -p "$T"
    ibm_lexicon "$T"
    b=$(basename "$model" .nmt)
    "$NMT" translate --model "$model" --beam 12 --threads "$THREADS" < $M/test_2016_flickr.en > "$T/$b.hyp"
    "$NMT" translate --model "$model" --beam 12 --threads "$THREADS" --unk-replace "$T/ibm.lex" \
        < $M/test_2016_flickr.en > "$T/$b.rep"
    echo "$b: <unk> in the output: $(grep -o '<unk>' "$T/$b.hyp" | wc -l) tokens in" \
         "$(grep -c '<unk>' "$T/$b.hyp") sentences"
    for f in hyp rep; do
        printf '%s %s: ' "$b" $f; "$NMT" bleu --tokenize none -i "$T/$b.$f" $M/test_2016_flickr.fr | head -1
    done ;;
heatmaps)
    model=$1; out=$2; T=$DIR/heat; mkdir -p "$T" "$out"
    # the chosen sentence: a relative clause and two adjective-noun pairs, which French reorders
    echo "a young woman in a red coat is holding a small white dog that is looking at the camera ." > "$T/src"
    awk 'NF >= 10 && NF <= 20' $M/test_2016_flickr.en > "$T/pool"
    # a fixed seed, so that the same three are drawn again
    awk 'BEGIN { srand(2014) } { print rand() "\t" $0 }' "$T/pool" | sort -n | head -3 | cut -f2 >> "$T/src"
    "$NMT" translate --model "$model" --beam 12 --threads "$THREADS" < "$T/src" > "$T/tgt"
    for k in 1 2 3 4; do
        "$NMT" plot --model "$model" --src "$T/src" --tgt "$T/tgt" --line $k --out "$out/heatmap-$k" --format both
    done
    paste -d '\n' "$T/src" "$T/tgt" ;;
*)
    echo "usage: $0 DIR train VOCAB | $0 DIR aer NAME MODEL TRAIN_PREFIX ... | $0 DIR unk MODEL | $0 DIR heatmaps MODEL OUT" >&2; exit 2 ;;
esac
