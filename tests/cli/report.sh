#!/bin/sh
# report.sh: `nmt report` on Multi30k with shared/data/bleu hypotheses as systems: scores against
# `nmt bleu` on the same lines (all, No UNK, each bucket), TSV counts against awk, SVG via xml.etree
# (each system's line runs and markers in its colour, the text layer), PNG signature/IHDR/data,
# No UNK from a model and from vocabulary files, then the error cases, outputs that are inputs,
# and writes that fail half way.
. tests/cli/lib.sh
B=$NMT_SHARED/data/bleu
M=$NMT_SHARED/data/multi30k
SRC=$M/test_2016_flickr.en
REF=$B/refs/ref.fr
HA=$B/hyps/perturbed.fr
HB=$B/hyps/heavy.fr
export OMP_WAIT_POLICY=PASSIVE
N=$(wc -l < "$SRC")
# a sanitizer build: LeakSanitizer lets fontconfig's own one-off leak (its default configuration,
# loaded on a thread pango starts) be
printf 'leak:libfontconfig.so\n' > "$T/lsan.supp"
export LSAN_OPTIONS="suppressions=$T/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
cat > "$T/sv.py" <<'EOF'
# sv.py FILE: reads a chart's SVG back and prints JSON: per series colour (in drawing order), the
# runs of its line (subpaths of the strokes in that colour) and its markers (shapes filled in it),
# each counting the legend's sample too; and the text of the text layer.
import json, re, sys, xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == NS + 'svg', root.tag

def paint(e, key):
    # cairo writes colours as style properties or as attributes, depending on its version
    style = dict(kv.split(':', 1) for kv in (e.get('style') or '').replace(' ', '').split(';') if ':' in kv)
    v = style.get(key, e.get(key)) or 'none'
    m = re.match(r'rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)', v.replace(' ', ''))
    return '%02x%02x%02x' % tuple(round(float(g) * 2.55) for g in m.groups()) if m else v

defs = {id(e) for d in root.iter(NS + 'defs') for e in d.iter()}
series = {}
for e in root.iter(NS + 'path'):
    if id(e) in defs:
        continue
    stroke, fill = paint(e, 'stroke'), paint(e, 'fill')
    if fill == 'none' and stroke not in ('none', 'ffffff'):
        series.setdefault(stroke, {'runs': 0, 'markers': 0})['runs'] += (e.get('d') or '').count('M')
    elif fill not in ('none', 'ffffff') and stroke == 'ffffff':
        series.setdefault(fill, {'runs': 0, 'markers': 0})['markers'] += 1
print(json.dumps({'series': series, 'texts': [''.join(t.itertext()) for t in root.iter(NS + 'text')]}))
EOF

# the BLEU cell of LABEL's row in column COL (2 = All, 3 = No UNK) of Table 1 in FILE
cell() { awk -F' [|] ' -v l="| $1" -v c="$2" '$1 == l { sub(/ [|]$/, "", $c); print $c; exit }' "$3"; }
# a subset of lines: subset LIST FILE, LIST holding 1-based line numbers
subset() { awk 'NR == FNR { keep[$1] = 1; next } keep[FNR]' "$1" "$2"; }

# ---------------------------------------------------------------- two systems, all outputs
"$NMT_BIN" report --src "$SRC" --ref "$REF" --hyp "$HA" --hyp "$HB" --labels 'Sys A,Sys B' \
    --out "$T/r" > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 0 ] && ok || bad "report exit $rc: $(head -c 300 "$T/err")"
for f in r.tsv r.svg r.png; do check "$f written" test -s "$T/$f"; done

# Table 1 "All" equals nmt bleu on the same files, to the printed precision
for s in A B; do
    [ $s = A ] && h=$HA || h=$HB
    want=$("$NMT_BIN" bleu -b -w 2 -i "$h" "$REF")
    got=$(cell "Sys $s" 2 "$T/out")
    [ -n "$got" ] && [ "$got" = "$want" ] && ok || bad "All BLEU of Sys $s: report '$got', nmt bleu '$want'"
done
grep -q "All ($N sentences)" "$T/out" && ok || bad "sentence count of All not printed"
grep -q "No UNK: not computed" "$T/out" && ok || bad "no note about the missing No-UNK column"

# TSV: header, counts summing to the line count and matching awk's own bucketing
head -n 1 "$T/r.tsv" | grep -q "^bucket	sentences	Sys A	Sys B\$" && ok || bad "TSV header: $(head -n 1 "$T/r.tsv")"
sum=$(awk -F'\t' 'NR > 1 { s += $2 } END { print s }' "$T/r.tsv")
[ "$sum" -eq "$N" ] && ok || bad "TSV counts sum to $sum, not $N"
awk '{ b = int(NF / 10); n[b]++ } END { for (k in n) printf "%d-%d\t%d\n", 10 * k, 10 * k + 9, n[k] }' "$SRC" |
    sort > "$T/want_counts"
awk -F'\t' 'NR > 1 { print $1 "\t" $2 }' "$T/r.tsv" | sort > "$T/got_counts"
cmp -s "$T/want_counts" "$T/got_counts" && ok || bad "bucket counts differ from awk's: $(cat "$T/got_counts")"
# each bucket's BLEU equals nmt bleu on that bucket's lines alone (4 decimals, as the TSV)
rows=0
while IFS='	' read -r bucket cnt a b; do
    lo=${bucket%-*}; hi=${bucket#*-}
    awk -v lo="$lo" -v hi="$hi" 'NF >= lo && NF <= hi { print NR }' "$SRC" > "$T/lines"
    subset "$T/lines" "$REF" > "$T/bref"
    subset "$T/lines" "$HA" > "$T/bha"
    subset "$T/lines" "$HB" > "$T/bhb"
    wa=$("$NMT_BIN" bleu -b -w 4 -i "$T/bha" "$T/bref"); wb=$("$NMT_BIN" bleu -b -w 4 -i "$T/bhb" "$T/bref")
    [ "$a" = "$wa" ] && [ "$b" = "$wb" ] && ok || bad "bucket $bucket: TSV $a $b, nmt bleu $wa $wb"
    grep -q "^| $bucket | $cnt |" "$T/out" && ok || bad "bucket $bucket missing from the printed table"
    rows=$((rows + 1))
done <<EOF
$(tail -n +2 "$T/r.tsv")
EOF
[ $rows -ge 3 ] && ok || bad "only $rows buckets"

# SVG: well-formed XML; per system (Okabe-Ito blue, vermillion) one line and one marker per bucket,
# plus the legend's sample of each; the labels in the text layer
python3 "$T/sv.py" "$T/r.svg" > "$T/svg.json" 2> "$T/py" && python3 - "$T/svg.json" "$rows" >> "$T/py" 2>&1 <<'PY'
import json, sys
d, rows = json.load(open(sys.argv[1])), int(sys.argv[2])
want = {'0072b2': {'runs': 2, 'markers': rows + 1}, 'd55e00': {'runs': 2, 'markers': rows + 1}}
got = {c: d['series'].get(c) for c in want}
assert got == want, (got, want)
texts = ' | '.join(d['texts'])
for w in ('Sys A', 'Sys B', 'Sentence length (source words)', 'BLEU score', '10-19'):
    assert w in texts, w
print('svg ok')
PY
grep -q "svg ok" "$T/py" && ok || bad "SVG: $(cat "$T/py")"

# PNG: signature, IHDR (RGB, 8 bits), CRCs, and image data of the announced size
python3 - "$T/r.png" > "$T/py" 2>&1 <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], 'rb').read()
assert d[:8] == b'\x89PNG\r\n\x1a\n', 'signature'
pos, idat, chunks = 8, b'', []
while pos < len(d):
    n, = struct.unpack('>I', d[pos:pos + 4]); t = d[pos + 4:pos + 8]; c = d[pos + 8:pos + 8 + n]
    crc, = struct.unpack('>I', d[pos + 8 + n:pos + 12 + n])
    assert zlib.crc32(t + c) & 0xffffffff == crc, 'CRC of ' + t.decode()
    chunks.append(t); pos += 12 + n
    if t == b'IHDR': w, h, depth, ctype = struct.unpack('>IIBB', c[:10])
    if t == b'IDAT': idat += c
assert chunks[0] == b'IHDR' and chunks[-1] == b'IEND', chunks
assert 400 <= w <= 4000 and 300 <= h <= 4000 and depth == 8 and ctype == 2, (w, h, depth, ctype)
raw = zlib.decompress(idat)
assert len(raw) == h * (1 + 3 * w), len(raw)
print('png ok', w, h)
PY
grep -q "png ok" "$T/py" && ok || bad "PNG: $(cat "$T/py")"

# ---------------------------------------------------------------- an empty bucket, said so
awk 'BEGIN { for (i = 0; i < 64; i++) printf "w "; print "." }' > "$T/long"
cat "$SRC" "$T/long" > "$T/src65"
{ cat "$REF"; echo "une phrase ."; } > "$T/ref65"
{ cat "$HA"; echo "une phrase ."; } > "$T/ha65"
"$NMT_BIN" report --src "$T/src65" --ref "$T/ref65" --hyp "$T/ha65" --out "$T/e" > "$T/out" 2> "$T/err"
[ $? -eq 0 ] && ok || bad "report with a 65-word line: $(cat "$T/err")"
grep -q "^Empty buckets.*40-49, 50-59" "$T/out" && ok || bad "empty buckets not named: $(grep -i empty "$T/out")"
grep -q "^60-69	1	" "$T/e.tsv" && ok || bad "60-69 missing from the TSV"
grep -q "^40-49" "$T/e.tsv" && bad "empty bucket in the TSV" || ok
# the line breaks across the gap: two runs for the one system (and the legend's), five markers
python3 "$T/sv.py" "$T/e.svg" > "$T/e.json"
python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['series']; sys.exit(s.get('0072b2') != {'runs': 3, 'markers': 6})" \
    "$T/e.json" && ok || bad "line not broken at the empty buckets, or markers missing: $(cat "$T/e.json")"
grep -q "^| ha65 | " "$T/out" && ok || bad "default label is not the file name"

# default labels: the file names, whole paths where two would be the same
mkdir -p "$T/a" "$T/b"; cp "$HA" "$T/a/test.out"; cp "$HB" "$T/b/test.out"
"$NMT_BIN" report --src "$SRC" --ref "$REF" --hyp "$T/a/test.out" --hyp "$T/b/test.out" > "$T/out" 2>&1
grep -q "^| $T/a/test.out | " "$T/out" && grep -q "^| $T/b/test.out | " "$T/out" && ok ||
    bad "same file names not told apart: $(grep '^| ' "$T/out" | head -n 4)"

# ---------------------------------------------------------------- No UNK with vocabulary files
"$NMT_BIN" vocab --size 2000 "$M/train.en" > "$T/sv" 2> /dev/null
"$NMT_BIN" vocab --size 2000 "$M/train.fr" > "$T/tv" 2> /dev/null
# the subset, computed here: every word of source and reference among the vocabulary's words
python3 - "$T/sv" "$T/tv" "$SRC" "$REF" > "$T/known" <<'PY'
import sys
def words(p): return {l.rstrip('\n').split('\t')[1] for l in open(p, encoding='utf-8')} - {'<unk>', '</s>'}
sv, tv = words(sys.argv[1]), words(sys.argv[2])
blank = ' \t\r\v\f'
def split(l): return [w for w in l.replace('\t', ' ').replace('\r', ' ').replace('\v', ' ').replace('\f', ' ').split(' ') if w]
src = open(sys.argv[3], encoding='utf-8').read().split('\n')[:-1]
ref = open(sys.argv[4], encoding='utf-8').read().split('\n')[:-1]
for i, (s, r) in enumerate(zip(src, ref)):
    if all(w in sv for w in split(s)) and all(w in tv for w in split(r)): print(i + 1)
PY
K=$(wc -l < "$T/known")
[ "$K" -gt 10 ] && [ "$K" -lt "$N" ] && ok || bad "python found $K known sentences"
"$NMT_BIN" report --src "$SRC" --ref "$REF" --hyp "$HA" --hyp "$HB" --labels A,B --src-vocab-file "$T/sv" --tgt-vocab-file "$T/tv" \
    --hyp-nounk "$B/hyps/perfect.fr" --hyp-nounk "$HB" > "$T/out" 2> "$T/err"
[ $? -eq 0 ] && ok || bad "report with vocabularies: $(cat "$T/err")"
grep -q "No UNK ($K sentences)" "$T/out" && ok || bad "No-UNK count: $(grep 'No UNK (' "$T/out"), python $K"
[ "$(cell A 3 "$T/out")" = "100.00" ] && ok || bad "No UNK of A (perfect --hyp-nounk): $(cell A 3 "$T/out")"
subset "$T/known" "$REF" > "$T/kref"; subset "$T/known" "$HB" > "$T/khb"
want=$("$NMT_BIN" bleu -b -w 2 "$T/kref" < "$T/khb")
[ "$(cell B 3 "$T/out")" = "$want" ] && ok || bad "No UNK of B: $(cell B 3 "$T/out"), nmt bleu on the subset $want"
grep -q "the --hyp-nounk files" "$T/out" && ok || bad "--hyp-nounk use not said"
"$NMT_BIN" report --src "$SRC" --ref "$REF" --hyp "$HA" --src-vocab-file "$T/sv" --tgt-vocab-file "$T/tv" > "$T/out2" 2> "$T/err"
"$NMT_BIN" report --src "$SRC" --ref "$REF" --hyp "$HA" --src-vocab "$T/sv" --tgt-vocab "$T/tv" > "$T/out2old" 2> "$T/err2old"
cmp -s "$T/out2" "$T/out2old" && ok || bad "--src-vocab/--tgt-vocab (old spellings) change the report"
grep -q "nmt report: warning: --src-vocab is an old spelling: use --src-vocab-file" "$T/err2old" && ok || bad "--src-vocab: no warning"
grep -q "the normal --hyp files (no --hyp-nounk given)" "$T/out2" && ok || bad "fallback to --hyp not said"
# a plain word list (second column) gives the same subset
cut -f 2 "$T/sv" > "$T/sv.plain"; cut -f 2 "$T/tv" > "$T/tv.plain"
"$NMT_BIN" report --src "$SRC" --ref "$REF" --hyp "$HA" --src-vocab-file "$T/sv.plain" --tgt-vocab-file "$T/tv.plain" > "$T/out3" 2>&1
grep -q "No UNK ($K sentences)" "$T/out3" && ok || bad "plain word lists: $(grep 'No UNK (' "$T/out3")"

# ---------------------------------------------------------------- No UNK from a model's vocabularies
head -n 400 "$M/train.en" > "$T/s400"; head -n 400 "$M/train.fr" > "$T/t400"
"$NMT_BIN" train --src "$T/s400" --tgt "$T/t400" --model "$T/m.nmt" --emb 4 --hid 4 --att 4 --maxout 2 --vocab 300 \
    --batch 20 --max-updates 1 --threads 1 2> "$T/train.log"
check "tiny model trained" test -s "$T/m.nmt"
"$NMT_BIN" vocab --size 300 "$T/s400" > "$T/sv300" 2> /dev/null
"$NMT_BIN" vocab --size 300 "$T/t400" > "$T/tv300" 2> /dev/null
"$NMT_BIN" report --src "$SRC" --ref "$REF" --hyp "$HA" --unk-vocab "$T/m.nmt" > "$T/om" 2> "$T/err"
[ $? -eq 0 ] && ok || bad "report --unk-vocab: $(cat "$T/err")"
"$NMT_BIN" report --src "$SRC" --ref "$REF" --hyp "$HA" --src-vocab-file "$T/sv300" --tgt-vocab-file "$T/tv300" > "$T/ov" 2>&1
km=$(grep -o 'No UNK ([0-9]* sentences)' "$T/om"); kv=$(grep -o 'No UNK ([0-9]* sentences)' "$T/ov")
[ -n "$km" ] && [ "$km" = "$kv" ] && ok || bad "model '$km' vs vocabulary files '$kv'"
grep -q "vocabularies of the model .*m.nmt (300 source, 300 target entries)" "$T/om" && ok || bad "model not named"

# ---------------------------------------------------------------- errors
R="$NMT_BIN report"
expect_fail "no --hyp" 2 "no --hyp file" $R --src "$SRC" --ref "$REF"
expect_fail "no --src" 2 "--src and --ref are required" $R --ref "$REF" --hyp "$HA"
expect_fail "labels count" 2 "--labels gives 3 labels for 2 systems" $R --src "$SRC" --ref "$REF" --hyp "$HA" --hyp "$HB" --labels a,b,c
expect_fail "empty label" 2 "label 2 is empty" $R --src "$SRC" --ref "$REF" --hyp "$HA" --hyp "$HB" --labels a,
expect_fail "nounk count" 2 "1 --hyp-nounk file for 2 --hyp files" $R --src "$SRC" --ref "$REF" --hyp "$HA" --hyp "$HB" \
    --hyp-nounk "$HA" --unk-vocab "$T/m.nmt"
expect_fail "nounk without vocab" 2 "--hyp-nounk needs a vocabulary" $R --src "$SRC" --ref "$REF" --hyp "$HA" --hyp-nounk "$HA"
expect_fail "half vocab" 2 "--src-vocab-file and --tgt-vocab-file go together" $R --src "$SRC" --ref "$REF" --hyp "$HA" --src-vocab-file "$T/sv"
expect_fail "both vocab kinds" 2 "either --unk-vocab or" $R --src "$SRC" --ref "$REF" --hyp "$HA" --unk-vocab "$T/m.nmt" \
    --src-vocab-file "$T/sv" --tgt-vocab-file "$T/tv"
expect_fail "bad tokenizer" 2 "--tokenize 'zh'" $R --src "$SRC" --ref "$REF" --hyp "$HA" --tokenize zh
expect_fail "unknown option" 2 "unknown option '--bogus'" $R --src "$SRC" --ref "$REF" --hyp "$HA" --bogus 1
expect_fail "missing value" 2 "--out needs a value" $R --src "$SRC" --ref "$REF" --hyp "$HA" --out
expect_fail "missing file" 1 "$T/nope.fr: No such file" $R --src "$SRC" --ref "$REF" --hyp "$T/nope.fr"
head -n 999 "$HB" > "$T/h999"
expect_fail "hyp lines" 1 "$T/h999 \(--hyp\) has 999 lines but .*test_2016_flickr.en \(--src\) has 1000" \
    $R --src "$SRC" --ref "$REF" --hyp "$HA" --hyp "$T/h999"
expect_fail "nounk lines" 1 "h999 \(--hyp-nounk\) has 999 lines" $R --src "$SRC" --ref "$REF" --hyp "$HA" \
    --hyp-nounk "$T/h999" --src-vocab-file "$T/sv" --tgt-vocab-file "$T/tv"
head -n 10 "$REF" > "$T/r10"
expect_fail "ref lines" 1 "r10 \(--ref\) has 10 lines but .* has 1000" $R --src "$SRC" --ref "$T/r10" --hyp "$HA"
{ head -n 2 "$HA"; printf 'un \377 chat\n'; tail -n +4 "$HA"; } > "$T/bad.fr"
expect_fail "invalid UTF-8" 1 "bad.fr:3: invalid UTF-8" $R --src "$SRC" --ref "$REF" --hyp "$T/bad.fr"
expect_fail "invalid UTF-8 in the reference" 1 "bad.fr:3: invalid UTF-8" $R --src "$SRC" --ref "$T/bad.fr" --hyp "$HA"
expect_fail "invalid UTF-8 in the source" 1 "bad.fr:3: invalid UTF-8" $R --src "$T/bad.fr" --ref "$REF" --hyp "$HA"
: > "$T/empty"
expect_fail "empty source" 1 "has no lines" $R --src "$T/empty" --ref "$T/empty" --hyp "$T/empty"
expect_fail "bad model" 1 "--unk-vocab: .*sv" $R --src "$SRC" --ref "$REF" --hyp "$HA" --unk-vocab "$T/sv"
printf 'a\nb\na\n' > "$T/dup.vocab"
expect_fail "repeated vocabulary word" 1 "dup.vocab:3: 'a' repeated \(first at line 1\)" $R --src "$SRC" --ref "$REF" \
    --hyp "$HA" --src-vocab-file "$T/dup.vocab" --tgt-vocab-file "$T/tv"
expect_fail "unwritable output" 1 "$T/no/dir/x.tsv" $R --src "$SRC" --ref "$REF" --hyp "$HA" --out "$T/no/dir/x"
expect_fail "bad font" 1 "--font" $R --src "$SRC" --ref "$REF" --hyp "$HA" --out "$T/f" --font "$T/sv"

# ---------------------------------------------------------------- outputs: never an input, replaced whole
cp "$HA" "$T/sys.tsv"
expect_fail "--out PREFIX.tsv = a --hyp file" 1 "sys.tsv is both a --hyp file \(read\) and the figure's TSV \(written\)" \
    $R --src "$SRC" --ref "$REF" --hyp "$T/sys.tsv" --out "$T/sys"
cmp -s "$T/sys.tsv" "$HA" && ok || bad "report overwrote its --hyp file"
[ ! -e "$T/sys.svg" ] && ok || bad "a refused report wrote its figure"
cp "$REF" "$T/ref.fr"; ln -s "$T/ref.fr" "$T/lnk.png" # a copy: a broken build must not write into shared data
expect_fail "--out PREFIX.png = a link to the reference" 1 "lnk.png is both the reference \(read\) and the figure's PNG" \
    $R --src "$SRC" --ref "$T/ref.fr" --hyp "$HA" --out "$T/lnk"
cmp -s "$T/ref.fr" "$REF" && [ ! -e "$T/lnk.tsv" ] && ok || bad "a refused report wrote through the link"
# A write that fails half way (a full disk; here a file-size limit of 1 KiB) leaves the previous
# files as they were and no temporary: first the TSV (labels long enough to pass the limit), then
# the SVG (the TSV, small, is written, identical to the old one).
for f in tsv svg png; do cp "$T/r.$f" "$T/keep.$f"; done
long=$(awk 'BEGIN { for (i = 0; i < 600; i++) printf "x" }')
limited() { sh -c "trap '' XFSZ; ulimit -f 2; exec \"\$@\" > /dev/null" limited "$@"; }
expect_fail "a TSV write that fails" 1 "r\.tsv: .*File too large" \
    limited "$NMT_BIN" report --src "$SRC" --ref "$REF" --hyp "$HA" --hyp "$HB" --labels "A$long,B$long" --out "$T/r"
cmp -s "$T/r.tsv" "$T/keep.tsv" && ok || bad "a failed TSV write changed r.tsv ($(wc -c < "$T/r.tsv") bytes)"
expect_fail "an SVG write that fails" 1 "r\.svg: .*File too large" \
    limited "$NMT_BIN" report --src "$SRC" --ref "$REF" --hyp "$HA" --hyp "$HB" --labels 'Sys A,Sys B' --out "$T/r"
for f in tsv svg png; do cmp -s "$T/r.$f" "$T/keep.$f" && ok || bad "a failed write changed r.$f ($(wc -c < "$T/r.$f") bytes)"; done
[ -z "$(ls "$T" | grep '\.tmp\.')" ] && ok || bad "a failed write left a temporary: $(ls "$T" | grep '\.tmp\.')"
"$NMT_BIN" report --help > "$T/help" 2>&1 && grep -q "^Usage: nmt report" "$T/help" && ok || bad "--help"

finish report
