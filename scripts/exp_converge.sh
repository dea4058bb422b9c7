#!/bin/sh
# exp_converge.sh: Feng et al. (2016) Tables 1-2 on converged models: each architecture trained
# with the `hour-v1` recipe (`hour` before issue 20's search) until dev perplexity stops
# improving (patience 4, the rate halved on each plateau), three seeds. Stoppable and resumable at any moment: a finished run leaves NAME.done,
# a cut one its checkpoint, which the next call resumes; evaluation rows are written once.
# A finished and evaluated run also leaves its dev curve and row in docs/exp/converge/ (KEEP),
# which is committed: a later session on a fresh machine skips what is there, and the tables in
# docs/RESULTS.md are made from those files alone.
#   scripts/exp_converge.sh DIR train SEED ARCH...   (one queue; run two queues side by side)
#   scripts/exp_converge.sh DIR eval NAME...         (exp_variants.sh's columns, cached per model)
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NMT=${NMT:-$ROOT/bin/nmt}
SHARED=${NMT_SHARED:-$ROOT/../shared}
M=$SHARED/data/multi30k/tok
THREADS=${THREADS:-1}
MAX_EPOCHS=${MAX_EPOCHS:-40}     # a cap far past where the hour recipe plateaus (5-8 epochs)
KEEP=${KEEP:-$ROOT/docs/exp/converge}
export OMP_WAIT_POLICY=PASSIVE
DIR=$1; MODE=$2; shift 2
mkdir -p "$DIR"

# keep NAME: the run's evaluation row, dev curve and wall time into KEEP
keep() {
    mkdir -p "$KEEP"
    "$0" "$DIR" eval "$1" > /dev/null
    cp "$DIR/$1.nmt.log.tsv" "$KEEP/$1.tsv"
    grep "^$1 " "$DIR/runs.txt" > "$KEEP/$1.runs"
    cp "$DIR/$1.row" "$KEEP/$1.row"
}

if [ "$MODE" = train ]; then
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
            --model "$DIR/$n.nmt" --arch "$a" --preset hour-v1 --max-time 0 --max-epochs "$MAX_EPOCHS" \
            --threads "$THREADS" --seed "$SEED" --log-every 200 $resume >> "$DIR/$n.out" 2>> "$DIR/$n.err" || rc=$?
        echo "$n rc=$rc wall_s=$(( $(date +%s) - start )) resumed=${resume:+yes}" >> "$DIR/runs.txt"
        [ "$rc" = 0 ] || exit "$rc"
        date -u +%FT%TZ > "$DIR/$n.done"
        keep "$n"
    done
    exit 0
fi

[ "$MODE" = eval ] || { echo "usage: $0 DIR train SEED ARCH... | $0 DIR eval NAME..." >&2; exit 2; }
for n in "$@"; do
    [ -e "$DIR/$n.done" ] || { echo "$n: not trained to the end yet" >&2; continue; }
    [ -s "$DIR/$n.row" ] || THREADS=$THREADS "$ROOT/scripts/exp_variants.sh" "$DIR" eval "$n" | tail -n 1 > "$DIR/$n.row"
    cat "$DIR/$n.row"
done
