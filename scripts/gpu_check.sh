#!/bin/sh
# gpu_check.sh: the CUDA backend's check, in one call on a machine with a GPU but none of the
# build machine's libraries: every kernel against the CPU backend and the double references,
# forced decoding against training's log-probabilities for every architecture, SMALL and PAPER
# training against the CPU's losses and gradient norms, training and beam decoding speed, and the
# PyTorch reference on the same GPU. Logs and one table (result.md) go to the output folder.
#
#   scripts/gpu_check.sh --bundle DIR      here, after `make`: DIR.tar.gz holds the programs, every
#                                          library they load but the GPU driver and cuBLAS, glibc,
#                                          the data and the reference (DIR is left beside it)
#   DIR/gpu_check.sh --run [--device D] [--out DIR] [--quick]
#                                          there (D: cuda, the default; devsim for the dry run
#                                          here; --quick: the smallest counts, for the dry run)
#
# There: tar xzf gpu-bundle.tar.gz && gpu-bundle/gpu_check.sh --run --out "$OUT". cuBLAS comes
# from the machine (the CUDA toolkit, or the pip wheels PyTorch uses: libcublas.so.13). It exits 0
# when every check passed, 1 when one failed, 2 when it could not run; timings are figures, not
# checks. docs/CUDA.md says what each check decides.
set -u

# ==================================================================== the bundle (build machine)
bundle() {
    dir=$1
    [ -x bin/nmt ] && [ -x build/tests/test_backend ] && [ -x build/tests/test_backend_pair ] ||
        { echo "gpu_check: run make first (bin/nmt, build/tests/test_backend*)" >&2; exit 2; }
    shared=${NMT_SHARED:-../shared}
    rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/lib" "$dir/sys" "$dir/data/m30k" "$dir/data/wmt" "$dir/torch" || exit 2
    cp bin/nmt build/tests/test_backend build/tests/test_backend_pair "$dir/bin/" || exit 2
    cp scripts/gpu_check.sh "$dir/" && cp "$shared/peers/torch/rnnsearch.py" "$dir/torch/" || exit 2
    # every library the programs load; glibc's own apart (sys/), used there only through its loader
    for l in $(ldd "$dir"/bin/* | awk '/=>/ && $3 ~ /^\// {print $3} /ld-linux/ && $1 ~ /^\// {print $1}' | sort -u); do
        case $(basename "$l") in
        ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*) cp -L "$l" "$dir/sys/" ;;
        *) cp -L "$l" "$dir/lib/" ;;
        esac
    done
    ldd "$dir/bin/nmt" | grep -q "not found" && { echo "gpu_check: bin/nmt misses a library" >&2; exit 2; }
    strip --strip-unneeded "$dir"/lib/*.so* 2> /dev/null
    for f in train val test_2016_flickr; do cp "$shared/data/multi30k/tok/$f.en" "$shared/data/multi30k/tok/$f.fr" "$dir/data/m30k/"; done
    cp "$shared/data/wmt_enfr/train.en" "$shared/data/wmt_enfr/train.fr" "$shared/data/wmt_enfr/test.en" "$dir/data/wmt/"
    { echo "commit $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (uncommitted changes)')"
      echo "built $(date -u '+%F %H:%M UTC') on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -n 1)"
      echo "glibc $(getconf GNU_LIBC_VERSION | cut -d' ' -f2)"; } > "$dir/MANIFEST"
    tar czf "$dir.tar.gz" -C "$(dirname "$dir")" "$(basename "$dir")" || exit 2
    echo "gpu_check: $dir.tar.gz, $(du -m "$dir.tar.gz" | cut -f1) MiB ($(du -sm "$dir" | cut -f1) MiB unpacked)"
}

# ==================================================================== the check (GPU machine)
B=$(cd "$(dirname "$0")" && pwd)
DEV=cuda OUT=${OUT:-$PWD/gpu-check-out} QUICK=0 FAILED=0
L=""       # the loader that runs the programs: the bundle's glibc when the machine's is older
LIBS=""

setup() {
    mkdir -p "$OUT/logs" || exit 2
    LOG=$OUT/logs TAB=$OUT/result.md
    LIBS=$B/lib
    if [ "$DEV" = cuda ]; then
        for d in ${CUDA_HOME:-/usr/local/cuda}/lib64 $(python3 -c 'import os, site; print(" ".join(site.getsitepackages()))' 2> /dev/null); do
            c=$(find "$d" -name 'libcublas.so.13*' 2> /dev/null | head -n 1)
            [ -n "$c" ] && { LIBS=$LIBS:$(dirname "$c"); break; }
        done
    fi
    mine=$(sed -n 's/^glibc //p' "$B/MANIFEST")
    theirs=$(getconf GNU_LIBC_VERSION 2> /dev/null | cut -d' ' -f2)
    # GPU_CHECK_LOADER=1: the bundle's glibc whatever the machine's (to test that path)
    if [ "${GPU_CHECK_LOADER:-0}" = 1 ] || [ "$(printf '%s\n%s\n' "$mine" "${theirs:-0}" | sort -V | head -n 1)" != "$mine" ]; then
        L="$B/sys/$(ls "$B/sys" | grep ld-linux)"
        L="$L --library-path $LIBS:$B/sys"
    fi
    export LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # OpenBLAS's kernels named, so that nmt does not restart itself to time them
    grep -q avx512f /proc/cpuinfo && export OPENBLAS_CORETYPE=SkylakeX || export OPENBLAS_CORETYPE=Haswell
    export NMT_BLAS_AUTOTUNE=0 OMP_WAIT_POLICY=PASSIVE
    THREADS=$(nproc)
    {
        echo "# CUDA backend check ($DEV)"
        echo
        sed 's/^/    /' "$B/MANIFEST"
        echo "    ran $(date -u '+%F %H:%M UTC') on $(nproc) cores, glibc ${theirs:-?}${L:+ (the bundle's used)}"
        echo "    $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2> /dev/null || echo 'no nvidia-smi')"
        echo "    cuBLAS from: ${LIBS#"$B/lib"}"
        echo
        echo "| check | result | detail |"
        echo "|---|---|---|"
    } > "$TAB"
}

# a step's time limit: N seconds, or what is left of the whole run's (GPU_CHECK_SECONDS, default
# 450: the call's 8 minutes less unpacking and slack), at least 5
tmo() {
    left=$((DEADLINE - $(date +%s)))
    if [ $left -lt "$1" ]; then echo $((left > 5 ? left : 5)); else echo "$1"; fi
}
row() { echo "| $1 | $2 | $3 |" >> "$TAB"; [ "$2" = FAIL ] && FAILED=1; echo "gpu_check: $1: $2 $3"; }
# seconds since the epoch, with a fraction
now() { date +%s.%N; }

# ---- 1. every kernel: against the double references, then against the CPU op by op
ops() {
    for t in test_backend test_backend_pair; do
        NMT_DEVICE=$DEV timeout "$(tmo 120)" $L "$B/bin/$t" > "$LOG/$t.log" 2>&1
        rc=$? line=$(grep -E "^$t: [0-9]+ passed" "$LOG/$t.log" | tail -n 1)
        if grep -q "^$t: SKIP" "$LOG/$t.log"; then row "$t" FAIL "skipped: $(grep -m1 SKIP "$LOG/$t.log" | cut -c1-150)"
        elif [ $rc -eq 0 ] && [ -n "$line" ]; then row "$t" ok "${line#*: }"
        else row "$t" FAIL "exit $rc, ${line#*: }; first: $(grep -m1 FAIL "$LOG/$t.log" | cut -c1-200)"; fi
    done
}

# the largest relative difference between two columns of numbers (files of equal length), or
# "lines differ"
maxrel() {
    paste "$1" "$2" | awk -v c="$3" -F'\t' 'BEGIN { w = 0 }
        { n = NF / 2; a = $(c); b = $(c + n); d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; if (m < 1) m = 1;
          if (d / m > w) w = d / m } END { if (NR == 0) print "no lines"; else printf "%.3g\n", w }'
}
within() { awk -v x="$1" -v t="$2" 'BEGIN { exit !(x + 0 == x && x <= t) }'; }

# ---- 2. forced decoding fed the reference reproduces training's log-probabilities: one update at
# learning rate 1e-12 (nothing moves) logs the batch's cost from the weights it then saves; nmt score of the same 40
# pairs gives the same NLL per sentence (FertDec's cost adds its own terms: its score is compared
# with the CPU's only)
forced() {
    D=$B/data/m30k
    head -n 40 "$D/val.en" > "$OUT/f.en"; head -n 40 "$D/val.fr" > "$OUT/f.fr"
    for a in rnnsearch rnnenc recatt inputfeed markov locfer fertdec recatt+fertdec; do
        f=$(echo $a | tr + _) ok=1 det=""
        for d in cpu $DEV; do
            m=$OUT/f.$f.$d
            rm -f "$m.nmt" "$m.cost"
            timeout "$(tmo 60)" env NMT_DEVICE=$d $L "$B/bin/nmt" train --src "$OUT/f.en" --tgt "$OUT/f.fr" --arch "$a" --emb 32 \
                --hid 32 --att 32 --maxout 16 --vocab 500 --batch 40 --max-len 80 --optimizer sgd --lr 1e-12 --max-updates 1 \
                --seed 3 --threads 4 --model "$m.nmt" --cost-log "$m.cost" > "$m.log" 2>&1 &&
            timeout "$(tmo 60)" env NMT_DEVICE=$d $L "$B/bin/nmt" score --model "$m.nmt" --src "$OUT/f.en" --tgt "$OUT/f.fr" \
                --threads 4 > "$m.score" 2>> "$m.log" || { ok=0; det="$det $d failed ($(grep -m1 -i error "$m.log" | cut -c1-120))"; }
        done
        if [ $ok = 1 ]; then
            s=$(maxrel "$OUT/f.$f.cpu.score" "$OUT/f.$f.$DEV.score" 1)
            c=$(maxrel "$OUT/f.$f.cpu.cost" "$OUT/f.$f.$DEV.cost" 2)
            nll=$(awk '{ s -= $1 } END { printf "%.9g", s / NR }' "$OUT/f.$f.$DEV.score")
            cost=$(cut -f2 "$OUT/f.$f.$DEV.cost" | head -n 1)
            id=$(awk -v a="$nll" -v b="$cost" 'BEGIN { d = a - b; if (d < 0) d = -d; printf "%.3g", d / (b < 0 ? -b : b) }')
            det="scores vs CPU $s, cost vs CPU $c, mean NLL $nll vs training's cost $cost (rel. $id)"
            within "$s" 1e-4 && within "$c" 1e-4 || ok=0
            case $a in *fertdec*) ;; *) within "$id" 1e-4 || ok=0 ;; esac
        fi
        [ $ok = 1 ] && row "forced decoding = training, $a" ok "$det" || row "forced decoding = training, $a" FAIL "$det"
    done
}

cfg() { # SMALL or PAPER's sizes and data (as make bench's)
    if [ "$1" = small ]; then
        echo "--src $B/data/m30k/train.en --tgt $B/data/m30k/train.fr --emb 256 --hid 256 --att 256 --maxout 256 --vocab 10000 --max-len 50"
    else
        echo "--src $B/data/wmt/train.en --tgt $B/data/wmt/train.fr --emb 620 --hid 1000 --att 1000 --maxout 500 --vocab 30002 --max-len 50"
    fi
}

# train CFG DEVICE UPDATES BATCH NAME: one training run into OUT/NAME.*; prints its seconds
train() {
    rm -f "$OUT/$5.nmt" "$OUT/$5.cost" "$OUT/$5.nmt.ckpt"
    t0=$(now)
    # shellcheck disable=SC2046
    timeout "$(tmo 120)" env NMT_DEVICE=$2 $L "$B/bin/nmt" train $(cfg "$1") --batch "$4" --max-updates "$3" --seed 11 \
        --threads "$THREADS" --save-every 100000 --model "$OUT/$5.nmt" --cost-log "$OUT/$5.cost" > "$LOG/$5.log" 2>&1
    rc=$?
    [ $rc -eq 124 ] && { echo "timed out (the run's time is spent)"; return 1; }
    [ $rc -ne 0 ] && { echo "failed: exit $rc: $(grep -m1 -i error "$LOG/$5.log" | cut -c1-150)"; return 1; }
    awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f\n", b - a }'
}

# ---- 3. SMALL 30 updates and PAPER 5: costs and gradient norms against the CPU's, update by update
losses() {
    for c in small paper; do
        [ $c = small ] && n=30 || n=5
        [ $QUICK = 1 ] && { [ $c = small ] && n=3 || n=1; }
        tc="" td=""
        tc=$(train $c cpu $n 80 "loss-$c-cpu") && td=$(train $c "$DEV" $n 80 "loss-$c-$DEV") || {
            row "$c training, $n updates" FAIL "$tc $td"; continue; }
        cost=$(maxrel "$OUT/loss-$c-cpu.cost" "$OUT/loss-$c-$DEV.cost" 2)
        norm=$(maxrel "$OUT/loss-$c-cpu.cost" "$OUT/loss-$c-$DEV.cost" 3)
        last=$(tail -n 1 "$OUT/loss-$c-$DEV.cost" | cut -f2)
        det="largest relative difference: cost $cost, gradient norm $norm; last cost $last ($n updates: CPU ${tc} s, $DEV ${td} s)"
        within "$cost" 1e-3 && within "$norm" 1e-3 && row "$c training vs CPU" ok "$det" || row "$c training vs CPU" FAIL "$det"
    done
}

# ---- 4. speed: seconds per update from two runs' difference (start-up and vocabularies cancel)
speed() {
    for c in small paper; do
        for b in 80 512; do
            [ $QUICK = 1 ] && [ $c$b = paper512 ] && continue # minutes on a CPU
            if [ $QUICK = 1 ]; then n1=1 n2=2; elif [ $c = small ]; then n1=5 n2=45; else n1=2 n2=12; fi
            t1="" t2=""
            t1=$(train $c "$DEV" $n1 $b "speed-$c-$b") && t2=$(train $c "$DEV" $n2 $b "speed-$c-$b") ||
                { row "speed: $c training, batch $b" FAIL "$t1 $t2"; continue; }
            row "speed: $c training, batch $b" "$(awk -v a="$t1" -v b="$t2" -v n=$((n2 - n1)) -v s="$b" \
                'BEGIN { u = (b - a) / n; printf "%.1f ms/update", 1000 * u }')" \
                "$(awk -v a="$t1" -v b="$t2" -v n=$((n2 - n1)) -v s="$b" 'BEGIN { printf "%.0f sentences/s", s * n / (b - a) }') ($n1 and $n2 updates: $t1 s, $t2 s)"
        done
        # decoding with the loss check's model (barely trained: long outputs, a pessimistic figure)
        m=$OUT/loss-$c-cpu.nmt
        [ -s "$m" ] || continue
        [ $c = small ] && src=$B/data/m30k/test_2016_flickr.en || src=$B/data/wmt/test.en
        if [ $QUICK = 1 ]; then k=10; elif [ $c = small ]; then k=500; else k=100; fi
        head -n $k "$src" > "$OUT/dec.src"
        for beam in 1 12; do
            t0=$(now)
            if timeout "$(tmo 90)" env NMT_DEVICE=$DEV $L "$B/bin/nmt" translate --model "$m" --beam $beam --threads "$THREADS" \
                < "$OUT/dec.src" > "$OUT/dec-$c-$beam.out" 2> "$LOG/dec-$c-$beam.log"; then
                row "speed: $c beam $beam" "$(awk -v a="$t0" -v b="$(now)" -v k=$k 'BEGIN { printf "%.1f sentences/s", k / (b - a) }')" \
                    "$k sentences, $(wc -w < "$OUT/dec-$c-$beam.out") words out"
            else row "speed: $c beam $beam" FAIL "exit $? (124: timed out) $(grep -m1 -i error "$LOG/dec-$c-$beam.log" | cut -c1-150)"; fi
        done
    done
}

# ---- 5. the PyTorch reference on the same device and data (its bench: training tokens/s,
# decoding sentences/s); the cuda torch that machine has, or the CPU's for the dry run
reference() {
    tdev=$DEV
    [ "$DEV" = cuda ] || tdev=cpu
    for c in small paper; do
        [ $QUICK = 1 ] && [ $c = paper ] && continue # minutes on a CPU
        if [ $c = small ]; then sz="--emb 256 --hid 256 --att 256 --maxout 256 --vocab 10000" d=$B/data/m30k tst=test_2016_flickr
        else sz="--emb 620 --hid 1000 --att 1000 --maxout 500 --vocab 30002" d=$B/data/wmt tst=test; fi
        [ $QUICK = 1 ] && n="--train-updates 2 --warmup 1 --dec-sents 5 --dec-warmup 1 --beams 1" || n="--train-updates 40 --warmup 5 --dec-sents 100 --beams 1 12"
        # shellcheck disable=SC2086
        # without the bundle's libraries (its libstdc++ is older than the one torch may need)
        if timeout "$(tmo 150)" env -u LD_LIBRARY_PATH python3 "$B/torch/rnnsearch.py" bench --device "$tdev" --src "$d/train.en" --tgt "$d/train.fr" \
            --test-src "$d/$tst.en" $sz $n --threads "$THREADS" > "$LOG/torch-$c.log" 2>&1; then
            row "reference (PyTorch, $tdev): $c" ok "$(grep -iE 'tok/s|tokens/s|sent/s|sents/s' "$LOG/torch-$c.log" | tr '\n' ';' | cut -c1-300)"
        else row "reference (PyTorch, $tdev): $c" "not run" "$(tail -n 2 "$LOG/torch-$c.log" | tr '\n' ' ' | cut -c1-200)"; fi
    done
}

run() {
    DEADLINE=$(($(date +%s) + ${GPU_CHECK_SECONDS:-450}))
    setup
    started=$(now)
    ops
    forced
    losses
    speed
    reference
    echo >> "$TAB"
    awk -v a="$started" -v b="$(now)" 'BEGIN { printf "%.0f s in all\n", b - a }' >> "$TAB"
    cat "$TAB"
    exit $FAILED
}

case ${1:-} in
--bundle) [ $# -eq 2 ] || { echo "usage: scripts/gpu_check.sh --bundle DIR" >&2; exit 2; }; bundle "$2" ;;
--run)
    shift
    while [ $# -gt 0 ]; do
        case $1 in
        --device) DEV=$2; shift ;;
        --out) OUT=$2; shift ;;
        --quick) QUICK=1 ;;
        *) echo "gpu_check: unknown option $1" >&2; exit 2 ;;
        esac
        shift
    done
    run ;;
*) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
