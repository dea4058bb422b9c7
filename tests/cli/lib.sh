# lib.sh: helpers for the shell tests in tests/cli (sourced, not run). Each case is one check;
# `finish NAME` prints "NAME: P passed, F failed" and sets the exit status.
NMT_BIN=${NMT_BIN:-bin/nmt}
NMT_SHARED=${NMT_SHARED:-../shared}
pass=0; fail=0
T=$(mktemp -d "${TMPDIR:-/tmp}/nmt-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*" >&2; }

# expect_fail NAME EXIT_CODE PATTERN command...: the command exits with EXIT_CODE and its
# stderr matches the grep -E PATTERN.
expect_fail() {
    name=$1 code=$2 pat=$3; shift 3
    "$@" > "$T/out" 2> "$T/err"; rc=$?
    if [ "$rc" -ne "$code" ]; then bad "$name: exit $rc, expected $code; stderr: $(head -c 300 "$T/err")"; return; fi
    if ! grep -Eq -- "$pat" "$T/err"; then bad "$name: stderr does not match /$pat/: $(head -c 300 "$T/err")"; return; fi
    ok
}

# check NAME command...: the command succeeds.
check() {
    name=$1; shift
    if "$@"; then ok; else bad "$name"; fi
}

# model NAME OUT: a model of one of the recipes below, copied to OUT. Trained once per run of the
# suite, by the first case that asks, into NMT_FIXTURES (tests/run.sh empties it at each run); a
# case run alone trains its own under $T. Each recipe is the first 400 pairs of Multi30k
# (tokenized), vocabularies of 300, batches of 20, Adam at 0.01, one thread:
#   tiny      RNNsearch, 16-dim (maxout 8), 150 updates
#   tiny-enc  the same as RNNencdec
#   tiny600   tiny after 600 updates (fewer leave a model that answers "." to everything)
#   small600  32-dim (maxout 16) after 600 updates, on OpenBLAS's products whatever NMT_GEMM the
#             environment holds (the int8 agreement lowp.sh counts depends on the model)
#   tf600     a Transformer: d 32, 2 + 2 layers, 4 heads, feed-forward 64, 600 updates (pre-norm,
#             sinusoids, tied output, as the defaults)
model() {
    fx_dir=${NMT_FIXTURES:-$T/fixtures}
    if [ ! -s "$fx_dir/$1.nmt" ]; then
        case $1 in
            tiny) fx_args="--emb 16 --hid 16 --att 16 --maxout 8 --max-updates 150" ;;
            tiny-enc) fx_args="--emb 16 --hid 16 --att 16 --maxout 8 --max-updates 150 --arch rnnenc" ;;
            tiny600) fx_args="--emb 16 --hid 16 --att 16 --maxout 8 --max-updates 600" ;;
            small600) fx_args="--emb 32 --hid 32 --att 32 --maxout 16 --max-updates 600" ;;
            tf600) fx_args="--arch transformer --dim-model 32 --enc-depth 2 --dec-depth 2 --heads 4 --dim-ffn 64
                            --max-updates 600" ;;
            *) echo "model: no recipe '$1'" >&2; return 1 ;;
        esac
        mkdir -p "$fx_dir"
        fx_tmp=$(mktemp -d "$fx_dir/$1.XXXXXX")
        head -n 400 "$NMT_SHARED/data/multi30k/tok/train.en" > "$fx_tmp/s"
        head -n 400 "$NMT_SHARED/data/multi30k/tok/train.fr" > "$fx_tmp/t"
        fx_env=OMP_WAIT_POLICY=PASSIVE; [ "$1" = small600 ] && fx_env="$fx_env NMT_GEMM=openblas"
        # shellcheck disable=SC2086
        if env $fx_env "$NMT_BIN" train --src "$fx_tmp/s" --tgt "$fx_tmp/t" --model "$fx_tmp/m.nmt" \
            $fx_args --vocab 300 --batch 20 --threads 1 --optimizer adam --lr 0.01 2> "$fx_tmp/train.log"; then
            mv "$fx_tmp/m.nmt" "$fx_dir/$1.nmt" # whole or not at all: a case run beside may be reading
        else
            echo "model $1: training failed: $(tail -n 3 "$fx_tmp/train.log")" >&2
        fi
        rm -rf "$fx_tmp"
    fi
    cp "$fx_dir/$1.nmt" "$2"
}

finish() {
    echo "$1: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
