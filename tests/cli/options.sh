#!/bin/sh
# options.sh: every subcommand parses its options the same way, and its --help is its table:
# --help exits 0 with the usage on stdout; every option --help lists is known to the parser, and
# every old spelling it lists works with a warning;
# --opt=value is --opt value; a flag given a value, a missing value and an unknown option are
# usage errors (exit 2) in one format, the unknown one with the closest option suggested.
. tests/cli/lib.sh
# the sanitizer pass (--quick) checks each command's first 3 option lines: the parser is one
# table-driven code path, and every option of every table is checked by the plain pass
max_labels=1000000; [ "${1:-}" = --quick ] && max_labels=3
cmds=$("$NMT_BIN" --help | awk '/^Commands:/ { on = 1; next } on && NF { print $1 }')
check "nmt --help lists the commands" [ "$(echo "$cmds" | wc -w)" -ge 13 ]

# run CMD ARGS...: nmt CMD ARGS with nothing on stdin, output in $T/out and $T/err, status in $rc
run() {
    timeout 60 "$NMT_BIN" "$@" < /dev/null > "$T/out" 2> "$T/err"
    rc=$?
}

for c in $cmds; do
    run "$c" --help
    if [ $rc -eq 0 ] && head -n 1 "$T/out" | grep -q "^Usage: nmt $c" && [ ! -s "$T/err" ]; then ok
    else bad "$c --help: exit $rc, stderr $(head -c 200 "$T/err")"; fi
    cp "$T/out" "$T/help"
    # The option lines: "  -w, --width N   text": the label ends at two spaces (or the line).
    awk '/^Old spellings/ { exit } /^  -/ { l = substr($0, 3); i = index(l, "  "); if (i) l = substr(l, 1, i - 1); print l }' \
        "$T/help" > "$T/labels"
    # the old spellings --help lists still work, with a warning naming the new one
    awk '/^Old spellings/ { on = 1; next } on && /^  -/ { print $1, $3 }' "$T/help" > "$T/olds"
    while read -r old new; do
        warned() { grep -q "^nmt $c: warning: $old is an old spelling: use $new\$" "$T/err"; }
        run "$c" "$old" # a flag; an option with a value wants one more argument
        warned || run "$c" "$old" x
        warned && ok || bad "$c $old: $(head -c 200 "$T/err")"
    done < "$T/olds"
    check "$c --help lists options" test -s "$T/labels"
    head -n "$max_labels" "$T/labels" > "$T/labels.run"
    while IFS= read -r label; do
        arg=$(echo "$label" | awk -F ', ' '{ n = split($NF, w, " "); print (n > 1 ? w[2] : "") }')
        for name in $(echo "$label" | sed 's/, / /g; s/ [^-][^ ]*$//'); do
            [ "$name" = -h ] || [ "$name" = --help ] && continue
            # known to the parser, under every spelling --help shows
            run "$c" "$name" x
            grep -q "unknown option" "$T/err" && bad "$c: --help lists $name but the parser does not know it"
            case $name in --*) ;; *) continue ;; esac
            run "$c" "$name=x"
            if [ -z "$arg" ]; then # a flag: no value, even with =
                [ $rc -eq 2 ] && grep -q "^nmt $c: error: $name takes no value\$" "$T/err" && ok ||
                    bad "$c $name=x: exit $rc, $(head -c 200 "$T/err")"
            else # --opt=value reads like --opt value: same status, same message
                cp "$T/err" "$T/err_eq"
                st=$rc
                run "$c" "$name" x
                [ $st -eq $rc ] && cmp -s "$T/err_eq" "$T/err" && ok ||
                    bad "$c $name=x (exit $st) and $name x (exit $rc) differ: $(head -c 200 "$T/err_eq")"
                run "$c" "$name"
                [ $rc -eq 2 ] && grep -q "^nmt $c: error: $name needs a value\$" "$T/err" && ok ||
                    bad "$c $name (no value): exit $rc, $(head -c 200 "$T/err")"
            fi
        done
    done < "$T/labels.run"
    # an unknown option: exit 2; a near miss names the option meant
    run "$c" --no-such-option-at-all
    [ $rc -eq 2 ] && grep -q "^nmt $c: error: unknown option '--no-such-option-at-all' (nmt $c --help lists them)\$" "$T/err" \
        && ok || bad "$c: unknown option: exit $rc, $(head -c 200 "$T/err")"
    long=$(grep -o -- '--[a-z][a-z-]*[a-z]' "$T/labels" | grep -v -- '--help' | awk 'length($0) > 5' | head -n 1)
    if [ -n "$long" ]; then
        typo=$(echo "$long" | sed 's/.$//')
        run "$c" "$typo" x
        grep -q "unknown option '$typo'; did you mean $long?" "$T/err" && ok || bad "$c $typo: $(head -c 200 "$T/err")"
    fi
done
# usage errors the commands find after parsing (a required option missing, options that exclude
# each other) read "nmt CMD: error: ..." as the parser's own do (25 of them once lacked "error:"),
# with exit 2
printf 'a\n' > "$T/one"
while IFS='|' read -r c args; do
    # shellcheck disable=SC2086
    run $c $args
    [ $rc -eq 2 ] && grep -q "^nmt $c: error: " "$T/err" && ok || bad "nmt $c $args: exit $rc, $(head -c 200 "$T/err")"
done <<EOF
train|--src $T/one
align|--src $T/one
align|--model m --src $T/one --tgt $T/one --soft --format json
average|--out $T/x
lex|--src $T/one
plot|--src $T/one --tgt $T/one
plot|--matrix $T/one --src $T/one --tgt $T/one --out $T/x --eos
segment|--input $T/one
vocab|--side source $T/one
translate|--n-best 3 --beam 2 --model m
translate|--lowercase --model m
score|--model m
ibm|--src $T/one
aer|--test $T/one
report|--ref $T/one
EOF
finish options
