/* qgemm_u8.h: our int8 product for CPUs with AVX2 and no VNNI (qgemm_u8.c): weights packed once,
 * u8 activations with zero point 128 at each call. gemm_dnnl.c's u8 form calls it. */
#ifndef NMT_QGEMM_U8_H
#define NMT_QGEMM_U8_H

#include <stdint.h>

/* [K, N] s8 weights in |w| <= 31, packed; colsum[n] = Σ_k w[k,n], for the zero point */
typedef struct qu8_weights {
    int K, N, Kp, Np; /* Kp: K up to a multiple of 8; Np: N up to a multiple of 16 */
    int8_t *w;
    int32_t *colsum;
} qu8_weights;

/* the row length of the activations qu8_gemm reads: K up to a multiple of 8 (the pad's bytes
 * may hold anything: their weights are 0) */
static inline int qu8_kpad(int K) { return (K + 7) / 8 * 8; }

/* packs w (dense rows of N, |w| <= 31); 0, or -1 out of memory (p then holds nothing) */
int qu8_pack(qu8_weights *p, const int8_t *w, int K, int N);
void qu8_free(qu8_weights *p);

/* C[m,n] = scale[n] · (Σ_k A[m,k] w[k,n] - 128 colsum[n]) · rscale[m] (+ C[m,n] when beta), rounded
 * in that order, for M rows of A (u8, row stride lda >= Kp) and C (row stride ldc) */
void qu8_gemm(const qu8_weights *p, int M, const uint8_t *A, int lda, const float *scale, const float *rscale, int beta,
              float *C, int ldc);

#endif
