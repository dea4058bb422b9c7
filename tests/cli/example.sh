#!/bin/sh
# example.sh: examples/translate.c, built against the public header and libnmt.a only, loads a
# model and translates exactly as `nmt translate` does with the same settings.
. tests/cli/lib.sh
EX=${NMT_EXAMPLES:-build/examples}/translate
model tiny "$T/m.nmt"
check "example built" test -x "$EX"
"$EX" "$T/m.nmt" "a man is riding a bike ." "two dogs play ." > "$T/ex" 2> "$T/err"
check "example ran" test $? -eq 0
printf 'a man is riding a bike .\ntwo dogs play .\n' | "$NMT_BIN" translate --model "$T/m.nmt" > "$T/cli"
cmp -s "$T/ex" "$T/cli" && ok || bad "example and nmt translate differ: $(cat "$T/ex") / $(cat "$T/cli")"
expect_fail "example, missing model" 1 "nope" "$EX" "$T/nope" "x"
finish example
