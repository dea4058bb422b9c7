#!/bin/sh
# tf_decode.sh: every decoding feature of `nmt translate` and `nmt score` on a Transformer (the
# tf600 fixture), each checked against something the feature does not compute itself: n-best
# lists and word scores against `nmt score`, the ranking rules against the printed scores and
# lengths, sampling against greedy search and itself, prefixes and constraints against their
# files, ensembles against their models' own scores and attention, alignments and UNK
# replacement against forced alignment (`nmt align`), every one of them on devsim against the
# CPU byte for byte, and `nmt serve` against `nmt translate` (and on devsim against itself on the
# CPU). (The Python package's side is in tests/python/test_nmt.py, class TransformerDecode.)
# kernel sets: all: batch compositions, forced decoding against the search, the server against the program (tests/cli/kernels.sh)
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
export OMP_WAIT_POLICY=PASSIVE NMT_BLAS_AUTOTUNE=0
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
model tf600 "$T/m.nmt"
check "model trained" test -s "$T/m.nmt"
M=$T/m.nmt
head -n 12 "$D/val.en" > "$T/v"

# tr2 OUT INPUT ARGS...: nmt translate ARGS on INPUT into OUT on the CPU, then on devsim into
# OUT.dev, which must hold the same bytes (feature by feature: each call below is one)
tr2() {
    t_out=$1 t_in=$2; shift 2
    "$NMT_BIN" translate --threads 1 "$@" "$t_in" > "$t_out" 2> "$t_out.err" || { bad "translate $*: $(head -c 300 "$t_out.err")"; return; }
    "$NMT_BIN" translate --threads 1 --device devsim "$@" "$t_in" > "$t_out.dev" 2> "$t_out.err" ||
        { bad "translate --device devsim $*: $(head -c 300 "$t_out.err")"; return; }
    cmp -s "$t_out" "$t_out.dev" && ok || bad "devsim differs from the CPU: translate $*: $(diff "$t_out" "$t_out.dev" | head -n 3)"
}
NB="$PY tests/cli/nbest_reader.py"
SC="$NMT_BIN score --threads 1 --model"

# 1. n-best lists with word scores: F0= is nmt score's log-probability of the hypothesis and the
# sum of its word scores, SCORE is F0= / tokens (the reader checks all three); the 1-best of the
# n-best list is plain translate's output at the same beam, whatever the batch; --no-unk
tr2 "$T/nb" "$T/v" --model "$M" --beam 4 --n-best 4 --word-scores --alignment hard
$NB check "$T/nb" "$T/v" --score "$SC $M" --k 4 --word-scores --align hard > /dev/null 2> "$T/nb.chk" && ok ||
    bad "n-best with word scores: $(head -n 3 "$T/nb.chk")"
tr2 "$T/one" "$T/v" --model "$M" --beam 4
# (a sentence's output does not depend on its batch: docs/CLI.md; here padded beside longer ones)
tr2 "$T/nbb" "$T/v" --model "$M" --beam 4 --n-best 4 --word-scores --alignment hard --batch 5
cmp -s "$T/nb" "$T/nbb" && ok || bad "the n-best list depends on the batch: $(diff "$T/nb" "$T/nbb" | head -n 3)"
awk -F ' \\|\\|\\| ' '!seen[$1]++ { print $2 }' "$T/nb" | cmp -s - "$T/one" && ok || bad "the n-best list's first differs from the 1-best"
# --no-unk: no <unk> in any hypothesis nor draw, where the plain search writes some
tr2 "$T/nu" "$T/v" --model "$M" --beam 4 --n-best 4 --no-unk
tr2 "$T/nus" "$T/v" --model "$M" --sample --seed 5 --n-best 3 --no-unk
grep -q "<unk>" "$T/nb" && [ "$(wc -l < "$T/nu")" -eq 48 ] && [ "$(wc -l < "$T/nus")" -eq 36 ] && ! grep -q "<unk>" "$T/nu" "$T/nus" &&
    ok || bad "--no-unk: $(grep -c "<unk>" "$T/nu" "$T/nus" | tr '\n' ' ')"
# forced decoding on devsim too
sed 's/ ||| .*//' "$T/one" > "$T/hyp"
$SC "$M" --src "$T/v" --tgt "$T/hyp" > "$T/sc"; $SC "$M" --src "$T/v" --tgt "$T/hyp" --device devsim > "$T/sc.dev"
[ -s "$T/sc" ] && cmp -s "$T/sc" "$T/sc.dev" && ok || bad "nmt score on devsim differs from the CPU"

# 2. the ranking rules: the search's finished hypotheses do not depend on the rule, only their
# order does (docs/CLI.md); under each rule the list is sorted by the printed score, which is the
# rule's value of F0= and the length (the reader); the 1-best's length never shrinks as ALPHA
# grows (for fixed candidates, log-probability / length^ALPHA favours longer ones as ALPHA grows),
# and does grow on some line
for r in "0 --no-length-norm" "0.6 --length-penalty 0.6" "1 --length-norm" "2 --length-penalty 2"; do
    a=${r%% *} o=${r#* }
    # shellcheck disable=SC2086
    tr2 "$T/lp$a" "$T/v" --model "$M" --beam 4 --n-best 4 $o
    if [ "$a" = 0 ]; then ro=--raw; else ro="--alpha $a"; fi
    # shellcheck disable=SC2086
    $NB check "$T/lp$a" "$T/v" --score "$SC $M" --k 4 $ro > /dev/null 2> "$T/lp.chk" && ok || bad "$o: $(head -n 3 "$T/lp.chk")"
    awk -F ' \\|\\|\\| ' '$1 == last && $NF + 0 > prev + 0 { bad = 1 } { last = $1; prev = $NF } END { exit bad || NR != 48 }' "$T/lp$a" &&
        ok || bad "$o: the n-best list is not in the order of its scores"
    awk -F ' \\|\\|\\| ' '{ print $1 " ||| " $2 " ||| " $3 }' "$T/lp$a" | sort > "$T/set$a"
    [ "$a" = 0 ] || { cmp -s "$T/set$a" "$T/set0" && ok || bad "$o: other hypotheses than --no-length-norm's: $(diff "$T/set$a" "$T/set0" | head -n 3)"; }
    awk -F ' \\|\\|\\| ' '!seen[$1]++ { print split($2, w, " ") }' "$T/lp$a" > "$T/len$a"
done
paste "$T/len0" "$T/len0.6" "$T/len1" "$T/len2" | awk '{ if ($1 > $2 || $2 > $3 || $3 > $4) bad = 1; if ($1 < $4) grew = 1 }
    END { exit bad || !grew || NR != 12 }' && ok || bad "the 1-best's length by ALPHA 0, 0.6, 1, 2: $(paste "$T/len0" "$T/len0.6" "$T/len1" "$T/len2" | tr '\t\n' ' ;')"

# 3. sampling: a seed draws the same whatever the batch, another seed otherwise; each draw's score
# is nmt score's log-probability / tokens; the top 1, a nucleus of no mass and a temperature near
# 0 all draw greedy search's translations, and a temperature of 0.5 draws otherwise than 1
tr2 "$T/s5" "$T/v" --model "$M" --sample --seed 5 --n-best 3
tr2 "$T/s5b" "$T/v" --model "$M" --sample --seed 5 --n-best 3 --batch 1
tr2 "$T/s6" "$T/v" --model "$M" --sample --seed 6 --n-best 3
txt() { awk -F ' \\|\\|\\| ' '{ print $1 " ||| " $2 }' "$1"; }
txt "$T/s5" > "$T/s5.t"; txt "$T/s5b" > "$T/s5b.t"; txt "$T/s6" > "$T/s6.t"
[ "$(wc -l < "$T/s5.t")" -eq 36 ] && cmp -s "$T/s5.t" "$T/s5b.t" && ok || bad "--seed 5 drew otherwise with --batch 1: $(diff "$T/s5.t" "$T/s5b.t" | head -n 3)"
cmp -s "$T/s5.t" "$T/s6.t" && bad "--seed 6 drew what --seed 5 drew" || ok
$NB check "$T/s5" "$T/v" --score "$SC $M" --k 3 > /dev/null 2> "$T/s5.chk" && ok || bad "sampled scores: $(head -n 3 "$T/s5.chk")"
tr2 "$T/g1" "$T/v" --model "$M" --beam 1
for o in "--sample-topk 1" "--sample-topp 1e-9" "--temperature 0.001"; do
    # shellcheck disable=SC2086
    tr2 "$T/gs" "$T/v" --model "$M" --sample --seed 5 $o
    cmp -s "$T/gs" "$T/g1" && ok || bad "--sample $o drew otherwise than --beam 1: $(diff "$T/gs" "$T/g1" | head -n 3)"
done
tr2 "$T/t05" "$T/v" --model "$M" --sample --seed 5 --temperature 0.5
tr2 "$T/t1" "$T/v" --model "$M" --sample --seed 5
cmp -s "$T/t05" "$T/t1" && bad "--temperature 0.5 drew what 1 drew" || ok

# 4. prefixes and constraints: every phrase of a terminology set built from the references
# (scripts/terminology.sh) in every translation, 1-best and the n-best's best, at beams 4 and 12,
# which the unconstrained search misses; each prefixed translation begins with its prefix and
# scores nmt score's log-probability; hints in the input are hints in files; empty hints change
# nothing
head -n 40 "$D/val.en" > "$T/in"; head -n 40 "$D/val.fr" > "$T/ref"
NMT_BIN=$NMT_BIN sh scripts/terminology.sh "$M" "$T/ref" 2 > "$T/terms"
[ "$(grep -c . "$T/terms")" -ge 30 ] && ok || bad "terminology set: $(grep -c . "$T/terms") lines with phrases of 40"
met() { # TERMS OUTPUT [nbest]: "phrases met" and "hypotheses all-met" of scripts/constraints_met.sh
    sh scripts/constraints_met.sh "$@" > "$T/met"; read -r _ n _ m _ h _ a < "$T/met"
}
for beam in 4 12; do
    tr2 "$T/c$beam" "$T/in" --model "$M" --beam $beam --constraints "$T/terms"
    met "$T/terms" "$T/c$beam"
    [ "$n" -ge 50 ] && [ "$m" -eq "$n" ] && [ "$h" -eq 40 ] && ok || bad "constraints at beam $beam: $(cat "$T/met")"
done
tr2 "$T/cnb" "$T/in" --model "$M" --beam 4 --n-best 4 --constraints "$T/terms"
awk -F' \\|\\|\\| ' '!seen[$1]++ { print $2 }' "$T/cnb" > "$T/cnb1"
met "$T/terms" "$T/cnb1"
[ "$m" -eq "$n" ] && [ "$h" -eq 40 ] && [ "$(wc -l < "$T/cnb")" -eq 160 ] && ok || bad "constraints, the n-best's best: $(cat "$T/met")"
tr2 "$T/plain" "$T/in" --model "$M" --beam 4
met "$T/terms" "$T/plain"
[ "$m" -lt "$n" ] && ok || bad "the unconstrained output holds every phrase already: $(cat "$T/met")"
"$NMT_BIN" vocab --model "$M" --side tgt > "$T/vocab" 2> /dev/null
awk -F'\t' 'NR == FNR { v[$2] = 1; next } FNR % 2 { split($0, w, " "); print (w[1] in v) ? ((w[2] in v) ? w[1] " " w[2] : w[1]) : ""; next }
    { print "" }' "$T/vocab" "$T/ref" > "$T/pfx"
[ "$(grep -c . "$T/pfx")" -ge 10 ] && ok || bad "prefixes: $(grep -c . "$T/pfx") of 20"
tr2 "$T/op" "$T/in" --model "$M" --beam 4 --prefix "$T/pfx" --no-length-norm --scores
awk -F' \\|\\|\\| ' 'NR == FNR { p[FNR] = $0; next } p[FNR] != "" && index($1 " ", p[FNR] " ") != 1 { bad++ }
    END { exit bad > 0 }' "$T/pfx" "$T/op" && ok || bad "a translation does not begin with its prefix"
sed 's/ ||| .*//' "$T/op" > "$T/op.txt"
$SC "$M" --src "$T/in" --tgt "$T/op.txt" > "$T/opsc"
# (an output cut at the length limit has no EOS, which forced decoding would add: those are skipped)
paste -d'\t' "$T/op" "$T/opsc" "$T/in" | awk -F'\t' '{ split($1, f, / \|\|\| /); if (split(f[1], w, " ") == 3 * (split($5, s, " ") + 1)) next;
    n++; d = f[2] - $2; if (d < 0) d = -d; if (d > 1e-4) bad++ } END { exit bad > 0 || n < 30 }' && ok || bad "prefixed translations' scores differ from nmt score's"
tr2 "$T/both" "$T/in" --model "$M" --beam 4 --prefix "$T/pfx" --constraints "$T/terms"
paste "$T/in" "$T/pfx" "$T/terms" > "$T/hints"
tr2 "$T/both.in" "$T/hints" --model "$M" --beam 4 --hints-in-input
[ -s "$T/both" ] && cmp -s "$T/both" "$T/both.in" && ok || bad "--hints-in-input differs from --prefix with --constraints"
met "$T/terms" "$T/both"
[ "$m" -eq "$n" ] && ok || bad "prefix and constraints: $(cat "$T/met")"
: > "$T/none"; for _ in $(seq 40); do echo >> "$T/none"; done
tr2 "$T/empty" "$T/in" --model "$M" --beam 4 --constraints "$T/none" --prefix "$T/none"
cmp -s "$T/plain" "$T/empty" && ok || bad "empty hints changed the output"

# 5. ensembles: a Transformer given as an ensemble of one, with any weight, or twice, is itself
# (two copies' n-best lines carry F0= x F1= x); with another Transformer (other seed, fewer
# updates), and with an RNNsearch model of the same vocabularies (the tiny fixture), each output's
# score is the weighted mean of the models' own nmt score log-probabilities, F0= and F1= each
# model's own, nmt score of the ensemble the same mean; the mixed ensemble's attention rows are
# the mean of the two models' own forced attention (nmt align --soft) on that output; a model of
# other vocabularies is refused
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/b.nmt" --arch transformer --dim-model 32 --enc-depth 2 --dec-depth 2 \
    --heads 4 --dim-ffn 64 --max-updates 300 --seed 2 --vocab 300 --batch 20 --threads 1 --optimizer adam --lr 0.01 2> "$T/b.log"
check "second Transformer trained" test -s "$T/b.nmt"
model tiny "$T/r.nmt"
check "RNNsearch model trained" test -s "$T/r.nmt"
head -n 8 "$T/v" > "$T/v8"
tr2 "$T/e1" "$T/v8" --model "$M" --beam 4 --n-best 3 --alignment soft
tr2 "$T/e1w" "$T/v8" --models "$M" --weights 2.5 --beam 4 --n-best 3 --alignment soft
tr2 "$T/e2" "$T/v8" --model "$M" --model "$M" --beam 4 --n-best 3 --alignment soft
[ -s "$T/e1" ] && cmp -s "$T/e1" "$T/e1w" && ok || bad "--models M --weights 2.5 changes the Transformer's output"
nofeat() { awk -F ' \\|\\|\\| ' -v OFS=' ||| ' '{ $(NF - 1) = "F"; print }' "$1"; }
nofeat "$T/e1" > "$T/e1.nf"; nofeat "$T/e2" > "$T/e2.nf"
cmp -s "$T/e1.nf" "$T/e2.nf" && ok || bad "two copies of the Transformer differ from it: $(diff "$T/e1.nf" "$T/e2.nf" | head -n 4)"
paste -d '\t' "$T/e1" "$T/e2" | awk -F '\t' '{ split($1, a, " \\|\\|\\| "); split($2, b, " \\|\\|\\| "); split(a[4], f, " "); split(b[4], g, " ");
    if (g[1] != "F0=" || g[3] != "F1=" || g[2] != f[2] || g[4] != f[2]) bad = 1 } END { exit bad || NR != 24 }' &&
    ok || bad "two copies' features are not the model's F0= twice: $(head -n 1 "$T/e2")"
ens_mean() { # NAME MODEL2 WA WB: translate with the two models and weights, against their own scores
    tr2 "$T/ens" "$T/v8" --model "$M" --model "$2" --weights "$3,$4" --beam 4 --n-best 3 --no-length-norm
    awk -F ' \\|\\|\\| ' 'NR == FNR { src[NR - 1] = $0; next } { print src[$1] > "'"$T/es"'"; print $2 > "'"$T/eh"'" }' "$T/v8" "$T/ens"
    $SC "$M" --src "$T/es" --tgt "$T/eh" > "$T/sa"
    $SC "$2" --src "$T/es" --tgt "$T/eh" > "$T/sb"
    $SC "$M" --model "$2" --weights "$3,$4" --src "$T/es" --tgt "$T/eh" > "$T/sab"
    paste -d '\t' "$T/ens" "$T/sa" "$T/sb" "$T/sab" "$T/es" | awk -F '\t' -v wa="$3" -v wb="$4" '{
        split($1, f, " \\|\\|\\| "); nw = split(f[2], w, " "); ns = split($11, s, " "); split(f[3], F, " ");
        mean = (wa * $2 + wb * $5) / (wa + wb); e = $8 - mean; if (e < 0) e = -e; if (e > 3e-6) bad = 1;
        if (nw == int(3 * (ns + 1))) next; n++; d = f[4] - mean; if (d < 0) d = -d; if (d > 2e-4) bad = 1; if ($2 != $5) differ = 1
        da = F[2] - $2; db = F[4] - $5; if (da < 0) da = -da; if (db < 0) db = -db;
        if (F[1] != "F0=" || F[3] != "F1=" || da > 2e-4 || db > 2e-4) bad = 1 }
        END { exit bad || n < 12 || !differ }' \
        && ok || bad "$1, weights $3,$4: scores are not the weighted mean of the models': $(paste "$T/ens" "$T/sa" "$T/sb" | head -n 3)"
}
# a Transformer of other vocabularies is refused, naming the difference, in both commands
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/c.nmt" --arch transformer --dim-model 32 --enc-depth 1 --dec-depth 1 \
    --heads 4 --dim-ffn 64 --max-updates 1 --vocab 200 --batch 20 --threads 1 2> "$T/c.log"
expect_fail "fewer words" 1 "c.nmt has 200 source words, .*m.nmt 300" "$NMT_BIN" translate --model "$M" --model "$T/c.nmt" "$T/v8"
expect_fail "score: fewer words" 1 "m.nmt has 300 source words, .*c.nmt 200" "$NMT_BIN" score --model "$T/c.nmt" --model "$M" \
    --src "$T/v8" --tgt "$T/v8"
ens_mean "two Transformers" "$T/b.nmt" 1 1
ens_mean "two Transformers" "$T/b.nmt" 3 1
ens_mean "Transformer and RNNsearch" "$T/r.nmt" 1 1
ens_mean "Transformer and RNNsearch" "$T/r.nmt" 1 4
tr2 "$T/mix" "$T/v8" --model "$M" --model "$T/r.nmt" --beam 4 --alignment soft
# (nmt align --soft: a block of rows per pair, the output's words by the source's, a blank line after
# each; translate's rows have the source's EOS as a last column more. An empty output has no rows.)
paste -d '\t' "$T/v8" "$T/mix" | awk -F '\t' '{ sub(/ \|\|\| .*/, "", $2) } $2 != "" { print $1 > "'"$T/mix.src"'"; print $2 }' > "$T/mix.txt"
for m in "$M" "$T/r.nmt"; do "$NMT_BIN" align --model "$m" --src "$T/mix.src" --tgt "$T/mix.txt" --soft --threads 1; done > "$T/mix.al"
$PY - "$T/mix" "$T/mix.al" > "$T/mix.chk" 2>&1 << 'EOF' && ok || bad "the mixed ensemble's attention is not its models' mean: $(tail -n 3 "$T/mix.chk")"
import sys
lines = [l.rstrip("\n").split(" ||| ") for l in open(sys.argv[1])]
rows = [[[float(x) for x in r.split()] for r in f[1].split(" ; ")] for f in lines if f[0]]
blocks = [[[float(x) for x in r.split()] for r in b.split("\n") if r] for b in open(sys.argv[2]).read().split("\n\n")]
n = len(rows)
assert len(lines) == 8 and n >= 6 and len(blocks) >= 2 * n, (len(lines), n, len(blocks))
for i in range(n):
    a, b = blocks[i], blocks[n + i]
    assert len(rows[i]) == len(a) == len(b), (i, len(rows[i]), len(a), len(b))
    for t, row in enumerate(rows[i]):
        assert len(row) == len(a[t]) + 1, (i, t)
        for j in range(len(a[t])):
            assert abs(row[j] - (a[t][j] + b[t][j]) / 2) <= 1e-4, (i, t, j, row[j], a[t][j], b[t][j])
EOF

# 6. alignments: the search's attention rows (--alignment soft, one a word, the source's words and
# EOS) are forced alignment's (nmt align --soft) on the same output, for every hypothesis of the
# n-best lists, of beam search and of sampling, and each sums to 1; the hard links are each word's
# most attended source word in those forced rows; --unk-copy writes for each <unk> the source word
# of its link, --unk-replace a table's translation of it (those the table lacks copied), every
# other word left as it was
al_check() { # NAME OPTIONS...: the n-best lists' soft rows and hard links against forced alignment
    al_name=$1; shift
    tr2 "$T/as" "$T/v" --model "$M" "$@" --alignment soft
    tr2 "$T/ah" "$T/v" --model "$M" "$@" --alignment hard
    # (an empty hypothesis has no rows, and no place in nmt align's soft format)
    awk -F ' \\|\\|\\| ' 'NR == FNR { src[NR - 1] = $0; next } $2 != "" { print src[$1] > "'"$T/al.src"'"; print $2 > "'"$T/al.tgt"'" }' \
        "$T/v" "$T/as"
    "$NMT_BIN" align --model "$M" --src "$T/al.src" --tgt "$T/al.tgt" --soft --threads 1 > "$T/as.al"
    $PY - "$T/as" "$T/ah" "$T/as.al" > "$T/as.chk" 2>&1 << 'EOF' && ok || bad "$al_name: alignments differ from forced alignment's: $(tail -n 3 "$T/as.chk")"
import sys
soft = [l.rstrip("\n").split(" ||| ") for l in open(sys.argv[1])]
hard = [l.rstrip("\n").split(" ||| ") for l in open(sys.argv[2])]
blocks = [[[float(x) for x in r.split()] for r in b.split("\n") if r] for b in open(sys.argv[3]).read().split("\n\n")]
pairs = [(s, h) for s, h in zip(soft, hard) if s[1]]
assert len(soft) == len(hard) >= 36 and len(blocks) >= len(pairs) >= 30, (len(soft), len(hard), len(pairs), len(blocks))
for k, ((i, text, rows, _, _), (hi, htext, links, _, _)) in enumerate(pairs):
    forced = blocks[k]
    rows = [[float(x) for x in r.split()] for r in rows.split(" ; ")]
    assert (i, text) == (hi, htext) and len(rows) == len(forced) == len(text.split()), (k, len(rows), len(forced))
    for t, (row, f) in enumerate(zip(rows, forced)):
        assert len(row) == len(f) + 1 and abs(sum(row) - 1) <= 1e-3, (k, t, row)
        assert all(abs(a - b) <= 1e-4 for a, b in zip(row, f)), (k, t, row, f)
    want = " ".join("%d-%d" % (max(range(len(f)), key=lambda j: f[j]), t) for t, f in enumerate(forced))
    assert links == want, (k, links, want)
EOF
}
al_check "sampling" --sample --seed 3 --n-best 3
al_check "beam search" --beam 4 --n-best 4
# the last call's 1-best lines, for UNK replacement
awk -F ' \\|\\|\\| ' '!seen[$1]++ { print $2 " ||| " $3 }' "$T/ah" > "$T/ah1"
sed 's/ ||| .*//' "$T/ah1" > "$T/as.txt"
grep -q "<unk>" "$T/as.txt" && ok || bad "the model wrote no <unk> to replace"
tr2 "$T/copy" "$T/v" --model "$M" --beam 4 --unk-copy
paste -d '\t' "$T/ah1" "$T/v" | awk -F '\t' '{ split($1, parts, " \\|\\|\\| "); n = split(parts[1], w, " "); split($2, src, " ");
    m = split(parts[2], L, " "); for (k = 1; k <= m; k++) { split(L[k], p, "-"); s[p[2] + 1] = src[p[1] + 1] }
    out = ""; for (i = 1; i <= n; i++) { x = (w[i] == "<unk>") ? s[i] : w[i]; out = out (i > 1 ? " " : "") x } print out; delete s }' > "$T/want_copy"
cmp -s "$T/copy" "$T/want_copy" && ok || bad "--unk-copy differs from the hard alignment's source words: $(diff "$T/copy" "$T/want_copy" | head -n 4)"
awk '{ for (i = 1; i <= NF; i++) print $i "\tXX" $i }' "$T/v" | sort -u -t "	" -k1,1 | awk -F '\t' 'NR % 2 == 0' > "$T/half"
tr2 "$T/rep" "$T/v" --model "$M" --beam 4 --unk-replace "$T/half"
awk -F '\t' 'NR == FNR { tr[$1] = $2; next } { n = split($0, w, " "); out = "";
    for (i = 1; i <= n; i++) { x = (w[i] in tr) ? tr[w[i]] : w[i]; out = out (i > 1 ? " " : "") x } print out }' "$T/half" "$T/want_copy" > "$T/want_rep0"
# (the table's words in the model's own output are left alone: only the <unk>s' places take the table's)
paste -d '\t' "$T/want_rep0" "$T/want_copy" "$T/as.txt" | awk -F '\t' '{ n = split($3, p, " "); split($1, a, " "); split($2, b, " "); out = "";
    for (i = 1; i <= n; i++) out = out (i > 1 ? " " : "") (p[i] == "<unk>" ? a[i] : b[i]); print out }' > "$T/want_rep"
cmp -s "$T/rep" "$T/want_rep" && grep -q "XX" "$T/rep" && ok || bad "--unk-replace differs from the table and the links: $(diff "$T/rep" "$T/want_rep" | head -n 4)"

# 8. nmt serve on the Transformer: 16 concurrent requests, batched together (the batch histogram
# says so), answer what nmt translate writes; one request of the 16 texts with n-best, alignments
# and attention gives translate's n-best lists (scores within 1e-5) and hard links, and attention
# rows (the output's words and EOS by the source's words and EOS) that each sum to 1 and equal
# translate's soft rows; sampling, and a prefix with constraints, as translate does them; a server
# on devsim answers the request of 16 texts as the CPU's did
# (a batch waits up to 200 ms for more sentences: time enough for the 16 to meet on a busy machine)
. tests/cli/lib_serve.sh
C="$PY tests/cli/serve_client.py"
J=application/json
stop_serve() { # SIGTERM, and a bounded wait for the drain
    kill -TERM $PID
    for _ in $(seq 100); do kill -0 $PID 2> /dev/null || break; sleep 0.1; done
    kill -0 $PID 2> /dev/null && { kill -KILL $PID; bad "the server did not stop on SIGTERM"; }
    wait $PID
}
if serve_start "$T/slog" "$M" --workers 2 --max-wait-ms 200; then
    sed -n 1,16p "$D/test_2016_flickr.en" > "$T/in16"
    "$NMT_BIN" translate --model "$M" --beam 4 --threads 1 < "$T/in16" > "$T/want16"
    [ "$(sort -u "$T/want16" | wc -l)" -ge 12 ] && ok || bad "the model's translations are too alike: $(sort "$T/want16" | uniq -c | head -n 3)"
    $C many $PORT "$T/in16" 16 4 > "$T/got16" 2> "$T/err16" && ok || bad "concurrent requests failed: $(cat "$T/err16")"
    cmp -s "$T/got16" "$T/want16" && ok || bad "concurrent answers differ from nmt translate: $(diff "$T/got16" "$T/want16" | head -n 4)"
    $C req $PORT GET /metrics > "$T/metrics"
    awk '/^nmt_batch_sentences_bucket\{le="1"\}/ { one = $2 } /^nmt_batch_sentences_count/ { all = $2 } END { exit !(all > 0 && one < all) }' \
        "$T/metrics" && ok || bad "no batch held two sentences: $(grep '^nmt_batch_sentences' "$T/metrics" | head -n 4)"
    $PY -c 'import json,sys; print(json.dumps({"texts": open(sys.argv[1]).read().splitlines(), "beam": 4, "n_best": 2, "alignment": True,
        "attention": True}))' "$T/in16" > "$T/req16.json"
    $C req $PORT POST /translate $J "@$T/req16.json" > "$T/resp16"
    "$NMT_BIN" translate --model "$M" --beam 4 --n-best 2 --threads 1 --alignment soft < "$T/in16" > "$T/nb16s"
    "$NMT_BIN" translate --model "$M" --beam 4 --n-best 2 --threads 1 --alignment hard < "$T/in16" > "$T/nb16h"
    $PY - "$T/resp16" "$T/nb16s" "$T/nb16h" > "$T/att.chk" 2>&1 << 'EOF' && ok || bad "the server's n-best, links or attention: $(tail -n 3 "$T/att.chk")"
import json, sys
status, body = open(sys.argv[1]).read().split("\t", 1)
assert status == "200", status
r = json.loads(body)["translations"]
soft = [l.rstrip("\n").split(" ||| ") for l in open(sys.argv[2])]
hard = [l.rstrip("\n").split(" ||| ") for l in open(sys.argv[3])]
assert len(r) == 16 and len(soft) == len(hard) == 32, (len(r), len(soft), len(hard))
n = 0
for i, t in enumerate(r):
    assert len(t["hyps"]) == 2 and t["text"] == t["hyps"][0]["text"], i
    for k, h in enumerate(t["hyps"]):
        s, hd = soft[2 * i + k], hard[2 * i + k]
        assert int(s[0]) == i and h["text"] == s[1] == hd[1], (i, k, h["text"], s[1])
        assert abs(h["score"] - float(s[-1])) <= 1e-5, (i, k, h["score"], s[-1])
        assert h["alignment"].strip() == hd[2].strip(), (i, k, h["alignment"], hd[2])
        a, w = h["attention"], h["attention"]["weights"]
        assert a["source"] == t["source_tokens"] + ["</s>"], (i, k, a["source"])
        assert a["target"] == h["tokens"] + (["</s>"] if h["finished"] else []), (i, k, a["target"])
        assert len(w) == len(a["target"]), (i, k)
        rows = [[float(x) for x in r.split()] for r in s[2].split(" ; ")]
        for j, row in enumerate(w):
            assert len(row) == len(a["source"]) and abs(sum(row) - 1) <= len(row) * 5e-5 + 1e-6, (i, k, j, row, sum(row))
            if j < len(rows):
                assert all(abs(x - y) <= 1.01e-4 for x, y in zip(row, rows[j])), (i, k, j, row, rows[j])
                n += 1
assert n > 100, n
EOF
    # sampling, and hints, as nmt translate's (scores within 1e-5)
    nbest_of() {
        $PY -c 'import json,sys; r = json.loads(open(sys.argv[1]).read().split("\t", 1)[1])
for i, t in enumerate(r["translations"]):
    for h in t["hyps"]: print("%d ||| %s ||| %.8f" % (i, h["text"], h["score"]))' "$1" 2>&1
    }
    same_nbest() { # GOT WANT N
        paste -d '\n' "$1" "$2" | awk -F ' \\|\\|\\| ' -v want="$3" 'NR % 2 { a = $1 FS $2; s = $NF; next }
            { n++; d = s - $NF; if (d < 0) d = -d; if (a != $1 FS $2 || d > 1e-5) bad = 1 } END { exit bad || n != want }'
    }
    $PY -c 'import json,sys; print(json.dumps({"texts": open(sys.argv[1]).read().splitlines(), "sample": True, "n_best": 3, "seed": 7,
        "temperature": 0.7, "sample_topk": 5}))' "$T/in16" > "$T/reqs.json"
    $C req $PORT POST /translate $J "@$T/reqs.json" > "$T/resps"
    nbest_of "$T/resps" > "$T/s_got"
    "$NMT_BIN" translate --model "$M" --sample --n-best 3 --seed 7 --temperature 0.7 --sample-topk 5 --threads 1 < "$T/in16" > "$T/s_want"
    same_nbest "$T/s_got" "$T/s_want" 48 && ok || bad "sampling differs from nmt translate's: $(diff "$T/s_got" "$T/s_want" | head -n 4)"
    head -n 2 "$T/in" > "$T/in2"; sed -n 1,2p "$T/pfx" > "$T/pfx2"; sed -n 1,2p "$T/terms" > "$T/terms2"
    $PY -c 'import json,sys; rd = lambda f: open(f).read().splitlines()
print(json.dumps({"texts": rd(sys.argv[1]), "beam": 4, "n_best": 2, "prefix": rd(sys.argv[2]), "constraints": [l.split("\t") if l else [] for l in rd(sys.argv[3])]}))' \
        "$T/in2" "$T/pfx2" "$T/terms2" > "$T/reqh.json"
    $C req $PORT POST /translate $J "@$T/reqh.json" > "$T/resph"
    nbest_of "$T/resph" > "$T/h_got"
    "$NMT_BIN" translate --model "$M" --beam 4 --n-best 2 --prefix "$T/pfx2" --constraints "$T/terms2" --threads 1 < "$T/in2" > "$T/h_want"
    grep -q . "$T/pfx2" && same_nbest "$T/h_got" "$T/h_want" 4 && ok || bad "a prefix and constraints differ from nmt translate's: $(diff "$T/h_got" "$T/h_want" | head -n 4)"
    stop_serve
else
    bad "the server did not start: $(cat "$T/slog")"
fi
# the server on devsim: the same answer to the request of 16 texts, byte for byte
if serve_start "$T/slogd" "$M" --workers 2 --max-wait-ms 200 --device devsim; then
    $C req $PORT POST /translate $J "@$T/req16.json" > "$T/resp16d"
    grep -q '"attention"' "$T/resp16d" && cmp -s "$T/resp16" "$T/resp16d" && ok ||
        bad "the server on devsim answers otherwise: $(cmp "$T/resp16" "$T/resp16d" 2>&1 | head -c 300)"
    stop_serve
else
    bad "the server did not start on devsim: $(cat "$T/slogd")"
fi

finish tf_decode
