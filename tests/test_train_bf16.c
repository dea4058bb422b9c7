/* test_train_bf16.c: bf16 training's products (backend.h, "mixed-precision training") through the
 * backend interface. The float64 gradient check cannot hold a bf16 backward to a finite-difference
 * bound (every operand is rounded by up to 2^-9 of itself), so the bf16 step is checked against
 * two others instead:
 *  - EXACT: the FP32 step whose every product reads its two operands rounded to bf16, by this
 *    file's own rounding (frexp and nearbyint), in a backend table that differs from the CPU one
 *    only in its gemm. bf16 x bf16 products are exact in FP32, so the two differ only in the order
 *    of the FP32 sums: the loss within 1e-5, every gradient tensor within 1e-3 of its largest
 *    entry (the worst seen is about 2e-5 at these sizes). A wrong transpose, stride, operand,
 *    rounding or a stale weight copy is far outside that;
 *  - FP32: the plain step: the loss within 2e-3 relative (worst seen 5e-4), the softmax layer's
 *    weight gradient within 2e-2 of its largest entry (seen: 4e-3), the whole gradient within 0.25
 *    of its norm (seen: 3e-3 to 0.11). Upstream of the maxout no tighter bound holds: where the
 *    two units of a pair are within bf16's rounding of each other the other one can win, and
 *    the gradient then flows through it (per tensor up to 0.5 of its largest entry in a batch of
 *    21 tokens), which the exact emulation reproduces and FP32 does not.
 * For every architecture, with tied embeddings too, on two threads (the encoder's directions run
 * on threads of their own, which the current set must reach). The kernel alone: every transpose
 * pair and beta, odd sizes and row strides, a weight read from its copy, a NaN kept. The copies:
 * stale until sync, exact after it. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/err.h"
#include "base/rng.h"
#include "nn/net.h"
#include "helpers.h"
#include "test.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

static rng R;
static backend_ops exact; /* the CPU backend with products on bf16-rounded operands */

/* x rounded to 8 significant bits (bf16's), to nearest even: the rounding written another way
 * than the backend's bit arithmetic */
static real bf16_round(real x)
{
    if (!isfinite(x) || x == 0) return x;
    int e;
    double m = frexp(x, &e);
    return (real)ldexp(nearbyint(ldexp(m, 8)), e - 8);
}

/* rows x cols of X (stride ld) rounded, into a new block of the same stride */
static real *rounded(const real *X, int rows, int cols, int ld)
{
    real *Y = calloc((size_t)(rows - 1) * ld + cols, sizeof(real));
    NMT_ASSERT(Y);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) Y[(size_t)i * ld + j] = bf16_round(X[(size_t)i * ld + j]);
    return Y;
}

static void exact_gemm(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
                       real *C, int ldc)
{
    if (M <= 0 || N <= 0 || K <= 0) { backend_cpu()->gemm(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc); return; }
    real *a = rounded(A, ta ? K : M, ta ? M : K, lda), *b = rounded(B, tb ? N : K, tb ? K : N, ldb);
    backend_cpu()->gemm(ta, tb, M, N, K, a, lda, b, ldb, beta, C, ldc);
    free(a);
    free(b);
}

/* ---------------------------------------------------------------- the kernel alone */

/* C = op(A) op(B) + beta C through the bf16 set, against the exact emulation (the FP32 sums' order:
 * K eps Σ|a b|) and against FP32 ((2u + u²) Σ|a b| more, u = 2^-8), at every entry */
static void check_kernel(int ta, int tb, int beta, int weight_kept)
{
    enum { M = 37, N = 29, K = 203, PAD = 5 };
    int lda = (ta ? M : K) + PAD, ldb = (tb ? K : N) + PAD, ldc = N + 3;
    int arows = ta ? K : M, brows = tb ? N : K;
    size_t nb = (size_t)brows * ldb + 64;
    real *A = test_rnd_normal(&R, (size_t)arows * lda, 1), *P = test_rnd_normal(&R, nb, 0.5), *B = P + 64; /* B inside the arena P */
    real *C0 = test_rnd_normal(&R, (size_t)M * ldc, 1), *C16 = malloc(sizeof(real) * M * ldc), *Cx = malloc(sizeof(real) * M * ldc);
    real *Cf = malloc(sizeof(real) * M * ldc);
    size_t part[1][2] = {{0, nb}};
    bk_mix *mx = NULL;
    nmt_err err = {0};
    int rc = TX->b->mix->init(&mx, P, nb, (const size_t (*)[2])part, weight_kept, &err);
    CHECKF(rc == 0, "%s", err.msg);
    if (rc) return;
    memcpy(C16, C0, sizeof(real) * M * ldc);
    memcpy(Cx, C0, sizeof(real) * M * ldc);
    memcpy(Cf, C0, sizeof(real) * M * ldc);
    TX->b->mix->gemm(mx, ta, tb, M, N, K, A, lda, B, ldb, (real)beta, C16, ldc);
    exact_gemm(ta, tb, M, N, K, A, lda, B, ldb, (real)beta, Cx, ldc);
    backend_cpu()->gemm(ta, tb, M, N, K, A, lda, B, ldb, (real)beta, Cf, ldc);
    double worst_x = 0, worst_f = 0, u = 1.0 / 256;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double mag = beta ? fabs(C0[(size_t)i * ldc + j]) : 0;
            for (int k = 0; k < K; k++)
                mag += fabs(A[ta ? (size_t)k * lda + i : (size_t)i * lda + k] * B[tb ? (size_t)j * ldb + k : (size_t)k * ldb + j]);
            double c = C16[(size_t)i * ldc + j], sums = 2 * K * FLT_EPSILON * mag;
            worst_x = fmax(worst_x, fabs(c - Cx[(size_t)i * ldc + j]) / sums);
            worst_f = fmax(worst_f, fabs(c - Cf[(size_t)i * ldc + j]) / (sums + (2 * u + u * u) * mag));
        }
    CHECKF(worst_x <= 1, "ta %d tb %d beta %d kept %d: error %.3g of the FP32 sums' bound against the emulation",
           ta, tb, beta, weight_kept, worst_x);
    CHECKF(worst_f <= 1, "ta %d tb %d beta %d kept %d: error %.3g of the bf16 bound against FP32", ta, tb, beta,
           weight_kept, worst_f);
    /* a NaN in A reaches its row of C, as in FP32 (the training step then skips the update) */
    A[0] = NAN;
    TX->b->mix->gemm(mx, ta, tb, M, N, K, A, lda, B, ldb, (real)beta, C16, ldc);
    CHECKF(isnan(C16[0]) && isnan(C16[N - 1]), "ta %d tb %d: a NaN operand gave %g", ta, tb, (double)C16[0]);
    TX->b->mix->free(mx);
    free(A); free(P); free(C0); free(C16); free(Cx); free(Cf);
}

/* ---------------------------------------------------------------- a training step */

#define NS 4
static int sl[NS] = {5, 9, 2, 7}, tl[NS] = {6, 3, 8, 4};

static void make_batch(batch *bt, int V)
{
    bt->B = NS; bt->Tx = 9; bt->Ty = 8;
    bt->x = calloc((size_t)bt->Tx * NS, sizeof(int));
    bt->y = calloc((size_t)bt->Ty * NS, sizeof(int));
    bt->xlen = sl;
    bt->ylen = tl;
    for (int b = 0; b < NS; b++) {
        for (int t = 0; t < sl[b]; t++) bt->x[t * NS + b] = t == sl[b] - 1 ? 0 : 1 + (int)rng_below(&R, V - 1);
        for (int t = 0; t < tl[b]; t++) bt->y[t * NS + b] = t == tl[b] - 1 ? 0 : 1 + (int)rng_below(&R, V - 1);
    }
}

/* the loss and the gradient G of one step, in FP32 (mx NULL) or through the set mx, on the
 * model's backend or on b (the exact emulation's, a context of its own) */
static double step(const nmt_model *m, const batch *bt, bk_mix *mx, real *G, const backend_ops *b)
{
    params g;
    params_point(&g, &m->pt, G);
    memset(G, 0, sizeof(real) * m->pt.total);
    net_ws ws = {0};
    bk_ctx x = m->cx;
    x.mix = mx;
    if (b) x.b = b;
    NMT_ASSERT(net_ws_reserve(&x, &ws, &m->cfg, bt->B, bt->Tx, bt->Ty, NULL) == 0);
    double loss = net_forward(&x, &ws, &m->cfg, &m->p, bt, NULL) + net_extra_cost(&ws, &m->cfg);
    net_backward(&x, &ws, &m->cfg, &m->p, &g, bt, (real)1 / bt->B);
    net_ws_free(&ws);
    return loss;
}

/* the largest |a - b| of each tensor over its largest |b|, the worst tensor's into *worst; the
 * whole gradient's ||a - b|| / ||b|| into *whole */
static void compare(const nmt_model *m, const real *a, const real *b, double *worst, const char **which, double *whole)
{
    double d2 = 0, b2 = 0;
    *worst = 0;
    for (int i = 0; i < m->pt.n; i++) {
        const tensor_info *t = &m->pt.t[i];
        size_t n = (size_t)t->rows * t->cols;
        double d = 0, mag = 0, td2 = 0, tb2 = 0;
        for (size_t k = 0; k < n; k++) {
            double e = a[t->offset + k] - b[t->offset + k];
            d = fmax(d, fabs(e));
            mag = fmax(mag, fabs(b[t->offset + k]));
            td2 += e * e; tb2 += (double)b[t->offset + k] * b[t->offset + k];
        }
        d2 += td2; b2 += tb2;
        double r = mag > 0 ? d / mag : d;
        if (r > *worst) { *worst = r; *which = t->name; }
    }
    if (whole) *whole = sqrt(d2 / b2);
}

static nmt_model *model_of(int arch, int tied)
{
    nmt_config c = {arch, 23, 29, 12, 16, 10, tied ? 12 : 8, 2, 1.0, 1.0, tied, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    nmt_model *m = NULL;
    nmt_err err;
    char **w = malloc(sizeof(char *) * 29);
    for (int i = 0; i < 29; i++) { w[i] = malloc(16); snprintf(w[i], 16, i == 0 ? "</s>" : i == 1 ? "<unk>" : "w%d", i); }
    NMT_ASSERT(nmt_model_create(&m, &c, (const char *const *)w, (const char *const *)w, 3, &err) == 0);
    for (int i = 0; i < 29; i++) free(w[i]);
    free(w);
    /* wider weights than Appendix B's, so that the products carry the step */
    for (size_t i = 0; i < m->pt.total; i++) m->P[i] = (real)(0.3 * rng_normal(&R));
    return m;
}

static bk_mix *mix_of(const nmt_model *m)
{
    size_t parts[MAX_TENSORS][2];
    int n = param_table_product_parts(&m->pt, &m->cfg, parts);
    bk_mix *mx = NULL;
    nmt_err err = {0};
    int rc = TX->b->mix->init(&mx, m->P, m->pt.total, (const size_t (*)[2])parts, n, &err);
    CHECKF(rc == 0, "%s", err.msg);
    return mx;
}

/* the softmax layer's weight gradient: the largest |a - b| over the largest |b| */
static double softmax_weights(const nmt_model *m, const real *a, const real *b)
{
    const tensor_info *t = param_table_find(&m->pt, m->cfg.tied_emb ? "Et" : "out_W");
    double d = 0, mag = 0;
    for (size_t k = 0; k < (size_t)t->rows * t->cols; k++) {
        d = fmax(d, fabs(a[t->offset + k] - b[t->offset + k]));
        mag = fmax(mag, fabs(b[t->offset + k]));
    }
    return d / mag;
}

static void check_step(int arch, int tied)
{
    nmt_model *m = model_of(arch, tied);
    batch bt;
    make_batch(&bt, 23);
    size_t n = m->pt.total;
    real *G16 = malloc(sizeof(real) * n), *Gx = malloc(sizeof(real) * n), *Gf = malloc(sizeof(real) * n);
    bk_mix *mx = mix_of(m);
    double l16 = step(m, &bt, mx, G16, NULL), lf = step(m, &bt, NULL, Gf, NULL);
    double lx = step(m, &bt, NULL, Gx, &exact);
    double dx, df, whole, sw = softmax_weights(m, G16, Gf);
    const char *wx = "-", *wf = "-", *name = nmt_arch_name(arch), *how = tied ? " tied" : "";
    compare(m, G16, Gx, &dx, &wx, NULL);
    compare(m, G16, Gf, &df, &wf, &whole);
    CHECKF(fabs(l16 - lx) <= 1e-5 * fabs(lx), "%s%s: loss %.9g, exact emulation %.9g", name, how, l16, lx);
    CHECKF(dx <= 1e-3, "%s%s: gradient %s off the exact emulation by %.3g of its largest entry", name, how, wx, dx);
    CHECKF(fabs(l16 - lf) <= 2e-3 * fabs(lf), "%s%s: loss %.9g, FP32 %.9g", name, how, l16, lf);
    CHECKF(sw <= 2e-2, "%s%s: the softmax layer's weight gradient off FP32 by %.3g of its largest entry", name, how, sw);
    CHECKF(whole <= 0.25, "%s%s: the gradient off FP32 by %.3g of its norm", name, how, whole);
    printf("%-14s%-5s loss off exact %.1e, FP32 %.1e; gradient off exact %.1e (%s, the worst tensor), FP32: "
           "softmax weights %.1e, whole %.1e (%s %.1e)\n", name, how, fabs(l16 - lx) / fabs(lx), fabs(l16 - lf) / fabs(lf),
           dx, wx, sw, whole, wf, df);
    TX->b->mix->free(mx);
    free(G16); free(Gx); free(Gf);
    free(bt.x); free(bt.y);
    nmt_model_free(m);
}

/* The copies are what the last sync made: after the weights move, the step reads the old
 * copies (far from the exact emulation on the new weights) until sync. */
static void check_sync(void)
{
    nmt_model *m = model_of(NMT_ARCH_RNNSEARCH, 0);
    batch bt;
    make_batch(&bt, 23);
    size_t n = m->pt.total;
    real *G16 = malloc(sizeof(real) * n), *Gx = malloc(sizeof(real) * n);
    bk_mix *mx = mix_of(m);
    for (size_t i = 0; i < n; i++) m->P[i] += (real)(0.1 * rng_normal(&R)); /* an update */
    step(m, &bt, NULL, Gx, &exact);
    double stale, fresh;
    const char *w = "-";
    step(m, &bt, mx, G16, NULL);
    compare(m, G16, Gx, &stale, &w, NULL);
    TX->b->mix->sync(mx);
    step(m, &bt, mx, G16, NULL);
    compare(m, G16, Gx, &fresh, &w, NULL);
    CHECKF(stale > 1e-2, "before sync the step read the new weights (%.3g off)", stale);
    CHECKF(fresh <= 1e-3, "after sync: %s %.3g off the exact emulation", w, fresh);
    TX->b->mix->free(mx);
    free(G16); free(Gx);
    free(bt.x); free(bt.y);
    nmt_model_free(m);
}

int main(void)
{
    rng_seed(&R, 29);
    TX->b->set_threads(2);
    exact = *backend_cpu();
    exact.gemm = exact_gemm;
    if (!TX->b->lowp->supported(BK_PREC_BF16)) {
        /* refused, never run slowly or wrongly (tests/cli/train_bf16.sh refuses the option too) */
        bk_mix *mx = NULL;
        nmt_err err = {0};
        real p = 1;
        size_t part[1][2] = {{0, 1}};
        CHECK(TX->b->mix->init(&mx, &p, 1, (const size_t (*)[2])part, 1, &err) == NMT_ERR_ARG && !mx);
        CHECK(strstr(err.msg, "AVX512_BF16") != NULL);
        printf("bf16: not on this CPU or build; only its refusal is checked\n");
        return test_done("test_train_bf16");
    }
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int beta = 0; beta < 2; beta++) check_kernel(ta, tb, beta, 1);
    check_kernel(0, 1, 1, 0); /* B rounded at the call instead */
    for (int arch = 0; arch < NMT_ARCH_RNN_COUNT; arch++) check_step(arch, 0);
    check_step(NMT_ARCH_RNNSEARCH, 1);
    check_sync();
    return test_done("test_train_bf16");
}
