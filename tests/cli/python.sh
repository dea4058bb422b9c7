#!/bin/sh
# python.sh: the Python package (python/, docs/PYTHON.md) built into a virtual environment under
# build/ (scripts/python_venv.sh: Debian's python3, offline; reused while up to date) and tested
# against the nmt program by tests/python/test_nmt.py (unittest). The package links build/'s
# libnmt.so, so the answers it is compared with are bin/nmt's (the same build) in every pass.
# Skipped, and counted as passed, only where the python has no development headers.
# kernel sets: all: the Python package against the program (tests/cli/kernels.sh)
. tests/cli/lib.sh
# Training's products are OpenBLAS's (or oneDNN's) kernels, which round otherwise from set to set:
# the program runs the set it chose (docs/CLI.md), the package the one OpenBLAS loaded with (a
# library cannot restart itself). They train the same model on the same set, as a user gets by
# setting what `nmt blas-kernels` shows (docs/PYTHON.md): so does this case where nothing is set.
# (Decoding does not depend on the set: docs/CLI.md, "A sentence's translation does not depend on
# its batch".) On a CPU newer than OpenBLAS (its SSE3 fallback) the two differed in every tensor.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ -z "${NMT_GEMM:-}" ]; then
    runs=$("$NMT_BIN" blas-kernels 2> /dev/null | sed -n 's/^nmt runs *\([A-Za-z0-9]*\).*/\1/p')
    case $runs in oneDNN) export NMT_GEMM=onednn ;; "") ;; *) export OPENBLAS_CORETYPE=$runs ;; esac
fi
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3 || true)
inc=$([ -n "$PY" ] && "$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2> /dev/null)
if [ -z "$PY" ] || [ ! -f "$inc/Python.h" ]; then
    echo "SKIP python: ${PY:-no python3} has no Python.h (install python3-dev)"
    ok
    finish python
    exit
fi
if [ ! -f build/libnmt.so ] || [ ! -x bin/nmt ]; then
    bad "build/libnmt.so and bin/nmt are needed (make all)"
    finish python
    exit
fi
if sh scripts/python_venv.sh "$PY" build/venv build > "$T/venv.log" 2>&1; then ok; else bad "the package does not build: $(tail -n 20 "$T/venv.log")"; fi
model tf600 "$T/tf.nmt" # the Transformer of test_nmt.py's TransformerDecode (trained there when absent)
NMT_TEST_DIR=$T NMT_BIN=bin/nmt build/venv/bin/python tests/python/test_nmt.py > "$T/py.log" 2>&1
line=$(grep -E '^python: [0-9]+ passed, [0-9]+ failed$' "$T/py.log")
if [ -n "$line" ]; then
    pass=$((pass + $(echo "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/')))
    fail=$((fail + $(echo "$line" | sed -E 's/.* ([0-9]+) failed/\1/')))
fi
[ -z "$line" ] && bad "the unittest run reported nothing: $(tail -n 20 "$T/py.log")"
grep -E '^(FAIL|ERROR):|Error|assert' "$T/py.log" | head -n 40 >&2
finish python
