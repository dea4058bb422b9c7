#!/bin/sh
# bench_lowp.sh: decoding speed of `nmt translate` on one model in fp32 (the reference, today's
# arithmetic), int8, bf16, with a lexical shortlist, and int8 + shortlist, at beam 1 and 12, side by
# side in one run: every round runs each configuration once, in turn, so that a change in the
# machine's load falls on all of them alike. Prints one table: sentences/s and target tokens/s per
# configuration and beam, the speed-up over fp32, and how many output lines equal fp32's.
#
# usage: sh bench/bench_lowp.sh MODEL.nmt SRC TABLE [N]   (N: the first N lines of SRC, default 1000;
#        TABLE: the shortlist's table, `nmt lex --top 100`)
#   env: NMT (bin/nmt), THREADS (2), ROUNDS (3), SHORTLIST (K,F; default 100,100), KEEP=DIR (keep
#        the outputs and the per-run TSV there), CONFIGS (a subset of "fp32 int8 bf16 shortlist
#        int8+shortlist"; fp32 always runs), REF (the references of the first N lines: adds each
#        configuration's BLEU, `nmt bleu --tokenize none`), CLOCK (wall, or cpu: user + system
#        seconds, steadier than the wall clock on a machine that also runs other work)
#
# Timed: nmt translate --model MODEL --threads T --beam K [options] < first-N > out, wall clock
# minus that configuration's load time (the median of 3 runs on empty input, measured first: it
# includes converting the weights to int8 or bf16); target tokens = output words + 1 EOS per line.
# A configuration the CPU lacks (int8 without AVX2, bf16 without AVX512_BF16) is reported
# and skipped. A benchmark, not a test: it exits 0 whatever it measures.
set -u
cd "$(dirname "$0")/.."
[ $# -ge 3 ] || { echo "usage: sh bench/bench_lowp.sh MODEL.nmt SRC TABLE [N]" >&2; exit 2; }
MODEL=$1; SRC=$2; TABLE=$3; N=${4:-1000}
NMT=${NMT:-bin/nmt}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-3}
SL="$TABLE,${SHORTLIST:-100,100}"
for f in "$MODEL" "$SRC" "$TABLE" "$NMT"; do [ -e "$f" ] || { echo "bench_lowp: $f not found" >&2; exit 2; }; done
if [ -n "${KEEP:-}" ]; then
    T=$KEEP; mkdir -p "$T"
else
    T=$(mktemp -d "${TMPDIR:-/tmp}/bench_lowp.XXXXXX")
    trap 'rm -rf "$T"' EXIT INT TERM
fi
head -n "$N" "$SRC" > "$T/src"
NS=$(wc -l < "$T/src")

now_ns() { date +%s%N; }
# the configurations and their options (the table's path holds no blank)
CONFIGS="fp32 $(echo "${CONFIGS:-int8 bf16 shortlist int8+shortlist}" | tr ' ' '\n' | grep -vx fp32 | tr '\n' ' ')"
CLOCK=${CLOCK:-wall}
[ -z "${REF:-}" ] || [ -e "$REF" ] || { echo "bench_lowp: $REF not found" >&2; exit 2; }
case $CLOCK in wall|cpu) ;; *) echo "bench_lowp: CLOCK is wall or cpu" >&2; exit 2 ;; esac
# SECS OUT CMD...: runs CMD, its seconds (wall, or user + system with CLOCK=cpu) into the file OUT
secs() {
    o=$1; shift
    if [ "$CLOCK" = cpu ]; then
        /usr/bin/time -f '%U %S' -o "$o.t" "$@" && awk '{ printf "%.6f\n", $1 + $2 }' "$o.t" > "$o"
    else
        t0=$(now_ns); "$@"; t1=$(now_ns)
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }' > "$o"
    fi
}
opts() {
    case $1 in
        fp32|int8|bf16) echo "--precision $1" ;;
        shortlist) echo "--shortlist $SL" ;;
        int8+shortlist) echo "--precision int8 --shortlist $SL" ;;
    esac
}

echo "# bench_lowp $(date -u '+%Y-%m-%d %H:%M UTC'): model $MODEL, $NS sentences of $SRC, shortlist $SL, threads $THREADS, rounds $ROUNDS, $CLOCK seconds"
echo "# $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), flags: $(grep -m1 -o -w 'avx512_vnni\|avx512_bf16\|amx_int8\|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')load average $(cut -d' ' -f1-3 /proc/loadavg)"
RUN=""
for c in $CONFIGS; do
    name=$c
    # shellcheck disable=SC2046
    if ! "$NMT" translate --model "$MODEL" --threads "$THREADS" $(opts "$c") < /dev/null > /dev/null 2> "$T/err"; then
        echo "# $name: not run ($(head -c 200 "$T/err"))"
        continue
    fi
    RUN="$RUN $c"
    for i in 1 2 3; do
        # shellcheck disable=SC2046
        secs "$T/l$i" "$NMT" translate --model "$MODEL" --threads "$THREADS" $(opts "$c") < /dev/null > /dev/null
        cat "$T/l$i"
    done | sort -n | sed -n 2p > "$T/load.$name"
    echo "# $name: load $(awk '{ printf "%.3f", $1 }' "$T/load.$name") s (median of 3, subtracted)"
done

RES=$T/runs.tsv   # config beam round seconds sentences tokens same_as_fp32
: > "$RES"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for k in 1 12; do
        for c in $RUN; do
            name=$c
            # shellcheck disable=SC2046
            secs "$T/s" "$NMT" translate --model "$MODEL" --threads "$THREADS" --beam "$k" $(opts "$c") < "$T/src" > "$T/$name.b$k.out"
            tok=$(awk '{ n += NF + 1 } END { print n + 0 }' "$T/$name.b$k.out")
            same=$(paste -d '\n' "$T/fp32.b$k.out" "$T/$name.b$k.out" 2> /dev/null | awk 'NR % 2 { a = $0; next } { n += a == $0 } END { print n + 0 }')
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$k" "$r" \
                "$(awk -v l="$(cat "$T/load.$name")" '{ printf "%.6f", $1 - l }' "$T/s")" "$NS" "$tok" "$same" >> "$RES"
            if [ -n "${REF:-}" ] && [ "$r" = 1 ]; then
                head -n "$NS" "$REF" > "$T/ref"
                printf '%s\t%s\t%s\n' "$name" "$k" "$("$NMT" bleu --tokenize none "$T/ref" < "$T/$name.b$k.out" |
                    sed -n 's/^BLEU[^=]*= *\([0-9.]*\).*/\1/p')" >> "$T/bleu.tsv"
            fi
        done
    done
    r=$((r + 1))
done
echo "# load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo
[ -e "$T/bleu.tsv" ] || : > "$T/bleu.tsv"
awk -F '\t' -v TH="$THREADS" -v N="$NS" -v CL="$CLOCK" '
function fmt(v) { return v >= 100 ? sprintf("%.0f", v) : sprintf("%.2f", v) }
FILENAME == ARGV[1] { bleu[$1 SUBSEP $2] = $3; hasb = 1; next }
{ key = $1 SUBSEP $2; sps[key] += $5 / $4; tps[key] += $6 / $4; n[key]++; same[key] = $7; tok[key] = $6
  if (!($1 in seen)) { seen[$1] = 1; order[++no] = $1 } }
END {
    u = CL == "cpu" ? " (per CPU second)" : ""
    printf "| %d sentences, %d threads%s | beam 1 sent/s | beam 1 × fp32 | beam 12 sent/s | beam 12 tok/s | beam 12 × fp32 | lines as fp32 (beam 12) |%s\n", N, TH, u, hasb ? " BLEU beam 1 | BLEU beam 12 |" : ""
    print "|---|---|---|---|---|---|---|" (hasb ? "---|---|" : "")
    for (i = 1; i <= no; i++) {
        c = order[i]; a = c SUBSEP 1; b = c SUBSEP 12; fa = "fp32" SUBSEP 1; fb = "fp32" SUBSEP 12
        printf "| %s | %s | %.2f | %s | %s | **%.2f** | %d of %d |", c, fmt(sps[a] / n[a]), (sps[a] / n[a]) / (sps[fa] / n[fa]),
            fmt(sps[b] / n[b]), fmt(tps[b] / n[b]), (sps[b] / n[b]) / (sps[fb] / n[fb]), same[b], N
        if (hasb) printf " %s | %s |", bleu[a], bleu[b]
        printf "\n"
    }
}' "$T/bleu.tsv" "$RES"
echo
echo "Means over $ROUNDS rounds; $CLOCK seconds minus each configuration's load time. × fp32: the speed over fp32's in the same run.${REF:+ BLEU: round 1's output against $REF.}"
[ -n "${KEEP:-}" ] && echo "(runs in $RES, outputs in $T)"
exit 0
