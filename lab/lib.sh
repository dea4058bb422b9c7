# lib.sh: helpers the experiment scripts share (sourced; they set NMT, M and THREADS, and A,
# the en-fr gold alignments, for gold_text and aer_row; gold_text needs a UTF-8 LC_ALL).

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

# sentences that repeat a 3-gram more often than the reference does
repeats() { # hypotheses, references
    awk 'NR == FNR { ref[FNR] = $0; next }
         { split(ref[FNR], r, " "); delete rc; for (i = 1; i + 2 <= length(r); i++) rc[r[i] " " r[i+1] " " r[i+2]]++
           delete hc; bad = 0; for (i = 1; i + 2 <= NF; i++) { g = $i " " $(i+1) " " $(i+2); if (++hc[g] > 1 && hc[g] > rc[g]) bad = 1 }
           n += bad } END { print n + 0 }' "$2" "$1"
}
# share of source words (EOS left out) whose attention summed over the output is below 0.1
neglected() { # translate --alignment soft output
    awk -F' [|][|][|] ' '{ nr = split($2, rows, " ; "); delete s; nc = 0
           for (k = 1; k <= nr; k++) { nc = split(rows[k], w, " "); for (j = 1; j < nc; j++) s[j] += w[j] }
           for (j = 1; j < nc; j++) { tot++; if (s[j] < 0.1) low++ } }
         END { printf "%.1f%%", 100 * low / tot }' "$1"
}

# the gold sentences as the models read them: lowercased, and ALIBI's typographic apostrophe as
# the ASCII one that Moses' punctuation normalisation writes (token counts, so links, unchanged)
gold_text() { # set lang
    sed "s/.*/\L&/; s/’/'/g" "$A/$1/test.$2"
}
aer_row() { # label, gold set, links, [soft]
    if [ -n "$4" ]; then "$NMT" aer --gold "$A/$2/test.talp" --test "$3" --soft "$4" > "$3.aer"
    else "$NMT" aer --gold "$A/$2/test.talp" --test "$3" > "$3.aer"; fi
    awk -v l="$1" -v g="$2" '$1 == "precision" { p = $2 } $1 == "recall" { r = $2 } $1 == "AER" { a = $2 }
         $1 == "SAER" { s = $2 } END { printf "%s\t%s\t%s\t%s\t%s\t%s\n", l, g, a, (s == "" ? "-" : s), p, r }' "$3.aer"
}
