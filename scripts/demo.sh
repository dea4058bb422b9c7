#!/bin/sh
# demo.sh: what `make demo` runs: trains a small RNNsearch for a fixed number of updates on the
# bundled Multi30k en→fr data (a budget in updates, not minutes, so that a busy machine takes
# longer instead of reaching a worse model), translates the test set, prints BLEU and writes an
# attention heat map. Everything goes to demo/ in the repository.
set -e
cd "$(dirname "$0")/.."
NMT=bin/nmt
OUT=demo
UPDATES=${DEMO_UPDATES:-1200}
mkdir -p "$OUT"
for f in train val test_2016_flickr; do
    for l in en fr; do
        [ -s "$OUT/$f.$l" ] || gzip -dc "data/multi30k/$f.$l.gz" > "$OUT/$f.$l"
    done
done
echo "== training a small RNNsearch for $UPDATES updates (Multi30k en->fr, 29,000 pairs; about 4 minutes on 2 idle cores, 5 with the translation)"
rm -f "$OUT/model.nmt" "$OUT/model.nmt.ckpt" "$OUT/model.nmt.log.tsv"
$NMT train --src "$OUT/train.en" --tgt "$OUT/train.fr" --valid-src "$OUT/val.en" --valid-tgt "$OUT/val.fr" \
    --model "$OUT/model.nmt" --preset hour-v1 --valid-every 150 --max-updates "$UPDATES" --max-time 0 --log-every 50
echo "== translating test_2016_flickr (1,000 sentences, beam 5)"
$NMT translate --model "$OUT/model.nmt" --beam 5 < "$OUT/test_2016_flickr.en" > "$OUT/test.hyp.fr"
echo "first three test sentences and their translations:"
head -n 3 "$OUT/test_2016_flickr.en" > "$OUT/src3"; head -n 3 "$OUT/test.hyp.fr" > "$OUT/hyp3"
paste -d '\n' "$OUT/src3" "$OUT/hyp3" | sed 's/^/  /'
rm -f "$OUT/src3" "$OUT/hyp3"
echo "== BLEU (tokenized, lowercased text: --tokenize none)"
$NMT bleu --tokenize none "$OUT/test_2016_flickr.fr" < "$OUT/test.hyp.fr"
if $NMT plot --help > /dev/null 2>&1; then
    echo "== attention heatmap of the first test sentence"
    head -n 1 "$OUT/test_2016_flickr.en" > "$OUT/one.en"
    $NMT translate --model "$OUT/model.nmt" --beam 5 < "$OUT/one.en" > "$OUT/one.fr"
    $NMT plot --model "$OUT/model.nmt" --src "$OUT/one.en" --tgt "$OUT/one.fr" --out "$OUT/heatmap"
    echo "written: $OUT/heatmap.svg and $OUT/heatmap.png"
else
    echo "== (the attention heatmap comes with 'nmt plot', not built yet)"
fi
echo "demo done: model, translations and logs are in $OUT/"
