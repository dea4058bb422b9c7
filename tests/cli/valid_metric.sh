#!/bin/sh
# valid_metric.sh: nmt train --valid-metrics and --keep-best. The BLEU and chrF a validation logs
# are checked against the other road to them: the kept model of that update translated by nmt
# translate and scored by nmt bleu. The kept list is the K best by the first metric, best first,
# its files are those models and no others; the best model is the best BLEU's; a run stopped and
# resumed keeps the same list; bad combinations are refused.
. tests/cli/lib.sh
export OMP_WAIT_POLICY=PASSIVE
D=$NMT_SHARED/data/multi30k/tok
head -n 300 "$D/train.en" > "$T/s"; head -n 300 "$D/train.fr" > "$T/t"
head -n 40 "$D/val.en" > "$T/vs"; head -n 40 "$D/val.fr" > "$T/vt"
SMALL="--emb 16 --hid 16 --att 16 --maxout 8 --vocab 300 --batch 20 --optimizer adam --lr 0.01 --threads 1 --seed 3"
VAL="--valid-src $T/vs --valid-tgt $T/vt --valid-every 3 --valid-beam 3"

# train DIR UPDATES [more options]: a run with BLEU deciding, chrF and perplexity beside it
train() {
    dir=$1 upd=$2; shift 2
    mkdir -p "$dir"
    # shellcheck disable=SC2086
    "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$dir/m.nmt" $SMALL $VAL --valid-metrics bleu chrf ppl \
        --keep-best 2 --max-updates "$upd" "$@" 2> "$dir/err"
}
train "$T/a" 15 --valid-translation-output "$T/a/dev.{U}.txt" && ok || bad "training with --valid-metrics: $(tail -n 3 "$T/a/err")"
grep -q 'BLEU [0-9.]*, chrF [0-9.]*' "$T/a/err" && ok || bad "the [valid] line does not show BLEU and chrF"

# every validation's BLEU and chrF, the log's columns 12 and 13
awk -F'\t' 'NR > 1 { print $1, $12, $13 }' "$T/a/m.nmt.log.tsv" > "$T/scores"
[ "$(wc -l < "$T/scores")" -eq 5 ] && ok || bad "expected 5 validations in the log: $(cat "$T/scores")"
# the kept list: 2 rows best first, each file the model of its update
[ "$(sed 1d "$T/a/m.nmt.best.tsv" | wc -l)" -eq 2 ] && ok || bad "best.tsv: $(cat "$T/a/m.nmt.best.tsv")"
sort -k2,2gr -k1,1n "$T/scores" | head -n 2 | cut -d' ' -f1 > "$T/want"
sed 1d "$T/a/m.nmt.best.tsv" | cut -f2 > "$T/got"
cmp -s "$T/want" "$T/got" && ok || bad "kept updates $(tr '\n' ' ' < "$T/got"), the two best BLEUs are at $(tr '\n' ' ' < "$T/want")"
n=$(find "$T/a" -name 'm.u*.nmt' | wc -l)
[ "$n" -eq 2 ] && ok || bad "$n kept model files, expected 2"
sed 1d "$T/a/m.nmt.best.tsv" | while IFS='	' read -r rank upd score file; do
    [ -s "$file" ] || { echo "rank $rank: no $file"; continue; }
    "$NMT_BIN" translate --model "$file" --beam 3 --threads 1 < "$T/vs" > "$T/hyp.$upd" 2> /dev/null
    b=$("$NMT_BIN" bleu -b -w 4 "$T/vt" < "$T/hyp.$upd")
    c=$("$NMT_BIN" bleu -b -w 4 -m chrf "$T/vt" < "$T/hyp.$upd")
    logged=$(awk -v u="$upd" '$1 == u { print $2, $3 }' "$T/scores")
    [ "$logged" = "$b $c" ] || echo "update $upd: logged BLEU/chrF $logged, nmt translate | nmt bleu gives $b $c"
    [ "$score" = "$b" ] || echo "update $upd: best.tsv says $score, nmt bleu $b"
    # --valid-translation-output: the translations that were scored, those of that update's model
    cmp -s "$T/hyp.$upd" "$T/a/dev.$upd.txt" || echo "update $upd: dev.$upd.txt is not nmt translate's output of its model"
done > "$T/mism"
[ -s "$T/mism" ] && bad "$(cat "$T/mism")" || ok
best=$(sed -n 2p "$T/a/m.nmt.best.tsv" | cut -f4)
cmp -s "$T/a/m.nmt" "$best" && ok || bad "the best model is not the best BLEU's ($best)"

# stopped at update 6 (a validation, so the stop adds none) and resumed: the same log scores, the
# same kept list and files
train "$T/b" 6 && train "$T/b" 15 --resume "$T/b/m.nmt.ckpt" && ok || bad "resumed run: $(tail -n 3 "$T/b/err")"
awk -F'\t' 'NR > 1 { print $1, $12, $13 }' "$T/b/m.nmt.log.tsv" | cmp -s - "$T/scores" && ok || bad "the resumed run's scores differ"
sed 1d "$T/b/m.nmt.best.tsv" | cut -f1-3 > "$T/kb"; sed 1d "$T/a/m.nmt.best.tsv" | cut -f1-3 > "$T/ka"
cmp -s "$T/ka" "$T/kb" && ok || bad "the resumed run keeps $(tr '\n' ' ' < "$T/kb"), the whole run $(tr '\n' ' ' < "$T/ka")"
[ "$(find "$T/b" -name 'm.u*.nmt' | wc -l)" -eq 2 ] && ok || bad "the resumed run left $(find "$T/b" -name 'm.u*.nmt' | wc -l) kept files"

# resumed with a smaller --keep-best: the models below it are removed at the first validation and
# the list rewritten (they stayed on disk, listed nowhere), not at the resume itself: a resume with
# nothing to do changes nothing (it once deleted them, and the checkpoint went on listing them)
train "$T/c" 9 --keep-best 3 && cp "$T/c/m.nmt.best.tsv" "$T/c/list" && train "$T/c" 9 --keep-best 1 --resume "$T/c/m.nmt.ckpt" &&
    [ "$(find "$T/c" -name 'm.u*.nmt' | wc -l)" -eq 3 ] && cmp -s "$T/c/list" "$T/c/m.nmt.best.tsv" && ok ||
    bad "a resume with nothing to do changed the kept models: $(find "$T/c" -name 'm.u*.nmt' | tr '\n' ' ')"
train "$T/c" 15 --keep-best 1 --resume "$T/c/m.nmt.ckpt" && ok || bad "resumed with K 1: $(tail -n 3 "$T/c/err")"
grep -q "keep-best 1, smaller than .*: 2 kept model(s) ranked below it removed" "$T/c/err" && ok || bad "no warning for the models removed: $(grep -i warn "$T/c/err")"
[ "$(find "$T/c" -name 'm.u*.nmt' | wc -l)" -eq 1 ] && [ "$(sed 1d "$T/c/m.nmt.best.tsv" | cut -f1-3)" = "$(sed -n 2p "$T/a/m.nmt.best.tsv" | cut -f1-3)" ] &&
    ok || bad "resumed with K 1 keeps $(find "$T/c" -name 'm.u*.nmt' | tr '\n' ' ')and lists $(sed 1d "$T/c/m.nmt.best.tsv")"
# without --keep-best: the list and its files stay as they are
train "$T/d" 9 --keep-best 3 && cp "$T/d/m.nmt.best.tsv" "$T/d/list" && train "$T/d" 15 --keep-best 0 --resume "$T/d/m.nmt.ckpt" && ok || bad "resumed with K 0"
[ "$(find "$T/d" -name 'm.u*.nmt' | wc -l)" -eq 3 ] && cmp -s "$T/d/list" "$T/d/m.nmt.best.tsv" && ok || bad "resumed with K 0: files or list changed"
# another deciding metric: the old list moves aside at the first model kept (a resume with nothing
# to do moves nothing), and an older list moved aside is never replaced (bleu, ppl, bleu, ppl)
sw() { # DIR UPDATES METRIC
    # shellcheck disable=SC2086
    "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$1/m.nmt" $SMALL $VAL --valid-metrics "$3" --keep-best 1 --max-updates "$2" \
        --resume "$1/m.nmt.ckpt" 2> "$1/err2" || bad "--valid-metrics $3 to $2: $(tail -n 2 "$1/err2")"
}
sw "$T/d" 15 ppl
[ -s "$T/d/m.nmt.best.tsv" ] && [ ! -e "$T/d/m.nmt.best.bleu.tsv" ] && ok || bad "a resume with nothing to do moved the list: $(ls "$T/d")"
sw "$T/d" 18 ppl
cmp -s "$T/d/list" "$T/d/m.nmt.best.bleu.tsv" && [ "$(sed 1d "$T/d/m.nmt.best.tsv" | wc -l)" -eq 1 ] && ok ||
    bad "another metric on resume: $(ls "$T/d") $(tail -n 2 "$T/d/err2")"
sw "$T/d" 21 bleu; sw "$T/d" 24 ppl
cmp -s "$T/d/list" "$T/d/m.nmt.best.bleu.tsv" && [ -s "$T/d/m.nmt.best.ppl.tsv" ] && [ -s "$T/d/m.nmt.best.bleu.2.tsv" ] && ok ||
    bad "metrics switched back and forth: $(ls "$T/d")"
# resumed under another --model: the checkpoint's kept files are not there, so the list leaves them
# out (it once listed, and could have deleted, files of that name)
mkdir -p "$T/g"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/g/m.nmt" $SMALL $VAL --valid-metrics bleu chrf ppl --keep-best 3 --max-updates 15 \
    --resume "$T/c/m.nmt.ckpt" 2> "$T/g/err" && grep -q "1 kept model(s) of the checkpoint's list not on disk" "$T/g/err" &&
    [ "$(find "$T/c" -name 'm.u*.nmt' | wc -l)" -eq 1 ] && ok || bad "resume under another --model: $(grep -i warn "$T/g/err")"

# one file per validation, one line per dev line (a pair skipped as empty: an empty line), even
# with perplexity deciding alone; refused over an input
[ "$(find "$T/a" -name 'dev.*.txt' | wc -l)" -eq 5 ] && ok || bad "expected 5 dev translation files: $(find "$T/a" -name 'dev.*')"
sed '2s/.*//' "$T/vs" > "$T/vs2"
mkdir -p "$T/o"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/o/m.nmt" $SMALL --valid-src "$T/vs2" --valid-tgt "$T/vt" --valid-every 3 \
    --valid-beam 3 --max-updates 3 --valid-translation-output "$T/o/out.e{E}" 2> "$T/o/err"
[ "$(wc -l < "$T/o/out.e1")" -eq "$(wc -l < "$T/vs")" ] && [ -z "$(sed -n 2p "$T/o/out.e1")" ] && [ -n "$(sed -n 3p "$T/o/out.e1")" ] &&
    ok || bad "dev translations with perplexity deciding: $(ls "$T/o") $(tail -n 2 "$T/o/err")"
cp "$T/vt" "$T/vt.keep"
# shellcheck disable=SC2086
expect_fail "dev translations over the dev target" 1 "refusing to overwrite an input" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" \
    --model "$T/o/m2.nmt" $SMALL --valid-src "$T/vs" --valid-tgt "$T/vt" --valid-metrics bleu --valid-translation-output "$T/vt"
cmp -s "$T/vt" "$T/vt.keep" && ok || bad "the dev target was overwritten"
# ... and over an input or a kept model only once {U} is filled in (the template alone was checked):
# a warning, the file left alone, the run going on
cp "$T/vt" "$T/o/ref.3"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/o/m3.nmt" $SMALL --valid-src "$T/vs" --valid-tgt "$T/o/ref.3" --valid-every 3 \
    --valid-beam 3 --max-updates 6 --keep-best 2 --valid-translation-output "$T/o/ref.{U}" 2> "$T/o/err3" &&
    cmp -s "$T/vt" "$T/o/ref.3" && grep -q "translations of update 3 not written: .*refusing to overwrite an input" "$T/o/err3" &&
    [ -s "$T/o/ref.6" ] && ok || bad "dev translations expanded over the dev target: $(grep -i warn "$T/o/err3")"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/o/k.nmt" $SMALL $VAL --max-updates 6 --keep-best 2 \
    --valid-translation-output "$T/o/k.u{U}.nmt" 2> "$T/o/err4" && "$NMT_BIN" translate --model "$T/o/k.u3.nmt" < /dev/null 2> /dev/null &&
    grep -q "not written: .*a kept model" "$T/o/err4" && ok || bad "dev translations expanded over a kept model: $(grep -i warn "$T/o/err4")"
# refused before training: a directory that is not there, a placeholder other than {U} and {E}, no dev set
# shellcheck disable=SC2086
expect_fail "dev translations into a missing directory" 1 "cannot write into .*nodir" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" \
    --model "$T/o/x.nmt" $SMALL $VAL --valid-translation-output "$T/nodir/d.{U}"
# shellcheck disable=SC2086
expect_fail "an unknown placeholder" 1 "\{T\} is not known" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/o/x.nmt" $SMALL $VAL \
    --valid-translation-output "$T/o/d.{U}.{T}"
expect_fail "dev translations without a dev set" 1 "need a dev set" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/o/x.nmt" \
    --valid-translation-output "$T/o/d.{U}"

# perplexity deciding: the best model and the kept list follow the dev NLL
mkdir -p "$T/p"
# shellcheck disable=SC2086
"$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/p/m.nmt" $SMALL $VAL --keep-best 1 --max-updates 9 2> "$T/p/err" && ok || bad "keep-best by ppl"
lowest=$(awk -F'\t' 'NR > 1 { print $6, $1 }' "$T/p/m.nmt.log.tsv" | sort -g | head -n 1 | cut -d' ' -f2)
[ "$(sed -n 2p "$T/p/m.nmt.best.tsv" | cut -f2)" = "$lowest" ] && ok || bad "kept by ppl: $(cat "$T/p/m.nmt.best.tsv"), lowest NLL at $lowest"

# a subword model: its pieces joined into raw text, scored against the raw dev target
R=$NMT_SHARED/data/multi30k
head -n 300 "$R/train.en" > "$T/rs"; head -n 300 "$R/train.fr" > "$T/rt"
head -n 30 "$R/val.en" > "$T/rvs"; head -n 30 "$R/val.fr" > "$T/rvt"
"$NMT_BIN" train --src "$T/rs" --tgt "$T/rt" --valid-src "$T/rvs" --valid-tgt "$T/rvt" --model "$T/sw.nmt" --subwords unigram \
    --subword-vocab 400 --emb 32 --hid 32 --att 32 --maxout 16 --batch 20 --optimizer adam --lr 0.02 --threads 1 --seed 3 \
    --valid-metrics bleu chrf --valid-beam 2 --max-updates 60 --valid-every 60 2> "$T/sw.err" && ok || bad "subword model: $(tail -n 2 "$T/sw.err")"
"$NMT_BIN" translate --model "$T/sw.nmt" --beam 2 --threads 1 < "$T/rvs" > "$T/sw.hyp" 2> /dev/null
b=$("$NMT_BIN" bleu -b -w 4 "$T/rvt" < "$T/sw.hyp") c=$("$NMT_BIN" bleu -b -w 4 -m chrf "$T/rvt" < "$T/sw.hyp")
logged=$(awk -F'\t' 'NR == 2 { print $12, $13 }' "$T/sw.nmt.log.tsv")
[ "$logged" = "$b $c" ] && [ "$b" != 0.0000 ] && ok || bad "subword model: logged BLEU/chrF $logged, nmt translate | nmt bleu $b $c"

# refused
expect_fail "metric without dev set" 1 "need a dev set" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/x.nmt" --valid-metrics bleu
expect_fail "keep-best without dev set" 1 "need a dev set" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/x.nmt" --keep-best 2
expect_fail "unknown metric" 2 "expected ppl, bleu or chrf" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/x.nmt" --valid-metrics meteor
expect_fail "a metric twice" 2 "each metric once" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/x.nmt" --valid-metrics bleu,bleu
finish valid_metric
