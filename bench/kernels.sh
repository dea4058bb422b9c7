# kernels.sh: sourced by the bench scripts. Unless OPENBLAS_CORETYPE is set, export the kernels
# nmt itself ends up with (the fastest it timed on this CPU model, or its correction of OpenBLAS's
# SSE3 fallback with NMT_BLAS_AUTOTUNE=0: tools/blas_kernels.c), so that every program of a
# comparison, the PyTorch reference included, runs those.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ -x "${NMT:-bin/nmt}" ]; then
    c=$(OPENBLAS_VERBOSE=2 "${NMT:-bin/nmt}" --version 2>&1 | sed -n 's/^Core: //p' | tail -n 1)
    [ -n "$c" ] && export OPENBLAS_CORETYPE="$c"
fi
