#!/bin/sh
# batch_invariant.sh: the promise of docs/CLI.md, "A sentence's translation does not depend on its
# batch", through the program: each of 60 lines translated alone (--batch 1), in batches of 7 and
# 64, in another order, beside other sentences, and on 1 and 2 threads gives the same bytes (2-best
# with scores, soft attention), in FP32 and int8, by search and by sampling; `nmt score` and `nmt
# align` alike. kernels.sh reruns it under every kernel set: the BLAS's products (--batch-invariant
# off) differed on 33 of 100 lines between --batch 1 and 64 under Haswell's kernels.
# kernel sets: all: a sentence alone and in batches (tests/cli/kernels.sh)
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
export OMP_WAIT_POLICY=PASSIVE
model small600 "$T/m.nmt"
check "model trained" test -s "$T/m.nmt"
head -n 60 "$D/val.en" > "$T/in"
sed -n 200,260p "$D/val.en" > "$T/other"
# the lines in reverse order, with others between them
awk '{ a[NR] = $0 } END { for (i = NR; i >= 1; i--) print a[i] }' "$T/in" > "$T/rev"
paste -d '\n' "$T/rev" "$T/other" | head -n 120 > "$T/mixed"

# output blocks of a line (an n-best's lines share its index; the index is the line's place)
TR="$NMT_BIN translate --model $T/m.nmt"
for p in fp32 int8; do
    $TR --precision $p < /dev/null 2> /dev/null || { echo "precision $p: not on this CPU, not checked"; continue; }
    for mode in "--beam 5 --n-best 2" "--sample --n-best 2 --seed 7"; do
        run() { $TR --precision $p $mode --alignment soft --threads "$1" --batch "$2" < "$3" | cut -d '|' -f 4-; }
        run 1 1 "$T/in" > "$T/alone"
        run 1 7 "$T/in" > "$T/b7"
        run 2 64 "$T/in" > "$T/b64"
        cmp -s "$T/alone" "$T/b7" && ok || bad "$p $mode: batches of 7 differ from each line alone"
        cmp -s "$T/alone" "$T/b64" && ok || bad "$p $mode: a batch of 64 on 2 threads differs from each line alone"
        # the mixed input's n-best blocks: reversed, every other line foreign
        k=$(echo "$mode" | sed 's/.*--n-best \([0-9]*\).*/\1/')
        run 1 64 "$T/mixed" | awk -v k="$k" '{ blk = int((NR - 1) / k); if (blk % 2 == 0) print blk / 2 "\t" $0 }' |
            sort -s -t "$(printf '\t')" -k1,1nr | cut -f 2- > "$T/mix"
        cmp -s "$T/alone" "$T/mix" && ok || bad "$p $mode: lines reordered among other sentences differ from each alone"
    done
done

# forced decoding: scores and attention
head -n 60 "$D/val.fr" > "$T/ref"
for b in 1 64; do
    "$NMT_BIN" score --model "$T/m.nmt" --src "$T/in" --tgt "$T/ref" --threads 1 > "$T/score$b" 2>/dev/null
    "$NMT_BIN" align --model "$T/m.nmt" --src "$T/in" --tgt "$T/ref" --soft --batch $b --threads 1 > "$T/align$b" 2>/dev/null
done
head -n 1 "$T/in" > "$T/in1"; head -n 1 "$T/ref" > "$T/ref1"
"$NMT_BIN" score --model "$T/m.nmt" --src "$T/in1" --tgt "$T/ref1" --threads 1 > "$T/score1"
[ "$(head -n 1 "$T/score64")" = "$(cat "$T/score1")" ] && ok || bad "nmt score: the first pair alone differs from it among 60"
cmp -s "$T/align1" "$T/align64" && ok || bad "nmt align --soft: --batch 1 and 64 differ"

# the switch: off runs (the BLAS's products: near, not promised equal), and is refused misspelt
$TR --batch-invariant off --beam 5 --scores --threads 1 < "$T/in" > "$T/off" && ok || bad "--batch-invariant off failed"
$TR --beam 5 --scores --threads 1 < "$T/in" > "$T/on"
awk -F ' \\|\\|\\| ' 'NR == FNR { s[FNR] = $2; next } { d = $2 - s[FNR]; if (d < 0) d = -d; if (d > m) m = d }
    END { exit !(m < 1e-3 && NR > 0) }' "$T/on" "$T/off" && ok || bad "--batch-invariant off: scores far from on's"
expect_fail "misspelt switch" 2 "--batch-invariant 'yes': expected off or on" $TR --batch-invariant yes
finish batch_invariant
