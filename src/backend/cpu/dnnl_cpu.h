/* dnnl_cpu.h: what the CPU backend's oneDNN files share (gemm_dnnl.c, the products of decoding in
 * int8 and bf16; mix_dnnl.c, those of bf16 training; sgemm_dnnl.c, FP32 products): the process's
 * engine, the matmuls, the memory objects by shape, the check that a precision runs here, and
 * rounding to bf16. Only src/backend/cpu includes it. */
#ifndef NMT_DNNL_CPU_H
#define NMT_DNNL_CPU_H

#include <stdint.h>

#include "backend/backend.h"

#ifndef NMT_REAL_DOUBLE
#include <oneapi/dnnl/dnnl.h>

/* oneDNN's CPU engine, made on first use; NULL when it cannot be made */
dnnl_engine_t dnnl_cpu_engine(void);
/* oneDNN's status when the engine was made: why dnnl_cpu_engine gave NULL */
dnnl_status_t dnnl_cpu_engine_status(void);

/* The matmul primitive C = A·B (beta 0) or C += A·B (beta 1, a sum post-op) on the engine, with
 * per-column output scales given at run time when scaled (int8) and A's zero point zero (int8 on
 * u8 activations: C = (A - zero)·B; 0 for none); *pd_out, unless NULL, gets its descriptor (the
 * caller's to destroy) */
dnnl_status_t dnnl_cpu_matmul(dnnl_primitive_t *p, dnnl_primitive_desc_t *pd_out, const dnnl_memory_desc_t *a,
                              const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *c, int beta, int scaled,
                              int zero);

/* The matmul C = op(A)·op(B) (beta 0) or C += (beta 1) with A and B of type ab, C in FP32, every
 * dimension and stride given at run time, so that one primitive per (ta, tb, beta) serves every
 * shape; a transposed operand is the same memory with its strides swapped */
dnnl_status_t dnnl_cpu_matmul_any(dnnl_primitive_t *p, dnnl_data_type_t ab, int ta, int tb, int beta);

/* oneDNN's memory objects by type, shape and strides: an operand whose shape was seen before
 * (a decoder's steps repeat their shapes; the encoder's shrink with the rows still active) only
 * points its object at the data instead of making one, so that no product allocates once the
 * shapes have been seen; a new shape replaces the oldest entry. Zero-initialise; one per thread
 * and operand: a product's lookups must not evict the object another of its lookups returned.
 * (dnnl_primitive_execute still allocates its own map of the arguments at each call: oneDNN's C
 * API has no way around that, nor any measurable cost: 78 us a product either way, 80 x 256 x 512.) */
#define DNNL_CPU_MEMS 64
typedef struct dnnl_cpu_mems {
    long key[DNNL_CPU_MEMS][5];
    dnnl_memory_t mem[DNNL_CPU_MEMS];
    int next;
} dnnl_cpu_mems;

/* The object for rows x cols of dt with row and column strides rs, cs at data (rows 0: a vector
 * of cols), in *out; oneDNN's status. */
dnnl_status_t dnnl_cpu_mem(dnnl_cpu_mems *c, dnnl_data_type_t dt, int rows, int cols, int rs, int cs, void *data,
                           dnnl_memory_t *out);
void dnnl_cpu_mems_free(dnnl_cpu_mems *c);
#endif

/* int8 on u8 activations (AVX2, no VNNI): q(A) in [-127, 127] stored as q(A) + 128 in [1, 255],
 * q(W) in [-31, 31], so that two of vpmaddubsw's 16-bit pair sums (4 x 255 x 31) still fit in
 * 16 bits (qgemm_u8.c) */
enum { U8_ZERO = 128, U8_WLEVELS = 31 };

/* 1 when prec (enum bk_prec) runs on this CPU and build (backend_lowp_ops.supported) */
int dnnl_cpu_supported(int prec);
/* L, the largest |q(W)| of an int8 product's weights here: 127 with AVX512_VNNI, 31 on AVX2
 * (gemm_dnnl.c); the tests' error bounds depend on it */
int dnnl_cpu_int8_wlevels(void);

/* y = x rounded to bf16 (to nearest even; a NaN stays a NaN, infinities stay), R rows of cols
 * from stride ldx into dense rows */
void dnnl_cpu_bf16_rows(uint16_t *y, const real *x, int ldx, int R, int cols);
/* the same for one span of n, on the calling thread */
void dnnl_cpu_bf16_span(uint16_t *y, const real *x, size_t n);

#endif
