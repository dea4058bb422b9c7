#!/bin/sh
# subword.sh: subword units end to end on a few hundred raw Multi30k lines: training with a
# SentencePiece unigram model stored in the model file, raw text in and raw text out (words never
# seen in training included, without <unk>), n-best lists, scores, alignments in words, the
# segmentation against Debian's spm_encode on the embedded model, BPE and joint models, existing
# models (--spm-model, made by spm_train), a resumed run identical to an uninterrupted one, and
# the bad inputs: a damaged embedded model, wrong options, text of another language.
. tests/cli/lib.sh
R=$NMT_SHARED/data/multi30k
head -n 400 "$R/train.en" > "$T/r.en"; head -n 400 "$R/train.fr" > "$T/r.fr"
head -n 20 "$R/val.en" > "$T/v.en"; head -n 20 "$R/val.fr" > "$T/v.fr"
A="--emb 16 --hid 16 --att 16 --maxout 8 --batch 20 --threads 1 --optimizer adam --lr 0.01"
SW="--subwords unigram --subword-vocab 600 --lowercase --normalize-punct --lang en,fr"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/u.nmt" $SW $A --max-updates 60 2> "$T/train.err"
check "unigram subword model written" test -s "$T/u.nmt"
grep -q "subword" "$T/train.err" && ok || bad "the training summary does not mention the subword units: $(head -c 300 "$T/train.err")"

# the vocabulary is the pieces: </s>, <unk>, then SentencePiece's pieces (▁ marks a word start)
"$NMT_BIN" vocab --model "$T/u.nmt" > "$T/vocab" 2> /dev/null
[ "$(sed -n 1p "$T/vocab")" = "$(printf '0\t</s>')" ] && [ "$(sed -n 2p "$T/vocab")" = "$(printf '1\t<unk>')" ] && ok ||
    bad "vocab --model: $(head -n 3 "$T/vocab")"
grep -q "$(printf '\t▁')" "$T/vocab" && ok || bad "vocab --model shows no ▁ pieces"
[ "$(wc -l < "$T/vocab")" -gt 300 ] && [ "$(wc -l < "$T/vocab")" -le 600 ] && ok || bad "vocab --model: $(wc -l < "$T/vocab") entries"

# raw text in, raw text out; words never seen in training are spelt in pieces or bytes, never <unk>
echo "Zygomorphic quokkas jumped über the fjord of Ålesund." > "$T/new.en"
"$NMT_BIN" segment --model "$T/u.nmt" < "$T/new.en" > "$T/new.seg"
grep -q "<unk>" "$T/new.seg" && bad "unseen words segmented into <unk>: $(cat "$T/new.seg")" || ok
grep -q "<0x" "$T/new.seg" && ok || bad "no byte piece for characters never seen: $(cat "$T/new.seg")"
"$NMT_BIN" translate --model "$T/u.nmt" --beam 3 < "$T/new.en" > "$T/new.out" 2> "$T/new.err"; rc=$?
[ "$rc" -eq 0 ] && [ "$(wc -l < "$T/new.out")" -eq 1 ] && ok || bad "translate: exit $rc, $(cat "$T/new.err")"
# (SentencePiece writes an UNK piece as " ⁇ ", never as "<unk>")
grep -q "<unk>\|⁇" "$T/new.out" && bad "<unk> in the translation: $(cat "$T/new.out")" || ok
grep -q "▁" "$T/new.out" && bad "the output is pieces, not text: $(cat "$T/new.out")" || ok

# U+2581, SentencePiece's mark for a space, read as '_' rather than as a space: a line of it alone
# came out empty, and "a▁dog" as "a dog"
printf '\342\226\201\na\342\226\201dog runs\n' | "$NMT_BIN" segment --model "$T/u.nmt" > "$T/mark.seg" 2> "$T/mark.err"
[ "$(sed -n 1p "$T/mark.seg")" != "" ] && sed -n 2p "$T/mark.seg" | grep -q "_\|<0x5F>" && ! grep -q "▁dog" "$T/mark.seg" && ok ||
    bad "U+2581 in the input: $(cat "$T/mark.seg" "$T/mark.err")"
# SentencePiece sees at most 32 KiB of a line (its memory grew with a word's length: 0.95 GB for 4 MB),
# more than the 400 pieces any command reads can cover
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "x"; print "" }' | "$NMT_BIN" segment --model "$T/u.nmt" > "$T/long.seg" 2> "$T/long.err"
n=$(awk '{ print NF }' "$T/long.seg")
[ -n "$n" ] && [ "$n" -ge 2048 ] && [ "$n" -le 32769 ] && ok || bad "a 100,000-letter word: $n pieces, $(head -c 200 "$T/long.err")"
# a vocabulary smaller than the characters of the text: SentencePiece's refusal with nmt's advice
# shellcheck disable=SC2086
expect_fail "--subword-vocab under the characters" 1 "required_chars. 300 vs [0-9]+.*raise --subword-vocab" \
    "$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/small.nmt" --subwords unigram --subword-vocab 300 $A --max-updates 1
grep -q "character_coverage" "$T/err" && bad "the message names SentencePiece's own options: $(cat "$T/err")" || ok

# n-best, scores and alignments over words
"$NMT_BIN" translate --model "$T/u.nmt" --beam 3 --n-best 3 --alignment hard < "$T/v.en" > "$T/nbest" 2> /dev/null
[ "$(grep -c '^0 ||| ' "$T/nbest")" -eq 3 ] && ok || bad "n-best: $(head -n 3 "$T/nbest")"
# every link's source index is a word of the (lowercased, normalised) source, every target index a word of the output
awk -F' \\|\\|\\| ' -v src="$T/v.en" '
    { while ((getline s < src) > 0) { n++; w[n - 1] = split(s, x, " ") } }
    { nt = split($2, y, " "); nl = split($3, l, " ");
      for (k = 1; k <= nl; k++) { split(l[k], p, "-"); if (p[1] >= w[$1] + 0 || p[2] >= nt) { print "bad link " l[k] " in: " $0; exit 1 } } }
' "$T/nbest" && ok || bad "alignment links outside the words"
"$NMT_BIN" score --model "$T/u.nmt" --src "$T/v.en" --tgt "$T/v.fr" > "$T/score" 2> "$T/score.err"
[ "$(wc -l < "$T/score")" -eq 20 ] && ! grep -qv '^-[0-9.]*	-[0-9.]*	[0-9]*$' "$T/score" && ok || bad "score: $(head -n 2 "$T/score") $(cat "$T/score.err")"
"$NMT_BIN" align --model "$T/u.nmt" --src "$T/v.en" --tgt "$T/v.fr" > "$T/links" 2> /dev/null
# Pharaoh over words: the largest target index is below the line's word count (raw words; the
# tokenizer is off, so words are blank-separated)
paste -d '|' "$T/links" "$T/v.fr" | awk -F'|' '{ n = split($2, w, " "); m = split($1, l, " ");
    if (m == 0) exit 1; for (k = 1; k <= m; k++) { split(l[k], p, "-"); if (p[2] >= n) exit 1 } }' && ok ||
    bad "align: links are not over the target's words: $(head -n 2 "$T/links")"
"$NMT_BIN" align --model "$T/u.nmt" --src "$T/v.en" --tgt "$T/v.fr" --soft > "$T/soft" 2> /dev/null
"$NMT_BIN" aer --gold "$T/links" --test "$T/links" > "$T/aer" 2>&1 && grep -q "AER" "$T/aer" && ok || bad "aer on word links: $(cat "$T/aer")"

# the heat map of a pair, in words (fontconfig's one-off leak let be, as in plot.sh)
printf 'leak:libfontconfig.so\n' > "$T/lsan.supp"
LSAN_OPTIONS="suppressions=$T/lsan.supp:print_suppressions=0" "$NMT_BIN" plot --model "$T/u.nmt" --src "$T/v.en" \
    --tgt "$T/v.fr" --line 2 --out "$T/heat" --format svg > /dev/null 2> "$T/plot.err"
check "plot of a subword model: $(head -c 200 "$T/plot.err")" test -s "$T/heat.svg"
# ... whose rows and columns are the pair's words, not its pieces: the SVG's text labels (cairo
# writes them as glyphs, but its <text> layer keeps the words) and one cell per word pair
sed -n 2p "$T/v.fr" > "$T/heat.rows"; sed -n 2p "$T/v.en" > "$T/heat.cols"
python3 - "$T/heat.svg" "$T/heat.rows" "$T/heat.cols" <<'EOF' && ok || bad "the subword heat map is not over words"
import re, sys
import xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
root = ET.parse(sys.argv[1]).getroot()
labels = {c: [t.text or '' for t in root.iter(NS + 'text') if t.get('class') == c] for c in ('row', 'col')}
rows, cols = (open(f, encoding='utf-8').read().lower().split() for f in sys.argv[2:4])  # the model lowercases
square = re.compile(r'^M ([\d.]+) ([\d.]+) L ([\d.]+) \2 L \3 ([\d.]+) L \1 \4 Z')
defs = {id(e) for d in root.iter(NS + 'defs') for e in d.iter()}
cells = [e for e in root.iter(NS + 'path') if id(e) not in defs and square.match(e.get('d') or '')
         and 'fill:none' not in (e.get('style') or '').replace(' ', '') and e.get('fill') != 'none']
err = []
if labels['row'] != rows: err.append('rows %r, the target words %r' % (labels['row'], rows))
if labels['col'] != cols: err.append('columns %r, the source words %r' % (labels['col'], cols))
if len(cells) != len(rows) * len(cols): err.append('%d cells for %d x %d words' % (len(cells), len(rows), len(cols)))
if err: sys.exit('; '.join(err))
EOF

# the segmentation is SentencePiece's own: spm_encode on the embedded model agrees (on raw text
# with no text stages of ours, a BPE model; on a joint model both sides are the one model)
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/b.nmt" --subwords bpe --subword-vocab 500 --joint $A \
    --max-updates 5 2> /dev/null
check "joint bpe model written" test -s "$T/b.nmt"
# AER against the human gold alignments of the Hansards test set: the links are over its words
# (a model without text stages: punctuation normalisation may move word boundaries, and the
# links are over the words after the model's stages)
for f in test.en test.fr test.talp; do head -n 60 "$NMT_SHARED/data/alignment/en-fr/hansards_naacl2003/$f" > "$T/h.$f"; done
H=$T/h
"$NMT_BIN" align --model "$T/b.nmt" --src "$H.test.en" --tgt "$H.test.fr" > "$T/hh" 2> /dev/null
"$NMT_BIN" aer --gold "$H.test.talp" --test "$T/hh" --src "$H.test.en" --tgt "$H.test.fr" > "$T/aer_h" 2> "$T/err"
[ $? -eq 0 ] && grep -q '^AER' "$T/aer_h" && ok || bad "nmt aer on a subword model's links: $(head -c 300 "$T/err")"
"$NMT_BIN" align --model "$T/b.nmt" --src "$H.test.en" --tgt "$H.test.fr" --soft > "$T/hs" 2> /dev/null
"$NMT_BIN" aer --gold "$H.test.talp" --soft "$T/hs" --src "$H.test.en" --tgt "$H.test.fr" > "$T/aer_s" 2> "$T/err"
[ $? -eq 0 ] && grep -q '^SAER' "$T/aer_s" && ok || bad "nmt aer --soft on a subword model's matrices: $(head -c 300 "$T/err")"

"$NMT_BIN" vocab --model "$T/b.nmt" --side src > "$T/bs" 2> /dev/null
"$NMT_BIN" vocab --model "$T/b.nmt" --side tgt > "$T/bt" 2> /dev/null
cmp -s "$T/bs" "$T/bt" && ok || bad "a joint model's sides have different vocabularies"
if command -v spm_encode > /dev/null; then
    python3 tests/cli/spm_meta.py extract "$T/b.nmt" src "$T/b.model"
    for side in src tgt; do
        f="$T/v.en"; [ $side = tgt ] && f="$T/v.fr"
        spm_encode --model "$T/b.model" --output_format=piece < "$f" > "$T/spm.$side"
        "$NMT_BIN" segment --model "$T/b.nmt" --side $side < "$f" > "$T/nmt.$side"
        cmp -s "$T/spm.$side" "$T/nmt.$side" && ok || bad "segment --side $side differs from spm_encode: $(diff "$T/spm.$side" "$T/nmt.$side" | head -n 4)"
    done
    # an existing pair of models from spm_train (its own id layout: <unk> 0, <s> 1, </s> 2)
    spm_train --input="$T/r.en" --model_prefix="$T/e" --vocab_size=400 --model_type=unigram --byte_fallback=true \
        --minloglevel=2 > /dev/null 2>&1
    spm_train --input="$T/r.fr" --model_prefix="$T/f" --vocab_size=400 --model_type=bpe --byte_fallback=true \
        --minloglevel=2 > /dev/null 2>&1
    # shellcheck disable=SC2086
    "$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/x.nmt" --spm-model "$T/e.model,$T/f.model" $A \
        --max-updates 3 2> "$T/x.err"
    check "model on existing SentencePiece models written" test -s "$T/x.nmt"
    spm_encode --model "$T/f.model" --output_format=piece < "$T/v.fr" > "$T/spm.f"
    "$NMT_BIN" segment --model "$T/x.nmt" --side tgt < "$T/v.fr" > "$T/nmt.f"
    cmp -s "$T/spm.f" "$T/nmt.f" && ok || bad "segment of a --spm-model model differs from spm_encode: $(diff "$T/spm.f" "$T/nmt.f" | head -n 4)"
    "$NMT_BIN" translate --model "$T/x.nmt" --beam 2 < "$T/v.en" > "$T/x.out" 2> /dev/null
    [ "$(wc -l < "$T/x.out")" -eq 20 ] && ok || bad "translate with a --spm-model model"
    expect_fail "a file that is no SentencePiece model" 1 "r.en is not a valid SentencePiece model" \
        "$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/y.nmt" --spm-model "$T/r.en" --max-updates 1
else
    echo "subword.sh: spm_encode missing (Debian package sentencepiece): its comparisons skipped" >&2
fi

# SentencePiece over Moses tokens: the model tokenizes raw text itself, and detokenizes its output
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/m.nmt" --subwords bpe --subword-vocab 500 \
    --tokenize en,fr --lowercase --normalize-punct $A --max-updates 5 2> /dev/null
echo "A man's bike, isn't it?" | "$NMT_BIN" segment --model "$T/m.nmt" > "$T/m.seg"
# Moses split "man's" and "bike," (no HTML escape: tokenizer.perl -no-escape)
grep -q "▁a ▁man ▁ *'" "$T/m.seg" && grep -q "▁," "$T/m.seg" && ! grep -q "&" "$T/m.seg" && ok ||
    bad "segment of a --tokenize model: $(cat "$T/m.seg")"
echo "A man's bike, isn't it?" | "$NMT_BIN" translate --model "$T/m.nmt" --beam 2 > "$T/m.out" 2> "$T/m.err" &&
    [ "$(wc -l < "$T/m.out")" -eq 1 ] && ! grep -q "&apos;\|▁" "$T/m.out" && ok || bad "translate with a --tokenize model: $(cat "$T/m.out" "$T/m.err")"

# checkpoints carry the SentencePiece models: 10 updates, then 10 more resumed, is the 20-update run
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/full.nmt" $SW $A --max-updates 20 --save-every 10 2> /dev/null
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/half.nmt" $SW $A --max-updates 10 --save-every 10 2> /dev/null
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/half.nmt" $A --max-updates 20 --save-every 10 \
    --resume "$T/half.nmt.ckpt" 2> "$T/resume.err"
cmp -s "$T/full.nmt" "$T/half.nmt" && ok || bad "resumed subword run differs from the uninterrupted one: $(tail -n 2 "$T/resume.err")"

# bad inputs
python3 tests/cli/spm_meta.py damage "$T/u.nmt" garbage "$T/bad1.nmt"
expect_fail "embedded model not a protobuf" 1 "embedded source SentencePiece model is not a valid SentencePiece model" \
    "$NMT_BIN" translate --model "$T/bad1.nmt" < "$T/new.en"
python3 tests/cli/spm_meta.py damage "$T/u.nmt" base64 "$T/bad2.nmt"
expect_fail "embedded model not base64" 1 "source SentencePiece model is not valid base64" \
    "$NMT_BIN" segment --model "$T/bad2.nmt" < "$T/new.en"
expect_fail "Moses options on a subword model" 1 "subword model reads raw text" \
    "$NMT_BIN" translate --model "$T/u.nmt" --tokenize en < "$T/new.en"
expect_fail "--subwords and --spm-model" 2 "give one of them" \
    "$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/z.nmt" --subwords bpe --spm-model "$T/r.en"
expect_fail "--vocab with --subwords" 2 "size them with --subword-vocab" \
    "$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/z.nmt" --subwords bpe --vocab 500
expect_fail "--subword-vocab alone" 2 "go with --subwords" \
    "$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/z.nmt" --subword-vocab 500
expect_fail "--normalize-punct without a language" 2 "needs the languages" \
    "$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/z.nmt" --subwords bpe --normalize-punct
expect_fail "--spm-model missing" 1 "nope.model: No such file" \
    "$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/z.nmt" --spm-model "$T/nope.model"
expect_fail "--side on a corpus" 2 "goes with --model" "$NMT_BIN" vocab --side tgt "$T/r.en"
# text of the other side, and of a language the model never saw: translated all the same
head -n 5 "$R/val.de" > "$T/v.de"
cat "$T/v.fr" "$T/v.de" > "$T/other"
"$NMT_BIN" translate --model "$T/u.nmt" --beam 2 < "$T/other" > "$T/other.out" 2> "$T/other.err"; rc=$?
[ "$rc" -eq 0 ] && [ "$(wc -l < "$T/other.out")" -eq 25 ] && ok || bad "other-language text: exit $rc, $(head -c 300 "$T/other.err")"
# nmt lex --model reads a word model's attention over words; a subword model's is over pieces,
# and the table it made was keyed by words nothing could use: refused, naming why
expect_fail "lex --model on a subword model" 1 "is a subword model" "$NMT_BIN" lex --src "$T/r.en" --tgt "$T/r.fr" \
    --model "$T/b.nmt" --out "$T/sw.lex"
finish subword
