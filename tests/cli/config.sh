#!/bin/sh
# config.sh: option files (nmt train -c FILE, YAML with the long option names as keys). A run
# from a file trains the model the same options on the command line train, byte for byte; the
# command line overrides the file; --dump-config prints what is in effect and reads back to the
# same, and the checkpoint keeps it; a bad file or value is an error naming the file and line.
. tests/cli/lib.sh
export OMP_WAIT_POLICY=PASSIVE
D=$NMT_SHARED/data/multi30k/tok
head -n 200 "$D/train.en" > "$T/s"; head -n 200 "$D/train.fr" > "$T/t"
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/cli.nmt" --emb 8 --hid 8 --att 8 --maxout 4 --vocab 150 \
    --batch 20 --max-updates 4 --threads 1 --optimizer adam --lr 0.01 --reshuffle 2> /dev/null
cat > "$T/run.yaml" <<YAML
# a small run
src: $T/s
tgt: '$T/t'
emb: 8
hid: 8
att: 8
maxout: 4
vocab: 150
batch: 20
max-updates: 4
threads: 1
optimizer: adam
lr: 0.01
reshuffle: true
lowercase: false
YAML
"$NMT_BIN" train -c "$T/run.yaml" --model "$T/file.nmt" 2> "$T/err" && ok || bad "train -c: $(cat "$T/err")"
cmp -s "$T/cli.nmt" "$T/file.nmt" && ok || bad "the model from the file differs from the one from the command line"

# the command line wins, option by option; the dump reads back to itself
"$NMT_BIN" train --config="$T/run.yaml" --hid 16 --dump-config > "$T/d1" 2> "$T/err"
grep -qx "hid: 16" "$T/d1" && grep -qx "emb: 8" "$T/d1" && grep -qx "reshuffle: true" "$T/d1" && ok || bad "override: $(cat "$T/d1" "$T/err")"
grep -q "^lowercase" "$T/d1" && bad "a switch set false in the file is on" || ok
"$NMT_BIN" train -c "$T/d1" --dump-config > "$T/d2" 2> "$T/err"
cmp -s "$T/d1" "$T/d2" && ok || bad "the dump does not read back to itself: $(diff "$T/d1" "$T/d2" | head -n 5)"

# the checkpoint keeps the options the run began with, and resumes with them there
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
"$NMT_BIN" train -c "$T/run.yaml" --model "$T/file.nmt" --dump-config > "$T/want"
$PY -c 'import json, struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]
sys.stdout.write(json.loads(b[8:8 + n])["__metadata__"]["options"])' "$T/file.nmt.ckpt" > "$T/kept" 2> "$T/err"
cmp -s "$T/want" "$T/kept" && ok || bad "the checkpoint's options: $(head -c 300 "$T/kept" "$T/err")"
"$NMT_BIN" train -c "$T/run.yaml" --model "$T/file.nmt" --resume "$T/file.nmt.ckpt" --max-updates 6 2> "$T/err" \
    && ok || bad "resume from a checkpoint with options: $(tail -n 3 "$T/err")"
# ... and keeps them through the resume (it once wrote the resumed command's, --resume included)
$PY -c 'import json, struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]
sys.stdout.write(json.loads(b[8:8 + n])["__metadata__"]["options"])' "$T/file.nmt.ckpt" > "$T/kept2" 2> "$T/err"
cmp -s "$T/want" "$T/kept2" && ok || bad "the resumed run's checkpoint: not the options the run began with: $(diff "$T/want" "$T/kept2" | head -n 4)"
# a dump trains what the run it came from trains (a word model's dump once held "subwords: unigram",
# which turned subword units on when read back)
"$NMT_BIN" train -c "$T/want" --model "$T/dumped.nmt" 2> "$T/err" && cmp -s "$T/cli.nmt" "$T/dumped.nmt" \
    && ok || bad "training from the dump: $(tail -n 2 "$T/err")"

printf 'hid: 8\nhiden: 3\n' > "$T/b1"
expect_fail "unknown key" 1 "b1:2: unknown option 'hiden'; did you mean hid\?" "$NMT_BIN" train -c "$T/b1"
printf 'emb: 8\nhid: 0\n' > "$T/b2"
expect_fail "bad value" 1 "the value is from .*b2:2" "$NMT_BIN" train -c "$T/b2"
printf 'hid: [8\n' > "$T/b3"
expect_fail "not YAML" 1 "b3:2: not YAML" "$NMT_BIN" train -c "$T/b3"
printf 'reshuffle: maybe\n' > "$T/b4"
expect_fail "a switch" 1 "b4:1: a switch takes true or false" "$NMT_BIN" train -c "$T/b4"
printf 'hid:\n  a: 1\n' > "$T/b5"
expect_fail "a mapping" 1 "b5:2: a mapping where a value belongs" "$NMT_BIN" train -c "$T/b5"
printf -- '- hid\n' > "$T/b6"
expect_fail "not a mapping" 1 "b6:1: expected 'option: value' lines" "$NMT_BIN" train -c "$T/b6"
expect_fail "no such file" 1 "nope.yaml: cannot open" "$NMT_BIN" train -c "$T/nope.yaml"
expect_fail "config twice" 2 "given twice" "$NMT_BIN" train -c "$T/run.yaml" -c "$T/run.yaml"
printf 'config: x\n' > "$T/b7"
expect_fail "a file naming a file" 1 "b7:1: not an option for a file" "$NMT_BIN" train -c "$T/b7"
finish config
