#!/bin/sh
# train_raw.sh: `nmt train --tokenize en,fr --lowercase --normalize-punct` on raw Multi30k text gives
# the very model that training on the dataset's own tokenized files gives (the same tensors, byte
# for byte), and stores the text stages, so that the model reads raw text and writes detokenized
# text by itself: every command gives what the tokenized model gives on tokenized text, options
# that say otherwise are refused, a damaged entry is refused, and models of raw and tokenized text
# do not mix in an ensemble or an average.
. tests/cli/lib.sh
R=$NMT_SHARED/data/multi30k
PY="python3 tests/cli/text_meta.py"
head -n 300 "$R/train.en" > "$T/r.en"; head -n 300 "$R/train.fr" > "$T/r.fr"
head -n 300 "$R/tok/train.en" > "$T/k.en"; head -n 300 "$R/tok/train.fr" > "$T/k.fr"
A="--emb 16 --hid 16 --att 16 --maxout 8 --vocab 400 --batch 20 --max-updates 150 --optimizer adam --lr 0.01 --threads 1"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/raw.nmt" --tokenize en,fr --lowercase --normalize-punct $A 2> "$T/raw.log"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/k.en" --tgt "$T/k.fr" --model "$T/tok.nmt" $A 2> /dev/null
check "raw-text model written" test -s "$T/raw.nmt"
d=$($PY diff "$T/raw.nmt" "$T/tok.nmt" | tr '\n' '|')
[ "$d" = "crc32 text|tensors same|" ] && ok || bad "raw-text and tokenized-text models differ beyond the text entry: $d"
want='{"src":{"lang":"en","tokenize":true,"lowercase":true,"normalize_punct":true,"escape":true},"tgt":{"lang":"fr","tokenize":true,"lowercase":true,"normalize_punct":true,"escape":true}}'
[ "$($PY get "$T/raw.nmt" text)" = "$want" ] && ok || bad "text entry: $($PY get "$T/raw.nmt" text)"
[ -z "$($PY get "$T/tok.nmt" text)" ] && ok || bad "a model of tokenized text stores text stages"

# stopped and resumed (the checkpoint keeps the stages; the resume gives no text option): the
# same file as the run never stopped
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/res.nmt" --tokenize en,fr --lowercase --normalize-punct $A --max-updates 70 2> /dev/null
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/res.nmt" $A --resume "$T/res.nmt.ckpt" 2> "$T/res.log"
cmp -s "$T/res.nmt" "$T/raw.nmt" && ok || bad "a resumed raw-text run differs from the run never stopped: $(tail -n 2 "$T/res.log")"
grep -q "text options\|text stages" "$T/res.log" && bad "a resume giving no text option is warned: $(grep text "$T/res.log")" || ok

# the model reads raw text and writes detokenized text; options that say the same are accepted
head -n 40 "$R/val.en" > "$T/v.en"; head -n 40 "$R/val.fr" > "$T/v.fr"
head -n 40 "$R/tok/val.en" > "$T/vk.en"; head -n 40 "$R/tok/val.fr" > "$T/vk.fr"
"$NMT_BIN" translate --model "$T/tok.nmt" < "$T/vk.en" | "$NMT_BIN" detokenize -l fr > "$T/want" 2> /dev/null
"$NMT_BIN" translate --model "$T/raw.nmt" < "$T/v.en" > "$T/got" 2> "$T/got.err"
grep -qv '<unk>' "$T/want" && ok || bad "the tokenized model writes only <unk>: the comparison would say little"
cmp -s "$T/got" "$T/want" && ok || bad "raw-text model's translation differs: $(diff "$T/got" "$T/want" | head -n 4)"
"$NMT_BIN" translate --model "$T/raw.nmt" --tokenize en --lowercase --normalize-punct --detokenize fr < "$T/v.en" > "$T/got2" 2> /dev/null
cmp -s "$T/got2" "$T/want" && ok || bad "the same options given change the translation"
"$NMT_BIN" score --model "$T/tok.nmt" --src "$T/vk.en" --tgt "$T/vk.fr" > "$T/s.want" 2> /dev/null
"$NMT_BIN" score --model "$T/raw.nmt" --src "$T/v.en" --tgt "$T/v.fr" > "$T/s.got" 2> /dev/null
[ -s "$T/s.want" ] && cmp -s "$T/s.got" "$T/s.want" && ok || bad "nmt score on raw text differs from the tokenized model's"
"$NMT_BIN" align --model "$T/tok.nmt" --src "$T/vk.en" --tgt "$T/vk.fr" > "$T/a.want" 2> /dev/null
"$NMT_BIN" align --model "$T/raw.nmt" --src "$T/v.en" --tgt "$T/v.fr" > "$T/a.got" 2> /dev/null
[ -s "$T/a.want" ] && cmp -s "$T/a.got" "$T/a.want" && ok || bad "nmt align on raw text differs from the tokenized model's"
"$NMT_BIN" lex --model "$T/tok.nmt" --src "$T/k.en" --tgt "$T/k.fr" --out "$T/l.want" 2> /dev/null
"$NMT_BIN" lex --model "$T/raw.nmt" --src "$T/r.en" --tgt "$T/r.fr" --out "$T/l.got" 2> /dev/null
[ -s "$T/l.want" ] && cmp -s "$T/l.got" "$T/l.want" && ok || bad "nmt lex --model on raw text differs from the tokenized model's table"
head -n 40 "$T/want" > "$T/h40"
expect_fail "report --unk-vocab of a raw-text model" 1 "raw.nmt reads raw text through its own text stages, and the report's files are tokenized" \
    "$NMT_BIN" report --src "$T/vk.en" --ref "$T/vk.fr" --hyp "$T/h40" --unk-vocab "$T/raw.nmt"
# tokenized text given to it is said to be (once, at its first line with a Moses escape); raw text is not
n=$(grep -n '&apos;\|&quot;' "$T/vk.en" | head -n 1 | cut -d: -f1)
"$NMT_BIN" translate --model "$T/raw.nmt" < "$T/vk.en" > /dev/null 2> "$T/tk.err"
[ -n "$n" ] && [ "$(grep -c 'looks like tokenized text' "$T/tk.err")" = 1 ] && grep -q "stdin:$n: '&[a-z]*;' looks like tokenized text" "$T/tk.err" &&
    ok || bad "tokenized input not said to be (first mark at line $n): $(cat "$T/tk.err")"
"$NMT_BIN" score --model "$T/raw.nmt" --src "$T/vk.en" --tgt "$T/v.fr" > /dev/null 2> "$T/tk2.err"
grep -q "vk.en:$n: '&[a-z]*;' looks like tokenized text" "$T/tk2.err" && ok || bad "nmt score: tokenized input not said to be: $(cat "$T/tk2.err")"
grep -q 'looks like tokenized' "$T/got.err" && bad "raw text said to look tokenized: $(cat "$T/got.err")" || ok

# other text options would read its words otherwise: refused
TR="$NMT_BIN translate --model $T/raw.nmt"
expect_fail "tokenize without lowercasing" 1 "trained on raw text and applies its own text stages: leave the text options out, or give the same \\(source side: --tokenize en --lowercase --normalize-punct\\)" \
    sh -c "$TR --tokenize en < $T/v.en"
expect_fail "all but lowercasing" 1 "applies its own text stages" sh -c "$TR --tokenize en --normalize-punct < $T/v.en"
expect_fail "another detokenizer" 1 "target side: --detokenize fr\\)" sh -c "$TR --detokenize de < $T/v.en"
expect_fail "serve with other options" 1 "applies its own text stages" timeout 30 "$NMT_BIN" serve --model "$T/raw.nmt" --port 0 --tokenize en
expect_fail "ensemble of raw and tokenized" 1 "tok.nmt was trained on tokenized text and .*raw.nmt on raw text" \
    sh -c "$NMT_BIN translate --model $T/raw.nmt --model $T/tok.nmt < $T/v.en"
"$NMT_BIN" average --out "$T/av.nmt" "$T/raw.nmt" "$T/res.nmt" 2> /dev/null
[ "$($PY get "$T/av.nmt" text)" = "$want" ] && ok || bad "an average of raw-text models lost their text stages"
expect_fail "average of raw and tokenized" 1 "trained on tokenized text" "$NMT_BIN" average --out "$T/avg.nmt" "$T/raw.nmt" "$T/tok.nmt"

# two raw-text models whose stages differ only in lowercasing: neither reads the other's words
$PY set "$T/raw.nmt" text '{"src":{"lang":"en","tokenize":true,"lowercase":false,"normalize_punct":true,"escape":true},"tgt":{"lang":"fr","tokenize":true,"lowercase":true,"normalize_punct":true,"escape":true}}' "$T/lc.nmt"
expect_fail "ensemble of other stages" 1 "lc.nmt: the source side's text stages differ from .*raw.nmt's" \
    sh -c "$NMT_BIN translate --model $T/raw.nmt --model $T/lc.nmt < $T/v.en"

# a damaged entry, its checksum recomputed: the reader's own messages
$PY set "$T/raw.nmt" text '{"src":{"lang":"en","tokenize":false,"lowercase":true,"normalize_punct":false,"escape":true},"tgt":{"lang":"fr","tokenize":true,"lowercase":true,"normalize_punct":true,"escape":true}}' "$T/b1.nmt"
expect_fail "lowercasing without tokenizing" 1 "b1.nmt: the source text stages lowercase or normalize without tokenizing" \
    sh -c "$NMT_BIN translate --model $T/b1.nmt < $T/v.en"
$PY set "$T/raw.nmt" text '{"src":{"lang":"en","tokenize":true,"lowercase":true,"normalize_punct":true,"escape":true}}' "$T/b2.nmt"
expect_fail "a side missing" 1 "b2.nmt: the target text stages are not an object" sh -c "$NMT_BIN translate --model $T/b2.nmt < $T/v.en"
$PY set "$T/raw.nmt" text '{"src":{},"tgt":{},"bpe":1}' "$T/b3.nmt"
expect_fail "an unknown key" 1 "b3.nmt: the text entry is not a JSON object of src and tgt \\(key 'bpe'\\)" sh -c "$NMT_BIN translate --model $T/b3.nmt < $T/v.en"
# an entry this version does not know, in a file whose checksums hold: a newer writer, not damage
$PY set "$T/raw.nmt" future '{}' "$T/b4.nmt"
expect_fail "a newer writer's entry" 1 "b4.nmt: unknown metadata key 'future' \\(written by a newer version of nmt, or another program\\)" \
    sh -c "$NMT_BIN translate --model $T/b4.nmt < $T/v.en"

# fine-tuning: the file's stages are used; other options given are said not to be
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/ft.nmt" --pretrained-model "$T/raw.nmt" --tokenize en,fr $A 2> "$T/ft.log"
grep -q "raw.nmt was trained on raw text through its own text stages, which this run uses" "$T/ft.log" && ok || bad "no warning for fine-tuning with other text options: $(tail -n 3 "$T/ft.log")"
[ "$($PY get "$T/ft.nmt" text)" = "$want" ] && ok || bad "fine-tuned model's text entry: $($PY get "$T/ft.nmt" text)"
# the corpus went through the file's stages (lowercased), not the run's: the UNK rates are the first run's
u1=$(grep -o 'UNK rate src [0-9.]*%, tgt [0-9.]*%' "$T/raw.log"); u2=$(grep -o 'UNK rate src [0-9.]*%, tgt [0-9.]*%' "$T/ft.log")
[ -n "$u1" ] && [ "$u1" = "$u2" ] && ok || bad "fine-tuning read the corpus otherwise: '$u1' against '$u2'"
# a model of tokenized text fine-tuned on raw text: the new model stores the run's stages
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/ft2.nmt" --pretrained-model "$T/tok.nmt" --tokenize en,fr --lowercase --normalize-punct $A 2> "$T/ft2.log"
grep -q "tok.nmt stores no text stages (trained on tokenized text, or by an older nmt); the model this run writes stores this run's" "$T/ft2.log" &&
    ok || bad "no word on the stages a fine-tuned model of tokenized text takes: $(grep warn "$T/ft2.log")"
[ "$($PY get "$T/ft2.nmt" text)" = "$want" ] && ok || bad "fine-tuned tokenized-text model's text entry: $($PY get "$T/ft2.nmt" text)"

expect_fail "bad --tokenize" 2 "expected SRC,TGT" "$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/x" --tokenize en
expect_fail "--lowercase alone" 2 "go with --tokenize" "$NMT_BIN" train --src "$T/r.en" --tgt "$T/r.fr" --model "$T/x" --lowercase
finish train_raw
