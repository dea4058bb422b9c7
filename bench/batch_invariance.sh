#!/bin/sh
# batch_invariance.sh MODEL NMT... : how many of test_2016_flickr's 1,000 translations (1-best with
# its score, beam 5) change when each sentence is decoded alone (--batch 1) instead of in batches of
# 64, for each nmt binary given (say, a revision before decoding's products computed each row alone
# and one after), under each kernel set this CPU runs: OpenBLAS's own choice, Haswell, Zen, SkylakeX
# (OPENBLAS_CORETYPE) and oneDNN (NMT_GEMM), in FP32 and int8. A measurement, not a test: it exits 0.
# Environment: NMT_SHARED (../shared), BI_LINES (1000), BI_PREC ("fp32 int8").
set -u
model=${1:?usage: batch_invariance.sh MODEL NMT...}; shift
SHARED=${NMT_SHARED:-../shared}
N=${BI_LINES:-1000}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
head -n "$N" "$SHARED/data/multi30k/tok/test_2016_flickr.en" > "$T/in"
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { for f in "$@"; do case "$flags " in *" $f "*) ;; *) return 1 ;; esac; done; }
sets="own"
has avx2 fma && sets="$sets Haswell Zen"
has avx512f avx512vl avx512bw avx512dq avx512cd && sets="$sets SkylakeX"
sets="$sets oneDNN"
echo "== batch_invariance: $N lines, beam 5, --batch 1 against --batch 64, $(date -u +%FT%TZ)"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores"
printf '%-40s %-6s' "binary" "prec"; for s in $sets; do printf ' %9s' "$s"; done; echo
for nmt in "$@"; do
    for p in ${BI_PREC:-fp32 int8}; do
        "$nmt" translate --model "$model" --precision "$p" < /dev/null > /dev/null 2>&1 || continue
        printf '%-40s %-6s' "$nmt" "$p"
        for s in $sets; do
            case $s in own) e="NMT_BLAS_AUTOTUNE=0" ;; oneDNN) e="NMT_GEMM=onednn" ;; *) e="OPENBLAS_CORETYPE=$s" ;; esac
            for b in 1 64; do
                env $e "$nmt" translate --model "$model" --precision "$p" --beam 5 --n-best 1 --threads 1 --batch $b \
                    < "$T/in" > "$T/b$b" 2> /dev/null
            done
            printf ' %9s' "$(paste -d '\n' "$T/b1" "$T/b64" | awk 'NR % 2 { a = $0; next } { n += a != $0 } END { print n + 0 }')"
        done
        echo
    done
done
echo "(lines of $N whose 1-best or score differ between the two batchings; 'own': OpenBLAS's own choice, NMT_BLAS_AUTOTUNE=0)"
