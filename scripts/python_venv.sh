#!/bin/sh
# python_venv.sh PYTHON VENV LIBDIR: the nmt Python package (python/) installed into the virtual
# environment VENV (made with PYTHON -m venv --system-site-packages, so Debian's numpy is seen),
# linked against LIBDIR's shared libnmt and libnmt-eval with LIBDIR as its rpath. Offline: pip
# builds with the setuptools already installed (--no-build-isolation, --no-index). Reused while
# its stamp is newer than the package's sources, nmt.h and the libraries; `make python` and
# tests/cli/python.sh call it.
set -eu
PY=$1 VENV=$2 LIBDIR=$(cd "$3" && pwd)
stamp=$VENV/.nmt-installed
fresh() {
    [ -f "$stamp" ] || return 1
    for f in python/setup.py python/nmt/* python/src/* include/nmt.h "$LIBDIR/libnmt.so" "$LIBDIR/libnmt-eval.so"; do
        [ "$f" -nt "$stamp" ] && return 1
    done
    return 0
}
fresh && exit 0
[ -x "$VENV/bin/python" ] || "$PY" -m venv --system-site-packages "$VENV"
rm -f "$stamp"
# pip builds in python/build; a build from another library directory must not be reused
rm -rf python/build python/nmt.egg-info
NMT_LIBDIR=$LIBDIR NMT_VERSION=$(sed -n 's/.*NMT_VERSION_STRING "\(.*\)".*/\1/p' tools/cmd.h) \
    "$VENV/bin/python" -m pip install -q --no-build-isolation --no-index --no-deps --force-reinstall ./python
touch "$stamp"
