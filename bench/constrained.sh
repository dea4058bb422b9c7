#!/bin/sh
# constrained.sh MODEL [DIR]: prefix-constrained and lexically constrained decoding against plain
# beam search: speed, BLEU and the constraints met. A terminology set is built from the dev set's
# references (scripts/terminology.sh: per line the rarest word the model knows, and a two-word
# phrase from the next rarest), and the dev set is translated at beam BEAM three ways: plain;
# with the terminology set as --constraints; with the reference's first two words (those the model has) as --prefix.
# Each run's seconds, sentences per second, BLEU (sacreBLEU's, tokenize none: the text is
# tokenized) and the phrases found in the output (scripts/constraints_met.sh) go to DIR/table.tsv
# (default build/constrained). Rebuild the terminology set alone with
#   NMT_BIN=bin/nmt sh scripts/terminology.sh MODEL ../shared/data/multi30k/tok/val.fr 2 > val.terms
#   THREADS=2 BEAM=5 sh bench/constrained.sh MODEL
# SHORTLIST=TABLE[,K[,F]] adds plain and constrained runs in int8 over that shortlist (the
# phrases' words join each batch's set).
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NMT=${NMT:-$ROOT/bin/nmt}
THREADS=${THREADS:-2}
BEAM=${BEAM:-5}
DATA=${NMT_SHARED:-$ROOT/../shared}/data/multi30k/tok
SRC=${SRC:-$DATA/val.en}
REF=${REF:-$DATA/val.fr}
MODEL=$1
[ -s "$MODEL" ] || { sed -n '2,11p' "$0"; exit 2; }
DIR=${2:-$ROOT/build/constrained}
mkdir -p "$DIR"
export OMP_WAIT_POLICY=PASSIVE
NMT_BIN=$NMT sh "$ROOT/scripts/terminology.sh" "$MODEL" "$REF" 2 > "$DIR/terms"
"$NMT" vocab --model "$MODEL" --side tgt > "$DIR/vocab" 2> /dev/null
awk -F'\t' 'NR == FNR { v[$2] = 1; next } { split($0, w, " "); print (w[1] in v) ? ((w[2] in v) ? w[1] " " w[2] : w[1]) : "" }' \
    "$DIR/vocab" "$REF" > "$DIR/prefix"
TR="$NMT translate --model $MODEL --beam $BEAM --threads $THREADS --input $SRC"

# run NAME OPTIONS...: translates into DIR/NAME.out, one row of the table
run() {
    name=$1; shift
    t0=$(date +%s.%N)
    $TR "$@" > "$DIR/$name.out" 2> "$DIR/$name.err"
    t1=$(date +%s.%N)
    bleu=$("$NMT" bleu --tokenize none -b -i "$DIR/$name.out" "$REF")
    met=$(sh "$ROOT/scripts/constraints_met.sh" "$DIR/terms" "$DIR/$name.out")
    starts=$(awk 'NR == FNR { p[FNR] = $0; next } p[FNR] != "" { n++; if (index($0 " ", p[FNR] " ") == 1) k++ }
        END { print k + 0 "/" n + 0 }' "$DIR/prefix" "$DIR/$name.out")
    echo "$name $t0 $t1 $bleu $met $starts" |
        awk -v n="$(wc -l < "$SRC")" -v beam="$BEAM" '{ s = $3 - $2; printf "%s\t%d\t%.1f\t%.1f\t%s\t%d/%d\t%d/%d\t%s\n",
            $1, beam, s, n / s, $4, $8, $6, $12, $10, $13 }'
}
{
    printf 'run\tbeam\tseconds\tsent/s\tBLEU\tphrases met\tall met\tstarts with prefix\n'
    run plain
    run constrained --constraints "$DIR/terms"
    run prefix --prefix "$DIR/prefix"
    if [ -n "$SHORTLIST" ]; then
        run int8_shortlist --precision int8 --shortlist "$SHORTLIST"
        run int8_shortlist_constrained --precision int8 --shortlist "$SHORTLIST" --constraints "$DIR/terms"
    fi
} > "$DIR/table.tsv"
cat "$DIR/table.tsv"
