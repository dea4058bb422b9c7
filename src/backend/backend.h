/* backend.h: the compute seam. A backend is a table of function pointers: memory, threads, the
 * matrix product and the fused kernels the layers run (GRU gates, attention, readout, embeddings,
 * optimizer updates, the beam's row scan). Layers decide which kernel runs on which buffers in
 * which order; a backend decides how, and owns every thread and vector instruction. The pointer
 * is followed once per kernel call, never per element. Which table a layer calls is its compute
 * context's (bk_ctx, below): each model has its own. */
#ifndef NMT_BACKEND_H
#define NMT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "base/real.h"
#include "base/topk.h"

/* Both C11 and C++ (a device backend's .cu files) include this header: every name has C linkage. */
#ifdef __cplusplus
extern "C" {
#endif

/* One decoder step's attention (MODEL.md sections 2, 5): query rows, source layout and the
 * optional ξ features of Markov / LocFer. Shapes as in nn/attention.h. */
typedef struct bk_attn {
    int B, Tx;          /* query rows, padded source length */
    int Bs;             /* source sentences in the UaH/H layout */
    int na, hd, ldH;    /* alignment units n', annotation size, row stride of H */
    int K;              /* ξ features per position (2k+1); 0 = none */
    const real *M;      /* [K, na] M_a */
    const real *xi;     /* [B, Tx, K] */
    real *dxi;          /* backward: [B, Tx, K], written */
    real *dM_rows;      /* backward: [B, K*na], accumulated */
} bk_attn;

/* Optimizer update rules; the state tensors s[i] each have the parameters' layout.
 *   SGD      p -= lr g
 *   ADAGRAD  s0 += g²;  p -= lr g / (sqrt(s0) + eps)
 *   ADADELTA s0 = ρ s0 + (1-ρ) g²;  d = sqrt(s1 + eps) / sqrt(s0 + eps) g;
 *            s1 = ρ s1 + (1-ρ) d²;  p -= lr d
 *   ADAM     s0 = b1 s0 + (1-b1) g;  s1 = b2 s1 + (1-b2) g²;  p -= lr (s0/c1) / (sqrt(s1/c2) + eps)
 * with g = scale · gradient; c1, c2 are Adam's bias corrections 1 - b^t. */
enum bk_rule { BK_SGD, BK_ADAGRAD, BK_ADADELTA, BK_ADAM };
typedef struct bk_hyper { real lr, rho, eps, b1, b2, c1, c2, scale; } bk_hyper;

/* The activations of the row kernels: y = f(x) and, for backward, f' written through y. */
enum bk_fn { BK_IDENTITY, BK_TANH, BK_SIGMOID, BK_RELU, BK_GELU, BK_SWISH };
/* (relu, gelu and swish are the Transformer's feed-forward activations: act_rows computes them,
 * act_grad_x_rows their derivatives from the input; gelu is the tanh form
 * 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))), swish x σ(x)) */

/* A batch of products for gemm_batched: product i = o·inner + k (o < count/inner, k < inner)
 * reads A at o·oa + k·ia, B at sel[o]·ob + k·ib (sel NULL: o·ob) and writes C at o·oc + k·ic,
 * in elements. inner is the heads of multi-head attention, o the sentence or hypothesis; sel
 * lets a hypothesis read its sentence's keys (device memory, count/inner ints). */
typedef struct bk_batch {
    int count, inner;
    long oa, ia, ob, ib, oc, ic;
    const int *sel;
} bk_batch;

/* The body of a parallel loop: indices [lo, hi) on thread `thread` (0 .. threads-1). */
typedef void (*bk_body)(void *ctx, long lo, long hi, int thread);

/* ==== products in lower precision (docs/results/speed.md, "Products by library") =====
 * A weight matrix W [K,N] is converted once (at load) into a bk_qmat of one precision; then
 * C[M,N] = A[M,K] · Ŵ + beta C for activations A in real, converted at each call. BK_PREC_F32
 * keeps W as it is and calls the backend's gemm: the default, and the reference the others are
 * tested against. BK_PREC_INT8: W to s8 with one scale per column (per output unit),
 * s_n = max_k |W[k,n]| / L (L = 127 where the CPU has VNNI, 31 on AVX2, whose 16-bit sums of
 * byte products would saturate: the CPU backend's gemm_dnnl.c); A to 8-bit integers with one scale per call,
 * s_A = max |A| / 127; the s32 sums times s_A s_n. BK_PREC_BF16: A and W rounded to bf16,
 * sums in FP32. A call whose A holds a NaN or an infinity runs in FP32, so that the value reaches
 * the caller's checks unquantised.
 * A bk_qmat is read-only after init and may be shared by threads; a bk_qws (the converted
 * activations and the execution stream) belongs to one caller at a time. */
enum bk_prec { BK_PREC_F32, BK_PREC_BF16, BK_PREC_INT8 };
typedef struct bk_qmat bk_qmat;
typedef struct bk_qws bk_qws;
struct nmt_err;

typedef struct backend_lowp_ops {
    const char *name;
    /* 1 when prec runs on this CPU (its instruction set, read at run time, within oneDNN's
     * ceiling DNNL_MAX_CPU_ISA when one is set) and this build */
    int (*supported)(int prec);
    /* W [K,N], row stride ldw, kept alive and unchanged by the caller for q's life (FP32 reads
     * it, and so does a call with non-finite activations in any precision). scales NULL:
     * computed; else N scales to use for INT8, refused (NMT_ERR_NUMERIC, naming the column)
     * unless each is finite and positive, clips no weight by more than half a step
     * (max |w| / s <= 127.5) and leaves at least half the range used (max |w| / s >= 63.5);
     * where the weights keep L = 31 levels (AVX2) a step is s · 127 / 31. NMT_ERR_ARG for a precision this CPU or build lacks, NMT_ERR_NUMERIC for a non-finite W. */
    int (*qmat_init)(bk_qmat **q, int prec, const real *W, int K, int N, int ldw, const float *scales,
                     struct nmt_err *err);
    void (*qmat_free)(bk_qmat *q);                         /* accepts NULL */
    /* room for calls of up to rows x K activations and N outputs */
    int (*qws_init)(bk_qws **w, int rows, int K, int N, struct nmt_err *err);
    void (*qws_free)(bk_qws *w);                           /* accepts NULL */
    /* C[M,N] = A[M,K] (row stride lda) · Ŵ + beta C (row stride ldc); beta 0 or 1 */
    void (*qgemm)(bk_qws *w, int M, const real *A, int lda, const bk_qmat *q, real beta, real *C, int ldc);
} backend_lowp_ops;


/* ==== mixed-precision training: bf16 products, FP32 master weights =============================
 * (Micikevicius et al. 2018; docs/TRAINING.md, "bf16 training"). A bk_mix keeps bf16 copies of
 * parts of a parameter arena P (the weight matrices the products read), made again by mix_sync
 * after every change of P (each optimizer step). With a set in a context (bk_ctx.mix), every
 * product mm makes through that context runs in bf16 with
 * FP32 sums: an operand that lies inside a kept part is read from its copy, any other (activations,
 * gradients) is rounded to bf16 at the call (to nearest even; NaN and infinities kept), and C,
 * beta 0 or 1, stays FP32, so that gradients accumulate in FP32. Every other kernel (the
 * element-wise ones, the attention's, the optimizer) is unchanged. One set serves one thread and
 * its parallel loops; the converted operands go into per-thread buffers that grow to the largest
 * operand seen (the first batches) and are then reused. */
typedef struct bk_mix bk_mix;
typedef struct backend_mix_ops {
    /* P [n], kept alive by the caller; parts: nparts (offset, length) pairs of P, in elements, that
     * products read as weights. NMT_ERR_ARG when bf16 does not run on this CPU or build. */
    int (*init)(bk_mix **m, const real *P, size_t n, const size_t (*parts)[2], int nparts, struct nmt_err *err);
    void (*free)(bk_mix *m);                                /* accepts NULL */
    void (*sync)(bk_mix *m);                                /* the parts' copies made again from P */
    /* mm's contract (backend_ops.gemm) in bf16; beta other than 0 or 1 runs in FP32 */
    void (*gemm)(bk_mix *m, int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb,
                 real beta, real *C, int ldc);
    /* Room for the bf16 form of X [rows, cols] (dense rows), which the caller writes, rounded as
     * the products round (to nearest even; the readout's gradient rows, which a kernel rounds in
     * the pass that makes them and two products then read): until release, a product whose
     * operand lies in X reads it from there instead of rounding X again. NULL (no memory, or an
     * FP32 build): the products round X themselves. One hold at a time. */
    uint16_t *(*hold)(bk_mix *m, const real *X, int rows, int cols);
    void (*release)(bk_mix *m);
} backend_mix_ops;

typedef struct backend_ops {
    const char *name;

    /* ---- memory: zero-filled, 64-byte aligned blocks (NULL when out of memory) ---- */
    void *(*alloc)(size_t bytes);
    void (*free)(void *p);                                   /* accepts NULL */
    void (*copy_in)(void *dst, const void *host, size_t bytes);
    void (*copy_out)(void *host, const void *src, size_t bytes);

    /* ---- threads ---- */
    void (*set_threads)(int n);                              /* n <= 0: one per processor */
    int (*threads)(void);
    /* body over [0, n) in chunks of grain indices handed out as threads free up, on nthreads
     * threads (<= 0: threads()); one chunk or one thread runs in the caller. */
    void (*parallel_for)(long n, long grain, int nthreads, bk_body body, void *ctx);

    /* ---- products (row-major) ---- */
    /* C[M,N] = op(A)[M,K] · op(B)[K,N] + beta C; ta/tb transpose; ld* are row strides */
    void (*gemm)(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb,
                 real beta, real *C, int ldc);
    /* gemm's contract with every row of C computed alone: its bits depend on that row of A and on
     * B, not on M or on the rows beside it (decoding's products: a sentence is translated the same
     * in any batch: docs/CLI.md, "A sentence's translation does not depend on its batch"). NULL: gemm already is (or the backend cannot be). */
    void (*gemm_rows)(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb,
                      real beta, real *C, int ldc);
    /* C[N] += the sum of the M rows of A (stride lda) */
    void (*colsum_add)(real *C, const real *A, int M, int N, int lda);

    /* ---- element-wise: y = f(x) over n; y may be x ---- */
    void (*vexp)(real *y, const real *x, int n);

    /* ---- element-wise over R rows of cols; each buffer has its own row stride (ld*), so that a
     * kernel can read or write one part of wider rows (a state row [s | c | α | d], one direction
     * of an annotation row). An output may be one of the inputs (same pointer, same stride). ---- */
    /* y = 0 */
    void (*zero_rows)(real *y, int ldy, int R, int cols);
    /* y = x (x and y do not overlap) */
    void (*copy_rows)(real *y, int ldy, const real *x, int ldx, int R, int cols);
    /* y = f(x + b), b one row of cols added to every row (b NULL: y = f(x)) */
    void (*act_rows)(int f, real *y, int ldy, const real *x, int ldx, const real *b, int R, int cols);
    /* dx = dy ∘ f' given the activation's output y: tanh dy (1 - y²), sigmoid dy y (1 - y),
     * identity dy */
    void (*act_grad_rows)(int f, real *dx, int lddx, const real *dy, int lddy, const real *y, int ldy, int R,
                          int cols);
    /* y = a + b */
    void (*add_rows)(real *y, int ldy, const real *a, int lda, const real *b, int ldb, int R, int cols);
    /* y = a ∘ b */
    void (*mul_rows)(real *y, int ldy, const real *a, int lda, const real *b, int ldb, int R, int cols);
    /* y_r += u[r] (x_r - z_r), one scale per row (z NULL: y_r += u[r] x_r) */
    void (*axpy_diff_rows)(real *y, int ldy, const real *u, const real *x, int ldx, const real *z, int ldz, int R,
                           int cols);
    /* out[r] = ||x_r - z_r||: each difference in real, squared and summed in double in the order of
     * the columns (z NULL: ||x_r||) */
    void (*dist_rows)(double *out, const real *x, int ldx, const real *z, int ldz, int R, int cols);

    /* ---- GRU step (MODEL.md section 1) for B rows of n units; a row stride lda, hp stride
     * ldhp (NULL = the zero state), everything else dense [B, n] ---- */
    /* z = σ(a_z + zr_z), r = σ(a_r + zr_r), rh = r∘hp; zr [B, 2n] = hp·[U_z|U_r] */
    void (*gru_gates)(real *z, real *r, real *rh, const real *a, int lda, const real *zr, const real *hp,
                      int ldhp, int B, int n);
    /* hc = tanh(a_h + uq) (a points at a_h; uq = rh·U_h), h = hp + z∘(hc - hp) (stride ldh);
     * rows with mask[b] == 0 copy hp (mask NULL: every row is real) */
    void (*gru_state)(real *h, int ldh, real *hc, const real *z, const real *a, int lda, const real *uq,
                      const real *hp, int ldhp, const unsigned char *mask, int B, int n);
    /* from g = dL/dh (stride n): da_z and da_h into da (stride ldda), dhp += g∘(1 - z); masked rows
     * get da = 0 and pass g to dhp */
    void (*gru_grad_state)(real *da, int ldda, real *dhp, const real *g, const real *z, const real *hc,
                           const real *hp, int ldhp, const unsigned char *mask, int B, int n);
    /* from dq = da_h·U_h^T: dhp += dq∘r, da_r = dq∘hp∘r(1 - r); masked rows untouched */
    void (*gru_grad_reset)(real *da, int ldda, real *dhp, const real *dq, const real *r, const real *hp,
                           int ldhp, const unsigned char *mask, int B, int n);

    /* ---- attention (nn/attention.h): energies, softmax over each row's real source positions,
     * context; backward recomputes tanh; tmp holds B*Tx reals ---- */
    void (*attn_forward)(real *alpha, real *ctx, const real *UaH, const real *q, const real *v, const real *H,
                         const int *xlen, const int *src, const bk_attn *a);
    void (*attn_backward)(real *dq, real *dUaH, real *dH, real *dv_rows, const real *dctx, const real *dalpha,
                          const real *alpha, const real *UaH, const real *q, const real *v, const real *H,
                          const int *xlen, const bk_attn *a, real *tmp);

    /* ξ of Markov / LocFer (nn/decoder.h xi_build_rows): xi [H, Tx, 2k+1] holds, for each real
     * position j < len[b] of row b, src[b, j-k .. j+k] (rows ld apart), zero outside the sentence */
    void (*attn_window)(real *xi, const real *src, int ld, const int *len, int H, int Tx, int k);
    /* its backward: dsrc [B, Tx] += what each window entry of dxi read */
    void (*attn_window_backward)(real *dsrc, const real *dxi, const int *len, int B, int Tx, int k);

    /* ---- the Transformer (nn/transformer.h) ---- */
    /* y = LN(x) = gamma ∘ (x - μ) / sqrt(σ² + eps) + beta per row of cols (σ² the biased
     * variance, μ and σ² summed in double); stats [R, 2] = (μ, 1/sqrt(σ² + eps)) for backward */
    void (*layer_norm)(real *y, int ldy, real *stats, const real *x, int ldx, const real *gamma, const real *beta,
                       int R, int cols, real eps);
    /* From dy: dx = (or += with acc) rstd (g - mean(g) - x̂ mean(g ∘ x̂)), g = gamma ∘ dy, x̂ the
     * normalised x; gx [R, cols] (dense) = dy ∘ x̂, whose column sums are dgamma (the caller's
     * colsum_add, as dbeta's of dy) */
    void (*layer_norm_backward)(real *dx, int lddx, int acc, real *gx, const real *dy, int lddy, const real *x, int ldx,
                                const real *stats, const real *gamma, int R, int cols);
    /* Multi-head attention's weights, in place: S [n, heads, Tq, Tk] (dense) holds the energies
     * of n sentences or hypotheses; each row (o, head, i) becomes softmax(scale · S) over its
     * keys j < len (len = klen[o], or kfix when klen is NULL) and, with causal, j <= i + qoff;
     * the other entries 0. A row with no key is all 0. */
    void (*attn_softmax)(real *S, const int *klen, int kfix, int n, int heads, int Tq, int Tk, int causal, int qoff,
                         real scale);
    /* its backward: dS = scale · P ∘ (dP - Σ_j P_j dP_j) per row, for P and dP [rows, Tk]; dS may
     * be dP */
    void (*attn_softmax_backward)(real *dS, const real *P, const real *dP, long rows, int Tk, real scale);
    /* count products C_i = op(A_i)[M,K] · op(B_i)[K,N] + beta C_i (bk_batch gives each one's
     * place), each row of each computed alone, as gemm_rows */
    void (*gemm_batched)(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
                         real *C, int ldc, const bk_batch *s);
    /* dx = dy ∘ f'(x) from the activation's input x (relu, gelu, swish; also identity, tanh,
     * sigmoid) */
    void (*act_grad_x_rows)(int f, real *dx, int lddx, const real *dy, int lddy, const real *x, int ldx, int R,
                            int cols);
    /* inverted dropout's mask: m[i] = 1/(1-p) where u(seed, i) >= p, else 0, u a uniform in [0, 1)
     * on 24 bits drawn by hashing (seed, i) (splitmix64's finaliser), so that every backend
     * draws the same mask and a resumed run its own again */
    void (*dropout_mask)(real *m, long n, uint64_t seed, real p);
    /* dst row i (stride ldd) = src row ids[i] (stride lds), cols leading columns of each: the
     * search's reordering of the filled part of a key/value cache */
    void (*gather_rows_ld)(real *dst, long ldd, const real *src, long lds, const int *ids, int n, long cols);

    /* ---- readout (nn/readout.h); rows NULL = the identity ---- */
    /* Z[H,V] = row repeated */
    void (*repeat_row)(real *Z, const real *row, int H, int V);
    /* t[r,k] = max(tt[i,2k] + b[2k], tt[i,2k+1] + b[2k+1]) for i = rows[r]; which[i,k] = the winner
     * (which NULL: not kept) */
    void (*maxout)(real *t, unsigned char *which, const real *tt, const real *b, const int *rows, int N, int l);
    /* dtt[i, 2k + which[i,k]] = dt[r,k] for i = rows[r] (the losers' entries are left as they are) */
    void (*maxout_backward)(real *dtt, const real *dt, const unsigned char *which, const int *rows, int N, int l);
    /* Per row r of logits z [N,V] with target y[rows[r]]: z becomes e^{z - max}, rinv[r] =
     * 1/Σ e^{z - max}, nll[r] = -log p(y), or with label smoothing ls > 0 the smoothed loss
     * (1 - ls)(-log p(y)) + ls · (1/V) Σ_k -log p(k); lp (optional) [rows[r]] = log p(y). */
    void (*softmax_nll)(real *z, double *rinv, double *nll, real *lp, const int *rows, const int *y, int N, int V,
                        double ls);
    /* z = scale (p - q), q = (1 - ls) onehot(y) + ls/V (ls = 0: the one-hot), from softmax_nll's z
     * and rinv, and dbias += its column sums, taken per block of blk rows into part
     * [(N + blk-1)/blk, V] and then block by block; z16 (optional) [N,V] = that z rounded to bf16
     * as bf16 training's products round their operands (bk_mix_ops.hold) */
    void (*softmax_nll_backward)(real *z, real *dbias, real *part, const double *rinv, const int *rows,
                                 const int *y, int N, int V, real scale, real ls, int blk, uint16_t *z16);

    /* ---- embeddings ---- */
    /* dst[i] = table[ids[i]] for i < n, rows of cols; a negative id gives a zero row (the empty
     * previous word of a first decoding step) */
    void (*gather_rows)(real *dst, const real *table, const int *ids, int n, int cols);
    /* table[ids[i]] += src[i] for i < n where mask[i] (NULL: all), in the order of i; ids NULL:
     * table[i] += src[i] */
    void (*scatter_add_rows)(real *table, const real *src, const int *ids, const unsigned char *mask, int n,
                             int cols);
    /* table[ids[i]] = src[i] for i < n (the ids distinct): rows put back where gather_rows took
     * them (data-parallel training's summed embedding rows) */
    void (*scatter_rows)(real *table, const real *src, const int *ids, int n, int cols);
    /* dst [rows, n] (row stride n): dst[k, j] = src[ids[j]·sj + k·sk], k < rows, j < n: a
     * matrix's columns by index (sj 1, sk its row stride: a shortlist's columns of W_o), or
     * another's rows transposed (sj its row stride, sk 1: of Et) */
    void (*gather_cols)(real *dst, const real *src, const int *ids, int n, int rows, long sj, long sk);

    /* ---- optimizer; s holds the rule's state tensors ---- */
    /* Σ g² in double, in a fixed order whatever the thread count */
    double (*sumsq)(const real *g, size_t n);
    /* the rule on [lo, hi); g is read and left zero */
    void (*update)(int rule, const bk_hyper *h, real *p, real *g, real *const *s, size_t lo, size_t hi);
    /* The rule on the rows of [off, off + rows·cols) whose gradient is not all zero; the others
     * are left alone. With lag (one counter per row), a skipped row owes one decay (every state
     * times ρ) and pays what it owes before its next update. */
    void (*update_rows)(int rule, const bk_hyper *h, real *p, real *g, real *const *s, int ns, size_t off,
                        int rows, int cols, unsigned *lag);
    /* pays every owed decay of ns state tensors (s[i] *= ρ, lag times), then lag = 0 */
    void (*settle_rows)(real *const *s, int ns, real rho, size_t off, int rows, int cols, unsigned *lag);

    /* ---- beam search: one scan per row of z [H,V] ---- */
    /* lse[r] = log Σ_v e^{z_v} (logp: z holds log-probabilities already, an ensemble's combined
     * scores, and lse[r] = 0); the row's candidates, every word v != skip whose lp = fl(z_v - lse)
     * reaches the need[r]-th best lp of the row, into lp/v [r*cap ...] and their count into n[r]
     * (-1 when ties make more than cap). heap: scratch of H*kmax items (kmax >= every need). */
    void (*topk_rows)(int *n, real *lp, int *v, real *lse, const real *z, int H, int V, const int *need,
                      int cap, int skip, topk_item *heap, int kmax, int logp);
    /* An ensemble's scores: y[r] = w·fl(z[r] - lse_r) (first), else y[r] += that, with lse_r =
     * log Σ_v e^{z[r,v]} as topk_rows takes it; y and z are [H,V]. The difference is rounded
     * before it is weighted, so that two weights of 1/2 on one model give its log-probabilities
     * bit for bit. */
    void (*logp_acc_rows)(real *y, const real *z, int H, int V, real w, int first);

    /* ---- products in other precisions (NULL: this backend has none, and asking for one is an
     * error its caller reports): the converted weights of decoding, and bf16 training ---- */
    const backend_lowp_ops *lowp;
    const backend_mix_ops *mix;

    /* ---- a milestone of the layers (enum bk_mark), for a backend that counts or traces what
     * each update or search step costs; NULL: nobody listens ---- */
    void (*mark)(int what);
} backend_ops;

/* ==== the compute context (context.c) ===========================================================
 * Where and how a model's kernels run: the backend table, its device, and the precision of the
 * products. A model owns one (nn/model.h); a decoder or a trainer works on a copy of it that adds
 * its own precision (rows, bf16 training's copies, the scratch of lower-precision products), so
 * that two models on two devices, or a model and a host-side aligner, live side by side in one
 * process. The layers receive it as their first argument and never look for a current one. A
 * context with rows, mix or qws set belongs to one thread at a time (its workspaces do). */
typedef struct bk_ctx {
    const backend_ops *b; /* every kernel call follows this table */
    int device;           /* the backend's device number (cuda:N); 0 for the CPU and the simulator */
    int rows;             /* FP32 products by gemm_rows, each row alone (decoding: a sentence's
                           * translation does not depend on its batch) */
    bk_mix *mix;          /* bf16 training: every product in bf16 with FP32 sums */
    bk_qws *qws;          /* lower-precision decoding: room for the typed weights' products */
} bk_ctx;

/* The context new models get: the CPU unless NMT_DEVICE or nmt_set_device named another.
 * Only model construction and the tests read it; the layers never do. */
const bk_ctx *bk_ctx_default(void);
/* The host's context: for work that runs on the CPU whatever device the models use (the IBM
 * aligner, host-side tests). */
const bk_ctx *bk_ctx_cpu(void);
/* Makes b the default for models made afterwards (NULL: the CPU). */
void bk_ctx_set_default(const backend_ops *b, int device);
const backend_ops *backend_cpu(void);
/* Makes the backend called name the default ("cpu", "devsim"; "cuda[:N]" where built with it):
 * NMT_ERR_ARG naming what this build has when there is none by that name. */
int backend_select(const char *name, struct nmt_err *err);
/* NMT_ERR_ARG when NMT_DEVICE named no backend of this build (read when the library loaded) */
int backend_env_check(struct nmt_err *err);

/* ==== typed weights ===============================================================================
 * A weight matrix as a product reads it: its FP32 data [K, N] (dense, on the context's device)
 * and, where a model made one (nn/weights.h), a converted form in another precision with its
 * scales. mmw chooses the kernel from the weight: its converted form when it has one, else FP32. */
typedef struct bk_weight {
    const real *data;   /* FP32 [K, N] */
    int K, N;           /* the shape; 0 when only data is known (a training view) */
    int dtype;          /* enum bk_prec of q */
    const bk_qmat *q;   /* the converted form, NULL for FP32 */
} bk_weight;

/* a weight known only by its FP32 data */
static inline bk_weight bk_w32(const real *W)
{
    bk_weight w = {W, 0, 0, BK_PREC_F32, NULL};
    return w;
}

/* C[M,N] = op(A)[M,K] · op(B)[K,N] + beta C in the context's precision: bf16 training's, or FP32
 * by gemm_rows (each row alone) or by the backend's gemm. */
static inline void mm(const bk_ctx *x, int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B,
                      int ldb, real beta, real *C, int ldc)
{
    if (x->mix) x->b->mix->gemm(x->mix, ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
    else if (x->rows && x->b->gemm_rows) x->b->gemm_rows(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
    else x->b->gemm(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
}

/* C[M,N] = A[M,K] · W + beta C (beta 0 or 1) by a weight of shape [K, N]: in its own precision
 * when it carries a converted form of that shape (the context then has the scratch), else as mm. */
static inline void mmw(const bk_ctx *x, int M, int N, int K, const real *A, int lda, bk_weight w, real beta, real *C,
                       int ldc)
{
    if (w.q && w.K == K && w.N == N) {
        x->b->lowp->qgemm(x->qws, M, A, lda, w.q, beta, C, ldc);
        return;
    }
    mm(x, 0, 0, M, N, K, A, lda, w.data, N, beta, C, ldc);
}

static inline void colsum_add(const bk_ctx *x, real *C, const real *A, int M, int N, int lda)
{
    x->b->colsum_add(C, A, M, N, lda);
}

/* the layers' milestones, for backend_ops.mark */
enum bk_mark { BK_MARK_UPDATE, BK_MARK_STEP, BK_MARK_COUNT };
static inline void backend_mark(const bk_ctx *x, int what)
{
    if (x->b->mark) x->b->mark(what);
}

#ifdef __cplusplus
}
#endif

#endif
