#!/bin/sh
# marian_import.sh: `nmt convert --from marian` against Marian itself (docs/OPUS-MT.md): four tiny
# Marian-trained Transformers ($NMT_SHARED/peers/marian/vectors, README.md there) converted, then
# nmt's beam-4 n-best lists (normalize 0 and 1), 1-best, greedy output and forced scores compared
# with marian-decoder's and marian-scorer's (marian_cmp.py: the same hypotheses, scores within
# 1e-4 plus Marian's printing). And refusals: a damaged or foreign file, an unsupported option
# named, a vocabulary that does not fit the embeddings, each with nothing written.
. tests/cli/lib.sh
V=$NMT_SHARED/peers/marian/vectors
CMP="python3 $(dirname "$0")/marian_cmp.py"
if [ ! -f "$V/README.md" ]; then
    echo "SKIP marian_import: no $V (the Marian test vectors)"
    finish marian_import
    exit
fi
export OMP_WAIT_POLICY=PASSIVE

vocabs() { # MODEL: its vocabulary files
    if [ -f "$V/$1/vocab.yml" ]; then echo "$V/$1/vocab.yml"; else echo "$V/$1/vocab.en.yml $V/$1/vocab.fr.yml"; fi
}

cmp_out() { # NAME KIND NMT MARIAN [TOL SRC]: marian_cmp.py's verdict, its counts shown
    name=$1; shift
    if $CMP "$@" > "$T/cmp" 2>&1; then ok; else bad "$name: $(cat "$T/cmp")"; fi
    echo "$name: $(tail -n 1 "$T/cmp")"
}

for m in a_postnorm_tiedall b_prenorm_tiedtgt d_guided_untied; do
    M=$T/$m.nmt O=$V/$m/out
    # shellcheck disable=SC2046
    if ! "$NMT_BIN" convert --from marian "$V/$m/model.npz" --vocabs $(vocabs $m) --model "$M" 2> "$T/conv.err"; then
        bad "$m: convert: $(cat "$T/conv.err")"
        continue
    fi
    ok
    tr() { "$NMT_BIN" translate --model "$M" --threads 1 "$@" < "$V/$m/test100.sp.en"; }
    tr --beam 4 --no-length-norm --n-best 4 > "$T/nb0" && cmp_out "$m nbest norm0" nbest "$T/nb0" "$O/nbest.b4.norm0.txt"
    tr --beam 4 --length-norm --n-best 4 > "$T/nb1" && cmp_out "$m nbest norm1" nbest "$T/nb1" "$O/nbest.b4.norm1.txt"
    tr --beam 4 --no-length-norm > "$T/b4" && cmp_out "$m 1-best" best "$T/b4" "$O/best.b4.norm0.txt"
    tr --beam 1 > "$T/b1" && cmp_out "$m greedy" best "$T/b1" "$O/best.b1.txt"
    "$NMT_BIN" score --model "$M" --threads 1 --src "$V/$m/test100.sp.en" --tgt "$V/$m/test100.sp.fr" > "$T/score" &&
        cmp_out "$m forced scores" score "$T/score" "$O/score.ref.txt"
    # alignments: head 0 of the guided-alignment layer's encoder-decoder attention, as Marian's
    tr --beam 4 --no-length-norm --n-best 4 --alignment hard > "$T/ah" &&
        cmp_out "$m n-best hard alignments" hard "$T/ah" "$O/nbest.b4.norm0.align-hard.txt" 1e-4 "$V/$m/test100.sp.en"
    tr --beam 4 --no-length-norm --alignment soft > "$T/as" && cmp_out "$m soft alignments" soft "$T/as" "$O/best.b4.norm0.align-soft.txt"
    "$NMT_BIN" align --model "$M" --threads 1 --src "$V/$m/test100.sp.en" --tgt "$V/$m/test100.sp.fr" > "$T/fh" &&
        cmp_out "$m forced hard alignments" fhard "$T/fh" "$O/score.ref.align-hard.txt" 1e-4 "$V/$m/test100.sp.en"
    "$NMT_BIN" align --soft --model "$M" --threads 1 --src "$V/$m/test100.sp.en" --tgt "$V/$m/test100.sp.fr" > "$T/fs" &&
        cmp_out "$m forced soft alignments" fsoft "$T/fs" "$O/score.ref.align-soft.txt"
done

finish marian_import
