#!/bin/sh
# torch_transformer.sh: the Transformer against a PyTorch implementation written apart from the C
# code (bench/torch_transformer.py, from docs/MODEL-MAP.md): loss and every gradient of seven
# configs within 1e-5 relative (float64 on both sides), then three small trained models' greedy
# and beam output token for token. Skipped, and counted as passed, where no python3 imports torch.
. tests/cli/lib.sh
export OMP_WAIT_POLICY=PASSIVE
# Debian's python3-torch lives in /usr/bin/python3's packages; a python3 earlier on PATH (pyenv,
# a virtual environment) may lack it. NMT_TORCH_PYTHON names the one python to try.
PY=""
for p in ${NMT_TORCH_PYTHON:-python3 /usr/bin/python3}; do
    if command -v "$p" > /dev/null 2>&1 && "$p" -c 'import torch' > /dev/null 2>&1; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
    echo "SKIP torch_transformer: no python3 here imports torch (tried ${NMT_TORCH_PYTHON:-python3, /usr/bin/python3}; Debian: apt-get install python3-torch)"
    ok
    finish torch_transformer
    exit
fi
dump=${NMT_TEST_DIR:-build/tests}/test_tf_torch_f64
if [ ! -x "$dump" ]; then
    bad "$dump is needed (make check-tests builds it)"
    finish torch_transformer
    exit
fi

# loss and gradients: the C side dumps, the torch side recomputes and compares (one check each)
mkdir -p "$T/dump"
if NMT_TORCH_DUMP=$T/dump "$dump" > "$T/dump.log" 2>&1; then ok; else bad "the dump: $(tail -n 5 "$T/dump.log")"; fi
"$PY" bench/torch_transformer.py check "$T/dump" > "$T/check.log" 2>&1; rc=$?
line=$(grep '^torch check: ' "$T/check.log")
n=$(echo "$line" | sed -n 's/.* \([0-9]*\) comparisons, \([0-9]*\) off.*/\1/p')
off=$(echo "$line" | sed -n 's/.* \([0-9]*\) comparisons, \([0-9]*\) off.*/\2/p')
if [ -z "$n" ] || [ "$n" -lt 100 ]; then
    bad "the torch check reported no tally (exit $rc): $(tail -n 5 "$T/check.log")"
else
    pass=$((pass + n - off)); fail=$((fail + off))
    [ "$off" -eq 0 ] && [ "$rc" -ne 0 ] && bad "the torch check exits $rc with nothing off"
    grep '^FAIL' "$T/check.log" | head -n 10 >&2
fi
echo "$line"

# decoding: tiny models (400 pairs; 600 updates, fewer answer the same few words to every line),
# translated by nmt and by torch from the same float32 file: the defaults (pre-norm, relu,
# sinusoids) with target embeddings tied to the output, then post-norm, gelu, 12 learned positions
# (clamped: outputs run to 3 x the source) and one matrix for all embeddings (trained to copy
# English, so that the two sides have one vocabulary), then swish, 4 heads, untied embeddings (the
# default) and a layer norm epsilon of 1e-3
D=$NMT_SHARED/data/multi30k/tok
head -n 400 "$D/train.en" > "$T/s"; head -n 400 "$D/train.fr" > "$T/t"
head -n 30 "$D/val.en" > "$T/vs"
trained() { # NAME ARGS...: $T/NAME.nmt
    name=$1; shift
    if "$NMT_BIN" train --src "$T/s" --tgt "${TGT:-$T/t}" --arch transformer --dim-model 16 --heads 2 --dim-ffn 32 --enc-depth 2 \
        --dec-depth 1 --vocab 300 --batch 20 --threads 1 --seed 7 --optimizer adam --lr 0.01 --max-updates 600 \
        --model "$T/$name.nmt" "$@" 2> "$T/train.log"; then ok; else bad "training $name: $(tail -n 3 "$T/train.log")"; fi
}
# search MODEL WHAT ARGS...: nmt translate and torch with the same search options give the same lines
search() {
    m=$1 name="$1, $2"; shift 2
    "$NMT_BIN" translate --model "$T/$m.nmt" --threads 1 "$@" < "$T/vs" > "$T/nmt.out" 2> "$T/tr.err" \
        || { bad "$name: nmt translate: $(tail -n 2 "$T/tr.err")"; return; }
    "$PY" bench/torch_transformer.py translate "$T/$m.nmt" "$@" < "$T/vs" > "$T/torch.out" 2> "$T/torch.err" \
        || { bad "$name: torch: $(tail -n 2 "$T/torch.err")"; return; }
    same=$(paste -d '\n' "$T/nmt.out" "$T/torch.out" | awk 'NR % 2 { a = $0; next } a == $0 { n++ } END { print n + 0 }')
    if [ "$same" -eq 30 ] && [ "$(wc -l < "$T/torch.out")" -eq 30 ]; then ok
    else bad "$name: $same of 30 lines the same; the first that differs: $(diff "$T/nmt.out" "$T/torch.out" | head -n 4)"; fi
    echo "$name: $same of 30 translations the same, $(sort -u "$T/nmt.out" | wc -l) distinct"
}
trained base --tied-embeddings
search base greedy --beam 1
search base "beam 4" --beam 4
search base "beam 4, no length normalisation" --beam 4 --no-length-norm
TGT=$T/s
trained post --transformer-norm post --transformer-ffn-activation gelu --max-positions 12 --tied-embeddings-all
TGT=
search post greedy --beam 1
search post "beam 4" --beam 4
trained untied --no-tied-embeddings --transformer-ffn-activation swish --heads 4 --transformer-ln-eps 1e-3
search untied greedy --beam 1
search untied "beam 4" --beam 4
finish torch_transformer
