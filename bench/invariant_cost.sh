#!/bin/sh
# invariant_cost.sh MODEL [NMT]: what --batch-invariant on costs against off, one binary, runs
# alternating, CPU seconds (user + system) of `nmt translate` on test_2016_flickr's first IC_LINES
# lines at one thread, beam 12 and 1, fp32 and int8, under nmt's own choice of FP32 kernels and
# under OpenBLAS's Haswell kernels (what an AVX2-only CPU runs). Medians of IC_ROUNDS (5); on/off
# above 1 is on slower. A benchmark, not a test: it exits 0.
set -u
model=${1:?usage: invariant_cost.sh MODEL [NMT]}
nmt=${2:-bin/nmt}
SHARED=${NMT_SHARED:-../shared}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
head -n "${IC_LINES:-300}" "$SHARED/data/multi30k/tok/test_2016_flickr.en" > "$T/in"
echo "== invariant_cost: $(wc -l < "$T/in") lines, $nmt, $(date -u +%FT%TZ)"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "${IC_ROUNDS:-5}"); do
    for k in own Haswell; do
        e="X=1"; [ $k = Haswell ] && e="OPENBLAS_CORETYPE=Haswell"
        for p in fp32 int8; do
            for beam in 12 1; do
                for v in on off; do
                    /usr/bin/time -f "%U %S" -o "$T/t" env $e "$nmt" translate --model "$model" --precision $p --beam $beam \
                        --threads 1 --batch-invariant $v < "$T/in" > /dev/null 2>&1 || continue
                    echo "$k $p beam$beam $v $(awk '{ print $1 + $2 }' "$T/t")"
                done
            done
        done
    done
done > "$T/runs"
awk 'function median(s,   x, k, i, j, t) { k = split(s, x, " "); for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
         if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }; return k % 2 ? x[(k + 1) / 2] : (x[k / 2] + x[k / 2 + 1]) / 2 }
     { key = $1 " " $2 " " $3; v[key, $4] = v[key, $4] " " $5; if (!(key in seen)) { seen[key] = 1; order[++n] = key } }
     END { printf "%-24s %-30s %-30s %s\n", "kernels prec beam", "on (CPU s)", "off (CPU s)", "on/off"
           for (i = 1; i <= n; i++) { k = order[i]; a = median(v[k, "on"]); b = median(v[k, "off"])
               printf "%-24s %-30s %-30s %.3f\n", k, v[k, "on"], v[k, "off"], a / b } }' "$T/runs"
echo "(own: nmt's choice of FP32 kernels on this CPU, its cache or NMT_BLAS_AUTOTUNE; off uses them, on its own kernel)"
