#!/bin/sh
# marian_speed.sh: `nmt translate` against marian-decoder on one Marian Transformer, side by side in
# one run: the model converted by `nmt convert --from marian` (and, for Marian's int8, by its own
# marian-conv), both programs decoding the same sentences with the same search (beam BEAM, no
# length normalisation, <unk> never generated, at most 3 x (source tokens + 1) output tokens:
# marian-decoder's defaults), BATCH sentences a batch, 1 and 2 threads, FP32 and int8. Every round
# runs each configuration once, the two programs in turn (which one goes first alternates from
# round to round), so that a change in the machine's load falls on both alike. Prints wall
# seconds, sentences/s and target tokens/s per configuration, nmt's speed over Marian's, and how
# many 1-best lines differ from marian-decoder's FP32 output at the same thread count.
#
# usage: sh bench/marian_speed.sh MODEL.npz VOCAB.yml [TGT_VOCAB.yml]   (one vocabulary: a joint one)
#   env: MARIAN (required: the folder holding marian-decoder and marian-conv), SRC (the source
#        sentences, default $SHARED/data/multi30k/tok/test_2016_flickr.en), N (the first N lines,
#        default 1000), SHARED (../shared), NMT (bin/nmt), THREADS ("1 2"), ROUNDS (3), BEAM (4),
#        BATCH (32), MAXI (100: Marian's --maxi-batch, in mini-batches, sorted by source length,
#        as nmt sorts its input), PRECISIONS ("fp32 int8"), MARIAN_INT8 (intgemm8: marian-conv's
#        --gemm-type for Marian's int8 model), KEEP=DIR (keep the models, outputs and runs.tsv),
#        WORKERS (1: at T > 1 threads, also nmt --workers T --threads 1, batches decoded side by
#        side as Marian's --cpu-threads workers decode them; 0: not)
#
# Timed: each program's wall clock on the N sentences (a file in, a file out), and separately
# the median of 3 runs on empty input (start-up and loading the model; for Marian's int8 this
# includes preparing its weights, for nmt's converting them); the rates are computed from the
# wall time less that load time. Target tokens: the output's tokens (no EOS). Marian runs with
# OPENBLAS_NUM_THREADS=1 (each of its --cpu-threads workers then runs single-threaded products,
# which its static link otherwise fails to ask of OpenBLAS); nmt with its own --threads alone.
# Not part of `make test`: a benchmark, it exits 0 whatever it measures (2 for missing files).
set -u
cd "$(dirname "$0")/.." || exit 2
ME=marian_speed
[ $# -ge 2 ] || { echo "usage: MARIAN=DIR sh bench/$ME.sh MODEL.npz VOCAB.yml [TGT_VOCAB.yml]" >&2; exit 2; }
NPZ=$1; SV=$2; TV=${3:-$2}
MARIAN=${MARIAN:?set MARIAN to the folder holding marian-decoder and marian-conv}
SHARED=${SHARED:-../shared}
SRC=${SRC:-$SHARED/data/multi30k/tok/test_2016_flickr.en}
N=${N:-1000}; NMT=${NMT:-bin/nmt}; THREADS=${THREADS:-1 2}; ROUNDS=${ROUNDS:-3}
BEAM=${BEAM:-4}; BATCH=${BATCH:-32}; MAXI=${MAXI:-100}; PRECISIONS=${PRECISIONS:-fp32 int8}
MARIAN_INT8=${MARIAN_INT8:-intgemm8}
WORKERS=${WORKERS:-1}
for f in "$NPZ" "$SV" "$TV" "$SRC" "$NMT" "$MARIAN/marian-decoder" "$MARIAN/marian-conv"; do
    [ -e "$f" ] || { echo "$ME: $f not found" >&2; exit 2; }
done
if [ -n "${KEEP:-}" ]; then
    T=$KEEP; mkdir -p "$T"
else
    T=$(mktemp -d "${TMPDIR:-/tmp}/$ME.XXXXXX")
    trap 'rm -rf "$T"' EXIT INT TERM
fi
unset OMP_WAIT_POLICY OMP_NUM_THREADS GOTO_NUM_THREADS OPENBLAS_NUM_THREADS
head -n "$N" "$SRC" > "$T/src"
NS=$(wc -l < "$T/src")
VOC="$SV"; [ "$TV" != "$SV" ] && VOC="$SV $TV"

# ---- the models: nmt's conversion, Marian's int8 model (neither timed)
# shellcheck disable=SC2086
"$NMT" convert --from marian "$NPZ" --vocabs $VOC --model "$T/model.nmt" > "$T/convert.log" 2>&1 ||
    { echo "$ME: nmt convert failed: $(tail -n 3 "$T/convert.log")" >&2; exit 1; }
case " $PRECISIONS " in *" int8 "*)
    "$MARIAN/marian-conv" -f "$NPZ" -t "$T/model.int8.bin" --gemm-type "$MARIAN_INT8" > "$T/conv.log" 2>&1 ||
        { echo "$ME: marian-conv failed: $(tail -n 3 "$T/conv.log")" >&2; exit 1; } ;;
esac

# ARGS PROG PREC THREADS: the options of one configuration (the paths hold no blank)
args() {
    case $1 in
        marian)
            m=$NPZ; [ "$2" = int8 ] && m=$T/model.int8.bin
            echo "--models $m --vocabs $SV $TV --beam-size $BEAM --normalize 0 --max-length-factor 3" \
                 "--mini-batch $BATCH --maxi-batch $MAXI --maxi-batch-sort src --cpu-threads $3 --quiet" ;;
        nmt)
            echo "--model $T/model.nmt --beam $BEAM --no-length-norm --no-unk --batch $BATCH --precision $2 --threads $3" ;;
        nmtw)
            echo "--model $T/model.nmt --beam $BEAM --no-length-norm --no-unk --batch $BATCH --precision $2 --workers $3 --threads 1" ;;
    esac
}
# RUN PROG PREC THREADS: runs one configuration, standard input to standard output
# shellcheck disable=SC2046
run() {
    case $1 in
        marian) OPENBLAS_NUM_THREADS=1 "$MARIAN/marian-decoder" $(args "$@") ;;
        nmt|nmtw) "$NMT" translate $(args "$@") ;;
    esac
}
show() { # SHOW PROG PREC THREADS: its command line
    case $1 in
        marian) echo "OPENBLAS_NUM_THREADS=1 $MARIAN/marian-decoder $(args "$@")" ;;
        nmt|nmtw) echo "$NMT translate $(args "$@")" ;;
    esac
}
now_ns() { date +%s%N; }

echo "# $ME $(date -u '+%Y-%m-%d %H:%M UTC'): $NPZ, $NS sentences of $SRC, beam $BEAM, batch $BATCH, threads $THREADS, rounds $ROUNDS"
echo "# $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(grep -m1 -o -w 'avx512f' /proc/cpuinfo || echo 'no AVX-512'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $("$MARIAN/marian-decoder" --version 2>&1 | tail -n 1)"
CONFIGS=""
for p in $PRECISIONS; do
    for prog in marian nmt nmtw; do
        for t in $THREADS; do
            [ "$prog" = nmtw ] && { [ "$t" -gt 1 ] && [ "$WORKERS" = 1 ] || continue; }
            name=$prog.$p.t$t
            if ! run $prog "$p" "$t" < /dev/null > /dev/null 2> "$T/err"; then
                echo "# $name: not run: $(head -c 300 "$T/err" | tr '\n' ' ')"
                continue
            fi
            CONFIGS="$CONFIGS $name"
            for _ in 1 2 3; do
                t0=$(now_ns)
                run $prog "$p" "$t" < /dev/null > /dev/null 2>&1
                t1=$(now_ns)
                echo $((t1 - t0))
            done | sort -n | sed -n 2p > "$T/load.$name"
            echo "# $name: $(show $prog "$p" "$t")"
            echo "#   load $(awk '{ printf "%.3f", $1 / 1e9 }' "$T/load.$name") s (median of 3 on empty input)"
        done
    done
done

RES=$T/runs.tsv # name round wall_s net_s sentences tokens
: > "$RES"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for t in $THREADS; do
        for p in $PRECISIONS; do
            if [ $((r % 2)) = 1 ]; then progs="marian nmt nmtw"; else progs="nmtw nmt marian"; fi
            for prog in $progs; do
                name=$prog.$p.t$t
                case " $CONFIGS " in *" $name "*) ;; *) continue ;; esac
                t0=$(now_ns)
                run $prog "$p" "$t" < "$T/src" > "$T/$name.out" 2> "$T/$name.err"
                t1=$(now_ns)
                [ "$r" = 1 ] && cp "$T/$name.out" "$T/$name.r1.out"
                tok=$(awk '{ n += NF } END { print n + 0 }' "$T/$name.out")
                awk -v a="$t0" -v b="$t1" -v l="$(cat "$T/load.$name")" -v n="$name" -v r="$r" -v s="$(wc -l < "$T/$name.out")" -v k="$tok" \
                    'BEGIN { printf "%s\t%d\t%.3f\t%.3f\t%d\t%d\n", n, r, (b - a) / 1e9, (b - a - l) / 1e9, s, k }' >> "$RES"
            done
        done
    done
    echo "# round $r done $(date -u '+%H:%M:%S UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    r=$((r + 1))
done

# differing 1-best lines against marian-decoder's FP32 output at the same thread count (round 1),
# and how many of those reach the length limit of one program or the other: Marian's limit is 3 x
# the longest source of the batch (+ EOS), nmt's 3 x the sentence's own, so a hypothesis that
# never says EOS stops at different lengths in the two
differ() { # REF OUT: "lines-differing lines-at-the-limit"
    paste -d '\t' "$T/src" "$1" "$2" | awk -F '\t' '$2 != $3 {
        n++; lim = 3 * (split($1, w, " ") + 1)
        if (split($2, a, " ") >= lim || split($3, b, " ") >= lim) c++ } END { print n + 0, c + 0 }'
}
: > "$T/diff.tsv"
for name in $CONFIGS; do
    t=${name##*.t}
    ref=$T/marian.fp32.t$t.r1.out
    if [ -f "$ref" ]; then printf '%s\t%s\n' "$name" "$(differ "$ref" "$T/$name.r1.out")" >> "$T/diff.tsv"; fi
done
echo
awk -F '\t' -v NS="$NS" -v R="$ROUNDS" '
FILENAME ~ /diff.tsv$/ { split($2, d, " "); dif[$1] = d[1] " (" d[2] ")"; next }
{ k = $1; n[k]++; wall[k, n[k]] = $3; net[k, n[k]] = $4; tok[k] = $6; sent[k] = $5
  if (!(k in seen)) { seen[k] = 1; order[++no] = k } }
function med(a, k, m,   i, j, v, x) {
    for (i = 1; i <= m; i++) v[i] = a[k, i]
    for (i = 2; i <= m; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
    return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
function lo(a, k, m,   i, x) { x = a[k, 1]; for (i = 2; i <= m; i++) if (a[k, i] < x) x = a[k, i]; return x }
function hi(a, k, m,   i, x) { x = a[k, 1]; for (i = 2; i <= m; i++) if (a[k, i] > x) x = a[k, i]; return x }
END {
    printf "| %d sentences | wall s (median; range) | load s | sentences/s | target tokens/s | nmt / Marian | lines differing from Marian FP32 (at a length limit) |\n", NS
    print "|---|---|---|---|---|---|---|"
    for (i = 1; i <= no; i++) {
        k = order[i]; m = n[k]; w = med(wall, k, m); z = med(net, k, m)
        split(k, f, "."); other = "marian." f[2] "." f[3]
        ratio = ""
        if (f[1] != "marian" && (other in seen)) ratio = sprintf("**%.2f**", med(net, other, n[other]) / z)
        printf "| %s %s, %s thread%s | %.2f (%.2f-%.2f) | %.2f | %.1f | %.0f | %s | %s of %d |\n",
            f[1] == "nmt" ? "nmt" : f[1] == "nmtw" ? "nmt --workers" : "marian-decoder",
            f[2] == "fp32" ? "FP32" : f[2], substr(f[3], 2), f[3] == "t1" ? "" : "s", w, lo(wall, k, m), hi(wall, k, m), w - z,
            sent[k] / z, tok[k] / z, ratio, (k in dif) ? dif[k] : "-", sent[k]
    }
}' "$T/diff.tsv" "$RES"
echo
echo "Medians over $ROUNDS rounds; sentences/s and tokens/s from the wall time less the load time;"
echo "nmt / Marian: the ratio of those speeds; differing lines: round 1's output; at a length limit:"
echo "one of the two outputs has 3 x (source tokens + 1) tokens or more (Marian's limit is the batch's)."
[ -n "${KEEP:-}" ] && echo "(runs in $RES, outputs in $T)"
exit 0
