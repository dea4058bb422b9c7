#!/bin/sh
# example.sh: examples/translate.c, built against the public header and libnmt.a only, loads a
# model and translates exactly as `nmt translate` does with the same settings.
. tests/cli/lib.sh
EX=${NMT_EXAMPLES:-build/examples}/translate
D=$NMT_SHARED/data/multi30k/tok
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
OMP_WAIT_POLICY=PASSIVE "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/m.nmt" --emb 16 --hid 16 --att 16 \
    --maxout 8 --vocab 300 --batch 20 --max-updates 150 --threads 1 --optimizer adam --lr 0.01 2> /dev/null
check "example built" test -x "$EX"
"$EX" "$T/m.nmt" "a man is riding a bike ." "two dogs play ." > "$T/ex" 2> "$T/err"
check "example ran" test $? -eq 0
printf 'a man is riding a bike .\ntwo dogs play .\n' | "$NMT_BIN" translate --model "$T/m.nmt" > "$T/cli"
cmp -s "$T/ex" "$T/cli" && ok || bad "example and nmt translate differ: $(cat "$T/ex") / $(cat "$T/cli")"
expect_fail "example, missing model" 1 "nope" "$EX" "$T/nope" "x"
finish example
