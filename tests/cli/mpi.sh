#!/bin/sh
# mpi.sh: `mpirun -np 2 nmt train` (synchronous data parallelism, docs/SCALING.md) against one
# process on the same minibatches: the per-update costs agree within 1e-6 relative (not bit for
# bit: each rank sums its share's gradients, then the ranks' sums are added) and the batch logs
# are the same; two 2-rank runs give the same model file. A rank killed mid-run ends the job with
# a non-zero exit within a bound, the checkpoint stays whole, and --resume from it goes on with 1
# rank (the costs within 1e-6 again) and with 2 (the uninterrupted run's model, bit for bit).
# Ranks started with other options or another corpus are refused at start-up, naming what differs.
# Where this machine lets a test create network namespaces, the 2-rank job also runs as two hosts
# talking TCP over a veth pair, as across machines. Skipped when Open MPI is not installed.
. tests/cli/lib.sh
quick=0; [ "${1:-}" = --quick ] && quick=1 # the sanitizer pass: no second identical run, no two hosts
if ! command -v mpirun > /dev/null 2>&1; then
    echo "mpi: skipped: no mpirun (Open MPI's openmpi-bin is not installed)"
    finish mpi
    exit $?
fi
export OMP_WAIT_POLICY=PASSIVE
case $NMT_BIN in /*) ;; *) NMT_BIN=$(pwd)/$NMT_BIN ;; esac
# Open MPI's own allocations outlive MPI_Finalize: not ours to report under the sanitizer pass (its
# plugins stay loaded and the stacks are unwound in full, so that they can be told from ours)
printf 'leak:libopen-pal\nleak:libopen-rte\nleak:libmpi\nleak:libpmix\nleak:libhwloc\nleak:libevent\nleak:mca_\nleak:libopenblas\n' > "$T/lsan.supp"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$T/lsan.supp:fast_unwind_on_malloc=0"
export OMPI_MCA_mca_base_component_disable_dlclose=1
# root in CI; no single-copy shared memory (containers forbid the ptrace it needs)
MPIRUN="mpirun --oversubscribe --allow-run-as-root --bind-to none --mca btl_vader_single_copy_mechanism none"
D=$NMT_SHARED/data/multi30k/tok
head -n 300 "$D/train.en" > "$T/s"; head -n 300 "$D/train.fr" > "$T/t"
ARGS="--src $T/s --tgt $T/t --emb 16 --hid 16 --att 16 --maxout 8 --vocab 300 --batch 16 --sort-blocks 4
      --threads 1 --seed 3 --log-every 1000 --save-every 10"

# one process, then two ranks twice (the batch log and the cost log are rank 0's)
# shellcheck disable=SC2086
"$NMT_BIN" train $ARGS --max-updates 50 --model "$T/one.nmt" --batch-log "$T/one.bat" --cost-log "$T/one.cost" 2> "$T/one.log"
check "one process" test -s "$T/one.nmt"
runs="a b"; [ $quick = 1 ] && runs=a
for r in $runs; do
    # shellcheck disable=SC2086
    timeout 300 $MPIRUN -np 2 "$NMT_BIN" train $ARGS --max-updates 50 --model "$T/$r.nmt" --batch-log "$T/$r.bat" \
        --cost-log "$T/$r.cost" > "$T/$r.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] && [ -s "$T/$r.nmt" ] && ok || bad "2 ranks ($r): exit $rc: $(tail -n 5 "$T/$r.log")"
done
grep -q "data parallel: 2 ranks" "$T/a.log" && ok || bad "no 'data parallel: 2 ranks' in the summary: $(head -n 5 "$T/a.log")"
[ "$(grep -c "^\[train\] rnnsearch model" "$T/a.log")" -eq 1 ] && ok || bad "the summary is printed by more than rank 0"
grep -q "summing across ranks: .* MB per update" "$T/a.log" && ok || bad "no communication summary at the end"
cmp -s "$T/one.bat" "$T/a.bat" && ok || bad "the 2-rank job's minibatches are not one process's"
# costs: update, cost, gradient norm; the 2-rank ones within 1e-6 relative of one process's
# (the gradient norm, a sum of squares of the differently summed gradients, within 1e-5: it is
# about 7e-7 apart by update 50)
close() { # A B: every update of B is in A, the cost within 1e-6 relative, the norm within 1e-5
    awk 'NR == FNR { c[$1] = $2; g[$1] = $3; next }
         function rel(x, y) { d = x - y; if (d < 0) d = -d; m = x < 0 ? -x : x; return d / (m > 1e-30 ? m : 1e-30) }
         !($1 in c) || rel(c[$1], $2) > 1e-6 || rel(g[$1], $3) > 1e-5 { print "update " $1 ": " c[$1] " " g[$1] " against " $2 " " $3; bad = 1; exit }
         END { exit bad }' "$1" "$2"
}
[ "$(wc -l < "$T/a.cost")" -eq 50 ] && ok || bad "the cost log has $(wc -l < "$T/a.cost") lines, not 50"
out=$(close "$T/one.cost" "$T/a.cost") && ok || bad "2 ranks against one process: $out"
cmp -s "$T/one.cost" "$T/a.cost" && echo "mpi: (the costs are even the same bits)"
[ $quick = 1 ] || { cmp -s "$T/a.nmt" "$T/b.nmt" && ok || bad "two 2-rank runs gave different models"; }

# tied embeddings (the hour preset's): Et is also the softmax layer's weights, whose gradient fills
# every row, so it is summed whole; summing only the minibatch's rows, as for an untied Et, let the
# ranks drift apart until the first checkpoint's agreement check ended the job
TIED="$ARGS --maxout 16 --tied-embeddings"
# shellcheck disable=SC2086
"$NMT_BIN" train $TIED --max-updates 20 --model "$T/t1.nmt" --cost-log "$T/t1.cost" 2> "$T/t1.log"
# shellcheck disable=SC2086
timeout 300 $MPIRUN -np 2 "$NMT_BIN" train $TIED --max-updates 20 --model "$T/t2.nmt" --cost-log "$T/t2.cost" > "$T/t2.log" 2>&1
rc=$?
[ $rc -eq 0 ] && [ "$(wc -l < "$T/t2.cost" 2> /dev/null)" = 20 ] && ok || bad "tied embeddings, 2 ranks: exit $rc: $(tail -n 3 "$T/t2.log")"
out=$(close "$T/t1.cost" "$T/t2.cost") && ok || bad "tied embeddings, 2 ranks against one process: $out"

# kill -9 rank 1 two updates after the first checkpoint (rank 0's cost log is flushed each update):
# the job ends non-zero, soon
rank_pid() { # mpirun's pid, rank: the pid of that rank's process
    for p in $(ps -o pid= --ppid "$1"); do
        tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && echo "$p" && return
    done
}
# shellcheck disable=SC2086
$MPIRUN -np 2 "$NMT_BIN" train $ARGS --max-updates 1000000 --model "$T/k.nmt" --cost-log "$T/k.cost" > "$T/k.log" 2>&1 &
mp=$!
# rank 1's pid first: looking it up after the 12th update let the job run on past update 50 on
# an idle machine (the tiny model's updates take about a millisecond)
i=0 victim=
while [ -z "$victim" ] && kill -0 $mp 2> /dev/null && [ $i -lt 3000 ]; do victim=$(rank_pid $mp 1); sleep 0.01; i=$((i + 1)); done
i=0
while [ "$(cat "$T/k.cost" 2> /dev/null | wc -l)" -lt 12 ] && kill -0 $mp 2> /dev/null && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
if [ -n "$victim" ]; then
    t0=$(date +%s)
    kill -KILL "$victim"
    # a bound, not a speed: a job that hangs is killed by the watchdog. Its sleep is killed with
    # it and holds no output: a sleep left holding the runner's pipe kept the test 100 s longer
    ( sleep 120 & z=$!; trap 'kill $z; exit 0' TERM; wait $z; kill -KILL $mp ) > /dev/null 2>&1 & dog=$!
    wait $mp; rc=$?
    kill $dog 2> /dev/null
    secs=$(($(date +%s) - t0))
    [ $rc -ne 0 ] && [ $secs -lt 120 ] && ok || bad "killed rank: mpirun exit $rc after $secs s (expected non-zero within 120 s)"
    echo "mpi: the job ended $secs s after rank 1 was killed (exit $rc)"
else
    kill $mp 2> /dev/null; wait $mp
    bad "rank 1's process not found under mpirun (pid $mp): $(tail -n 3 "$T/k.log")"
fi
cp "$T/k.nmt.ckpt" "$T/k1.ckpt"; cp "$T/k.nmt.ckpt" "$T/k2.ckpt"
at=$(grep -ao 'train_state":"{\\"update\\":[0-9]*' "$T/k1.ckpt" | grep -o '[0-9]*$')
# a periodic checkpoint (every 10), or the one rank 0 writes at an update's end when mpirun passes
# it SIGTERM after the kill (under load the kill may come dozens of updates after the 12th)
[ -n "$at" ] && [ "$at" -ge 10 ] && [ "$at" -lt 50 ] && ok || bad "the checkpoint is at update ${at:-none}: expected 10 to 49 (make the run longer?)"
# shellcheck disable=SC2086
"$NMT_BIN" train $ARGS --max-updates 50 --model "$T/r1.nmt" --resume "$T/k1.ckpt" --cost-log "$T/r1.cost" 2> "$T/r1.log"
rc=$?
[ $rc -eq 0 ] && [ -s "$T/r1.nmt" ] && ok || bad "resumed with 1 process: exit $rc: $(tail -n 2 "$T/r1.log")"
[ "$(wc -l < "$T/r1.cost")" -eq $((50 - ${at:-0})) ] && ok || bad "resumed with 1 process: $(wc -l < "$T/r1.cost") updates, expected $((50 - ${at:-0}))"
out=$(close "$T/a.cost" "$T/r1.cost") && ok || bad "resumed with 1 process against the uninterrupted 2 ranks: $out"
# shellcheck disable=SC2086
timeout 300 $MPIRUN -np 2 "$NMT_BIN" train $ARGS --max-updates 50 --model "$T/r2.nmt" --resume "$T/k2.ckpt" > "$T/r2.log" 2>&1
rc=$?
[ $rc -eq 0 ] && [ -s "$T/r2.nmt" ] && ok || bad "resumed with 2 ranks: exit $rc: $(tail -n 5 "$T/r2.log")"
cmp -s "$T/a.nmt" "$T/r2.nmt" && ok || bad "resumed with 2 ranks: the model differs from the uninterrupted 2-rank run's"

# Nothing rank-specific in a checkpoint, dropout included (each rank's masks come from a stream
# drawn from the checkpointed one): 20 updates, then resumed to 30, is the 30-update run's model
# (the maxout output's dropout; and the embeddings' and recurrent states' alone, in minibatches of
# 15, whose shares of 8 and 7 sentences draw different numbers of per-sentence masks)
kinds="out var"; [ $quick = 1 ] && kinds="" # the sanitizer pass: the paths the run above took
for kind in $kinds; do
    DROP="$ARGS --dropout 0.3"
    [ $kind = var ] && DROP="$(echo "$ARGS" | sed 's/--batch 16/--batch 15/') --dropout-emb 0.2 --dropout-rnn 0.2"
    for r in d30 d20; do
        # shellcheck disable=SC2086
        timeout 300 $MPIRUN -np 2 "$NMT_BIN" train $DROP --max-updates ${r#d} --model "$T/$kind$r.nmt" > "$T/$kind$r.log" 2>&1
    done
    # shellcheck disable=SC2086
    timeout 300 $MPIRUN -np 2 "$NMT_BIN" train $DROP --max-updates 30 --model "$T/${kind}d20.nmt" --resume "$T/${kind}d20.nmt.ckpt" \
        >> "$T/${kind}d20.log" 2>&1
    [ -s "$T/${kind}d30.nmt" ] && cmp -s "$T/${kind}d30.nmt" "$T/${kind}d20.nmt" && ok ||
        bad "dropout ($kind): 20 updates resumed to 30 differ from 30: $(tail -n 3 "$T/${kind}d20.log")"
done

# ranks given other inputs: refused at start-up, naming what differs
sort "$T/s" > "$T/s2"; sort "$T/t" > "$T/t2"
# shellcheck disable=SC2086
expect_fail "another seed on rank 1" 1 "rank 1's --seed differs from rank 0's" timeout 120 $MPIRUN \
    -np 1 "$NMT_BIN" train $ARGS --model "$T/m.nmt" : -np 1 "$NMT_BIN" train $ARGS --model "$T/m.nmt" --seed 4
# shellcheck disable=SC2046,SC2086
[ $quick = 1 ] || expect_fail "another corpus on rank 1" 1 "rank 1's training corpus .* differs from rank 0's" timeout 120 $MPIRUN \
    -np 1 "$NMT_BIN" train $ARGS --model "$T/m.nmt" : -np 1 "$NMT_BIN" train $(echo $ARGS | sed "s|$T/s |$T/s2 |; s|$T/t |$T/t2 |") --model "$T/m.nmt"
[ ! -e "$T/m.nmt" ] && ok || bad "a refused job wrote a model"
# a model trained on raw text resumes with its own stages, whether a rank gives its text options or not
R=$NMT_SHARED/data/multi30k
head -n 300 "$R/train.en" > "$T/rs"; head -n 300 "$R/train.fr" > "$T/rt"
RAW=$(echo $ARGS | sed "s|$T/s |$T/rs |; s|$T/t |$T/rt |")
# shellcheck disable=SC2086
timeout 300 $MPIRUN -np 2 "$NMT_BIN" train $RAW --tokenize en,fr --lowercase --max-updates 10 --model "$T/w.nmt" > "$T/w.log" 2>&1
# shellcheck disable=SC2086
timeout 300 $MPIRUN -np 1 "$NMT_BIN" train $RAW --max-updates 20 --model "$T/w.nmt" --resume "$T/w.nmt.ckpt" : \
    -np 1 "$NMT_BIN" train $RAW --tokenize en,fr --lowercase --max-updates 20 --model "$T/w.nmt" --resume "$T/w.nmt.ckpt" > "$T/w2.log" 2>&1 &&
    ok || bad "a raw-text model's resume refused where one rank gave its text options: $(grep -m1 error "$T/w2.log")"
# and a subword model with its SentencePiece options (the plain pass: the raw-text case above
# takes the same path through the sanitizer pass)
[ $quick = 1 ] || {
SW=$(echo $RAW | sed 's/--vocab 300//')
# shellcheck disable=SC2086
timeout 300 $MPIRUN -np 2 "$NMT_BIN" train $SW --subwords unigram --subword-vocab 400 --max-updates 10 --model "$T/u.nmt" > "$T/u.log" 2>&1
# shellcheck disable=SC2086
timeout 300 $MPIRUN -np 1 "$NMT_BIN" train $SW --max-updates 20 --model "$T/u.nmt" --resume "$T/u.nmt.ckpt" : \
    -np 1 "$NMT_BIN" train $SW --subwords unigram --subword-vocab 400 --max-updates 20 --model "$T/u.nmt" --resume "$T/u.nmt.ckpt" > "$T/u2.log" 2>&1 &&
    ok || bad "a subword model's resume refused where one rank gave its subword options: $(grep -m1 error "$T/u2.log")"
}

# Two hosts: network namespaces A (where mpirun runs) and B joined by a veth pair; mpirun starts
# B's daemon through an "rsh agent" that enters B (ssh's part across machines), and the ranks
# talk TCP only. The model must be the 2-rank run's over shared memory, bit for bit.
NS="nmtmpi$$"
two_hosts() {
    if [ "$(id -u)" -ne 0 ]; then echo "mpi: two hosts over TCP: skipped: network namespaces need root"; return; fi
    if ! ip netns add "${NS}a" 2> "$T/ns.err"; then
        echo "mpi: two hosts over TCP: skipped: this machine does not let a test create network namespaces ($(head -c 200 "$T/ns.err"))"
        return
    fi
    trap 'ip netns del "${NS}a" 2> /dev/null; ip netns del "${NS}b" 2> /dev/null; rm -rf "$T"' EXIT
    if ! { ip netns add "${NS}b" && ip link add "${NS}x" type veth peer name "${NS}y" &&
           ip link set "${NS}x" netns "${NS}a" && ip link set "${NS}y" netns "${NS}b" &&
           ip -n "${NS}a" addr add 10.213.7.1/24 dev "${NS}x" && ip -n "${NS}b" addr add 10.213.7.2/24 dev "${NS}y" &&
           ip -n "${NS}a" link set "${NS}x" up && ip -n "${NS}b" link set "${NS}y" up &&
           ip -n "${NS}a" link set lo up && ip -n "${NS}b" link set lo up; } 2> "$T/ns.err"; then
        echo "mpi: two hosts over TCP: skipped: namespaces, but no veth pair between them ($(head -c 200 "$T/ns.err"))"
        return
    fi
    printf '#!/bin/sh\n# mpirun HOST COMMAND...: run COMMAND on "host" B\nshift\nexec ip netns exec %s sh -c "$*"\n' "${NS}b" > "$T/agent"
    chmod +x "$T/agent"
    # shellcheck disable=SC2086
    timeout 300 ip netns exec "${NS}a" $MPIRUN --host 10.213.7.1,10.213.7.2 -np 2 --mca plm_rsh_agent "$T/agent" \
        --mca btl self,tcp --mca btl_tcp_if_include 10.213.7.0/24 --mca oob_tcp_if_include 10.213.7.0/24 \
        -x OMP_WAIT_POLICY -x LSAN_OPTIONS -x OMPI_MCA_mca_base_component_disable_dlclose \
        "$NMT_BIN" train $ARGS --max-updates 50 --model "$T/h.nmt" > "$T/h.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] && [ -s "$T/h.nmt" ] && ok || bad "two hosts over TCP: exit $rc: $(tail -n 5 "$T/h.log")"
    cmp -s "$T/a.nmt" "$T/h.nmt" && ok || bad "two hosts over TCP: the model differs from the 2-rank run over shared memory"
}
if [ $quick = 1 ]; then echo "mpi: two hosts over TCP: skipped in the sanitizer pass (the plain pass runs it)"; else two_hosts; fi
finish mpi
