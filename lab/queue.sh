#!/bin/sh
# queue.sh: the open experiments of issues 17, 20, 21 and 23 as two queues, one per core, each
# a list of steps that every experiment script resumes or skips when done (their own outputs, and
# the rows committed under lab/runs/). A session starts both and leaves them running; the next
# session starts them again and they go on where they stopped:
#   nohup lab/queue.sh A /work/exp >> /work/exp/queue-A.log 2>&1 &
#   nohup lab/queue.sh B /work/exp >> /work/exp/queue-B.log 2>&1 &
#   lab/queue.sh list                 the steps, in order
# Every step is a run that fits one session (under an hour at one thread): a run still going when
# a session ends is lost with its machine, and only what a finished run commits survives. The
# wmt_enfr runs of converge_bahdanau.sh (two to three hours each even at two threads) are not
# queued: each needs a session of its own, started at once (lab/JOURNAL.md, issue 21's budget).
# One thread per queue (two trainings at a time is faster overall on 2 cores than one on both);
# OpenBLAS's AVX-512 kernels unless OPENBLAS_CORETYPE is given (lab/JOURNAL.md, "Experiments on
# the faster kernels"). NMT names the binary (default bin/nmt; copy it out of the tree so that a
# rebuild cannot change a queue's program halfway).
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S=$ROOT/lab
export NMT=${NMT:-$ROOT/bin/nmt} NMT_SHARED=${NMT_SHARED:-$ROOT/../shared} THREADS=1
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX} OMP_WAIT_POLICY=PASSIVE
Q=$1; W=${2:-}
HALF_A="rnnsearch rnnenc inputfeed markov"
HALF_B="recatt fertdec recatt+fertdec locfer"

steps() { # queue: one step a line
    case $1 in
    A)  echo "sh $S/preset_search.sh $W/preset base glorot ls vdrop tied all_bleu"
        # RNNsearch's FP32 seeds first, then bf16's three seeds against them: the last open part of
        # issue 23, before the rest of issue 21's half A
        for s in 2 3; do echo "sh $S/converge_feng.sh $W/converge train $s rnnsearch"; done
        echo "sh $S/bf16_convergence.sh $W/bf16 seeds"
        for s in 1 2 3; do echo "sh $S/converge_feng.sh $W/converge train $s $HALF_A"; done ;;
    B)  for s in 1 2 3; do echo "sh $S/converge_feng.sh $W/converge train $s $HALF_B"; done ;;
    esac
}

if [ "$Q" = list ]; then W=DIR; for q in A B; do echo "queue $q:"; steps $q | sed 's/^/  /'; done; exit 0; fi
case $Q in A|B) [ -n "$W" ] ;; *) false ;; esac || { sed -n '2,12p' "$0"; exit 2; }
mkdir -p "$W"
steps "$Q" | while IFS= read -r step; do
    echo "$(date -u +%FT%TZ) queue $Q: $step"
    # a step that fails (a killed run: its checkpoint stays) stops the queue, so that the next
    # start resumes it rather than skipping ahead
    sh -c "$step" < /dev/null || { echo "$(date -u +%FT%TZ) queue $Q: stopped (exit $?)"; exit 1; }
done
