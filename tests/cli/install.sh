#!/bin/sh
# install.sh: `make install PREFIX=DIR` gives a tree a C program builds against the usual way:
# examples/translate.c compiled with nothing but `pkg-config --cflags --libs nmt` from that tree,
# run against the installed shared libnmt, translates exactly as `nmt translate`; the installed
# program runs; nmt.pc names the version the program prints. Each library carries its SONAME
# (libnmt.so.0.2 for 0.2.x) and installs as ldconfig expects; a program of libnmt-eval builds from
# `pkg-config nmt-eval` alone (nmt.pc once lacked it, where nmt_metric_score lives). The Python
# package is installed beside them and runs against the installed libnmt.
. tests/cli/lib.sh
PFX=$T/prefix
# the test's own make: not the flags of a make that may be running the tests (a sanitizer pass)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD -u OPT -u SANFLAGS -u RUNFLAGS \
    make --no-print-directory install PREFIX="$PFX" > "$T/install.log" 2>&1 \
    && ok || bad "make install: $(tail -n 5 "$T/install.log")"
for f in bin/nmt include/nmt.h lib/libnmt.so lib/libnmt.a lib/libnmt-eval.so lib/libnmt-serve.a lib/pkgconfig/nmt.pc \
    lib/pkgconfig/nmt-eval.pc lib/pkgconfig/nmt-serve.pc; do
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
# the SONAME: the major version, or before 1.0 (where any release may break compatibility) 0.MINOR
sov=$(echo "$v" | awk -F. '{ print $1 == 0 ? $1 "." $2 : $1 }')
for l in libnmt libnmt-eval libnmt-serve; do
    so=$(readelf -d "$PFX/lib/$l.so" 2> /dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$so" = "$l.so.$sov" ] && [ "$(readlink "$PFX/lib/$l.so.$sov")" = "$l.so.$v" ] && ok ||
        bad "$l: SONAME '$so', $l.so.$sov -> $(readlink "$PFX/lib/$l.so.$sov")"
done
ldd "$PFX/lib/libnmt-eval.so" | grep -q "libnmt.so.$sov => $PFX/lib/libnmt.so.$sov" && ok ||
    bad "libnmt-eval does not find libnmt.so.$sov: $(ldd "$PFX/lib/libnmt-eval.so" | grep nmt)"
# a program of the evaluation library: BLEU of the example's translations against nmt translate's, as nmt bleu gives it
cat > "$T/score.c" <<'C'
#include <stdio.h>
#include <nmt.h>
int main(int argc, char **argv)
{
    const char *hyp[] = {argv[1]}, *ref[] = {argv[2]};
    double score;
    nmt_err err;
    if (argc != 3 || nmt_metric_score(NMT_METRIC_BLEU, hyp, ref, 1, &score, &err)) return 1;
    printf("%.4f\n", score);
    return 0;
}
C
# shellcheck disable=SC2046
cc -std=c11 -o "$T/score" "$T/score.c" $(pkg-config --cflags --libs nmt-eval) 2> "$T/cc2.log" && ok || bad "a program of nmt-eval: $(head -n 5 "$T/cc2.log")"
D=$NMT_SHARED/data/multi30k/tok
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
OMP_WAIT_POLICY=PASSIVE "$PFX/bin/nmt" train --src "$T/s" --tgt "$T/t" --model "$T/m.nmt" --emb 16 --hid 16 --att 16 \
    --maxout 8 --vocab 300 --batch 20 --max-updates 150 --threads 1 --optimizer adam --lr 0.01 2> /dev/null
"$T/translate" "$T/m.nmt" "a man is riding a bike ." "two dogs play ." > "$T/ex" 2> "$T/err" && ok || bad "example: $(cat "$T/err")"
printf 'a man is riding a bike .\ntwo dogs play .\n' | "$NMT_BIN" translate --model "$T/m.nmt" > "$T/cli"
[ -s "$T/cli" ] && cmp -s "$T/ex" "$T/cli" && ok || bad "the installed example and nmt translate differ: $(cat "$T/ex") / $(cat "$T/cli")"
echo "a man rides a red bike in the park ." > "$T/h"; echo "a man is riding a red bike in the park ." > "$T/r"
want=$("$NMT_BIN" bleu -b -w 4 "$T/r" < "$T/h") got=$("$T/score" "$(cat "$T/h")" "$(cat "$T/r")")
[ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "nmt-eval's BLEU '$got', nmt bleu's '$want'"
# the Python package beside the libraries (make install-python), linked to the installed libnmt,
# translating as nmt translate does; where /usr/bin/python3 has no headers the install says so
pylib=$(ls -d "$PFX"/lib/python3*/dist-packages 2> /dev/null | head -n 1)
if [ -n "$pylib" ]; then
    so=$(ls "$pylib"/nmt/_nmt*.so 2> /dev/null | head -n 1)
    ldd "$so" 2> /dev/null | grep -q "libnmt.so.$sov => $PFX/lib/libnmt.so.$sov" && ok ||
        bad "the Python package does not use the installed libnmt: $(ldd "$so" 2>&1 | grep nmt)"
    got=$(PYTHONPATH=$pylib /usr/bin/python3 -c 'import sys, nmt; print("\n".join(nmt.Translator(sys.argv[1]).translate(sys.argv[2:])))' \
        "$T/m.nmt" "a man is riding a bike ." "two dogs play ." 2> "$T/pyerr")
    [ -n "$got" ] && [ "$got" = "$(cat "$T/cli")" ] && ok || bad "the installed Python package: '$got' $(head -c 300 "$T/pyerr")"
elif grep -q "no Python.h" "$T/install.log"; then
    ok
else
    bad "the Python package was not installed: $(grep -i python "$T/install.log" | tail -n 3)"
fi
finish install
