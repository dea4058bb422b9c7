#!/bin/sh
# serve_lowp.sh: `nmt serve --precision P --shortlist FILE,K,F` answers each request as `nmt
# translate` with the same options answers the same line (both one sentence per batch: the
# shortlist is a batch's union and int8's activation scale is a product's, so both depend on
# which sentences share a batch), with int8 (bf16, or fp32 alone, where the CPU lacks it); the
# lines are chosen so that dropping either option would change some answer; constraint phrases
# over the shortlist as nmt translate writes them, every phrase there; and the refusals (a
# missing table, a bad --shortlist value, an unknown precision).
# kernel sets: all: the server against nmt translate (tests/cli/kernels.sh)
. tests/cli/lib.sh
export OMP_WAIT_POLICY=PASSIVE
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
C="$PY tests/cli/serve_client.py"
D=$NMT_SHARED/data/multi30k/tok
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
model small600 "$T/m.nmt"
check "model trained" test -s "$T/m.nmt"
"$NMT_BIN" lex --src "$T/s" --tgt "$T/t" --model "$T/m.nmt" --top 5 --threads 1 --out "$T/lex" 2> /dev/null
check "shortlist table written" test -s "$T/lex"
SL="$T/lex,2,5"
TR="$NMT_BIN translate --model $T/m.nmt --beam 4 --threads 1 --batch 1"
sed -n 1,24p "$D/test_2016_flickr.en" > "$T/in"
# phrases from the references (scripts/terminology.sh); the first three lines' for the server
sed -n 1,24p "$D/test_2016_flickr.fr" > "$T/ref"
NMT_BIN=$NMT_BIN sh scripts/terminology.sh "$T/m.nmt" "$T/ref" 2 > "$T/terms"
head -n 3 "$T/terms" > "$T/cterms"

P=fp32
for p in int8 bf16; do
    $TR --precision $p < /dev/null 2> /dev/null && { P=$p; break; }
done
[ $P = fp32 ] && echo "neither int8 nor bf16 on this CPU: fp32 with the shortlist only"
$TR --precision $P --shortlist "$SL" < "$T/in" > "$T/want"
$TR --precision $P < "$T/in" > "$T/nosl"
$TR --shortlist "$SL" < "$T/in" > "$T/fp32sl"
cmp -s "$T/want" "$T/nosl" && bad "the shortlist changes no line: the comparison would not see it ignored" || ok
if [ $P != fp32 ]; then
    cmp -s "$T/want" "$T/fp32sl" && bad "$P changes no line: the comparison would not see it ignored" || ok
fi

. tests/cli/lib_serve.sh
if serve_start "$T/log" "$T/m.nmt" --precision $P --shortlist "$SL" --max-batch 1 --workers 2 --beam 4; then
    grep -q "$P, shortlist $SL" "$T/log" && ok || bad "the start line does not name $P and the shortlist: $(cat "$T/log")"
    $C many $PORT "$T/in" 8 4 > "$T/got" 2> "$T/err" && ok || bad "requests failed: $(cat "$T/err")"
    cmp -s "$T/got" "$T/want" && ok || bad "answers differ from nmt translate --precision $P --shortlist: $(diff "$T/got" "$T/want" | head -n 4)"
    # constraint phrases over the shortlist (their words join its set): nmt translate's answers
    for i in 1 2 3; do
        sed -n "${i}p" "$T/in" > "$T/in$i"; sed -n "${i}p" "$T/terms" > "$T/terms$i"
        $TR --precision $P --shortlist "$SL" --constraints "$T/terms$i" < "$T/in$i" >> "$T/cwant"
        $PY -c 'import json, sys; print(json.dumps({"texts": [open(sys.argv[1]).read().strip()], "beam": 4,
            "constraints": [open(sys.argv[2]).read().strip("\n").split("\t")]}))' "$T/in$i" "$T/terms$i" > "$T/creq$i"
        $C req $PORT POST /translate application/json "@$T/creq$i" |
            $PY -c 'import json, sys; print(json.loads(sys.stdin.read().split("\t", 1)[1])["translations"][0]["text"])' >> "$T/cgot"
    done
    cmp -s "$T/cgot" "$T/cwant" && ok || bad "constrained answers differ from nmt translate's: $(diff "$T/cgot" "$T/cwant" | head -n 4)"
    sh scripts/constraints_met.sh "$T/cterms" "$T/cgot" > "$T/cmet"
    read -r _ n _ m _ h _ a < "$T/cmet"
    [ "$n" -ge 3 ] && [ "$m" -eq "$n" ] && ok || bad "constraints over the shortlist: $(cat "$T/cmet")"
    kill -TERM $PID; wait $PID
else
    bad "server did not start: $(cat "$T/log")"
fi

# refusals
S="$NMT_BIN serve --model $T/m.nmt --port 0"
expect_fail "missing table" 1 "nope.tsv" $S --shortlist "$T/nope.tsv"
expect_fail "bad K" 2 "--shortlist.*K and F integers" $S --shortlist "$T/lex,x"
expect_fail "bad precision" 2 "--precision" $S --precision int4
# the same exit and words as nmt translate's (lowp.sh): int8 below AVX2, bf16 below AVX512_BF16
for c in "int8 SSE41 AVX2" "bf16 AVX2 AVX512_BF16"; do
    set -- $c
    expect_fail "$1 without the instructions" 1 "$1 decoding needs $3, which this CPU \\(or build\\) lacks" \
        env DNNL_MAX_CPU_ISA=$2 $S --precision $1
done
finish serve_lowp
