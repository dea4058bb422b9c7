#!/bin/sh
# check_nmt2torch.sh: checks that bench/nmt2torch.py converts an nmt model faithfully, by scoring
# and translating the first N test pairs with `nmt` and with the PyTorch reference on the same
# model. Exits non-zero when scores disagree beyond tolerance or a translation differs.
#
# usage: sh bench/check_nmt2torch.sh MODEL.nmt [SRC TGT [N]]
#   defaults: $SHARED/data/multi30k/tok/test_2016_flickr.{en,fr}, N=20
#   env: SHARED (default ../shared), NMT (default bin/nmt),
#        TOL (relative tolerance on perplexity and per-sentence log-probabilities, default 1e-4),
#        MIN_SAME (translations per beam that must be identical, default N)
# Runs everything with one thread; it is light (N sentences).
set -eu
cd "$(dirname "$0")/.."
SHARED=${SHARED:-../shared}
[ $# -ge 1 ] || { echo "usage: sh bench/check_nmt2torch.sh MODEL.nmt [SRC TGT [N]]" >&2; exit 2; }
MODEL=$1
SRC=${2:-$SHARED/data/multi30k/tok/test_2016_flickr.en}
TGT=${3:-$SHARED/data/multi30k/tok/test_2016_flickr.fr}
N=${4:-20}
NMT=${NMT:-bin/nmt}
TOL=${TOL:-1e-4}
MIN_SAME=${MIN_SAME:-$N}
ME=check_nmt2torch
. bench/ref_env.sh
need_files "$MODEL" "$SRC" "$TGT" "$REF" "$NMT"
need_torch
T=$(mktemp -d "${TMPDIR:-/tmp}/check_nmt2torch.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
head -n "$N" "$SRC" > "$T/src"
head -n "$N" "$TGT" > "$T/tgt"
fail=0

$PY bench/nmt2torch.py "$MODEL" "$T/m.pt"

# 1. the converted checkpoint has exactly the reference's own tensor names and shapes
$PY - "$REF" "$T/m.pt" <<'EOF'
import sys, importlib.util
spec = importlib.util.spec_from_file_location('rnnsearch', sys.argv[1])
R = importlib.util.module_from_spec(spec); spec.loader.exec_module(R)
P, cfg, sv, tv, _ = R.load_ckpt(sys.argv[2])
want = R.param_shapes(cfg)
bad = [k for k in set(want) | set(P) if k not in want or k not in P or tuple(P[k].shape) != tuple(want[k])]
if bad or len(sv) != cfg['Vs'] or len(tv) != cfg['Vt']:
    sys.exit('check_nmt2torch: FAIL: checkpoint does not match rnnsearch.param_shapes: %s' % sorted(bad))
print('names/shapes: %d tensors match rnnsearch.param_shapes(cfg)' % len(want))
EOF

# 2. forced-decoding scores: corpus perplexity (the reference's `score`) and per sentence
"$NMT" score --model "$MODEL" --src "$T/src" --tgt "$T/tgt" --threads 1 > "$T/c.score"
$PY "$REF" score --model "$T/m.pt" --src "$T/src" --tgt "$T/tgt" --threads 1 > "$T/r.score"
# per-sentence reference log-probabilities, from the reference's own forward_train (batch of 1)
$PY - "$REF" "$T/m.pt" "$T/src" "$T/tgt" > "$T/r.sent" <<'EOF'
import sys, importlib.util
spec = importlib.util.spec_from_file_location('rnnsearch', sys.argv[1])
R = importlib.util.module_from_spec(spec); spec.loader.exec_module(R)
R.torch.set_num_threads(1)
P, cfg, sv, tv, _ = R.load_ckpt(sys.argv[2])
with R.torch.no_grad():
    for s, t in zip(R.read_tok(sys.argv[3]), R.read_tok(sys.argv[4])):
        x, xm, y, ym = R.make_batch([(sv.encode(s), tv.encode(t))])
        _, lp = R.forward_train(P, cfg, x, xm, y, ym)
        print('%.6f\t%d' % (lp.double().sum().item(), lp.numel()))
EOF
if ! $PY - "$T/c.score" "$T/r.score" "$T/r.sent" "$TOL" <<'EOF'
import math, re, sys
c = [l.rstrip('\n').split('\t') for l in open(sys.argv[1])]
r = [l.split('\t') for l in open(sys.argv[3])]
tol = float(sys.argv[4])
m = re.search(r'perplexity ([0-9.]+) \(nll/token ([0-9.]+)', open(sys.argv[2]).read())
if not m or len(c) != len(r):
    sys.exit('score: unexpected output (%d C lines, %d reference lines)' % (len(c), len(r)))
ref_ppl, ref_nll = float(m.group(1)), float(m.group(2))
tot = sum(float(x[0]) for x in c); ntok = sum(int(x[2]) for x in c)
c_nll = -tot / ntok; c_ppl = math.exp(c_nll)
ok = True
# the reference prints ppl to 3 decimals and nll to 4: allow that rounding on top of tol
rel_ppl = abs(c_ppl - ref_ppl) / ref_ppl
rel_nll = abs(c_nll - ref_nll) / ref_nll
ok &= abs(c_ppl - ref_ppl) <= tol * ref_ppl + 5e-4
ok &= abs(c_nll - ref_nll) <= tol * ref_nll + 5e-5
worst = 0.0
for i, (a, b) in enumerate(zip(c, r)):
    if int(a[2]) != int(b[1]):
        ok = False; print('pair %d: %s tokens (C) vs %s (reference)' % (i + 1, a[2], b[1]))
    d = abs(float(a[0]) - float(b[0])) / max(abs(float(b[0])), 1e-9)
    worst = max(worst, d)
ok &= worst <= tol
print('score: perplexity C %.6f  reference %.3f (rel. diff %.1e); nll/token C %.6f  reference %.4f (%.1e); '
      'per-sentence log-prob: max rel. diff %.1e over %d pairs (tolerance %g) -> %s'
      % (c_ppl, ref_ppl, rel_ppl, c_nll, ref_nll, rel_nll, worst, len(c), tol, 'ok' if ok else 'FAIL'))
sys.exit(0 if ok else 1)
EOF
then fail=1; fi

# 3. translations, greedy and beam 12, length-normalised on both sides (their defaults)
for k in 1 12; do
    "$NMT" translate --model "$MODEL" --beam "$k" --threads 1 < "$T/src" > "$T/c.b$k"
    $PY "$REF" translate --model "$T/m.pt" --beam "$k" --threads 1 --input "$T/src" --output "$T/r.b$k" 2>/dev/null
    same=$(paste -d '\t' "$T/c.b$k" "$T/r.b$k" | awk -F '\t' '$1 == $2' | wc -l)
    n=$(wc -l < "$T/src")
    verdict=ok
    [ "$same" -ge "$MIN_SAME" ] || { verdict=FAIL; fail=1; }
    echo "translate beam $k: $same of $n identical (need $MIN_SAME) -> $verdict"
    if [ "$same" -lt "$n" ]; then
        paste -d '\t' "$T/c.b$k" "$T/r.b$k" | awk -F '\t' '$1 != $2 { printf "  line %d\n    C:   %s\n    ref: %s\n", NR, $1, $2 }' | head -n 12
    fi
done

[ "$fail" -eq 0 ] && echo "check_nmt2torch: all ok" || echo "check_nmt2torch: FAILED" >&2
exit "$fail"
