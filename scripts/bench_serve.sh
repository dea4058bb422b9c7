#!/bin/sh
# bench_serve.sh: `make bench-serve`: nmt serve under 1, 8 and 64 concurrent clients on loopback,
# each sending Multi30k test sentences (raw text, one per request) and waiting for the answer,
# beside `nmt translate` over the same sentences with the same beam and text options, which is
# the throughput ceiling. Prints sentences/s and the p50 / p99 latency per client count. Then the
# load test: BENCH_LOAD_CLIENTS clients again, alone and then beside BENCH_SLOW connections that
# trickle their request heads a byte every 2 s (reconnecting when cut) while GET /health is timed
# every 0.1 s; the targets are /health within 100 ms throughout and 80% of the unloaded throughput.
#
# Environment: BENCH_MODEL (the SMALL Multi30k en-fr model; required), NMT_SHARED (../shared),
# BENCH_BEAM (5), BENCH_CLIENTS ("1 8 64"), BENCH_LINES (sentences sent per run; 1000 = all),
# BENCH_SERVE_ARGS (extra nmt serve options, e.g. "--workers 1 --threads 2"), BENCH_SLOW (200),
# BENCH_LOAD_CLIENTS (64; 0 skips the load test). A benchmark, not a test: it exits 0 whatever it
# measures. Loopback only; every client and connection ends with the run.
set -u
SHARED="${NMT_SHARED:-../shared}"
MODEL="${BENCH_MODEL:-}"
BEAM="${BENCH_BEAM:-5}"
CLIENTS="${BENCH_CLIENTS:-1 8 64}"
LINES="${BENCH_LINES:-1000}"
EXTRA="${BENCH_SERVE_ARGS:-}"
SLOW="${BENCH_SLOW:-200}"
LOAD_CLIENTS="${BENCH_LOAD_CLIENTS:-64}"
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
if [ "$LOAD_CLIENTS" -gt 0 ]; then
    base=$($PY tests/cli/serve_client.py bench "$PORT" "$OUT/in.en" "$LOAD_CLIENTS" "$BEAM")
    load=$($PY tests/cli/serve_client.py load "$PORT" "$OUT/in.en" "$LOAD_CLIENTS" "$BEAM" "$SLOW")
    echo "$base $load" | awk -v c="$LOAD_CLIENTS" -v n="$SLOW" '{
        r = 100 * $5 / $1
        printf "load: %d clients alone %.1f sent/s; beside %d slow connections %.1f sent/s (%.0f%%, p99 %d ms, %d errors)\n", c, $1, n, $5, r, $7, $8
        printf "  /health: slowest %d ms over %d probes, %d failed\n", $9, $11, $10
        printf "  targets: /health within 100 ms %s, >= 80%% of the throughput %s\n", ($9 <= 100 && $10 == 0) ? "met" : "MISSED", (r >= 80 ? "met" : "MISSED") }'
fi
kill -TERM $PID
wait $PID
exit 0
