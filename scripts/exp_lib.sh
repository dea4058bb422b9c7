# exp_lib.sh: helpers the experiment scripts share (sourced; they set NMT, M and THREADS).

# unk_rate VOCAB TEXT: the share of TEXT's tokens that are not lines of VOCAB
unk_rate() {
    awk 'NR == FNR { v[$0] = 1; next } { for (i = 1; i <= NF; i++) { n++; if (!($i in v)) u++ } }
         END { printf "%.1f%%", 100 * u / n }' "$1" "$2"
}

# ibm_lexicon DIR: DIR/ibm.lex, the UNK-replacement table from the IBM aligner (Model 1 + diagonal
# prior, grow-diag-final-and) on Multi30k's training set; made once
ibm_lexicon() {
    [ -s "$1/ibm.lex" ] && return 0
    "$NMT" ibm --src $M/train.en --tgt $M/train.fr --sym gdfa --threads "$THREADS" > "$1/ibm.links" 2> /dev/null
    "$NMT" lex --src $M/train.en --tgt $M/train.fr --align "$1/ibm.links" --out "$1/ibm.lex" 2> /dev/null
}
