# ref_env.sh: sourced by the bench scripts that run the PyTorch reference beside nmt: the
# reference's paths, the environment both sides run in, and the checks before a run.
# The sourcing script sets SHARED and ME (its name, for messages).
REF=$SHARED/peers/torch/rnnsearch.py
# torch's libblas.so.3 must resolve to OpenBLAS (pthread build), as in scripts/bench.sh: the
# library path goes to the reference's processes only. Exported to all, it would reach nmt too,
# whose run path (RUNPATH) yields to LD_LIBRARY_PATH: nmt would load the pthread OpenBLAS, whose
# threads fight its OpenMP threads for the cores.
PY="env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} /usr/bin/python3"
# each side with its own OpenMP wait policy: nmt libgomp's default, the reference the PASSIVE
# it sets for itself (as scripts/bench.sh explains)
unset OMP_WAIT_POLICY
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS GOTO_NUM_THREADS
. bench/kernels.sh

need_files() {
    for f in "$@"; do
        [ -e "$f" ] || { echo "$ME: $f not found" >&2; exit 2; }
    done
}

# torch imports and takes its BLAS from OpenBLAS, not the 40x slower reference BLAS
need_torch() {
    if ! $PY -c "import torch, sys; sys.exit(0 if any('openblas-pthread' in l for l in open('/proc/self/maps')) else 1)" 2>/dev/null; then
        echo "$ME: torch does not import, or does not load OpenBLAS from openblas-pthread/" >&2
        echo "  (apt-get install python3-torch python3-numpy libopenblas0-pthread)" >&2
        exit 2
    fi
}

# WORK: the folder of a run's files, KEEP when set (and kept), else a temporary one that goes
# when the script exits
work_dir() {
    if [ -n "${KEEP:-}" ]; then
        WORK=$KEEP
        mkdir -p "$WORK"
    else
        WORK=$(mktemp -d "${TMPDIR:-/tmp}/$ME.XXXXXX")
        trap 'rm -rf "$WORK"' EXIT INT TERM
    fi
}
