#!/bin/sh
# kernels.sh: every test that compares two code paths or two batch compositions (a sentence alone
# and in a batch, hints beside plain sentences, Python or the server against the program, low
# precision against FP32, forced decoding against the search) once more under each kernel set
# this CPU can run besides the one the suite has just used: OpenBLAS's Haswell, Zen, SkylakeX and
# Cooperlake (OPENBLAS_CORETYPE), and oneDNN's products (NMT_GEMM=onednn). Their products round a
# row otherwise with the rows beside it, so a test that passes under one set proves nothing of
# the machine a user has (AMD Zen and AVX2-only Intel get Haswell's or Zen's kernels). A set
# whose products have the bits of one already run (test_backend --fingerprint) is skipped.
# Which tests is what each says of itself, in a header line "kernel sets: all" (rerun), "quick"
# (rerun with --quick) or "one" (not rerun, with its reason). A C test that decodes (search,
# sampling, forced decoding, the public translate, score and align, the low-precision products)
# and says none of these fails this case: a new test is sorted when it is written.
# With --quick (sanitizer builds): the C tests, under one set.
# Then, on a CPU with AVX512_VNNI, the int8 tests once more as an AVX2 machine runs them (oneDNN
# held to AVX2: int8 in its u8 form), beside OpenBLAS's Haswell kernels.
. tests/cli/lib.sh
dir=${NMT_TEST_DIR:-build/tests}
quick=0
[ "${1:-}" = --quick ] && quick=1
tag() { sed -n 's,^\(/\*\|#\) kernel sets: \([a-z]*\).*,\2,p' "$1" | head -n 1; }

# the rule: a C test that decodes says which
decodes='beam_search_ens|sample_|nmt_translate|nmt_score|nmt_align|forced_logp|infer_step|nmt_decoder|qgemm|gemm_rows'
for f in tests/test_*.c; do
    grep -qE "$decodes" "$f" || continue
    case $(tag "$f") in all | quick | one) ok ;; *) bad "$f decodes but has no 'kernel sets: all|quick|one' line" ;; esac
done

# the tests to rerun: "name kind command"
list() {
    for f in tests/test_*.c; do
        t=$(basename "$f" .c)
        [ -x "$dir/$t" ] || continue
        case $(tag "$f") in
        all) [ $quick = 1 ] && echo "$t $dir/$t --quick" || echo "$t $dir/$t" ;;
        quick) echo "$t $dir/$t --quick" ;;
        esac
    done
    [ $quick = 1 ] && return
    for f in tests/cli/*.sh; do
        [ "$f" = tests/cli/kernels.sh ] && continue # not itself
        [ "$(tag "$f")" = all ] && echo "cli/$(basename "$f" .sh) sh $f"
    done
}

flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { for f in "$@"; do case "$flags " in *" $f "*) ;; *) return 1 ;; esac; done; }
core() { env "$@" OPENBLAS_VERBOSE=2 "$dir/test_backend" 2>&1 | sed -n 's/^Core: //p' | tail -n 1; }
own=$(core)
sets=""
has avx2 fma && sets="Haswell Zen"
has avx512f avx512vl avx512bw avx512dq avx512cd && sets="$sets SkylakeX"
has avx512f avx512vl avx512bw avx512dq avx512_bf16 && sets="$sets Cooperlake"
[ $quick = 1 ] && sets=$(echo "$sets" | cut -d' ' -f1)
# a set: OPENBLAS_CORETYPE=NAME, or onednn (NMT_GEMM; the suite itself ran OpenBLAS's products)
# a set whose products give the bits of one already run (test_backend --fingerprint) is not
# rerun: OpenBLAS's Zen kernels are its Haswell ones
fp() { env "$@" "$dir/test_backend" --fingerprint 2>/dev/null | tail -n 1; }
seen=$(fp)
runs=""
for s in $sets; do
    [ "$s" = "$own" ] && f=$seen || f=$(fp OPENBLAS_CORETYPE=$s)
    eval "fp_$s=\$f" # for the check below
    [ "$s" = "$own" ] && continue
    [ -n "$f" ] || { bad "test_backend --fingerprint under OPENBLAS_CORETYPE=$s printed nothing"; continue; }
    case " $seen " in
    *" $f "*) echo "kernels: $s: the same products as a set already run (fingerprint $f), not rerun" ;;
    *) seen="$seen $f"; runs="$runs $s" ;;
    esac
done
# the fingerprint must tell kernels apart that round differently, or it would skip them (where
# both sets were fingerprinted: an AVX-512 CPU, outside --quick)
if [ -n "${fp_Haswell:-}" ] && [ -n "${fp_SkylakeX:-}" ]; then
    [ "$fp_Haswell" != "$fp_SkylakeX" ] && ok ||
        bad "test_backend --fingerprint gives Haswell's and SkylakeX's products one fingerprint"
fi
[ $quick = 0 ] && [ "${NMT_GEMM:-}" != onednn ] && runs="$runs onednn"
list > "$T/tests"
echo "kernels: $(wc -l < "$T/tests") tests under:$runs (the suite ran ${own:-OpenBLAS's own choice})"

for s in $runs; do
    if [ $s = onednn ]; then envs="NMT_GEMM=onednn"; else
        envs="OPENBLAS_CORETYPE=$s"
        c=$(core "$envs")
        [ "$c" = "$s" ] && ok || { bad "OPENBLAS_CORETYPE=$s ran '$c'"; continue; }
    fi
    while read -r name cmd; do
        # shellcheck disable=SC2086
        out=$(env $envs $cmd 2>&1); rc=$?
        if [ $rc -eq 0 ] && printf '%s\n' "$out" | tail -n 1 | grep -q ' 0 failed$'; then ok; else
            bad "$name under $envs (exit $rc): $(printf '%s\n' "$out" | grep FAIL | head -n 3)"
        fi
    done < "$T/tests"
done

if [ $quick = 0 ] && has avx2 fma avx512_vnni; then
    for t in test_backend_lowp test_decode_lowp; do
        out=$(ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell "$dir/$t" 2>&1); rc=$?
        if [ $rc -eq 0 ] && printf '%s\n' "$out" | tail -n 1 | grep -q ' 0 failed$'; then ok; else
            bad "$t under ONEDNN_MAX_CPU_ISA=AVX2 (exit $rc): $(printf '%s\n' "$out" | grep FAIL | head -n 3)"
        fi
        [ $t = test_backend_lowp ] && { printf '%s\n' "$out" | grep -q 'weights of 31 levels (AVX2)' && ok ||
            bad "test_backend_lowp under ONEDNN_MAX_CPU_ISA=AVX2 did not run int8's AVX2 form"; }
    done
fi
finish kernels
