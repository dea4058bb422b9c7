#!/bin/sh
# plot.sh: `nmt plot` end to end on a small trained model. Every SVG is parsed with Python's XML
# parser and every PNG decoded by a Python reader written here (signature, chunk CRCs, IHDR,
# inflate, filters), then compared: labels equal the words of the input, the SVG cells' greys
# equal round(255 x weight) of `nmt align --soft`, and the PNG pixels equal the SVG cells. Then
# odd tokens, an 80-word pair, EOS, --matrix, and every error exit.
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
export OMP_WAIT_POLICY=PASSIVE
TRAIN="--emb 16 --hid 16 --att 16 --maxout 8 --vocab 300 --batch 20 --max-updates 150 --threads 1 --optimizer adam --lr 0.01"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/m.nmt" $TRAIN 2> "$T/train.log"
check "model trained" test -s "$T/m.nmt"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/e.nmt" --arch rnnenc $TRAIN 2> "$T/train2.log"
check "RNNencdec model trained" test -s "$T/e.nmt"

cat > "$T/pc.py" <<'EOF'
# pc.py: reads plots back. svg FILE: prints JSON {w, h, title, rows, cols, cells: [[x, y, size,
# grey]...], row_y, col_x, font}; png FILE [SVG]: checks the file and prints {w, h} (and with
# SVG, the pixels at the centres of that SVG's cells).
import json, struct, sys, zlib
import xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'

def svg(path):
    root = ET.parse(path).getroot()
    assert root.tag == NS + 'svg', root.tag
    out = {'w': int(root.get('width')), 'h': int(root.get('height')), 'title': None,
           'font': float(root.find(NS + 'g').get('font-size'))}
    for t in root.iter(NS + 'text'):
        if t.get('class') == 'title':
            out['title'] = t.text
    groups = {g.get('class'): g for g in root.iter(NS + 'g') if g.get('class')}
    out['rows'] = [t.text or '' for t in groups['rows'].findall(NS + 'text')]
    out['row_y'] = [float(t.get('y')) for t in groups['rows'].findall(NS + 'text')]
    out['cols'] = [t.text or '' for t in groups['cols'].findall(NS + 'text')]
    out['col_x'] = [float(t.get('x')) for t in groups['cols'].findall(NS + 'text')]
    cells = []
    for r in groups['cells'].findall(NS + 'rect'):
        f = r.get('fill')
        if f == 'none':
            continue
        assert f[0] == '#' and f[1:3] == f[3:5] == f[5:7], f
        cells.append([int(r.get('x')), int(r.get('y')), int(r.get('width')), int(f[1:3], 16)])
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
    assert depth == 8 and ctype == 0 and comp == 0 and filt == 0 and inter == 0, 'not 8-bit grey'
    raw = zlib.decompress(b''.join(c for t, c in chunks if t == b'IDAT'))
    assert len(raw) == h * (w + 1), 'image data size'
    if not full:
        return {'w': w, 'h': h}, None
    rows, prev = [], bytearray(w)
    for y in range(h):
        f, line = raw[y * (w + 1)], bytearray(raw[y * (w + 1) + 1:(y + 1) * (w + 1)])
        for x in range(w):
            a = line[x - 1] if x else 0
            b = prev[x]
            c = prev[x - 1] if x else 0
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
    return {'w': w, 'h': h}, rows

if sys.argv[1] == 'svg':
    print(json.dumps(svg(sys.argv[2]), ensure_ascii=False))
else:
    info, px = png(sys.argv[2], len(sys.argv) > 3)
    if px is not None:
        info['centres'] = [px[y + s // 2][x + s // 2] for x, y, s, g in svg(sys.argv[3])['cells']]
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
expect_fail "small cell" 2 "--cell 3: out of range" $P --model "$T/m.nmt" --cell 3
expect_fail "missing font" 1 "nofont.ttf" $P --model "$T/m.nmt" --font "$T/nofont.ttf"
expect_fail "unwritable" 1 "nodir/x.svg" "$NMT_BIN" plot --model "$T/m.nmt" --src "$T/v.en" --tgt "$T/v.fr" --out "$T/nodir/x"

# valgrind: no leak and no invalid access while drawing both formats
if command -v valgrind > /dev/null && [ "${1:-}" != "--quick" ]; then
    OMP_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        "$NMT_BIN" plot --model "$T/m.nmt" --src "$T/odd.en" --tgt "$T/odd.fr" --out "$T/vg" --eos > /dev/null 2> "$T/vg"
    rc=$?
    [ $rc -eq 0 ] && ok || bad "valgrind (exit $rc): $(head -n 20 "$T/vg")"
fi
finish plot
