/* gemm_dnnl.c: the CPU's low-precision products (backend.h, "products in lower precision"):
 * int8 (8-bit integer sums into s32) and bf16 (-> FP32) matrix products through oneDNN's matmul,
 * for weights converted once at load. bf16 runs only where the CPU has AVX512_BF16 (or AMX);
 * FP32 is the default and goes to the backend's gemm.
 * Scales (int8): s_n = max_k |W[k,n]| / L per column, s_m = max_k |A[m,k]| / 127 per row, and
 * C = s_n Σ_k q(A)[m,k] q(W)[k,n] · s_m (int8_rows). Two forms,
 * by what the CPU (within oneDNN's ceiling ONEDNN_MAX_CPU_ISA) has:
 *   AVX512_VNNI: q(A) in s8, L = 127 (vpdpbusd sums the byte products in s32, exactly);
 *   AVX2 (and AVX-512 without VNNI): q(A) + 128 in u8 with a zero point of 128, and L = 31, on
 *   our own kernel (qgemm_u8.c). AVX2 multiplies with vpmaddubsw, which adds each pair of u8 x s8
 *   products in s16 and saturates: 2 · 255 · 127 would overflow (oneDNN's s8 x s8 product shifts
 *   the activations to u8 the same way: wrong sums, tests/test_backend_lowp.c). With L = 31 the
 *   kernel adds two such pairs in s16 before widening (4 · 255 · 31 = 31,620 fits): fewer
 *   instructions on the ports that multiply, for a bit of the weights (docs/results/lowp.md,
 *   "int8 decoding on an AVX2 CPU": its speed against oneDNN's kernels, BLEU against L = 63). The
 *   weights lose bits rather than the activations: one scale per column costs less there than
 *   one per call does on the activations (n-best scores 0.026 per token off FP32 against 0.053
 *   the other way at 7 bits, tests/cli/lowp.sh's model). The zero point takes 128 Σ_k q(W)[k,n] off the s32 sums,
 *   exactly. NMT_INT8=onednn runs this form on oneDNN's int8 matmul instead. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu.h"
#include "backend/cpu/dnnl_cpu.h"
#include "backend/cpu/qgemm_u8.h"
#include "base/err.h"

struct bk_qmat {
    int prec, K, N, ldw;
    int u8;                        /* BK_PREC_INT8: the AVX2 form (u8 activations, 6-bit weights) */
    const real *W;                 /* the caller's FP32 weights: BK_PREC_F32 and non-finite calls */
    float *scale;                  /* BK_PREC_INT8: one per column, the step of q(W) */
#ifndef NMT_REAL_DOUBLE
    qu8_weights pk;                /* the u8 form's weights, packed for our kernel (qgemm_u8.c) */
    dnnl_memory_t wei;             /* the others' converted weights, in oneDNN's packed layout */
    dnnl_primitive_t mm[2];        /* beta 0, beta 1 (a sum post-op); M and the strides at run time */
#endif
};

struct bk_qws {
    int rows, K, N;
    void *a;                       /* rows x K converted activations (s8 or bf16) */
    float *osc;                    /* N output scales of one call */
    float *rsc;                    /* int8: rows scales of the activations, one a row */
    float *tmp;                    /* int8 on oneDNN: trows x N products before the rows' scales */
    int trows;
#ifndef NMT_REAL_DOUBLE
    dnnl_stream_t strm;
    dnnl_cpu_mems mem[3];          /* the activations', outputs' and scales' memory objects */
#endif
};

static int numeric_check(const real *W, int K, int N, int ldw, struct nmt_err *err)
{
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++)
            if (!isfinite(W[(size_t)k * ldw + n]))
                return nmt_fail(err, NMT_ERR_NUMERIC, "weight [%d,%d] is %g", k, n, (double)W[(size_t)k * ldw + n]);
    return 0;
}

static void lowp_qmat_free(bk_qmat *q);

#ifndef NMT_REAL_DOUBLE
/* max |x| over R rows of cols (stride ld), in eight partial maxima that vectorise; NaN when some
 * element is not finite */
static float rows_absmax(const real *x, int ld, int R, int cols)
{
    float m[8] = {0}, r = 0, bad = 0;
    for (int i = 0; i < R; i++) {
        const real *row = x + (size_t)i * ld;
        int j = 0;
        for (; j + 8 <= cols; j += 8)
            for (int t = 0; t < 8; t++) {
                m[t] = fabsf(row[j + t]) > m[t] ? fabsf(row[j + t]) : m[t];
                bad += row[j + t] - row[j + t]; /* 0, or NaN for a NaN or an infinity */
            }
        for (; j < cols; j++) { r = fabsf(row[j]) > r ? fabsf(row[j]) : r; bad += row[j] - row[j]; }
    }
    for (int t = 0; t < 8; t++) r = m[t] > r ? m[t] : r;
    return bad == 0 ? r : NAN;
}

/* q = round(x · inv) in [-127, 127], plus zero, R rows of cols from stride ldx into rows of ldq
 * bytes (a pad past cols holds zero): s8 for zero 0 (the byte of a negative q is its two's
 * complement), u8 for zero 128 */
static void quant_rows(uint8_t *q, const real *x, int ldx, int R, int cols, int ldq, float inv, int zero)
{
    for (int i = 0; i < R; i++) {
        const real *row = x + (size_t)i * ldx;
        uint8_t *out = q + (size_t)i * ldq;
        for (int j = 0; j < cols; j++) {
            float v = nearbyintf(row[j] * inv);
            out[j] = (uint8_t)((int)(v > 127 ? 127 : v < -127 ? -127 : v) + zero);
        }
        memset(out + cols, zero, (size_t)(ldq - cols));
    }
}


/* the column scales, computed or checked (see backend.h: both in steps of 127 levels), kept as the
 * steps of this form's weights (127 or 31 levels) */
static int scales_set(bk_qmat *q, const real *W, const float *given, struct nmt_err *err)
{
    for (int n = 0; n < q->N; n++) {
        float m = 0;
        for (int k = 0; k < q->K; k++) m = fmaxf(m, fabsf(W[(size_t)k * q->ldw + n]));
        float s = given ? given[n] : m > 0 ? m / 127 : 1;
        if (!(isfinite(s) && s > 0))
            return nmt_fail(err, NMT_ERR_NUMERIC, "int8 weights: column %d: scale %g is not a positive number", n,
                            (double)s);
        if (m / s > 127.5f || (m > 0 && m / s < 63.5f))
            return nmt_fail(err, NMT_ERR_NUMERIC, "int8 weights: column %d: scale %g maps the largest |w| %g to %g "
                            "steps (a scale must put it within [63.5, 127.5])", n, (double)s, (double)m, (double)(m / s));
        q->scale[n] = q->u8 ? s * 127 / U8_WLEVELS : s;
    }
    return 0;
}

/* W quantised (int8) or rounded (bf16) into a dense [K,N] host block */
static void *weights_convert(const bk_qmat *q, const real *W)
{
    size_t esz = q->prec == BK_PREC_INT8 ? 1 : 2;
    void *h = malloc((size_t)q->K * q->N * esz);
    if (!h) return NULL;
    for (int k = 0; k < q->K; k++) {
        const real *row = W + (size_t)k * q->ldw;
        if (q->prec == BK_PREC_BF16) { dnnl_cpu_bf16_rows((uint16_t *)h + (size_t)k * q->N, row, q->ldw, 1, q->N); continue; }
        int8_t *out = (int8_t *)h + (size_t)k * q->N;
        for (int n = 0; n < q->N; n++) {
            float v = nearbyintf(row[n] / q->scale[n]), L = q->u8 ? U8_WLEVELS : 127;
            out[n] = (int8_t)(v > L ? L : v < -L ? -L : v);
        }
    }
    return h;
}

/* the activations' type in q's products */
static dnnl_data_type_t act_type(const bk_qmat *q)
{
    return q->prec == BK_PREC_BF16 ? dnnl_bf16 : q->u8 ? dnnl_u8 : dnnl_s8;
}

/* the matmul of this precision for beta 0 or 1: M and the row strides of A and C known at run
 * time, the weights in the layout oneDNN prefers (pd's weights_md) */
static dnnl_status_t matmul_make(dnnl_primitive_t *p, dnnl_primitive_desc_t *pd_out, const bk_qmat *q, int beta)
{
    dnnl_data_type_t dt = q->prec == BK_PREC_INT8 ? dnnl_s8 : dnnl_bf16;
    dnnl_memory_desc_t amd, wmd, cmd;
    dnnl_dims_t ad = {DNNL_RUNTIME_DIM_VAL, q->K}, as = {q->K, 1}, wd = {q->K, q->N};
    dnnl_dims_t cd = {DNNL_RUNTIME_DIM_VAL, q->N}, cs = {DNNL_RUNTIME_DIM_VAL, 1};
    dnnl_status_t st = dnnl_memory_desc_init_by_strides(&amd, 2, ad, act_type(q), as);
    if (st == dnnl_success) st = dnnl_memory_desc_init_by_tag(&wmd, 2, wd, dt, dnnl_format_tag_any);
    if (st == dnnl_success) st = dnnl_memory_desc_init_by_strides(&cmd, 2, cd, dnnl_f32, cs);
    if (st == dnnl_success)
        st = dnnl_cpu_matmul(p, pd_out, &amd, &wmd, &cmd, beta, q->prec == BK_PREC_INT8, q->u8 ? U8_ZERO : 0);
    return st;
}

/* the converted weights reordered into the layout pd asks for */
static dnnl_status_t weights_pack(bk_qmat *q, dnnl_primitive_desc_t pd, void *host)
{
    dnnl_memory_desc_t umd;
    dnnl_dims_t wd = {q->K, q->N};
    dnnl_memory_t user = NULL;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t re = NULL;
    dnnl_stream_t s = NULL;
    dnnl_engine_t engine = dnnl_cpu_engine();
    const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    dnnl_status_t st = dnnl_memory_desc_init_by_tag(&umd, 2, wd, q->prec == BK_PREC_INT8 ? dnnl_s8 : dnnl_bf16, dnnl_ab);
    if (st == dnnl_success) st = dnnl_memory_create(&user, &umd, engine, host);
    if (st == dnnl_success) st = dnnl_memory_create(&q->wei, want, engine, DNNL_MEMORY_ALLOCATE);
    if (st == dnnl_success) st = dnnl_reorder_primitive_desc_create(&rpd, &umd, engine, want, engine, NULL);
    if (st == dnnl_success) st = dnnl_primitive_create(&re, rpd);
    if (st == dnnl_success) st = dnnl_stream_create(&s, engine, dnnl_stream_default_flags);
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, q->wei}};
    if (st == dnnl_success) st = dnnl_primitive_execute(re, s, 2, args);
    if (st == dnnl_success) st = dnnl_stream_wait(s);
    dnnl_stream_destroy(s);
    dnnl_primitive_destroy(re);
    dnnl_primitive_desc_destroy(rpd);
    dnnl_memory_destroy(user);
    return st;
}

/* NMT_INT8=onednn runs the u8 form on oneDNN's kernels instead of ours (the comparison of
 * bench/int8_avx2.sh, and a way round ours should it ever misbehave); 1 for ours, 0 for
 * oneDNN's, -1 for a value that names neither */
static int u8_ours(void)
{
    const char *v = getenv("NMT_INT8");
    return !v || !*v || !strcmp(v, "nmt") ? 1 : !strcmp(v, "onednn") ? 0 : -1;
}

/* the u8 form's weights, packed for qgemm_u8.c */
static int qmat_build_u8(bk_qmat *q, const real *W, struct nmt_err *err)
{
    int8_t *host = weights_convert(q, W);
    int rc = host ? qu8_pack(&q->pk, host, q->K, q->N) : -1;
    free(host);
    return rc ? nmt_fail(err, NMT_ERR_NOMEM, "int8 weights: out of memory") : 0;
}

/* scales, primitives and packed weights of an int8 or bf16 matrix */
static int qmat_build(bk_qmat *q, const real *W, const float *scales, struct nmt_err *err)
{
    if (q->prec == BK_PREC_INT8) {
        if (!(q->scale = malloc(sizeof(float) * q->N))) return nmt_fail(err, NMT_ERR_NOMEM, "int8 weights: out of memory");
        int rc = scales_set(q, W, scales, err);
        if (rc) return rc;
        if (q->u8 && u8_ours() < 0)
            return nmt_fail(err, NMT_ERR_ARG, "NMT_INT8=%s: expected nmt or onednn", getenv("NMT_INT8"));
        if (q->u8 && u8_ours()) return qmat_build_u8(q, W, err);
    }
    if (!dnnl_cpu_engine())
        return nmt_fail(err, NMT_ERR_ARG, "oneDNN: no CPU engine (status %d)", (int)dnnl_cpu_engine_status());
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t st = matmul_make(&q->mm[0], &pd, q, 0);
    if (st == dnnl_success) st = matmul_make(&q->mm[1], NULL, q, 1);
    void *host = st == dnnl_success ? weights_convert(q, W) : NULL;
    if (st == dnnl_success && !host) { dnnl_primitive_desc_destroy(pd); return nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); }
    if (st == dnnl_success) st = weights_pack(q, pd, host);
    free(host);
    dnnl_primitive_desc_destroy(pd);
    if (st != dnnl_success)
        return nmt_fail(err, NMT_ERR_ARG, "oneDNN: %s matmul [%d x %d] not available (status %d)",
                        q->prec == BK_PREC_INT8 ? "int8" : "bf16", q->K, q->N, (int)st);
    return 0;
}
#endif

static int lowp_qmat_init(bk_qmat **out, int prec, const real *W, int K, int N, int ldw, const float *scales,
                          struct nmt_err *err)
{
    *out = NULL;
    if (K < 1 || N < 1 || ldw < N) return nmt_fail(err, NMT_ERR_ARG, "weights [%d x %d], row stride %d", K, N, ldw);
    if (!dnnl_cpu_supported(prec))
        return nmt_fail(err, NMT_ERR_ARG, "%s products: not available on this CPU or build",
                        prec == BK_PREC_INT8 ? "int8" : prec == BK_PREC_BF16 ? "bf16" : "these");
    int rc = numeric_check(W, K, N, ldw, err);
    if (rc) return rc;
    bk_qmat *q = calloc(1, sizeof *q);
    if (!q) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    *q = (bk_qmat){.prec = prec, .K = K, .N = N, .ldw = ldw, .W = W};
    q->u8 = prec == BK_PREC_INT8 && dnnl_cpu_int8_wlevels() == U8_WLEVELS;
#ifndef NMT_REAL_DOUBLE
    if (prec != BK_PREC_F32 && (rc = qmat_build(q, W, scales, err))) {
        lowp_qmat_free(q);
        return rc;
    }
#else
    (void)scales;
#endif
    *out = q;
    return 0;
}

static void lowp_qmat_free(bk_qmat *q)
{
    if (!q) return;
#ifndef NMT_REAL_DOUBLE
    qu8_free(&q->pk);
    if (q->mm[0]) dnnl_primitive_destroy(q->mm[0]);
    if (q->mm[1]) dnnl_primitive_destroy(q->mm[1]);
    if (q->wei) dnnl_memory_destroy(q->wei);
#endif
    free(q->scale);
    free(q);
}

static void lowp_qws_free(bk_qws *w)
{
    if (!w) return;
#ifndef NMT_REAL_DOUBLE
    for (int k = 0; k < 3; k++) dnnl_cpu_mems_free(&w->mem[k]);
    dnnl_stream_destroy(w->strm);
#endif
    free(w->a);
    free(w->osc);
    free(w->rsc);
    free(w->tmp);
    free(w);
}

static int lowp_qws_init(bk_qws **out, int rows, int K, int N, struct nmt_err *err)
{
    *out = NULL;
    if (rows < 1 || K < 1 || N < 1) return nmt_fail(err, NMT_ERR_ARG, "workspace for [%d x %d] x [%d x %d]", rows, K, K, N);
    bk_qws *w = calloc(1, sizeof *w);
    if (!w) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    *w = (bk_qws){.rows = rows, .K = K, .N = N};
    /* two bytes an activation: room for bf16, and for u8 rows padded to qu8_kpad(K) */
    w->a = malloc((size_t)rows * (K + 7) * 2);
    w->osc = malloc(sizeof(float) * N);
    w->trows = rows < 64 ? rows : 64;
    w->rsc = malloc(sizeof(float) * rows);
    w->tmp = malloc(sizeof(float) * w->trows * N);
    if (!w->a || !w->osc || !w->rsc || !w->tmp) { lowp_qws_free(w); return nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); }
#ifndef NMT_REAL_DOUBLE
    dnnl_engine_t engine = dnnl_cpu_engine();
    if (!engine || dnnl_stream_create(&w->strm, engine, dnnl_stream_default_flags) != dnnl_success) {
        lowp_qws_free(w);
        return nmt_fail(err, NMT_ERR_ARG, "oneDNN: no CPU stream");
    }
#endif
    *out = w;
    return 0;
}

#ifndef NMT_REAL_DOUBLE
/* runs the matmul on act (M dense rows of converted activations) into C; 0 or oneDNN's status */
static dnnl_status_t matmul_run(bk_qws *w, const void *act, int M, const bk_qmat *q, int beta, real *C, int ldc)
{
    dnnl_memory_t a, c, s = NULL;
    dnnl_status_t st = dnnl_cpu_mem(&w->mem[0], act_type(q), M, q->K, q->K, 1, (void *)act, &a);
    if (st == dnnl_success) st = dnnl_cpu_mem(&w->mem[1], dnnl_f32, M, q->N, ldc, 1, C, &c);
    if (st == dnnl_success) st = dnnl_cpu_mem(&w->mem[2], dnnl_f32, 0, q->N, 0, 1, w->osc, &s);
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, q->wei}, {DNNL_ARG_DST, c},
                               {DNNL_ARG_ATTR_OUTPUT_SCALES, s}};
    if (st == dnnl_success) st = dnnl_primitive_execute(q->mm[beta], w->strm, q->prec == BK_PREC_INT8 ? 4 : 3, args);
    if (st == dnnl_success) st = dnnl_stream_wait(w->strm);
    return st;
}


/* int8: each row of A in steps of its own s_m = max_k |A[m,k]| / 127, so that a row's product
 * does not depend on the rows beside it (a sentence translates the same in any batch), and
 * C = (s_n Σ_k q(A)[m,k] q(W)[k,n]) s_m (+ C), rounded in that order on both kernels. oneDNN
 * takes scales by column only: its rows get theirs here, a chunk at a time through tmp.
 * -1, nothing written, when a row holds a NaN or an infinity. */
static int int8_rows(bk_qws *w, int M, const real *A, int lda, const bk_qmat *q, int beta, real *C, int ldc)
{
    int ld = q->pk.w ? q->pk.Kp : q->K, zero = q->pk.w || q->u8 ? U8_ZERO : 0;
    for (int m = 0; m < M; m++) {
        float a = rows_absmax(A + (size_t)m * lda, lda, 1, q->K);
        if (!isfinite(a)) return -1;
        w->rsc[m] = a > 0 ? a / 127 : 1;
    }
    for (int m = 0; m < M; m++)
        quant_rows((uint8_t *)w->a + (size_t)m * ld, A + (size_t)m * lda, lda, 1, q->K, ld, 1 / w->rsc[m], zero);
    if (q->pk.w) {
        qu8_gemm(&q->pk, M, w->a, ld, q->scale, w->rsc, beta, C, ldc);
        return 0;
    }
    for (int n = 0; n < q->N; n++) w->osc[n] = q->scale[n];
    for (int m0 = 0; m0 < M; m0 += w->trows) {
        int mc = M - m0 < w->trows ? M - m0 : w->trows;
        dnnl_status_t st = matmul_run(w, (uint8_t *)w->a + (size_t)m0 * ld, mc, q, 0, w->tmp, q->N);
        NMT_ASSERT(st == dnnl_success); /* shapes and memory were settled at init */
        for (int r = 0; r < mc; r++) {
            const float *t = w->tmp + (size_t)r * q->N;
            float *c = C + (size_t)(m0 + r) * ldc, s = w->rsc[m0 + r];
            for (int n = 0; n < q->N; n++) c[n] = beta ? t[n] * s + c[n] : t[n] * s;
        }
    }
    return 0;
}
#endif

static void lowp_qgemm(bk_qws *w, int M, const real *A, int lda, const bk_qmat *q, real beta, real *C, int ldc)
{
    NMT_ASSERT(beta == 0 || beta == 1);
    if (M <= 0) return;
#ifndef NMT_REAL_DOUBLE
    NMT_ASSERT(M <= w->rows && q->K <= w->K && q->N <= w->N);
    if (q->prec == BK_PREC_INT8 && !int8_rows(w, M, A, lda, q, beta != 0, C, ldc)) return;
    if (q->prec == BK_PREC_BF16 && isfinite(rows_absmax(A, lda, M, q->K))) {
        dnnl_cpu_bf16_rows(w->a, A, lda, M, q->K);
        dnnl_status_t st = matmul_run(w, w->a, M, q, beta != 0, C, ldc);
        NMT_ASSERT(st == dnnl_success); /* shapes and memory were settled at init */
        return;
    }
#else
    (void)w;
#endif
    /* FP32, or activations that hold a NaN or an infinity: the backend's own product, row by row */
    cpu_gemm_rows(0, 0, M, q->N, q->K, A, lda, q->W, q->ldw, beta, C, ldc);
}

const backend_lowp_ops cpu_lowp = {
    .name = "cpu-onednn",
    .supported = dnnl_cpu_supported,
    .qmat_init = lowp_qmat_init,
    .qmat_free = lowp_qmat_free,
    .qws_init = lowp_qws_init,
    .qws_free = lowp_qws_free,
    .qgemm = lowp_qgemm,
};

