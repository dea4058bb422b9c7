#!/bin/sh
# lowp_bleu.sh: issue 23's quality bar for decoding in lower precision and with a lexical shortlist
# (lab/JOURNAL.md): test BLEU at beam 12 of a trained model decoded in fp32 (the reference), int8,
# bf16, with a shortlist, and int8 + shortlist, the wall time of each, and the largest difference
# between the n-best scores of the int8 (and bf16) search and FP32 forced decoding (nmt score) of
# the same hypotheses. The model is only read.
#   lab/lowp_bleu.sh DIR multi30k MODEL   test_2016_flickr (tokenized, lowercased); the shortlist's
#                                            table from the IBM aligner on Multi30k train
#   lab/lowp_bleu.sh DIR wmt MODEL        newstest2013 and wmt_enfr train, tokenized and lowercased
#                                            as lab/lengths_1200.sh prep does (a model trained on them)
# env: NMT (bin/nmt), NMT_SHARED (../shared), THREADS (1), BEAM (12), SHORTLIST (K,F; default 100,100),
#      NBEST (1; 0 leaves out the n-best score comparison)
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NMT=${NMT:-$ROOT/bin/nmt}
SHARED=${NMT_SHARED:-$ROOT/../shared}
THREADS=${THREADS:-1}
BEAM=${BEAM:-12}
SHORTLIST=${SHORTLIST:-100,100}
export OMP_WAIT_POLICY=PASSIVE
[ $# -eq 3 ] || { echo "usage: $0 DIR multi30k|wmt MODEL" >&2; exit 2; }
DIR=$1; SET=$2; MODEL=$3
mkdir -p "$DIR"
case "$SET" in
multi30k)
    D=$SHARED/data/multi30k/tok
    TRAIN=$D/train; TEST=$D/test_2016_flickr ;;
wmt)
    W=$SHARED/data/wmt_enfr
    D=$DIR/data
    mkdir -p "$D"
    for s in train test; do
        for l in en fr; do
            [ -s "$D/$s.$l" ] || "$NMT" tokenize -l $l --lowercase --normalize-punct < $W/$s.$l > "$D/$s.$l"
        done
    done
    TRAIN=$D/train; TEST=$D/test ;;
*)
    echo "$0: unknown set '$SET' (multi30k or wmt)" >&2; exit 2 ;;
esac

# the shortlist's table: IBM Model 1 with the diagonal prior, grow-diag-final-and, each source
# word's 100 most frequent targets (made once)
LEX=$DIR/$SET.ibm.lex
if [ ! -s "$LEX" ]; then
    "$NMT" ibm --src "$TRAIN.en" --tgt "$TRAIN.fr" --sym gdfa --threads "$THREADS" > "$DIR/$SET.ibm.links" 2> /dev/null
    "$NMT" lex --src "$TRAIN.en" --tgt "$TRAIN.fr" --align "$DIR/$SET.ibm.links" --top 100 --out "$LEX" 2> /dev/null
fi

bleu() { "$NMT" bleu --tokenize none -i "$1" "$TEST.fr" | awk '{ for (i = 1; i <= NF; i++) if ($i == "=") { print $(i + 1); exit } }'; }

# NAME OPTIONS...: beam-BEAM translation of the test set, its BLEU and wall seconds
run() {
    name=$1; shift
    t0=$(date +%s.%N)
    "$NMT" translate --model "$MODEL" --beam "$BEAM" --threads "$THREADS" "$@" < "$TEST.en" > "$DIR/$SET.$name.hyp"
    t1=$(date +%s.%N)
    printf '%s\t%s\t%s\t%s\n' "$name" "$(bleu "$DIR/$SET.$name.hyp")" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" "$*"
}

# PRECISION: the largest |n-best score - FP32 forced decoding score| of the same hypotheses, per
# token and per sentence (the score is log p / tokens, EOS counted, as nmt score's PER_TOKEN)
nbest_diff() {
    p=$1
    "$NMT" translate --model "$MODEL" --beam "$BEAM" --n-best "$BEAM" --threads "$THREADS" --precision "$p" \
        < "$TEST.en" > "$DIR/$SET.nbest.$p"
    awk -F ' \\|\\|\\| ' -v src="$TEST.en" 'BEGIN { while ((getline l < src) > 0) s[n++] = l }
        { print s[$1] > "/dev/stderr"; print $2 }' "$DIR/$SET.nbest.$p" 2> "$DIR/$SET.nbest.$p.src" > "$DIR/$SET.nbest.$p.tgt"
    "$NMT" score --model "$MODEL" --threads "$THREADS" --src "$DIR/$SET.nbest.$p.src" --tgt "$DIR/$SET.nbest.$p.tgt" \
        > "$DIR/$SET.nbest.$p.fp32"
    # a hypothesis cut at the length limit (3 x (source words + 1) words) has no EOS, which forced
    # decoding adds: those are counted apart
    awk -F ' \\|\\|\\| ' -v p="$p" -v src="$DIR/$SET.nbest.$p.src" '
        NR == FNR { lp[NR] = $NF; getline l < src; cut[NR] = split($2, w, " ") == int(3 * (split(l, x, " ") + 1)); next }
        cut[FNR] { c++; next }
        { split($0, f, "\t"); d = lp[FNR] - f[2]; if (d < 0) d = -d; if (d > m) m = d; n++; big += d > 0.01
          t = d * f[3]; if (t > mt) mt = t; sum += d }
        END { printf "%s\tn-best %d finished hypotheses (%d cut at the length limit left out): |score - fp32 forced| per token: max %.5f, mean %.6f, over 0.01 for %d; per sentence max %.4f\n",
                     p, n, c, m, sum / n, big, mt }' \
        "$DIR/$SET.nbest.$p" "$DIR/$SET.nbest.$p.fp32"
}

echo "# lowp_bleu $SET $(date -u '+%F %H:%M UTC'): $MODEL, beam $BEAM, $THREADS thread(s), shortlist $LEX,$SHORTLIST; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'config\tBLEU\tseconds\toptions\n'
run fp32
run int8 --precision int8
run bf16 --precision bf16
run shortlist --shortlist "$LEX,$SHORTLIST"
run int8+shortlist --precision int8 --shortlist "$LEX,$SHORTLIST"
run bf16+shortlist --precision bf16 --shortlist "$LEX,$SHORTLIST"
# (NBEST=0 leaves out the n-best comparison: three n-best decodings and 12 forced decodings a line)
if [ "${NBEST:-1}" = 1 ]; then for p in fp32 int8 bf16; do nbest_diff $p; done; fi
echo "# load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
