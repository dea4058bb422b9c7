// cuda_runtime.h of the CUDA emulation (tests/cudasim, docs/CUDA.md): stands first on the include
// path when the backend's .cu files are compiled for the CPU, so that they get the toolkit's own
// runtime API (types and declarations, implemented by runtime.cc) plus the device side of sim.h.
#ifndef NMT_CUDASIM_CUDA_RUNTIME_H
#define NMT_CUDASIM_CUDA_RUNTIME_H

#include "sim.h"

#endif
