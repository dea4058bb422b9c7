#!/bin/sh
# nonfinite.sh: a model whose weights are finite but so large that its products overflow (the
# loader takes it) gives no translation and no score that is not a number: translate (search and
# --sample), score and align fail naming the line, and print no "nan" or "inf" on stdout.
. tests/cli/lib.sh
head -n 40 "$NMT_SHARED/data/multi30k/tok/train.en" > "$T/s"; head -n 40 "$NMT_SHARED/data/multi30k/tok/train.fr" > "$T/t"
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/m.nmt" --emb 4 --hid 4 --att 4 --maxout 2 --max-updates 2 2> /dev/null &&
    python3 tests/cli/ckpt_edit.py "$T/m.nmt.ckpt" "$T/huge.nmt" '**=1e30' --recrc && ok || bad "making the model"
head -n 3 "$T/s" > "$T/s3"; head -n 3 "$T/t" > "$T/t3"
for mode in "" "--sample"; do
    # shellcheck disable=SC2086
    "$NMT_BIN" translate --model "$T/huge.nmt" $mode < "$T/s3" > "$T/out" 2> "$T/err"; rc=$?
    [ $rc = 1 ] && grep -q "sentence [123] (of 3): the model's scores are not finite" "$T/err" && ok ||
        bad "translate $mode: exit $rc: $(cat "$T/err")"
    grep -qi "nan\|inf" "$T/out" && bad "translate $mode printed a non-number: $(head -c 200 "$T/out")" || ok
done
"$NMT_BIN" score --model "$T/huge.nmt" --src "$T/s3" --tgt "$T/t3" > "$T/out" 2> "$T/err"; rc=$?
[ $rc = 1 ] && grep -q "pair 1 (of 3): the model's log-probability is not finite" "$T/err" && ! grep -qi "nan" "$T/out" && ok ||
    bad "score: exit $rc: $(cat "$T/err") $(head -c 200 "$T/out")"
# the same model at its own scale translates
"$NMT_BIN" translate --model "$T/m.nmt" < "$T/s3" > "$T/out" 2> "$T/err" && [ "$(wc -l < "$T/out")" = 3 ] && ok ||
    bad "the model before scaling: $(cat "$T/err")"
finish nonfinite
