#!/bin/sh
# int8_avx2.sh: int8 decoding on a CPU with AVX2 and without AVX-512: FP32 against int8
# with a lexical shortlist at beam 12 on Multi30k test_2016_flickr, speed and BLEU, side by side
# in one run, as an AVX2 machine runs them (and int8 there on oneDNN's kernels instead of nmt's:
# NMT_INT8=onednn), and the same on this CPU's own kernels for reference.
# "As an AVX2 machine": oneDNN held to AVX2 (ONEDNN_MAX_CPU_ISA=AVX2: int8 takes its u8 form on
# nmt's AVX2 kernel, qgemm_u8.c), OpenBLAS's Haswell kernels for the FP32 products (OPENBLAS_CORETYPE);
# nmt's own kernels are AVX2 code in every build. Each round runs the four configurations once,
# in turn, so that a change in the machine's load falls on all of them alike.
#   sh bench/int8_avx2.sh MODEL [DIR]   DIR (default /tmp/int8_avx2) keeps the table and the outputs
# env: NMT (bin/nmt), NMT_SHARED (../shared), THREADS (1), ROUNDS (2), BEAM (12), BATCH (--batch of
#      every run; default the program's), INT8_BATCH (--batch of the int8 runs; default BATCH: a
#      shortlist is a batch's union, so int8 + shortlist may have another best batch), SHORTLIST (K,F;
#      100,100), TABLE (the shortlist's table; default made once in DIR: IBM Model 1 on Multi30k
#      train, `nmt lex --top 100`)
# Prints one line per run (configuration, machine form, round, wall seconds, CPU seconds: user +
# system, which a busy machine disturbs less than the wall clock; BLEU) and a summary: mean
# seconds, int8 + shortlist's speed against FP32 on the same form (the ratio of the means, and
# each round's), BLEU against FP32, and the 1-best lines int8 shares between the two forms.
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
: "${NMT:=$ROOT/bin/nmt}" "${NMT_SHARED:=$ROOT/../shared}" "${THREADS:=1}" "${ROUNDS:=2}" "${BEAM:=12}"
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 MODEL [DIR]" >&2; exit 2; }
MODEL=$1; DIR=${2:-/tmp/int8_avx2}
D=$NMT_SHARED/data/multi30k/tok
TEST=$D/test_2016_flickr
for f in "$MODEL" "$NMT" "$TEST.en" "$TEST.fr"; do [ -e "$f" ] || { echo "$0: $f not found" >&2; exit 2; }; done
mkdir -p "$DIR"
export OMP_WAIT_POLICY=PASSIVE NMT_BLAS_AUTOTUNE=0

TABLE=${TABLE:-$DIR/multi30k.ibm.lex}
if [ ! -s "$TABLE" ]; then
    "$NMT" ibm --src "$D/train.en" --tgt "$D/train.fr" --sym gdfa --threads "$THREADS" > "$DIR/ibm.links" 2> /dev/null
    "$NMT" lex --src "$D/train.en" --tgt "$D/train.fr" --align "$DIR/ibm.links" --top 100 --out "$TABLE" 2> /dev/null
fi
SL="$TABLE,${SHORTLIST:-100,100}"

# FORM: the environment of each machine form (avx2, or native: this CPU's own kernels)
form_env() { case $1 in avx2) echo "ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell" ;; *) echo "" ;; esac; }
opts() { case $1 in fp32) echo "--precision fp32${BATCH:+ --batch $BATCH}" ;;
                   int8*) echo "--precision int8 --shortlist $SL${INT8_BATCH:+ --batch $INT8_BATCH}" ;; esac; }
INT8_BATCH=${INT8_BATCH:-$BATCH}
# CONFIG's environment: int8dnn is int8sl on oneDNN's int8 matmul instead of nmt's AVX2 kernel
conf_env() { case $1 in int8dnn) echo "NMT_INT8=onednn" ;; *) echo "" ;; esac; }
# the configurations of each form (oneDNN's kernels are nmt's on VNNI: nothing to compare there)
configs() { case $1 in avx2) echo "fp32 int8sl int8dnn" ;; *) echo "fp32 int8sl" ;; esac; }

echo "# int8_avx2 $(date -u '+%F %H:%M UTC'): $MODEL, beam $BEAM, batch ${BATCH:-default} (int8: ${INT8_BATCH:-default}), $THREADS thread(s), shortlist $SL, $ROUNDS rounds"
echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for f in avx2 native; do
    # what each form runs: oneDNN's ISA and an int8 product's implementation, OpenBLAS's kernels
    # shellcheck disable=SC2046
    v=$(echo "a" | env $(form_env $f) ONEDNN_VERBOSE=1 OPENBLAS_VERBOSE=2 "$NMT" translate --model "$MODEL" \
        --precision int8 --beam 1 2>&1)
    # (no int8 matmul of oneDNN's: nmt's own AVX2 kernel, src/backend/cpu/qgemm_u8.c, ran them)
    by=$(echo "$v" | awk -F, '$2 == "exec" && $4 == "matmul" && $7 ~ /^src_[us]8/ { print "oneDNN " $5 " on " substr($7, 1, 6); exit }')
    echo "# $f: oneDNN's ISA $(echo "$v" | grep -m1 '^onednn_verbose,info,cpu,isa:' | cut -d, -f4-), int8 products by" \
         "${by:-nmt qgemm_u8 (AVX2)}, OpenBLAS $(echo "$v" | sed -n 's/^Core: //p' | head -n 1)"
done

bleu() { "$NMT" bleu --tokenize none -i "$1" "$TEST.fr" | awk '{ for (i = 1; i <= NF; i++) if ($i == "=") { print $(i + 1); exit } }'; }
printf 'config\tform\tround\tseconds\tCPU seconds\tBLEU\n'
r=1
while [ $r -le "$ROUNDS" ]; do
    for f in avx2 native; do
        for c in $(configs $f); do
            out="$DIR/$c.$f.hyp"
            t0=$(date +%s.%N)
            # shellcheck disable=SC2046
            /usr/bin/time -f '%U %S' -o "$DIR/cpu" env $(form_env $f) $(conf_env $c) "$NMT" translate --model "$MODEL" --beam "$BEAM" \
                --threads "$THREADS" $(opts $c) < "$TEST.en" > "$out"
            t1=$(date +%s.%N)
            printf '%s\t%s\t%d\t%s\t%s\t%s\n' "$c" "$f" "$r" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" \
                "$(awk '{ printf "%.2f", $1 + $2 }' "$DIR/cpu")" "$(bleu "$out")"
        done
    done
    r=$((r + 1))
done > "$DIR/runs.tsv"
cat "$DIR/runs.tsv"

echo "# summary (seconds: mean over rounds; speed: fp32 seconds / int8 + shortlist seconds, same form)"
awk -F '\t' '{ s[$1, $2] += $4; u[$1, $2] += $5; b[$1, $2] = $6; t[$1, $2, $3] = $4; c[$1, $2, $3] = $5; R = $3 > R ? $3 : R }
    END { for (fi = 1; fi <= 2; fi++) { f = fi == 1 ? "avx2" : "native"; F = "fp32" SUBSEP f; I = "int8sl" SUBSEP f
              pw = pc = ""; for (r = 1; r <= R; r++) { pw = pw sprintf(" %.2f", t[F, r] / t[I, r]); pc = pc sprintf(" %.2f", c[F, r] / c[I, r]) }
              printf "%s: fp32 %.2f s (CPU %.2f), BLEU %s; int8 + shortlist %.2f s (CPU %.2f), BLEU %s (%+.2f); speed %.2fx wall " \
                     "(rounds:%s), %.2fx CPU (rounds:%s)\n", f, s[F] / R, u[F] / R, b[F], s[I] / R, u[I] / R, b[I], b[I] - b[F],
                     s[F] / s[I], pw, u[F] / u[I], pc } }' "$DIR/runs.tsv"
awk -F '\t' '$2 == "avx2" && ($1 == "int8sl" || $1 == "int8dnn") { u[$1] += $5; c[$1, $3] = $5; R = $3 > R ? $3 : R }
    END { p = ""; for (r = 1; r <= R; r++) p = p sprintf(" %.2f", c["int8dnn", r] / c["int8sl", r])
          printf "avx2: int8 + shortlist on oneDNN (NMT_INT8=onednn) %.2f CPU s, on nmt qgemm_u8 %.2f: %.2fx (rounds:%s)\n",
                 u["int8dnn"] / R, u["int8sl"] / R, u["int8dnn"] / u["int8sl"], p }' "$DIR/runs.tsv"
cmp -s "$DIR/int8sl.avx2.hyp" "$DIR/int8dnn.avx2.hyp" && echo "avx2: nmt's and oneDNN's int8 kernels: the same output, byte for byte" ||
    echo "avx2: nmt's and oneDNN's int8 kernels: outputs differ"
same=$(paste -d '\n' "$DIR/int8sl.avx2.hyp" "$DIR/int8sl.native.hyp" | awk 'NR % 2 { a = $0; next } { n += a == $0 } END { print n + 0 }')
echo "int8 + shortlist, avx2 against native: the same 1-best on $same of $(wc -l < "$TEST.en") lines"
echo "# load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
