#!/bin/sh
# install.sh: `make install PREFIX=DIR` gives a tree a C program builds against the usual way:
# examples/translate.c compiled with nothing but `pkg-config --cflags --libs nmt` from that tree,
# run against the installed shared libnmt, translates exactly as `nmt translate`; the installed
# program runs; nmt.pc names the version the program prints.
. tests/cli/lib.sh
PFX=$T/prefix
# the test's own make: not the flags of a make that may be running the tests (a sanitizer pass)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD -u OPT -u SANFLAGS -u RUNFLAGS \
    make --no-print-directory install PREFIX="$PFX" > "$T/install.log" 2>&1 \
    && ok || bad "make install: $(tail -n 5 "$T/install.log")"
for f in bin/nmt include/nmt.h lib/libnmt.so lib/libnmt.a lib/libnmt-eval.so lib/libnmt-serve.a lib/pkgconfig/nmt.pc; do
    [ -f "$PFX/$f" ] && ok || bad "not installed: $f"
done
export PKG_CONFIG_PATH="$PFX/lib/pkgconfig"
v=$(pkg-config --modversion nmt 2> "$T/err")
"$PFX/bin/nmt" --version > "$T/ver" 2>&1
grep -q -- "$v" "$T/ver" && [ -n "$v" ] && ok || bad "nmt.pc version '$v', the program says $(cat "$T/ver")"
# shellcheck disable=SC2046
cc -std=c11 -o "$T/translate" examples/translate.c $(pkg-config --cflags nmt) $(pkg-config --libs nmt) 2> "$T/cc.log" \
    && ok || bad "examples/translate.c against the installed tree: $(head -n 5 "$T/cc.log")"
ldd "$T/translate" | grep -q "$PFX/lib/libnmt.so" && ok || bad "the example does not use the installed libnmt.so: $(ldd "$T/translate" | grep nmt)"
D=$NMT_SHARED/data/multi30k/tok
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
OMP_WAIT_POLICY=PASSIVE "$PFX/bin/nmt" train --src "$T/s" --tgt "$T/t" --model "$T/m.nmt" --emb 16 --hid 16 --att 16 \
    --maxout 8 --vocab 300 --batch 20 --max-updates 150 --threads 1 --optimizer adam --lr 0.01 2> /dev/null
"$T/translate" "$T/m.nmt" "a man is riding a bike ." "two dogs play ." > "$T/ex" 2> "$T/err" && ok || bad "example: $(cat "$T/err")"
printf 'a man is riding a bike .\ntwo dogs play .\n' | "$NMT_BIN" translate --model "$T/m.nmt" > "$T/cli"
[ -s "$T/cli" ] && cmp -s "$T/ex" "$T/cli" && ok || bad "the installed example and nmt translate differ: $(cat "$T/ex") / $(cat "$T/cli")"
finish install
