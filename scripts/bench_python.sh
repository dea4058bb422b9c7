#!/bin/sh
# bench_python.sh: the Python package's translate_batch against `nmt translate` on the first 1,000
# sentences of Multi30k's test_2016_flickr (tokenized English), at the same beam and threads, and
# two Python threads sharing one Translator against one. Trains a small model first (or uses
# MODEL=path). Prints the figures with the date, the CPU and the load. Run once, with nice:
#   nice sh scripts/bench_python.sh   (after make python)
set -eu
SHARED=${NMT_SHARED:-../shared}
W=${BENCH_DIR:-build/bench_python}
BEAM=${BEAM:-5}
mkdir -p "$W"
export OMP_WAIT_POLICY=PASSIVE NMT_BLAS_AUTOTUNE=0
D=$SHARED/data/multi30k/tok
head -n 1000 "$D/test_2016_flickr.en" > "$W/in.en"
M=${MODEL:-$W/small.nmt}
if [ ! -f "$M" ]; then # a small model: 10,000-word vocabularies, 128 units, 1,500 updates of Adam
    bin/nmt train --src "$D/train.en" --tgt "$D/train.fr" --model "$M" --emb 128 --hid 128 --att 128 --maxout 128 \
        --tied-embeddings --vocab 10000 --batch 40 --max-updates 1500 --optimizer adam --lr 0.002 --threads 2 \
        --log-every 500 2> "$W/train.log"
fi
echo "date $(date -u '+%F %H:%M UTC'); $(lscpu | grep 'Model name' | sed 's/  */ /g'); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "model $M: $(build/venv/bin/python -c "import nmt; print(nmt.Translator('$M').info)")"
now() { date +%s.%N; }
for th in 1 2; do
    t0=$(now)
    bin/nmt translate --model "$M" --beam "$BEAM" --threads "$th" --input "$W/in.en" > "$W/cli.$th.txt"
    t1=$(now)
    echo "nmt translate --beam $BEAM --threads $th: $(echo "$t1 - $t0" | bc) s (1,000 sentences, model load included)"
done
build/venv/bin/python - "$M" "$W" "$BEAM" <<'PY'
import sys, threading, time
import nmt
model, w, beam = sys.argv[1], sys.argv[2], int(sys.argv[3])
src = [l.split() for l in open(f"{w}/in.en", encoding="utf-8")]
want = open(f"{w}/cli.1.txt", encoding="utf-8").read().splitlines()

def run(threads):
    t0 = time.perf_counter()
    tr = nmt.Translator(model, threads=threads)
    t1 = time.perf_counter()
    res = tr.translate_batch(src, beam_size=beam)
    t2 = time.perf_counter()
    same = [" ".join(r.hypotheses[0]) for r in res] == want
    print(f"translate_batch beam {beam} threads {threads}: {t2 - t1:.2f} s (+ {t1 - t0:.2f} s load); "
          f"output {'identical to' if same else 'DIFFERS from'} nmt translate's")
    return tr

run(2)
tr = run(1)
halves = [src[:500], src[500:]]
out = [None, None]
def work(k):
    out[k] = tr.translate_batch(halves[k], beam_size=beam)
t0 = time.perf_counter()
ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
for t in ts: t.start()
for t in ts: t.join()
t1 = time.perf_counter()
same = [" ".join(r.hypotheses[0]) for r in out[0] + out[1]] == want
print(f"two Python threads sharing one Translator (threads 1 each), 500 sentences each: {t1 - t0:.2f} s; "
      f"output {'identical' if same else 'DIFFERS'}")
PY
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
