#!/bin/sh
# tokenize.sh [--quick]: CLI cases for `nmt tokenize` / `nmt detokenize`: the Moses reference
# vectors of $NMT_SHARED/data/tokenizer through the commands of its README, option errors and
# exit codes, --help, invalid UTF-8 warnings. Prints "tokenize: P passed, F failed".
NMT_BIN=${NMT_BIN:-bin/nmt}
NMT_SHARED=${NMT_SHARED:-../shared}
D=$NMT_SHARED/data/tokenizer
quick=0
[ "$1" = "--quick" ] && quick=1
pass=0; fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nmt-tok.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# same_file NAME EXPECTED GOT
same_file() {
    if cmp -s "$2" "$3"; then ok; else
        bad "$1 differs from $2 ($(diff "$2" "$3" | grep -c '^<') lines)"
        diff "$2" "$3" | head -n 6 >&2
    fi
}

# expect NAME WANT_RC WANT_STDOUT COMMAND... (stdin from $tmp/in)
expect() {
    name=$1; want_rc=$2; want_out=$3; shift 3
    out=$("$@" < "$tmp/in" 2> "$tmp/err"); rc=$?
    if [ "$rc" -ne "$want_rc" ]; then bad "$name: exit $rc, expected $want_rc"; cat "$tmp/err" >&2; return; fi
    if [ "$out" != "$want_out" ]; then bad "$name: got '$out', expected '$want_out'"; return; fi
    ok
}

# --- the reference vectors (README table) ---
if [ -d "$D/input" ]; then
    for f in "$D"/input/*; do
        x=$(basename "$f"); l=${x##*.}
        [ $quick -eq 1 ] && case $x in val.*) ;; *) continue ;; esac
        "$NMT_BIN" tokenize -l "$l" -a --no-escape < "$f" > "$tmp/a.noesc" && ok || bad "tokenize $x exit"
        same_file "tokenize -l $l -a --no-escape < $x" "$D/expected/$x.tok.a.noesc" "$tmp/a.noesc"
        "$NMT_BIN" tokenize -l "$l" -a < "$f" > "$tmp/a.esc"
        same_file "tokenize -l $l -a < $x" "$D/expected/$x.tok.a.esc" "$tmp/a.esc"
        "$NMT_BIN" tokenize -l "$l" < "$f" > "$tmp/default"
        same_file "tokenize -l $l < $x" "$D/expected/$x.tok.default" "$tmp/default"
        "$NMT_BIN" tokenize -l "$l" --lowercase --normalize-punct < "$f" > "$tmp/lcnorm"
        same_file "tokenize -l $l --lowercase --normalize-punct < $x" "$D/expected/$x.lc.norm.tok" "$tmp/lcnorm"
        "$NMT_BIN" detokenize -l "$l" < "$D/expected/$x.tok.a.noesc" > "$tmp/detok"
        same_file "detokenize -l $l < $x.tok.a.noesc" "$D/expected/$x.tok.a.noesc.detok" "$tmp/detok"
        "$NMT_BIN" detokenize -l "$l" < "$D/expected/$x.tok.a.esc" > "$tmp/detok"
        same_file "detokenize -l $l < $x.tok.a.esc" "$D/expected/$x.tok.a.esc.detok" "$tmp/detok"
    done
else
    bad "no reference vectors in $D (set NMT_SHARED)"
fi

# --- small cases ---
printf "Hello, world! Isn't it?\n\n   \nDr. Smith's dirt-bikes cost \$1,000.\n" > "$tmp/in"
expect "tokenize en" 0 "$(printf 'Hello , world ! Isn &apos;t it ?\n\n   \nDr. Smith &apos;s dirt-bikes cost $ 1,000 .')" \
    "$NMT_BIN" tokenize -l en
expect "tokenize -a -q" 0 "$(printf "Hello , world ! Isn 't it ?\n\n   \nDr. Smith 's dirt @-@ bikes cost \$ 1,000 .")" \
    "$NMT_BIN" tokenize -q -l en -a --no-escape
printf "l'homme n'est pas là: il dit «oui»\n" > "$tmp/in"
expect "tokenize fr" 0 "l&apos; homme n&apos; est pas là : il dit « oui »" "$NMT_BIN" tokenize -l fr
expect "tokenize fr lc norm" 0 "l&apos; homme n&apos; est pas là : il dit &quot; oui &quot;" \
    "$NMT_BIN" tokenize -l fr --lowercase --normalize-punct
# --normalize, the old spelling: the same output, and a warning naming the new one
expect "tokenize --normalize (old spelling)" 0 "l&apos; homme n&apos; est pas là : il dit &quot; oui &quot;" \
    "$NMT_BIN" tokenize --lang=fr --lowercase --normalize
grep -q "nmt tokenize: warning: --normalize is an old spelling: use --normalize-punct" "$tmp/err" && ok ||
    bad "no deprecation warning for --normalize: $(cat "$tmp/err")"
printf "l&apos; homme , dit @-@ il : &quot; oui &quot; .\n" > "$tmp/in"
expect "detokenize fr" 0 "l'homme, dit-il : \"oui\"." "$NMT_BIN" detokenize -l fr
expect "detokenize en" 0 "l' homme, dit-il: \"oui\"." "$NMT_BIN" detokenize
: > "$tmp/in"
expect "empty input" 0 "" "$NMT_BIN" tokenize -l de
printf "no newline at end" > "$tmp/in"
expect "last line without newline" 0 "no newline at end" "$NMT_BIN" tokenize

# invalid UTF-8: a warning naming the line, U+FFFD in the output, exit 0
printf "fine\ncaf\303 ok\n" > "$tmp/in"
expect "invalid UTF-8" 0 "$(printf 'fine\ncaf \357\277\275 ok')" "$NMT_BIN" tokenize -l en
if grep -q "stdin:2: invalid UTF-8" "$tmp/err"; then ok; else bad "no warning naming line 2: $(cat "$tmp/err")"; fi

# --- options and exit codes ---
: > "$tmp/in"
out=$("$NMT_BIN" tokenize --help); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "Usage: nmt tokenize" && ok || bad "tokenize --help (exit $rc)"
out=$("$NMT_BIN" detokenize -h); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "Usage: nmt detokenize" && ok || bad "detokenize -h (exit $rc)"
expect "unknown flag" 2 "" "$NMT_BIN" tokenize --bogus
grep -q "unknown option '--bogus'" "$tmp/err" && ok || bad "unknown flag message: $(cat "$tmp/err")"
expect "unknown language" 2 "" "$NMT_BIN" tokenize -l xx
grep -q "'xx': expected en, fr or de" "$tmp/err" && ok || bad "unknown language message: $(cat "$tmp/err")"
expect "missing language" 2 "" "$NMT_BIN" detokenize -l
expect "detokenize has no -a" 2 "" "$NMT_BIN" detokenize -a

echo "tokenize: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
