#!/bin/sh
# aer.sh: `nmt aer` end to end. Its output must equal, line for line, that of tests/aer_check.py
# (an independent Python implementation) on real gold sets and real system alignments; each
# original gold format must score like the converted file; bad input must give the file:line
# message and exit 1, bad usage exit 2. Last line: "aer: P passed, F failed".
NMT_BIN=${NMT_BIN:-bin/nmt}
NMT_SHARED=${NMT_SHARED:-../shared}
CHECK="python3 $(dirname "$0")/../aer_check.py"
D=$NMT_SHARED/data/alignment
H=$D/en-fr/hansards_naacl2003
V=$D/aer_vectors/hyps
pass=0
fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# same NAME FILE1 FILE2: the two outputs must be identical and non-empty.
same() {
    if [ -s "$2" ] && cmp -s "$2" "$3"; then ok; else bad "$1: outputs differ"; diff "$2" "$3" >&2; fi
}

# vs_python NAME "NMT ARGS" "CHECK ARGS": nmt aer (exit 0) against aer_check.py.
vs_python() {
    # shellcheck disable=SC2086
    "$NMT_BIN" aer $2 > "$tmp/nmt.out" 2> "$tmp/nmt.err"
    rc=$?
    [ $rc -eq 0 ] || bad "$1: nmt aer exit $rc: $(cat "$tmp/nmt.err")"
    # shellcheck disable=SC2086
    $CHECK $3 > "$tmp/py.out" || bad "$1: aer_check.py failed"
    same "$1" "$tmp/nmt.out" "$tmp/py.out"
}

# fails NAME CODE SUBSTRING ARGS...: exit CODE, SUBSTRING on stderr, nothing on stdout.
fails() {
    name=$1 code=$2 sub=$3
    shift 3
    "$NMT_BIN" aer "$@" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    if [ $rc -eq "$code" ] && grep -qF -- "$sub" "$tmp/err" && [ ! -s "$tmp/out" ]; then
        ok
    else
        bad "$name: exit $rc (want $code), stderr '$(cat "$tmp/err")' (want '$sub')"
    fi
}

[ -f "$H/test.talp" ] || bad "no gold data under $D (set NMT_SHARED)"

# ---- against the independent script, on real gold files --------------------------------------
vs_python "hansards+giza" "--gold $H/test.talp --test $V/giza.enfr.talp --src $H/test.en --tgt $H/test.fr" \
    "--gold $H/test.talp --test $V/giza.enfr.talp"
vs_python "hansards sure/possible+fast_align" \
    "--gold $H/test.sure --gold-possible $H/test.possible --test $V/fastalign.enfr.talp" \
    "--gold $H/test.sure --possible $H/test.possible --test $V/fastalign.enfr.talp"
vs_python "zh-en+awesome" "--gold $D/zh-en/tsinghua/test.talp --test $V/awesome-align.zhen.out" \
    "--gold $D/zh-en/tsinghua/test.talp --test $V/awesome-align.zhen.out"
vs_python "ro-en+giza" "--gold $D/ro-en/naacl2003_wpt/test.talp --test $V/giza.roen.talp" \
    "--gold $D/ro-en/naacl2003_wpt/test.talp --test $V/giza.roen.talp"
# The expected.tsv figure, as printed.
if "$NMT_BIN" aer --gold "$H/test.talp" --test "$V/giza.enfr.talp" | grep -q '^AER        0\.079945$'; then
    ok
else
    bad "Hansards MGIZA AER is not 0.079945 (aer_vectors/expected.tsv: 0.0799445...)"
fi

# ALIBI (P-heavy, long lines): a made-up system, the gold with every third link dropped and
# possible links taken as sure; and the same links written target first, read with --test-reverse.
A=$D/en-fr/alibi_literary
awk '{ o = ""; for (k = 1; k <= NF; k++) if (k % 3) { t = $k; sub(/\?/, "-", t); o = o (o == "" ? "" : " ") t }
       print o }' "$A/test.talp" > "$tmp/alibi.hyp"
awk '{ o = ""; for (k = 1; k <= NF; k++) { split($k, p, "-"); o = o (k > 1 ? " " : "") p[2] "-" p[1] }
       print o }' "$tmp/alibi.hyp" > "$tmp/alibi.rev"
vs_python "alibi" "--gold $A/test.talp --test $tmp/alibi.hyp --src $A/test.en --tgt $A/test.fr" \
    "--gold $A/test.talp --test $tmp/alibi.hyp"
vs_python "alibi --test-reverse" "--gold $A/test.talp --test $tmp/alibi.rev --test-reverse" \
    "--gold $A/test.talp --test $tmp/alibi.hyp"
# --reverse, its old spelling: the same scores, and a warning naming the new one
"$NMT_BIN" aer --gold "$A/test.talp" --test "$tmp/alibi.rev" --test-reverse > "$tmp/rev_new.out"
"$NMT_BIN" aer --gold "$A/test.talp" --test "$tmp/alibi.rev" --reverse > "$tmp/rev_old.out" 2> "$tmp/rev_old.err"
same "--reverse (old spelling)" "$tmp/rev_new.out" "$tmp/rev_old.out"
if grep -q "nmt aer: warning: --reverse is an old spelling: use --test-reverse" "$tmp/rev_old.err"; then ok
else bad "--reverse: no warning: $(cat "$tmp/rev_old.err")"; fi

# Soft matrices (made up by the script, peaked on MGIZA's links): SAER, and AER of the arg-max.
$CHECK --write-soft "$tmp/h.soft" --src "$H/test.en" --tgt "$H/test.fr" --test "$V/giza.enfr.talp" \
    --seed 7 || bad "aer_check.py --write-soft failed"
vs_python "soft arg-max" "--gold $H/test.talp --soft $tmp/h.soft --src $H/test.en --tgt $H/test.fr" \
    "--gold $H/test.talp --soft $tmp/h.soft"
vs_python "soft + test" "--gold $H/test.talp --soft $tmp/h.soft --test $V/giza.enfr.talp" \
    "--gold $H/test.talp --soft $tmp/h.soft --test $V/giza.enfr.talp"
if grep -q '^SAER ' "$tmp/nmt.out"; then ok; else bad "no SAER line with --soft"; fi

# ---- every original gold format scores like its converted file -------------------------------
"$NMT_BIN" aer --gold "$H/test.talp" --test "$V/giza.enfr.talp" > "$tmp/talp.out"
"$NMT_BIN" aer --gold "$H/orig/NSavov_NLP2-Projects/test.wa.nonullalign" --gold-format naacl \
    --test "$V/giza.enfr.talp" > "$tmp/naacl.out"
same "naacl format" "$tmp/talp.out" "$tmp/naacl.out"
"$NMT_BIN" aer --gold "$H/orig/awesome-align/enfr.gold" --gold-format=awesome \
    --test "$V/giza.enfr.talp" > "$tmp/awesome.out"
same "awesome format" "$tmp/talp.out" "$tmp/awesome.out"
# The first ALIBI story is the first 52 lines of test.talp.
head -n 52 "$A/test.talp" > "$tmp/chat.talp"
head -n 52 "$tmp/alibi.hyp" > "$tmp/chat.hyp"
"$NMT_BIN" aer --gold "$tmp/chat.talp" --test "$tmp/chat.hyp" > "$tmp/chat1.out"
"$NMT_BIN" aer --gold "$A/orig/ali/ChatBotte_MasterCat/ali_w2w_ChatBotte_MasterCat.txt" \
    --gold-format alibi --test "$tmp/chat.hyp" > "$tmp/chat2.out"
same "alibi format" "$tmp/chat1.out" "$tmp/chat2.out"
B=$D/de-en/bicici_europarl
"$NMT_BIN" aer --gold "$B/orig/de-en.wa" --test "$B/test.talp" > "$tmp/b1.out"
"$NMT_BIN" aer --gold "$B/orig/de-en.ref.wa" --gold-format naacl --gold-base 0 \
    --test "$B/test.talp" > "$tmp/b2.out"
same "naacl base 0" "$tmp/b1.out" "$tmp/b2.out"

# ---- errors ----------------------------------------------------------------------------------
if "$NMT_BIN" aer --help > "$tmp/help" 2> "$tmp/err" && grep -q '^Usage: nmt aer' "$tmp/help" \
    && [ ! -s "$tmp/err" ]; then
    ok
else
    bad "--help: not exit 0 with the usage on stdout"
fi
fails "no args" 2 "--gold FILE is required"
fails "no test" 2 "give --test FILE, --soft FILE or both" --gold "$H/test.talp"
fails "unknown option" 2 "unknown option '--bogus'" --gold "$H/test.talp" --bogus
fails "missing value" 2 "nmt aer: error: --test needs a value" --gold "$H/test.talp" --test
fails "bad format" 2 "--gold-format 'pharaoh': expected talp, awesome, alibi or naacl" \
    --gold-format pharaoh
fails "bad base" 2 "--gold-base 2: out of range" --gold-base 2
fails "src alone" 2 "--src and --tgt go together" --gold "$H/test.talp" --test "$V/giza.enfr.talp" \
    --src "$H/test.en"
fails "twice" 2 "--test given twice" --gold "$H/test.talp" --test a --test b
fails "missing file" 1 "nmt aer: error: $tmp/nope.talp: No such file or directory" \
    --gold "$tmp/nope.talp" --test "$V/giza.enfr.talp"
printf '0-0 1-1\n0-0 0x1\n' > "$tmp/bad.talp"
fails "malformed gold" 1 "nmt aer: error: $tmp/bad.talp:2: '0x1': not a link (expected i-j or i?j)" \
    --gold "$tmp/bad.talp" --test "$V/giza.enfr.talp"
head -n 446 "$V/giza.enfr.talp" > "$tmp/short.hyp"
fails "short test" 1 "$tmp/short.hyp:446: ends after 446 sentences; $H/test.talp has 447" \
    --gold "$H/test.talp" --test "$tmp/short.hyp"
{ cat "$V/giza.enfr.talp"; echo "0-0"; } > "$tmp/long.hyp"
fails "long test" 1 "$tmp/long.hyp:448: sentence 448 has no counterpart" \
    --gold "$H/test.talp" --test "$tmp/long.hyp"
fails "out of range" 1 "de-en.wa:63: link 12-16: target position 16 is past the end of sentence 63, which has 13 target words" \
    --gold "$B/orig/de-en.wa" --test "$B/test.talp" --src "$B/test.de" --tgt "$B/test.en"
printf '\n%.0s' $(seq 447) > "$tmp/empty_lines"
fails "test out of range" 1 "past the end of sentence 1, which has 0 target words" \
    --gold "$H/test.talp" --test "$V/giza.enfr.talp" --src "$H/test.en" --tgt "$tmp/empty_lines"
printf '0-0\n' > "$tmp/one.talp"
printf '1 0\n' > "$tmp/one.soft"
echo a > "$tmp/one.src"
echo b > "$tmp/one.tgt"
fails "soft vs tokens" 1 "one.soft:1: sentence 1's matrix has 1 rows of 2 values, but the sentence has 1 target words ($tmp/one.tgt) and 1 source words ($tmp/one.src)" \
    --gold "$tmp/one.talp" --soft "$tmp/one.soft" --src "$tmp/one.src" --tgt "$tmp/one.tgt"
printf '0.5 0.5\n0.5\n' > "$tmp/bad.soft"
fails "malformed soft" 1 "$tmp/bad.soft:2: row has 1 values, the matrix's first row (line 1) has 2" \
    --gold "$H/test.talp" --soft "$tmp/bad.soft"
sed '6s/ 1-2 / /' "$H/test.possible" > "$tmp/cut.possible"
fails "S not in P" 1 "test.sure:6: sure link 1-2 is not in $tmp/cut.possible (line 6)" \
    --gold "$H/test.sure" --gold-possible "$tmp/cut.possible" --test "$V/giza.enfr.talp"

echo "aer: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
