#!/bin/sh
# bf16_convergence.sh: issue 23's quality bar for bf16 training. SMALL (RNNsearch, the `hour-v1` recipe run
# to convergence, seed 1) trained with --precision bf16 on Multi30k, against the FP32 run of the
# same command (lab/converge_feng.sh's rnnsearch_s1, whose curve and row are committed in
# lab/runs/converge/): the dev perplexity within 1% of FP32's at every epoch both runs reached,
# and the test BLEU (test_2016_flickr, beam 12, the model decoded in FP32) within 0.3.
# Stoppable and resumable at any moment, as converge_feng.sh: a finished run leaves NAME.done, a
# cut one its checkpoint, which the next call resumes. The finished run's curve, wall time, BLEU
# and the comparison go to lab/runs/bf16/ (KEEP), to be committed.
#   lab/bf16_convergence.sh DIR            train (or resume), score, compare
#   lab/bf16_convergence.sh DIR compare    compare what DIR holds (a run still going: the epochs so far)
#   lab/bf16_convergence.sh DIR seeds      three seeds at the 5,000-word shortlist, against the FP32
#                                      runs of converge_feng.sh (lab/runs/converge-v5000/rnnsearch_sS):
#                                      is bf16's difference within FP32's own seed-to-seed spread?
#                                      SEEDS="2 3" trains those only and compares nothing (two
#                                      processes may then train different seeds at once)
# FP32=1 trains the FP32 run again in DIR first (same build, one more hour) and compares with it
# instead of the committed curve. MAX_EPOCHS=1 KEEP=/tmp/x runs the first epoch only.
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NMT=${NMT:-$ROOT/bin/nmt}
SHARED=${NMT_SHARED:-$ROOT/../shared}
M=$SHARED/data/multi30k/tok
THREADS=${THREADS:-1}
MAX_EPOCHS=${MAX_EPOCHS:-40}     # as converge_feng.sh: far past where the recipe plateaus
KEEP=${KEEP:-$ROOT/lab/runs/bf16}
REF=$ROOT/lab/runs/converge/rnnsearch_s1
export OMP_WAIT_POLICY=PASSIVE
DIR=$1; MODE=${2:-train}
[ -n "$DIR" ] || { echo "usage: $0 DIR [compare|seeds]" >&2; exit 2; }
mkdir -p "$DIR"

# train NAME PRECISION [SEED [VOCAB]]: the converge_feng.sh command with --precision, resumed from
# its checkpoint
train() {
    n=$1 seed=${3:-1} vocab=${4:-10000}
    [ -e "$DIR/$n.done" ] && return 0
    resume=""
    [ -s "$DIR/$n.nmt.ckpt" ] && resume="--resume $DIR/$n.nmt.ckpt"
    start=$(date +%s)
    rc=0
    # shellcheck disable=SC2086
    "$NMT" train --src $M/train.en --tgt $M/train.fr --valid-src $M/val.en --valid-tgt $M/val.fr \
        --model "$DIR/$n.nmt" --arch rnnsearch --preset hour-v1 --vocab "$vocab" --max-time 0 --max-epochs "$MAX_EPOCHS" \
        --threads "$THREADS" --seed "$seed" --log-every 200 --precision "$2" $resume >> "$DIR/$n.out" 2>> "$DIR/$n.err" || rc=$?
    echo "$n rc=$rc wall_s=$(( $(date +%s) - start )) resumed=${resume:+yes}" >> "$DIR/runs.txt"
    [ "$rc" = 0 ] || exit "$rc"
    date -u +%FT%TZ > "$DIR/$n.done"
}

# bleu NAME: test BLEU of the saved (best) model, beam 12, decoded in FP32, cached in DIR/NAME.bleu
bleu() {
    [ -s "$DIR/$1.bleu" ] && { cat "$DIR/$1.bleu"; return; }
    "$NMT" translate --model "$DIR/$1.nmt" --beam 12 --threads "$THREADS" < $M/test_2016_flickr.en > "$DIR/$1.hyp"
    "$NMT" bleu --tokenize none -i "$DIR/$1.hyp" $M/test_2016_flickr.fr |
        awk '{ for (i = 1; i <= NF; i++) if ($i == "=") { print $(i + 1); exit } }' | tee "$DIR/$1.bleu"
}

# compare FP32_TSV BF16_TSV FP32_BLEU BF16_BLEU: one row per epoch, then the verdicts
compare() {
    awk -F'\t' -v fb="$3" -v bb="$4" '
        FNR == 1 { for (i = 1; i <= NF; i++) { if ($i == "epoch") e = i; if ($i == "dev_ppl") p = i }; next }
        NR == FNR { f[$e + 0] = $p; next }
        { b[$e + 0] = $p; if ($e + 0 > last) last = $e + 0 }
        END {
            printf "epoch\tfp32_dev_ppl\tbf16_dev_ppl\trel_diff\n"
            for (k = 1; k <= last; k++) {
                if (!(k in f) || !(k in b)) { printf "%d\t%s\t%s\t-\n", k, (k in f) ? f[k] : "-", (k in b) ? b[k] : "-"; continue }
                r = (b[k] - f[k]) / f[k]; a = r < 0 ? -r : r; if (a > worst) worst = a; n++
                printf "%d\t%s\t%s\t%+.4f\n", k, f[k], b[k], r
            }
            printf "dev perplexity: %d epochs in both, largest difference %.2f%% (bar: 1%%): %s\n", n, 100 * worst,
                   n && worst <= 0.01 ? "within" : "NOT within"
            if (bb != "" && fb != "") { d = bb - fb; printf "test BLEU: fp32 %s, bf16 %s, difference %+.2f (bar: 0.3): %s\n", fb, bb, d,
                   (d <= 0.3 && d >= -0.3) ? "within" : "NOT within" }
            else print "test BLEU: not yet (the bf16 run has not finished)"
        }' "$1" "$2"
}

# seeds: per seed and epoch, bf16's dev perplexity against FP32's of the same seed, beside the
# spread of FP32's three seeds at that epoch ((max - min) / mean); then the test BLEU of each
seeds() {
    V=${FP32_RUNS:-$ROOT/lab/runs/converge-v5000}
    for s in ${SEEDS:-1 2 3}; do train rnnsearch_bf16_v5000_s$s bf16 $s 5000; done
    [ -z "${SEEDS:-}" ] || return 0
    for s in 1 2 3; do
        [ -s "$V/rnnsearch_s$s.tsv" ] || { echo "seeds: $V/rnnsearch_s$s.tsv missing: converge_feng.sh trains it (queue.sh)" >&2; exit 1; }
    done
    {
        echo "# bf16 (DIR/rnnsearch_bf16_v5000_sS) against FP32 (lab/runs/converge-v5000/rnnsearch_sS), seeds 1-3"
        awk -F'\t' 'FNR == 1 { f++; next } { k = (f <= 3 ? "fp" f : "bf" (f - 3)); p[k, $2 + 0] = $8; if ($2 + 0 > last) last = $2 + 0 }
            END { printf "epoch\tfp32 s1 s2 s3\tfp32 spread\tbf16 s1 s2 s3\tlargest |bf16-fp32|/fp32\n"
                  for (e = 1; e <= last; e++) { lo = 1e9; hi = 0; sum = 0; n = 0; w = -1; row = ""; brow = ""
                      for (s = 1; s <= 3; s++) { a = p["fp" s, e]; b = p["bf" s, e]; row = row " " (a == "" ? "-" : a); brow = brow " " (b == "" ? "-" : b)
                          if (a != "") { n++; sum += a; if (a < lo) lo = a; if (a > hi) hi = a }
                          if (a != "" && b != "") { d = (b - a) / a; d = d < 0 ? -d : d; if (d > w) w = d } }
                      printf "%d\t%s\t%s\t%s\t%s\n", e, row, n == 3 ? sprintf("%.2f%%", 100 * (hi - lo) / (sum / n)) : "-", brow, w < 0 ? "-" : sprintf("%.2f%%", 100 * w) } }' \
            "$V/rnnsearch_s1.tsv" "$V/rnnsearch_s2.tsv" "$V/rnnsearch_s3.tsv" \
            "$DIR/rnnsearch_bf16_v5000_s1.nmt.log.tsv" "$DIR/rnnsearch_bf16_v5000_s2.nmt.log.tsv" "$DIR/rnnsearch_bf16_v5000_s3.nmt.log.tsv"
        for s in 1 2 3; do echo "test BLEU seed $s: fp32 $(cut -f3 "$V/rnnsearch_s$s.row"), bf16 $(bleu rnnsearch_bf16_v5000_s$s)"; done
    } | tee "$DIR/seeds.txt"
    mkdir -p "$KEEP"
    for s in 1 2 3; do cp "$DIR/rnnsearch_bf16_v5000_s$s.nmt.log.tsv" "$KEEP/rnnsearch_bf16_v5000_s$s.tsv"; done
    cp "$DIR/seeds.txt" "$KEEP/"
}

if [ "$MODE" = seeds ]; then seeds; exit 0; fi
if [ "$MODE" = train ]; then
    if [ "${FP32:-0}" = 1 ]; then train rnnsearch_fp32_s1 fp32; fi
    train rnnsearch_bf16_s1 bf16
fi
[ "$MODE" = train ] || [ "$MODE" = compare ] || { echo "usage: $0 DIR [compare]" >&2; exit 2; }
if [ -e "$DIR/rnnsearch_fp32_s1.done" ]; then
    ref_tsv=$DIR/rnnsearch_fp32_s1.nmt.log.tsv; ref_bleu=$(bleu rnnsearch_fp32_s1); ref_name="FP32 run of this build ($DIR)"
else
    ref_tsv=$REF.tsv; ref_bleu=$(cut -f3 "$REF.row"); ref_name="lab/runs/converge/rnnsearch_s1 (converge_feng.sh)"
fi
b_bleu=""
[ -e "$DIR/rnnsearch_bf16_s1.done" ] && b_bleu=$(bleu rnnsearch_bf16_s1)
{
    echo "# bf16 against $ref_name; bf16 run: $DIR/rnnsearch_bf16_s1, --max-epochs $MAX_EPOCHS, $THREADS thread(s)"
    compare "$ref_tsv" "$DIR/rnnsearch_bf16_s1.nmt.log.tsv" "$ref_bleu" "$b_bleu"
} | tee "$DIR/compare.txt"
if [ -e "$DIR/rnnsearch_bf16_s1.done" ] && [ "$MODE" = train ]; then
    mkdir -p "$KEEP"
    cp "$DIR/rnnsearch_bf16_s1.nmt.log.tsv" "$KEEP/rnnsearch_bf16_s1.tsv"
    grep "^rnnsearch_" "$DIR/runs.txt" > "$KEEP/rnnsearch_bf16_s1.runs"
    cp "$DIR/rnnsearch_bf16_s1.bleu" "$DIR/compare.txt" "$KEEP/"
    if [ -e "$DIR/rnnsearch_fp32_s1.done" ]; then cp "$DIR/rnnsearch_fp32_s1.nmt.log.tsv" "$KEEP/rnnsearch_fp32_s1.tsv"; fi
fi
