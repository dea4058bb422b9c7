#!/bin/sh
# header_cxx.sh: what a device backend includes (src/backend/backend.h, and the simulated
# device's header beside it) compiles as C++, as a CUDA backend's .cu files compile it, with every
# name of C linkage; where nvcc exists (/usr/local/cuda or PATH), as CUDA C++ too.
. tests/cli/lib.sh
CXX=${CXX:-g++}
cat > "$T/seam.cc" <<'CC'
#include "backend/backend.h"
#include "backend/devsim/devsim.h"
// a device backend's table, its entries defined in C++ and named with C linkage
extern "C" void my_zero_rows(real *y, int ldy, int R, int cols) { (void)y, (void)ldy, (void)R, (void)cols; }
static backend_ops table_of_device() { backend_ops b{}; b.name = "x"; b.zero_rows = my_zero_rows; return b; }
int main() { backend_ops b = table_of_device(); bk_ctx x{}; x.b = &b; mm(&x, 0, 0, 0, 0, 0, nullptr, 1, nullptr, 1, 0, nullptr, 1); return b.lowp != nullptr; }
CC
if "$CXX" -std=c++17 -Wall -Wextra -Werror -Iinclude -Isrc -I/usr/include/x86_64-linux-gnu/openblas-openmp \
    -c "$T/seam.cc" -o "$T/seam.o" 2> "$T/err"; then ok; else bad "backend.h as C++: $(head -c 400 "$T/err")"; fi
# C linkage: the symbol of the table's function is unmangled
if nm "$T/seam.o" | grep -q ' T my_zero_rows$'; then ok; else bad "extern \"C\": my_zero_rows is mangled"; fi
NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
if [ -n "$NVCC" ]; then
    cp "$T/seam.cc" "$T/seam.cu"
    if "$NVCC" -std=c++17 -Iinclude -Isrc -c "$T/seam.cu" -o "$T/seam_cu.o" 2> "$T/err"; then ok
    else bad "backend.h as CUDA C++: $(head -c 400 "$T/err")"; fi
else
    echo "header_cxx: SKIP the CUDA C++ case: no nvcc here"
fi
finish header_cxx
