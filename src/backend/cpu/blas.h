/* blas.h: the one seam through which every matrix product goes (row-major, C = A·B + beta·C
 * with optional transposes), so that the BLAS choice and its threading live in one place. */
#ifndef NMT_BLAS_H
#define NMT_BLAS_H

#include "base/real.h"

/* C[M,N] = op(A)[M,K] · op(B)[K,N] + beta · C; ta/tb non-zero transpose A/B; lda/ldb/ldc are
 * row strides of the matrices as stored. */
void mm(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb,
       real beta, real *C, int ldc);

/* C[N] += sum of the M rows of A[M,N] (stride lda): bias gradients. */
void colsum_add(real *C, const real *A, int M, int N, int lda);

#endif
