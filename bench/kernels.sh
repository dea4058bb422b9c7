# kernels.sh: sourced by the bench scripts. Unless OPENBLAS_CORETYPE is set, export the kernels
# nmt itself ends up with (it overrides OpenBLAS's SSE3 fallback on CPUs OpenBLAS does not know:
# tools/nmt.c), so that every program of a comparison, the PyTorch reference included, runs those.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ -x "${NMT:-bin/nmt}" ]; then
    c=$(OPENBLAS_VERBOSE=2 "${NMT:-bin/nmt}" --version 2>&1 | sed -n 's/^Core: //p' | tail -n 1)
    [ -n "$c" ] && export OPENBLAS_CORETYPE="$c"
fi
