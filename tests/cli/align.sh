#!/bin/sh
# align.sh: `nmt align` end to end on a small trained model. The hard links must equal an arg-max
# computed here in awk from the --soft matrices; `nmt aer` must read the --soft output and find
# the same AER from its own arg-max as from the Pharaoh links; the JSON must parse and agree with
# both and with `nmt score`; thresholded links must include the arg-max ones; empty lines, batch
# and thread independence, and every error exit.
# kernel sets: all: batch and thread independence, links against nmt score (tests/cli/kernels.sh)
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
H=$NMT_SHARED/data/alignment/en-fr/hansards_naacl2003
export OMP_WAIT_POLICY=PASSIVE
model tiny "$T/m.nmt"
check "model trained" test -s "$T/m.nmt"
model tiny-enc "$T/e.nmt"
check "RNNencdec model trained" test -s "$T/e.nmt"
# A tiny model's attention is nearly uniform and never peaks on the source EOS. Its v_a (att_v,
# docs/MODEL-MAP.md) times -300 gives sharp weights, in many rows highest on the EOS column,
# which the hard links must skip: the copy is edited here as a safetensors file, and its
# checksum (crc32 of dtype, NUL, ndim, dims as u64, data: src/io/safetensors.h) updated in place.
python3 - "$T/m.nmt" "$T/ms.nmt" <<'EOF' && ok || bad "cannot edit att_v in the model"
import json, struct, sys, zlib
d = bytearray(open(sys.argv[1], 'rb').read())
n, = struct.unpack('<Q', d[:8])
h = json.loads(d[8:8 + n])
t = h['att_v']
assert t['dtype'] == 'F32'
a, b = (8 + n + o for o in t['data_offsets'])
v = struct.unpack('<%df' % ((b - a) // 4), d[a:b])
d[a:b] = struct.pack('<%df' % len(v), *[-300 * x for x in v])
old = json.loads(h['__metadata__']['crc32'])['att_v']
c = zlib.crc32(b'F32\0' + bytes([len(t['shape'])]) + b''.join(struct.pack('<Q', x) for x in t['shape']))
at = d.index(('\\"att_v\\":\\"%s\\"' % old).encode(), 8, 8 + n)
new = ('\\"att_v\\":\\"%08x\\"' % zlib.crc32(d[a:b], c)).encode()
d[at:at + len(new)] = new
open(sys.argv[2], 'wb').write(d)
EOF
A="$NMT_BIN align --model $T/ms.nmt --threads 1"

head -n 40 "$D/val.en" > "$T/v.en"; head -n 40 "$D/val.fr" > "$T/v.fr"
$A --src "$T/v.en" --tgt "$T/v.fr" > "$T/hard" 2> "$T/err"
[ $? -eq 0 ] && ok || bad "pharaoh: $(cat "$T/err")"
$A --src "$T/v.en" --tgt "$T/v.fr" --soft > "$T/soft" 2> "$T/err"
[ $? -eq 0 ] && ok || bad "soft: $(cat "$T/err")"
[ "$(wc -l < "$T/hard")" -eq 40 ] && ok || bad "pharaoh: $(wc -l < "$T/hard") lines for 40 pairs"

# soft: per sentence one row per target word, one value per source word, values in [0, 1]
awk 'NR == FNR { ns[FNR] = NF; next } FILENAME == ARGV[2] { nt[FNR] = NF; next }
     $0 == "" { if (rows != nt[k + 1]) bad = 1; k++; rows = 0; next }
     { rows++; if (NF != ns[k + 1]) bad = 1; for (i = 1; i <= NF; i++) if ($i < 0 || $i > 1) bad = 1 }
     END { exit bad || k != 40 }' "$T/v.en" "$T/v.fr" "$T/soft" && ok || bad "soft matrices have the wrong shape"

# the edited model puts the most weight on the source EOS in some rows (what the rows lack of 1)
awk '$0 != "" { s = 0; m = 0; for (i = 1; i <= NF; i++) { s += $i; if ($i > m) m = $i } if (1 - s > m) n++ } END { exit n < 5 }' \
    "$T/soft" && ok || bad "the sharpened model never prefers the source EOS: the test below proves less"

# the hard links are the arg-max of the soft rows (first maximum), computed here independently
awk 'BEGIN { t = 0 } $0 == "" { print line; line = ""; t = 0; next }
     { b = 1; for (i = 2; i <= NF; i++) if ($i + 0 > $b + 0) b = i; line = line (t ? " " : "") (b - 1) "-" t; t++ }' \
    "$T/soft" > "$T/argmax"
cmp -s "$T/hard" "$T/argmax" && ok || bad "hard links are not the arg-max of the soft matrices: $(diff "$T/hard" "$T/argmax" | head -n 4)"

# nmt aer reads the --soft output; its own arg-max of the matrices scores like our links
if [ -f "$H/test.talp" ]; then
    $A --src "$H/test.en" --tgt "$H/test.fr" --soft > "$T/hs" 2> "$T/err" && ok || bad "hansards soft: $(cat "$T/err")"
    $A --src "$H/test.en" --tgt "$H/test.fr" > "$T/hh" 2> "$T/err" && ok || bad "hansards hard: $(cat "$T/err")"
    "$NMT_BIN" aer --gold "$H/test.talp" --soft "$T/hs" --src "$H/test.en" --tgt "$H/test.fr" > "$T/aer_soft" 2> "$T/err"
    [ $? -eq 0 ] && grep -q '^SAER' "$T/aer_soft" && ok || bad "nmt aer --soft rejects align --soft: $(cat "$T/err")"
    "$NMT_BIN" aer --gold "$H/test.talp" --test "$T/hh" --src "$H/test.en" --tgt "$H/test.fr" > "$T/aer_hard" 2> "$T/err"
    [ $? -eq 0 ] && ok || bad "nmt aer --test rejects align: $(cat "$T/err")"
    grep -E '^(A|AER|precision|recall) ' "$T/aer_soft" > "$T/a1"; grep -E '^(A|AER|precision|recall) ' "$T/aer_hard" > "$T/a2"
    [ -s "$T/a1" ] && cmp -s "$T/a1" "$T/a2" && ok || bad "AER of nmt aer's arg-max differs from align's links: $(paste "$T/a1" "$T/a2")"
else
    bad "no gold alignments under $H (set NMT_SHARED)"
fi

# JSON: parses, words as in the files, attention without EOS, links = arg-max = Pharaoh output,
# logprob = nmt score's
$A --src "$T/v.en" --tgt "$T/v.fr" --format json > "$T/json" 2> "$T/err"
[ $? -eq 0 ] && ok || bad "json: $(cat "$T/err")"
"$NMT_BIN" score --model "$T/ms.nmt" --src "$T/v.en" --tgt "$T/v.fr" > "$T/score"
python3 - "$T/json" "$T/v.en" "$T/v.fr" "$T/hard" "$T/soft" "$T/score" <<'EOF' && ok || bad "json disagrees"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')]
src = open(sys.argv[2], encoding='utf-8').read().split('\n')[:-1]
tgt = open(sys.argv[3], encoding='utf-8').read().split('\n')[:-1]
hard = open(sys.argv[4]).read().split('\n')[:-1]
soft = [b for b in open(sys.argv[5]).read().split('\n\n') if b.strip()]
score = [float(l.split('\t')[0]) for l in open(sys.argv[6])]
assert len(recs) == len(src) == len(hard) == len(soft) == 40
for k, r in enumerate(recs):
    assert list(r) == ['src', 'tgt', 'attention', 'links', 'logprob'], list(r)
    assert r['src'] == src[k].split() and r['tgt'] == tgt[k].split(), k
    att = r['attention']
    assert len(att) == len(r['tgt']) and all(len(row) == len(r['src']) for row in att), k
    m = [[float(v) for v in line.split()] for line in soft[k].strip().split('\n')]
    assert att == m, ('attention differs from --soft', k)
    links = [[row.index(max(row)), t] for t, row in enumerate(att)]
    assert r['links'] == links, (k, r['links'], links)
    assert ' '.join('%d-%d' % (s, t) for s, t in links) == hard[k], k
    assert abs(r['logprob'] - score[k]) <= 1e-4 * max(1, abs(score[k])), (r['logprob'], score[k])
EOF

# threshold: the arg-max links and every link of weight >= T, sorted by target then source; T is
# halfway between two weights near the 80th percentile, so that it selects some links but not all
# and no weight is so close to it that rounding in the output could put it on the other side
TH=$(tr ' ' '\n' < "$T/soft" | grep . | sort -g | uniq | awk '{ v[NR] = $1 } END { i = int(NR * 0.8); printf "%.12g\n", (v[i] + v[i + 1]) / 2 }')
$A --src "$T/v.en" --tgt "$T/v.fr" --threshold "$TH" > "$T/thr"
$A --src "$T/v.en" --tgt "$T/v.fr" --threshold "$TH" --format json > "$T/thrjson"
python3 - "$T/thr" "$T/hard" "$T/thrjson" "$TH" <<'EOF' && ok || bad "thresholded links wrong (T $TH)"
import json, sys
thr = [l.split() for l in open(sys.argv[1]).read().split('\n')[:-1]]
hard = [l.split() for l in open(sys.argv[2]).read().split('\n')[:-1]]
recs = [json.loads(l) for l in open(sys.argv[3])]
T = float(sys.argv[4])
extra = links = total = 0
for k, (a, h, r) in enumerate(zip(thr, hard, recs)):
    pairs = [tuple(map(int, x.split('-'))) for x in a]
    assert set(h) <= set(a), ('arg-max link missing', k)
    assert pairs == sorted(set(pairs), key=lambda p: (p[1], p[0])), ('not sorted or repeated', k)
    want = sorted({(s, t) for t, row in enumerate(r['attention']) for s, v in enumerate(row) if v >= T} |
                  {tuple(map(int, x.split('-'))) for x in h}, key=lambda p: (p[1], p[0]))
    assert pairs == want, k
    assert [list(p) for p in pairs] == r['links'], k
    extra += len(a) - len(h)
    total += sum(len(row) for row in r['attention'])
    links += len(a)
assert len(thr) == 40 and extra > 0 and links < total, (extra, links, total)
EOF

# empty lines: an empty record (pharaoh, json); --soft refuses before writing anything
printf 'a man .\n\ntwo dogs .\na cat .\n' > "$T/e.en"; printf 'un homme .\nun chien .\ndeux chiens .\n\n' > "$T/e.fr"
$A --src "$T/e.en" --tgt "$T/e.fr" > "$T/eh"
[ "$(wc -l < "$T/eh")" -eq 4 ] && [ -z "$(sed -n 2p "$T/eh")" ] && [ -z "$(sed -n 4p "$T/eh")" ] && [ -n "$(sed -n 3p "$T/eh")" ] \
    && ok || bad "empty pairs not kept as empty lines: $(cat "$T/eh")"
$A --src "$T/e.en" --tgt "$T/e.fr" --format json > "$T/ej"
python3 -c "
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
assert len(r) == 4 and r[1]['src'] == [] and r[1]['links'] == [] and len(r[1]['attention']) == 3
assert r[3]['tgt'] == [] and r[3]['attention'] == [] and r[3]['links'] == [] and r[2]['links']
" "$T/ej" && ok || bad "empty pairs in json"
expect_fail "soft with an empty line" 1 "e.en:2: empty sentence" $A --src "$T/e.en" --tgt "$T/e.fr" --soft
[ ! -s "$T/out" ] && ok || bad "--soft wrote output before failing"

# batch size and threads change nothing beyond float rounding (a padded batch or another thread
# count sums in another order, and the weights differ in their last bits: the plain model, whose
# weights are not magnified, is compared within 1e-6)
P="$NMT_BIN align --model $T/m.nmt --src $T/v.en --tgt $T/v.fr --soft"
$P --threads 1 > "$T/b0"
$P --threads 1 --batch 1 > "$T/b1"
$P --batch 7 --threads 2 > "$T/b7"
for f in "$T/b1" "$T/b7"; do
    paste -d '|' "$T/b0" "$f" | awk -F '|' '{ n = split($1, a, " "); m = split($2, b, " "); if (n != m) bad = 1
        for (i = 1; i <= n; i++) { d = a[i] - b[i]; if (d < 0) d = -d; if (d > 1e-6) bad = 1 } } END { exit bad }' \
        && ok || bad "output depends on batch size or threads: $(diff "$T/b0" "$f" | head -n 3)"
done

# errors
head -n 39 "$T/v.fr" > "$T/v39.fr"
expect_fail "line counts" 1 "v.en has 40 lines but .*v39.fr has 39" $A --src "$T/v.en" --tgt "$T/v39.fr"
printf 'a man .\na \377 dog .\n' > "$T/bad.en"; printf 'un homme .\nun chien .\n' > "$T/bad.fr"
expect_fail "invalid UTF-8" 1 "bad.en:2: invalid UTF-8" $A --src "$T/bad.en" --tgt "$T/bad.fr"
expect_fail "RNNencdec" 1 "no attention" "$NMT_BIN" align --model "$T/e.nmt" --src "$T/v.en" --tgt "$T/v.fr"
# translate --alignment on it: the library's warning, through the program's log callback
"$NMT_BIN" translate --model "$T/e.nmt" --alignment hard < "$T/v.en" > "$T/e.out" 2> "$T/e.err"
[ $? -eq 0 ] && grep -qx "nmt translate: warning: an RNNencdec model has no attention: alignments will be empty" "$T/e.err" \
    && ok || bad "translate --alignment with RNNencdec: $(cat "$T/e.err")"
expect_fail "missing model" 1 "nope.nmt: No such file" "$NMT_BIN" align --model "$T/nope.nmt" --src "$T/v.en" --tgt "$T/v.fr"
expect_fail "missing file" 1 "nope.en: No such file" $A --src "$T/nope.en" --tgt "$T/v.fr"
expect_fail "no model" 2 "--model is required" "$NMT_BIN" align --src "$T/v.en" --tgt "$T/v.fr"
expect_fail "soft and json" 2 "exclude each other" $A --src "$T/v.en" --tgt "$T/v.fr" --soft --format json
expect_fail "threshold range" 2 "--threshold 2: out of range" $A --src "$T/v.en" --tgt "$T/v.fr" --threshold 2
expect_fail "bad format" 2 "--format 'xml'" $A --src "$T/v.en" --tgt "$T/v.fr" --format xml
finish align
