#!/bin/sh
# marian_import.sh: `nmt convert --from marian` against Marian itself (docs/OPUS-MT.md): four tiny
# Marian-trained Transformers ($NMT_SHARED/peers/marian/vectors, README.md there) converted, then
# nmt's beam-4 n-best lists (normalize 0 and 1), 1-best, greedy output and forced scores compared
# with marian-decoder's and marian-scorer's (marian_cmp.py: the same hypotheses, scores within
# 1e-4 plus Marian's printing); alignments; raw text through the stored SentencePiece models. Without
# the shared data, the tiny Marian-format models of tests/data/marian still check the mapping. And refusals: a damaged or foreign file, an unsupported option
# named, a vocabulary that does not fit the embeddings, each with nothing written.
. tests/cli/lib.sh
V=$NMT_SHARED/peers/marian/vectors
CMP="python3 $(dirname "$0")/marian_cmp.py"
export OMP_WAIT_POLICY=PASSIVE

# ---- without the shared data: the tiny models of tests/data/marian/make_fixtures.py (the fuzz
# seeds), converted, every tensor checked against its Marian arrays (marian_map.py), translated
for f in fuzz/corpus/marian/*.bin; do
    python3 -c "import sys; d = open(sys.argv[1], 'rb').read(); i = d.index(b'\\0')
open(sys.argv[2], 'wb').write(d[:i]); open(sys.argv[3], 'wb').write(d[i + 1:])" "$f" "$T/fx.yml" "$T/fx.npz"
    rm -f "$T/fx.nmt"
    if "$NMT_BIN" convert --from marian "$T/fx.npz" --vocabs "$T/fx.yml" --model "$T/fx.nmt" 2> "$T/err" &&
        python3 "$(dirname "$0")/marian_map.py" "$f" "$T/fx.nmt" > "$T/map" && echo 'a b c' | "$NMT_BIN" translate --model "$T/fx.nmt" \
        --threads 1 > "$T/fx.out" && [ -s "$T/fx.out" ]; then ok; else bad "$f: $(cat "$T/err" "$T/map" 2>/dev/null)"; fi
done

if [ ! -f "$V/README.md" ]; then
    echo "SKIP marian_import: no $V (the Marian test vectors): the tiny models alone checked"
    finish marian_import
    exit
fi

vocabs() { # MODEL: its vocabulary files
    if [ -f "$V/$1/vocab.yml" ]; then echo "$V/$1/vocab.yml"; else echo "$V/$1/vocab.en.yml $V/$1/vocab.fr.yml"; fi
}

cmp_out() { # NAME KIND NMT MARIAN [TOL SRC]: marian_cmp.py's verdict, its counts shown
    name=$1; shift
    if $CMP "$@" > "$T/cmp" 2>&1; then ok; else bad "$name: $(cat "$T/cmp")"; fi
    echo "$name: $(tail -n 1 "$T/cmp")"
}

# --quick (the sanitizer pass): each model's n-best, forced scores and soft alignments, which run
# every path of the conversion and the search; the other comparisons repeat those paths
quick=0; [ "${1:-}" = --quick ] && quick=1
for m in a_postnorm_tiedall b_prenorm_tiedtgt c_ssru_tiedall d_guided_untied; do
    M=$T/$m.nmt O=$V/$m/out
    # shellcheck disable=SC2046
    if ! "$NMT_BIN" convert --from marian "$V/$m/model.npz" --vocabs $(vocabs $m) --model "$M" 2> "$T/conv.err"; then
        bad "$m: convert: $(cat "$T/conv.err")"
        continue
    fi
    ok
    tr() { "$NMT_BIN" translate --model "$M" --threads 1 "$@" < "$V/$m/test100.sp.en"; }
    tr --beam 4 --no-length-norm --n-best 4 > "$T/nb0" && cmp_out "$m nbest norm0" nbest "$T/nb0" "$O/nbest.b4.norm0.txt"
    "$NMT_BIN" score --model "$M" --threads 1 --src "$V/$m/test100.sp.en" --tgt "$V/$m/test100.sp.fr" > "$T/score" &&
        cmp_out "$m forced scores" score "$T/score" "$O/score.ref.txt"
    "$NMT_BIN" align --soft --model "$M" --threads 1 --src "$V/$m/test100.sp.en" --tgt "$V/$m/test100.sp.fr" > "$T/fs" &&
        cmp_out "$m forced soft alignments" fsoft "$T/fs" "$O/score.ref.align-soft.txt"
    [ $quick = 1 ] && continue
    tr --beam 4 --length-norm --n-best 4 > "$T/nb1" && cmp_out "$m nbest norm1" nbest "$T/nb1" "$O/nbest.b4.norm1.txt"
    # word scores: nmt's come from forced decoding, Marian's from its search, which for a pre-norm
    # model is not its training graph (docs/OPUS-MT.md): compared where the two are one
    if [ "$m" = b_prenorm_tiedtgt ]; then
        echo "$m word scores: not compared (pre-norm: nmt's are marian-scorer's, Marian's its decoder's; docs/OPUS-MT.md)"
    else
        tr --beam 4 --no-length-norm --n-best 4 --word-scores > "$T/ws" &&
            cmp_out "$m word scores" wscores "$T/ws" "$O/nbest.b4.norm0.wordscores.txt"
    fi
    tr --beam 4 --no-length-norm > "$T/b4" && cmp_out "$m 1-best" best "$T/b4" "$O/best.b4.norm0.txt"
    tr --beam 1 > "$T/b1" && cmp_out "$m greedy" best "$T/b1" "$O/best.b1.txt"
    # alignments: head 0 of the guided-alignment layer's encoder-decoder attention, as Marian's
    tr --beam 4 --no-length-norm --n-best 4 --alignment hard > "$T/ah" &&
        cmp_out "$m n-best hard alignments" hard "$T/ah" "$O/nbest.b4.norm0.align-hard.txt" 1e-4 "$V/$m/test100.sp.en"
    tr --beam 4 --no-length-norm --alignment soft > "$T/as" && cmp_out "$m soft alignments" soft "$T/as" "$O/best.b4.norm0.align-soft.txt"
    "$NMT_BIN" align --model "$M" --threads 1 --src "$V/$m/test100.sp.en" --tgt "$V/$m/test100.sp.fr" > "$T/fh" &&
        cmp_out "$m forced hard alignments" fhard "$T/fh" "$O/score.ref.align-hard.txt" 1e-4 "$V/$m/test100.sp.en"
done

# ---- raw text through the SentencePiece models the model stores: the same pieces as Marian's
# input (test100.sp.en is test100.en encoded by source.spm), the same translations decoded
for m in a_postnorm_tiedall b_prenorm_tiedtgt; do
    M=$T/$m.spm.nmt
    # shellcheck disable=SC2046
    if ! "$NMT_BIN" convert --from marian "$V/$m/model.npz" --vocabs $(vocabs $m) --spm "$V/$m/source.spm" "$V/$m/target.spm" \
        --model "$M" 2> "$T/conv.err"; then
        bad "$m --spm: convert: $(cat "$T/conv.err")"
        continue
    fi
    "$NMT_BIN" segment --model "$M" < "$V/data/test100.en" > "$T/seg"
    if cmp -s "$T/seg" "$V/$m/test100.sp.en"; then ok; else bad "$m --spm: nmt segment differs from test100.sp.en"; fi
    "$NMT_BIN" translate --model "$M" --threads 1 --beam 4 --no-length-norm < "$V/data/test100.en" > "$T/raw" &&
        cmp_out "$m raw text" rawbest "$T/raw" "$V/$m/out/best.b4.norm0.txt"
done

# ---- fine-tuning a converted model: an SSRU decoder trains too (its gradient:
# test_tf_gradcheck_f64), and the result translates
if [ -s "$T/c_ssru_tiedall.nmt" ]; then
    C=$V/c_ssru_tiedall
    if "$NMT_BIN" train --pretrained-model "$T/c_ssru_tiedall.nmt" --src "$C/test100.sp.en" --tgt "$C/test100.sp.fr" \
        --model "$T/ct.nmt" --max-updates 2 --batch 20 --threads 1 2> "$T/ft.err" &&
        head -n 3 "$C/test100.sp.en" | "$NMT_BIN" translate --model "$T/ct.nmt" --threads 1 > "$T/ft.out" && [ "$(wc -l < "$T/ft.out")" -eq 3 ]
    then ok; else bad "fine-tuning the SSRU model: $(tail -n 2 "$T/ft.err")"; fi
fi

# ---- refusals: the message names the problem, and no model is written
A=$V/a_postnorm_tiedall
refused() { # NAME PATTERN ARGS...: convert exits 1 with PATTERN on stderr and writes nothing
    name=$1 pat=$2; shift 2
    rm -f "$T/out.nmt"
    expect_fail "$name" 1 "$pat" "$NMT_BIN" convert --from marian "$@" --model "$T/out.nmt"
    if [ -e "$T/out.nmt" ]; then bad "$name: a model was written"; else ok; fi
}
printf 'not a zip\n' > "$T/foreign.npz"
refused "foreign file" "foreign.npz: .*(ZIP|zip)" "$T/foreign.npz" --vocabs "$A/vocab.yml"
# one byte of a tensor changed: its CRC-32 no longer holds
python3 -c "import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[len(b) // 2] ^= 0xff; open(sys.argv[2], 'wb').write(b)" \
    "$A/model.npz" "$T/damaged.npz"
refused "damaged file" "damaged.npz: .*CRC" "$T/damaged.npz" --vocabs "$A/vocab.yml"
# the archive with its model.yml edited (rewritten by Python's zipfile, CRCs and all)
edit_yml() { # FROM TO OUT: model a's archive with FROM replaced by TO in its special:model.yml
    python3 - "$A/model.npz" "$1" "$2" "$3" <<'PY'
import sys, zipfile
src, old, new, out = sys.argv[1:5]
with zipfile.ZipFile(src) as z, zipfile.ZipFile(out, "w") as w:
    for i in z.infolist():
        data = z.read(i)
        if i.filename == "special:model.yml.npy":
            head = data[:data.index(b"\n") + 1]
            body = data[len(head):].replace(old.encode(), new.encode())
            body = body.rstrip(b"\0").ljust(len(data) - len(head), b"\0")
            data = head + body
        w.writestr(i.filename, data)
PY
}
edit_yml "transformer-ffn-activation: swish" "transformer-ffn-activation: gelu" "$T/gelu.npz"
refused "gelu refused" "option transformer-ffn-activation: 'gelu' is not supported" "$T/gelu.npz" --vocabs "$A/vocab.yml"
edit_yml "transformer-postprocess: dan" "transformer-postprocess: dhn" "$T/highway.npz"
refused "highway refused" "transformer-preprocess, -postprocess, -postprocess-top" "$T/highway.npz" --vocabs "$A/vocab.yml"
edit_yml "transformer-decoder-autoreg: self-attention" "transformer-decoder-autoreg: average-attention" "$T/aan.npz"
refused "average attention refused" "option transformer-decoder-autoreg: 'average-attention' is not supported" "$T/aan.npz" \
    --vocabs "$A/vocab.yml"
edit_yml "special" "special" "$T/same.npz"
if "$NMT_BIN" convert --from marian "$T/same.npz" --vocabs "$A/vocab.yml" --model "$T/same.nmt" 2> "$T/err"; then ok
else bad "the rewritten archive itself: $(cat "$T/err")"; fi
refused "vocabulary too small" "vocab.en.yml: the source vocabulary has 3993 entries but .* embeddings have 7241 rows" \
    "$A/model.npz" --vocabs "$V/b_prenorm_tiedtgt/vocab.en.yml"
refused "vocabulary of another side" "tied-embeddings-all needs one vocabulary|has 3997 entries" \
    "$A/model.npz" --vocabs "$A/vocab.yml" "$V/b_prenorm_tiedtgt/vocab.fr.yml"
printf '</s>: 0\n<unk>: 1\na: 1\n' > "$T/bad.yml"
refused "vocabulary with a repeated id" "bad.yml:3: 'a': a bad or repeated id" "$A/model.npz" --vocabs "$T/bad.yml"
refused "a model of nmt's own" "no special:model.yml|foreign|ZIP" "$T/a_postnorm_tiedall.nmt" --vocabs "$A/vocab.yml"

finish marian_import
