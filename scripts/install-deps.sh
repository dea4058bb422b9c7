#!/bin/sh
# Installs the Debian packages that building and testing nmt need; a no-op when all are present.
# Called by `make deps`, and by `make test` and `make demo` before they build; fast when there is
# nothing to do.
# `install-deps.sh --test` also tries the packages only the tests use; those may fail to install
# (the test that needs one then says so and skips itself), the build's may not.
set -eu

# The OpenMP build of OpenBLAS: a BLAS call made inside one of our OpenMP regions then runs on
# one thread instead of starting a second layer of threads on the same two cores.
# Drawing (libnmt-eval): cairo and pango, found through pkg-config; fontconfig finds the fonts,
# DejaVu Sans for Latin, Greek, Cyrillic, Hebrew and Arabic, Droid Sans Fallback for CJK.
# The HTTP server (libnmt-serve): libmicrohttpd. Option files of the program (nmt train -c): libyaml.
# Subword units (libnmt's src/text/spm.cc, the one C++ file): SentencePiece, and g++ for that file.
# Matrix products in bf16 and int8 (libnmt's src/backend/cpu/gemm_dnnl.c): oneDNN (libdnnl,
# built on OpenMP as we are); small ones, measured by `make bench-gemm` only: libxsmm (static).
# Training across processes and machines (the program's src/mpi/comm_mpi.c): Open MPI's headers and
# library, and mpirun to start a job (openmpi-bin; the tests' tests/cli/mpi.sh uses it too).
PKGS="gcc g++ make libc6-dev libopenblas-openmp-dev libcjson-dev zlib1g-dev python3 pkgconf libcairo2-dev libpango1.0-dev fonts-dejavu-core fonts-droid-fallback libmicrohttpd-dev libsentencepiece-dev libyaml-dev libdnnl-dev libxsmm-dev libopenmpi-dev openmpi-bin"
# The run-time libraries bin/nmt links directly, named too (the -dev packages bring them today,
# but a machine that only runs the program needs exactly these).
PKGS="$PKGS libopenblas0-openmp libcjson1 libcairo2 libpango-1.0-0 libpangocairo-1.0-0 libpangoft2-1.0-0 libglib2.0-0 libfontconfig1 libmicrohttpd12 libsentencepiece0 libstdc++6 libyaml-0-2 libdnnl2 libopenmpi3"
# Tests only: a headless browser opens nmt serve's page (tests/cli/serve_browser.sh); the
# spm_encode and spm_decode programs, which the subword tests compare with; the Python package's
# build and test (tests/cli/python.sh, make python): Debian's python3 headers, venv, numpy and
# setuptools.
TEST_PKGS="chromium sentencepiece python3-dev python3-venv python3-numpy python3-setuptools"
# `install-deps.sh fuzz` (make fuzz) adds clang and the runtime that holds libFuzzer and the
# sanitizers for it (libclang-rt-N-dev); the normal build and `make test` need neither.
if [ "${1:-}" = fuzz ]; then
    PKGS="clang-14 libclang-rt-14-dev"
fi

missing_of() {
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || printf ' %s' "$p"
    done
}

install() { # packages...: apt-get update once, then install them
    echo "install-deps: installing:$*" >&2
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    [ -n "${updated:-}" ] || $SUDO apt-get update -qq
    updated=1
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# shellcheck disable=SC2086
missing=$(missing_of $PKGS)
# shellcheck disable=SC2086
[ -z "$missing" ] || install $missing
[ "${1:-}" = "--test" ] || exit 0
# shellcheck disable=SC2086
missing=$(missing_of $TEST_PKGS)
# shellcheck disable=SC2086
[ -z "$missing" ] || install $missing || echo "install-deps: could not install$missing (the tests that need it skip)" >&2
exit 0
