#!/bin/sh
# blas_kernels.sh: OpenBLAS's kernel sets side by side on each of the model's products, one thread:
# OpenBLAS's own choice and every set `nmt blas-kernels` times on this CPU (tools/blas_kernels.c),
# interleaved (for each shape, every set in turn, ROUNDS times, the best of each kept), so that
# other work on a shared machine, which comes and goes, falls on all of them alike.
#   make build/bench/bench_gemm && sh bench/blas_kernels.sh [ROUNDS]       (docs/RESULTS.md)
# Prints one line per shape (GFLOP/s of each set), then their geometric means.
ROUNDS=${1:-3}
G=${BENCH_GEMM:-build/bench/bench_gemm}
[ -x "$G" ] || { echo "blas_kernels.sh: $G not built (make $G)" >&2; exit 1; }
sets="own"
for k in Haswell Zen SkylakeX Cooperlake; do
    case $k in
        Haswell|Zen) grep -qw avx2 /proc/cpuinfo && sets="$sets $k" ;;
        SkylakeX) grep -qw avx512vl /proc/cpuinfo && sets="$sets $k" ;;
        Cooperlake) grep -qw avx512_bf16 /proc/cpuinfo && sets="$sets $k" ;;
    esac
done
run() { # SET SHAPE: bench_gemm's output for one shape on one kernel set
    if [ "$1" = own ]; then env -u OPENBLAS_CORETYPE OMP_WAIT_POLICY=PASSIVE "$G" --threads 1 --kernels openblas-f32 --only "$2"
    else OPENBLAS_CORETYPE=$1 OMP_WAIT_POLICY=PASSIVE "$G" --threads 1 --kernels openblas-f32 --only "$2"; fi 2> /dev/null
}
echo "# $(date -u '+%F %H:%M UTC'); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), family $(grep -m1 'cpu family' /proc/cpuinfo | sed 's/.*: //') model $(grep -m1 '^model' /proc/cpuinfo | sed 's/.*: //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
for s in $sets; do # the kernels each set really loaded (OpenBLAS takes some names for others)
    printf '# %s: %s\n' "$s" "$(run "$s" none | sed -n 's/^# OpenBLAS [^ ]* .*USE_OPENMP \([A-Za-z0-9_]*\) .*/\1/p')"
done
shapes=$("$G" --threads 1 --kernels openblas-f32 2> /dev/null | awk -F '\t' 'NR > 2 { print $2 }')
printf 'shape'; for s in $sets; do printf '\t%s' "$s"; done; printf '\n'
echo "$shapes" | while IFS= read -r shape; do
    for r in $(seq "$ROUNDS"); do
        for s in $sets; do printf '%s\t%s\n' "$s" "$(run "$s" "$shape" | awk -F '\t' 'NR > 2 { print $5; exit }')"; done
    done | awk -F '\t' -v shape="$shape" -v sets="$sets" '$2 > best[$1] { best[$1] = $2 }
        END { n = split(sets, k, " "); printf "%s", shape; for (i = 1; i <= n; i++) printf "\t%.1f", best[k[i]]; printf "\n" }'
done | awk -F '\t' '{ print; for (i = 2; i <= NF; i++) { lg[i] += log($i); n[i]++ } ; nf = NF }
    END { printf "geometric mean"; for (i = 2; i <= nf; i++) printf "\t%.1f", exp(lg[i] / n[i]); printf "\n" }'
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
