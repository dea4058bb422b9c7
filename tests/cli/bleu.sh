#!/bin/sh
# bleu.sh: command-line cases for `nmt bleu`. Every sacrebleu command recorded in
# shared/data/bleu/cli_expected.txt runs as it is with `nmt bleu` in place of `sacrebleu` (plus
# --format json, sacreBLEU's default) and its output is compared with sacreBLEU's (the version
# field aside); sacreBLEU's argument order (REF... < HYP, or -i HYP REF...) gives the reference
# vectors' scores and the swapped order does not pass unnoticed; every chrF++ and TER value of
# expected_metrics.tsv and sentence_metrics.tsv comes out with its signature; -m lists end where
# sacreBLEU's would; then usage and input errors are checked for their message and exit status. Env: NMT_BIN (default bin/nmt), NMT_SHARED.
bin=${NMT_BIN:-bin/nmt}
shared=${NMT_SHARED:-../shared}
case $bin in /*) ;; */*) bin=$(pwd)/$bin ;; esac
case $shared in /*) ;; *) shared=$(pwd)/$shared ;; esac
data=$shared/data/bleu
here=$(cd "$(dirname "$0")" && pwd) # tests/cli, for ../ter_check.py (the cases cd elsewhere)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
set -f # the recorded command lines are split into words, never globbed
# the sanitizer pass (--quick) scores the first rows of each metric and option set only: the
# same code on other files; the plain pass checks every row
quick=0; [ "${1:-}" = --quick ] && quick=1

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL cli/bleu: $*" >&2; }
check() { # description, condition...
    d=$1; shift
    if "$@"; then ok; else bad "$d"; fi
}

# run ARGS...: nmt bleu ARGS with stdout in $tmp/out, stderr in $tmp/err, status in $rc; an
# empty standard input (never a terminal to wait on).
run() {
    "$bin" bleu "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}
# runin FILE ARGS...: the same with FILE on standard input.
runin() {
    f=$1; shift
    "$bin" bleu "$@" >"$tmp/out" 2>"$tmp/err" <"$f"
    rc=$?
}
has_err() { grep -q -F -- "$1" "$tmp/err"; }
has_out() { grep -q -F -- "$1" "$tmp/out"; }
out_is() { [ "$(cat "$tmp/out")" = "$1" ]; }
no_version() { sed -e 's/version:[^"| ]*/version:V/g' -e 's/"version": "[^"]*"/"version": "V"/'; }
out_is_nv() { [ "$(no_version <"$tmp/out")" = "$1" ]; }
# rc_is N CMD...: the exit status was N and CMD succeeds (inside one check, unlike `check ... && CMD`,
# whose second half would go unchecked)
rc_is() { want_rc=$1; shift; [ "$rc" -eq "$want_rc" ] && "$@"; }

# ---- sacreBLEU's own output, case by case ----
if [ ! -f "$data/cli_expected.txt" ]; then
    bad "cannot read $data/cli_expected.txt (set NMT_SHARED)"
else
    # Blocks: a "$ sacrebleu ..." line, then its output up to a blank line; sacreBLEU's
    # "sacreBLEU:" warnings went to stderr and are not part of the comparison.
    awk -v dir="$tmp" '
        /^\$ sacrebleu / { n++; sub(/^\$ /, ""); print > (dir "/cmd" n); close(dir "/cmd" n);
                           out = dir "/want" n; printf "" > out; inblock = 1; next }
        /^$/ { inblock = 0; next }
        inblock && !/^sacreBLEU:/ { print >> out }
    ' "$data/cli_expected.txt"
    ncases=0
    while [ -f "$tmp/cmd$((ncases + 1))" ]; do
        ncases=$((ncases + 1))
        i=$ncases
        line=$(cat "$tmp/cmd$i")
        limit=""
        case $line in *"(first 3 lines)"*) limit=3; line=${line%%  (first 3 lines)*} ;; esac
        # sacreBLEU's command line as it is; its default output format is JSON, ours text
        set -- $line
        shift
        opts=""
        case $line in *--sentence-level*) ;; *) opts="--format json" ;; esac
        (cd "$data" && "$bin" bleu "$@" $opts </dev/null) >"$tmp/got$i" 2>"$tmp/err$i"
        rc=$?
        if [ -n "$limit" ]; then head -n "$limit" "$tmp/got$i" >"$tmp/got$i.h"; mv "$tmp/got$i.h" "$tmp/got$i"; fi
        no_version <"$tmp/got$i" >"$tmp/got$i.n"
        no_version <"$tmp/want$i" >"$tmp/want$i.n"
        if [ "$rc" -eq 0 ] && cmp -s "$tmp/got$i.n" "$tmp/want$i.n"; then
            ok
        else
            bad "as sacreBLEU: nmt bleu $* $opts (exit $rc)"
            diff "$tmp/want$i.n" "$tmp/got$i.n" | head -n 10 >&2
            head -n 3 "$tmp/err$i" >&2
        fi
    done
    check "cli_expected.txt has at least 10 cases (found $ncases)" [ "$ncases" -ge 10 ]
fi

# ---- corpus numbers, text output and options ----
cd "$data" 2>/dev/null || { bad "no data folder $data"; echo "bleu: $pass passed, $fail failed"; exit 1; }
runin hyps/perturbed.fr refs/ref.fr
check "default text output" out_is_nv "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:V = 50.8636 87.5/62.6/47.6/36.8 (BP = 0.914 ratio = 0.917 hyp_len = 12388 ref_len = 13505)"
check "our version in the signature" has_out "|version:nmt-"
run -i hyps/perturbed.fr refs/ref.fr -b
check "--score-only" out_is "50.8636"
run -b --chrf -w 2 -i hyps/perturbed.fr refs/ref.fr
check "--chrf --score-only -w 2: two lines" out_is "50.86
70.78"
run -m bleu chrf -b -w 2 -i hyps/perturbed.fr refs/ref.fr
check "-m bleu chrf (two arguments, as sacreBLEU)" out_is "50.86
70.78"
run -m chrf --input hyps/perturbed.cs refs/ref.cs
check "chrF only" has_out "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:"
check "chrF only: score" has_out "= 70.9843"
run --tokenize=intl -b -i hyps/perturbed.fr refs/ref.fr
check "--tokenize=intl" out_is "53.2894"
run -t none -b -i hyps/perturbed.fr refs/ref.fr
check "-t none" out_is "49.1234"
run -tok none -b --input=hyps/perturbed.fr refs/ref.fr
check "-tok none --input=HYP" out_is "49.1234"
runin hyps/all_empty.fr -b refs/ref.fr
check "all-empty hypothesis scores 0" out_is "0.0000"
run -i hyps/all_empty.fr refs/ref.fr
check "all-empty hypothesis: BP 0, ratio 0" has_out "0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 13505)"
run -b --smooth-method add-k -i hyps/reversed20.fr refs/ref.first20.fr
check "add-k" out_is "3.7215"
run --smooth-method floor --smooth-value 0.1 -i hyps/reversed20.fr refs/ref.first20.fr
check "floor signature" has_out "smooth:floor[0.10]"
run -b --smooth-method none -i hyps/reversed20.fr refs/ref.first20.fr
check "no smoothing, no 3-gram match: 0" out_is "0.0000"
run -b -lc -i hyps/lowercased_tok.fr refs/ref.fr
check "-lc" out_is "77.6635"
# -l is sacreBLEU's language pair (it was our old spelling of --lowercase, so a recorded
# `sacrebleu -l en-fr REF -i HYP` read en-fr as a reference): checked, it changes nothing
run -b -l en-fr -i hyps/perturbed.fr refs/ref.fr
check "-l en-fr: the score without it (sacreBLEU's, above)" rc_is 0 out_is "50.8636"
run -b -l en-zh -i hyps/perturbed.fr refs/ref.fr
check "-l en-zh without -tok: refused" rc_is 2 has_err "tokenizer of its own"
run -b -l en-zh -tok 13a -i hyps/perturbed.fr refs/ref.fr
check "-l en-zh -tok 13a" [ "$rc" -eq 0 ]
run -b -l -i hyps/lowercased_tok.fr refs/ref.fr
check "-l as lowercasing (the old spelling): refused, naming -lc" rc_is 2 has_err "lowercasing is -lc"
run -b -l refs/ref-a.fr refs/ref.fr < hyps/perturbed.fr
check "-l before a file name with a dash: refused, not taken for a pair" rc_is 2 has_err "lowercasing is -lc"
run -b -m chrf -l en-zh -i hyps/perturbed.fr refs/ref.fr
check "-l en-zh with chrF alone: no tokenizer, no refusal" [ "$rc" -eq 0 ]
run -b -i hyps/caption1.en refs/ref.caption2.en refs/ref.caption3.en
check "two references" out_is "11.0870"
run --sentence -i hyps/perturbed.fr refs/ref.fr
check "--sentence: one line per segment" rc_is 0 [ "$(wc -l <"$tmp/out")" -eq 1000 ]
run --sentence -b -i hyps/empty_lines.fr refs/ref.fr
check "--sentence: empty line scores 0" [ "$(sed -n 7p "$tmp/out")" = "0.0000" ]
run --sentence -b --chrf -i hyps/perturbed.fr refs/ref.fr
check "--sentence --chrf: tab-separated" [ "$(sed -n 1p "$tmp/out")" = "$(printf '13.8790\t45.3542')" ]
run -b -i - refs/ref.fr
check "-i -: standard input (here empty): an error" [ "$rc" -eq 1 ]

# Line ends: CR before LF and a missing final newline change nothing (sacreBLEU rstrips).
printf 'a b c d .\r\nx y\r\n' >"$tmp/crlf.txt"
printf 'a b c d .\nx y' >"$tmp/lf.txt"
run -b --chrf -i "$tmp/crlf.txt" "$tmp/lf.txt"
check "CRLF and no final newline" out_is "100.0000
100.0000"

# ---- sacreBLEU's order: the reference vectors' scores, whichever way the hypothesis comes ----
# Every single-option-free case of expected.tsv: REF... < HYP and -i HYP REF... both print the
# corpus BLEU sacreBLEU computed, to 4 decimals.
n=0
while IFS='	' read -r name hyp refs options score rest; do
    [ "$options" = default ] || continue
    [ $quick = 1 ] && [ $n -ge 3 ] && { n=$((n + 1)); continue; }
    want=$(awk -v x="$score" 'BEGIN { printf "%.4f", x }')
    refs=$(echo "$refs" | tr ',' ' ')
    runin "$hyp" -b $refs
    check "$name: nmt bleu REF... < HYP = sacreBLEU's $want (got '$(cat "$tmp/out")', exit $rc)" out_is "$want"
    run -b -i "$hyp" $refs
    check "$name: nmt bleu -i HYP REF... = sacreBLEU's $want (got '$(cat "$tmp/out")', exit $rc)" out_is "$want"
    n=$((n + 1))
done <expected.tsv
check "expected.tsv has default-option cases (found $n)" [ "$n" -ge 10 ]

# ---- chrF++ and TER: every row of expected_metrics.tsv and sentence_metrics.tsv ----
# opt_of METRIC OPTIONS: the nmt bleu options for sacreBLEU's keyword arguments; name_of: the
# score's name as sacreBLEU prints it
opt_of() {
    case "$1 $2" in
    "BLEU default") echo "-m bleu" ;;
    "BLEU tokenize=none") echo "-m bleu -tok none" ;;
    "BLEU lowercase=True") echo "-m bleu -lc" ;;
    "chrF default") echo "-m chrf" ;;
    "chrF word_order=2") echo "-m chrf --chrf-word-order 2" ;;
    "TER default") echo "-m ter" ;;
    "TER case_sensitive=True") echo "-m ter --ter-case-sensitive" ;;
    "TER normalized=True") echo "-m ter --ter-normalized" ;;
    *) echo "unknown" ;;
    esac
}
n=0
# the sanitizer pass: two rows of each metric and option set, the others marked to be skipped
awk -F '\t' -v q=$quick 'q && c[$3 "|" $4]++ >= 2 { $0 = "SKIP" $0 } 1' expected_metrics.tsv > "$tmp/metrics.tsv"
while IFS='	' read -r hyp refs metric options score sig; do
    [ "$hyp" = hyp_file ] && continue
    case $hyp in SKIP*) n=$((n + 1)); continue ;; esac
    o=$(opt_of "$metric" "$options")
    want=$(awk -v x="$score" 'BEGIN { printf "%.4f", x }')
    refs=$(echo "$refs" | tr ',' ' ')
    if [ "$metric" = BLEU ]; then
        run -b $o -i "$hyp" $refs
        check "$hyp $metric $options: $want (got '$(cat "$tmp/out")', exit $rc)" out_is "$want"
    else
        name=$metric; [ "$metric" = chrF ] && name=chrF2; [ "$options" = word_order=2 ] && name=chrF2++
        run $o -i "$hyp" $refs
        line="$name|$(echo "$sig" | no_version) = $want"
        check "$hyp $metric $options: '$line' (got '$(cat "$tmp/out")', exit $rc)" out_is_nv "$line"
    fi
    n=$((n + 1))
done <"$tmp/metrics.tsv"
check "expected_metrics.tsv: at least 100 rows (found $n)" [ "$n" -ge 100 ]
n=0
while IFS='	' read -r hyp refs line metric options score sig; do
    [ "$hyp" = hyp_file ] && continue
    o=$(opt_of "$metric" "$options")
    key=$(echo "$hyp $o" | tr -c 'a-zA-Z0-9\n' _)
    [ -f "$tmp/sent_$key" ] || "$bin" bleu --sentence -b $o -i "$hyp" $(echo "$refs" | tr ',' ' ') >"$tmp/sent_$key" 2>&1
    want=$(awk -v x="$score" 'BEGIN { printf "%.4f", x }')
    got=$(sed -n "${line}p" "$tmp/sent_$key")
    check "--sentence $hyp line $line $metric $options: $want (got '$got')" [ "$got" = "$want" ]
    n=$((n + 1))
done <sentence_metrics.tsv
check "sentence_metrics.tsv: at least 100 rows (found $n)" [ "$n" -ge 100 ]

# TER's limits (shift candidates, the band and its widening), which the vectors above never
# reach: long and lopsided made-up sentences against tests/ter_check.py, a second implementation
if command -v python3 >/dev/null 2>&1; then
    tercheck="python3 $here/../ter_check.py"
    $tercheck --write "$tmp/tc.hyp" "$tmp/tc.ref" --seed 1 && $tercheck "$tmp/tc.hyp" "$tmp/tc.ref" >"$tmp/tc.want"
    run -m ter --sentence -b -w 10 -i "$tmp/tc.hyp" "$tmp/tc.ref"
    check "TER on long and lopsided sentences = ter_check.py's (exit $rc): $(paste -d' ' "$tmp/tc.want" "$tmp/out" | tr '\n' ';')" \
        rc_is 0 cmp -s "$tmp/out" "$tmp/tc.want"
    check "ter_check.py wrote 6 cases" [ "$(wc -l <"$tmp/tc.want")" -eq 6 ]
fi

# TER's memory is linear in the line lengths (only the edit distance's band is stored): one
# 20,000-word pair under an 800 MB data limit (OpenBLAS takes about 150 MB at start-up), where
# the whole matrix took 2 GB. Every 10th word is one the reference lacks: 2,000 substitutions,
# no shift can help, TER 10 exactly.
awk 'BEGIN { for (i = 1; i <= 20000; i++) { e = i < 20000 ? " " : "\n"; printf "w%d%s", i % 997, e
    printf "%s%s", i % 10 ? "w" i % 997 : "zz", e > "/dev/stderr" } }' >"$tmp/long.ref" 2>"$tmp/long.hyp"
# Under AddressSanitizer, which reserves terabytes of address space for its shadow, no data limit
# can be set: there the peak resident size (GNU time) holds the bound instead.
if ldd "$bin" 2>/dev/null | grep -q libasan; then
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f '%M' -o "$tmp/rss" "$bin" bleu -m ter -b -i "$tmp/long.hyp" "$tmp/long.ref" >"$tmp/out" 2>"$tmp/err" </dev/null
        rss=$(tail -n 1 "$tmp/rss")
        check "TER of a 20,000-word pair under ASan: peak $rss KB (at most 800,000)" test "${rss:-0}" -gt 0 -a "${rss:-0}" -le 800000
    else
        "$bin" bleu -m ter -b -i "$tmp/long.hyp" "$tmp/long.ref" >"$tmp/out" 2>"$tmp/err" </dev/null
    fi
else
    (ulimit -d 800000 && "$bin" bleu -m ter -b -i "$tmp/long.hyp" "$tmp/long.ref") >"$tmp/out" 2>"$tmp/err" </dev/null
fi
check "TER of a 20,000-word pair within 800 MB: 10.0000 (got '$(cat "$tmp/out")' $(head -c 200 "$tmp/err"))" out_is 10.0000

# The hypothesis-first order of before: never the same score without a word.
run -i hyps/perturbed.fr refs/ref.fr
want=$(cat "$tmp/out")
run -i refs/ref.fr hyps/perturbed.fr
differs() { [ -s "$tmp/out" ] && ! out_is "$1"; }
check "swapped files: another score" rc_is 0 differs "$want"
run hyps/perturbed.fr refs/ref.fr
check "old order, empty standard input: exit 1" [ "$rc" -eq 1 ]
check "old order, empty standard input: the order explained" has_err "the order is sacreBLEU's: nmt bleu REF [REF...] < HYP"
if command -v script >/dev/null 2>&1; then
    # standard input a terminal and no -i: refused at once, nothing read
    script -qec "'$bin' bleu hyps/perturbed.fr refs/ref.fr" /dev/null </dev/null >"$tmp/tty" 2>&1
    rc=$?
    check "old order on a terminal: exit 2 (got $rc)" [ "$rc" -eq 2 ]
    check "old order on a terminal: explained" grep -q "no hypothesis: standard input is a terminal; the order is sacreBLEU's" "$tmp/tty"
fi

# ---- help, usage errors (exit 2), input errors (exit 1) ----
run --help
check "--help: exit 0" [ "$rc" -eq 0 ]
check "--help: usage on stdout" has_out "Usage: nmt bleu [options] REF [REF...] < HYP"
run --frobnicate -i hyps/perturbed.fr refs/ref.fr
check "unknown option: exit 2" [ "$rc" -eq 2 ]
check "unknown option: message" has_err "nmt bleu: error: unknown option '--frobnicate'"
run --widht 2 -i hyps/perturbed.fr refs/ref.fr
check "misspelt option: the closest one suggested" has_err "unknown option '--widht'; did you mean --width?"
run --lowercase=1 -i hyps/perturbed.fr refs/ref.fr
check "a flag given a value: exit 2" [ "$rc" -eq 2 ]
check "a flag given a value: message" has_err "nmt bleu: error: --lowercase takes no value"
run --tokenize zh -i hyps/perturbed.fr refs/ref.fr
check "bad --tokenize: exit 2" [ "$rc" -eq 2 ]
check "bad --tokenize: message" has_err "--tokenize 'zh': expected 13a, intl or none"
run --tokenize
check "--tokenize without value: exit 2" [ "$rc" -eq 2 ]
run -w x -i hyps/perturbed.fr refs/ref.fr
check "bad --width: exit 2" [ "$rc" -eq 2 ]
check "bad --width: message" has_err "-w 'x': not an integer"
run -w 18 -i hyps/perturbed.fr refs/ref.fr
check "--width out of range: message" has_err "-w 18: out of range [0, 17]"
run --smooth-method laplace -i hyps/perturbed.fr refs/ref.fr
check "bad --smooth-method: exit 2" [ "$rc" -eq 2 ]
# -m lists: sacreBLEU's `-m bleu chrf ter`; the list ends at the next option or at the first
# argument that is no metric name; a mistyped name is refused by name, not read as a REF
run -m bleu ter -b -i hyps/perturbed.fr refs/ref.fr
check "-m bleu ter: both, in that order (exit $rc)" out_is "50.8636
24.3038"
run -m bleu chrf ter -b -i hyps/perturbed.fr refs/ref.fr
check "-m bleu chrf ter: three scores" out_is "50.8636
70.7764
24.3038"
run -m ter bleu -b -i hyps/perturbed.fr refs/ref.fr
check "-m ter bleu: sacreBLEU prints them in -m's order" out_is "24.3038
50.8636"
run -m bleu,ter -b -i hyps/perturbed.fr refs/ref.fr
check "-m bleu,ter" out_is "50.8636
24.3038"
runin hyps/perturbed.fr -m chrf ter refs/ref.fr -b
check "-m chrf ter REF: the list ends at the REF" rc_is 0 out_is "70.7764
24.3038"
runin hyps/perturbed.fr -m ter -b refs/ref.fr
check "-m ter -b REF: the list ends at the option" rc_is 0 out_is "24.3038"
run -m bleu chrf ter --chrf -b -i hyps/perturbed.fr refs/ref.fr
check "-m bleu chrf ter --chrf: each once" out_is "50.8636
70.7764
24.3038"
run -m bleu ter bleu -b -i hyps/perturbed.fr refs/ref.fr
check "-m bleu ter bleu: each once, where first named" rc_is 0 out_is "50.8636
24.3038"
run -m bleux -i hyps/perturbed.fr refs/ref.fr
check "-m bleux: exit 2" [ "$rc" -eq 2 ]
check "-m bleux: message" has_err "nmt bleu: error: -m 'bleux': unknown metric: expected bleu, chrf or ter"
run -m bleu chrf2 -i hyps/perturbed.fr refs/ref.fr
check "-m bleu chrf2: exit 2, not a missing REF" [ "$rc" -eq 2 ]
check "-m bleu chrf2: message" has_err "-m 'chrf2': unknown metric, and no file of that name: expected bleu, chrf or ter (chrF++ is -m chrf --chrf-word-order 2)"
run -m bleu TER -i hyps/perturbed.fr refs/ref.fr
check "-m bleu TER (sacreBLEU's names are lowercase): exit 2" rc_is 2 has_err "-m 'TER': unknown metric"
run --metrics=bleu,chrf++ -i hyps/perturbed.fr refs/ref.fr
check "--metrics=bleu,chrf++: exit 2" rc_is 2 has_err "--metrics 'bleu,chrf++': unknown metric"
run -m bleu "$tmp/no-such-ref" -i hyps/perturbed.fr
check "-m bleu PATH: a path is a REF (here missing: exit 1)" rc_is 1 has_err "no-such-ref: No such file"
run -m bleu --chrf-word-order 2 -i hyps/perturbed.fr refs/ref.fr
check "--chrf-word-order without chrF: refused" rc_is 2 has_err "--chrf-word-order goes with -m chrf"
run --ter-normalized -i hyps/perturbed.fr refs/ref.fr
check "--ter-normalized without TER: refused" rc_is 2 has_err "the --ter-* options go with -m ter"
run -m chrf --chrf-word-order 7 -i hyps/perturbed.fr refs/ref.fr
check "--chrf-word-order 7: out of range" rc_is 2 has_err "--chrf-word-order 7: out of range [0, 6]"
run refs/ref.fr -i hyps/perturbed.fr hyps/heavy.fr --paired-bs -m bleu ter
check "--paired-bs with TER: refused" rc_is 2 has_err "--paired-bs scores BLEU only"
run -i hyps/perturbed.fr
check "no REF: exit 2" [ "$rc" -eq 2 ]
check "no REF: message" has_err "expected at least one REF"
run -i hyps/perturbed.fr -
check "REF from stdin: exit 2" [ "$rc" -eq 2 ]
run --sentence -f json -i hyps/perturbed.fr refs/ref.fr
check "--sentence with json: exit 2" [ "$rc" -eq 2 ]
run -i hyps/perturbed.fr "$tmp/no such file"
check "missing file: exit 1" [ "$rc" -eq 1 ]
check "missing file: message" has_err "nmt bleu: error: $tmp/no such file: No such file or directory"
run -i hyps/perturbed.fr refs/ref.first20.fr
check "line counts differ: exit 1" [ "$rc" -eq 1 ]
check "line counts differ: names both files and counts" has_err "nmt bleu: error: hyps/perturbed.fr has 1000 lines but refs/ref.first20.fr has 20"
run -i hyps/caption1.en refs/ref.caption2.en refs/ref.first20.fr
check "second REF's line count differs: exit 1" [ "$rc" -eq 1 ]
check "second REF's line count differs: message" has_err "hyps/caption1.en has 1000 lines but refs/ref.first20.fr has 20"
printf 'good line\nbad \377 line\n' >"$tmp/bad.txt"
printf 'good line\nbad line\n' >"$tmp/ref.txt"
run -i "$tmp/bad.txt" "$tmp/ref.txt"
check "invalid UTF-8: exit 1" [ "$rc" -eq 1 ]
check "invalid UTF-8: file:line" has_err "nmt bleu: error: $tmp/bad.txt:2: invalid UTF-8 at byte 5 of the line"
run -i "$tmp/ref.txt" "$tmp/bad.txt"
check "invalid UTF-8 in REF: file:line" has_err "$tmp/bad.txt:2: invalid UTF-8"
: >"$tmp/empty.txt"
run -i "$tmp/empty.txt" "$tmp/empty.txt"
check "empty HYP file: exit 1" [ "$rc" -eq 1 ]
check "empty HYP file: message" has_err "has no lines to score"
run -i "$tmp" refs/ref.fr
check "a directory as HYP: exit 1" [ "$rc" -eq 1 ]
if [ -w /dev/full ]; then
    "$bin" bleu -i hyps/perturbed.fr refs/ref.fr >/dev/full 2>/dev/null
    rc=$?
    check "full disk on stdout: exit 1" [ "$rc" -eq 1 ]
fi

# --paired-bs (sacreBLEU's syntax: REF -i BASELINE SYS...): the baseline's BLEU is what nmt bleu
# gives it alone, a system against itself has p = 1, a far worse one p = 1/1001 (no resample
# narrows the gap), starred; the statistics themselves are test_bootstrap's
run refs/ref.fr -i hyps/perturbed.fr hyps/perturbed.fr hyps/heavy.fr --paired-bs
check "--paired-bs: exit 0" [ "$rc" -eq 0 ]
check "--paired-bs: the baseline's BLEU" has_out "Baseline: hyps/perturbed.fr	BLEU 50.8636 (mean "
check "--paired-bs: a system against itself" has_out "(p = 1.0000)"
check "--paired-bs: a far worse system" has_out "hyps/heavy.fr	BLEU 7.4275 (mean 7.4203 +- 0.7071) (p = 0.0010) *"
check "--paired-bs: the signature and resamples" has_out "version:nmt-$("$bin" --version | sed 's/^nmt //'), paired bootstrap: 1000 resamples, seed 12345"
run refs/ref.fr -i hyps/perturbed.fr --paired-bs
check "--paired-bs with one system: exit 2" [ "$rc" -eq 2 ]
check "--paired-bs with one system: message" has_err "--paired-bs compares systems with a baseline"
run refs/ref.fr -i hyps/perturbed.fr hyps/heavy.fr --paired-bs --chrf
check "--paired-bs with chrF: refused" has_err "--paired-bs scores BLEU only"
run -i hyps/perturbed.fr refs/ref.fr --paired-bs-n 100
check "--paired-bs-n alone: refused" has_err "--paired-bs-n goes with --paired-bs"
run refs/ref.fr -i hyps/perturbed.fr hyps/reversed20.fr --paired-bs
check "--paired-bs, a system of other length: exit 1" [ "$rc" -eq 1 ]
check "--paired-bs, a system of other length: message" has_err "has 1000 lines but hyps/reversed20.fr has 20"

echo "bleu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
