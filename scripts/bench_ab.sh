#!/bin/sh
# bench_ab.sh: `make bench-ab A=REV B=REV`: training and decoding speed of two revisions of nmt
# side by side on this machine, runs alternating (A B A B ...), so that a refactoring can show it
# costs nothing. Each revision is built from its own tree with its own Makefile and runs as a user
# runs it (its own library path, libgomp's default wait policy). A benchmark, not a test: it exits
# 0 whatever it measures. Environment: NMT_SHARED (../shared), AB_ROUNDS (3), AB_THREADS (2),
# AB_TRAIN (the training shapes: "small paper"; " " for none), AB_CLOCK (wall, or cpu: each run's
# user + system seconds instead of its throughput, for a machine that other work shares: with
# AB_THREADS=1 a run's CPU time moves far less with the load than its wall time, though caches
# and memory bandwidth are still shared), AB_PREC (the decoding precisions: "fp32"; "fp32 int8
# bf16" for all, those the CPU lacks left out).
set -u
A=${1:?usage: bench_ab.sh REV_A REV_B}; B=${2:?usage: bench_ab.sh REV_A REV_B}
SHARED=$(cd "${NMT_SHARED:-../shared}" && pwd) || { echo "bench_ab: no shared folder" >&2; exit 1; }
ROUNDS=${AB_ROUNDS:-3}
T=${AB_THREADS:-2}
CLOCK=${AB_CLOCK:-wall}
SHAPES=${AB_TRAIN:-small paper}
PRECS=${AB_PREC:-fp32}
OUT=$(pwd)/build/ab
M30K=$SHARED/data/multi30k/tok
WMT=$SHARED/data/wmt_enfr
BLASINC=/usr/include/x86_64-linux-gnu/openblas-openmp
BLASDIR=/usr/lib/x86_64-linux-gnu/openblas-openmp
mkdir -p "$OUT"
unset OMP_WAIT_POLICY OPENBLAS_NUM_THREADS OMP_NUM_THREADS
. bench/kernels.sh

# build REV: DIR/bin/nmt and DIR/bench_train of that revision, from a detached worktree
build() {
    rev=$1; dir=$OUT/$rev
    if [ ! -x "$dir/bench_train" ]; then
        rm -rf "$dir"
        git worktree add -f --detach "$dir" "$rev" > /dev/null 2>&1 || { echo "bench_ab: no revision $rev" >&2; exit 1; }
        make -C "$dir" -j2 all > "$dir.build.log" 2>&1 || { echo "bench_ab: $rev does not build (see $dir.build.log)" >&2; exit 1; }
        gcc -std=c11 -D_GNU_SOURCE -fno-math-errno -O3 -g -mavx2 -mfma -fopenmp -I"$dir/include" -I"$dir/src" -I$BLASINC \
            "$dir/bench/bench_train.c" "$dir/build/libnmt.a" -fopenmp -L$BLASDIR -Wl,-rpath,$BLASDIR \
            $(grep -q spm.cc "$dir/Makefile" && echo -lsentencepiece_train -lsentencepiece -lstdc++) \
            $(grep -q -- -ldnnl "$dir/Makefile" && echo -ldnnl) \
            -lopenblas -lcjson -lpng -lz -lm -o "$dir/bench_train" || { echo "bench_ab: bench_train of $rev does not build" >&2; exit 1; }
    fi
}
build "$A"; build "$B"

# 20 untimed updates: a whole block of Appendix-B batches (short to long), so that the workspace,
# sized for the longest pair and zeroed lazily by the kernel (calloc), has been touched whole
# before the clock starts; with 2, PAPER's timed updates paid the first touch of its pages
# (about 0.3 GB, 5% of PAPER's time on this virtual machine), which a long run pays once.
small="--src $M30K/train.en --tgt $M30K/train.fr --emb 256 --hid 256 --att 256 --maxout 256 --vocab 10000 --max-len 50 --warmup 20 --updates 40"
paper="--src $WMT/train.en --tgt $WMT/train.fr --emb 620 --hid 1000 --att 1000 --maxout 500 --vocab 30002 --max-len 50 --warmup 20 --updates 16"
tok_s() { grep '^RESULT' "$1" | tr ' ' '\n' | awk -F= '$1 == "tok_s" { print $2 }'; }
sent_s() { awk -v n="$2" '/^real/ { print n / $2 }' "$1"; }
# cpu_s LOG: the user + system seconds that `/usr/bin/time -p` wrote at the end of LOG
cpu_s() { awk '/^user/ { u = $2 } /^sys/ { s = $2 } END { print u + s }' "$1"; }

echo "== bench_ab: $A against $B, $ROUNDS rounds, $T threads, $CLOCK clock, $(date -u +%FT%TZ)"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
# a decoding model, trained once by A (the two read the same file format)
model=$OUT/small-$A.nmt
[ -s "$model" ] || "$OUT/$A/bin/nmt" train --src $M30K/train.en --tgt $M30K/train.fr --model "$model" --preset hour \
    --max-updates 300 --threads "$T" --log-every 1000 > /dev/null 2>&1
res=$OUT/results.tsv
: > "$res"
for r in $(seq 1 "$ROUNDS"); do
    for rev in "$A" "$B"; do
        for cfg in $SHAPES; do
            eval args=\$$cfg
            # shellcheck disable=SC2086
            /usr/bin/time -p "$OUT/$rev/bench_train" $args --threads "$T" > "$OUT/$rev-$cfg-$r.log" 2>&1
            v=$(tok_s "$OUT/$rev-$cfg-$r.log"); [ "$CLOCK" = cpu ] && v=$(cpu_s "$OUT/$rev-$cfg-$r.log")
            printf '%s\ttrain_%s\t%s\t%s\n' "$rev" "$cfg" "$r" "$v" >> "$res"
        done
        for p in $PRECS; do
            "$OUT/$rev/bin/nmt" translate --model "$model" --precision $p < /dev/null > /dev/null 2>&1 || continue
            tag=$([ $p = fp32 ] || echo "${p}_")
            for beam in 12 1; do
                log=$OUT/$rev-$tag""beam$beam-$r.log
                { /usr/bin/time -p "$OUT/$rev/bin/nmt" translate --model "$model" --beam $beam --threads "$T" \
                    --precision $p < $M30K/test_2016_flickr.en > "$OUT/$rev-$tag""beam$beam.out"; } 2> "$log"
                v=$(sent_s "$log" 1000); [ "$CLOCK" = cpu ] && v=$(cpu_s "$log")
                printf '%s\tdecode_%sbeam%s\t%s\t%s\n' "$rev" "$tag" "$beam" "$r" "$v" >> "$res"
            done
        done
    done
done
cmp -s "$OUT/$A-beam12.out" "$OUT/$B-beam12.out" && echo "beam-12 translations identical" || echo "beam-12 translations DIFFER"
# per measure: each revision's runs, their medians, and B / A
awk -F'\t' -v a="$A" -v b="$B" '
    { v[$2, $1] = v[$2, $1] " " $4; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
    function median(s,   x, k, i, j, t) { k = split(s, x, " "); for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
        return k % 2 ? x[(k + 1) / 2] : (x[k / 2] + x[k / 2 + 1]) / 2 }
    END { printf "%-14s %-28s %-28s %s\n", "measure", a " (runs)", b " (runs)", "B/A (medians)"
          for (i = 1; i <= n; i++) { m = order[i]; ma = median(v[m, a]); mb = median(v[m, b])
              printf "%-14s %-28s %-28s %.3f\n", m, v[m, a], v[m, b], mb / ma } }' "$res"
if [ "$CLOCK" = cpu ]; then
    echo "(CPU seconds, user + system, of each whole run: bench_train's; nmt translate's on test_2016_flickr; B/A over 1 is B slower)"
else
    echo "(train_*: target tokens/s of bench_train; decode_*: sentences/s of nmt translate on test_2016_flickr)"
fi
