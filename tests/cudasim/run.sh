#!/bin/sh
# run.sh: what `make test-cuda-sim` checks on the CUDA emulation (docs/CUDA.md): the kernel tests
# on the emulated GPU under three warp schedules and on device 1, a forced decoding and a
# 30-update training against the CPU's within scripts/gpu_check.sh's tolerances under two
# schedules, the host side's faults of the review, and the injected bugs each caught.
# usage: run.sh SIMDIR BUILD   (ends with "cuda_sim: N passed, M failed")
D=${1:-build/cudasim}
BUILD=${2:-build}
SHARED=${NMT_SHARED:-../shared}
NMT=$D/nmt
export ASAN_OPTIONS=detect_leaks=0 NMT_BLAS_AUTOTUNE=0
export LD_LIBRARY_PATH="$D${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
T=$(mktemp -d "${TMPDIR:-/tmp}/cuda_sim.XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "cuda_sim: FAIL: $*"; fail=$((fail + 1)); }
first_err() { grep -m1 -E 'cudasim:|FAIL|rror|nmt: cuda' "$1" | cut -c1-200; }

# ---- 1. the kernel tests: every kernel against double references and against the CPU ----
kernels() { # ORDER DEVICE
    for t in test_backend test_backend_pair; do
        NMT_CUDASIM_ORDER=$1 NMT_DEVICE=$2 "$D/$t" > "$T/out" 2>&1
        rc=$?
        if [ $rc -eq 0 ] && grep -qE "^$t: [1-9][0-9]* passed, 0 failed$" "$T/out"; then ok
        else bad "$t on $2, $1 order: exit $rc: $(first_err "$T/out")"; fi
    done
}
for order in forward reverse random:7; do kernels $order cuda; done
kernels random:3 cuda:1

# ---- 2. forced decoding and training against the CPU (gpu_check.sh's tolerances) ----
maxrel() { # FILE1 FILE2 COLUMN: the largest relative difference
    paste "$1" "$2" | awk -v c="$3" -F'\t' 'BEGIN { w = 0 }
        { n = NF / 2; a = $(c); b = $(c + n); d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; if (m < 1) m = 1;
          if (d / m > w) w = d / m } END { if (NR == 0) print "no lines"; else printf "%.3g\n", w }'
}
within() { awk -v x="$1" -v t="$2" 'BEGIN { exit !(x + 0 == x && x <= t) }'; }
TINY="--emb 24 --hid 24 --att 24 --maxout 12 --vocab 300 --max-len 60 --seed 3 --threads 2"
head -n 16 "$SHARED/data/multi30k/tok/val.en" > "$T/f.en"
head -n 16 "$SHARED/data/multi30k/tok/val.fr" > "$T/f.fr"
# forced DEVICE ORDER: one update at learning rate 1e-12 logs the cost of the weights it saves;
# nmt score of the same pairs. Markov: attention with the ξ window as well
# shellcheck disable=SC2086
forced() {
    m=$T/forced.$1.$(echo "$2" | tr : _)
    NMT_CUDASIM_ORDER=$2 NMT_DEVICE=$1 $NMT train --src "$T/f.en" --tgt "$T/f.fr" --arch markov $TINY --batch 16 \
        --optimizer sgd --lr 1e-12 --max-updates 1 --model "$m.nmt" --cost-log "$m.cost" > "$m.log" 2>&1 &&
    NMT_CUDASIM_ORDER=$2 NMT_DEVICE=$1 $NMT score --model "$m.nmt" --src "$T/f.en" --tgt "$T/f.fr" --threads 2 \
        > "$m.score" 2>> "$m.log"
}
# training DEVICE ORDER: 30 updates of the default optimizer (as gpu_check.sh's runs)
# shellcheck disable=SC2086
training() {
    m=$T/train.$1.$(echo "$2" | tr : _)
    NMT_CUDASIM_ORDER=$2 NMT_DEVICE=$1 $NMT train --src "$T/f.en" --tgt "$T/f.fr" $TINY --batch 8 \
        --max-updates 30 --save-every 100000 --model "$m.nmt" --cost-log "$m.cost" > "$m.log" 2>&1
}
forced cpu forward || bad "forced decoding on the CPU: $(first_err "$T/forced.cpu.forward.log")"
training cpu forward || bad "training on the CPU: $(first_err "$T/train.cpu.forward.log")"
for order in forward random:11; do
    o=$(echo "$order" | tr : _)
    if forced cuda "$order"; then
        c=$T/forced.cpu.forward m=$T/forced.cuda.$o
        s=$(maxrel "$c.score" "$m.score" 1) k=$(maxrel "$c.cost" "$m.cost" 2)
        nll=$(awk '{ s -= $1 } END { printf "%.9g", s / NR }' "$m.score")
        id=$(awk -v a="$nll" -v b="$(cut -f2 "$m.cost" | head -n 1)" 'BEGIN { d = (a - b) / b; printf "%.3g", d < 0 ? -d : d }')
        if within "$s" 1e-4 && within "$k" 1e-4 && within "$id" 1e-4; then ok
        else bad "forced decoding, $order order: scores vs CPU $s, cost vs CPU $k, NLL vs cost $id"; fi
    else bad "forced decoding, $order order: $(first_err "$T/forced.cuda.$o.log")"; fi
    if training cuda "$order"; then
        c=$T/train.cpu.forward.cost m=$T/train.cuda.$o.cost
        k=$(maxrel "$c" "$m" 2) g=$(maxrel "$c" "$m" 3) n=$(wc -l < "$m")
        if [ "$n" -eq 30 ] && within "$k" 1e-3 && within "$g" 1e-3; then ok
        else bad "training, $order order: $n updates, cost vs CPU $k, gradient norm vs CPU $g"; fi
    else bad "training, $order order: $(first_err "$T/train.cuda.$o.log")"; fi
done

# ---- 3. the host side: a new thread's first allocation on device 1, threads that end, the
# norm without device memory (test_cuda_host); nmt serve's workers on device 1; a failed product
# names cuBLAS's status ----
NMT_DEVICE=cuda:1 "$D/test_cuda_host" > "$T/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -qE '^test_cuda_host: [1-9][0-9]* passed, 0 failed$' "$T/out"; then ok
else bad "test_cuda_host on cuda:1: exit $rc: $(first_err "$T/out")"; fi
# nmt serve on device 1, two workers: each worker's first call is an allocation
# shellcheck disable=SC1091
. tests/cli/lib_serve.sh
# shellcheck disable=SC2034 # serve_start runs it
NMT_BIN=$NMT
if serve_start "$T/serve.log" "$T/train.cpu.forward.nmt" --device cuda:1 --workers 2; then
    r=$(python3 tests/cli/serve_client.py req "$PORT" POST /translate application/json '{"text": "a man is riding a bike ."}' 2>&1)
    kill "$PID" 2> /dev/null
    wait "$PID" 2> /dev/null
    case $r in 200*) ok ;; *) bad "nmt serve --device cuda:1 --workers 2: $(first_err "$T/serve.log")" ;; esac
else bad "nmt serve --device cuda:1 did not start: $(first_err "$T/serve.log")"; fi
NMT_CUDASIM_CUBLAS_FAIL=2 NMT_DEVICE=cuda "$D/test_backend" > "$T/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q 'cublasSgemm.*CUBLAS_STATUS_EXECUTION_FAILED' "$T/out"; then ok
else bad "a failed cublasSgemm: exit $rc: $(grep -m1 'nmt: cuda' "$T/out")"; fi

# ---- 4. injected bugs: each kernel file with one bug, test_backend_pair linked with it, run ----
# shellcheck disable=SC1091
. "$D/build.env"
# inject NAME EDITED COMPILED SED EXPECT [TEST DEVICE]: a copy of EDITED (a file of
# src/backend/cuda) gets the sed expression and the launch rewrite, COMPILED.cu is rebuilt with it,
# the test program's object TEST (test_backend_pair's by default) linked with it and run on
# DEVICE (cuda), and the output must match the pattern EXPECT
inject() {
    b=$T/bug-$1
    mkdir -p "$b/src/backend/cuda"
    cp "$D/src/backend/cuda/"* "$b/src/backend/cuda/"
    sed -e "$4" "src/backend/cuda/$2" > "$b/$2"
    if cmp -s "src/backend/cuda/$2" "$b/$2"; then bad "$1: the injection no longer applies to $2"; return; fi
    python3 tests/cudasim/rewrite.py "$b/$2" "$b/src/backend/cuda/$2"
    objs=""
    for o in "$D"/kern/*.o; do [ "$o" = "$D/kern/$3.o" ] || objs="$objs $o"; done
    # shellcheck disable=SC2086,SC2015
    $SIM_CXX $SIM_KFLAGS -I"$b/src" -Isrc -Iinclude -c "$b/src/backend/cuda/$3.cu" -o "$b/$3.o" > "$b/build.log" 2>&1 &&
    $SIM_CXX -o "$b/test" "${6:-$BUILD/tests/test_backend_pair.o}" -Wl,-u,cuda_backend_open $objs "$b/$3.o" $SIM_TAIL \
        >> "$b/build.log" 2>&1 || { bad "$1: does not build: $(grep -m1 error "$b/build.log")"; return; }
    NMT_DEVICE=${7:-cuda} "$b/test" > "$b/out" 2>&1
    rc=$?
    if [ $rc -ne 0 ] && grep -qE "$5" "$b/out"; then ok
    else bad "$1: exit $rc, expected /$5/: $(first_err "$b/out")"; fi
}
FAILED='^test_backend_pair: [0-9]+ passed, [1-9][0-9]* failed'
inject attn-barrier rnn.cu rnn '0,/__syncthreads();/s//(void)0;/' "$FAILED"
inject attn-back-one-half rnn.cu rnn 's/\*sj = sdp + (j \& 1) \* na;/*sj = sdp;/' "$FAILED"
inject topk-barrier topk.cu topk '/total += tile;/{n;s/__syncthreads();/(void)0;/}' "$FAILED"
inject softmax-500 output.cu output 's/softmax_nll_kernel<<<N, CU_THREADS \* 2,/softmax_nll_kernel<<<N, 500,/' \
    'cudasim: kernel softmax_nll_kernel.*a partial warp'
inject return-before-barrier rnn.cu rnn '/^__global__ static void attn_forward_kernel/,/^}/s/^    real mx = -INFINITY;/    if (threadIdx.x >= 224) return;\n&/' \
    'cudasim: kernel attn_forward_kernel.*(has exited|never reach)'
inject colsum-off-by-one rows.cu rows 's/if (j >= N) return;/if (j > N) return;/' \
    'AddressSanitizer: heap-buffer-overflow.*|READ of size 4'
inject block-too-big output.cu output 's/softmax_nll_kernel<<<N, CU_THREADS \* 2,/softmax_nll_kernel<<<N, CU_THREADS * 8,/' \
    'launch of softmax_nll_kernel: a block of 2048'
inject scatter-order output.cu output 's/    for (int i = 0; i < n; i++)$/    for (int i = n - 1; i >= 0; i--)/' "$FAILED"
inject gemm-ld-swapped cuda.cu cuda 's/&one, B, ldb, A, lda,/\&one, B, lda, A, ldb,/' \
    "CUBLAS_STATUS_INVALID_VALUE|cudasim: cublasSgemm|$FAILED"
inject batched-heads transformer.cu transformer 's/ + k \* b\.ib;/;/' "$FAILED"
inject layer-norm-partial-warp transformer.cu transformer 's/layer_norm_kernel<<<R, CU_THREADS,/layer_norm_kernel<<<R, 250,/' \
    'cudasim: kernel layer_norm_kernel.*a partial warp'
HOST_FAILED='^test_cuda_host: [0-9]+ passed, [1-9][0-9]* failed'
inject staging-reused-early cuda.cu cuda 's/ok("copy_in", cudaEventSynchronize(t->done\[k\]));/(void)0;/' \
    "$HOST_FAILED" "$D/test_cuda_host.o" cuda:1
inject loop-without-wait cuda.cu cuda '0,/ok("parallel_for", cudaStreamSynchronize(cu_stream()));/s//(void)0;/' \
    "$HOST_FAILED" "$D/test_cuda_host.o" cuda:1
inject mask-disagree cuda_int.h topk 's/fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o))/fmaxf(x, __shfl_xor_sync(threadIdx.x % 2 ? 0xffffffffu : 0x7fffffffu, x, o))/' \
    'cudasim: kernel topk_kernel.*(disagree|leaves out)'

echo "cuda_sim: $pass passed, $fail failed"
[ $fail -eq 0 ]
