#!/bin/sh
# serve_lowp.sh: `nmt serve --precision P --shortlist FILE,K,F` answers each request as `nmt
# translate` with the same options answers the same line (both one sentence per batch: the
# shortlist is a batch's union and int8's activation scale is a product's, so both depend on
# which sentences share a batch), with int8 (bf16, or fp32 alone, where the CPU lacks it); the
# lines are chosen so that dropping either option would change some answer; and the refusals (a
# missing table, a bad --shortlist value, an unknown precision).
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
