#!/bin/sh
# lex.sh: `nmt lex` against a hand-counted table, its errors, and UNK replacement checked against
# the hard alignment that `nmt translate --alignment hard` prints for the same output.
. tests/cli/lib.sh
export OMP_WAIT_POLICY=PASSIVE
# hand-made: counts the/le 2, the/la 1 -> the:le; cat/chat 2; sat/assis 1
printf 'the cat\nthe cat sat\nthe\n' > "$T/s"
printf 'le chat\nle chat assis\nla\n' > "$T/t"
printf '0-0 1-1\n0-0 1-1 2-2\n0-0\n' > "$T/a"
"$NMT_BIN" lex --src "$T/s" --tgt "$T/t" --align "$T/a" --out "$T/lex" 2> /dev/null
printf 'cat\tchat\t2\t2\nsat\tassis\t1\t1\nthe\tle\t2\t3\n' > "$T/want"
cmp -s "$T/lex" "$T/want" && ok || bad "lexical table: $(cat "$T/lex")"
"$NMT_BIN" lex --src "$T/s" --tgt "$T/t" --align "$T/a" --out "$T/lex2" --min-count 2 2> /dev/null
[ "$(wc -l < "$T/lex2")" -eq 2 ] && ok || bad "--min-count"
# --top 2: a word's two most frequent targets, most frequent first
"$NMT_BIN" lex --src "$T/s" --tgt "$T/t" --align "$T/a" --out "$T/lex3" --top 2 2> /dev/null
printf 'cat\tchat\t2\t2\nsat\tassis\t1\t1\nthe\tle\t2\t3\nthe\tla\t1\t3\n' > "$T/want3"
cmp -s "$T/lex3" "$T/want3" && ok || bad "--top 2: $(cat "$T/lex3")"
printf '0-0 1-7\n0-0\n0-0\n' > "$T/bad"
expect_fail "link out of range" 1 "bad:1: bad link or index out of range" "$NMT_BIN" lex --src "$T/s" --tgt "$T/t" --align "$T/bad" --out "$T/x"
# The table is replaced whole: a write that fails half way (a full disk, here a file-size limit)
# leaves the previous table and no temporary, never a truncated table that --unk-replace accepts.
awk 'BEGIN { for (i = 0; i < 400; i++) { print "w" i > "'"$T/bs"'"; print "x" i > "'"$T/bt"'"; print "0-0" > "'"$T/ba"'" } }'
cp "$T/lex" "$T/lex.before"
sh -c "trap '' XFSZ; ulimit -f 2; exec \"$NMT_BIN\" lex --src $T/bs --tgt $T/bt --align $T/ba --out $T/lex" 2> "$T/err"; rc=$?
[ $rc -eq 1 ] && cmp -s "$T/lex" "$T/lex.before" && ok || bad "a failed write left $(wc -c < "$T/lex") bytes in the table (exit $rc)"
[ -z "$(ls "$T" | grep 'lex\.tmp\.')" ] && ok || bad "a failed write left a temporary: $(ls "$T" | grep tmp)"
# temporaries of killed writers (dead PIDs) are removed by the next write; a live writer's stay
dead=$(sh -c 'echo $$')
# (named with the host since; the old names are still cleaned). Another machine's temporary on a
# shared file system is never judged by this machine's PIDs: left alone.
h=$(hostname | cut -c1-24)  # as the temporaries carry it
: > "$T/lex.tmp.$dead"; : > "$T/lex.tmp.$$"; : > "$T/lex.tmp.$dead.$h"; : > "$T/lex.tmp.$dead.not-$h"
"$NMT_BIN" lex --src "$T/s" --tgt "$T/t" --align "$T/a" --out "$T/lex" 2> /dev/null
[ ! -e "$T/lex.tmp.$dead" ] && [ -e "$T/lex.tmp.$$" ] && [ ! -e "$T/lex.tmp.$dead.$h" ] && [ -e "$T/lex.tmp.$dead.not-$h" ] && ok ||
    bad "stale temporaries of PID $dead: $(cd "$T" && echo lex.tmp.*)"
rm -f "$T/lex.tmp.$$" "$T/lex.tmp.$dead.not-$h"
cmp -s "$T/lex" "$T/want" && ok || bad "lexical table after the clean-up"
expect_fail "needs a source of links" 2 "one of --model or --align" "$NMT_BIN" lex --src "$T/s" --tgt "$T/t" --out "$T/x"
printf 'only\tone\tfield-ok\nbroken line\n' > "$T/badlex"

# UNK replacement on a model with a tiny target vocabulary, so that its outputs hold <unk>
D=$NMT_SHARED/data/multi30k/tok
head -n 400 "$D/train.en" > "$T/ts"; head -n 400 "$D/train.fr" > "$T/tt"
"$NMT_BIN" train --src "$T/ts" --tgt "$T/tt" --model "$T/m.nmt" --emb 16 --hid 16 --att 16 --maxout 8 \
    --src-vocab 300 --tgt-vocab 12 --batch 20 --max-updates 150 --threads 1 --optimizer adam --lr 0.01 2> /dev/null
head -n 20 "$D/val.en" > "$T/v"
TR="$NMT_BIN translate --model $T/m.nmt --beam 3 --threads 1"
$TR --alignment hard < "$T/v" > "$T/plain"
grep -q "<unk>" "$T/plain" && ok || bad "the test model produced no <unk> to replace"
$TR --unk-copy < "$T/v" > "$T/copy"
expect_fail "bad lexicon" 1 "badlex:2: expected" sh -c "$TR --unk-replace $T/badlex < $T/v"
# expected: each <unk> at target i becomes source word s of the link s-i
paste -d '\t' "$T/plain" "$T/v" | awk -F '\t' '{ split($1, parts, " \\|\\|\\| "); n = split(parts[1], w, " "); split($2, src, " ");
    m = split(parts[2], L, " "); for (k = 1; k <= m; k++) { split(L[k], p, "-"); s[p[2] + 1] = src[p[1] + 1] }
    out = ""; for (i = 1; i <= n; i++) { x = (w[i] == "<unk>") ? s[i] : w[i]; out = out (i > 1 ? " " : "") x } print out; delete s }' > "$T/want_copy"
cmp -s "$T/copy" "$T/want_copy" && ok || bad "--unk-copy differs from the hard alignment's source words: $(diff "$T/copy" "$T/want_copy" | head -n 4)"
! grep -q "<unk>" "$T/copy" && ok || bad "<unk> left after --unk-copy"
# with a table: words it knows are translated, the others copied
awk '{ for (i = 1; i <= NF; i++) print $i "\tXX" $i }' "$T/v" | sort -u -t "	" -k1,1 | awk -F '\t' 'NR % 2 == 0' > "$T/half"
$TR --unk-replace "$T/half" < "$T/v" > "$T/rep"
awk -F '\t' 'NR == FNR { tr[$1] = $2; next } { n = split($0, w, " "); out = ""; for (i = 1; i <= n; i++) { x = (w[i] in tr) ? tr[w[i]] : w[i]; out = out (i > 1 ? " " : "") x } print out }' \
    "$T/half" "$T/want_copy" > "$T/want_rep"
# only words that were <unk> may change: compare position by position with the plain output
paste -d '\t' "$T/rep" "$T/want_rep" "$T/plain" | awk -F '\t' '{ split($3, pl, " \\|\\|\\| "); n = split(pl[1], p, " "); split($1, a, " "); split($2, b, " ");
    for (i = 1; i <= n; i++) if (p[i] == "<unk>" && a[i] != b[i]) bad = 1 } END { exit bad }' && ok || bad "--unk-replace did not use the table"
# the model's own alignments give a table too
"$NMT_BIN" lex --src "$T/ts" --tgt "$T/tt" --model "$T/m.nmt" --out "$T/mlex" --threads 1 2> /dev/null
[ -s "$T/mlex" ] && awk -F '\t' 'NF != 4 || $3 > $4 { bad = 1 } END { exit bad }' "$T/mlex" && ok || bad "model lexicon malformed"
finish lex
