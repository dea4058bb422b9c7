#!/bin/sh
# converge_bahdanau_extend.sh: issue 21's wmt_enfr models past the 15-epoch cap, for the ones whose dev
# perplexity was still falling there: each resumes from its checkpoint with MAX_EPOCHS (default
# 40) and stops on patience (4 validations without improvement, the rate halved at each), the
# stopping rule then the same for all four. The 15-epoch results stay, as NAME.e15.* in KEEP (and
# the decodings in DIR), and the model's row, curve and decodings are made again.
#   lab/converge_bahdanau_extend.sh DIR NAME...
# Stoppable and resumable as converge_bahdanau.sh: run again, it resumes the cut training.
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KEEP=${KEEP:-$ROOT/lab/runs/lengths}
export MAX_EPOCHS=${MAX_EPOCHS:-40}
DIR=$1
[ -n "$DIR" ] && [ $# -ge 2 ] || { sed -n '2,8p' "$0"; exit 2; }
shift
for n in "$@"; do
    [ -s "$DIR/$n.nmt.ckpt" ] || { echo "$n: no checkpoint in $DIR to go on from" >&2; exit 1; }
    if [ -s "$KEEP/$n.tsv" ] && [ ! -s "$KEEP/$n.e15.tsv" ]; then   # the first time: keep the capped run
        for f in tsv runs bleu; do [ -s "$KEEP/$n.$f" ] && mv "$KEEP/$n.$f" "$KEEP/$n.e15.$f"; done
        for v in all nounk raw; do [ -s "$DIR/$n.$v" ] && mv "$DIR/$n.$v" "$DIR/$n.e15.$v"; done
    fi
    sh "$ROOT/lab/converge_bahdanau.sh" "$DIR" train "$n"
    sh "$ROOT/lab/converge_bahdanau.sh" "$DIR" decode "$n"
done
