#!/bin/sh
# feng_claims.sh: lab/converge_feng.sh's `claims` reading of Feng et al.'s orderings against the
# seed spread, on rows made up here so that each verdict is known: every seed better (holds), every
# seed worse (reversed), overlapping ranges (inside the spread), one seed (said), lower-is-better
# columns (AER, shown in % as the paper), the UNK replacement's gain (after - before).
. tests/cli/lib.sh
K=$T/keep; mkdir -p "$K"
row() { # name bleu after hans_aer repeats
    printf '%s\t3.0\t%s\t%s\t100\t%s\t0.7\t0.4\t0.3\t0.7\t0.8\t0.3\t0.3\t%s\t0.5%%\n' "$@" > "$K/$1.row"
}
row rnnsearch_s1 50.0 50.5 0.62 20
row rnnsearch_s2 51.0 51.5 0.60 22
row recatt_s1 52.0 53.0 0.55 30
row recatt_s2 53.0 54.0 0.58 31
row fertdec_s1 48.0 48.1 0.63 10
row fertdec_s2 49.0 49.2 0.64 12
row markov_s1 50.5 51.0 0.61 20
row markov_s2 52.0 52.5 0.61 20
row locfer_s1 52.0 52.5 0.59 20
KEEP=$K sh lab/converge_feng.sh "$T/dir" claims > "$T/c" 2> "$T/e" && ok || bad "claims failed: $(cat "$T/e")"
# verdict MEASURE BETTER WORSE: the last column of that claim's line
verdict() { awk -F'\t' -v m="$1" -v b="$2" -v w="$3" '$1 == m && $2 == b && $3 == w { print $7 }' "$T/c"; }
is() { [ "$(verdict "$1" "$2" "$3")" = "$4" ] && ok || bad "$1 $2 > $3: '$(verdict "$1" "$2" "$3")', want '$4'"; }
is BLEU recatt rnnsearch holds
is BLEU fertdec rnnsearch reversed
is BLEU markov rnnsearch "inside the spread"
is BLEU locfer rnnsearch "holds (one seed)"
is BLEU recatt_fertdec recatt "no rows yet"
is Hansards_AER recatt rnnsearch holds
is Hansards_AER fertdec rnnsearch reversed
is UNK_repl_gain recatt rnnsearch holds
is UNK_repl_gain recatt fertdec holds
is sentences_repeating_a_3gram fertdec rnnsearch holds
# AER in %, the mean and range of RecAtt's two seeds
awk -F'\t' '$1 == "Hansards_AER" && $2 == "recatt" && $3 == "rnnsearch" { print $5 }' "$T/c" | grep -q '^56.5 \[55, 58\] (2)$' && ok || bad "AER not in %: $(grep '^Hansards_AER.recatt.rnnsearch' "$T/c")"
finish feng_claims
