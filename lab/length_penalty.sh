#!/bin/sh
# length_penalty.sh: issue 21's brevity question (is RNNencdec's short output the model or the
# search?) past on/off: each trained wmt_enfr model of converge_bahdanau.sh decodes newstest2013
# at beam 12 with the length penalty ALPHA (nmt translate --length-penalty: log-probability /
# length^ALPHA; 0 is no normalisation, 1 the default) for each ALPHA in ALPHAS, and its corpus BLEU,
# brevity penalty and length ratio go to KEEP/NAME.alpha.tsv. Resumable: a finished decoding is kept.
#   lab/length_penalty.sh DIR NAME...
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NMT=${NMT:-$ROOT/bin/nmt}
THREADS=${THREADS:-1}
KEEP=${KEEP:-$ROOT/lab/runs/lengths}
ALPHAS=${ALPHAS:-0 0.5 1 1.5 2}
export OMP_WAIT_POLICY=PASSIVE
DIR=$1
[ -n "$DIR" ] && [ $# -ge 2 ] || { sed -n '2,7p' "$0"; exit 2; }
shift
D=$DIR/data
for n in "$@"; do
    [ -s "$KEEP/$n.tsv" ] || { echo "$n: not trained to the end yet" >&2; exit 1; }
    for a in $ALPHAS; do
        o=$DIR/$n.alpha$a
        [ -s "$o" ] && [ "$(wc -l < "$o")" = "$(wc -l < "$D/test.en")" ] && continue
        "$NMT" translate --model "$DIR/$n.nmt" --beam 12 --threads "$THREADS" --length-penalty "$a" < "$D/test.en" > "$o.tmp" 2> "$o.err"
        mv "$o.tmp" "$o"
    done
    { printf 'alpha\tbleu\tbp\tratio\n'
      for a in $ALPHAS; do
          "$NMT" bleu --tokenize none -i "$DIR/$n.alpha$a" "$D/test.fr" |
              awk -v a="$a" '{ for (i = 1; i <= NF; i++) { if ($i == "=" && !got) { b = $(i + 1); got = 1 } if ($i == "(BP") bp = $(i + 2); if ($i == "ratio") r = $(i + 2) }
                              printf "%s\t%s\t%s\t%s\n", a, b, bp, r }'
      done; } > "$KEEP/$n.alpha.tsv"
    cat "$KEEP/$n.alpha.tsv"
done
