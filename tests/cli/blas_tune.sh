#!/bin/sh
# blas_tune.sh: nmt's choice of the FP32 products' kernels by timing (tools/blas_kernels.c: OpenBLAS's
# kernel sets and oneDNN's matmul), in a cache
# of its own (XDG_CACHE_HOME): the first run times the candidates and writes this CPU's line
# (its vendor, family and model as /proc/cpuinfo gives them) and runs the fastest; a line written
# by hand is then obeyed without timing; a corrupt file (not a cache; a choice that is no
# candidate) is ignored with a warning naming file:line, and rewritten; another CPU's line is
# kept; two commands started together time once; the user's OPENBLAS_CORETYPE wins over the cache; NMT_BLAS_AUTOTUNE=0 neither reads nor
# writes it; a cache that cannot be written is a warning; a choice of oneDNN is obeyed unless the
# user's NMT_GEMM says otherwise, and an NMT_GEMM that names no kernel is refused. Which candidate
# is fastest is never asserted.
. tests/cli/lib.sh
unset OPENBLAS_CORETYPE NMT_GEMM
export NMT_BLAS_AUTOTUNE=1 # tests/run.sh turns it off for the rest of the suite
C=$T/cache F=$T/cache/nmt/blas-kernels
MAGIC='# nmt blas-kernels 1'
# the kernels the final process runs with: the last "Core:" line OpenBLAS prints (a process that
# kept restarting itself is stopped)
core() { env XDG_CACHE_HOME="$C" "$@" OPENBLAS_VERBOSE=2 timeout 120 "$NMT_BIN" --version > /dev/null 2> "$T/err"; sed -n 's/^Core: //p' "$T/err" | tail -n 1; }
timed() { grep -q 'timed once' "$T/err"; }
# the matrix products oneDNN ran in a one-update training (its verbose mode lists each)
head -n 50 "$NMT_SHARED/data/multi30k/tok/train.en" > "$T/s"; head -n 50 "$NMT_SHARED/data/multi30k/tok/train.fr" > "$T/t"
dnnl_products() {
    rm -f "$T/d.nmt" "$T/d.nmt".*
    env XDG_CACHE_HOME="$C" ONEDNN_VERBOSE=1 "$@" timeout 120 "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/d.nmt" \
        --emb 4 --hid 4 --att 4 --maxout 2 --max-updates 1 2> /dev/null | grep -c '^onednn_verbose,exec,cpu,matmul'
}
if ! grep -qw avx2 /proc/cpuinfo; then
    core > /dev/null
    check "nothing to choose without AVX2: no cache" test ! -e "$F"
    finish blas_tune
    exit
fi

# first use: timed, cached, obeyed
c=$(core)
timed && ok || bad "first run did not time the kernels: $(cat "$T/err")"
# the pause is said before it starts: the line comes once, before the candidates' processes
# (each prints its own "Core:" line after the parent's) and before the result
awk '/^Core: / && ++c == 2 { child = NR } /timing the FP32 products/ { k++; say = NR } /timed once/ { done = NR }
    END { exit !(k == 1 && say < done && (!child || say < child)) }' "$T/err" && ok || bad "the timing is not announced first: $(cat "$T/err")"
key=$(sed -n 2p "$F" | cut -f1) best=$(sed -n 2p "$F" | cut -f2)
cpu="$(grep -m1 '^vendor_id' /proc/cpuinfo | sed 's/.*: //') $(grep -m1 '^cpu family' /proc/cpuinfo | sed 's/.*: //') $(grep -m1 '^model[[:space:]]' /proc/cpuinfo | sed 's/.*: //')"
[ "$(head -n 1 "$F" | cut -c1-20)" = "$MAGIC" ] && ok || bad "the cache's first line: $(head -n 1 "$F")"
case "$key" in "$cpu; OpenBLAS "*) ok ;; *) bad "cache key '$key' is not this CPU's ('$cpu')" ;; esac
cands=${key##*; }
own=${cands%% *}
case " $cands " in *" $best "*) ok ;; *) bad "the choice '$best' is not among the candidates '$cands'" ;; esac
case " $cands " in *" oneDNN "*) ok ;; *) bad "oneDNN is not among the candidates '$cands'" ;; esac
if [ "$best" = oneDNN ]; then
    [ "$c" = "$own" ] && ok || bad "oneDNN chosen: OpenBLAS should keep its own kernels ($own), ran with '$c'"
else
    [ "$c" = "$best" ] && ok || bad "ran with '$c', the cache says '$best'"
fi
[ "$(wc -l < "$F")" -eq 2 ] && ok || bad "the cache holds $(wc -l < "$F") lines, expected 2"

# a choice written by hand is obeyed, without timing: a candidate other than OpenBLAS's own
alt=Haswell; [ "$own" = Haswell ] && alt=Zen
printf '%s: hand-written\n%s\t%s\t%s=1.0\n' "$MAGIC" "$key" "$alt" "$alt" > "$F"
cp "$F" "$T/hand"
c=$(core)
[ "$c" = "$alt" ] && ok || bad "cache says $alt, ran with '$c'"
timed && bad "timed again with a valid cache" || ok
grep -q 'timing the FP32 products' "$T/err" && bad "a timing announced with a valid cache" || ok
cmp -s "$F" "$T/hand" && ok || bad "a valid cache was rewritten"
XDG_CACHE_HOME="$C" "$NMT_BIN" blas-kernels > "$T/show" 2>&1
grep -q "^nmt runs    $alt: the fastest in the cache" "$T/show" && ok || bad "nmt blas-kernels: $(cat "$T/show")"
printf '%s\n%s\t%s\t%s=1.0\n' "$MAGIC" "$key" "$own" "$own" > "$F"
c=$(core)
[ "$c" = "$own" ] && ok || bad "cache says $own (OpenBLAS's own), ran with '$c'"

# a cache that says oneDNN: the products are oneDNN's, OpenBLAS keeps its own kernels, and no
# restart; the user's NMT_GEMM=openblas wins over it; NMT_GEMM=onednn needs no cache
printf '%s\n%s\toneDNN\toneDNN=1.0\n' "$MAGIC" "$key" > "$F"
cp "$F" "$T/hand"
c=$(core)
[ "$c" = "$own" ] && ok || bad "cache says oneDNN: OpenBLAS should keep its own kernels ($own), ran with '$c'"
timed && bad "timed again with a valid cache (oneDNN)" || ok
n=$(dnnl_products)
[ "$n" -gt 0 ] && ok || bad "cache says oneDNN: oneDNN ran $n products"
n=$(dnnl_products NMT_GEMM=openblas)
[ "$n" -eq 0 ] && ok || bad "NMT_GEMM=openblas, cache oneDNN: oneDNN ran $n products"
printf '%s\n%s\t%s\t%s=1.0\n' "$MAGIC" "$key" "$alt" "$alt" > "$F"
n=$(dnnl_products)
[ "$n" -eq 0 ] && ok || bad "cache says $alt: oneDNN ran $n products"
n=$(dnnl_products NMT_GEMM=onednn)
[ "$n" -gt 0 ] && ok || bad "NMT_GEMM=onednn, cache $alt: oneDNN ran $n products"
XDG_CACHE_HOME="$C" NMT_GEMM=onednn "$NMT_BIN" blas-kernels > "$T/show" 2>&1
grep -q "^nmt runs    oneDNN: NMT_GEMM=onednn is set" "$T/show" && ok || bad "nmt blas-kernels with NMT_GEMM=onednn: $(cat "$T/show")"
XDG_CACHE_HOME="$C" NMT_GEMM=mkl "$NMT_BIN" --version > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 2 ] && [ ! -s "$T/out" ] && grep -q "NMT_GEMM=mkl: expected openblas or onednn" "$T/err" && ok || bad "NMT_GEMM=mkl: exit $rc, $(cat "$T/out" "$T/err")"
XDG_CACHE_HOME="$C" NMT_GEMM=mkl "$NMT_BIN" blas-kernels > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "NMT_GEMM=mkl: expected openblas or onednn" "$T/err" && ok || bad "nmt blas-kernels, NMT_GEMM=mkl: exit $rc, $(cat "$T/err")"
# with NMT_GEMM=onednn, retiming OpenBLAS's sets times OpenBLAS (its children must not inherit it)
XDG_CACHE_HOME="$T/c2" NMT_GEMM=onednn "$NMT_BIN" blas-kernels --retune > "$T/show" 2> "$T/err"; rc=$?
[ $rc -eq 0 ] && grep '^timed' "$T/show" | grep -qv ' -' && grep -q "^nmt runs    oneDNN: NMT_GEMM=onednn is set" "$T/show" \
    && ok || bad "NMT_GEMM=onednn nmt blas-kernels --retune: exit $rc, $(cat "$T/show" "$T/err")"

# the user's OPENBLAS_CORETYPE wins; NMT_BLAS_AUTOTUNE=0 reads no cache
printf '%s\n%s\t%s\t%s=1.0\n' "$MAGIC" "$key" "$alt" "$alt" > "$F"
c=$(core OPENBLAS_CORETYPE=Prescott)
[ "$c" = Prescott ] && ok || bad "OPENBLAS_CORETYPE=Prescott, cache $alt: ran with '$c'"
c=$(core NMT_BLAS_AUTOTUNE=0)
[ "$c" != "$alt" ] && ok || bad "NMT_BLAS_AUTOTUNE=0 obeyed the cache ($alt)"
rm -f "$F"
core OPENBLAS_CORETYPE=Prescott > /dev/null
core NMT_BLAS_AUTOTUNE=0 > /dev/null
[ ! -e "$F" ] && ok || bad "a cache was written with OPENBLAS_CORETYPE set or NMT_BLAS_AUTOTUNE=0"

# a user's pin below an AVX-512 CPU's kernels is pointed out once at the start of training (it
# cost 1.63x here), unless NMT_BLAS_AUTOTUNE=0 asks nmt to leave the kernels alone
pin_note() { # env...: the note's line count in nmt train's stderr
    env XDG_CACHE_HOME="$C" "$@" "$NMT_BIN" train --src "$T/s" --tgt "$T/t" --model "$T/p.nmt" --emb 4 --hid 4 --att 4 \
        --maxout 2 --max-updates 1 2>&1 | grep -c "note: OPENBLAS_CORETYPE=.* keeps OpenBLAS on AVX2 kernels"
}
if grep -qw avx512f /proc/cpuinfo; then want=1; else want=0; fi
[ "$(pin_note OPENBLAS_CORETYPE=Haswell)" = $want ] && ok || bad "OPENBLAS_CORETYPE=Haswell: the note should appear $want time(s)"
[ "$(pin_note OPENBLAS_CORETYPE=SkylakeX)" = 0 ] && ok || bad "OPENBLAS_CORETYPE=SkylakeX: a note about AVX2 kernels"
[ "$(pin_note OPENBLAS_CORETYPE=Haswell NMT_BLAS_AUTOTUNE=0)" = 0 ] && ok || bad "NMT_BLAS_AUTOTUNE=0: a note about the kernels"

# corrupt files: ignored with a warning naming the line, timed, rewritten
printf 'not a cache\n' > "$F"
c=$(core)
grep -q "blas-kernels:1: not an entry" "$T/err" && ok || bad "no warning for a file that is no cache: $(cat "$T/err")"
timed && [ "$(sed -n 2p "$F" | cut -f1)" = "$key" ] && ok || bad "a corrupt cache was not timed and rewritten: $(cat "$F")"
printf '%s\n%s\tBogus\t%s=1.0\n' "$MAGIC" "$key" "$own" > "$F"
c=$(core)
grep -q "blas-kernels:2: not an entry" "$T/err" && ok || bad "no warning for a choice that is no candidate: $(cat "$T/err")"
[ "$c" != Bogus ] && [ "$(sed -n 2p "$F" | cut -f2)" != Bogus ] && ok || bad "the bad choice was kept"

# another CPU's line is kept when this CPU's is added
other=$(printf 'GenuineIntel 6 999; OpenBLAS 0.0.1; Haswell\tHaswell\tHaswell=1.0')
printf '%s\n%s\n' "$MAGIC" "$other" > "$F"
core > /dev/null
grep -qF "$other" "$F" && grep -q "^$key	" "$F" && ok || bad "another CPU's line lost, or this one's missing: $(cat "$F")"

# two commands started together, no cache: one times, the other waits for its result
rm -f "$F"
for i in 1 2; do XDG_CACHE_HOME="$C" timeout 120 "$NMT_BIN" --version > /dev/null 2> "$T/err$i" & done
wait
[ "$(cat "$T/err1" "$T/err2" | grep -c 'timed once')" -eq 1 ] && ok || bad "two commands started together: $(cat "$T/err1" "$T/err2")"

# a cache that cannot be written: a warning, and the command runs
: > "$T/file"
XDG_CACHE_HOME="$T/file" "$NMT_BIN" --version > "$T/out" 2> "$T/err"
grep -q '^nmt ' "$T/out" && grep -q "cannot write $T/file/nmt/blas-kernels" "$T/err" && ok || bad "unwritable cache: $(cat "$T/out" "$T/err")"
finish blas_tune
