#!/bin/sh
# converge_bahdanau.sh: Bahdanau et al. 2014 Table 1 and Figure 2 on converged models (issue 21):
# RNNencdec and RNNsearch, length limits 30 and 50, on ../shared/data/wmt_enfr, each trained with the
# `hour` recipe (SMALL sizes, 10,000 words a side) until dev perplexity on newstest2012 stops improving
# (patience 4, the rate halved on each plateau), then beam 12 on newstest2013 with and without length
# normalisation (is RNNencdec's brevity the model or the search?), and with --no-unk for Table 1.
# Stoppable and resumable at any moment, like converge_feng.sh: a cut run resumes from its checkpoint;
# a finished one leaves its dev curve and wall time in lab/runs/lengths/ (KEEP, committed).
#   lab/converge_bahdanau.sh DIR train ARCH-MAXLEN...   (one queue; run two side by side)
#   lab/converge_bahdanau.sh DIR decode ARCH-MAXLEN...  (one model's decodings as soon as it is
#                                                               trained, its BLEU into KEEP/NAME.bleu)
#   lab/converge_bahdanau.sh DIR eval                   (decodings, then nmt report)
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NMT=${NMT:-$ROOT/bin/nmt}
SHARED=${NMT_SHARED:-$ROOT/../shared}
W=$SHARED/data/wmt_enfr
THREADS=${THREADS:-1}
BEAM=${BEAM:-12}
MAX_EPOCHS=${MAX_EPOCHS:-40}
KEEP=${KEEP:-$ROOT/lab/runs/lengths}
# Figure 2 as docs/results/claims.md shows it (PNG, SVG and the TSV behind them)
FIG=${FIG:-$ROOT/docs/results/figure2-lengths}
export OMP_WAIT_POLICY=PASSIVE
DIR=$1; MODE=$2
[ -n "$DIR" ] && [ -n "$MODE" ] || { sed -n '2,12p' "$0"; exit 2; }
shift 2
D=$DIR/data
mkdir -p "$D" "$KEEP"

# the text as the 1,200-update experiment had it (lengths_1200.sh prep): Moses tokenization after
# punctuation normalisation, lowercased
prep() {
    exec 9> "$D/.lock"; flock 9   # two queues may start at once
    if [ ! -s "$D/done" ]; then
        for s in train dev test; do
            for l in en fr; do "$NMT" tokenize -l $l --lowercase --normalize-punct < "$W/$s.$l" > "$D/$s.$l"; done
        done
        echo ok > "$D/done"
    fi
    flock -u 9; exec 9>&-
}

# train_one ARCH-MAXLEN
train_one() {
    n=$1; a=${n%-*}; len=${n##*-}
    [ -s "$KEEP/$n.tsv" ] && return 0
    resume=; [ -s "$DIR/$n.nmt.ckpt" ] && resume="--resume $DIR/$n.nmt.ckpt"
    start=$(date +%s); rc=0
    # shellcheck disable=SC2086
    "$NMT" train --src "$D/train.en" --tgt "$D/train.fr" --valid-src "$D/dev.en" --valid-tgt "$D/dev.fr" \
        --model "$DIR/$n.nmt" --arch "$a" --preset hour --max-time 0 --max-epochs "$MAX_EPOCHS" \
        --max-len "$len" --threads "$THREADS" --seed 1 --log-every 200 $resume \
        >> "$DIR/$n.out" 2>> "$DIR/$n.err" || rc=$?
    echo "$n rc=$rc wall_s=$(( $(date +%s) - start )) resumed=${resume:+yes}" >> "$DIR/runs.txt"
    [ "$rc" = 0 ] || exit "$rc"
    cp "$DIR/$n.nmt.log.tsv" "$KEEP/$n.tsv"
    grep "^$n " "$DIR/runs.txt" > "$KEEP/$n.runs"
}

# decode NAME VARIANT: DIR/NAME.VARIANT, the 3,000 test sentences (all: length-normalised; nounk:
# and never <unk>; raw: ranked by log-probability alone)
decode() {
    o="$DIR/$1.$2"
    [ -s "$o" ] && [ "$(wc -l < "$o")" = "$(wc -l < "$D/test.en")" ] && return 0
    case $2 in all) flag= ;; nounk) flag=--no-unk ;; raw) flag=--no-length-norm ;; esac
    start=$(date +%s)
    # shellcheck disable=SC2086
    "$NMT" translate --model "$DIR/$1.nmt" --beam "$BEAM" --threads "$THREADS" $flag < "$D/test.en" > "$o" 2> "$o.err"
    echo "$1 $2 decode_s=$(( $(date +%s) - start ))" >> "$DIR/runs.txt"
}

# decode_one NAME: the three decodings of one trained model and their corpus BLEU (detokenization
# aside, as nmt report scores: tokenized, lowercased text) into KEEP/NAME.bleu
decode_one() {
    n=$1
    [ -s "$KEEP/$n.tsv" ] || { echo "$n: not trained to the end yet" >&2; exit 1; }
    for v in all nounk raw; do decode "$n" $v; done
    for v in all nounk raw; do
        printf '%s\t%s\t%s\n' "$n" "$v" "$("$NMT" bleu --tokenize none -i "$DIR/$n.$v" "$D/test.fr")"
    done > "$KEEP/$n.bleu"
    cat "$KEEP/$n.bleu"
}

evaluate() {
    set -- rnnenc-30 rnnsearch-30 rnnenc-50 rnnsearch-50
    hyps=; raw=; labels=
    for n in "$@"; do
        [ -s "$KEEP/$n.tsv" ] || { echo "$n: not trained to the end yet" >&2; exit 1; }
        for v in all nounk raw; do decode "$n" $v; done
        hyps="$hyps --hyp $DIR/$n.all --hyp-nounk $DIR/$n.nounk"; raw="$raw --hyp $DIR/$n.raw"
        labels="$labels${labels:+,}$(echo "$n" | sed 's/rnnenc/RNNencdec/; s/rnnsearch/RNNsearch/')"
    done
    # the source side decides the length buckets; the vocabularies (the same for all four: they are
    # built before the length filter) decide which sentences hold an unknown word
    # shellcheck disable=SC2086
    "$NMT" report --src "$D/test.en" --ref "$D/test.fr" $hyps --labels "$labels" \
        --unk-vocab "$DIR/rnnsearch-50.nmt" --tokenize none --out "$FIG" \
        --title "BLEU by source sentence length, newstest2013 (wmt_enfr, SMALL models, converged)" > "$KEEP/table1.txt"
    # shellcheck disable=SC2086
    "$NMT" report --src "$D/test.en" --ref "$D/test.fr" $raw --labels "$labels" --tokenize none \
        --out "$DIR/fig2-raw" > "$KEEP/table1-no-length-norm.txt"
    cat "$KEEP/table1.txt" "$KEEP/table1-no-length-norm.txt"
}

prep
case "$MODE" in
train) for n in "$@"; do train_one "$n"; done ;;
decode) for n in "$@"; do decode_one "$n"; done ;;
eval) evaluate ;;
*) sed -n '2,12p' "$0"; exit 2 ;;
esac
