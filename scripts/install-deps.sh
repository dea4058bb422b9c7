#!/bin/sh
# Installs the Debian packages that building and testing nmt need; a no-op when all are present.
# Called by the Makefile before every build, so it must be fast when there is nothing to do.
set -eu

# The OpenMP build of OpenBLAS: a BLAS call made inside one of our OpenMP regions then runs on
# one thread instead of starting a second layer of threads on the same two cores.
# Drawing (libnmt-eval): cairo and pango, found through pkg-config; fontconfig finds the fonts,
# DejaVu Sans for Latin, Greek, Cyrillic, Hebrew and Arabic, Droid Sans Fallback for CJK.
PKGS="gcc make libc6-dev libopenblas-openmp-dev libcjson-dev zlib1g-dev python3 pkgconf libcairo2-dev libpango1.0-dev fonts-dejavu-core fonts-droid-fallback"
# `install-deps.sh fuzz` (make fuzz) adds clang and the runtime that holds libFuzzer and the
# sanitizers for it (libclang-rt-N-dev); the normal build and `make test` need neither.
if [ "${1:-}" = fuzz ]; then
    PKGS="clang-14 libclang-rt-14-dev"
fi

missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
