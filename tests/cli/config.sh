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
# bytes that are not UTF-8 are reported at their line, not the file's first (libyaml's reader
# gives their offset alone)
printf 'hid: 8\nemb: 8\nsrc: a\377b\n' > "$T/b8"
expect_fail "not UTF-8 on line 3" 1 "b8:3: not YAML: invalid leading UTF-8 octet" "$NMT_BIN" train -c "$T/b8"
printf 'hid: 8\n\n# note\n"lat\351": 1\n' > "$T/b9"
expect_fail "not UTF-8 on line 4, quoted" 1 "b9:4: not YAML" "$NMT_BIN" train -c "$T/b9"
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
# what a hostile or careless file does (a review found each): aliases once copied their value per
# use (a 1 MB file took 414 MB), flow nesting took quadratic time (200,000 '[': 99 s), and keys
# given twice, a second document, nulls, NUL characters and empty lists passed silently
awk 'BEGIN { printf "log: &a \""; for (i = 0; i < 100000; i++) printf "x"; printf "\"\ncost-log: ["; for (i = 0; i < 400; i++) printf "%s*a", i ? "," : ""; print "]" }' > "$T/h1"
expect_fail "aliases" 1 "h1:2: an alias \(\*name\): option files take none" "$NMT_BIN" train -c "$T/h1"
awk 'BEGIN { printf "src: "; for (i = 0; i < 200000; i++) printf "["; for (i = 0; i < 200000; i++) printf "]"; print "" }' > "$T/h2"
expect_fail "200,000 levels of [" 1 "h2:1: nested deeper than 'option: \[values\]'" timeout 10 "$NMT_BIN" train -c "$T/h2"
printf 'hid: 8\nhid: 16\n' > "$T/h3"
expect_fail "a key twice" 1 "h3:2: 'hid' given twice \(first at line 1\)" "$NMT_BIN" train -c "$T/h3"
printf 'hid: 8\n---\nhid: 16\n' > "$T/h4"
expect_fail "two documents" 1 "h4:2: a second document" "$NMT_BIN" train -c "$T/h4"
printf 'src: ~\n' > "$T/h5"
expect_fail "a null value" 1 "h5:1: no value \(null\) for src" "$NMT_BIN" train -c "$T/h5"
printf 'src: "a\\0b"\n' > "$T/h6"
expect_fail "a NUL in a value" 1 "h6:1: a NUL character in the value of src" "$NMT_BIN" train -c "$T/h6"
printf 'hid: []\n' > "$T/h7"
expect_fail "an empty list" 1 "h7:1: an empty list for hid" "$NMT_BIN" train -c "$T/h7"
head -c 1100000 /dev/zero | tr '\0' '#' > "$T/h8"
expect_fail "over 1 MiB" 1 "h8:0: more than 1 MiB" "$NMT_BIN" train -c "$T/h8"
# --dump-config read back: a subword run's (its --vocab defaults once made it unreadable), and
# switches that undo each other (both were dumped, and the copy trained untied)
head -n 100 "$NMT_SHARED/data/multi30k/train.en" > "$T/r.en"; head -n 100 "$NMT_SHARED/data/multi30k/train.fr" > "$T/r.fr"
"$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/s.nmt" --subwords unigram --subword-vocab 400 --dump-config > "$T/s.yaml" 2> /dev/null
"$NMT_BIN" train -c "$T/s.yaml" --max-updates 1 --emb 4 --hid 4 --att 4 --maxout 2 --threads 1 2> "$T/s.err" && ok ||
    bad "a subword run's dump read back: $(tail -n 1 "$T/s.err")"
printf 'no-tied-embeddings: true\n' > "$T/nt.yaml"
"$NMT_BIN" train -c "$T/nt.yaml" --src "$T/r.en" --tgt "$T/r.fr" --model "$T/t.nmt" --tied-embeddings --dump-config > "$T/t.yaml" 2> /dev/null
grep -q "^tied-embeddings: true" "$T/t.yaml" && ! grep -q "no-tied" "$T/t.yaml" && ok || bad "tied switches dumped: $(grep tied "$T/t.yaml")"
# a pipe is read once, whole: -c <(...) works
mkfifo "$T/fifo"
{ cat "$T/run.yaml" > "$T/fifo" & } 2> /dev/null
"$NMT_BIN" train -c "$T/fifo" --dump-config > "$T/fifo.dump" 2> "$T/fifo.err" && "$NMT_BIN" train -c "$T/run.yaml" --dump-config > "$T/file.dump" 2> /dev/null &&
    cmp -s "$T/fifo.dump" "$T/file.dump" && ok || bad "an option file from a pipe: $(cat "$T/fifo.err")"
# --dump-config's quoting, tested against the file system: the source file's name is each of the
# values YAML reads otherwise when written plain (a trailing ':' or blank, indicators, the words
# a switch or null reads as, control characters, line breaks libyaml knows beyond \n, a BOM). The
# dump must read back to itself, and a run from it must find the file.
B=$(cd "$(dirname "$NMT_BIN")" && pwd)/$(basename "$NMT_BIN")
mkdir "$T/n"
TINY="--max-updates 1 --emb 4 --hid 4 --att 4 --maxout 2 --vocab 50 --batch 10 --threads 1"
for e in 'a:' 'x:\040y' 'tab\tin' 'trail\t' 'trail\040' '\040lead' '-dash' 'null' 'Yes' 'n' '~' '#h' 'a\040#b' \
    "q'uote" 'dq"x' 'back\\\\slash' 'c\001trl' 'nl\nx' 'cr\rx' 'del\177' 'nel\302\205' 'c1\302\200' 'bom\357\273\277' \
    'ls\342\200\250' 'caf\303\251' '[br' '{x}' ',c' '%p' '@a' '!t' '&a' '*s' '|p' '>g' '?q' '`b' '"' "'" 'k\\\\"\\\\'; do
    name=$(printf '%bX' "$e"); name=${name%X}
    cp "$T/s" "$T/n/$name"
    # each name trains into w.nmt again: --overwrite
    # shellcheck disable=SC2086
    (cd "$T/n" && "$B" train --src "$name" --tgt "$T/t" --model "$T/w.nmt" --overwrite $TINY --dump-config > "$T/w1.yaml" 2> "$T/w.err" &&
        "$B" train -c "$T/w1.yaml" --dump-config > "$T/w2.yaml" 2>> "$T/w.err" && cmp -s "$T/w1.yaml" "$T/w2.yaml" &&
        "$B" train -c "$T/w1.yaml" 2>> "$T/w.err") && ok ||
        bad "a source file named '$e' from --dump-config: $(grep '^src' "$T/w1.yaml") $(tail -n 1 "$T/w.err")"
    rm -f "$T/n/$name"
done
# a name that is not UTF-8 cannot be in a YAML file: --dump-config says so, the run itself goes on
cp "$T/s" "$T/n/$(printf 'lat\351')"
expect_fail "--dump-config, a Latin-1 name" 1 "value of --src is not UTF-8" "$B" train --src "$T/n/$(printf 'lat\351')" \
    --tgt "$T/t" --model "$T/w.nmt" --dump-config
# shellcheck disable=SC2086
"$B" train --src "$T/n/$(printf 'lat\351')" --tgt "$T/t" --model "$T/w.nmt" --overwrite $TINY 2> "$T/w.err" && ok ||
    bad "training from a Latin-1 name: $(tail -n 1 "$T/w.err")"
# a dump that -c would refuse (over 1 MiB: control characters take 4 bytes each) is refused itself
c=$(head -c 130000 /dev/zero | tr '\0' '\001')
expect_fail "a dump over 1 MiB" 1 "more than 1 MiB of YAML" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/w.nmt" \
    --log "$c" --batch-log "$c" --cost-log "$c" --dump-config
# a list for an option of one value (the last item won) and a list item the option refuses (it
# reached the command line's walk and was "unexpected argument", naming no file) are errors at
# their line
printf 'src: %s\nhid:\n  - 8\n  - 16\n' "$T/s" > "$T/l1.yaml"
expect_fail "a list for hid" 1 "l1.yaml:3: a list for an option that takes one value: hid" "$NMT_BIN" train -c "$T/l1.yaml"
printf 'valid-metrics:\n  - bogus\n  - bleu\n' > "$T/l3.yaml"
expect_fail "a bad first metric" 1 "value is from .*l3.yaml:2" "$NMT_BIN" train -c "$T/l3.yaml"
printf 'valid-metrics:\n  - bleu\n  - bogus\n' > "$T/l2.yaml"
expect_fail "a bad second metric" 1 "l2.yaml:3: valid-metrics 'bogus': expected ppl" "$NMT_BIN" train -c "$T/l2.yaml"
# the option file is read: no file the run writes may be it (--cost-log once emptied it)
printf 'max-updates: 1\nthreads: 1\n' > "$T/self.yaml"
cp "$T/self.yaml" "$T/self.keep"
expect_fail "-c FILE as the cost log" 1 "self.yaml is both the option file \(-c\) \(read\) and the cost log" \
    "$NMT_BIN" train -c "$T/self.yaml" --src "$T/s" --tgt "$T/t" --model "$T/self.nmt" --cost-log "$T/self.yaml"
expect_fail "-c FILE as the model" 1 "self.yaml is both the option file \(-c\) \(read\) and the model" \
    "$NMT_BIN" train -c "$T/self.yaml" --src "$T/s" --tgt "$T/t" --model "$T/self.yaml" --overwrite
check "the option file is whole" cmp -s "$T/self.yaml" "$T/self.keep"
finish config
