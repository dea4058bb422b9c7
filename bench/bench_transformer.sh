#!/bin/sh
# bench_transformer.sh: the Transformer (nmt train --arch transformer) against its PyTorch version
# (bench/torch_transformer.py) on the same shapes, batches and threads: training target tokens/s,
# share of the SGEMM peak and peak RSS; decoding sentences/s at beam 1 and 12, outputs compared.
#
# usage: sh bench/bench_transformer.sh      (from anywhere; run by scripts/bench.sh)
#   env (shapes): D (256), ENC (3), DEC (3), HEADS (4), FFN (1024), VOCAB (10000), BATCH (64),
#        MAXLEN (50); THREADS (2); WARMUP (3, at least 1) and UPDATES (30): untimed, then timed
#        updates;
#        ROUNDS (2): training runs per side, alternating; LINES (0: all): first LINES pairs of
#        the corpus; DEC_N (200): test sentences decoded; DEC_UPDATES (400): Adam updates of the
#        model decoded (an untrained one never says EOS, every sentence runs to the length
#        limit); DEC_MODEL: decode this model instead of training one; PEAK: the SGEMM peak in
#        GFLOP/s on THREADS threads (measured with build/bench/sgemm when that exists, else no
#        share is printed); NMT (bin/nmt), SHARED (../shared), KEEP=DIR keeps the files there; ANY_BLAS=1 skips the check
#        that torch loads the pthread OpenBLAS (smoke tests only).
#
# Training: nmt trains WARMUP+UPDATES updates, writing --batch-log (each update's corpus lines)
# and --cost-log into a pipe read by a time-stamper, so nmt's timed span is the stamps of update
# WARMUP and WARMUP+UPDATES (its start-up, reading the corpus and saving are outside); torch then
# trains on the same batches (read from that log, so the target tokens per update are equal)
# from the model file nmt wrote, and times its own UPDATES updates. Peak RSS: /usr/bin/time's
# %M of each whole process. FLOPs: the matrix products of the timed batches on their padded
# shapes (forward, and backward as twice forward), the same count for both sides.
# Decoding: nmt translate's wall time on DEC_N sentences less its time on the first alone (median
# of 3: start-up and model load), per DEC_N - 1 sentences,
# torch's own clock around its beam search (one sentence at a time, float32, after a warm-up).
set -eu
cd "$(dirname "$0")/.."
D=${D:-256}; ENC=${ENC:-3}; DEC=${DEC:-3}; HEADS=${HEADS:-4}; FFN=${FFN:-1024}
VOCAB=${VOCAB:-10000}; BATCH=${BATCH:-64}; MAXLEN=${MAXLEN:-50}; THREADS=${THREADS:-2}
WARMUP=${WARMUP:-3}; UPDATES=${UPDATES:-30}; ROUNDS=${ROUNDS:-2}; LINES=${LINES:-0}
DEC_N=${DEC_N:-200}; DEC_UPDATES=${DEC_UPDATES:-400}
NMT=${NMT:-bin/nmt}
SHARED=${SHARED:-../shared}
M30K=$SHARED/data/multi30k/tok
TIME=/usr/bin/time
ME=bench_transformer
# shellcheck source=bench/ref_env.sh
. bench/ref_env.sh
need_files "$NMT" "$TIME" "$M30K/train.en" "$M30K/train.fr" "$M30K/test_2016_flickr.en"
# ANY_BLAS=1: run where the pthread OpenBLAS is missing (a smoke test: torch then does its
# products in whatever BLAS it loads, and its speeds mean nothing)
if [ "${ANY_BLAS:-0}" = 1 ]; then
    $PY -c 'import torch' 2>/dev/null || { echo "$ME: torch does not import" >&2; exit 2; }
else
    need_torch
fi
# PY (bench/ref_env.sh) is a command line, env with the library path and the interpreter: it is
# left unquoted on purpose, to be split into words
TT=bench/torch_transformer.py
work_dir
W=$WORK

# the corpus, or its first LINES pairs (a smoke test's)
if [ "$LINES" -gt 0 ]; then
    head -n "$LINES" "$M30K/train.en" > "$W/train.en"; head -n "$LINES" "$M30K/train.fr" > "$W/train.fr"
    SRC=$W/train.en; TGT=$W/train.fr
else
    SRC=$M30K/train.en; TGT=$M30K/train.fr
fi
ARCH="--arch transformer --dim-model $D --enc-depth $ENC --dec-depth $DEC --heads $HEADS --dim-ffn $FFN"
DATA="--src $SRC --tgt $TGT --vocab $VOCAB --max-len $MAXLEN --batch $BATCH"
# the same optimizer on both sides: Adam, lr 0.001, gradient clipped to norm 1, no smoothing
OPTIM="--optimizer adam --lr 0.001 --clip 1 --label-smoothing 0"

now_ns() { date +%s%N; }

# one nmt training run (round $1): its tok/s, seconds and peak RSS into $W/nmt.$1.res
nmt_train() {
    r=$1
    rm -f "$W/cost.fifo"; mkfifo "$W/cost.fifo"
    # each cost-log line, written when its update ends, with the time it arrived
    /usr/bin/python3 -u -c 'import sys, time
for line in sys.stdin:
    print("%.6f %s" % (time.monotonic(), line.split()[0]), flush=True)' < "$W/cost.fifo" > "$W/stamps.$r" &
    stamper=$!
    # shellcheck disable=SC2086
    $TIME -f %M -o "$W/nmt.$r.rss" "$NMT" train $ARCH $DATA $OPTIM --max-updates $((WARMUP + UPDATES)) \
        --save-every 0 --threads "$THREADS" --model "$W/train.nmt" --batch-log "$W/batches.$r" \
        --cost-log "$W/cost.fifo" --overwrite > "$W/nmt.$r.log" 2>&1 ||
        { kill "$stamper" 2>/dev/null; tail -n 5 "$W/nmt.$r.log" >&2; exit 1; }   # (one that failed early never opened the pipe)
    wait "$stamper"
    # target tokens (words + EOS) of the timed updates, and their matrix-product FLOPs
    awk -v w="$WARMUP" -v n="$UPDATES" -v d="$D" -v le="$ENC" -v ld="$DEC" -v f="$FFN" -v v="$VOCAB" '
        FILENAME == ARGV[1] { xs[FNR] = NF + 1; next }
        FILENAME == ARGV[2] { ys[FNR] = NF + 1; next }
        FILENAME == ARGV[3] { t[$2] = $1; next }
        FNR > w && FNR <= w + n {
            b = NF; tx = ty = 0
            for (i = 1; i <= NF; i++) { if (xs[$i] > tx) tx = xs[$i]; if (ys[$i] > ty) ty = ys[$i]; tok += ys[$i] }
            # forward per layer: encoder qkv, out, ffn per source position; decoder qkv, out, the
            # context query and out, ffn per target position and its keys/values per source
            # position; scores and weighted sums per position pair; the output layer
            fw = b * tx * le * (8 * d * d + 4 * d * f) + b * tx * ld * 4 * d * d + b * ty * ld * (12 * d * d + 4 * d * f) \
                + b * ty * 2 * d * v + b * le * 4 * tx * tx * d + b * ld * 4 * (ty * ty + ty * tx) * d
            fl += 3 * fw
        }
        END { last = w + n; sec = t[last] - t[w]
              printf "%d %.6f %.1f %.6g\n", tok, sec, tok / sec, fl / sec / 1e9 }' \
        "$SRC" "$TGT" "$W/stamps.$r" "$W/batches.$r" > "$W/nmt.$r.res"
}

# one torch training run on the batches of nmt's round-1 run: tok/s, seconds, RSS into $W/torch.$1.res
torch_train() {
    r=$1
    # shellcheck disable=SC2086
    $TIME -f %M -o "$W/torch.$r.rss" $PY $TT train-speed "$W/train.nmt" --src "$SRC" --tgt "$TGT" \
        --batch-log "$W/batches.1" --warmup "$WARMUP" --updates "$UPDATES" --threads "$THREADS" \
        --lr 0.001 --clip 1 --label-smoothing 0 > "$W/torch.$r.log" 2>&1 || { tail -n 5 "$W/torch.$r.log" >&2; exit 1; }
    # "TRAIN updates=U tgt_tok=N sec=S tok_s=X threads=T"
    grep '^TRAIN' "$W/torch.$r.log" | sed 's/[a-z_]*=//g' | awk '{ print $3, $4, $5 }' > "$W/torch.$r.res"
}

# the SGEMM peak on THREADS threads, for the shares
if [ -z "${PEAK:-}" ] && [ -x build/bench/sgemm ]; then
    PEAK=$(build/bench/sgemm 2048 3 "$THREADS" | awk '/^SGEMM/ { sub("gflops=", "", $3); print $3 }')
fi
PEAK=${PEAK:-0}

echo "# bench_transformer $(date -u '+%Y-%m-%d %H:%M UTC'): d $D, layers $ENC+$DEC, heads $HEADS, ffn $FFN, vocab $VOCAB, batch $BATCH, max-len $MAXLEN, threads $THREADS"
echo "# $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load average $(cut -d' ' -f1-3 /proc/loadavg); training: $WARMUP untimed + $UPDATES timed updates, $ROUNDS rounds"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    nmt_train "$r"
    torch_train "$r"
    # the flops of the timed batches are the same for torch (the same batches as nmt's round 1)
    echo "  round $r: nmt $(cut -d' ' -f3 "$W/nmt.$r.res") tok/s, torch $(cut -d' ' -f3 "$W/torch.$r.res") tok/s (target tokens, EOS included)"
    r=$((r + 1))
done
# torch's tokens per update equal nmt's: the same batches
cmp_tok=$(awk 'NR == FNR { a = $1; next } { print (a == $1) ? "equal" : "DIFFERENT: nmt " a ", torch " $1 }' "$W/nmt.1.res" "$W/torch.1.res")

# ------------------------------------------------------------------ decoding
head -n "$DEC_N" "$M30K/test_2016_flickr.en" > "$W/test.en"
NS=$(wc -l < "$W/test.en")
if [ -n "${DEC_MODEL:-}" ]; then
    DM=$DEC_MODEL
else
    DM=$W/decode.nmt
    echo "# training the model to decode: $DEC_UPDATES Adam updates"
    # shellcheck disable=SC2086
    "$NMT" train $ARCH $DATA --optimizer adam --lr 0.0005 --max-updates "$DEC_UPDATES" --save-every 0 --overwrite \
        --threads "$THREADS" --model "$DM" > "$W/decode.train.log" 2>&1 || { tail -n 5 "$W/decode.train.log" >&2; exit 1; }
fi
# nmt's decoding time: a run on all NS sentences less one on the first (the median of 3), so
# that the start-up (loading, and what the first sentence sets up) falls out: NS - 1 sentences
[ "$NS" -ge 2 ] || { echo "$ME: DEC_N must be at least 2" >&2; exit 2; }
head -n 1 "$W/test.en" > "$W/first.en"
: > "$W/dec.res"   # side beam seconds sentences rss_kib
for k in 1 12; do
    for _ in 1 2 3; do
        t0=$(now_ns); "$NMT" translate --model "$DM" --threads "$THREADS" --beam "$k" < "$W/first.en" > /dev/null; t1=$(now_ns)
        echo $((t1 - t0))
    done | sort -n | sed -n 2p > "$W/base"
    t0=$(now_ns)
    $TIME -f %M -o "$W/dec.rss" "$NMT" translate --model "$DM" --threads "$THREADS" --beam "$k" < "$W/test.en" > "$W/nmt.b$k"
    t1=$(now_ns)
    echo "nmt $k $(awk -v a="$t0" -v b="$t1" -v l="$(cat "$W/base")" 'BEGIN { printf "%.6f", (b - a - l) / 1e9 }') $((NS - 1)) $(tail -n 1 "$W/dec.rss")" >> "$W/dec.res"
done
# shellcheck disable=SC2086
$TIME -f %M -o "$W/dec.rss" $PY $TT decode-speed "$DM" --src "$W/test.en" -n "$NS" --beams 1 12 --threads "$THREADS" \
    --out-prefix "$W/torch" > "$W/torch.dec.log" 2>&1 || { tail -n 5 "$W/torch.dec.log" >&2; exit 1; }
grep '^DECODE' "$W/torch.dec.log" | sed 's/[a-z_]*=//g' | awk -v m="$(tail -n 1 "$W/dec.rss")" '{ print "torch", $2, $4, $3, m }' >> "$W/dec.res"
# lines whose tokens differ, per beam
for k in 1 12; do
    echo "diff $k $(paste -d '\t' "$W/nmt.b$k" "$W/torch.b$k" | awk -F '\t' '$1 != $2 { n++ } END { print n + 0 }')" >> "$W/dec.res"
done

# ------------------------------------------------------------------ table
echo
awk -v R="$ROUNDS" -v W="$W" -v peak="$PEAK" -v N="$NS" -v th="$THREADS" -v eq="$cmp_tok" '
function mean(side, col,    s, i, l, a) { s = 0; for (i = 1; i <= R; i++) { getline l < (W "/" side "." i ".res"); close(W "/" side "." i ".res"); split(l, a, " "); s += a[col] } return s / R }
function maxrss(side,    m, i, l) { m = 0; for (i = 1; i <= R; i++) { getline l < (W "/" side "." i ".rss"); close(W "/" side "." i ".rss"); if (l + 0 > m) m = l + 0 } return m / 1024 }
function ratio(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "-" }
BEGIN {
    while ((getline l < (W "/dec.res")) > 0) { split(l, a, " "); if (a[1] == "diff") dif[a[2]] = a[3]; else { sps[a[1], a[2]] = a[4] / a[3]; rss[a[1]] = (a[5] > rss[a[1]]) ? a[5] : rss[a[1]] } }
    nt = mean("nmt", 3); tt = mean("torch", 3); gf = mean("nmt", 4)
    # torch did the same FLOPs per token as nmt: its GFLOP/s scale with its tokens/s
    tg = nt > 0 ? gf * tt / nt : 0
    printf "| Transformer, %d threads | nmt | torch | nmt / torch | goal |\n|---|---|---|---|---|\n", th
    printf "| training, target tokens/s (mean of %d) | %.0f | %.0f | **%s** | >= 2 |\n", R, nt, tt, ratio(nt, tt)
    if (peak > 0) printf "| share of the %.1f GFLOP/s SGEMM peak | %.0f%% | %.0f%% | | nmt >= 70%% |\n", peak, 100 * gf / peak, 100 * tg / peak
    else printf "| matrix-product GFLOP/s (no SGEMM peak: set PEAK, or run scripts/bench.sh once to build build/bench/sgemm) | %.1f | %.1f | | |\n", gf, tg
    printf "| training, peak RSS MiB | %.0f | %.0f | %s | |\n", maxrss("nmt"), maxrss("torch"), ratio(maxrss("nmt"), maxrss("torch"))
    for (k = 1; k <= 12; k += 11)
        printf "| beam %d, sentences/s (%d sentences) | %.2f | %.2f | **%s** | >= 5 |\n", k, N, sps["nmt", k], sps["torch", k], ratio(sps["nmt", k], sps["torch", k])
    printf "| decoding, peak RSS MiB | %.0f | %.0f | %s | |\n", rss["nmt"] / 1024, rss["torch"] / 1024, ratio(rss["nmt"], rss["torch"])
    printf "\nlines whose output differs (nmt vs torch float32): beam 1: %d of %d, beam 12: %d of %d\n", dif[1], N, dif[12], N
    printf "target tokens of the timed updates: %s (torch trains on nmt'"'"'s logged batches)\n", eq
}'
echo "FLOPs: matrix products of the timed batches on their padded shapes, backward = 2 x forward (the causal"
echo "self-attention counted whole). Torch decodes one sentence at a time and recomputes the whole prefix at each"
echo "step (no cached keys and values), as its exact search does. nmt: the wall time of all sentences less that of"
echo "the first alone (start-up out), over one sentence fewer; torch: its own clock around the search, after a warm-up."
[ -n "${KEEP:-}" ] && echo "(files in $W)"
exit 0
