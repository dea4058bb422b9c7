#!/bin/sh
# translate.sh: the input/output contract of `nmt translate` and `nmt score` on a small trained
# model: one line out per line in, empty and overlong lines, invalid UTF-8, a missing or damaged
# model, n-best order, Marian's n-best format (read by nbest_reader.py), word scores, alignments
# over detokenized words, input files as arguments and -o, the progress line, interactive use
# through a pipe, independence from batch size, thread count and --workers, translate's scores
# equal to score's, and a valgrind run (with --workers too).
# kernel sets: all: batch sizes and thread counts, translate's scores against score's (tests/cli/kernels.sh)
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
export OMP_WAIT_POLICY=PASSIVE
model tiny "$T/m.nmt"
check "model trained" test -s "$T/m.nmt"
TR="$NMT_BIN translate --model $T/m.nmt --beam 4 --threads 1"

# one line out per line in, empty lines kept
head -n 5 "$D/test_2016_flickr.en" > "$T/in5"
printf '\n' >> "$T/in5"; head -n 3 "$D/val.en" >> "$T/in5"; printf '\n\n' >> "$T/in5"
$TR < "$T/in5" > "$T/out5"
[ "$(wc -l < "$T/out5")" -eq "$(wc -l < "$T/in5")" ] && ok || bad "line count $(wc -l < "$T/out5") vs $(wc -l < "$T/in5")"
[ -z "$(sed -n 6p "$T/out5")" ] && [ -z "$(sed -n 10p "$T/out5")" ] && ok || bad "empty lines not kept"
[ -n "$(sed -n 1p "$T/out5")" ] && ok || bad "first line empty"
# a last line without a newline still counts
printf 'a man .' | $TR > "$T/o1"; [ "$(wc -l < "$T/o1")" -eq 1 ] && ok || bad "unterminated last line"

# batching and threads change nothing
$TR --batch 1 < "$T/in5" > "$T/b1"
$TR --batch 7 --threads 2 < "$T/in5" > "$T/b7"
cmp -s "$T/out5" "$T/b1" && cmp -s "$T/out5" "$T/b7" && ok || bad "output depends on batch size or threads"

# --workers: several gatherings at once (batches of 4 make many), the same output in the same
# order, for RNNsearch and a Transformer, with n-best lists, word scores and alignments
head -n 120 "$D/test_2016_flickr.en" > "$T/w120"
$TR --batch 4 --n-best 2 --word-scores --alignment hard < "$T/w120" > "$T/w_1"
$TR --batch 4 --n-best 2 --word-scores --alignment hard --workers 3 < "$T/w120" > "$T/w_3"
[ "$(wc -l < "$T/w_1")" -eq 240 ] && cmp -s "$T/w_1" "$T/w_3" && ok || bad "--workers 3 changes the output"
model tf600 "$T/tf.nmt"
"$NMT_BIN" translate --model "$T/tf.nmt" --threads 1 --batch 4 --n-best 2 --word-scores < "$T/w120" > "$T/wt_1"
"$NMT_BIN" translate --model "$T/tf.nmt" --threads 1 --batch 4 --n-best 2 --word-scores --workers 2 < "$T/w120" > "$T/wt_2"
[ "$(wc -l < "$T/wt_1")" -eq 240 ] && cmp -s "$T/wt_1" "$T/wt_2" && ok || bad "--workers 2 changes a Transformer's output"
# a bad line ends the run as with one worker: the lines before it answered, exit 1
{ head -n 30 "$T/w120" | sed 's/$/	/'; printf 'a dog .\tzzzqqq\n'; head -n 10 "$T/w120" | sed 's/$/	/'; } > "$T/whint"
$TR --batch 4 --hints-in-input < "$T/whint" > "$T/wh_1" 2> /dev/null; rc1=$?
$TR --batch 4 --hints-in-input --workers 2 < "$T/whint" > "$T/wh_2" 2> "$T/wh_2.err"; rc2=$?
[ $rc1 -eq 1 ] && [ $rc2 -eq 1 ] && [ "$(wc -l < "$T/wh_2")" -eq 30 ] && cmp -s "$T/wh_1" "$T/wh_2" &&
    grep -q "stdin:31: the prefix: 'zzzqqq' is not in" "$T/wh_2.err" && ok ||
    bad "--workers 2 after a bad line: exit $rc2 (one worker: $rc1), $(wc -l < "$T/wh_2") lines, $(head -c 200 "$T/wh_2.err")"
expect_fail "--workers 0" 2 "--workers 0: out of range" "$NMT_BIN" translate --model "$T/m.nmt" --workers 0

# overlong line: translated (cut) with a warning naming the line
awk 'BEGIN { for (i = 0; i < 450; i++) printf "a "; print "." }' > "$T/long"
printf 'a dog .\n' >> "$T/long"
$TR --max-ratio 0.05 < "$T/long" > "$T/olong" 2> "$T/elong"
[ "$(wc -l < "$T/olong")" -eq 2 ] && ok || bad "overlong input lost lines"
grep -q "stdin:1: 451 words, translating the first 400" "$T/elong" && ok || bad "no warning for the long line: $(cat "$T/elong")"

# invalid UTF-8: replaced, warned, still translated
printf 'a man \377\376 rides .\nok .\n' | $TR > "$T/ou" 2> "$T/eu"
[ "$(wc -l < "$T/ou")" -eq 2 ] && ok || bad "invalid UTF-8 lost a line"
grep -q "stdin:1: invalid UTF-8 replaced by U+FFFD (2 bytes)" "$T/eu" && ok || bad "no UTF-8 warning: $(cat "$T/eu")"

# missing or damaged model: an error before any input is read. stdin is a FIFO the shell also
# holds open for writing, so it never ends: a program that read first would be stopped by the
# timeout (exit 124, not 1)
mkfifo "$T/idle"
idle_stdin() { timeout 20 sh -c 'exec 9<> "$0"; exec "$@" < "$0"' "$T/idle" "$@"; }
expect_fail "missing model" 1 "nope.nmt: No such file" idle_stdin "$NMT_BIN" translate --model "$T/nope.nmt"
head -c 1000 "$T/m.nmt" > "$T/cut.nmt"
expect_fail "damaged model" 1 "cut.nmt" idle_stdin "$NMT_BIN" translate --model "$T/cut.nmt"
expect_fail "no model" 2 "--model is required" "$NMT_BIN" translate
expect_fail "bad beam" 2 "--beam 0: out of range" "$NMT_BIN" translate --model "$T/m.nmt" --beam 0
expect_fail "n-best over beam" 2 "larger than the beam" "$NMT_BIN" translate --model "$T/m.nmt" --beam 2 --n-best 3

# n-best: K lines per input, indices in order, scores not increasing, hypotheses distinct
head -n 4 "$D/val.en" | $TR --n-best 4 > "$T/nb"
[ "$(wc -l < "$T/nb")" -eq 16 ] && ok || bad "n-best line count $(wc -l < "$T/nb")"
awk -F ' \\|\\|\\| ' '{ if ($1 == last && $NF + 0 > prev + 1e-9) bad = 1; if ($1 == last && seen[$1 FS $2]++) bad = 1;
    if ($1 != last && $1 != last + 1) bad = 1; last = $1; prev = $NF; seen[$1 FS $2]++ } END { exit bad }' "$T/nb" && ok || bad "n-best not sorted/distinct"

# the score translate prints equals nmt score's on the same output (length-normalised and raw);
# an output cut at the length limit has no EOS, which forced decoding would add: those are skipped
head -n 6 "$D/val.en" > "$T/v6"
for norm in --length-norm --no-length-norm; do
    $TR $norm --scores < "$T/v6" > "$T/sc"
    sed 's/ ||| .*//' "$T/sc" > "$T/hyp"
    "$NMT_BIN" score --model "$T/m.nmt" --src "$T/v6" --tgt "$T/hyp" > "$T/forced"
    col=1; [ $norm = --length-norm ] && col=2
    paste -d '\t' "$T/sc" "$T/forced" "$T/v6" | awk -F '\t' -v c=$col '{ split($1, a, " \\|\\|\\| "); nw = split(a[1], w, " ");
        if (nw == int(3 * (split($5, s, " ") + 1))) next; n++; d = a[2] - $(c + 1); if (d < 0) d = -d; if (d > 2e-4) bad = 1 }
        END { exit bad || n == 0 }' \
        && ok || bad "translate $norm scores differ from nmt score: $(paste "$T/sc" "$T/forced" | head -n 2)"
done
# --length-penalty ALPHA: the score is the log-probability / tokens^ALPHA (EOS counted, as in
# nmt score's third column); 1 and 0 are the two rankings above
$TR --length-penalty 0.6 --scores < "$T/v6" > "$T/sc"
sed 's/ ||| .*//' "$T/sc" > "$T/hyp"
"$NMT_BIN" score --model "$T/m.nmt" --src "$T/v6" --tgt "$T/hyp" > "$T/forced"
paste -d '\t' "$T/sc" "$T/forced" "$T/v6" | awk -F '\t' '{ split($1, a, " \\|\\|\\| "); nw = split(a[1], w, " ");
    if (nw == int(3 * (split($5, s, " ") + 1))) next; n++; d = a[2] - $2 / ($4 ^ 0.6); if (d < 0) d = -d; if (d > 2e-4) bad = 1 }
    END { exit bad || n == 0 }' && ok || bad "--length-penalty 0.6 scores are not log-probability / tokens^0.6: $(paste "$T/sc" "$T/forced" | head -n 2)"
$TR --length-penalty 1 --scores < "$T/v6" > "$T/a1"; $TR --scores < "$T/v6" > "$T/n1"
$TR --length-penalty 0 --scores < "$T/v6" > "$T/a0"; $TR --no-length-norm --scores < "$T/v6" > "$T/n0"
cmp -s "$T/a1" "$T/n1" && cmp -s "$T/a0" "$T/n0" && ok || bad "--length-penalty 1 / 0 differ from --length-norm / --no-length-norm"
expect_fail "--length-penalty without normalisation" 2 "--length-penalty goes with length normalisation" sh -c "$TR --length-penalty 0.6 --no-length-norm < $T/v6"
expect_fail "--length-penalty out of range" 2 "--length-penalty.*out of range" sh -c "$TR --length-penalty 11 < $T/v6"
# --sample: each draw's score is its log-probability by forced decoding / tokens; a line draws
# the same whatever its batch, and another seed draws otherwise
TS="$NMT_BIN translate --model $T/m.nmt --threads 1 --sample"
$TS --seed 5 --scores < "$T/v6" > "$T/s1"; $TS --seed 5 --scores --batch 1 < "$T/v6" > "$T/s2"; $TS --seed 6 < "$T/v6" > "$T/s3"
sed 's/ ||| .*//' "$T/s1" > "$T/hyp"
cmp -s "$T/hyp" "$T/s3" && bad "--seed 6 drew what --seed 5 drew" || ok
sed 's/ ||| .*//' "$T/s2" | cmp -s - "$T/hyp" && ok || bad "--sample drew otherwise with --batch 1: $(sed 's/ ||| .*//' "$T/s2" | diff - "$T/hyp" | head -n 3)"
"$NMT_BIN" score --model "$T/m.nmt" --src "$T/v6" --tgt "$T/hyp" > "$T/forced"
paste -d '\t' "$T/s1" "$T/forced" "$T/v6" | awk -F '\t' '{ split($1, a, " \\|\\|\\| "); nw = split(a[1], w, " ");
    if (nw == int(3 * (split($5, s, " ") + 1))) next; n++; d = a[2] - $2 / $4; if (d < 0) d = -d; if (d > 2e-4) bad = 1 }
    END { exit bad || n == 0 }' && ok || bad "--sample scores are not log-probability / tokens: $(paste "$T/s1" "$T/forced" | head -n 2)"
expect_fail "--seed without --sample" 2 "--seed goes with --sample" sh -c "$TR --seed 3 < $T/v6"
# --sample-topp: a nucleus of (almost) no mass holds the most probable word alone, so the draws
# are greedy search's; of all the mass, it is no cut at all
$TS --seed 5 --sample-topp 1e-9 < "$T/v6" > "$T/p0"; $TR --beam 1 < "$T/v6" > "$T/g1"
cmp -s "$T/p0" "$T/g1" && ok || bad "--sample-topp 1e-9 drew otherwise than greedy search: $(diff "$T/p0" "$T/g1" | head -n 3)"
$TS --seed 5 --sample-topp 1 < "$T/v6" > "$T/p1"
cmp -s "$T/p1" "$T/hyp" && ok || bad "--sample-topp 1 drew otherwise than no nucleus"
expect_fail "--sample-topp 0" 2 "--sample-topp 0: out of range \\(0, 1\\]" sh -c "$TS --sample-topp 0 < $T/v6"
# a value past a double's or a long's range is judged by the option's range, not called "not a
# number": 1e-320 underflows to a subnormal, which is in (0, 1] (and draws greedily)
$TS --seed 5 --sample-topp 1e-320 < "$T/v6" > "$T/p00"
cmp -s "$T/p00" "$T/g1" && ok || bad "--sample-topp 1e-320 was refused or drew otherwise than greedy search: $(head -c 200 "$T/p00")"
expect_fail "--temperature 1e999" 2 "--temperature 1e999: out of range \\[0.001, 100\\]" sh -c "$TS --temperature 1e999 < $T/v6"
expect_fail "--beam past a long" 2 "--beam 99999999999999999999: out of range \\[1, 1000\\]" sh -c "$TR --beam 99999999999999999999 < $T/v6"
expect_fail "--sample-topp without --sample" 2 "--sample-topp goes with --sample" sh -c "$TR --sample-topp 0.9 < $T/v6"
expect_fail "--beam with --sample" 2 "--beam does not apply" sh -c "$TR --sample < $T/v6"
# --normalize / --no-normalize, the old spellings of --length-norm / --no-length-norm: the same
# output, with a warning naming the new spelling
for pair in "--normalize --length-norm" "--no-normalize --no-length-norm"; do
    old=${pair% *} new=${pair#* } # not set --: $1 is the script's --quick
    $TR $old --scores < "$T/v6" > "$T/old" 2> "$T/old.err"
    $TR $new --scores < "$T/v6" > "$T/new" 2> /dev/null
    cmp -s "$T/old" "$T/new" && ok || bad "$old and $new give different translations"
    grep -q "nmt translate: warning: $old is an old spelling: use $new" "$T/old.err" && ok || bad "$old: no warning: $(cat "$T/old.err")"
done
# --opt=value is --opt value; a flag takes no value
$TR --beam=2 < "$T/v6" > "$T/eq"; $TR --beam 2 < "$T/v6" > "$T/sp"
cmp -s "$T/eq" "$T/sp" && ok || bad "--beam=2 and --beam 2 differ"
expect_fail "a flag given a value" 2 "nmt translate: error: --no-unk takes no value" sh -c "$TR --no-unk=1 < $T/v6"
expect_fail "unknown option" 2 "unknown option '--beams'; did you mean --beam\?" sh -c "$TR --beams 3 < $T/v6"
head -n 5 "$T/v6" > "$T/v5"
expect_fail "score line counts" 1 "has 6 lines but .* has 5" "$NMT_BIN" score --model "$T/m.nmt" --src "$T/v6" --tgt "$T/v5"

# alignments: hard links are in range; soft rows have one weight per source word plus EOS
echo "a man rides a bike ." | $TR --alignment hard > "$T/ah"
awk -F ' \\|\\|\\| ' '{ n = split($2, L, " "); for (i = 1; i <= n; i++) { split(L[i], p, "-"); if (p[1] < 0 || p[1] > 5) bad = 1 } } END { exit bad }' "$T/ah" && ok || bad "hard alignment out of range: $(cat "$T/ah")"
echo "a man ." | $TR --alignment soft > "$T/as"
awk -F ' \\|\\|\\| ' '{ n = split($2, R, " ; "); for (i = 1; i <= n; i++) { k = split(R[i], w, " "); s = 0; for (j = 1; j <= k; j++) s += w[j];
    if (k != 4 || s < 0.99 || s > 1.01) bad = 1 } } END { exit bad }' "$T/as" && ok || bad "soft rows wrong: $(cat "$T/as")"

# Marian's n-best format, read by a reader of the tests' own (nbest_reader.py): the fields and ids,
# F0= equal to nmt score's log-probability of the same hypothesis (the reader runs it), SCORE =
# F0 / tokens^ALPHA (EOS counted) or F0, word scores for the tokens and the EOS summing to F0,
# links within the printed words
NB="python3 tests/cli/nbest_reader.py"
nbest_check() { # NAME TRANSLATE_OPTIONS READER_OPTIONS
    $TR $2 < "$T/v6" > "$T/mnb"
    $NB check "$T/mnb" "$T/v6" --score "$NMT_BIN score --model $T/m.nmt" $3 > /dev/null 2> "$T/mnb.err" && ok || bad "$1: $(head -n 3 "$T/mnb.err")"
}
nbest_check "n-best, raw scores" "--n-best 2 --no-length-norm" "--k 2 --raw"
nbest_check "n-best, word scores, links" "--n-best 4 --word-scores --alignment hard --length-penalty 0.6" "--k 4 --word-scores --align hard --alpha 0.6"
# the 1-best line is the n-best's first without index and features
$TR --word-scores --alignment hard --scores --length-penalty 0.6 < "$T/v6" > "$T/one"
awk -F ' \\|\\|\\| ' 'NR == 1 || $1 != last { print $2 " ||| " $3 " ||| " $4 " ||| " $6 } { last = $1 }' "$T/mnb" > "$T/one_want"
cmp -s "$T/one" "$T/one_want" && ok || bad "1-best differs from the n-best's first: $(diff "$T/one" "$T/one_want" | head -n 3)"
# an empty line: one n-best line with an empty hypothesis and every field
printf 'a man .\n\n' | $TR --n-best 2 --word-scores > "$T/nbe"
[ "$(sed -n 3p "$T/nbe")" = "1 |||  ||| WordScores= ||| F0= 0.000000 ||| 0.000000" ] && ok || bad "empty input's n-best line: $(cat "$T/nbe")"
# a barely trained model's n-best holds empty hypotheses: their pairs fit the forced pass's buffer
# (one byte past it per empty pair after the first; the sanitizer pass sees even one)
head -n 100 "$D/train.en" > "$T/raw.en"; head -n 100 "$D/train.fr" > "$T/raw.fr"
"$NMT_BIN" train --src "$T/raw.en" --tgt "$T/raw.fr" --emb 4 --hid 4 --att 4 --maxout 2 --vocab 50 --batch 10 --threads 1 \
    --max-updates 3 --seed 3 --model "$T/raw.nmt" 2> /dev/null
head -n 60 "$D/val.en" > "$T/v60"
"$NMT_BIN" translate --model "$T/raw.nmt" --n-best 4 --beam 4 --word-scores --threads 1 < "$T/v60" > "$T/raw.nb" 2> "$T/raw.err" \
    && [ "$(wc -l < "$T/raw.nb")" -eq 240 ] && ok || bad "n-best word scores with empty hypotheses: $(head -n 3 "$T/raw.err")"
# --detokenize: alignments index the printed words; each printed word's soft row is the mean of
# its tokens' rows, the tokens found in the printed line by the reader (drawn translations: this
# small model's searched ones are too short to hold a join)
$TS --seed 5 --alignment soft < "$T/v6" > "$T/soft_tok"
$TS --seed 5 --alignment soft --detokenize fr < "$T/v6" > "$T/soft_det"
$NB rows "$T/soft_tok" "$T/soft_det" > /dev/null 2> "$T/rows.err" && ok || bad "detokenized soft rows: $(head -n 3 "$T/rows.err")"
$TS --seed 5 --alignment hard --detokenize fr < "$T/v6" | awk -F ' \\|\\|\\| ' '{ n = split($1, w, " "); k = split($2, L, " ");
    for (i = 1; i <= k; i++) { split(L[i], p, "-"); if (p[2] >= n) bad = 1; if (p[2] > m) m = p[2] } } END { exit bad || m == 0 }' \
    && ok || bad "detokenized hard links beyond the printed words"

# input files as arguments, in turn ('-' standard input; the n-best indices run on), and -o FILE;
# the progress line counts the sentences, and is not there unasked off a terminal
$TR --scores "$T/v6" -o "$T/o_args" && cmp -s "$T/o_args" "$T/n1" && ok || bad "a file argument with -o differs from standard input's"
$TR --n-best 2 "$T/v6" - "$T/v5" < "$T/in5" > "$T/o3" 2> "$T/o3.err"
cat "$T/v6" "$T/in5" "$T/v5" | $TR --n-best 2 > "$T/o3_want"
cmp -s "$T/o3" "$T/o3_want" && tail -n 1 "$T/o3" | grep -q '^21 ||| ' && ok || bad "three inputs differ from their concatenation"
[ -s "$T/o3.err" ] && bad "a progress line without --progress off a terminal: $(cat "$T/o3.err")" || ok
expect_fail "output is an input" 2 "v6 is both an input file \(read\) and --output" $TR -o "$T/v6" "$T/v6"
# -o is refused (exit 2, the file untouched) when it names any file the command reads: the hints
# files, the model, the file behind standard input, a hard link to an input; score's and align's too
refused() {
    rf_file=$1; shift
    cp "$rf_file" "$T/rf_before"
    expect_fail "-o over $(basename "$rf_file"): $*" 2 "is both .* refusing to overwrite an input" "$@"
    cmp -s "$rf_file" "$T/rf_before" && ok || bad "-o over $rf_file changed it: $*"
}
printf 'un\n\n\n\n\n\n' > "$T/hint6"
refused "$T/hint6" $TR --constraints "$T/hint6" -o "$T/hint6" "$T/v6"
refused "$T/hint6" $TR --prefix "$T/hint6" -o "$T/hint6" "$T/v6"
refused "$T/m.nmt" $TR -o "$T/m.nmt" "$T/v6"
refused "$T/v6" sh -c "$TR -o '$T/v6' < '$T/v6'"
ln "$T/v6" "$T/v6.link"
refused "$T/v6" $TR -o "$T/v6.link" - "$T/v5" < "$T/v6"
for f in "$T/v6" "$T/hyp" "$T/m.nmt"; do
    refused "$f" "$NMT_BIN" score --model "$T/m.nmt" --src "$T/v6" --tgt "$T/hyp" -o "$f"
    refused "$f" "$NMT_BIN" align --model "$T/m.nmt" --src "$T/v6" --tgt "$T/hyp" -o "$f"
done
# a FIFO as the model is refused at once (opening it waited for ever); a FIFO among the inputs is
# opened once, when its turn comes, and read whole (an early check opened and closed it, which
# killed its writer and left the real open waiting for ever)
mkfifo "$T/fifo"
expect_fail "--model FIFO" 1 "fifo: not a regular file \(a FIFO\)" timeout -s KILL 30 $TR --model "$T/fifo" "$T/v6"
expect_fail "vocab --model FIFO" 1 "fifo: not a regular file \(a FIFO\)" timeout -s KILL 30 "$NMT_BIN" vocab --model "$T/fifo"
expect_fail "train --model FIFO" 1 "fifo: not a regular file \(a FIFO\)" timeout -s KILL 30 "$NMT_BIN" train --src "$T/v6" \
    --tgt "$T/v6" --model "$T/fifo" --max-updates 1
(cat "$T/v5" > "$T/fifo"; echo "$?" > "$T/fifo.rc") &
writer=$!
timeout -s KILL 60 $TR --n-best 2 "$T/v6" "$T/fifo" - < "$T/in5" > "$T/o_fifo" 2> "$T/o_fifo.err"
kill -0 "$writer" 2> /dev/null && timeout 10 cat "$T/fifo" > /dev/null # a writer left waiting: let it end
wait "$writer"
cat "$T/v6" "$T/v5" "$T/in5" | $TR --n-best 2 > "$T/o_fifo_want"
cmp -s "$T/o_fifo" "$T/o_fifo_want" && [ "$(cat "$T/fifo.rc")" = 0 ] && ok ||
    bad "a FIFO among the inputs: writer exit $(cat "$T/fifo.rc"), $(head -c 300 "$T/o_fifo.err")"
expect_fail "a missing second input" 1 "nope: No such file" $TR "$T/v6" "$T/nope"
expect_fail "--input and files" 2 "not both" $TR --input "$T/v6" "$T/v5"
$TR --progress < "$T/in5" > /dev/null 2> "$T/prog"
tail -n 1 "$T/prog" | grep -Eq "^\\[translate\\] $(wc -l < "$T/in5") sentences \\| [0-9.]+ sentences/s \\| [0-9:]+ in all$" && ok || bad "translate --progress: $(cat "$T/prog")"
"$NMT_BIN" score --model "$T/m.nmt" --src "$T/v6" --tgt "$T/hyp" --progress -o "$T/sc_o" 2> "$T/prog"
grep -q '^\[score\] 6 sentences' "$T/prog" && [ "$(wc -l < "$T/sc_o")" -eq 6 ] && ok || bad "score --progress -o: $(cat "$T/prog")"
"$NMT_BIN" align --model "$T/m.nmt" --src "$T/v6" --tgt "$T/hyp" --progress -o "$T/al_o" 2> "$T/prog"
grep -q '^\[align\] 6 sentences' "$T/prog" && [ "$(wc -l < "$T/al_o")" -eq 6 ] && ok || bad "align --progress -o: $(cat "$T/prog")"

# interactive: a line sent through a pipe is answered before the next is written
if command -v mkfifo > /dev/null; then
    mkfifo "$T/fin" "$T/fout"
    $TR < "$T/fin" > "$T/fout" &
    pid=$!
    exec 7> "$T/fin" 8< "$T/fout"
    echo "a man ." >&7
    if read -r ans <&8; then ok; else bad "no answer to the first interactive line"; fi
    echo "two dogs ." >&7
    if read -r ans2 <&8; then ok; else bad "no answer to the second interactive line"; fi
    exec 7>&- 8<&-
    wait $pid
    # the same with two workers (a watchdog ends a run that never answers, so the read fails)
    $TR --workers 2 < "$T/fin" > "$T/fout" &
    pid=$!
    # (its output goes nowhere: a sleep left holding this script's stdout kept the test runner,
    # which reads that pipe to its end, waiting the full minute)
    (sleep 60; kill "$pid" 2> /dev/null) > /dev/null 2>&1 &
    dog=$!
    exec 7> "$T/fin" 8< "$T/fout"
    echo "a man ." >&7
    if read -r ans3 <&8 && [ "$ans3" = "$ans" ]; then
        ok
        echo "two dogs ." >&7 # (only to a run still reading: a write to a killed one would end this script)
        if read -r ans4 <&8 && [ "$ans4" = "$ans2" ]; then ok; else bad "--workers 2: no answer to the second interactive line"; fi
    else
        bad "--workers 2: no answer to the first interactive line"
    fi
    exec 7>&- 8<&-
    wait $pid
    kill "$dog" 2> /dev/null
fi

# raw text in: --tokenize en --lowercase --normalize-punct is the Multi30k preprocessing, so raw lines
# translate exactly as the dataset's own tokenized lines; --detokenize fr = nmt detokenize -l fr
head -n 8 "$NMT_SHARED/data/multi30k/test_2016_flickr.en" > "$T/raw8"
head -n 8 "$D/test_2016_flickr.en" > "$T/tok8"
$TR --tokenize en --lowercase --normalize-punct < "$T/raw8" > "$T/fromraw"
$TR < "$T/tok8" > "$T/fromtok"
cmp -s "$T/fromraw" "$T/fromtok" && ok || bad "--tokenize differs from the tokenized data: $(diff "$T/fromraw" "$T/fromtok" | head -n 3)"
$TR --tokenize en --lowercase --normalize-punct --detokenize fr < "$T/raw8" > "$T/detok"
"$NMT_BIN" detokenize -l fr < "$T/fromtok" > "$T/detok_want"
cmp -s "$T/detok" "$T/detok_want" && ok || bad "--detokenize differs from nmt detokenize: $(diff "$T/detok" "$T/detok_want" | head -n 3)"
# --normalize-punct really normalizes (a line whose tokens change under normalize-punctuation)
printf 'A man \342\200\224 said \342\200\234Hello\342\200\235 \302\253 there \302\273 .\n' > "$T/rawp"
"$NMT_BIN" tokenize -l en --lowercase < "$T/rawp" > "$T/p_plain"
"$NMT_BIN" tokenize -l en --lowercase --normalize-punct < "$T/rawp" > "$T/p_norm"
cmp -s "$T/p_plain" "$T/p_norm" && bad "test line is not changed by punctuation normalization" || ok
$TR --tokenize en --lowercase --normalize-punct < "$T/rawp" > "$T/p_fromraw"
$TR < "$T/p_norm" > "$T/p_fromtok"
cmp -s "$T/p_fromraw" "$T/p_fromtok" && ok || bad "--normalize-punct does not normalize punctuation"
expect_fail "--lowercase without --tokenize" 2 "go with --tokenize" "$NMT_BIN" translate --model "$T/m.nmt" --lowercase

# valgrind: no leak and no invalid access on a few sentences
if command -v valgrind > /dev/null && [ "${1:-}" != "--quick" ]; then
    head -n 3 "$D/val.en" > "$T/v3"
    OMP_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        "$NMT_BIN" translate --model "$T/m.nmt" --beam 3 --threads 1 --alignment soft --n-best 2 --word-scores --detokenize fr \
        < "$T/v3" > /dev/null 2> "$T/vg"
    rc=$?
    [ $rc -eq 0 ] && ok || bad "valgrind (exit $rc): $(head -n 20 "$T/vg")"
    OMP_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        "$NMT_BIN" translate --model "$T/m.nmt" --beam 3 --threads 1 --batch 1 --workers 2 --n-best 2 --word-scores \
        < "$T/v3" > /dev/null 2> "$T/vg"
    rc=$?
    [ $rc -eq 0 ] && ok || bad "valgrind, --workers 2 (exit $rc): $(head -n 20 "$T/vg")"
fi
finish translate
