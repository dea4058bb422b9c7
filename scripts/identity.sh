#!/bin/sh
# identity.sh NMT OUT: what a refactoring must leave bit for bit: for every architecture, a
# 50-update training (the hour preset at small sizes: Adam, every dropout, label smoothing, tied
# embeddings; FertDec's costs where it has them) writes its model and cost log, and that model
# translates test_2016_flickr (beam 5, 5-best with scores, soft alignment of the 1-best). Run it
# with two builds (another revision in a worktree: `git worktree add /tmp/a REV && make -C /tmp/a`)
# and compare the folders file by file with `cmp` (the checkpoints' stored elapsed time differs).
# Environment: NMT_SHARED (../shared), ID_LINES (test lines, 300), ID_ARCHS.
set -eu
NMT=$1; OUT=$2
SHARED=${NMT_SHARED:-../shared}
D=$SHARED/data/multi30k/tok
LINES=${ID_LINES:-300}
ARCHS=${ID_ARCHS:-rnnsearch rnnenc recatt inputfeed markov locfer fertdec recatt+fertdec}
mkdir -p "$OUT"
head -n "$LINES" "$D/test_2016_flickr.en" > "$OUT/test.en"
for a in $ARCHS; do
    f=$(echo "$a" | tr + _)
    rm -f "$OUT/$f".*
    "$NMT" train --src "$D/train.en" --tgt "$D/train.fr" --model "$OUT/$f.nmt" --preset hour --arch "$a" \
        --emb 64 --hid 64 --att 64 --maxout 64 --vocab 4000 --max-updates 50 --save-every 50 --threads 2 \
        --cost-log "$OUT/$f.cost" --seed 7 > "$OUT/$f.train.log" 2>&1
    "$NMT" translate --model "$OUT/$f.nmt" --beam 5 --n-best 5 --threads 2 < "$OUT/test.en" > "$OUT/$f.nbest" 2>/dev/null
    "$NMT" translate --model "$OUT/$f.nmt" --beam 5 --alignment soft --threads 2 < "$OUT/test.en" > "$OUT/$f.soft" 2>/dev/null
    echo "$a: $(wc -l < "$OUT/$f.cost") updates, $(wc -l < "$OUT/$f.nbest") n-best lines"
done
