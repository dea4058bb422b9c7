#!/bin/sh
# bench_decode.sh: decoding speed of `nmt translate` against the PyTorch reference
# (shared/peers/torch/rnnsearch.py) on the SAME trained model, converted with bench/nmt2torch.py.
# Prints one table: sentences/s and target tokens/s per side and beam, C/reference ratios,
# single-sentence latency at beam 12, peak RSS.
#
# usage: sh bench/bench_decode.sh MODEL.nmt SRC [N]      (N: first N lines of SRC, default 1000)
#   env: NMT (default bin/nmt), SHARED (default ../shared), THREADS (default 2),
#        ROUNDS (default 2), LAT_N (sentences of the latency run, default 50), KEEP=DIR (keep the
#        logs, outputs and per-run TSV there instead of a temporary directory)
#
# What is timed, per round (C, then reference; ROUNDS rounds), all with THREADS threads, each
# side with its own OpenMP wait policy (nmt: libgomp's default; the reference: the PASSIVE it
# sets for itself):
#   C:   nmt translate --model MODEL --threads T --beam K < first-N > out     (K = 1, 12; its
#        default --batch), wall clock minus the model load time (the median of 3 runs on empty
#        input, measured first); target tokens = output words + 1 EOS per sentence.
#   C latency: nmt translate --batch 1 --beam 12 over the first LAT_N lines, (wall - load) / LAT_N.
#   reference: rnnsearch.py bench --model converted.pt --test-src first-N --dec-sents N --beams 1 12
#        --threads T --train-updates 0: model load, torch start-up and its 10-sentence warm-up per
#        beam are outside its clock; it decodes one sentence at a time (beam_search, also for
#        beam 1), tokens include EOS. Its latency = its beam-12 seconds per sentence.
#   peak RSS: /usr/bin/time -f %M of each process (the reference's one process does both beams).
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: sh bench/bench_decode.sh MODEL.nmt SRC [N]" >&2; exit 2; }
MODEL=$1
SRC=$2
N=${3:-1000}
NMT=${NMT:-bin/nmt}
SHARED=${SHARED:-../shared}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-2}
LAT_N=${LAT_N:-50}
TIME=/usr/bin/time
ME=bench_decode
. bench/ref_env.sh
need_files "$MODEL" "$SRC" "$REF" "$NMT" "$TIME"
need_torch
work_dir
T=$WORK

now_ns() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", (b - a) / 1e9 }'; }

head -n "$N" "$SRC" > "$T/src"
NS=$(wc -l < "$T/src")
[ "$NS" -gt 0 ] || { echo "bench_decode: $SRC is empty" >&2; exit 2; }
[ "$LAT_N" -le "$NS" ] || LAT_N=$NS
head -n "$LAT_N" "$T/src" > "$T/lat"

echo "# bench_decode $(date -u '+%Y-%m-%d %H:%M UTC'): model $MODEL, $NS sentences of $SRC, threads $THREADS, rounds $ROUNDS"
echo "# $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load average $(cut -d' ' -f1-3 /proc/loadavg), OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
$PY bench/nmt2torch.py "$MODEL" "$T/m.pt" 2> "$T/convert.log" || { cat "$T/convert.log" >&2; exit 1; }

# model load time of the C side (median of 3 runs on empty input)
for _ in 1 2 3; do
    t0=$(now_ns)
    "$NMT" translate --model "$MODEL" --threads "$THREADS" --beam 12 < /dev/null > /dev/null
    t1=$(now_ns)
    secs "$t0" "$t1"; echo
done | sort -n | sed -n 2p > "$T/load"
LOAD=$(cat "$T/load")
echo "# C model load (median of 3, subtracted from the C wall times): ${LOAD} s"

RES=$T/runs.tsv   # side beam round seconds sentences target_tokens peak_rss_kib
: > "$RES"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for k in 1 12; do
        t0=$(now_ns)
        $TIME -f %M -o "$T/rss" "$NMT" translate --model "$MODEL" --threads "$THREADS" --beam "$k" \
            < "$T/src" > "$T/c.b$k.out"
        t1=$(now_ns)
        tok=$(awk '{ n += NF + 1 } END { print n + 0 }' "$T/c.b$k.out")
        sec=$(awk -v w="$(secs "$t0" "$t1")" -v l="$LOAD" 'BEGIN { printf "%.6f", w - l }')
        printf 'C\t%s\t%s\t%s\t%s\t%s\t%s\n' "$k" "$r" "$sec" "$NS" "$tok" "$(tail -n 1 "$T/rss")" >> "$RES"
    done
    t0=$(now_ns)
    $TIME -f %M -o "$T/rss" "$NMT" translate --model "$MODEL" --threads "$THREADS" --beam 12 --batch 1 \
        < "$T/lat" > "$T/c.lat.out"
    t1=$(now_ns)
    sec=$(awk -v w="$(secs "$t0" "$t1")" -v l="$LOAD" 'BEGIN { printf "%.6f", w - l }')
    printf 'C\tlat\t%s\t%s\t%s\t-\t%s\n' "$r" "$sec" "$LAT_N" "$(tail -n 1 "$T/rss")" >> "$RES"

    $TIME -f %M -o "$T/rss" $PY "$REF" bench --model "$T/m.pt" --src "$T/src" --tgt "$T/src" \
        --test-src "$T/src" --dec-sents "$NS" --beams 1 12 --threads "$THREADS" --train-updates 0 \
        --json "$T/ref.$r.json" > "$T/ref.$r.log" 2>&1 || { cat "$T/ref.$r.log" >&2; exit 1; }
    $PY - "$T/ref.$r.json" "$r" "$(tail -n 1 "$T/rss")" >> "$RES" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))['decode']
for k in (1, 12):
    x = d['beam%d' % k]
    print('ref\t%d\t%s\t%.6f\t%d\t%d\t%s' % (k, sys.argv[2], x['sec'], x['sents'],
                                            round(x['out_tok_s'] * x['sec']), sys.argv[3]))
x = d['beam12']
print('ref\tlat\t%s\t%.6f\t%d\t-\t%s' % (sys.argv[2], x['sec'], x['sents'], sys.argv[3]))
EOF
    r=$((r + 1))
done

echo "# load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo
awk -F '\t' -v N="$NS" -v LN="$LAT_N" -v TH="$THREADS" '
function fmt(v) { return v >= 100 ? sprintf("%.0f", v) : sprintf("%.2f", v) }
{
    key = $1 SUBSEP $2
    if ($2 == "lat") { lat[key] = lat[key] " / " fmt($4 / $5); slat[key] += $4 / $5; nl[key]++ }
    else {
        ss[key] = ss[key] " / " fmt($5 / $4); sps[key] += $5 / $4
        tt[key] = tt[key] " / " fmt($6 / $4); tps[key] += $6 / $4
        tok[key] = $6; nr[key]++
    }
    if ($7 > rss[$1]) rss[$1] = $7
}
function cell(s, sum, n) { return substr(s, 4) (n > 1 ? " (mean " fmt(sum / n) ")" : "") }
END {
    printf "| %d sentences, %d threads | C (nmt translate) | reference (rnnsearch.py) | C / reference |\n", N, TH
    print "|---|---|---|---|"
    split("1 12", B, " ")
    for (i = 1; i <= 2; i++) {
        b = B[i]; c = "C" SUBSEP b; t = "ref" SUBSEP b
        printf "| beam %s, sentences/s | %s | %s | **%.2f** |\n", b, cell(ss[c], sps[c], nr[c]), cell(ss[t], sps[t], nr[t]), (sps[c] / nr[c]) / (sps[t] / nr[t])
        printf "| beam %s, target tokens/s (incl. EOS) | %s | %s | %.2f |\n", b, cell(tt[c], tps[c], nr[c]), cell(tt[t], tps[t], nr[t]), (tps[c] / nr[c]) / (tps[t] / nr[t])
        printf "| beam %s, target tokens produced | %d | %d | %.3f |\n", b, tok[c], tok[t], tok[c] / tok[t]
    }
    c = "C" SUBSEP "lat"; t = "ref" SUBSEP "lat"
    printf "| latency, beam 12, s/sentence (C: --batch 1 over %d; reference: its beam-12 run) | %s | %s | %.2f |\n", LN, cell(lat[c], slat[c], nl[c]), cell(lat[t], slat[t], nl[t]), (slat[c] / nl[c]) / (slat[t] / nl[t])
    printf "| peak RSS, MiB (max over runs) | %.0f | %.0f | %.2f |\n", rss["C"] / 1024, rss["ref"] / 1024, rss["C"] / rss["ref"]
}' "$RES"
echo
echo "Speeds: C / reference > 1 means C is faster; latency and RSS: < 1 means C is lower. C times are"
echo "wall clock minus the model load; the reference times decoding only, after a 10-sentence warm-up."
[ -n "${KEEP:-}" ] && echo "(runs in $RES, logs and outputs in $T)"
exit 0
