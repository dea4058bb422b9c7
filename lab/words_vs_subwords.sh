#!/bin/sh
# words_vs_subwords.sh: words against subword units (docs/SUBWORDS.md, lab/JOURNAL.md). Each stage
# writes its outputs into DIR and is skipped when they exist, so a killed run goes on where it
# stopped when started again.
#   lab/words_vs_subwords.sh DIR speed          segmentation speed: nmt segment beside spm_encode on
#                                            the same SentencePiece model (seconds)
#   lab/words_vs_subwords.sh DIR bleu [CORPUS]  BLEU at one training budget: a word model (10,000-word
#                                            shortlists, 30,000 for wmt_enfr; Moses tokenization) and
#                                            unigram and BPE models ($UNITS; 8,000 pieces a side, raw
#                                            text), on multi30k or wmt_enfr (default both; CPU hours
#                                            each); UNK rate of the output, dev perplexity per word
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NMT=${NMT:-$ROOT/bin/nmt}
SHARED=${NMT_SHARED:-$ROOT/../shared}
THREADS=${THREADS:-2}
UPDATES=${UPDATES:-6000}   # the budget: the same number of updates of the same batch size for all
PIECES=${PIECES:-8000}
BEAM=${BEAM:-5}
# each finished model's dev curve, BLEU and extras are kept here (committed), and a model kept is
# neither trained nor evaluated again: the machines do not outlive a session, the repository does
KEEP=${KEEP:-$ROOT/lab/runs/subword}
UNITS=${UNITS:-unigram bpe}   # the subword kinds trained beside the word model
# the models this call trains and evaluates: two calls with MODELS=words and MODELS=unigram run the
# two trainings at once, one per core (prep first: `MODELS= lab/words_vs_subwords.sh DIR bleu C`)
MODELS=${MODELS-words $UNITS}
export OMP_WAIT_POLICY=PASSIVE
DIR=$1; MODE=$2
[ -n "$DIR" ] && [ -n "$MODE" ] || { sed -n '2,11p' "$0"; exit 2; }
mkdir -p "$DIR"

# best_of3 OUT command...: the smallest wall time of three runs, in seconds, into OUT
best_of3() {
    out=$1; shift
    best=
    for _ in 1 2 3; do
        s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
        t=$(echo "$e - $s" | bc)
        if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" -eq 1 ]; then best=$t; fi
    done
    echo "$best" > "$out"
}

speed() {
    M=$SHARED/data/multi30k
    W=$SHARED/data/wmt_enfr
    command -v spm_encode > /dev/null || { echo "spm_encode missing: apt-get install sentencepiece" >&2; exit 1; }
    # a model whose only use is its segmentation: tiny layers, one update
    if [ ! -s "$DIR/seg.nmt" ]; then
        "$NMT" train --src $M/train.en --tgt $M/train.fr --model "$DIR/seg.nmt" --subwords unigram \
            --subword-vocab "$PIECES" --emb 4 --hid 4 --att 4 --maxout 2 --max-updates 1 --threads "$THREADS" \
            2> "$DIR/seg.train.err"
    fi
    [ -s "$DIR/seg.model" ] || python3 "$ROOT/tests/cli/spm_meta.py" extract "$DIR/seg.nmt" src "$DIR/seg.model"
    # the text: wmt_enfr's English training side, long news and web sentences
    [ -s "$DIR/text.en" ] || cp $W/train.en "$DIR/text.en"
    if [ ! -s "$DIR/speed.txt" ]; then
        "$NMT" segment --model "$DIR/seg.nmt" < "$DIR/text.en" > "$DIR/nmt.seg"
        spm_encode --model "$DIR/seg.model" --output_format=piece < "$DIR/text.en" > "$DIR/spm.seg"
        same=$(cmp -s "$DIR/nmt.seg" "$DIR/spm.seg" && echo identical || echo DIFFERENT)
        best_of3 "$DIR/t.nmt" "$NMT" segment --model "$DIR/seg.nmt" --input "$DIR/text.en"
        best_of3 "$DIR/t.spm" sh -c "spm_encode --model '$DIR/seg.model' --output_format=piece < '$DIR/text.en'"
        lines=$(wc -l < "$DIR/text.en"); bytes=$(wc -c < "$DIR/text.en")
        {
            echo "text: $lines lines, $bytes bytes (wmt_enfr train.en); model: unigram, $PIECES pieces, trained on Multi30k train.en"
            echo "output: $same"
            echo "nmt segment: $(cat "$DIR/t.nmt") s (best of 3, model load included)"
            echo "spm_encode:  $(cat "$DIR/t.spm") s (best of 3)"
        } > "$DIR/speed.txt"
    fi
    cat "$DIR/speed.txt"
}

# prep_corpus NAME: DIR/NAME/{train,dev,test}.{en,fr} raw, and tokenized copies for the word model
prep_corpus() {
    c=$1; D=$DIR/$c
    mkdir -p "$D"
    [ -s "$D/done.prep" ] && return 0
    if [ "$c" = multi30k ]; then S=$SHARED/data/multi30k; set -- train val test_2016_flickr
    else S=$SHARED/data/wmt_enfr; set -- train dev test; fi
    for n in train dev test; do
        for l in en fr; do
            cp "$S/$1.$l" "$D/$n.$l"
            "$NMT" tokenize -l $l --lowercase --normalize-punct < "$S/$1.$l" > "$D/$n.tok.$l"
        done
        shift
    done
    touch "$D/done.prep"
}

# train_one CORPUS NAME ARGS...: DIR/CORPUS/NAME.nmt, unless there (a killed run resumes)
train_one() {
    c=$1; n=$2; shift 2; D=$DIR/$c
    [ -s "$D/$n.done" ] && return 0
    resume=; [ -s "$D/$n.nmt.ckpt" ] && resume="--resume $D/$n.nmt.ckpt"
    # shellcheck disable=SC2086
    "$NMT" train --model "$D/$n.nmt" --emb 256 --hid 256 --att 256 --maxout 256 --optimizer adam --lr 0.002 \
        --dropout 0.3 --max-updates "$UPDATES" --valid-every 500 --patience 0 --threads "$THREADS" --seed 1 \
        --log-every 200 "$@" $resume > "$D/$n.out" 2> "$D/$n.err"
    touch "$D/$n.done"
}

# bleu_one CORPUS NAME: beam search on the raw test set, scored on raw text against the raw reference
bleu_one() {
    c=$1; n=$2; D=$DIR/$c
    [ -s "$D/$n.bleu" ] && return 0
    if [ "$n" = words ]; then
        "$NMT" translate --model "$D/$n.nmt" --beam "$BEAM" --tokenize en --lowercase --normalize-punct \
            --detokenize fr < "$D/test.en" > "$D/$n.hyp"
    else
        "$NMT" translate --model "$D/$n.nmt" --beam "$BEAM" < "$D/test.en" > "$D/$n.hyp"
    fi
    # case-insensitive: the models see lowercased text
    "$NMT" bleu -lc "$D/test.fr" < "$D/$n.hyp" > "$D/$n.bleu"
}

# extras_one CORPUS NAME: the share of output words that are UNK ("<unk>", or SentencePiece's
# " ⁇ " for an unknown piece), and the dev perplexity per word: the dev targets' summed NLL
# (forced decoding, pieces or words) over one count for every model, the Moses-tokenized words of
# the dev target plus one EOS per sentence, so that word and subword models compare.
extras_one() {
    c=$1; n=$2; D=$DIR/$c
    [ -s "$D/$n.extra" ] && return 0
    if [ "$n" = words ]; then src=$D/dev.tok.en; tgt=$D/dev.tok.fr; else src=$D/dev.en; tgt=$D/dev.fr; fi
    "$NMT" score --model "$D/$n.nmt" --src "$src" --tgt "$tgt" --threads "$THREADS" > "$D/$n.score"
    words=$(awk '{ w += NF + 1 } END { print w }' "$D/dev.tok.fr")
    nll=$(awk -F'\t' '{ s -= $1 } END { printf "%.6f", s }' "$D/$n.score")
    unk=$(awk '{ for (i = 1; i <= NF; i++) { t++; if ($i == "<unk>" || $i == "\342\201\207") u++ } } END { printf "%.3f", 100 * u / t }' "$D/$n.hyp")
    echo "dev_ppl_per_word $(awk -v s="$nll" -v w="$words" 'BEGIN { printf "%.3f", exp(s / w) }') unk_out_pct $unk" > "$D/$n.extra"
}

# piece_len CORPUS: the subword models' length limit in pieces. The word model skips pairs over 50
# words; 50 pieces would skip more pairs (wmt_enfr: 34,716 kept against the word model's 38,799,
# at 1.26 pieces per word), so the limit is the one that keeps as many pairs as 50 words: 64 on
# wmt_enfr (38,703 pairs), 50 on Multi30k, whose sentences are far shorter (the earlier run).
piece_len() { if [ "$1" = wmt_enfr ]; then echo "${PIECE_MAX_LEN:-64}"; else echo 50; fi; }

bleu() {
    for c in ${1:-multi30k wmt_enfr}; do
        prep_corpus "$c"; D=$DIR/$c
        vocab=10000; [ "$c" = wmt_enfr ] && vocab=30000
        for n in $MODELS; do
            [ -s "$KEEP/$c/$n.extra" ] && continue   # measured in an earlier session
            if [ "$n" = words ]; then
                train_one "$c" words --src "$D/train.tok.en" --tgt "$D/train.tok.fr" --valid-src "$D/dev.tok.en" \
                    --valid-tgt "$D/dev.tok.fr" --vocab "$vocab"
            else
                train_one "$c" "$n" --src "$D/train.en" --tgt "$D/train.fr" --valid-src "$D/dev.en" --valid-tgt "$D/dev.fr" \
                    --subwords "$n" --subword-vocab "$PIECES" --lowercase --normalize-punct --lang en,fr \
                    --max-len "$(piece_len "$c")"
            fi
        done
        for n in $MODELS; do
            if [ ! -s "$KEEP/$c/$n.extra" ]; then
                bleu_one "$c" "$n"; extras_one "$c" "$n"
                mkdir -p "$KEEP/$c"
                cp "$D/$n.nmt.log.tsv" "$KEEP/$c/$n.tsv"
                cp "$D/$n.bleu" "$KEEP/$c/$n.bleu"
                cp "$D/$n.extra" "$KEEP/$c/$n.extra"
            fi
            echo "$c $n: $(head -n 1 "$KEEP/$c/$n.bleu") | $(cat "$KEEP/$c/$n.extra")"
        done
    done
}

case "$MODE" in
speed) speed ;;
bleu) bleu "$3" ;;
*) sed -n '2,11p' "$0"; exit 2 ;;
esac
