#!/bin/sh
# lengths_1200.sh: Bahdanau et al. 2014 Table 1 and Figure 2 at small scale on ../shared/data/wmt_enfr
# (lab/JOURNAL.md): RNNencdec and RNNsearch trained with length limits 30 and 50, same data, same
# recipe and the same number of updates, then `nmt report` over newstest2013.
#   lab/lengths_1200.sh DIR prep                 (tokenized, lowercased copies in DIR/data)
#   lab/lengths_1200.sh DIR train ARCH MAXLEN    (DIR/ARCH-MAXLEN.nmt; run two at once, 1 thread each)
#   lab/lengths_1200.sh DIR eval                 (beam-12 decoding, with and without --no-unk; report)
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NMT=${NMT:-$ROOT/bin/nmt}
SHARED=${NMT_SHARED:-$ROOT/../shared}
W=$SHARED/data/wmt_enfr
UPDATES=${UPDATES:-1200}
THREADS=${THREADS:-1}
BEAM=${BEAM:-12}
export OMP_WAIT_POLICY=PASSIVE
DIR=$1; MODE=$2; shift 2
D=$DIR/data
mkdir -p "$D"

case "$MODE" in
prep)
    # Moses tokenization after punctuation normalisation, lowercased: Multi30k's preprocessing
    for s in train dev test; do
        for l in en fr; do
            "$NMT" tokenize -l $l --lowercase --normalize-punct < $W/$s.$l > "$D/$s.$l"
        done
    done
    wc -l "$D"/*.en "$D"/*.fr ;;
train)
    a=$1; len=$2; n=$a-$len
    start=$(date +%s); rc=0
    "$NMT" train --src "$D/train.en" --tgt "$D/train.fr" --valid-src "$D/dev.en" --valid-tgt "$D/dev.fr" \
        --model "$DIR/$n.nmt" --arch "$a" --emb 256 --hid 256 --att 256 --maxout 256 --vocab 10000 \
        --max-len "$len" --optimizer adam --lr 0.002 --clip 1 --max-updates "$UPDATES" --valid-every 400 \
        --patience 0 --threads "$THREADS" --seed 1 --log-every 100 > "$DIR/$n.out" 2> "$DIR/$n.err" || rc=$?
    echo "$n rc=$rc wall_s=$(( $(date +%s) - start ))" >> "$DIR/done.txt" ;;
eval)
    set -- rnnenc-30 rnnsearch-30 rnnenc-50 rnnsearch-50
    hyps=; labels=
    for n in "$@"; do
        for v in all nounk; do
            o="$DIR/$n.$v"
            [ -s "$o" ] && [ "$(wc -l < "$o")" = "$(wc -l < "$D/test.en")" ] && continue
            flag=; [ $v = nounk ] && flag=--no-unk
            start=$(date +%s)
            "$NMT" translate --model "$DIR/$n.nmt" --beam "$BEAM" --threads "$THREADS" $flag \
                < "$D/test.en" > "$o" 2> "$o.err"
            echo "$n $v decode_s=$(( $(date +%s) - start ))" >> "$DIR/done.txt"
        done
        hyps="$hyps --hyp $DIR/$n.all --hyp-nounk $DIR/$n.nounk"
        labels="$labels${labels:+,}$(echo "$n" | sed 's/rnnenc/RNNencdec/; s/rnnsearch/RNNsearch/')"
    done
    # the source side decides the length buckets; both vocabularies (equal for all four models, as
    # they come from the same training text) decide which sentences hold an unknown word
    "$NMT" report --src "$D/test.en" --ref "$D/test.fr" $hyps --labels "$labels" \
        --unk-vocab "$DIR/rnnsearch-50.nmt" --tokenize none --out "$DIR/fig2" \
        --title "BLEU by source sentence length, newstest2013 (wmt_enfr, SMALL models)" ;;
*)
    echo "usage: $0 DIR prep | $0 DIR train ARCH MAXLEN | $0 DIR eval" >&2; exit 2 ;;
esac
