#!/bin/sh
# bench.sh: `make bench`: training speed (target tokens/s) and peak memory of the C implementation
# side by side with the PyTorch reference (same data, sizes and thread count, runs alternating),
# the machine's SGEMM peak, a per-phase profile of C training, then decoding speed of both on the
# same models, of an ensemble of two copies of the SMALL one, and of those models in int8, bf16 and
# with a lexical shortlist (BENCH_DECODE=0 skips the decoding parts). Training runs in FP32 and,
# where the CPU has AVX512_BF16, in bf16 (--precision bf16; BENCH_BF16=0 skips it), each round
# running both one after the other.
#
# Run from the repository root. Environment: NMT_SHARED (../shared), BENCH_THREADS (2),
# BENCH_ROUNDS (runs per side and configuration: 3 SMALL, 2 PAPER), BENCH_CONFIGS ("small paper"),
# BENCH_TRANSFORMER (1: end with the Transformer against PyTorch, bench/bench_transformer.sh),
# BENCH_EXTRA (1: also time C with OpenBLAS's AVX-512 kernels forced, and with NMT_GEMM=onednn), BENCH_QUICK (1: a smoke
# test with a few updates, figures meaningless). It is a benchmark, not a test: it exits 0
# whatever it measures, and non-zero only when the benchmark programs cannot be built.
set -u

SHARED="${NMT_SHARED:-../shared}"
if ! SHARED=$(cd "$SHARED" 2>/dev/null && pwd); then
    echo "bench: shared folder ${NMT_SHARED:-../shared} not found (set NMT_SHARED)" >&2
    exit 1
fi
T="${BENCH_THREADS:-2}"
ROUNDS="${BENCH_ROUNDS:-}"
CONFIGS="${BENCH_CONFIGS:-small paper}"
EXTRA="${BENCH_EXTRA:-1}"
BF16="${BENCH_BF16:-1}"
QUICK="${BENCH_QUICK:-0}"
OUT=build/bench
BLASDIR=/usr/lib/x86_64-linux-gnu/openblas-openmp
BLASINC=/usr/include/x86_64-linux-gnu/openblas-openmp
# The reference must do its products in OpenBLAS (pthread build), not the reference BLAS that
# is 40 times slower; putting that directory first on the library path makes torch's
# libblas.so.3 resolve there whatever update-alternatives points to.
REF_BLAS=/usr/lib/x86_64-linux-gnu/openblas-pthread
REF="$SHARED/peers/torch/rnnsearch.py"
PY=/usr/bin/python3
mkdir -p "$OUT"

# Thread counts are set per run, the same for both sides. OPENBLAS_CORETYPE (which kernels
# OpenBLAS uses) is inherited, or set below: both sides run the same kernels.
unset OPENBLAS_NUM_THREADS GOTO_NUM_THREADS OMP_NUM_THREADS
# Each side runs with its own OpenMP wait policy, as a user runs it: nmt with libgomp's default
# (spin briefly, then sleep; it throttles itself when threads outnumber cores), the reference
# with the PASSIVE it sets for itself (rnnsearch.py, unless the variable is set).
unset OMP_WAIT_POLICY
. bench/kernels.sh

# ------------------------------------------------------------------ packages
missing_pkgs() {
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || printf ' %s' "$p"
    done
}
apt_install() { # no-op when everything is present
    miss=$(missing_pkgs "$@")
    [ -z "$miss" ] && return 0
    echo "bench: installing:$miss"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -qq >/dev/null 2>&1
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $miss >/dev/null 2>&1
}
apt_install gcc libc6-dev libopenblas-openmp-dev libcjson-dev zlib1g-dev time || echo "bench: could not install the C build dependencies" >&2
HAVE_REF=1
REF_WHY=""
if ! apt_install python3-torch python3-numpy libopenblas0-pthread; then
    HAVE_REF=0; REF_WHY="apt-get could not install python3-torch python3-numpy libopenblas0-pthread"
elif [ ! -f "$REF" ]; then
    HAVE_REF=0; REF_WHY="$REF not found"
elif ! LD_LIBRARY_PATH=$REF_BLAS $PY -c "import torch, sys; sys.exit(0 if any('openblas-pthread' in l for l in open('/proc/self/maps')) else 1)" 2>/dev/null; then
    HAVE_REF=0; REF_WHY="torch does not import, or does not load OpenBLAS from $REF_BLAS"
fi

# ------------------------------------------------------------------ build
# Every core library source (not eval/, viz/ or serve/) compiled with the Makefile's flags into a private archive under
# build/bench/ (the linker takes only the modules training needs), so that the benchmark
# depends neither on a list of modules that goes stale nor on what else lies in build/.
CFLAGS="-std=c11 -D_GNU_SOURCE -fno-math-errno -O3 -g -mavx2 -mfma -fopenmp -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Iinclude -Isrc -I$BLASINC"
LDFLAGS="-fopenmp -L$BLASDIR -Wl,-rpath,$BLASDIR"
LDLIBS="-lsentencepiece_train -lsentencepiece -lstdc++ -lopenblas -ldnnl -lcjson -lz -lm"
mkdir -p "$OUT/obj"
rm -f "$OUT"/obj/*.o "$OUT/libnmt-bench.a"
# shellcheck disable=SC2086,SC2016
# (the server's sources are the serving library's, not the core's; spm.cc is the core's one C++ file)
if ! g++ -std=c++17 -O3 -g -Wall -Wextra -Werror -Iinclude -Isrc -c src/text/spm.cc -o "$OUT/obj/src_text_spm.o" ||
   ! find src -name '*.c' -not -path 'src/eval/*' -not -path 'src/viz/*' -not -path 'src/serve/*' | sort | xargs -P "$(nproc)" -I{} sh -c 'gcc '"$CFLAGS"' -c "$1" -o "$2/obj/$(echo "$1" | tr / _ | sed s/.c$//).o"' _ {} "$OUT" ||
   ! ar rcs "$OUT/libnmt-bench.a" "$OUT"/obj/*.o ||
   ! gcc $CFLAGS bench/bench_train.c "$OUT/libnmt-bench.a" $LDFLAGS $LDLIBS -o "$OUT/bench_train" ||
   ! gcc $CFLAGS bench/sgemm.c "$OUT/libnmt-bench.a" $LDFLAGS $LDLIBS -o "$OUT/sgemm"; then
    echo "bench: building the benchmark programs failed" >&2
    exit 1
fi

# ------------------------------------------------------------------ configurations
M30K="$SHARED/data/multi30k/tok"
WMT="$SHARED/data/wmt_enfr"
if [ "$QUICK" = 1 ]; then
    SMALL_RUN="--warmup 1 --updates 3"; PAPER_RUN="--warmup 0 --updates 1"; ROUNDS=${ROUNDS:-1}; SGEMM_REPS=2
else
    # PAPER: 16 updates, not the 8 RUNS.md used: the first 8 batches of either order can be far
    # from the corpus's mean batch (1,721 target tokens), and the FLOPs per token with them
    SMALL_RUN="--warmup 3 --updates 40"; PAPER_RUN="--warmup 2 --updates 16"; SGEMM_REPS=5
fi
# data and sizes, in the option spelling both programs share
cfg_args() {
    case "$1" in
        small) echo "--src $M30K/train.en --tgt $M30K/train.fr --emb 256 --hid 256 --att 256 --maxout 256 --vocab 10000 --max-len 50" ;;
        paper) echo "--src $WMT/train.en --tgt $WMT/train.fr --emb 620 --hid 1000 --att 1000 --maxout 500 --vocab 30002 --max-len 50" ;;
    esac
}
run_args() { [ "$1" = small ] && echo "$SMALL_RUN" || echo "$PAPER_RUN"; }
# SMALL runs are short and the reference's speed varies by +-15% from run to run: one more round
rounds() { if [ -n "$ROUNDS" ]; then echo "$ROUNDS"; elif [ "$1" = small ]; then echo 3; else echo 2; fi; }

# config impl run tok_s sec_update tok_batch rss_mib mflop_tok, then (C) seconds per update of
# the 8 booked phases, optimizer and other, executed GFLOP per update of the 8 phases, and the
# FLOPs per target token over the whole corpus, the peak RSS before the worst-case batch, and
# the forward FLOPs per source position, target position, pair and sentence (29-32).
# Reference rows: config torch run tok_s sec_update tok_batch rss_mib mflop_tok (from its own
# token counts with the C side's FLOP model: tgt and src tokens are exact, the pair term is
# estimated from the means, which is 0.03% of the total)
RES="$OUT/train-results.tsv"
: > "$RES"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
# Share of the machine busy over 2 seconds before the measurements (from /proc/stat: the
# cpu line's user..guest_nice, idle and iowait taken as idle), to flag a loaded machine.
STAT0=$(head -1 /proc/stat); sleep 2; STAT1=$(head -1 /proc/stat)
BUSY=$(echo "$STAT0 $STAT1" | awk '{ for (i = 2; i <= 9; i++) { a += $i; b += $(i + 11) }
    idle = ($16 + $17) - ($5 + $6); print (b > a) ? int(100 * (1 - idle / (b - a)) + 0.5) : 0 }')

# C: peak RSS from GNU time, the same meter as the reference's
run_c() { # config round tag [VAR=value...]; a tag ending in -bf16 trains with --precision bf16
    cfg=$1; r=$2; tag=$3; shift 3
    log="$OUT/train-$cfg-$tag-$r.log"
    prec=fp32
    case $tag in *-bf16) prec=bf16 ;; esac
    # shellcheck disable=SC2046
    env "$@" /usr/bin/time -f 'MAXRSS_KB %M' -o "$log.time" $OUT/bench_train $(cfg_args "$cfg") $(run_args "$cfg") --threads "$T" \
        --precision $prec > "$log" 2>&1
    rc=$?
    res=$(grep '^RESULT' "$log")
    if [ $rc -ne 0 ] || [ -z "$res" ]; then echo "bench: $tag $cfg run $r failed (see $log): $(tail -n 1 "$log")"; return; fi
    echo "$res" | awk -v c="$cfg" -v t="$tag" -v r="$r" -v kb="$(awk '/MAXRSS_KB/ {print $2}' "$log.time")" '{
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        printf "%s\t%s\t%s\t%s\t%s\t%.0f\t%.1f\t%s", c, t, r, v["tok_s"], v["sec_update"], v["tok"] / v["updates"], kb / 1024, v["mflop_tok"]
        n = split("enc_fwd enc_bwd att_fwd att_bwd dec_fwd dec_bwd out_fwd out_bwd optim other fl_enc_fwd fl_enc_bwd fl_att_fwd fl_att_bwd fl_dec_fwd fl_dec_bwd fl_out_fwd fl_out_bwd mflop_tok_corpus rss_timed_mib f_src f_tgt f_pair f_sent", k, " ")
        for (i = 1; i <= n; i++) printf "\t%s", v[k[i]]
        printf "\n" }' >> "$RES"
    printf '  %-5s %-10s run %s: %s\n' "$cfg" "$tag" "$r" "$(grep '^TRAIN' "$log" | sed 's/^TRAIN //')"
}

run_ref() { # config round
    cfg=$1; r=$2
    log="$OUT/train-$cfg-torch-$r.log"
    # shellcheck disable=SC2046
    LD_LIBRARY_PATH=$REF_BLAS /usr/bin/time -f 'MAXRSS_KB %M' -o "$log.time" $PY "$REF" bench $(cfg_args "$cfg") \
        $(run_args "$cfg" | sed 's/--updates/--train-updates/') --threads "$T" --dec-sents 0 > "$log" 2>&1
    rc=$?
    line=$(grep '^TRAIN' "$log")
    if [ $rc -ne 0 ] || [ -z "$line" ]; then echo "bench: reference $cfg run $r failed (see $log)"; return; fi
    # "TRAIN  N updates (...): X tgt tok/s (incl EOS), Y src+tgt tok/s, Z s/100 updates, W tgt tok/batch | ..."
    # the FLOP model of this configuration, from the C run of the same round
    fm=$(awk -F'\t' -v c="$cfg" '$1 == c && $2 == "C" {m = $29 " " $30 " " $31 " " $32} END {print m}' "$RES")
    echo "$line" | awk -v c="$cfg" -v r="$r" -v kb="$(awk '/MAXRSS_KB/ {print $2}' "$log.time")" -v fm="$fm" '{
        for (i = 1; i <= NF; i++) {
            if ($(i+1) == "tgt" && $(i+2) == "tok/s") tps = $i
            if ($(i+1) == "src+tgt" && $(i+2) ~ /^tok\/s/) stps = $i
            if ($(i+1) == "s/100") spu = $i / 100
            if ($(i+1) == "tgt" && $(i+2) == "tok/batch") tpb = $i
            if ($(i+1) == "updates" && upd == "") upd = $i
            if ($(i) == "batch") { b = $(i+1); sub(":", "", b) }
        }
        mf = "-"
        if (split(fm, f, " ") == 4 && tps > 0 && upd > 0 && b > 0) {
            tgt = tpb * upd; src = tgt * (stps - tps) / tps; ns = b * upd
            mf = sprintf("%.3f", 3 * (src * f[1] + tgt * f[2] + (src / ns) * (tgt / ns) * ns * f[3] + ns * f[4]) / tgt / 1e6)
        }
        printf "%s\ttorch\t%s\t%s\t%s\t%s\t%.1f\t%s\n", c, r, tps, spu, tpb, kb / 1024, mf }' >> "$RES"
    printf '  %-5s %-10s run %s: %s\n' "$cfg" "reference" "$r" "$(echo "$line" | sed 's/^TRAIN *//; s/ | load.*//')"
}

# ------------------------------------------------------------------ measure
echo "== make bench: training speed =="
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; load average at start $LOAD0"
echo "machine busy before the runs: $BUSY% of its cores"
[ "$BUSY" -gt 10 ] && echo "WARNING: other work is running on this machine: timings are not reliable"
[ "$QUICK" = 1 ] && echo "WARNING: BENCH_QUICK=1: a smoke test, the figures mean nothing"
if [ $HAVE_REF = 0 ]; then
    echo "REFERENCE NOT AVAILABLE: $REF_WHY; measuring the C side only"
fi
echo "threads $T, OMP_WAIT_POLICY: C libgomp default, reference PASSIVE (its own), OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset: auto-detected)}; C $OUT/bench_train, reference $REF (libblas from $REF_BLAS)"

SG=$($OUT/sgemm 2048 $SGEMM_REPS 1 "$T")
echo "$SG" | sed 's/^/  /'
PEAK1=$(echo "$SG" | awk '/threads=1 / {sub("gflops=", "", $3); print $3}')
PEAKT=$(echo "$SG" | awk -v t="$T" '$2 == "threads=" t {sub("gflops=", "", $3); print $3}')
CORE=$(echo "$SG" | awk '/^#/ {print $(NF-1)}')
if [ "$EXTRA" = 1 ]; then
    # Where the environment pins OpenBLAS to its AVX2 (Haswell) kernels, this shows what its
    # AVX-512 kernels would give on the same machine (C side only, to keep the run short).
    SGX=$(env OPENBLAS_CORETYPE=SkylakeX $OUT/sgemm 2048 $SGEMM_REPS 1 "$T")
    echo "$SGX" | sed 's/^/  /'
    PEAKX=$(echo "$SGX" | awk -v t="$T" '$2 == "threads=" t {sub("gflops=", "", $3); print $3}')
fi

for cfg in $CONFIGS; do
    r=1
    while [ $r -le "$(rounds "$cfg")" ]; do
        run_c "$cfg" "$r" C
        if [ "$BF16" = 1 ]; then run_c "$cfg" "$r" C-bf16; fi
        # the FP32 products on oneDNN's matmul (the candidate nmt's timing may choose), beside each C run
        if [ "$EXTRA" = 1 ]; then run_c "$cfg" "$r" C-onednn NMT_GEMM=onednn; fi
        if [ $HAVE_REF = 1 ]; then run_ref "$cfg" "$r"; fi
        r=$((r + 1))
    done
    if [ "$EXTRA" = 1 ]; then run_c "$cfg" 1 C-avx512 OPENBLAS_CORETYPE=SkylakeX; fi
done

# ------------------------------------------------------------------ report
echo
echo "SGEMM 2048x2048, best of $SGEMM_REPS, OpenBLAS OpenMP build ($CORE kernels): 1 thread ${PEAK1:-?} GFLOP/s, $T threads ${PEAKT:-?} GFLOP/s${PEAKX:+; with OPENBLAS_CORETYPE=SkylakeX (AVX-512) $PEAKX GFLOP/s on $T threads}"
echo
awk -F'\t' -v peak="${PEAKT:-0}" -v havref=$HAVE_REF '
    { k = $1 SUBSEP $2; n[k]++; tps[k] = tps[k] (n[k] > 1 ? " / " : "") sprintf("%.0f", $4); sum[k] += $4
      if ($7 > rss[k]) rss[k] = $7; if ($28 > rsst[k]) rsst[k] = $28; if ($2 == "C") { fl[$1] = fl[$1] + $8; flc[$1] = $27 } if ($2 == "torch" && $8 != "-") { gr[$1] += $4 * $8 / 1000; ngr[$1]++ } seen[$1] = 1; if (!($1 in order)) { order[$1] = ++nc; name[nc] = $1 } }
    END {
        printf "%-6s %-22s %-22s %-13s %-7s %-7s %-11s %-11s %s\n", "config", "C tok/s (runs)", "reference tok/s", "ratio C/ref", "C %pk", "ref %pk", "C RSS MiB", "ref RSS MiB", "MFLOP/tok (corpus)"
        for (i = 1; i <= nc; i++) {
            c = name[i]; kc = c SUBSEP "C"; kr = c SUBSEP "torch"; ka = c SUBSEP "C-avx512"; kb = c SUBSEP "C-bf16"; ko = c SUBSEP "C-onednn"
            mc = n[kc] ? sum[kc] / n[kc] : 0; mr = n[kr] ? sum[kr] / n[kr] : 0; f = n[kc] ? fl[c] / n[kc] : 0
            printf "%-6s %-22s %-22s %-13s %-7s %-7s %-11s %-11s %.1f (%.1f)\n", toupper(c), n[kc] ? tps[kc] : "-", n[kr] ? tps[kr] : (havref ? "failed" : "n/a"),
                (mc && mr) ? sprintf("%.2f", mc / mr) : "-", (mc && peak) ? sprintf("%.0f%%", 100 * mc * f / 1000 / peak) : "-",
                (ngr[c] && peak) ? sprintf("%.0f%%", 100 * gr[c] / ngr[c] / peak) : "-", n[kc] ? sprintf("%.0f/%.0f", rsst[kc], rss[kc]) : "-", n[kr] ? sprintf("%.0f", rss[kr]) : "-", f, flc[c]
            if (n[kb]) printf "%-6s %-22s (C with --precision bf16, run beside each C run; %.2f x the FP32 C runs%s)\n", "", tps[kb], sum[kb] / n[kb] / mc,
                               n[kr] ? sprintf(", %.2f x the reference", sum[kb] / n[kb] / mr) : ""
            if (n[ko]) printf "%-6s %-22s (C with NMT_GEMM=onednn, run beside each C run; %.2f x the default C runs, %.0f%% of the peak)\n", "", tps[ko], sum[ko] / n[ko] / mc,
                               peak ? 100 * sum[ko] / n[ko] * f / 1000 / peak : 0
            if (n[ka]) printf "%-6s %-22s (C with OPENBLAS_CORETYPE=SkylakeX; %.2f x the default C runs)\n", "", tps[ka], sum[ka] / n[ka] / mc
        }
        print "(% of the " (peak ? peak : "?") " GFLOP/s SGEMM peak: matrix-product FLOPs of each side'"'"'s own timed batches, counted"
        print " over real tokens, fwd+bwd = 3 x fwd, per second; MFLOP/tok: the C side'"'"'s timed batches (whole corpus);"
        print " C RSS: peak after the warm-up and timed batches (as the reference'"'"'s, which runs only those) / peak"
        print " after one more, untimed batch of the longest pairs, the peak a whole epoch of training reaches)"
    }' "$RES"

echo
echo "Profile of C training (mean of the C runs; decoder cell = decoder - attention; GFLOP/s over executed FLOPs):"
awk -F'\t' '$2 == "C" {
        c = $1; if (!(c in n)) name[++nc] = c; n[c]++
        for (i = 9; i <= 26; i++) s[c, i] += $i; tot[c] += $5 }
    END {
        split("encoder fwd|encoder bwd|attention fwd|attention bwd|decoder cell fwd|decoder cell bwd|readout+softmax fwd|readout+softmax bwd|optimizer (clip+Adadelta)|other (batch fill, grad zeroing)", lab, "|")
        printf "  %-34s", "phase"; for (j = 1; j <= nc; j++) printf "  %10s %6s %8s", toupper(name[j]) " s/upd", "%", "GFLOP/s"; printf "\n"
        # columns 9..18: enc_fwd enc_bwd att_fwd att_bwd dec_fwd dec_bwd out_fwd out_bwd optim other;
        # 19..26: GFLOP per update of the first 8
        for (i = 1; i <= 10; i++) {
            printf "  %-34s", lab[i]
            for (j = 1; j <= nc; j++) {
                c = name[j]; v = s[c, i + 8]
                if (i == 5) v -= s[c, 11]; if (i == 6) v -= s[c, 12]
                printf "  %10.4f %5.1f%% %8s", v / n[c], 100 * v / tot[c], (i <= 8 && v > 0) ? sprintf("%.1f", s[c, i + 18] / v) : ""
            }
            printf "\n"
        }
        printf "  %-34s", "total"
        for (j = 1; j <= nc; j++) { c = name[j]; f = 0; for (i = 19; i <= 26; i++) f += s[c, i]; printf "  %10.4f %5.1f%% %8.1f", tot[c] / n[c], 100, f / tot[c] }
        printf "\n"
    }' "$RES"
echo
echo "load average at the end of training: $(cut -d' ' -f1-3 /proc/loadavg); logs and $RES in $OUT/"

# ------------------------------------------------------------------ decoding
# Decoding speed side by side on the SAME model, converted for the reference (bench/bench_decode.sh).
# SMALL: a model trained for a few minutes (or BENCH_DECODE_MODEL), since an untrained one never
# stops before the length limit; PAPER: 150 Adam updates (about 6 minutes), enough for outputs of
# real length (after one update, as the reference's RUNS.md did, the model says EOS at once and
# the benchmark times one step per sentence). The script checks that both sides produce the same
# number of tokens.
DN=1000; DNP=50; DUP=400; DUPP=150
[ "$QUICK" = 1 ] && { DN=20; DNP=3; DUP=20; DUPP=1; }
# the SMALL decoding model ($1), trained when missing; 1 when training failed
small_decode_model() {
    [ -s "$1" ] && return 0
    echo "training a SMALL RNNsearch to decode ($DUP Adam updates, 2 threads)"
    # shellcheck disable=SC2046
    bin/nmt train $(cfg_args small) --model "$1" --optimizer adam --lr 0.002 --max-updates "$DUP" \
        --threads "$T" --log-every 100 > "$OUT/decode-small.train.log" 2>&1 || { echo "bench: training failed"; return 1; }
}
if [ "${BENCH_DECODE:-1}" = 1 ] && [ $HAVE_REF = 1 ]; then
    for cfg in $CONFIGS; do
        echo
        echo "== make bench: decoding speed, $(echo "$cfg" | tr a-z A-Z) =="
        if [ "$cfg" = small ]; then
            DM=${BENCH_DECODE_MODEL:-$OUT/decode-small.nmt}; DSRC=$M30K/test_2016_flickr.en; N=$DN
            small_decode_model "$DM" || continue
        else
            DM=$OUT/decode-paper.nmt; DSRC=$WMT/test.en; N=$DNP
            # shellcheck disable=SC2046
            [ -s "$DM" ] || bin/nmt train $(cfg_args paper) --model "$DM" --optimizer adam --lr 0.002 --max-updates "$DUPP" --threads "$T" \
                > "$OUT/decode-paper.train.log" 2>&1 || { echo "bench: PAPER model failed"; continue; }
        fi
        THREADS=$T SHARED=$SHARED sh bench/bench_decode.sh "$DM" "$DSRC" "$N" || echo "bench: decoding benchmark failed"
    done
fi

# ------------------------------------------------------------------ ensembles
# Beam-12 decoding by the SMALL decoding model alone and by an ensemble of two copies of it: the
# same outputs, so the same steps; each step runs both models and then one pass combines their
# log-probabilities, so about twice the time is expected. Wall clock, model loading included.
EM=${BENCH_DECODE_MODEL:-$OUT/decode-small.nmt}
if [ "${BENCH_DECODE:-1}" = 1 ] && [ -s "$EM" ]; then
    EN=300; [ "$QUICK" = 1 ] && EN=10
    head -n "$EN" "$M30K/test_2016_flickr.en" > "$OUT/ens.src"
    echo
    echo "== make bench: ensemble decoding, beam 12, $EN sentences, $T threads =="
    for n in 1 2; do
        set -- --model "$EM"; [ $n = 2 ] && set -- --model "$EM" --model "$EM"
        t0=$(date +%s%N)
        bin/nmt translate "$@" --beam 12 --threads "$T" < "$OUT/ens.src" > "$OUT/ens$n.out" || echo "bench: ensemble decoding failed"
        t1=$(date +%s%N)
        awk -v n=$n -v a="$t0" -v b="$t1" -v s="$EN" 'BEGIN { printf "%d model%s: %.2f s, %.1f sentences/s\n", n, (n > 1 ? "s" : " "), (b - a) / 1e9, s * 1e9 / (b - a) }'
    done
    cmp -s "$OUT/ens1.out" "$OUT/ens2.out" || echo "bench: two copies of the model translated differently from the model"
fi

# ------------------------------------------------------------------ int8, bf16, shortlist
# The decoding models above in fp32 (today's arithmetic), int8, bf16, with a lexical shortlist and
# int8 + shortlist, beam 1 and 12, side by side (bench/bench_lowp.sh); the shortlist's table from
# the IBM aligner on the model's training text (each source word's 100 most frequent targets,
# made once). Configurations the CPU lacks are reported and skipped.
if [ "${BENCH_DECODE:-1}" = 1 ]; then
    LN=1000; LNP=200; [ "$QUICK" = 1 ] && { LN=20; LNP=5; }
    for cfg in $CONFIGS; do
        if [ "$cfg" = small ]; then
            DM=${BENCH_DECODE_MODEL:-$OUT/decode-small.nmt}; DS=$M30K/train; DSRC=$M30K/test_2016_flickr.en; N=$LN
            small_decode_model "$DM" || continue
        else
            DM=$OUT/decode-paper.nmt; DS=$WMT/train; DSRC=$WMT/test.en; N=$LNP
            [ -s "$DM" ] || continue   # trained by the decoding section above, with the reference
        fi
        LEX=$OUT/lex-$cfg.tsv
        if [ ! -s "$LEX" ]; then
            bin/nmt ibm --src "$DS.en" --tgt "$DS.fr" --sym gdfa --threads "$T" > "$OUT/lex-$cfg.links" 2> /dev/null &&
                bin/nmt lex --src "$DS.en" --tgt "$DS.fr" --align "$OUT/lex-$cfg.links" --top 100 --out "$LEX" 2> /dev/null ||
                { echo "bench: the shortlist's table for $cfg failed"; continue; }
        fi
        echo
        echo "== make bench: decoding in int8, bf16 and with a shortlist, $(echo "$cfg" | tr a-z A-Z) =="
        THREADS=$T ROUNDS=${ROUNDS:-3} sh bench/bench_lowp.sh "$DM" "$DSRC" "$LEX" "$N" || echo "bench: bench_lowp failed"
    done
fi

# ------------------------------------------------------------------ the seam's launch budget
# What a device backend will pay in latency: kernel launches and bytes copied between host and
# device per update and per beam step, counted by the simulated device (NMT_DEVICE=devsim, which
# runs the CPU's kernels and counts every call) on each configuration's shapes.
if [ "${BENCH_SEAM:-1}" = 1 ]; then
    echo
    echo "== make bench: kernel launches and host-device copies (simulated device) =="
    SU=12; [ "$QUICK" = 1 ] && SU=3
    for cfg in $CONFIGS; do
        SM=$OUT/seam-$cfg.nmt
        [ "$cfg" = small ] && SRC=$M30K/test_2016_flickr.en || SRC=$WMT/test.en
        NMT_DEVICE=devsim NMT_DEVSIM_REPORT=1 bin/nmt train $(cfg_args "$cfg") --model "$SM" --max-updates "$SU" \
            --save-every 100000 --threads "$T" > /dev/null 2> "$OUT/seam-$cfg.train" || { echo "bench: $cfg on devsim failed"; continue; }
        head -n 50 "$SRC" > "$OUT/seam.src"
        for beam in 1 12; do
            NMT_DEVICE=devsim NMT_DEVSIM_REPORT=1 bin/nmt translate --model "$SM" --beam "$beam" --threads "$T" \
                < "$OUT/seam.src" > /dev/null 2> "$OUT/seam-$cfg-$beam.log" || echo "bench: $cfg decoding on devsim failed"
        done
        printf '  %-5s training, batch 80: %s\n' "$cfg" "$(grep -m1 'per update' "$OUT/seam-$cfg.train" | sed 's/^devsim: per update: //')"
        for beam in 1 12; do
            printf '  %-5s beam %-2s, 50 sentences: %s\n' "$cfg" "$beam" \
                "$(grep -m1 'per search step' "$OUT/seam-$cfg-$beam.log" | sed 's/^devsim: per search step: //')"
        done
    done
fi

# ------------------------------------------------------------------ the Transformer
# The Transformer against its PyTorch version (bench/torch_transformer.py) on the same shapes,
# batches and threads: training tokens/s, share of the SGEMM peak measured above, peak RSS, and
# beam 1 and 12 decoding with the outputs compared (bench/bench_transformer.sh; its environment
# sets the shapes). BENCH_TRANSFORMER=0 skips it; BENCH_QUICK makes the shapes tiny.
if [ "${BENCH_TRANSFORMER:-1}" = 1 ]; then
    echo
    echo "== make bench: Transformer, nmt against PyTorch =="
    if ! LD_LIBRARY_PATH=$REF_BLAS $PY -c "import torch, sys; sys.exit(0 if any('openblas-pthread' in l for l in open('/proc/self/maps')) else 1)" 2>/dev/null; then
        echo "skipped: torch does not import, or does not load OpenBLAS from $REF_BLAS"
    elif [ "$QUICK" = 1 ]; then
        D=32 ENC=1 DEC=1 HEADS=2 FFN=64 VOCAB=500 BATCH=16 LINES=400 WARMUP=1 UPDATES=3 ROUNDS=1 DEC_N=10 DEC_UPDATES=20 \
            THREADS=$T PEAK=${PEAKT:-0} SHARED=$SHARED sh bench/bench_transformer.sh || echo "bench: bench_transformer failed"
    else
        THREADS=$T PEAK=${PEAKT:-0} SHARED=$SHARED sh bench/bench_transformer.sh || echo "bench: bench_transformer failed"
    fi
fi
exit 0
