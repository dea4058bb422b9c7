#!/bin/sh
# text_input.sh: input that is not text, or cannot be read, is an error naming the file (and the
# line), with exit status 1, in every command that reads text: a NUL byte inside a line (it used
# to empty every later line of a corpus, or cut a line short), a directory given as a file or as
# standard input, a closed standard input. Then the contract kept: CRLF lines read as LF lines,
# and words split on the same blanks in translation as in training.
. tests/cli/lib.sh
export OMP_WAIT_POLICY=PASSIVE
D=$NMT_SHARED/data/multi30k/tok
head -n 200 "$D/train.en" > "$T/s"; head -n 200 "$D/train.fr" > "$T/t"
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/m.nmt" --emb 8 --hid 8 --att 8 --maxout 4 --vocab 200 \
    --batch 20 --max-updates 3 --threads 1 2> "$T/train.log"
check "model trained" test -s "$T/m.nmt"
M="$T/m.nmt"
# a NUL byte in line 3 of the source, in line 2 of a dev set, in the middle of a translation input
{ head -n 2 "$T/s"; printf 'a man\000 rides .\n'; tail -n 197 "$T/s"; } > "$T/s_nul"
{ head -n 1 "$T/t"; printf 'un\000homme\n'; } > "$T/v_nul"
head -n 2 "$T/s" > "$T/v2"
mkdir "$T/dir"
SMALL="--emb 4 --hid 4 --att 4 --maxout 2 --vocab 50 --max-updates 1 --threads 1"

# ---- whole-file readers: corpora, dev sets, vocabularies, aligners, lexicons, reports
expect_fail "train: NUL" 1 "s_nul:3: NUL byte in line" "$NMT_BIN" train --src "$T/s_nul" --tgt "$T/t" --model "$T/x.nmt" $SMALL
expect_fail "train: NUL in the dev set" 1 "v_nul:2: NUL byte in line" \
    "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --valid-src "$T/v2" --valid-tgt "$T/v_nul" --model "$T/x.nmt" $SMALL
expect_fail "train: a directory" 1 "dir: cannot read: Is a directory" "$NMT_BIN" train --src "$T/dir" --tgt "$T/t" --model "$T/x.nmt" $SMALL
expect_fail "vocab: NUL" 1 "s_nul:3: NUL byte in line" "$NMT_BIN" vocab "$T/s_nul"
expect_fail "ibm: NUL" 1 "s_nul:3: NUL byte in line" "$NMT_BIN" ibm --src "$T/s_nul" --tgt "$T/t"
awk '{ print "0-0" }' "$T/s" > "$T/a"
expect_fail "lex: NUL" 1 "s_nul:3: NUL byte in line" "$NMT_BIN" lex --src "$T/s_nul" --tgt "$T/t" --align "$T/a" --out "$T/x.lex"
expect_fail "report: NUL" 1 "s_nul:3: NUL byte in line" "$NMT_BIN" report --src "$T/s_nul" --ref "$T/t" --hyp "$T/t" --out "$T/x"
printf 'chien\tdog\nchat\000\tcat\n' > "$T/lex_nul"
expect_fail "unk-replace table: NUL" 1 "lex_nul:2: NUL byte in line" sh -c "echo a man . | $NMT_BIN translate --model $M --unk-replace $T/lex_nul"
expect_fail "score: NUL" 1 "s_nul:3: NUL byte in line" "$NMT_BIN" score --model "$M" --src "$T/s_nul" --tgt "$T/t"
expect_fail "score: directories" 1 "dir: cannot read: Is a directory" "$NMT_BIN" score --model "$M" --src "$T/dir" --tgt "$T/dir"
expect_fail "align: NUL" 1 "s_nul:3: NUL byte in line" "$NMT_BIN" align --model "$M" --src "$T/s_nul" --tgt "$T/t"

# ---- the streaming reader of nmt translate
printf 'a man .\nthe\000dog\nred .\n' > "$T/in_nul"
expect_fail "translate: NUL" 1 "stdin:2: NUL byte in line" sh -c "$NMT_BIN translate --model $M --beam 2 < $T/in_nul"
expect_fail "translate --input: NUL" 1 "in_nul:2: NUL byte in line" "$NMT_BIN" translate --model "$M" --beam 2 --input "$T/in_nul"
expect_fail "translate --input DIR" 1 "dir: cannot read: Is a directory" "$NMT_BIN" translate --model "$M" --input "$T/dir"
expect_fail "translate < DIR" 1 "stdin: cannot read: Is a directory" sh -c "$NMT_BIN translate --model $M < $T/dir"
expect_fail "translate, stdin closed" 1 "stdin: cannot read: Bad file descriptor" sh -c "$NMT_BIN translate --model $M <&-"
expect_fail "translate --input missing" 1 "nope: No such file" "$NMT_BIN" translate --model "$M" --input "$T/nope"

# ---- what stays: CRLF input reads as LF input; \v and \f separate words as in training
printf 'a man .\nthe dog\n' > "$T/lf"
printf 'a man .\r\nthe dog\r\n' > "$T/crlf"
printf 'a\vman\f.\nthe\tdog\n' > "$T/blanks"
TR="$NMT_BIN translate --model $M --beam 2 --threads 1"
$TR < "$T/lf" > "$T/o_lf" 2> /dev/null
$TR < "$T/crlf" > "$T/o_crlf" 2> /dev/null
$TR < "$T/blanks" > "$T/o_blanks" 2> /dev/null
[ -s "$T/o_lf" ] && cmp -s "$T/o_lf" "$T/o_crlf" && ok || bad "CRLF input translates differently: $(cat "$T/o_crlf")"
cmp -s "$T/o_lf" "$T/o_blanks" && ok || bad "vertical tab, form feed and tab do not separate words in translation: $(cat "$T/o_blanks")"
"$NMT_BIN" score --model "$M" --src "$T/lf" --tgt "$T/lf" > "$T/sc_lf" 2> /dev/null
"$NMT_BIN" score --model "$M" --src "$T/blanks" --tgt "$T/crlf" > "$T/sc_blanks" 2> /dev/null
[ -s "$T/sc_lf" ] && cmp -s "$T/sc_lf" "$T/sc_blanks" && ok || bad "scoring splits words differently: $(cat "$T/sc_blanks")"
# a UTF-8 byte-order mark at the start of the input is not part of its first word: the same
# translations and scores as without it, and a vocabulary without a "\xEF\xBB\xBFword" type
printf '\357\273\277' | cat - "$T/lf" > "$T/bom"
$TR < "$T/bom" > "$T/o_bom" 2> /dev/null
cmp -s "$T/o_lf" "$T/o_bom" && ok || bad "a byte-order mark changed the translation: $(head -n 1 "$T/o_bom")"
"$NMT_BIN" vocab "$T/bom" 2> /dev/null | grep -q "$(printf '\357\273\277')" && bad "the byte-order mark is in a word type" || ok
finish text_input
