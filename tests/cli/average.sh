#!/bin/sh
# average.sh: nmt average. Copies of one model average to that model byte for byte; two models
# average to the element-wise mean of every tensor (checked in Python from the files' bytes);
# models of other sizes or vocabularies are refused naming what differs; --out may not be an input.
. tests/cli/lib.sh
export OMP_WAIT_POLICY=PASSIVE
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
D=$NMT_SHARED/data/multi30k/tok
head -n 200 "$D/train.en" > "$T/s"; head -n 200 "$D/train.fr" > "$T/t"
SMALL="--emb 8 --hid 8 --att 8 --maxout 4 --vocab 150 --batch 20 --max-updates 3 --threads 1"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/a.nmt" $SMALL --seed 1 2> /dev/null
cp "$T/a.nmt" "$T/a2.nmt"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/b.nmt" $SMALL --seed 2 2> /dev/null
"$NMT_BIN" average --out "$T/aa.nmt" "$T/a.nmt" "$T/a2.nmt" "$T/a.nmt" 2> "$T/err" && ok || bad "average: $(cat "$T/err")"
cmp -s "$T/a.nmt" "$T/aa.nmt" && ok || bad "three copies of a model do not average to it"
"$NMT_BIN" average --out "$T/ab.nmt" "$T/a.nmt" "$T/b.nmt" 2> "$T/err" && ok || bad "average a b: $(cat "$T/err")"
$PY - "$T/a.nmt" "$T/b.nmt" "$T/ab.nmt" > "$T/check" 2>&1 <<'PYEOF' && ok || bad "the mean: $(cat "$T/check")"
import json, struct, sys
def tensors(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n]); data = b[8 + n:]
    out = {}
    for k, v in h.items():
        if k == "__metadata__" or v["dtype"] != "F32": continue
        s, e = v["data_offsets"]
        out[k] = struct.unpack("<%df" % ((e - s) // 4), data[s:e])
    return out
a, b, m = (tensors(p) for p in sys.argv[1:4])
f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
bad = [k for k in a if any(f32((x + y) / 2) != z for x, y, z in zip(a[k], b[k], m[k]))]
diff = sum(1 for k in a if a[k] != b[k])
print("tensors off:", bad) if bad or diff < len(a) // 2 else print("ok")
sys.exit(1 if bad or diff < len(a) // 2 else 0)
PYEOF
echo "a man is riding a bike ." | "$NMT_BIN" translate --model "$T/ab.nmt" --threads 1 > "$T/o" 2> "$T/err" && [ -s "$T/o" ] && ok || bad "the averaged model does not translate: $(cat "$T/err")"

# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/big.nmt" $SMALL --hid 12 2> /dev/null
expect_fail "other sizes" 1 "cannot be averaged: other sizes" "$NMT_BIN" average --out "$T/x.nmt" "$T/a.nmt" "$T/big.nmt"
tail -n 200 "$D/train.en" > "$T/s2"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s2" --tgt "$T/t" --model "$T/voc.nmt" $SMALL 2> /dev/null
expect_fail "other vocabulary" 1 "cannot be averaged: .*source vocabulary differs from .*a.nmt's at id" "$NMT_BIN" average --out "$T/x.nmt" "$T/a.nmt" "$T/voc.nmt"
[ -e "$T/x.nmt" ] && bad "a refused average left a file" || ok
# subword models over one SentencePiece model whose text stages differ (one lowercases): the
# same pieces, so the parameters have one layout, but the average would read text as the first
# file's stages say; refused
R=$NMT_SHARED/data/multi30k
head -n 200 "$R/train.en" > "$T/rs"; head -n 200 "$R/train.fr" > "$T/rt"
SW="--emb 8 --hid 8 --att 8 --maxout 4 --batch 20 --max-updates 2 --threads 1"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/rs" --tgt "$T/rt" --model "$T/sp.nmt" --subwords unigram --subword-vocab 500 --joint $SW 2> /dev/null
$PY tests/cli/spm_meta.py extract "$T/sp.nmt" src "$T/joint.model"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/rs" --tgt "$T/rt" --model "$T/sp1.nmt" --spm-model "$T/joint.model" $SW 2> /dev/null
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/rs" --tgt "$T/rt" --model "$T/sp2.nmt" --spm-model "$T/joint.model" --lowercase --lang en,fr $SW 2> /dev/null
[ -s "$T/sp1.nmt" ] && [ -s "$T/sp2.nmt" ] && ok || bad "the two subword models were not trained"
expect_fail "other text stages" 1 "cannot be averaged: .*text stages differ" "$NMT_BIN" average --out "$T/x.nmt" "$T/sp1.nmt" "$T/sp2.nmt"
expect_fail "out = an input" 1 "is both" "$NMT_BIN" average --out "$T/a.nmt" "$T/a.nmt" "$T/b.nmt"
cmp -s "$T/a.nmt" "$T/a2.nmt" && ok || bad "the refused --out was changed"
expect_fail "no models" 2 "required" "$NMT_BIN" average --out "$T/x.nmt"
# an output that is not a regular file is refused, never replaced (run as root, --out /dev/null
# once made /dev/null a regular file)
mkfifo "$T/fifo"
expect_fail "out = a FIFO" 1 "fifo: not a regular file \(a FIFO\)" "$NMT_BIN" average --out "$T/fifo" "$T/a.nmt"
check "the FIFO is still a FIFO" test -p "$T/fifo"
ln -s /dev/null "$T/null"
expect_fail "out = a link to /dev/null" 1 "null: not a regular file \(a device\)" "$NMT_BIN" average --out "$T/null" "$T/a.nmt"
check "the link still points to /dev/null" test -L "$T/null" -a -c "$T/null"
finish average
