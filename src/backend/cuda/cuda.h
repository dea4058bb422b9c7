/* cuda.h: the CUDA backend's one entry point, in C, for context.c: it opens device N and returns
 * the backend's table, or NULL with the reason. Built only where nvcc exists (Makefile, CUDA=1);
 * context.c declares it weak, so that a build without it says "built without CUDA". */
#ifndef NMT_CUDA_H
#define NMT_CUDA_H

#include <stddef.h>

#include "backend/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Makes device N current for every thread that later calls a kernel; NULL when there is no such
 * device or no working driver, why then holding "no CUDA device: <the driver's reason>". */
const backend_ops *cuda_backend_open(int device, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif

#endif
