#!/bin/sh
# terminology.sh MODEL REFERENCE [PHRASES]: a terminology test set for `nmt translate
# --constraints`, built from a dev set's reference translations: for each reference line, the
# phrases its translation must hold (tab-separated; at most PHRASES, default 2): the rarest
# word of the line that the model can write (a word model's target ids rank words by
# frequency, so the highest id is the rarest), then a two-word phrase starting at the next
# rarest (the word alone when the word after it is not a word the model has, or is the
# first phrase). Only words of 3 bytes or more count (no ASCII punctuation or digit: no HTML
# escapes); a line with none gets an empty line. Deterministic: the same model and reference give the same file.
#   sh scripts/terminology.sh model.nmt val.fr 2 > val.terms
set -eu
model=$1 ref=$2 n=${3:-2}
nmt=${NMT_BIN:-bin/nmt}
tmp=$(mktemp "${TMPDIR:-/tmp}/terms.XXXXXX")
trap 'rm -f "$tmp"' EXIT
"$nmt" vocab --model "$model" --side tgt > "$tmp" 2> /dev/null
awk -F'\t' -v n="$n" '
function word(s) { return s !~ /[!-@]|[[-`]|[{-~]/ } # no ASCII punctuation or digit: UTF-8 letters pass
NR == FNR { id[$2] = $1 + 0; next }
{
    m = split($0, w, " ")
    # the line'"'"'s words the model has, rarest first (ties: the earlier word)
    k = 0
    for (i = 1; i <= m; i++)
        if ((w[i] in id) && word(w[i]) && length(w[i]) >= 3 && !(w[i] in seen)) { seen[w[i]] = 1; k++; pos[k] = i }
    for (a = 2; a <= k; a++)
        for (b = a; b > 1 && id[w[pos[b]]] > id[w[pos[b - 1]]]; b--) { t = pos[b]; pos[b] = pos[b - 1]; pos[b - 1] = t }
    out = ""
    for (j = 1; j <= k && j <= n; j++) {
        p = w[pos[j]]
        nx = pos[j] + 1
        if (j == 2 && nx <= m && nx != pos[1] && (w[nx] in id) && word(w[nx])) p = p " " w[nx]
        out = out (j > 1 ? "\t" : "") p
    }
    print out
    delete seen
}' "$tmp" "$ref"
