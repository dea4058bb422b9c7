#!/bin/sh
# bench_mpi.sh: data-parallel training on this machine (docs/SCALING.md). For SMALL (Multi30k,
# 256/256/256/256, vocabulary 10,000) and PAPER (wmt_enfr, 620/1000/1000/500, vocabulary 30,002),
# Appendix-B minibatches of 80 either way:
#   1 process x 2 threads   against   mpirun -np 2, 1 thread each;
# target tokens/s (the progress lines' windows after the first, averaged; the first alone when
# it is the only one), the share of the time
# and the seconds per update the ranks spend summing gradients, and the bytes each rank sends
# into the sums per update: sparse (what nmt does: dense tensors whole, embedding rows the
# minibatch reads) against dense (every parameter). Then bench/bench_overlap.c: would starting the
# output layer's sum before the rest of backward pay?
# Run from the repository root after `make`, on an idle machine. Environment: NMT_SHARED
# (../shared), BENCH_CONFIGS ("small paper"), BENCH_UPDATES (SMALL's updates per run, 60; PAPER
# a fifth), BENCH_QUICK=1 (a smoke test of a few updates at toy sizes: the figures mean nothing).
# A benchmark, not a test: it exits 0 whatever it measures.
set -u
SHARED="${NMT_SHARED:-../shared}"
CONFIGS="${BENCH_CONFIGS:-small paper}"
UPD="${BENCH_UPDATES:-60}"
QUICK="${BENCH_QUICK:-0}"
OUT=build/bench/mpi
NMT=bin/nmt
BLASDIR=/usr/lib/x86_64-linux-gnu/openblas-openmp
BLASINC=/usr/include/x86_64-linux-gnu/openblas-openmp
mkdir -p "$OUT"
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$NMT" ] || [ ! -f build/libnmt.a ]; then
    echo "bench_mpi: needs mpirun (openmpi-bin) and a built tree (make)" >&2
    exit 1
fi
MPIRUN="mpirun --oversubscribe --bind-to none"
[ "$(id -u)" -eq 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
export OMP_WAIT_POLICY=PASSIVE

# shellcheck disable=SC2046
if ! gcc -O3 -g -std=c11 -D_GNU_SOURCE -fopenmp -mavx2 -mfma -Iinclude -Isrc -I"$BLASINC" $(pkg-config --cflags ompi-c) \
    bench/bench_overlap.c build/libnmt.a -L"$BLASDIR" -Wl,-rpath,"$BLASDIR" -lsentencepiece_train -lsentencepiece -lstdc++ \
    -lopenblas -ldnnl -lcjson -lz -lm $(pkg-config --libs ompi-c) -o "$OUT/bench_overlap"; then
    echo "bench_mpi: could not build bench/bench_overlap.c" >&2
    exit 1
fi

sizes() { # config: the model's options
    if [ "$QUICK" = 1 ]; then echo "--emb 32 --hid 32 --att 32 --maxout 16 --vocab 2000"
    elif [ "$1" = small ]; then echo "--emb 256 --hid 256 --att 256 --maxout 256 --vocab 10000"
    else echo "--emb 620 --hid 1000 --att 1000 --maxout 500 --vocab 30002"; fi
}
data() { # config: the corpus options
    if [ "$1" = small ]; then echo "--src $SHARED/data/multi30k/tok/train.en --tgt $SHARED/data/multi30k/tok/train.fr"
    else echo "--src $SHARED/data/wmt_enfr/train.en --tgt $SHARED/data/wmt_enfr/train.fr"; fi
}
updates() { # config
    if [ "$QUICK" = 1 ]; then echo 40; elif [ "$1" = small ]; then echo "$UPD"; else echo $((UPD / 5 > 3 ? UPD / 5 : 3)); fi
}

# one run: config, name, threads, launcher words...; prints "tok/s comm% MB/update params comm-s/update"
run() {
    cfg=$1 name=$2 th=$3; shift 3
    log="$OUT/$cfg.$name.log"
    rm -f "$OUT/$cfg.$name.nmt"*
    # shellcheck disable=SC2046
    "$@" $NMT train $(data "$cfg") $(sizes "$cfg") --max-updates "$(updates "$cfg")" --threads "$th" --log-every 1 \
        --save-every 0 --model "$OUT/$cfg.$name.nmt" > "$log" 2>&1 || echo "bench_mpi: $cfg $name failed (see $log)" >&2
    awk '
        /^\[train\] update / { for (i = 1; i < NF; i++) if ($(i + 1) == "tok/s") { n++; if (n == 1) first = $i; else { s += $i; k++ } } }
        /parameters \(/ { for (i = 1; i < NF; i++) if ($(i + 1) == "parameters") p = $i }
        /summing across ranks/ { f = $5; cs = $9; mb = $12 }
        END { sub(/%/, "", f); printf "%.0f %s %s %s %s\n", k ? s / k : first, f ? f : 0, mb ? mb : 0, p, cs ? cs : 0 }' "$log"
}

echo "| config | 1 process x 2 threads, tok/s | 2 processes x 1 thread, tok/s | ratio | time summing | s/update summing | MB/update/rank, sparse | dense | updates |"
echo "|---|---|---|---|---|---|---|---|---|"
for cfg in $CONFIGS; do
    # shellcheck disable=SC2046
    set -- $(run "$cfg" single 2 env)
    one=$1
    # shellcheck disable=SC2046,SC2086
    set -- $(run "$cfg" ranks2 1 $MPIRUN -np 2 -x OMP_WAIT_POLICY)
    u=$(updates "$cfg")
    awk -v one="$one" -v two="$1" -v f="$2" -v mb="$3" -v p="$4" -v cs="$5" -v u="$u" -v cfg="$cfg" 'BEGIN {
        printf "| %s | %d | %d | %.3f | %.1f%% | %.4f | %.3f | %.3f | %d |\n", cfg, one, two, one ? two / one : 0, f, cs, mb, p * 4e-6, u }'
done
echo
for cfg in $CONFIGS; do
    it=20; [ "$cfg" = paper ] && it=5; [ "$QUICK" = 1 ] && it=3
    # shellcheck disable=SC2046,SC2086
    $MPIRUN -np 2 "$OUT/bench_overlap" $(sizes "$cfg") --threads 1 --len 25 --iters "$it" | sed "s/^/$cfg: /"
done
exit 0
