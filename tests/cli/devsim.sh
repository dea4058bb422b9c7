#!/bin/sh
# devsim.sh: the model's paths on the simulated device (NMT_DEVICE=devsim: memory the host cannot
# touch, every kernel argument checked) give the CPU's results byte for byte: training of every
# architecture (dropout, label smoothing, tied embeddings, FertDec's costs, BLEU validation),
# checkpoints and resuming, averaging, beam search with n-best lists and attention, prefixes and
# constraints, sampling, a lexical shortlist, int8 decoding, ensembles, forced scoring and alignment; and every kernel of
# test_backend. A layer that reads model memory on the host
# crashes here, and one whose copies lose or reorder data differs.
. tests/cli/lib.sh
D=$NMT_SHARED/data/multi30k/tok
export NMT_BLAS_AUTOTUNE=0
head -n 400 "$D/train.en" > "$T/s.en"; head -n 400 "$D/train.fr" > "$T/s.fr"
head -n 40 "$D/val.en" > "$T/v.en"; head -n 40 "$D/val.fr" > "$T/v.fr"

# same NAME DEV_FILE CPU_FILE
same() { if cmp -s "$2" "$3"; then ok; else bad "$1: $2 and $3 differ"; fi; }

# both NAME ARGS...: the command on the CPU into T/cpu.*, then on devsim into T/dev.*; OUT in the
# arguments stands for the run's prefix
both() {
    name=$1; shift
    for dev in cpu dev; do
        args=$(echo "$*" | sed "s|OUT|$T/$dev|g")
        if [ $dev = dev ]; then NMT_DEVICE=devsim $args > "$T/$dev.stdout" 2> "$T/$dev.stderr"
        else $args > "$T/$dev.stdout" 2> "$T/$dev.stderr"; fi
        rc=$?
        if [ $rc -ne 0 ]; then bad "$name on $dev: exit $rc: $(grep -m2 -E 'devsim|error' "$T/$dev.stderr")"; return 1; fi
    done
    ok
}

TRAIN="$NMT_BIN train --src $T/s.en --tgt $T/s.fr --valid-src $T/v.en --valid-tgt $T/v.fr --emb 16 --hid 16 --att 16 \
 --maxout 16 --vocab 300 --batch 16 --threads 2 --seed 5"
ARCHS="rnnsearch rnnenc recatt inputfeed markov locfer fertdec recatt+fertdec"
[ "${1:-}" = --quick ] && ARCHS="rnnsearch rnnenc markov locfer recatt+fertdec" # the sanitizer pass
for a in $ARCHS; do
    f=$(echo $a | tr + _)
    both "train $a" $TRAIN --arch $a --model OUT.$f.nmt --cost-log OUT.$f.cost --max-updates 12 --valid-every 6 \
        --dropout 0.3 --dropout-emb 0.1 --dropout-rnn 0.1 --label-smoothing 0.1 --optimizer adadelta &&
    { same "$a model" "$T/dev.$f.nmt" "$T/cpu.$f.nmt"; same "$a costs" "$T/dev.$f.cost" "$T/cpu.$f.cost"; }
done
# Adam, tied embeddings, BLEU validation (beam search inside training), then resumed from the checkpoint
both "train tied" $TRAIN --model OUT.t.nmt --cost-log OUT.t.cost --max-updates 10 --save-every 5 --valid-every 5 \
    --tied-embeddings --optimizer adam --valid-metrics bleu --valid-beam 3 &&
    { same "tied model" "$T/dev.t.nmt" "$T/cpu.t.nmt"; same "tied costs" "$T/dev.t.cost" "$T/cpu.t.cost"; }
both "resume" $TRAIN --model OUT.t.nmt --resume OUT.t.nmt.ckpt --cost-log OUT.r.cost --max-updates 16 \
    --tied-embeddings --optimizer adam --valid-metrics bleu --valid-beam 3 &&
    { same "resumed model" "$T/dev.t.nmt" "$T/cpu.t.nmt"; same "resumed costs" "$T/dev.r.cost" "$T/cpu.r.cost"; }
both "average" $NMT_BIN average --out OUT.avg.nmt OUT.rnnsearch.nmt OUT.rnnsearch.nmt.ckpt &&
    same "average" "$T/dev.avg.nmt" "$T/cpu.avg.nmt"

# decoding: NAME and a command line read by sh, OUT standing for the run's prefix; the device by
# its option this time
decode() {
    name=$1
    for dev in cpu devsim; do
        line=$(echo "$2" | sed "s|OUT|$T/cpu|g")
        sh -c "$line --device $dev" > "$T/$dev.stdout" 2> "$T/$dev.stderr" ||
            { bad "$name on $dev: $(grep -m2 -E 'devsim|error' "$T/$dev.stderr")"; return; }
    done
    same "$name" "$T/devsim.stdout" "$T/cpu.stdout"
}
M=OUT.rnnsearch.nmt
for args in "--beam 5 --n-best 3" "--beam 4 --alignment soft" "--beam 3 --alignment hard" "--beam 4 --precision int8" \
            "--model OUT.markov.nmt --weights 2,1 --beam 3 --n-best 2" "--beam 1"; do
    case "$args" in *int8*) $NMT_BIN translate --model "$T/cpu.t.nmt" --precision int8 < /dev/null 2> /dev/null || continue ;; esac
    decode "translate $args" "$NMT_BIN translate --model $M $args < $T/v.en"
done
decode "translate fertdec" "$NMT_BIN translate --model OUT.recatt_fertdec.nmt --beam 4 --n-best 2 < $T/v.en"
# sampling (the draws read the scores back once a step), a lexical shortlist (its columns gathered
# on the device), a tied model's transposed W_o in int8
for args in "--sample --seed 3 --n-best 2 --alignment soft" "--sample --sample-topk 5 --temperature 0.7" \
            "--sample --sample-topp 0.8"; do
    decode "translate $args" "$NMT_BIN translate --model $M $args < $T/v.en"
done
$NMT_BIN lex --src "$T/s.en" --tgt "$T/s.fr" --model "$T/cpu.rnnsearch.nmt" --out "$T/lex.tsv" 2> /dev/null
decode "shortlist" "$NMT_BIN translate --model $M --beam 4 --n-best 2 --shortlist $T/lex.tsv,20 < $T/v.en"
# prefixes and constraint phrases (the scores of the tokens they want gathered on the device)
NMT_BIN=$NMT_BIN sh scripts/terminology.sh "$T/cpu.rnnsearch.nmt" "$T/v.fr" 2 > "$T/v.terms"
awk -F'\t' 'NR % 2 { split($1, w, " "); print w[1]; next } { print "" }' "$T/v.terms" > "$T/v.pfx"
decode "constraints" "$NMT_BIN translate --model $M --beam 4 --n-best 2 --constraints $T/v.terms --prefix $T/v.pfx < $T/v.en"
decode "constraints greedy" "$NMT_BIN translate --model $M --beam 1 --constraints $T/v.terms < $T/v.en"
decode "constraints shortlist" "$NMT_BIN translate --model $M --beam 4 --n-best 2 --constraints $T/v.terms --prefix $T/v.pfx --shortlist $T/lex.tsv,2,2 < $T/v.en"
if $NMT_BIN translate --model "$T/cpu.t.nmt" --precision int8 < /dev/null 2> /dev/null; then
    decode "shortlist int8" "$NMT_BIN translate --model $M --beam 4 --shortlist $T/lex.tsv,20 --precision int8 < $T/v.en"
    decode "tied int8" "$NMT_BIN translate --model OUT.t.nmt --beam 4 --precision int8 < $T/v.en"
fi
# every kernel against its double-precision reference, on the simulated device
case $NMT_BIN in bin/nmt) TB=build/tests ;; *) TB=${NMT_BIN%/bin/nmt}/tests ;; esac
NMT_DEVICE=devsim "$TB/test_backend" > "$T/tb.log" 2>&1 && grep -q ' 0 failed' "$T/tb.log" && ok ||
    bad "test_backend on devsim: $(grep -m3 -E 'FAIL|devsim' "$T/tb.log")"
decode "score" "$NMT_BIN score --model $M --src $T/v.en --tgt $T/v.fr"
decode "align" "$NMT_BIN align --model OUT.locfer.nmt --src $T/v.en --tgt $T/v.fr --format json"

# data-parallel training: two ranks summing through host copies (the plain pass; the sanitizer
# pass runs mpi.sh on the CPU alone)
if [ "${1:-}" != --quick ]; then
    NMT_DEVICE=devsim sh tests/cli/mpi.sh --quick > "$T/mpi.log" 2>&1; rc=$?
    if [ $rc -eq 0 ] && grep -qE '^mpi: [0-9]+ passed, 0 failed' "$T/mpi.log"; then ok
    else bad "mpi.sh on devsim (exit $rc): $(grep -m3 -E 'FAIL|devsim' "$T/mpi.log")"; fi
fi

# the device is chosen by name: a name this build lacks is an error that says which it has, and
# cuda says that it was built without it or that this machine has no CUDA device
expect_fail "unknown device" 2 "NMT_DEVICE: unknown device 'tpu'.*cpu, devsim" env NMT_DEVICE=tpu $NMT_BIN translate --model "$T/cpu.t.nmt"
expect_fail "unknown --device" 2 "--device 'cuda': .*(built without CUDA|no CUDA device: .+)" $NMT_BIN translate --device cuda --model "$T/cpu.t.nmt"
finish devsim
