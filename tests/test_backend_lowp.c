/* test_backend_lowp.c: the low-precision products of the backend (backend.h, "products in lower
 * precision"), called through the interface, against its FP32 product on the same weights, with
 * an error bound derived from the quantisation steps; the checks of given scales (a deliberately
 * bad scale is refused, naming its column); non-finite activations; a CPU without the
 * instructions refuses the precision. Odd sizes and row strides leave vector tails. int8 is
 * checked in the form this CPU runs (8-bit weights with VNNI; 6-bit ones and u8 activations on
 * AVX2: run under ONEDNN_MAX_CPU_ISA=AVX2 for the latter, as tests/cli/kernels.sh does), with
 * products at the ends of both ranges, where the AVX2 kernel's 16-bit sums would saturate if the
 * weights kept more bits, checked exactly. */
/* kernel sets: all: int8 and bf16 products against FP32 (tests/cli/kernels.sh) */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cpu/dnnl_cpu.h"
#include "base/err.h"
#include "base/rng.h"
#include "helpers.h"
#include "test.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

static const backend_lowp_ops *lp;
static rng R;
static int L; /* the largest |q(W)| of an int8 product on this CPU: 127 (VNNI) or 31 (AVX2) */

enum { K = 203, N = 77, LDW = 80, M = 23, LDA = 211, LDC = 81, ROWS = 40 };

static float col_absmax(const real *W, int n)
{
    float m = 0;
    for (int k = 0; k < K; k++) m = fmaxf(m, fabsf(W[(size_t)k * LDW + n]));
    return m;
}

/* The largest error allowed at C[i,n] against FP32. int8: |a w - â ŵ| <= |a| δw + |w| δa + δa δw
 * with the half steps δw = s_n / 2, δa = s_A / 2 (s_n = max |W[.,n]| / L, s_A = max |A| / 127). bf16 (unit roundoff u = 2^-8): each operand
 * within u relative, so |a w - â ŵ| <= |a w| (2u + u²). Both plus the FP32 sums' rounding,
 * K eps Σ|a w|. *var gets the error's variance when the roundings are independent and uniform:
 * int8 Σ (a² s_n² + w² s_A²) / 12; bf16 at most Σ (a w)² 2u² / 3. */
static double bound(int prec, const real *A, const real *W, int i, int n, double sa, double *var)
{
    double sw = col_absmax(W, n) / L, b = 0, mag = 0, u = 1.0 / 256;
    *var = 0;
    for (int k = 0; k < K; k++) {
        double a = fabs(A[(size_t)i * LDA + k]), w = fabs(W[(size_t)k * LDW + n]);
        mag += a * w;
        b += prec == BK_PREC_INT8 ? a * sw / 2 + w * sa / 2 + sa * sw / 4 : a * w * (2 * u + u * u);
        *var += prec == BK_PREC_INT8 ? (a * a * sw * sw + w * w * sa * sa) / 12 : a * a * w * w * 2 * u * u / 3;
    }
    return b + K * FLT_EPSILON * mag;
}

/* C of prec against C of FP32, with beta (C starts from the same values for both) */
static void check_prec(int prec, const char *name, real beta)
{
    nmt_err err = {0};
    real *W = test_rnd(&R, (size_t)K * LDW, -0.5, 0.5), *A = test_rnd(&R, (size_t)ROWS * LDA, -2, 2);
    real *C0 = test_rnd(&R, (size_t)ROWS * LDC, -1, 1), *Cq = malloc(sizeof(real) * ROWS * LDC);
    real *Cf = malloc(sizeof(real) * ROWS * LDC);
    bk_qmat *qf = NULL, *qq = NULL;
    bk_qws *w = NULL;
    CHECK(lp->qmat_init(&qf, BK_PREC_F32, W, K, N, LDW, NULL, &err) == 0);
    CHECKF(lp->qmat_init(&qq, prec, W, K, N, LDW, NULL, &err) == 0, "%s: %s", name, err.msg);
    CHECK(lp->qws_init(&w, ROWS, K, N, &err) == 0);
    if (!qf || !qq || !w) goto out;
    /* two row counts through the same matrix: M is set per call */
    for (int rows = M; rows <= ROWS; rows += ROWS - M) {
        memcpy(Cq, C0, sizeof(real) * ROWS * LDC);
        memcpy(Cf, C0, sizeof(real) * ROWS * LDC);
        lp->qgemm(w, rows, A, LDA, qq, beta, Cq, LDC);
        lp->qgemm(w, rows, A, LDA, qf, beta, Cf, LDC);
        double sa = 0, worst = 0;
        for (int i = 0; i < rows; i++)
            for (int k = 0; k < K; k++) sa = fmax(sa, fabs(A[(size_t)i * LDA + k]) / 127);
        int bad = 0, untouched = 0;
        double sse = 0, svar = 0; /* the errors' sum of squares, and what the rounding predicts */
        for (int i = 0; i < ROWS; i++)
            for (int n = 0; n < LDC; n++) {
                size_t at = (size_t)i * LDC + n;
                if (i >= rows || n >= N) { untouched += Cq[at] == C0[at]; continue; }
                double var, e = fabs(Cq[at] - Cf[at]), b = bound(prec, A, W, i, n, sa, &var);
                bad += !(e <= b);
                sse += e * e;
                svar += var;
                worst = fmax(worst, e / b);
            }
        CHECKF(bad == 0, "%s beta %g, %d rows: %d of %d outside the bound (worst error / bound %.3g)", name,
               (double)beta, rows, bad, rows * N, worst);
        /* the bound is for the worst case; a systematic error (a scale a few percent off, bf16 by
         * truncation) hides under it, but not under the root-mean-square error the rounding
         * predicts: int8's prediction is the expected value (1.5 times it allowed), bf16's an
         * upper bound (measured 0.65 of it; truncating instead of rounding gives 1.3) */
        double limit = prec == BK_PREC_INT8 ? 1.5 * 1.5 : 1;
        CHECKF(sse <= limit * svar, "%s beta %g, %d rows: rms error %.3g, rounding predicts %.3g", name, (double)beta,
               rows, sqrt(sse / (rows * N)), sqrt(svar / (rows * N)));
        CHECKF(untouched == ROWS * LDC - rows * N, "%s: wrote outside its %d x %d block", name, rows, N);
        printf("%s beta %g rows %d: worst error / bound %.3f, rms error / predicted %.3f\n", name, (double)beta, rows,
               worst, sqrt(sse / svar));
    }
out:
    lp->qmat_free(qf);
    lp->qmat_free(qq);
    lp->qws_free(w);
    free(W); free(A); free(C0); free(Cq); free(Cf);
}

/* Products at the ends of both ranges: W's entries ±0.5 (q(W) = ±L), row i of A the signs of
 * column i mod N times 2 (q(A) = ±127), so that every byte product of C[i, i mod N] is +127 L
 * and the sum K: exact in int8 as in FP32. On AVX2 the kernel adds four byte products into 16
 * bits first: with 8-bit weights (4 · 255 · 127, the activations shifted to u8) that saturates. */
static void check_extremes(void)
{
    nmt_err err = {0};
    real *W = test_rnd(&R, (size_t)K * LDW, -1, 1), *A = malloc(sizeof(real) * ROWS * LDA);
    real *C = malloc(sizeof(real) * ROWS * LDC);
    bk_qmat *q = NULL;
    bk_qws *w = NULL;
    NMT_ASSERT(A && C);
    for (size_t j = 0; j < (size_t)K * LDW; j++) W[j] = W[j] < 0 ? -0.5f : 0.5f;
    for (int i = 0; i < ROWS; i++)
        for (int k = 0; k < LDA; k++) A[(size_t)i * LDA + k] = k < K && W[(size_t)k * LDW + i % N] < 0 ? -2 : 2;
    if (lp->qmat_init(&q, BK_PREC_INT8, W, K, N, LDW, NULL, &err) == 0 && lp->qws_init(&w, ROWS, K, N, &err) == 0) {
        lp->qgemm(w, ROWS, A, LDA, q, 0, C, LDC);
        int bad = 0;
        double worst = 0;
        for (int i = 0; i < ROWS; i++) {
            double e = fabs(C[(size_t)i * LDC + i % N] - K);
            bad += !(e <= K * 4 * FLT_EPSILON);
            worst = fmax(worst, e);
        }
        CHECKF(bad == 0, "int8 at the ends of the ranges: %d of %d sums off K = %d by up to %g", bad, ROWS, K, worst);
        printf("int8 at the ends of the ranges (q(A) = ±127, q(W) = ±%d): %d sums of %d, largest error %g\n", L, ROWS,
               K, worst);
    } else {
        CHECKF(0, "int8: %s", err.msg);
    }
    lp->qmat_free(q);
    lp->qws_free(w);
    free(W); free(A); free(C);
}

/* given scales: the right ones are taken; a scale that clips, one that wastes half the range, a
 * zero and a NaN are refused, naming the column */
static void check_scales(void)
{
    nmt_err err = {0};
    real *W = test_rnd(&R, (size_t)K * LDW, -0.5, 0.5);
    float *s = malloc(sizeof(float) * N);
    bk_qmat *q = NULL;
    for (int n = 0; n < N; n++) s[n] = col_absmax(W, n) / 127;
    CHECKF(lp->qmat_init(&q, BK_PREC_INT8, W, K, N, LDW, s, &err) == 0, "%s", err.msg);
    lp->qmat_free(q);
    const struct { int col; float factor; } bad[] = {{5, 0.9f}, {17, 2.1f}, {0, 0}, {76, NAN}};
    for (int b = 0; b < 4; b++) {
        float keep = s[bad[b].col];
        s[bad[b].col] = isnan(bad[b].factor) ? NAN : keep * bad[b].factor;
        q = NULL;
        memset(&err, 0, sizeof err);
        int rc = lp->qmat_init(&q, BK_PREC_INT8, W, K, N, LDW, s, &err);
        char want[32];
        snprintf(want, sizeof want, "column %d:", bad[b].col);
        CHECKF(rc == NMT_ERR_NUMERIC && q == NULL, "scale x%g on column %d accepted (rc %d)", (double)bad[b].factor,
               bad[b].col, rc);
        CHECKF(strstr(err.msg, want) != NULL, "message '%s' does not name %s", err.msg, want);
        lp->qmat_free(q);
        s[bad[b].col] = keep;
    }
    free(W);
    free(s);
}

/* a NaN in the activations reaches the output row it is in, as in FP32 */
static void check_nonfinite(int prec, const char *name)
{
    nmt_err err = {0};
    real *W = test_rnd(&R, (size_t)K * LDW, -0.5, 0.5), *A = test_rnd(&R, (size_t)ROWS * LDA, -2, 2);
    real *C = calloc((size_t)ROWS * LDC, sizeof(real));
    bk_qmat *q = NULL;
    bk_qws *w = NULL;
    A[(size_t)3 * LDA + 7] = NAN;
    if (lp->qmat_init(&q, prec, W, K, N, LDW, NULL, &err) == 0 && lp->qws_init(&w, ROWS, K, N, &err) == 0) {
        lp->qgemm(w, M, A, LDA, q, 0, C, LDC);
        int nan3 = 0, finite = 0;
        for (int n = 0; n < N; n++) nan3 += isnan(C[(size_t)3 * LDC + n]);
        for (int n = 0; n < N; n++) finite += isfinite(C[(size_t)4 * LDC + n]);
        CHECKF(nan3 == N && finite == N, "%s: row with a NaN has %d NaN outputs of %d, the next row %d finite", name,
               nan3, N, finite);
    } else {
        CHECKF(0, "%s: %s", name, err.msg);
    }
    lp->qmat_free(q);
    lp->qws_free(w);
    free(W); free(A); free(C);
}

int main(void)
{
    rng_seed(&R, 23);
    lp = TX->b->lowp;
    TX->b->set_threads(2);
    L = dnnl_cpu_int8_wlevels();
    const struct { int prec; const char *name; } precs[] = {{BK_PREC_INT8, "int8"}, {BK_PREC_BF16, "bf16"}};
    for (int p = 0; p < 2; p++) {
        if (!lp->supported(precs[p].prec)) {
            /* without the instructions the precision is refused, never run slowly or wrongly */
            nmt_err err = {0};
            bk_qmat *q = NULL;
            real w1 = 1;
            CHECK(lp->qmat_init(&q, precs[p].prec, &w1, 1, 1, 1, NULL, &err) == NMT_ERR_ARG && !q);
            printf("%s: not on this CPU or build; only its refusal is checked\n", precs[p].name);
            continue;
        }
        check_prec(precs[p].prec, precs[p].name, 0);
        check_prec(precs[p].prec, precs[p].name, 1);
        check_nonfinite(precs[p].prec, precs[p].name);
    }
    if (lp->supported(BK_PREC_INT8)) {
        if (L == 127) printf("int8 form on this CPU: s8 activations, weights of 127 levels (AVX512_VNNI)\n");
        else printf("int8 form on this CPU: u8 activations with zero point 128, weights of %d levels (AVX2)\n", L);
        check_extremes();
        check_scales();
    }
    return test_done("test_backend_lowp");
}
