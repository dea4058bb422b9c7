#!/bin/sh
# gzip.sh: compressed corpora read as their plain text everywhere a file is read: training on .gz
# files gives the model training on the plain files gives (byte for byte), and translate, score,
# vocab and bleu read .gz inputs; a damaged .gz is an error naming the file, never text.
. tests/cli/lib.sh
export OMP_WAIT_POLICY=PASSIVE
D=$NMT_SHARED/data/multi30k/tok
head -n 300 "$D/train.en" > "$T/s"; head -n 300 "$D/train.fr" > "$T/t"
gzip -c "$T/s" > "$T/s.gz"; gzip -c "$T/t" > "$T/t.gz"
SMALL="--emb 8 --hid 8 --att 8 --maxout 4 --vocab 200 --batch 20 --max-updates 5 --threads 1 --seed 5"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/plain.nmt" $SMALL 2> "$T/log1"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s.gz" --tgt "$T/t.gz" --model "$T/gz.nmt" $SMALL 2> "$T/log2" && ok || bad "train on .gz: $(tail -n 3 "$T/log2")"
cmp -s "$T/plain.nmt" "$T/gz.nmt" && ok || bad "the model trained on .gz differs from the one trained on plain text"

head -n 20 "$T/s" > "$T/in"; gzip -c "$T/in" > "$T/in.gz"
"$NMT_BIN" translate --model "$T/plain.nmt" --input "$T/in" --threads 1 > "$T/o1" 2> /dev/null
"$NMT_BIN" translate --model "$T/plain.nmt" --input "$T/in.gz" --threads 1 > "$T/o2" 2> "$T/err" && ok || bad "translate --input .gz: $(cat "$T/err")"
[ -s "$T/o1" ] && cmp -s "$T/o1" "$T/o2" && ok || bad "translations of the .gz input differ"
gzip -c < "$T/in" | "$NMT_BIN" translate --model "$T/plain.nmt" --threads 1 > "$T/o3" 2> "$T/err"
cmp -s "$T/o1" "$T/o3" && ok || bad "gzip data on standard input: $(cat "$T/err")"

"$NMT_BIN" vocab --size 50 "$T/s" > "$T/v1" 2> /dev/null
"$NMT_BIN" vocab --size 50 "$T/s.gz" > "$T/v2" 2> /dev/null
cmp -s "$T/v1" "$T/v2" && ok || bad "vocab of the .gz differs"
head -n 20 "$T/t" > "$T/ref"; gzip -c "$T/ref" > "$T/ref.gz"
a=$("$NMT_BIN" bleu --tokenize none "$T/ref" < "$T/o1" 2> /dev/null); b=$("$NMT_BIN" bleu --tokenize none "$T/ref.gz" < "$T/o1" 2> /dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "bleu with a .gz reference: '$a' against '$b'"

head -c 100 "$T/s.gz" > "$T/cut.gz"
expect_fail "a truncated .gz" 1 "cut.gz: gzip data ends in the middle" "$NMT_BIN" vocab --size 5 "$T/cut.gz"
expect_fail "train on a truncated .gz" 1 "cut.gz: gzip data ends in the middle" "$NMT_BIN" train --src "$T/cut.gz" --tgt "$T/t" --model "$T/x.nmt"
# a line has a limit (16 MiB), so that gzip data with no newline cannot take the machine's memory:
# 40 MB of one letter (40 KB gzipped) once grew the buffer to twice its size, then translated it
# as one unknown word; a 1 MB line is still a line
head -c 40000000 /dev/zero | tr '\0' a | gzip -1 > "$T/bomb.gz"
expect_fail "a 40 MB line in 40 KB of gzip" 1 "bomb.gz:1: a line of more than 16 MiB \(not text\?\)" \
    "$NMT_BIN" translate --model "$T/plain.nmt" --threads 1 --input "$T/bomb.gz"
expect_fail "the same on standard input" 1 "stdin:1: a line of more than 16 MiB" sh -c '"$1" translate --model "$2" --threads 1 < "$3"' \
    sh "$NMT_BIN" "$T/plain.nmt" "$T/bomb.gz"
{ echo "a man ."; head -c 1000000 /dev/zero | tr '\0' a; echo; } | gzip -1 > "$T/long.gz"
"$NMT_BIN" vocab --size 5 "$T/long.gz" > "$T/v3" 2> "$T/err" && ok || bad "a 1 MB line: $(cat "$T/err")"
finish gzip
