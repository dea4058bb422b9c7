#!/bin/sh
# bench_serve.sh: `make bench-serve`: nmt serve under 1, 8 and 64 concurrent clients on loopback,
# each sending Multi30k test sentences (raw text, one per request) and waiting for the answer,
# beside `nmt translate` over the same sentences with the same beam and text options, which is
# the throughput ceiling. Prints sentences/s and the p50 / p99 latency per client count.
#
# Environment: BENCH_MODEL (the SMALL Multi30k en-fr model; required), NMT_SHARED (../shared),
# BENCH_BEAM (5), BENCH_CLIENTS ("1 8 64"), BENCH_LINES (sentences sent per run; 1000 = all),
# BENCH_SERVE_ARGS (extra nmt serve options, e.g. "--workers 1 --threads 2"). A benchmark, not a
# test: it exits 0 whatever it measures.
set -u
SHARED="${NMT_SHARED:-../shared}"
MODEL="${BENCH_MODEL:-}"
BEAM="${BENCH_BEAM:-5}"
CLIENTS="${BENCH_CLIENTS:-1 8 64}"
LINES="${BENCH_LINES:-1000}"
EXTRA="${BENCH_SERVE_ARGS:-}"
NMT=bin/nmt
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
if [ -z "$MODEL" ] || [ ! -f "$MODEL" ]; then
    echo "bench-serve: set BENCH_MODEL to a Multi30k en-fr model (nmt train --preset hour gives the SMALL one)" >&2
    exit 1
fi
OUT=build/bench-serve
mkdir -p "$OUT"
head -n "$LINES" "$SHARED/data/multi30k/test_2016_flickr.en" > "$OUT/in.en"
N=$(wc -l < "$OUT/in.en")
TEXT="--tokenize en --lowercase --normalize-punct --detokenize fr"
export OMP_WAIT_POLICY=PASSIVE

echo "bench-serve: $N sentences, beam $BEAM, $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')"
# the ceiling: the whole file through nmt translate on every core
t0=$(date +%s.%N)
# shellcheck disable=SC2086
$NMT translate --model "$MODEL" --beam "$BEAM" $TEXT < "$OUT/in.en" > "$OUT/translate.fr"
t1=$(date +%s.%N)
CEIL=$(echo "$N $t0 $t1" | awk '{ printf "%.1f", $1 / ($3 - $2) }')
printf '%-28s %8s sentences/s\n' "nmt translate" "$CEIL"

. tests/cli/lib_serve.sh
# shellcheck disable=SC2086
NMT_BIN=$NMT serve_start "$OUT/serve.log" "$MODEL" --beam "$BEAM" $TEXT --max-connections 256 $EXTRA
if [ -z "$PORT" ]; then echo "bench-serve: the server did not start: $(cat "$OUT/serve.log")" >&2; kill $PID; exit 1; fi
printf '%-28s %8s %12s %9s %9s\n' "nmt serve ($(sed -n 's/.*(\(.*\))/\1/p' "$OUT/serve.log"))" "sent/s" "of translate" "p50 ms" "p99 ms"
for c in $CLIENTS; do
    r=$($PY tests/cli/serve_client.py bench "$PORT" "$OUT/in.en" "$c" "$BEAM")
    echo "$r" | awk -v c="$c" -v ceil="$CEIL" '{ printf "  %3d clients %14s %8.1f %11.0f%% %9d %9d%s\n", c, "", $1, 100 * $1 / ceil, $2, $3,
        ($4 > 0 ? "  (" $4 " errors)" : "") }'
done
$PY tests/cli/serve_client.py req "$PORT" GET /metrics | grep -E '^nmt_batch_sentences_(sum|count)' | tr '\n' ' ' \
    | awk '{ if ($4 > 0) printf "  mean batch: %.1f sentences over %d batches\n", $2 / $4, $4 }'
kill -TERM $PID
wait $PID
exit 0
