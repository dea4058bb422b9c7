#!/bin/sh
# variants_two_epochs.sh: the eight-architecture comparison in lab/JOURNAL.md (Feng et al. 2016, Tables
# 1-2, at small scale). `train` trains architectures one after another with one recipe and budget;
# `eval` scores trained models: test BLEU before/after UNK replacement (one IBM-model lexical
# table for all, the model's attention choosing the source word), AER/SAER of forced
# attention on the Hansards gold set, repeated n-grams and barely-attended source words.
#   lab/variants_two_epochs.sh DIR train SEED ARCH...     (writes DIR/ARCH_sSEED.nmt and its logs)
#   lab/variants_two_epochs.sh DIR eval NAME...           (prints one TSV row per DIR/NAME.nmt)
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NMT=${NMT:-$ROOT/bin/nmt}
SHARED=${NMT_SHARED:-$ROOT/../shared}
M=$SHARED/data/multi30k/tok
G=$SHARED/data/alignment/en-fr/hansards_naacl2003
UPDATES=${UPDATES:-726}          # two epochs of Multi30k in batches of 80
THREADS=${THREADS:-2}            # for evaluation; 1 while other runs share the cores
export OMP_WAIT_POLICY=PASSIVE
DIR=$1; MODE=$2; shift 2
. "$ROOT/lab/lib.sh"
mkdir -p "$DIR"

if [ "$MODE" = train ]; then
    SEED=$1; shift
    for a in "$@"; do
        n=$(echo "$a" | tr '+' '_')_s$SEED
        start=$(date +%s)
        rc=0
        "$NMT" train --src $M/train.en --tgt $M/train.fr --valid-src $M/val.en --valid-tgt $M/val.fr \
            --model "$DIR/$n.nmt" --arch "$a" --emb 256 --hid 256 --att 256 --maxout 256 --vocab 10000 \
            --max-len 50 --optimizer adam --lr 0.002 --clip 1 --max-updates "$UPDATES" --valid-every 242 \
            --threads 1 --seed "$SEED" --log-every 100 > "$DIR/$n.out" 2> "$DIR/$n.err" || rc=$?
        echo "$n rc=$rc wall_s=$(( $(date +%s) - start ))" >> "$DIR/done.txt"
    done
    exit 0
fi

[ "$MODE" = eval ] || { echo "usage: $0 DIR train SEED ARCH... | $0 DIR eval NAME..." >&2; exit 2; }
T=$DIR/eval; mkdir -p "$T"
# the Hansards gold text lowercased, as the models were trained (token counts unchanged)
tr 'A-Z' 'a-z' < $G/test.en > "$T/hans.en"
tr 'A-Z' 'a-z' < $G/test.fr > "$T/hans.fr"
# unknown-word rate of the gold sets and the test set under the 10,000-entry vocabularies
"$NMT" vocab --size 10000 $M/train.en 2> /dev/null | cut -f2 > "$T/voc.en"
"$NMT" vocab --size 10000 $M/train.fr 2> /dev/null | cut -f2 > "$T/voc.fr"
echo "# unknown words: hansards en $(unk_rate "$T/voc.en" "$T/hans.en"), fr $(unk_rate "$T/voc.fr" "$T/hans.fr");" \
     "test_2016_flickr en $(unk_rate "$T/voc.en" $M/test_2016_flickr.en), fr $(unk_rate "$T/voc.fr" $M/test_2016_flickr.fr)"
# one lexical table for every model, so that only the attention (which source word an output <unk>
# points at) differs: IBM Model 1 + diagonal prior, grow-diag-final-and, on the training set
ibm_lexicon "$T"
bleu() { "$NMT" bleu --tokenize none -i "$1" $M/test_2016_flickr.fr | awk '{ for (i = 1; i <= NF; i++) if ($i == "=") { print $(i + 1); exit } }'; }
printf 'model\tdev_ppl\ttest_bleu\tbleu_unk_replaced\tout_unk\thans_aer\thans_saer\thans_P\thans_R\trepeat_sents\tneglected_src\n'
for n in "$@"; do
    m=$DIR/$n.nmt
    # the dev perplexity of the model evaluated: the last validation that improved (the one saved)
    dppl=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "dev_ppl") c = i; if ($i == "best") b = i }; next }
                       $b == 1 { p = $c } END { print p }' "$DIR/$n.nmt.log.tsv" 2> /dev/null)
    if grep -q rnnenc "$DIR/$n.err" 2> /dev/null; then
        "$NMT" translate --model "$m" --beam 12 --threads "$THREADS" < $M/test_2016_flickr.en > "$T/$n.hyp"
        printf '%s\t%s\t%s\t–\t%s\t–\t–\t–\t–\t%s\t–\n' "$n" "$dppl" "$(bleu "$T/$n.hyp")" \
            "$(grep -o '<unk>' "$T/$n.hyp" | wc -l)" "$(repeats "$T/$n.hyp" $M/test_2016_flickr.fr)"
        continue
    fi
    "$NMT" translate --model "$m" --beam 12 --threads "$THREADS" --alignment soft < $M/test_2016_flickr.en > "$T/$n.soft"
    sed 's/ ||| .*//' "$T/$n.soft" > "$T/$n.hyp"
    "$NMT" translate --model "$m" --beam 12 --threads "$THREADS" --unk-replace "$T/ibm.lex" < $M/test_2016_flickr.en > "$T/$n.rep"
    "$NMT" align --model "$m" --src "$T/hans.en" --tgt "$T/hans.fr" --threads "$THREADS" > "$T/$n.hans.links"
    "$NMT" align --model "$m" --src "$T/hans.en" --tgt "$T/hans.fr" --threads "$THREADS" --soft > "$T/$n.hans.soft"
    "$NMT" aer --gold $G/test.talp --test "$T/$n.hans.links" --soft "$T/$n.hans.soft" > "$T/$n.aer"
    aer=$(awk '/^AER/ { print $2 }' "$T/$n.aer"); saer=$(awk '/^SAER/ { print $2 }' "$T/$n.aer")
    pr=$(awk '/^precision/ { print $2 }' "$T/$n.aer"); rc=$(awk '/^recall/ { print $2 }' "$T/$n.aer")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$dppl" "$(bleu "$T/$n.hyp")" "$(bleu "$T/$n.rep")" \
        "$(grep -o '<unk>' "$T/$n.hyp" | wc -l)" "$aer" "$saer" "$pr" "$rc" \
        "$(repeats "$T/$n.hyp" $M/test_2016_flickr.fr)" "$(neglected "$T/$n.soft")"
done
