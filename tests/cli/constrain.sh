#!/bin/sh
# constrain.sh: `nmt translate --prefix / --constraints / --hints-in-input` on a small trained
# model, checked from the output: every constraint phrase of a terminology set built from the dev
# references (scripts/terminology.sh) appears in every translation, 1-best and n-best, at beams
# 1, 5 and 12 (counted by scripts/constraints_met.sh); each prefixed translation begins with its
# prefix and its score is `nmt score`'s of the same pair; no hints (or empty ones) change nothing,
# byte for byte; hints in the input equal hints in files; over a shortlist that lacks their words,
# too; bad hints get a message and exit 1.
# kernel sets: all: constrained sentences beside plain ones, the server and devsim against the CPU (tests/cli/kernels.sh)
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
export OMP_WAIT_POLICY=PASSIVE NMT_BLAS_AUTOTUNE=0
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
model tiny "$T/m.nmt" # the shared fixture (lib.sh): 150 updates of a size-16 model on these 400 pairs
check "model trained" test -s "$T/m.nmt"
TR="$NMT_BIN translate --model $T/m.nmt --threads 1"
head -n 40 "$D/val.en" > "$T/in"; head -n 40 "$D/val.fr" > "$T/ref"
NMT_BIN=$NMT_BIN sh scripts/terminology.sh "$T/m.nmt" "$T/ref" 2 > "$T/terms"
[ "$(grep -c . "$T/terms")" -ge 30 ] && ok || bad "terminology set: $(grep -c . "$T/terms") lines with phrases of 40"

# every phrase in every hypothesis
for beam in 1 5 12; do
    $TR --beam $beam --constraints "$T/terms" < "$T/in" > "$T/o$beam" 2> "$T/e$beam" || bad "beam $beam: $(cat "$T/e$beam")"
    sh scripts/constraints_met.sh "$T/terms" "$T/o$beam" > "$T/met$beam"
    read -r _ n _ m _ h _ a < "$T/met$beam"
    [ "$n" -ge 50 ] && [ "$m" -eq "$n" ] && [ "$h" -eq 40 ] && ok || bad "beam $beam: $(cat "$T/met$beam")"
done
$TR --beam 5 --n-best 5 --constraints "$T/terms" < "$T/in" > "$T/nb" 2> "$T/enb"
# (of the n-best, those that ended hold every phrase; the best first; one cut at the length limit
# without them may follow: the output does not say which, so the best of each line is counted)
sh scripts/constraints_met.sh "$T/terms" "$T/nb" nbest > "$T/metnb"
read -r _ n _ m _ h _ a < "$T/metnb"
[ "$h" -ge 150 ] && [ "$m" -ge $((n * 95 / 100)) ] && ok || bad "n-best: $(cat "$T/metnb")"
awk -F' \\|\\|\\| ' '!seen[$1]++ { print $2 }' "$T/nb" > "$T/nb1"
sh scripts/constraints_met.sh "$T/terms" "$T/nb1" > "$T/metnb1"
read -r _ n _ m _ h _ a < "$T/metnb1"
[ "$m" -eq "$n" ] && [ "$h" -eq 40 ] && ok || bad "n-best's best: $(cat "$T/metnb1")"
# unconstrained, the same model misses some: the check above can fail
$TR --beam 5 < "$T/in" > "$T/plain"
sh scripts/constraints_met.sh "$T/terms" "$T/plain" > "$T/metplain"
read -r _ n _ m _ h _ a < "$T/metplain"
[ "$m" -lt "$n" ] && ok || bad "unconstrained output holds every phrase already: $(cat "$T/metplain")"

# no hints, or empty ones: the same bytes
: > "$T/none"; for i in $(seq 40); do echo >> "$T/none"; done
$TR --beam 5 --constraints "$T/none" --prefix "$T/none" < "$T/in" > "$T/empty"
cmp -s "$T/plain" "$T/empty" && ok || bad "empty hints changed the output"

# prefixes: the reference's first 2 words (those the model has) on every other line
$NMT_BIN vocab --model "$T/m.nmt" --side tgt > "$T/vocab" 2> /dev/null
awk -F'\t' 'NR == FNR { v[$2] = 1; next } FNR % 2 { split($0, w, " "); print (w[1] in v) ? ((w[2] in v) ? w[1] " " w[2] : w[1]) : ""; next }
    { print "" }' "$T/vocab" "$T/ref" > "$T/pfx"
[ "$(grep -c . "$T/pfx")" -ge 10 ] && ok || bad "prefixes: $(grep -c . "$T/pfx") of 20"
$TR --beam 5 --prefix "$T/pfx" --no-length-norm --scores < "$T/in" > "$T/op"
awk -F' \\|\\|\\| ' 'NR == FNR { p[FNR] = $0; next } p[FNR] != "" && index($1 " ", p[FNR] " ") != 1 { bad++ }
    END { exit bad > 0 }' "$T/pfx" "$T/op" && ok || bad "a translation does not begin with its prefix"
sed 's/ ||| .*//' "$T/op" > "$T/op.txt"
$NMT_BIN score --model "$T/m.nmt" --src "$T/in" --tgt "$T/op.txt" --threads 1 > "$T/sc"
paste -d'\t' "$T/op" "$T/sc" | awk -F'\t' '{ split($1, f, / \|\|\| /); d = f[2] - $2; if (d < 0) d = -d; if (d > 1e-4) bad++ }
    END { exit bad > 0 }' && ok || bad "prefixed translations' scores differ from nmt score's"
# both at once, from files and from the input's fields
$TR --beam 5 --prefix "$T/pfx" --constraints "$T/terms" < "$T/in" > "$T/both"
paste "$T/in" "$T/pfx" "$T/terms" | $TR --beam 5 --hints-in-input > "$T/both.in"
cmp -s "$T/both" "$T/both.in" && ok || bad "--hints-in-input differs from --prefix with --constraints"
# lines without terms: paste leaves an empty last field, which means none, as the file's empty line
awk 'NR % 3 { print; next } { print "" }' "$T/terms" > "$T/terms_gap"
$TR --beam 5 --prefix "$T/pfx" --constraints "$T/terms_gap" < "$T/in" > "$T/gap"
paste "$T/in" "$T/pfx" "$T/terms_gap" | $TR --beam 5 --hints-in-input > "$T/gap.in" 2> "$T/gap.err"
[ -s "$T/gap" ] && cmp -s "$T/gap" "$T/gap.in" && ok || bad "paste with lines without terms differs from the files: $(head -c 300 "$T/gap.err")"
expect_fail "a tab after the last phrase" 1 "stdin:2: constraint phrase 2 is empty" \
    sh -c "printf 'a man .\\t\\tun\\nthe dog .\\t\\tun\\t\\n' | $TR --hints-in-input"
sh scripts/constraints_met.sh "$T/terms" "$T/both" > "$T/metboth"
read -r _ n _ m _ h _ a < "$T/metboth"
[ "$m" -eq "$n" ] && ok || bad "prefix and constraints: $(cat "$T/metboth")"

# with a shortlist so small (1 translation a source word, 1 frequent word) that it lacks most
# phrases: they join the batch's set, so each is still written, in fp32 and in int8; plain
# decoding over the same set writes fewer; prefixes still begin their lines
"$NMT_BIN" ibm --src "$T/s" --tgt "$T/t" --sym gdfa --threads 1 > "$T/links" 2> /dev/null
"$NMT_BIN" lex --src "$T/s" --tgt "$T/t" --align "$T/links" --top 5 --out "$T/lex" 2> /dev/null
check "shortlist table" test -s "$T/lex"
for p in fp32 int8; do
    $TR --beam 5 --precision $p --shortlist "$T/lex,1,1" --constraints "$T/terms" < "$T/in" > "$T/sl$p" 2> "$T/esl$p" ||
        bad "$p shortlist with constraints: $(cat "$T/esl$p")"
    sh scripts/constraints_met.sh "$T/terms" "$T/sl$p" > "$T/metsl$p"
    read -r _ n _ m _ h _ a < "$T/metsl$p"
    [ "$n" -ge 50 ] && [ "$m" -eq "$n" ] && [ "$h" -eq 40 ] && ok || bad "$p shortlist: $(cat "$T/metsl$p")"
done
$TR --beam 5 --shortlist "$T/lex,1,1" < "$T/in" > "$T/slplain"
sh scripts/constraints_met.sh "$T/terms" "$T/slplain" > "$T/metslplain"
read -r _ n _ m _ h _ a < "$T/metslplain"
[ "$m" -lt $((n / 2)) ] && ok || bad "the shortlist holds the phrases already: $(cat "$T/metslplain")"
$TR --beam 5 --shortlist "$T/lex,1,1" --prefix "$T/pfx" --constraints "$T/terms" < "$T/in" > "$T/slboth"
awk 'NR == FNR { p[FNR] = $0; next } p[FNR] != "" && index($0 " ", p[FNR] " ") != 1 { bad++ } END { exit bad > 0 }' \
    "$T/pfx" "$T/slboth" && ok || bad "a translation over the shortlist does not begin with its prefix"
sh scripts/constraints_met.sh "$T/terms" "$T/slboth" > "$T/metslboth"
read -r _ n _ m _ h _ a < "$T/metslboth"
[ "$m" -eq "$n" ] && ok || bad "shortlist, prefix and constraints: $(cat "$T/metslboth")"

# bad hints
printf 'un chat\n' > "$T/in1"; printf 'a cat .\n' > "$T/src1"
printf 'xyzzy\n' > "$T/bad1"
expect_fail "unknown word" 1 "bad1:1: constraint 1: 'xyzzy' is not in the model's target vocabulary" \
    $TR --constraints "$T/bad1" --input "$T/src1"
printf 'un\t\tchat\n' > "$T/bad2"
expect_fail "empty phrase" 1 "bad2:1: constraint phrase 2 is empty" $TR --constraints "$T/bad2" --input "$T/src1"
awk 'BEGIN { for (i = 0; i < 20; i++) printf "un "; print "" }' > "$T/bad3"
expect_fail "long prefix" 1 "pass the length limit of 12 tokens" $TR --prefix "$T/bad3" --input "$T/src1"
printf 'un\nun\n' > "$T/two"
expect_fail "longer hints file" 1 "two has more lines than the input" $TR --prefix "$T/two" --input "$T/src1"
printf 'un\n' > "$T/one" # words the model knows: a line's hints are read with the line
expect_fail "shorter hints file" 1 "one has 1 lines, fewer than" $TR --prefix "$T/one" --input "$T/two"
expect_fail "both ways" 2 "not with --prefix" $TR --prefix "$T/one" --hints-in-input --input "$T/src1"
expect_fail "sampling" 1 "not with sampling" $TR --sample --prefix "$T/one" --input "$T/src1"
finish constrain
