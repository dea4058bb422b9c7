#!/bin/sh
# plot.sh: `nmt plot` end to end on a small trained model. Every SVG is parsed with Python's XML
# parser (labels from its text layer, cells from cairo's filled squares) and every PNG decoded by
# a Python reader written here (signature, chunk CRCs, IHDR, inflate, filters), then compared:
# labels equal the words of the input, the SVG cells' greys equal round(255 x weight) of
# `nmt align --soft`, and the PNG pixels equal the SVG cells. PDFs are checked for header, one
# page and size. Then odd tokens, an 80-word pair, EOS, --matrix, formats, every error exit,
# outputs that are inputs, and writes that fail half way.
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
export OMP_WAIT_POLICY=PASSIVE
# a sanitizer build: LeakSanitizer lets fontconfig's own one-off leak be (see the valgrind case)
printf 'leak:libfontconfig.so\n' > "$T/lsan.supp"
export LSAN_OPTIONS="suppressions=$T/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
model tiny "$T/m.nmt"
check "model trained" test -s "$T/m.nmt"
model tiny-enc "$T/e.nmt"
check "RNNencdec model trained" test -s "$T/e.nmt"

cat > "$T/pc.py" <<'EOF'
# pc.py: reads plots back. svg FILE: prints JSON {w, h, title, rows, cols, cells: [[x, y, size,
# grey]...], row_y, col_x, font}; png FILE [SVG]: checks the file and prints {w, h} (and with
# SVG, the pixels at the centres of that SVG's cells); pdf FILE: checks it, prints {w, h, pages}.
import json, re, struct, sys, zlib
import xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
RECT = re.compile(r'^M ([\d.]+) ([\d.]+) L ([\d.]+) \2 L \3 ([\d.]+) L \1 \4 Z')

def fill_of(e):
    # cairo writes the colour as a style property or as an attribute, depending on its version
    style = dict(kv.split(':', 1) for kv in (e.get('style') or '').replace(' ', '').split(';') if ':' in kv)
    return style.get('fill', e.get('fill'))

def grey(f):
    m = re.match(r'rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)', f.replace(' ', ''))
    assert m and m.group(1) == m.group(2) == m.group(3), f
    return round(float(m.group(1)) * 255 / 100)

def svg(path):
    root = ET.parse(path).getroot()
    assert root.tag == NS + 'svg', root.tag
    out = {'w': int(root.get('width').replace('px', '')), 'h': int(root.get('height').replace('px', ''))}
    texts = {c: [t for t in root.iter(NS + 'text') if t.get('class') == c] for c in ('title', 'row', 'col')}
    out['title'] = texts['title'][0].text if texts['title'] else None
    out['rows'] = [t.text or '' for t in texts['row']]
    out['row_y'] = [float(t.get('y')) for t in texts['row']]
    out['cols'] = [t.text or '' for t in texts['col']]
    out['col_x'] = [float(t.get('x')) for t in texts['col']]
    out['font'] = float(texts['row'][0].get('font-size'))
    defs = {id(e) for d in root.iter(NS + 'defs') for e in d.iter()}
    cells = []
    for e in root.iter(NS + 'path'):
        f, m = fill_of(e), RECT.match(e.get('d') or '')
        if id(e) in defs or not m or not f or f == 'none':
            continue
        x0, y0, x1, y1 = (float(v) for v in m.groups())
        assert x1 - x0 == y1 - y0, 'a cell that is not square'
        cells.append([int(x0), int(y0), int(x1 - x0), grey(f)])
    out['cells'] = cells
    return out

def png(path, full):
    d = open(path, 'rb').read()
    assert d[:8] == b'\x89PNG\r\n\x1a\n', 'bad signature'
    pos, chunks = 8, []
    while pos < len(d):
        n, = struct.unpack('>I', d[pos:pos + 4])
        typ, data = d[pos + 4:pos + 8], d[pos + 8:pos + 8 + n]
        crc, = struct.unpack('>I', d[pos + 8 + n:pos + 12 + n])
        assert zlib.crc32(typ + data) & 0xffffffff == crc, 'bad CRC in ' + str(typ)
        chunks.append((typ, data))
        pos += 12 + n
    assert chunks[0][0] == b'IHDR' and chunks[-1][0] == b'IEND', 'chunk order'
    w, h, depth, ctype, comp, filt, inter = struct.unpack('>IIBBBBB', chunks[0][1])
    assert depth == 8 and ctype in (0, 2, 6) and comp == 0 and filt == 0 and inter == 0, 'not 8-bit grey or RGB'
    bpp = {0: 1, 2: 3, 6: 4}[ctype]
    raw = zlib.decompress(b''.join(c for t, c in chunks if t == b'IDAT'))
    stride = w * bpp
    assert len(raw) == h * (stride + 1), 'image data size'
    if not full:
        return {'w': w, 'h': h}, None
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            else: assert f == 0, 'filter %d' % f
        rows.append(line)
        prev = line
    def at(x, y):
        px = rows[y][x * bpp:x * bpp + min(bpp, 3)]
        assert len(set(px)) == 1, 'a cell pixel that is not grey: %r' % (px,)
        return px[0]
    return {'w': w, 'h': h}, at

def pdf(path):
    d = open(path, 'rb').read()
    assert d[:5] == b'%PDF-' and b'%%EOF' in d[-32:], 'not a PDF'
    box = re.search(rb'/MediaBox \[ 0 0 ([\d.]+) ([\d.]+) \]', d)
    return {'pages': len(re.findall(rb'/Type /Page[^s]', d)), 'w': float(box.group(1)), 'h': float(box.group(2))}

if sys.argv[1] == 'svg':
    print(json.dumps(svg(sys.argv[2]), ensure_ascii=False))
elif sys.argv[1] == 'pdf':
    print(json.dumps(pdf(sys.argv[2])))
else:
    info, at = png(sys.argv[2], len(sys.argv) > 3)
    if at is not None:
        info['centres'] = [at(x + s // 2, y + s // 2) for x, y, s, g in svg(sys.argv[3])['cells']]
    print(json.dumps(info))
EOF
PC="python3 $T/pc.py"

# plots PREFIX ROWS_FILE COLS_FILE: the SVG parses, its labels are those words, the PNG is valid,
# the same size, and its pixels at the cell centres are the SVG's greys.
plots() {
    $PC svg "$1.svg" > "$1.svgjson" 2> "$T/pyerr" || { bad "$1.svg does not parse: $(cat "$T/pyerr")"; return; }
    ok
    $PC png "$1.png" "$1.svg" > "$1.pngjson" 2> "$T/pyerr" || { bad "$1.png is not a valid PNG: $(cat "$T/pyerr")"; return; }
    ok
    python3 - "$1.svgjson" "$1.pngjson" "$2" "$3" <<'EOF' && ok || bad "$1: labels or pixels differ"
import json, sys
s, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rows = open(sys.argv[3], encoding='utf-8').read().split()
cols = open(sys.argv[4], encoding='utf-8').read().split()
err = []
if s['rows'] != rows: err.append('row labels %r != %r' % (s['rows'], rows))
if s['cols'] != cols: err.append('column labels %r != %r' % (s['cols'], cols))
if len(s['cells']) != len(rows) * len(cols): err.append('%d cells' % len(s['cells']))
if (s['w'], s['h']) != (p['w'], p['h']): err.append('SVG %dx%d, PNG %dx%d' % (s['w'], s['h'], p['w'], p['h']))
if p['centres'] != [c[3] for c in s['cells']]: err.append('PNG pixels differ from the SVG cells')
if err: sys.exit('; '.join(err))
EOF
}

# greys_match SVGJSON SOFT SENTENCE: the cells' greys are round(255 w) of the align --soft matrix.
greys_match() {
    python3 - "$@" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
blocks = [b for b in open(sys.argv[2]).read().split('\n\n') if b.strip()]
m = [[float(v) for v in line.split()] for line in blocks[int(sys.argv[3]) - 1].strip().split('\n')]
want = [round(255 * v) for row in m for v in row]
got = [c[3] for c in s['cells']]
if len(want) != len(got) or any(abs(a - b) > 1 for a, b in zip(want, got)):
    sys.exit('greys %s... != %s...' % (got[:8], want[:8]))
EOF
}

# ---- odd tokens: quotes, < > &, a Moses entity, Cyrillic, Greek, CJK, Hebrew, Arabic
printf '%s\n' "he said \" hello \" < b > & l&apos;homme &#124; &amp;lt; ' Москва Ελλάδα 東京 שלום سلام ." > "$T/odd.en"
printf '%s\n' "il a dit « bonjour » < & > l&apos;homme Москва Αθήνα 北京 ." > "$T/odd.fr"
"$NMT_BIN" plot --model "$T/m.nmt" --src "$T/odd.en" --tgt "$T/odd.fr" --out "$T/odd" --title 'odd < & " tokens' > "$T/out" 2> "$T/err"
[ $? -eq 0 ] && ok || bad "odd tokens: $(cat "$T/err")"
printf '%s\n%s\n' "$T/odd.svg" "$T/odd.png" | cmp -s - "$T/out" && ok || bad "files written not listed: $(cat "$T/out")"
# labels undo Moses' escapes by default (in one pass: &amp;lt; shows as &lt;); --raw-labels keeps tokens
sed "s/&apos;/'/g; s/&#124;/|/g; s/&amp;lt;/\&lt;/g" "$T/odd.en" > "$T/odd.en.text"
sed "s/&apos;/'/g" "$T/odd.fr" > "$T/odd.fr.text"
plots "$T/odd" "$T/odd.fr.text" "$T/odd.en.text"
"$NMT_BIN" plot --model "$T/m.nmt" --src "$T/odd.en" --tgt "$T/odd.fr" --out "$T/oddraw" --raw-labels > /dev/null 2> "$T/err"
[ $? -eq 0 ] && ok || bad "--raw-labels: $(cat "$T/err")"
plots "$T/oddraw" "$T/odd.fr" "$T/odd.en"
python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['title']; sys.exit(t != 'odd < & \" tokens')" "$T/odd.svgjson" \
    && ok || bad "title not kept"
"$NMT_BIN" align --model "$T/m.nmt" --src "$T/odd.en" --tgt "$T/odd.fr" --soft > "$T/odd.soft"
greys_match "$T/odd.svgjson" "$T/odd.soft" 1 && ok || bad "odd: plot greys differ from align --soft"

# ---- EOS row and column: labelled </s>, and every row (a distribution) sums to 1
"$NMT_BIN" plot --model "$T/m.nmt" --src "$T/odd.en" --tgt "$T/odd.fr" --out "$T/eos" --eos --format svg > /dev/null
$PC svg "$T/eos.svg" > "$T/eos.json" && python3 - "$T/eos.json" <<'EOF' && ok || bad "--eos plot wrong"
import json, sys
s = json.load(open(sys.argv[1]))
assert s['rows'][-1] == '</s>' and s['cols'][-1] == '</s>', (s['rows'][-1], s['cols'][-1])
nr, nc = len(s['rows']), len(s['cols'])
g = [c[3] for c in s['cells']]
assert len(g) == nr * nc
for r in range(nr):
    tot = sum(g[r * nc:(r + 1) * nc]) / 255
    assert abs(tot - 1) <= nc * 0.5 / 255 + 1e-9, (r, tot)
EOF

# ---- an 80-word pair: cells large enough for their labels, labels one per cell, both formats
awk '{ for (i = 1; i <= NF; i++) w[n++] = $i } END { srand(7); for (l = 0; l < 2; l++) { s = ""; for (k = 0; k < 80; k++) s = s (k ? " " : "") w[int(rand() * n)]; print s } }' "$T/s" > "$T/two"
sed -n 1p "$T/two" > "$T/long.en"; sed -n 2p "$T/two" > "$T/long.fr"
"$NMT_BIN" plot --model "$T/m.nmt" --src "$T/long.en" --tgt "$T/long.fr" --out "$T/long" > /dev/null 2> "$T/err"
[ $? -eq 0 ] && ok || bad "80 words: $(cat "$T/err")"
plots "$T/long" "$T/long.fr" "$T/long.en"
python3 - "$T/long.svgjson" <<'EOF' && ok || bad "80 words: labels would overlap or the image is not legible"
import json, sys
s = json.load(open(sys.argv[1]))
cell = s['cells'][0][2]
font = s['font']
assert cell >= 16 and font >= 9, (cell, font)             # legible
assert 1.17 * font <= cell, (font, cell)                   # a label's line fits in its cell
for key in ('row_y', 'col_x'):
    v = s[key]
    assert all(b - a >= cell - 1e-6 for a, b in zip(v, v[1:])), key
assert max(s['w'], s['h']) <= 4000, (s['w'], s['h'])
EOF

# ---- --matrix: sentence N of a soft-matrix file, no model
head -n 3 "$D/val.en" > "$T/v.en"; head -n 3 "$D/val.fr" > "$T/v.fr"
"$NMT_BIN" align --model "$T/m.nmt" --src "$T/v.en" --tgt "$T/v.fr" --soft > "$T/v.soft"
"$NMT_BIN" plot --matrix "$T/v.soft" --src "$T/v.en" --tgt "$T/v.fr" --line 2 --out "$T/mx" > /dev/null 2> "$T/err"
[ $? -eq 0 ] && ok || bad "--matrix: $(cat "$T/err")"
sed -n 2p "$T/v.en" > "$T/v2.en"; sed -n 2p "$T/v.fr" > "$T/v2.fr"
plots "$T/mx" "$T/v2.fr" "$T/v2.en"
greys_match "$T/mx.svgjson" "$T/v.soft" 2 && ok || bad "--matrix greys differ from the matrix"
# the model's plot of the same pair is the same picture
"$NMT_BIN" plot --model "$T/m.nmt" --src "$T/v.en" --tgt "$T/v.fr" --line 2 --out "$T/mx2" --format svg > /dev/null
cmp -s "$T/mx.svg" "$T/mx2.svg" && ok || bad "--matrix and --model plots of one pair differ"

# ---- one format only
rm -f "$T/one".*
"$NMT_BIN" plot --model "$T/m.nmt" --src "$T/v.en" --tgt "$T/v.fr" --out "$T/one" --format svg > /dev/null
[ -s "$T/one.svg" ] && [ ! -e "$T/one.png" ] && ok || bad "--format svg"
"$NMT_BIN" plot --model "$T/m.nmt" --src "$T/v.en" --tgt "$T/v.fr" --out "$T/pngonly" --format png --cell 40 > /dev/null
[ -s "$T/pngonly.png" ] && [ ! -e "$T/pngonly.svg" ] && ok || bad "--format png"
# PDF: alone, in a list, or named by --out's extension; the same size as the SVG, one page
"$NMT_BIN" plot --model "$T/m.nmt" --src "$T/v.en" --tgt "$T/v.fr" --out "$T/pdf" --format svg,pdf > "$T/out" 2> "$T/err"
printf '%s\n%s\n' "$T/pdf.svg" "$T/pdf.pdf" | cmp -s - "$T/out" && [ ! -e "$T/pdf.png" ] && ok || bad "--format svg,pdf: $(cat "$T/out" "$T/err")"
$PC pdf "$T/pdf.pdf" > "$T/pdf.json" 2> "$T/pyerr" && $PC svg "$T/pdf.svg" > "$T/pdfsvg.json" &&
python3 - "$T/pdf.json" "$T/pdfsvg.json" <<'EOF' && ok || bad "PDF: $(cat "$T/pyerr")"
import json, sys
p, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert p['pages'] == 1 and (p['w'], p['h']) == (s['w'], s['h']), (p, s['w'], s['h'])
EOF
rm -f "$T/named".*
"$NMT_BIN" plot --model "$T/m.nmt" --src "$T/v.en" --tgt "$T/v.fr" --out "$T/named.pdf" > "$T/out"
[ "$(cat "$T/out")" = "$T/named.pdf" ] && [ "$(ls "$T"/named.*)" = "$T/named.pdf" ] && $PC pdf "$T/named.pdf" > /dev/null &&
    ok || bad "--out FILE.pdf: $(cat "$T/out")"
"$NMT_BIN" plot --model "$T/m.nmt" --src "$T/v.en" --tgt "$T/v.fr" --out "$T/named.png" --format png > /dev/null
[ -s "$T/named.png" ] && [ ! -e "$T/named.png.png" ] && ok || bad "--out FILE.png --format png"
"$NMT_BIN" plot --model "$T/m.nmt" --src "$T/v.en" --tgt "$T/v.fr" --out "$T/all" --format all > /dev/null
[ -s "$T/all.svg" ] && [ -s "$T/all.png" ] && [ -s "$T/all.pdf" ] && ok || bad "--format all"
# a label no installed font can draw is drawn as a box, and said so
printf 'a \356\200\200 .\n' > "$T/pua.en"; printf 'un chien .\n' > "$T/pua.fr"
"$NMT_BIN" plot --model "$T/m.nmt" --src "$T/pua.en" --tgt "$T/pua.fr" --out "$T/pua" > /dev/null 2> "$T/err"
[ $? -eq 0 ] && grep -q "1 label holds characters that no installed font has" "$T/err" && ok || bad "missing glyphs: $(cat "$T/err")"

# ---- errors
P="$NMT_BIN plot --src $T/v.en --tgt $T/v.fr --out $T/x"
expect_fail "missing model" 1 "nope.nmt: No such file" $P --model "$T/nope.nmt"
expect_fail "line 0" 2 "--line 0: out of range" $P --model "$T/m.nmt" --line 0
expect_fail "line past the end" 1 "--line 9: .*v.en has only 3 lines" $P --model "$T/m.nmt" --line 9
expect_fail "RNNencdec" 1 "no attention" $P --model "$T/e.nmt"
printf 'a man .\n\n' > "$T/empty.en"; printf 'un homme .\nun chien .\n' > "$T/empty.fr"
expect_fail "empty sentence" 1 "empty.en:2: empty sentence" "$NMT_BIN" plot --model "$T/m.nmt" --src "$T/empty.en" --tgt "$T/empty.fr" --line 2 --out "$T/x"
printf 'a man .\na \377 dog .\n' > "$T/bad.en"
expect_fail "invalid UTF-8" 1 "bad.en:2: invalid UTF-8" "$NMT_BIN" plot --model "$T/m.nmt" --src "$T/bad.en" --tgt "$T/empty.fr" --line 2 --out "$T/x"
expect_fail "eos with matrix" 2 "--eos needs --model" $P --matrix "$T/v.soft" --eos
expect_fail "model and matrix" 2 "either --model or --matrix" $P --model "$T/m.nmt" --matrix "$T/v.soft"
expect_fail "no out" 2 "--out are required" "$NMT_BIN" plot --model "$T/m.nmt" --src "$T/v.en" --tgt "$T/v.fr"
expect_fail "matrix shape" 1 "sentence 1 is .* but" "$NMT_BIN" plot --matrix "$T/v.soft" --src "$T/v2.en" --tgt "$T/v2.fr" --out "$T/x"
expect_fail "bad format" 2 "--format 'gif'" $P --model "$T/m.nmt" --format gif
expect_fail "bad format list" 2 "--format 'svg,'" $P --model "$T/m.nmt" --format svg,
expect_fail "two formats named" 2 "names its format" "$NMT_BIN" plot --model "$T/m.nmt" --src "$T/v.en" --tgt "$T/v.fr" --out "$T/x.png" --format svg
expect_fail "small cell" 2 "--cell 3: out of range" $P --model "$T/m.nmt" --cell 3
expect_fail "missing font" 1 "nofont.ttf" $P --model "$T/m.nmt" --font "$T/nofont.ttf"
expect_fail "not a font" 1 "v.en: not a font file" $P --model "$T/m.nmt" --font "$T/v.en"
expect_fail "unwritable" 1 "nodir/x.svg" "$NMT_BIN" plot --model "$T/m.nmt" --src "$T/v.en" --tgt "$T/v.fr" --out "$T/nodir/x"

# ---- outputs: never an input, and replaced whole
cp "$T/v.en" "$T/src.svg"
expect_fail "--out PREFIX.svg = the source" 1 "src.svg is both the source sentences \(read\) and the plot \(written\)" \
    "$NMT_BIN" plot --model "$T/m.nmt" --src "$T/src.svg" --tgt "$T/v.fr" --out "$T/src"
cmp -s "$T/src.svg" "$T/v.en" && [ ! -e "$T/src.png" ] && ok || bad "plot overwrote its source, or wrote a refused plot"
cp "$T/m.nmt" "$T/m2.nmt"; ln -s "$T/m2.nmt" "$T/model.pdf"
expect_fail "--out FILE.pdf = a link to the model" 1 "model.pdf is both the model \(read\) and the plot" \
    "$NMT_BIN" plot --model "$T/m2.nmt" --src "$T/v.en" --tgt "$T/v.fr" --out "$T/model.pdf"
cmp -s "$T/m2.nmt" "$T/m.nmt" && ok || bad "plot overwrote its model through a link"
# A write that fails half way (a full disk; here a file-size limit of 1 KiB, well under each
# file) leaves the previous plot as it was and no temporary, in each format's own write path
# (SVG copied from memory, PNG encoded at the end, PDF streamed while drawn).
limited() { sh -c "trap '' XFSZ; ulimit -f 2; exec \"\$@\" > /dev/null" limited "$@"; }
for f in svg png pdf; do
    cp "$T/all.$f" "$T/keep.$f"
    expect_fail "a $f write that fails" 1 "all\.$f: .*File too large" \
        limited "$NMT_BIN" plot --model "$T/m.nmt" --src "$T/v.en" --tgt "$T/v.fr" --out "$T/all" --format $f --title "$f"
    cmp -s "$T/all.$f" "$T/keep.$f" && ok || bad "a failed $f write left $(wc -c < "$T/all.$f") bytes over the old plot"
done
[ -z "$(ls "$T" | grep '\.tmp\.')" ] && ok || bad "a failed write left a temporary: $(ls "$T" | grep '\.tmp\.')"

# valgrind: no leak and no invalid access while drawing all three formats. fontconfig loses a few
# hundred bytes loading its default configuration, on the thread pango starts for it: not ours.
if command -v valgrind > /dev/null && [ "${1:-}" != "--quick" ]; then
    printf '%s\n' '{' ' fontconfig-default-configuration' ' Memcheck:Leak' ' match-leak-kinds: definite,indirect' \
        ' fun:*alloc' ' ...' ' fun:FcInitLoadConfigAndFonts' ' ...' ' fun:start_thread' '}' > "$T/vg.supp"
    OMP_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --num-callers=40 --suppressions="$T/vg.supp" \
        "$NMT_BIN" plot --model "$T/m.nmt" --src "$T/odd.en" --tgt "$T/odd.fr" --out "$T/vg" --eos --format all > /dev/null 2> "$T/vg"
    rc=$?
    [ $rc -eq 0 ] && ok || bad "valgrind (exit $rc): $(head -n 20 "$T/vg")"
fi
finish plot
