#!/bin/sh
# constraints_met.sh CONSTRAINTS OUTPUT [nbest]: counts, from `nmt translate` output, how many of
# the constraint phrases (CONSTRAINTS: line i holds line i's phrases, tab-separated, as
# --constraints reads them) appear in the translations, each as whole words (space-bounded).
# OUTPUT is one translation per line, or with "nbest" the n-best format (INDEX ||| TEXT |||
# SCORE, every hypothesis counted). Prints "phrases N met M hypotheses H all-met A".
set -eu
awk -F'\t' -v nbest="${3:-}" '
NR == FNR { c[FNR] = $0; next }
{
    line = $0; i = FNR
    if (nbest != "") { split($0, f, / \|\|\| /); i = f[1] + 1; line = f[2] }
    np = c[i] == "" ? 0 : split(c[i], p, "\t")
    h++; all = 1
    for (k = 1; k <= np; k++) {
        n++
        if (index(" " line " ", " " p[k] " ")) m++; else all = 0
    }
    a += all
}
END { printf "phrases %d met %d hypotheses %d all-met %d\n", n, m, h, a }' "$1" "$2"
