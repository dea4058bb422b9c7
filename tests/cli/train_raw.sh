#!/bin/sh
# train_raw.sh: `nmt train --tokenize en,fr --lowercase --normalize-punct` on raw Multi30k text gives
# the very model that training on the dataset's own tokenized files gives (byte for byte).
. tests/cli/lib.sh
R=$NMT_SHARED/data/multi30k
head -n 300 "$R/train.en" > "$T/r.en"; head -n 300 "$R/train.fr" > "$T/r.fr"
head -n 300 "$R/tok/train.en" > "$T/k.en"; head -n 300 "$R/tok/train.fr" > "$T/k.fr"
A="--emb 8 --hid 8 --att 8 --maxout 4 --vocab 200 --batch 20 --max-updates 20 --threads 1"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/raw.nmt" --tokenize en,fr --lowercase --normalize-punct $A 2> /dev/null
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/k.en" --tgt "$T/k.fr" --model "$T/tok.nmt" $A 2> /dev/null
check "raw-text model written" test -s "$T/raw.nmt"
cmp -s "$T/raw.nmt" "$T/tok.nmt" && ok || bad "training on raw text with --tokenize differs from training on tokenized text"
expect_fail "bad --tokenize" 2 "expected SRC,TGT" "$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/x" --tokenize en
expect_fail "--lowercase alone" 2 "go with --tokenize" "$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/x" --lowercase
finish train_raw
