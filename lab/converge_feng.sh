#!/bin/sh
# converge_feng.sh: Feng et al. (2016) Tables 1-2 on converged models: each architecture trained
# with the `hour-v1` recipe (`hour` before issue 20's search) until dev perplexity stops
# improving (patience 4, the rate halved on each plateau), three seeds, at a VOCAB-word shortlist
# per side (default 5,000: small enough that UNKs matter on Multi30k, 1.6% / 1.9% of the training
# tokens; the first two runs, at 10,000, are kept in lab/runs/converge/). Stoppable and resumable
# at any moment: a finished run leaves NAME.done, a cut one its checkpoint, which the next call
# resumes; evaluation rows are written once. A finished and evaluated run also leaves its dev
# curve and row in KEEP (lab/runs/converge-vVOCAB/), which is committed: a later session on a
# fresh machine skips what is there, and the tables in lab/JOURNAL.md are made from those files.
#   lab/converge_feng.sh DIR train SEED ARCH...   (one queue; run two queues side by side)
#   lab/converge_feng.sh DIR eval NAME...         (one row per model, cached)
#   lab/converge_feng.sh DIR table                (KEEP's rows: mean and spread per architecture)
#   lab/converge_feng.sh DIR claims               (Feng et al.'s orderings against the seed spread)
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NMT=${NMT:-$ROOT/bin/nmt}
SHARED=${NMT_SHARED:-$ROOT/../shared}
M=$SHARED/data/multi30k/tok
A=$SHARED/data/alignment/en-fr   # for lib.sh's gold_text and aer_row
export A
THREADS=${THREADS:-1}
MAX_EPOCHS=${MAX_EPOCHS:-40}     # a cap far past where the hour recipe plateaus (5-8 epochs)
VOCAB=${VOCAB:-5000}
if [ "$VOCAB" = 10000 ]; then KEEP=${KEEP:-$ROOT/lab/runs/converge}; else KEEP=${KEEP:-$ROOT/lab/runs/converge-v$VOCAB}; fi
export OMP_WAIT_POLICY=PASSIVE LC_ALL=C.UTF-8
DIR=$1; MODE=$2
[ -n "$DIR" ] && [ -n "$MODE" ] || { sed -n '2,14p' "$0"; exit 2; }
shift 2
. "$ROOT/lab/lib.sh"
mkdir -p "$DIR"

# keep NAME: the run's evaluation row, dev curve and wall time into KEEP
keep() {
    mkdir -p "$KEEP"
    evaluate "$1" > /dev/null
    cp "$DIR/$1.nmt.log.tsv" "$KEEP/$1.tsv"
    grep "^$1 " "$DIR/runs.txt" > "$KEEP/$1.runs"
    cp "$DIR/$1.row" "$KEEP/$1.row"
}

# eval_row NAME: model, best dev ppl, test BLEU, after UNK replacement, <unk> in the output, AER,
# SAER, precision and recall of forced attention on Hansards, then on ALIBI, sentences repeating a
# 3-gram more often than their reference, source words under 0.1 attention. RNNencdec has no
# attention: "-" in its columns.
eval_row() {
    n=$1; m=$DIR/$n.nmt; T=$DIR/eval
    dppl=$(awk -F'\t' 'NR > 1 && $9 == 1 { p = $8 } END { print p }' "$DIR/$n.nmt.log.tsv")
    if grep -q "rnnenc model" "$DIR/$n.err"; then
        "$NMT" translate --model "$m" --beam 12 --threads "$THREADS" < $M/test_2016_flickr.en > "$T/$n.hyp"
        row="$n\t$dppl\t$(bleu_tok "$T/$n.hyp")\t-\t$(grep -o '<unk>' "$T/$n.hyp" | wc -l)\t-\t-\t-\t-\t-\t-\t-\t-\t$(repeats "$T/$n.hyp" $M/test_2016_flickr.fr)\t-"
    else
        "$NMT" translate --model "$m" --beam 12 --threads "$THREADS" --alignment soft < $M/test_2016_flickr.en > "$T/$n.soft"
        sed 's/ ||| .*//' "$T/$n.soft" > "$T/$n.hyp"
        row="$n\t$dppl\t$(bleu_tok "$T/$n.hyp")"
        "$NMT" translate --model "$m" --beam 12 --threads "$THREADS" --unk-replace "$T/ibm.lex" < $M/test_2016_flickr.en > "$T/$n.rep"
        row="$row\t$(bleu_tok "$T/$n.rep")\t$(grep -o '<unk>' "$T/$n.hyp" | wc -l)"
        for g in hansards_naacl2003 alibi_literary; do
            "$NMT" align --model "$m" --src "$T/$g.en" --tgt "$T/$g.fr" --threads "$THREADS" > "$T/$n.$g.att"
            "$NMT" align --model "$m" --src "$T/$g.en" --tgt "$T/$g.fr" --threads "$THREADS" --soft > "$T/$n.$g.soft"
            row="$row\t$(aer_row x $g "$T/$n.$g.att" "$T/$n.$g.soft" | cut -f3-6)"
        done
        row="$row\t$(repeats "$T/$n.hyp" $M/test_2016_flickr.fr)\t$(neglected "$T/$n.soft")"
    fi
    printf '%b\n' "$row"
}
# test BLEU as variants_two_epochs.sh scores it: tokenized, lowercased text, sacreBLEU's number
bleu_tok() { "$NMT" bleu --tokenize none -i "$1" $M/test_2016_flickr.fr | awk '{ for (i = 1; i <= NF; i++) if ($i == "=") { print $(i + 1); exit } }'; }

# the files every evaluation reads, made once; under a lock, as two queues may evaluate at once
eval_setup() {
    T=$DIR/eval; mkdir -p "$T"
    exec 9> "$T/.lock"; flock 9
    ibm_lexicon "$T"   # one UNK-replacement table for every model: only the attention differs
    for g in hansards_naacl2003 alibi_literary; do
        for l in en fr; do [ -s "$T/$g.$l" ] || { gold_text $g $l > "$T/$g.$l.tmp" && mv "$T/$g.$l.tmp" "$T/$g.$l"; }; done
    done
    flock -u 9; exec 9>&-
}

evaluate() {
    eval_setup
    for n in "$@"; do
        [ -e "$DIR/$n.done" ] || { echo "$n: not trained to the end yet" >&2; continue; }
        if [ ! -s "$DIR/$n.row" ]; then
            if [ "$VOCAB" = 10000 ]; then THREADS=$THREADS "$ROOT/lab/variants_two_epochs.sh" "$DIR" eval "$n" | tail -n 1 > "$DIR/$n.row"
            else eval_row "$n" > "$DIR/$n.row.new" && mv "$DIR/$n.row.new" "$DIR/$n.row"; fi
        fi
        cat "$DIR/$n.row"
    done
}

# table: per architecture, the mean and the spread (min-max) over its seeds of each number in KEEP's
# rows (a percentage's % dropped), with the seed count
table() {
    printf 'arch\tseeds\tdev_ppl\tbleu\tbleu_unk_repl\tout_unk\thans_aer\thans_saer\thans_P\thans_R\talibi_aer\talibi_saer\talibi_P\talibi_R\trepeat_sents\tneglected_src\n'
    for f in "$KEEP"/*.row; do [ -s "$f" ] && cat "$f"; done | sed 's/%//g' | awk -F'\t' '
        { a = $1; sub(/_s[0-9]+$/, "", a); if (!(a in n)) order[++na] = a; n[a]++; nc = NF
          for (i = 2; i <= NF; i++) { k = a SUBSEP i; if ($i == "-") { dash[k] = 1; continue }
              sum[k] += $i; if (!(k in lo) || $i < lo[k]) lo[k] = $i; if (!(k in hi) || $i > hi[k]) hi[k] = $i } }
        END { for (j = 1; j <= na; j++) { a = order[j]; printf "%s\t%d", a, n[a]
                for (i = 2; i <= nc; i++) { k = a SUBSEP i
                    if (dash[k] || !(k in sum)) printf "\t-"
                    else if (n[a] == 1) printf "\t%.4g", sum[k]
                    else printf "\t%.4g [%.4g, %.4g]", sum[k] / n[a], lo[k], hi[k] }
                printf "\n" } }'
}

# claims: each ordering Feng et al. (2016) report, Table 1 (BLEU before and after UNK replacement,
# and which model gains most from it), Table 2 (AER and SAER, here on both gold sets) and the
# missing and repeated translation FertDec is for, read against KEEP's rows. An ordering "holds"
# when every seed of the one model is better than every seed of the other, is "reversed" when
# every seed is worse, and is "inside the spread" when their seeds' ranges overlap. The paper's
# numbers are Chinese-English (its own test and gold sets): only the direction carries over.
# Lines: column (field of a row; 16 = the UNK replacement's gain), better model, worse model,
# "hi" or "lo" for which way is better, the paper's two numbers.
CLAIMS='3 recatt rnnsearch hi 28.10 26.65
3 fertdec rnnsearch hi 27.51 26.65
3 recatt_fertdec recatt hi 28.87 28.10
3 recatt_fertdec fertdec hi 28.87 27.51
3 markov rnnsearch hi 27.54 26.65
3 locfer rnnsearch hi 27.05 26.65
3 rnnsearch inputfeed hi 26.65 25.44
3 recatt markov hi 28.10 27.54
3 recatt locfer hi 28.10 27.05
3 rnnsearch rnnenc hi - -
4 recatt rnnsearch hi 33.14 31.02
4 fertdec rnnsearch hi 32.44 31.02
4 recatt_fertdec recatt hi 33.76 33.14
4 rnnsearch inputfeed hi 31.02 29.02
16 recatt rnnsearch hi 5.04 4.37
16 recatt fertdec hi 5.04 4.93
16 recatt markov hi 5.04 4.67
16 recatt locfer hi 5.04 4.63
16 recatt inputfeed hi 5.04 3.58
16 recatt recatt_fertdec hi 5.04 4.89
6 recatt rnnsearch lo 42.51 44.13
6 fertdec rnnsearch lo 42.37 44.13
6 recatt_fertdec rnnsearch lo 42.11 44.13
6 recatt_fertdec recatt lo 42.11 42.51
7 recatt rnnsearch lo 52.88 54.75
7 fertdec rnnsearch lo 52.70 54.75
7 recatt_fertdec rnnsearch lo 52.40 54.75
10 recatt rnnsearch lo 42.51 44.13
10 fertdec rnnsearch lo 42.37 44.13
10 recatt_fertdec rnnsearch lo 42.11 44.13
11 recatt rnnsearch lo 52.88 54.75
11 fertdec rnnsearch lo 52.70 54.75
11 recatt_fertdec rnnsearch lo 52.40 54.75
14 fertdec rnnsearch lo - -
15 fertdec rnnsearch lo - -'
claims() {
    printf 'measure\tbetter\tworse\tpaper\tbetter: mean [min, max] (seeds)\tworse: mean [min, max] (seeds)\tverdict\n'
    for f in "$KEEP"/*.row; do [ -s "$f" ] && cat "$f"; done | sed 's/%//g' | awk -F'\t' -v claims="$CLAIMS" '
        BEGIN { split("- dev_ppl BLEU BLEU_after_UNK_repl out_unk Hansards_AER Hansards_SAER hP hR ALIBI_AER ALIBI_SAER aP aR sentences_repeating_a_3gram source_words_under_0.1 UNK_repl_gain", name, " ") }
        { a = $1; sub(/_s[0-9]+$/, "", a); $16 = ($4 == "-" ? "-" : $4 - $3)
          for (i = 2; i <= 16; i++) { if ($i == "-") continue
              if (i == 6 || i == 7 || i == 10 || i == 11) $i *= 100   # AER and SAER in %, as the paper
              k = a SUBSEP i; n[k]++; sum[k] += $i
              if (!(k in lo) || $i < lo[k]) lo[k] = $i; if (!(k in hi) || $i > hi[k]) hi[k] = $i } }
        function show(k) { return sprintf("%.4g [%.4g, %.4g] (%d)", sum[k] / n[k], lo[k], hi[k], n[k]) }
        END { nc = split(claims, line, "\n")
            for (j = 1; j <= nc; j++) { split(line[j], c, " "); i = c[1]; kb = c[2] SUBSEP i; kw = c[3] SUBSEP i
                paper = c[5] == "-" ? "-" : c[5] " vs " c[6]
                if (!n[kb] || !n[kw]) { printf "%s\t%s\t%s\t%s\t-\t-\tno rows yet\n", name[i], c[2], c[3], paper; continue }
                up = c[4] == "hi"
                if (up ? lo[kb] > hi[kw] : hi[kb] < lo[kw]) v = "holds"
                else if (up ? hi[kb] < lo[kw] : lo[kb] > hi[kw]) v = "reversed"
                else v = "inside the spread"
                if (n[kb] < 2 || n[kw] < 2) v = v " (one seed)"
                printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name[i], c[2], c[3], paper, show(kb), show(kw), v } }'
}

train() {
    SEED=$1; shift
    for a in "$@"; do
        n=$(echo "$a" | tr '+' '_')_s$SEED
        [ -s "$KEEP/$n.row" ] && continue
        resume=""
        [ -s "$DIR/$n.nmt.ckpt" ] && resume="--resume $DIR/$n.nmt.ckpt"
        start=$(date +%s)
        rc=0
        # shellcheck disable=SC2086
        "$NMT" train --src $M/train.en --tgt $M/train.fr --valid-src $M/val.en --valid-tgt $M/val.fr \
            --model "$DIR/$n.nmt" --arch "$a" --preset hour-v1 --vocab "$VOCAB" --max-time 0 --max-epochs "$MAX_EPOCHS" \
            --threads "$THREADS" --seed "$SEED" --log-every 200 $resume >> "$DIR/$n.out" 2>> "$DIR/$n.err" || rc=$?
        echo "$n rc=$rc wall_s=$(( $(date +%s) - start )) resumed=${resume:+yes}" >> "$DIR/runs.txt"
        [ "$rc" = 0 ] || exit "$rc"
        date -u +%FT%TZ > "$DIR/$n.done"
        keep "$n"
    done
}

case "$MODE" in
train) train "$@" ;;
eval) evaluate "$@" ;;
table) table ;;
claims) claims ;;
*) sed -n '2,14p' "$0"; exit 2 ;;
esac
