# setup.py: builds the nmt package, a CPython extension (nmt._nmt, python/src/*.c) over libnmt's
# public API and a pure-Python layer (nmt/__init__.py). It links the shared libnmt and libnmt-eval
# that `make` builds (NMT_LIBDIR, default ../build) with that directory as the rpath, so that the
# package runs from a virtual environment without LD_LIBRARY_PATH; `make install` builds it with
# NMT_LIBDIR set to the installed library directory. Offline: pip install --no-build-isolation.
import os

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.path.abspath(os.environ.get("NMT_INCLUDE", os.path.join(HERE, "..", "include")))
LIBDIR = os.path.abspath(os.environ.get("NMT_LIBDIR", os.path.join(HERE, "..", "build")))
RPATH = os.environ.get("NMT_RPATH", LIBDIR)  # the installed directory when DESTDIR stages an install
VERSION = os.environ.get("NMT_VERSION", "0.0")

ext = Extension(
    "nmt._nmt",
    sources=[os.path.join("src", f) for f in ("module.c", "translator.c", "train.c")],
    include_dirs=[INCLUDE],
    library_dirs=[LIBDIR],
    libraries=["nmt-eval", "nmt"],
    runtime_library_dirs=[RPATH],
    extra_compile_args=["-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-Wno-missing-field-initializers",
                        "-Wno-cast-function-type"],
    depends=[os.path.join("src", "common.h"), os.path.join(INCLUDE, "nmt.h")],
)

setup(
    name="nmt",
    version=VERSION,
    description="Python bindings of nmt (RNNsearch neural machine translation): translate, score, align, train, BLEU",
    packages=["nmt"],
    package_data={"nmt": ["py.typed", "*.pyi"]},
    ext_modules=[ext],
    python_requires=">=3.9",
)
