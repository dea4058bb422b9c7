#!/bin/sh
# serve_memory.sh NMT MODEL: the resident memory of `nmt serve` by precision and worker count,
# after the same warm-up (the first 64 Multi30k test sentences, 8 requests at a time, so that
# every worker has decoded). Prints one line per run: precision, workers, VmRSS and VmHWM in MB.
# Precisions the CPU lacks are skipped. A measurement, not a test (docs/results/speed.md).
# Environment: NMT_SHARED (../shared), MEM_PRECISIONS ("fp32 int8 bf16"), MEM_WORKERS ("1 4").
set -u
NMT=$1; MODEL=$2
SHARED="${NMT_SHARED:-../shared}"
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
OUT=$(mktemp -d /tmp/nmt-serve-mem-XXXXXX)
trap 'rm -rf "$OUT"' EXIT
head -n 64 "$SHARED/data/multi30k/test_2016_flickr.en" > "$OUT/in.en"
. tests/cli/lib_serve.sh
export OMP_WAIT_POLICY=PASSIVE
printf '%-6s %8s %10s %10s\n' precision workers "VmRSS MB" "VmHWM MB"
for p in ${MEM_PRECISIONS:-fp32 int8 bf16}; do
    for w in ${MEM_WORKERS:-1 4}; do
        NMT_BIN=$NMT serve_start "$OUT/log" "$MODEL" --beam 5 --precision "$p" --workers "$w" --threads 1 || {
            echo "$p: $(tail -1 "$OUT/log")"; continue; }
        $PY tests/cli/serve_client.py many "$PORT" "$OUT/in.en" 8 5 > /dev/null
        rss=$(awk '/^VmRSS/ { print $2 / 1024 }' "/proc/$PID/status")
        hwm=$(awk '/^VmHWM/ { print $2 / 1024 }' "/proc/$PID/status")
        printf '%-9s %5d %10.1f %10.1f\n' "$p" "$w" "$rss" "$hwm"
        kill "$PID"; wait "$PID" 2> /dev/null
    done
done
