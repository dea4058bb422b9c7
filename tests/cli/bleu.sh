#!/bin/sh
# bleu.sh: command-line cases for `nmt bleu`. Every sacrebleu command recorded in
# shared/data/bleu/cli_expected.txt is translated to nmt bleu and its output compared with
# sacreBLEU's (the version field aside), then usage and input errors are checked for their
# message and exit status. Env: NMT_BIN (default bin/nmt), NMT_SHARED (default ../shared).
bin=${NMT_BIN:-bin/nmt}
shared=${NMT_SHARED:-../shared}
case $bin in /*) ;; */*) bin=$(pwd)/$bin ;; esac
case $shared in /*) ;; *) shared=$(pwd)/$shared ;; esac
data=$shared/data/bleu
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
set -f # the recorded command lines are split into words, never globbed

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL cli/bleu: $*" >&2; }
check() { # description, condition...
    d=$1; shift
    if "$@"; then ok; else bad "$d"; fi
}

# run ARGS...: nmt bleu ARGS with stdout in $tmp/out, stderr in $tmp/err, status in $rc.
run() {
    "$bin" bleu "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
has_err() { grep -q -F -- "$1" "$tmp/err"; }
has_out() { grep -q -F -- "$1" "$tmp/out"; }
out_is() { [ "$(cat "$tmp/out")" = "$1" ]; }
no_version() { sed -e 's/version:[^"| ]*/version:V/g' -e 's/"version": "[^"]*"/"version": "V"/'; }
out_is_nv() { [ "$(no_version <"$tmp/out")" = "$1" ]; }

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
        # Translate: REFS... -i HYP -m M1 M2 -w N -lc --tokenize T --smooth-method M
        # --smooth-value V --sentence-level.
        set -- $line
        shift
        refs=""; hyp=""; opts=""; metrics=""; sentence=0; unknown=""
        while [ $# -gt 0 ]; do
            case $1 in
                -i) hyp=$2; shift 2 ;;
                -m) shift
                    while [ $# -gt 0 ]; do
                        case $1 in -*) break ;; esac
                        metrics="${metrics:+$metrics,}$1"; shift
                    done
                    opts="$opts --metrics $metrics" ;;
                -w|--tokenize|--smooth-method|--smooth-value) opts="$opts $1 $2"; shift 2 ;;
                -lc) opts="$opts --lowercase"; shift ;;
                --sentence-level) opts="$opts --sentence"; sentence=1; shift ;;
                -*) unknown="$unknown $1"; shift ;;
                *) refs="$refs $1"; shift ;;
            esac
        done
        [ "$sentence" = 1 ] || opts="$opts --format json" # sacreBLEU's default format
        if [ -n "$unknown" ]; then
            bad "case $i: cannot translate '$unknown' in: $line"
            continue
        fi
        (cd "$data" && "$bin" bleu $opts "$hyp" $refs) >"$tmp/got$i" 2>"$tmp/err$i"
        rc=$?
        if [ -n "$limit" ]; then head -n "$limit" "$tmp/got$i" >"$tmp/got$i.h"; mv "$tmp/got$i.h" "$tmp/got$i"; fi
        no_version <"$tmp/got$i" >"$tmp/got$i.n"
        no_version <"$tmp/want$i" >"$tmp/want$i.n"
        if [ "$rc" -eq 0 ] && cmp -s "$tmp/got$i.n" "$tmp/want$i.n"; then
            ok
        else
            bad "as sacreBLEU: nmt bleu$opts $hyp$refs (exit $rc)"
            diff "$tmp/want$i.n" "$tmp/got$i.n" | head -n 10 >&2
            head -n 3 "$tmp/err$i" >&2
        fi
    done
    check "cli_expected.txt has at least 10 cases (found $ncases)" [ "$ncases" -ge 10 ]
fi

# ---- corpus numbers, text output and options ----
cd "$data" 2>/dev/null || { bad "no data folder $data"; echo "bleu: $pass passed, $fail failed"; exit 1; }
run hyps/perturbed.fr refs/ref.fr
check "default text output" out_is_nv "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:V = 50.8636 87.5/62.6/47.6/36.8 (BP = 0.914 ratio = 0.917 hyp_len = 12388 ref_len = 13505)"
check "our version in the signature" has_out "|version:nmt-"
run hyps/perturbed.fr refs/ref.fr -b
check "--score-only" out_is "50.8636"
run -b --chrf -w 2 hyps/perturbed.fr refs/ref.fr
check "--chrf --score-only -w 2: two lines" out_is "50.86
70.78"
run -m chrf hyps/perturbed.cs refs/ref.cs
check "chrF only" has_out "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:"
check "chrF only: score" has_out "= 70.9843"
run --tokenize=intl -b hyps/perturbed.fr refs/ref.fr
check "--tokenize=intl" out_is "53.2894"
run -t none -b hyps/perturbed.fr refs/ref.fr
check "-t none" out_is "49.1234"
run -b hyps/all_empty.fr refs/ref.fr
check "all-empty hypothesis scores 0" out_is "0.0000"
run hyps/all_empty.fr refs/ref.fr
check "all-empty hypothesis: BP 0, ratio 0" has_out "0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 13505)"
run -b --smooth-method add-k hyps/reversed20.fr refs/ref.first20.fr
check "add-k" out_is "3.7215"
run --smooth-method floor --smooth-value 0.1 hyps/reversed20.fr refs/ref.first20.fr
check "floor signature" has_out "smooth:floor[0.10]"
run -b --smooth-method none hyps/reversed20.fr refs/ref.first20.fr
check "no smoothing, no 3-gram match: 0" out_is "0.0000"
run -b -l hyps/lowercased_tok.fr refs/ref.fr
check "--lowercase" out_is "77.6635"
run -b hyps/caption1.en refs/ref.caption2.en refs/ref.caption3.en
check "two references" out_is "11.0870"
run --sentence hyps/perturbed.fr refs/ref.fr
check "--sentence: one line per segment" [ "$rc" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 1000 ]
run --sentence -b hyps/empty_lines.fr refs/ref.fr
check "--sentence: empty line scores 0" [ "$(sed -n 7p "$tmp/out")" = "0.0000" ]
run --sentence -b --chrf hyps/perturbed.fr refs/ref.fr
check "--sentence --chrf: tab-separated" [ "$(sed -n 1p "$tmp/out")" = "$(printf '13.8790\t45.3542')" ]
"$bin" bleu -b - refs/ref.fr <hyps/perturbed.fr >"$tmp/out" 2>"$tmp/err"
check "HYP from standard input" out_is "50.8636"

# Line ends: CR before LF and a missing final newline change nothing (sacreBLEU rstrips).
printf 'a b c d .\r\nx y\r\n' >"$tmp/crlf.txt"
printf 'a b c d .\nx y' >"$tmp/lf.txt"
run -b --chrf "$tmp/crlf.txt" "$tmp/lf.txt"
check "CRLF and no final newline" out_is "100.0000
100.0000"

# ---- help, usage errors (exit 2), input errors (exit 1) ----
run --help
check "--help: exit 0" [ "$rc" -eq 0 ]
check "--help: usage on stdout" has_out "Usage: nmt bleu [options] HYP REF [REF...]"
run --frobnicate hyps/perturbed.fr refs/ref.fr
check "unknown option: exit 2" [ "$rc" -eq 2 ]
check "unknown option: message" has_err "nmt bleu: error: unknown option '--frobnicate'"
run --tokenize zh hyps/perturbed.fr refs/ref.fr
check "bad --tokenize: exit 2" [ "$rc" -eq 2 ]
check "bad --tokenize: message" has_err "--tokenize 'zh': expected 13a, intl or none"
run --tokenize
check "--tokenize without value: exit 2" [ "$rc" -eq 2 ]
run -w x hyps/perturbed.fr refs/ref.fr
check "bad --width: exit 2" [ "$rc" -eq 2 ]
check "bad --width: message" has_err "-w 'x': not an integer"
run --smooth-method laplace hyps/perturbed.fr refs/ref.fr
check "bad --smooth-method: exit 2" [ "$rc" -eq 2 ]
run hyps/perturbed.fr
check "no REF: exit 2" [ "$rc" -eq 2 ]
check "no REF: message" has_err "expected HYP and at least one REF"
run hyps/perturbed.fr -
check "REF from stdin: exit 2" [ "$rc" -eq 2 ]
run --sentence -f json hyps/perturbed.fr refs/ref.fr
check "--sentence with json: exit 2" [ "$rc" -eq 2 ]
run hyps/perturbed.fr "$tmp/no such file"
check "missing file: exit 1" [ "$rc" -eq 1 ]
check "missing file: message" has_err "nmt bleu: error: $tmp/no such file: No such file or directory"
run hyps/perturbed.fr refs/ref.first20.fr
check "line counts differ: exit 1" [ "$rc" -eq 1 ]
check "line counts differ: names both files and counts" has_err "nmt bleu: error: hyps/perturbed.fr has 1000 lines but refs/ref.first20.fr has 20"
run hyps/caption1.en refs/ref.caption2.en refs/ref.first20.fr
check "second REF's line count differs: exit 1" [ "$rc" -eq 1 ]
check "second REF's line count differs: message" has_err "hyps/caption1.en has 1000 lines but refs/ref.first20.fr has 20"
printf 'good line\nbad \377 line\n' >"$tmp/bad.txt"
printf 'good line\nbad line\n' >"$tmp/ref.txt"
run "$tmp/bad.txt" "$tmp/ref.txt"
check "invalid UTF-8: exit 1" [ "$rc" -eq 1 ]
check "invalid UTF-8: file:line" has_err "nmt bleu: error: $tmp/bad.txt:2: invalid UTF-8 at byte 5 of the line"
run "$tmp/ref.txt" "$tmp/bad.txt"
check "invalid UTF-8 in REF: file:line" has_err "$tmp/bad.txt:2: invalid UTF-8"
: >"$tmp/empty.txt"
run "$tmp/empty.txt" "$tmp/empty.txt"
check "empty HYP file: exit 1" [ "$rc" -eq 1 ]
check "empty HYP file: message" has_err "has no lines to score"
run "$tmp" refs/ref.fr
check "a directory as HYP: exit 1" [ "$rc" -eq 1 ]
if [ -w /dev/full ]; then
    "$bin" bleu hyps/perturbed.fr refs/ref.fr >/dev/full 2>/dev/null
    rc=$?
    check "full disk on stdout: exit 1" [ "$rc" -eq 1 ]
fi

echo "bleu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
