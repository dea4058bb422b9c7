#!/bin/sh
# train_overwrite.sh: a run started where an earlier one left its model or checkpoint refuses,
# naming them and the two ways on (--resume, --overwrite), and leaves them as they were; with
# --overwrite it starts over and says so; --resume and --overwrite together are refused.
. tests/cli/lib.sh
head -n 40 "$NMT_SHARED/data/multi30k/tok/train.en" > "$T/s"; head -n 40 "$NMT_SHARED/data/multi30k/tok/train.fr" > "$T/t"
tr() { "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --emb 4 --hid 4 --att 4 --maxout 2 --max-updates 2 "$@"; }
tr --model "$T/m.nmt" 2> "$T/err0" && [ -s "$T/m.nmt" ] && [ -s "$T/m.nmt.ckpt" ] && ok || bad "first run: $(cat "$T/err0")"
grep -q overwrite "$T/err0" && bad "a first run speaks of --overwrite" || ok
cp "$T/m.nmt" "$T/m0"; cp "$T/m.nmt.ckpt" "$T/c0"
expect_fail "again without --resume" 1 "m\.nmt and .*m\.nmt\.ckpt exist from an earlier run.*--resume .*m\.nmt\.ckpt goes on.*--overwrite starts over" \
    tr --model "$T/m.nmt" --seed 7
cmp -s "$T/m.nmt" "$T/m0" && cmp -s "$T/m.nmt.ckpt" "$T/c0" && ok || bad "the refused run changed the files"
# the checkpoint alone (a run killed before its first model) is an earlier run too
mv "$T/m.nmt" "$T/keep"
expect_fail "checkpoint alone" 1 "m\.nmt\.ckpt exists from an earlier run" tr --model "$T/m.nmt"
mv "$T/keep" "$T/m.nmt"
expect_fail "--checkpoint elsewhere" 1 "m\.nmt exists from an earlier run.*--resume .*/c\.ckpt" \
    tr --model "$T/m.nmt" --checkpoint "$T/c.ckpt"
expect_fail "--resume with --overwrite" 1 "give one of them" tr --model "$T/m.nmt" --resume "$T/m.nmt.ckpt" --overwrite
tr --model "$T/m.nmt" --seed 7 --overwrite 2> "$T/err" && ok || bad "--overwrite: $(cat "$T/err")"
grep -q "overwrite: starting over; .*m\.nmt and .*m\.nmt\.ckpt" "$T/err" && ok || bad "--overwrite said nothing: $(cat "$T/err")"
cmp -s "$T/m.nmt" "$T/m0" && bad "--overwrite left the old model" || ok
tr --model "$T/m.nmt" --resume "$T/m.nmt.ckpt" --max-updates 3 2> "$T/err" && ok || bad "--resume: $(cat "$T/err")"
finish train_overwrite
