/* dnnl_cpu.h: what the CPU backend's two oneDNN files share (gemm_dnnl.c, the products of
 * decoding in int8 and bf16; mix_dnnl.c, those of bf16 training): the process's engine, the
 * check that a precision runs here, and rounding to bf16. Only src/backend/cpu includes it. */
#ifndef NMT_DNNL_CPU_H
#define NMT_DNNL_CPU_H

#include <stdint.h>

#include "backend/backend.h"

#ifndef NMT_REAL_DOUBLE
#include <oneapi/dnnl/dnnl.h>

/* oneDNN's CPU engine, made on first use; NULL when it cannot be made */
dnnl_engine_t dnnl_cpu_engine(void);

/* The matmul primitive C = A·B (beta 0) or C += A·B (beta 1, a sum post-op) on the engine, with
 * per-column output scales given at run time when scaled (int8); *pd_out, unless NULL, gets its
 * descriptor (the caller's to destroy) */
dnnl_status_t dnnl_cpu_matmul(dnnl_primitive_t *p, dnnl_primitive_desc_t *pd_out, const dnnl_memory_desc_t *a,
                              const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *c, int beta, int scaled);
#endif

/* 1 when prec (enum bk_prec) runs on this CPU and build (backend_lowp_ops.supported) */
int dnnl_cpu_supported(int prec);

/* y = x rounded to bf16 (to nearest even; a NaN stays a NaN, infinities stay), R rows of cols
 * from stride ldx into dense rows */
void dnnl_cpu_bf16_rows(uint16_t *y, const real *x, int ldx, int R, int cols);

#endif
