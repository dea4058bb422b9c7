/* cpu.h: the CPU backend's kernels (OpenBLAS, OpenMP, AVX2), one declaration per entry of the
 * backend table in cpu.c. Only src/backend includes this; everything else goes through
 * backend/backend.h. */
#ifndef NMT_CPU_H
#define NMT_CPU_H

#include "backend/backend.h"

/* cpu.c: the table of the kernels below */
extern const backend_ops cpu_backend;
/* threads.c: backend_ops.set_threads and .threads */
void cpu_set_threads(int n);
int cpu_threads(void);
/* gemm_dnnl.c and mix_dnnl.c: its products in int8 and bf16, and bf16 training's (oneDNN) */
extern const backend_lowp_ops cpu_lowp;
extern const backend_mix_ops cpu_mix;

/* blas.c */
void cpu_gemm(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
              real *C, int ldc);
void cpu_colsum_add(real *C, const real *A, int M, int N, int lda);
/* gemm_rows.c: cpu_gemm's contract with each row alone (backend_ops.gemm_rows) */
void cpu_gemm_rows(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
                   real *C, int ldc);
/* its AVX-512 form (1) or AVX2's (0), which give the same bits; want < 0 asks, 0 or 1 chooses
 * (1 only where the CPU has AVX-512; for the tests) */
int cpu_gemm_rows_wide(int want);
/* transformer.c: dropout masks hashed with AVX-512 (1) or scalar (0), the same bits; as above */
int cpu_dropout_wide(int want);
/* sgemm_dnnl.c: cpu_gemm's contract through oneDNN (beta 0 or 1, M, N, K > 0); 0 when done, -1
 * when oneDNN could not take it (nothing written) */
int cpu_gemm_dnnl(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
                  real *C, int ldc);
/* how many threads hold oneDNN's objects for these products now (one each; a thread's go when it
 * ends) */
int cpu_gemm_dnnl_live(void);
/* blas.c: 1 when NMT_GEMM=onednn routes FP32 products through cpu_gemm_dnnl (read once) */
int cpu_gemm_onednn(void);

/* threads.c: backend_ops.parallel_for */
void cpu_parallel_for(long n, long grain, int nthreads, bk_body body, void *ctx);
/* threads.c: 1 when a loop over `units` independent pieces holding `elems` elements in all pays
 * for starting a team (the `if` of an element-wise loop's parallel region) */
int cpu_team(long units, long elems);
/* transformer.c: the Transformer's kernels */
void cpu_layer_norm(real *y, int ldy, real *stats, const real *x, int ldx, const real *gamma, const real *beta, int R,
                    int cols, real eps);
void cpu_layer_norm_backward(real *dx, int lddx, int acc, real *gx, const real *dy, int lddy, const real *x, int ldx,
                             const real *stats, const real *gamma, int R, int cols);
void cpu_attn_softmax(real *S, const int *klen, int kfix, int n, int heads, int Tq, int Tk, int causal, int qoff,
                      real scale);
void cpu_attn_softmax_backward(real *dS, const real *P, const real *dP, long rows, int Tk, real scale);
void cpu_gemm_batched(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
                      real *C, int ldc, const bk_batch *s);
void cpu_act_grad_x_rows(int f, real *dx, int lddx, const real *dy, int lddy, const real *x, int ldx, int R, int cols);
void cpu_dropout_mask(real *m, long n, uint64_t seed, real p);
void cpu_gather_rows_ld(real *dst, long ldd, const real *src, long lds, const int *ids, int n, long cols);

/* rows.c: element-wise over strided rows */
void cpu_zero_rows(real *y, int ldy, int R, int cols);
void cpu_copy_rows(real *y, int ldy, const real *x, int ldx, int R, int cols);
void cpu_act_rows(int f, real *y, int ldy, const real *x, int ldx, const real *b, int R, int cols);
void cpu_act_grad_rows(int f, real *dx, int lddx, const real *dy, int lddy, const real *y, int ldy, int R, int cols);
void cpu_add_rows(real *y, int ldy, const real *a, int lda, const real *b, int ldb, int R, int cols);
void cpu_mul_rows(real *y, int ldy, const real *a, int lda, const real *b, int ldb, int R, int cols);
void cpu_axpy_diff_rows(real *y, int ldy, const real *u, const real *x, int ldx, const real *z, int ldz, int R,
                        int cols);
void cpu_dist_rows(double *out, const real *x, int ldx, const real *z, int ldz, int R, int cols);

/* rnn.c: GRU step and attention */
void cpu_gru_gates(real *z, real *r, real *rh, const real *a, int lda, const real *zr, const real *hp, int ldhp,
                   int B, int n);
void cpu_gru_state(real *h, int ldh, real *hc, const real *z, const real *a, int lda, const real *uq,
                   const real *hp, int ldhp, const unsigned char *mask, int B, int n);
void cpu_gru_grad_state(real *da, int ldda, real *dhp, const real *g, const real *z, const real *hc,
                        const real *hp, int ldhp, const unsigned char *mask, int B, int n);
void cpu_gru_grad_reset(real *da, int ldda, real *dhp, const real *dq, const real *r, const real *hp, int ldhp,
                        const unsigned char *mask, int B, int n);
void cpu_attn_forward(real *alpha, real *ctx, const real *UaH, const real *q, const real *v, const real *H,
                      const int *xlen, const int *src, const bk_attn *a);
void cpu_attn_backward(real *dq, real *dUaH, real *dH, real *dv_rows, const real *dctx, const real *dalpha,
                       const real *alpha, const real *UaH, const real *q, const real *v, const real *H,
                       const int *xlen, const bk_attn *a, real *tmp);
void cpu_attn_window(real *xi, const real *src, int ld, const int *len, int H, int Tx, int k);
void cpu_attn_window_backward(real *dsrc, const real *dxi, const int *len, int B, int Tx, int k);

/* output.c: readout and embeddings */
void cpu_repeat_row(real *Z, const real *row, int H, int V);
void cpu_maxout(real *t, unsigned char *which, const real *tt, const real *b, const int *rows, int N, int l);
void cpu_maxout_backward(real *dtt, const real *dt, const unsigned char *which, const int *rows, int N, int l);
void cpu_softmax_nll(real *z, double *rinv, double *nll, real *lp, const int *rows, const int *y, int N, int V,
                     double ls);
void cpu_softmax_nll_backward(real *z, real *dbias, real *part, const double *rinv, const int *rows,
                              const int *y, int N, int V, real scale, real ls, int blk, uint16_t *z16);
void cpu_gather_rows(real *dst, const real *table, const int *ids, int n, int cols);
void cpu_scatter_add_rows(real *table, const real *src, const int *ids, const unsigned char *mask, int n,
                          int cols);
void cpu_scatter_rows(real *table, const real *src, const int *ids, int n, int cols);
void cpu_gather_cols(real *dst, const real *src, const int *ids, int n, int rows, long sj, long sk);

/* update.c: optimizer */
double cpu_sumsq(const real *g, size_t n);
void cpu_update(int rule, const bk_hyper *h, real *p, real *g, real *const *s, size_t lo, size_t hi);
void cpu_update_rows(int rule, const bk_hyper *h, real *p, real *g, real *const *s, int ns, size_t off, int rows,
                     int cols, unsigned *lag);
void cpu_settle_rows(real *const *s, int ns, real rho, size_t off, int rows, int cols, unsigned *lag);

/* topk.c: beam search */
void cpu_topk_rows(int *n, real *lp, int *v, real *lse, const real *z, int H, int V, const int *need, int cap,
                   int skip, topk_item *heap, int kmax, int logp);
void cpu_logp_acc_rows(real *y, const real *z, int H, int V, real w, int first);

#endif
