#!/bin/sh
# preset_search.sh: a new search around the `hour` preset with the options practitioners expect
# (issue 20): the attention's Glorot initialisation, label smoothing, embedding and recurrent
# dropout, tied embeddings, model selection by dev BLEU and averaging of the best checkpoints.
# Each configuration is the `hour-v1` recipe (the `hour` preset before this search) plus its
# options, trained as converge_feng.sh trains (until patience 4 stops it; the one-hour limit never
# binds on 2 idle cores), so that the old preset is converge_feng.sh's rnnsearch_s1
# (lab/runs/converge/). Resumable like converge_feng.sh: a cut run resumes from its checkpoint, and
# a finished one leaves its row and curve in lab/runs/preset/ (committed), which later calls skip.
#   lab/preset_search.sh DIR NAME...      train and evaluate these configurations, in order
#   lab/preset_search.sh DIR list         the configurations
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NMT=${NMT:-$ROOT/bin/nmt}
SHARED=${NMT_SHARED:-$ROOT/../shared}
M=$SHARED/data/multi30k/tok
THREADS=${THREADS:-1}
KEEP=${KEEP:-$ROOT/lab/runs/preset}
export OMP_WAIT_POLICY=PASSIVE
DIR=$1; shift
[ -n "$DIR" ] && [ $# -gt 0 ] || { sed -n '2,12p' "$0"; exit 2; }
mkdir -p "$DIR" "$KEEP"

# options NAME: the configuration's options beside --preset hour-v1
options() {
    case $1 in
    base) echo "" ;;   # today's preset again, for the average of its best checkpoints
    glorot) echo "--init glorot-att" ;;
    ls) echo "--label-smoothing 0.1" ;;
    vdrop) echo "--dropout-emb 0.2 --dropout-rnn 0.2" ;;
    tied) echo "--tied-embeddings" ;;
    all) echo "--init glorot-att --label-smoothing 0.1 --dropout-emb 0.2 --dropout-rnn 0.2 --tied-embeddings" ;;
    all_bleu) echo "$(options all) --valid-metrics bleu ppl" ;;
    *) return 1 ;;
    esac
}

if [ "$1" = list ]; then
    for n in base glorot ls vdrop tied all all_bleu; do echo "$n: --preset hour-v1 $(options $n)"; done
    exit 0
fi

# bleu_of MODEL: test BLEU at beam 12 (tokenized, lowercased: --tokenize none), as variants_two_epochs.sh
bleu_of() {
    "$NMT" translate --model "$1" --beam 12 --threads "$THREADS" < $M/test_2016_flickr.en > "$1.test" 2> /dev/null
    "$NMT" bleu -b -w 2 --tokenize none $M/test_2016_flickr.fr < "$1.test"
}

# evaluate NAME: NAME best-dev-ppl epoch test-BLEU(best model) test-BLEU(average of the kept 4) wall-s
evaluate() {
    n=$1
    best=$(awk -F'\t' 'NR > 1 && $9 == 1 { p = $8; e = $2 } END { printf "%s %.0f", p, e }' "$DIR/$n.nmt.log.tsv")
    b1=$(bleu_of "$DIR/$n.nmt")
    # shellcheck disable=SC2046
    "$NMT" average --out "$DIR/$n.avg.nmt" $(sed 1d "$DIR/$n.nmt.best.tsv" | cut -f4) 2> /dev/null
    b2=$(bleu_of "$DIR/$n.avg.nmt")
    echo "$n $best $b1 $b2 $(cat "$DIR/$n.wall")"
}

for n in "$@"; do
    opts=$(options "$n") || { echo "preset_search: no configuration $n (list: $0 DIR list)" >&2; exit 2; }
    [ -s "$KEEP/$n.row" ] && { cat "$KEEP/$n.row"; continue; }
    if [ ! -e "$DIR/$n.done" ]; then
        resume=""
        [ -s "$DIR/$n.nmt.ckpt" ] && resume="--resume $DIR/$n.nmt.ckpt"
        start=$(date +%s) rc=0
        # shellcheck disable=SC2086
        "$NMT" train --src $M/train.en --tgt $M/train.fr --valid-src $M/val.en --valid-tgt $M/val.fr \
            --model "$DIR/$n.nmt" --preset hour-v1 --max-time 0 --max-epochs 40 --keep-best 4 $opts \
            --threads "$THREADS" --seed 1 --log-every 200 $resume >> "$DIR/$n.out" 2>> "$DIR/$n.err" || rc=$?
        # wall seconds over every process of the run, a killed one's included
        echo $(( $(date +%s) - start + $(cat "$DIR/$n.wall" 2> /dev/null || echo 0) )) > "$DIR/$n.wall.new"
        mv "$DIR/$n.wall.new" "$DIR/$n.wall"
        [ "$rc" = 0 ] || exit "$rc"
        date -u +%FT%TZ > "$DIR/$n.done"
    fi
    evaluate "$n" > "$DIR/$n.row"
    cp "$DIR/$n.nmt.log.tsv" "$KEEP/$n.tsv"
    cp "$DIR/$n.nmt.best.tsv" "$KEEP/$n.best.tsv"
    cp "$DIR/$n.row" "$KEEP/$n.row"
    cat "$KEEP/$n.row"
done
