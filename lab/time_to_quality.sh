#!/bin/sh
# time_to_quality.sh: time to quality (issue 20), what a user compares with Marian: train the `hour` preset
# and the one before it (`hour-v1`) for the same wall-clock budget, on all the machine's cores,
# then test BLEU at beam 12 on test_2016_flickr. The budget is the 6.9 minutes Marian's s2s needed
# for 600 updates on this 2-core machine (issue 20: BLEU 46.6). Run it on an idle machine; each
# configuration's run is kept in DIR, and one already there is not run again.
#   lab/time_to_quality.sh DIR [SECONDS]
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NMT=${NMT:-$ROOT/bin/nmt}
SHARED=${NMT_SHARED:-$ROOT/../shared}
M=$SHARED/data/multi30k/tok
THREADS=${THREADS:-2}
DIR=$1; SECS=${2:-414}
[ -n "$DIR" ] || { sed -n '2,7p' "$0"; exit 2; }
mkdir -p "$DIR"

for n in hour-v1 hour; do
    if [ ! -s "$DIR/$n.bleu" ]; then
        "$NMT" train --src $M/train.en --tgt $M/train.fr --valid-src $M/val.en --valid-tgt $M/val.fr \
            --model "$DIR/$n.nmt" --preset $n --max-time "$SECS" --threads "$THREADS" --seed 1 \
            --log-every 200 > "$DIR/$n.out" 2> "$DIR/$n.err"
        "$NMT" translate --model "$DIR/$n.nmt" --beam 12 --threads "$THREADS" < $M/test_2016_flickr.en > "$DIR/$n.test" 2> /dev/null
        "$NMT" bleu -b -w 2 --tokenize none $M/test_2016_flickr.fr < "$DIR/$n.test" > "$DIR/$n.bleu"
    fi
    upd=$(awk -F'\t' 'NR > 1 { u = $1 } END { print u }' "$DIR/$n.nmt.log.tsv")
    ppl=$(awk -F'\t' 'NR > 1 && $9 == 1 { p = $8 } END { print p }' "$DIR/$n.nmt.log.tsv")
    echo "$n: $SECS s, last validated update $upd, best dev ppl $ppl, test BLEU $(cat "$DIR/$n.bleu")"
done
