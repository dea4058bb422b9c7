/* bench_gemm.c: the matrix products of SMALL and PAPER training and decoding, timed side by side in
 * one run on every kernel the CPU backend could call for them: OpenBLAS sgemm (what the
 * backend's gemm calls today), oneDNN matmul in FP32, bf16 x bf16 -> FP32, int8 (s8 x s8 and
 * u8 x s8 -> s32, per-column weight scales, one activation scale per call) and libxsmm's JIT
 * kernels for the per-step products. Each kernel's output is checked against OpenBLAS's.
 *
 * usage: bench_gemm [--threads 1,2] [--seconds S] [--set small|paper|all] [--only SHAPE] [--kernels K,..]
 * One line per shape, thread count and kernel: GFLOP/s of the kernel alone and with the per-call
 * conversion of the activations (f32 -> bf16 / int8), the one-off cost of converting and packing
 * the weights (at load, or once per update in training), oneDNN's primitive creation (once per
 * shape, then cached), and the largest error relative to the largest |C|. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>
#include <libxsmm.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include "backend/backend.h"

/* C[M,N] = op(A)[M,K] · op(B)[K,N], row-major as the backend's gemm; A the activations, B the
 * weights. ta/tb: stored transposed (the backward products of training). */
typedef struct shape {
    const char *set, *name;
    int M, N, K, ta, tb;
} shape;

/* SMALL: E = H = A = 256, maxout 256, V = 10,000, batch 80, T ~ 15, 1,000 target tokens a batch;
 * PAPER: E 620, H = A 1,000, maxout 500, V 30,002, 1,700 target tokens a batch. Decoding: beam
 * 12 x 64 sentences = 768 rows a step. */
static const shape shapes[] = {
    {"small", "step U_z|U_r [80x256]x[256x512]", 80, 512, 256, 0, 0},
    {"small", "step U_h [80x256]x[256x256]", 80, 256, 256, 0, 0},
    {"small", "step 3H [80x256]x[256x768]", 80, 768, 256, 0, 0},
    {"small", "proj T=15 [1200x256]x[256x768]", 1200, 768, 256, 0, 0},
    {"small", "readout fwd [1000x256]x[256x10000]", 1000, 10000, 256, 0, 0},
    {"small", "readout bwd-data [1000x10000]x[10000x256]^T", 1000, 256, 10000, 0, 1},
    {"small", "readout bwd-W [256x1000]^Tx[1000x10000]", 256, 10000, 1000, 1, 0},
    {"small", "decode readout [768x256]x[256x10000]", 768, 10000, 256, 0, 0},
    {"small", "decode U_z|U_r [768x256]x[256x512]", 768, 512, 256, 0, 0},
    {"small", "decode 3H [768x256]x[256x768]", 768, 768, 256, 0, 0},
    {"paper", "step U_z|U_r [80x1000]x[1000x2000]", 80, 2000, 1000, 0, 0},
    {"paper", "step U_h [80x1000]x[1000x1000]", 80, 1000, 1000, 0, 0},
    {"paper", "proj T=15 [1200x620]x[620x3000]", 1200, 3000, 620, 0, 0},
    {"paper", "readout fwd [1700x500]x[500x30002]", 1700, 30002, 500, 0, 0},
    {"paper", "readout bwd-data [1700x30002]x[30002x500]^T", 1700, 500, 30002, 0, 1},
    {"paper", "readout bwd-W [500x1700]^Tx[1700x30002]", 500, 30002, 1700, 1, 0},
    {"paper", "decode readout [768x500]x[500x30002]", 768, 30002, 500, 0, 0},
    {"paper", "decode U_z|U_r [768x1000]x[1000x2000]", 768, 2000, 1000, 0, 0},
};
enum { NSHAPE = sizeof shapes / sizeof shapes[0] };

/* the kernels; PACK: the weights reordered once into oneDNN's own blocked layout */
enum kind { K_BLAS, K_XSMM, K_F32, K_F32PACK, K_BF16, K_S8, K_U8, NKIND };
static const char *kind_name[NKIND] = {"openblas-f32", "libxsmm-f32", "dnnl-f32", "dnnl-f32-packed",
                                       "dnnl-bf16", "dnnl-s8s8", "dnnl-u8s8"};

/* one measured kernel: times in ms per call */
typedef struct result {
    int ok;
    double ms, cvt_ms, prep_ms, create_ms, err;
    char why[96];
} result;

/* the buffers of one shape: f32 inputs, the output, OpenBLAS's output as the reference, and the
 * converted operands of the low-precision kernels */
typedef struct bufs {
    float *A, *B, *C, *ref, *wscale, *oscale;
    uint16_t *Abf;
    int8_t *As8, *Bs8;
    uint8_t *Au8;
    float ascale;
} bufs;

static double seconds = 0.3;
static const char *kernels; /* a comma-separated list of kernel names to run; NULL: all */
static dnnl_engine_t eng;
static dnnl_stream_t strm;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *xalloc(size_t bytes)
{
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) { fprintf(stderr, "bench_gemm: out of memory (%zu bytes)\n", bytes); exit(1); }
    return p;
}

/* ==== conversions: what a low-precision kernel does to its operands ========================= */

/* bf16 by rounding to nearest even (the inputs are finite) */
static void to_bf16(uint16_t *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        y[i] = (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
    }
}

/* max |x|: eight partial maxima, which the compiler keeps in one vector (a single running
 * maximum is a reduction it will not reorder) */
static float absmax(const float *x, size_t n)
{
    float m[8] = {0}, r = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) m[j] = fabsf(x[i + j]) > m[j] ? fabsf(x[i + j]) : m[j];
    for (; i < n; i++) r = fabsf(x[i]) > r ? fabsf(x[i]) : r;
    for (int j = 0; j < 8; j++) r = m[j] > r ? m[j] : r;
    return r;
}

/* symmetric: q = round(x / scale) in [-127, 127]; zp 128 shifts it into u8 */
static void quant_s8(int8_t *y, const float *x, size_t n, float inv)
{
    for (size_t i = 0; i < n; i++) {
        float v = nearbyintf(x[i] * inv);
        y[i] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
    }
}

static void quant_u8(uint8_t *y, const float *x, size_t n, float inv)
{
    for (size_t i = 0; i < n; i++) {
        float v = nearbyintf(x[i] * inv);
        y[i] = (uint8_t)((int)(v > 127 ? 127 : v < -127 ? -127 : v) + 128);
    }
}

/* one scale per output column n of the weights, max_k |B[k,n]| / 127, and B quantised with it */
static void quant_weights(int8_t *q, float *scale, const float *B, int K, int N, int tb)
{
    for (int n = 0; n < N; n++) {
        float m = 0;
        for (int k = 0; k < K; k++) m = fmaxf(m, fabsf(tb ? B[(size_t)n * K + k] : B[(size_t)k * N + n]));
        scale[n] = m > 0 ? m / 127 : 1;
        float inv = 1 / scale[n];
        for (int k = 0; k < K; k++) {
            size_t i = tb ? (size_t)n * K + k : (size_t)k * N + n;
            float v = nearbyintf(B[i] * inv);
            q[i] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
        }
    }
}

/* the activations of one call: a scale for the whole matrix (its max |x| / 127), folded into the
 * per-column output scales the kernel applies */
static void quant_acts(bufs *b, size_t nA, int N, int u8)
{
    float m = absmax(b->A, nA);
    b->ascale = m > 0 ? m / 127 : 1;
    if (u8) quant_u8(b->Au8, b->A, nA, 1 / b->ascale);
    else quant_s8(b->As8, b->A, nA, 1 / b->ascale);
    for (int n = 0; n < N; n++) b->oscale[n] = b->ascale * b->wscale[n];
}

/* max |C - ref| / max |ref| */
static double rel_err(const float *C, const float *ref, size_t n)
{
    double e = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        e = fmax(e, fabs((double)C[i] - ref[i]));
        m = fmax(m, fabs((double)ref[i]));
    }
    return m > 0 ? e / m : e;
}

/* ==== timing ================================================================================ */

typedef void (*call_fn)(void *ctx);

/* ms per call: the median of 5 batches after two warm-up calls, each batch about seconds/5 */
static double time_call(call_fn f, void *ctx)
{
    f(ctx);
    double t0 = now();
    f(ctx);
    double one = now() - t0;
    int reps = one > 0 ? (int)(seconds / 5 / one) : 1;
    if (reps < 1) reps = 1;
    double v[5];
    for (int b = 0; b < 5; b++) {
        t0 = now();
        for (int r = 0; r < reps; r++) f(ctx);
        v[b] = (now() - t0) / reps;
    }
    for (int i = 1; i < 5; i++) /* insertion sort of five */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) { double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t; }
    return v[2] * 1e3;
}

/* ==== OpenBLAS, through the backend's gemm ================================================== */

typedef struct blas_ctx { const shape *s; bufs *b; } blas_ctx;

static void blas_call(void *p)
{
    blas_ctx *c = p;
    const shape *s = c->s;
    int lda = s->ta ? s->M : s->K, ldb = s->tb ? s->K : s->N;
    backend_cpu()->gemm(s->ta, s->tb, s->M, s->N, s->K, c->b->A, lda, c->b->B, ldb, 0, c->b->C, s->N);
}

static result run_blas(const shape *s, bufs *b)
{
    blas_ctx c = {s, b};
    result r = {.ok = 1};
    r.ms = time_call(blas_call, &c);
    r.err = rel_err(b->C, b->ref, (size_t)s->M * s->N);
    return r;
}

/* ==== libxsmm: column-major JIT kernels; row-major C = A·B is column-major C^T = B^T·A^T, so
 * the kernel's m is our N, n our M. Threads split the columns of C into tiles of 16s. ========== */

typedef struct xsmm_ctx {
    const shape *s;
    bufs *b;
    int tile, nt;
    libxsmm_smmfunction full, last;
} xsmm_ctx;

static void xsmm_call(void *p)
{
    xsmm_ctx *c = p;
    const shape *s = c->s;
#pragma omp parallel for schedule(static)
    for (int t = 0; t < c->nt; t++) {
        int n0 = t * c->tile;
        libxsmm_smmfunction f = n0 + c->tile <= s->N ? c->full : c->last;
        f(c->b->B + n0, c->b->A, c->b->C + n0);
    }
}

static libxsmm_smmfunction xsmm_kernel(int m, const shape *s)
{
    libxsmm_blasint lda = s->N, ldb = s->K, ldc = s->N;
    float alpha = 1, beta = 0;
    return libxsmm_smmdispatch(m, s->M, s->K, &lda, &ldb, &ldc, &alpha, &beta, NULL, NULL);
}

static result run_xsmm(const shape *s, bufs *b, int threads)
{
    result r = {0};
    xsmm_ctx c = {.s = s, .b = b};
    c.tile = (s->N + threads - 1) / threads;
    c.tile = (c.tile + 15) / 16 * 16 < s->N ? (c.tile + 15) / 16 * 16 : s->N;
    c.nt = (s->N + c.tile - 1) / c.tile;
    double t0 = now();
    c.full = xsmm_kernel(c.tile, s);
    c.last = s->N % c.tile ? xsmm_kernel(s->N % c.tile, s) : c.full;
    r.create_ms = (now() - t0) * 1e3;
    if (!c.full || !c.last) { snprintf(r.why, sizeof r.why, "no JIT kernel"); return r; }
    r.ok = 1;
    r.ms = time_call(xsmm_call, &c);
    r.err = rel_err(b->C, b->ref, (size_t)s->M * s->N);
    return r;
}

/* ==== oneDNN ================================================================================ */

#define DN(call) do { dnnl_status_t st_ = (call); \
    if (st_ != dnnl_success) { snprintf(r->why, sizeof r->why, "oneDNN status %d (bench_gemm.c:%d)", (int)st_, __LINE__); goto out; } \
} while (0)

typedef struct dn_ctx {
    dnnl_primitive_t prim;
    dnnl_memory_t src, wei, dst, osc, zp;
    int nargs;
    dnnl_exec_arg_t args[5];
    dnnl_status_t st; /* of the last execution */
} dn_ctx;

static void dn_call(void *p)
{
    dn_ctx *c = p;
    c->st = dnnl_primitive_execute(c->prim, strm, c->nargs, c->args);
    dnnl_stream_wait(strm);
}

/* one reorder, created, run and destroyed: the weights' one-off packing */
static dnnl_status_t dn_reorder(dnnl_memory_t from, dnnl_memory_t to)
{
    const dnnl_memory_desc_t *fmd, *tmd;
    dnnl_memory_get_memory_desc(from, &fmd);
    dnnl_memory_get_memory_desc(to, &tmd);
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t p;
    dnnl_status_t st = dnnl_reorder_primitive_desc_create(&pd, fmd, eng, tmd, eng, NULL);
    if (st != dnnl_success) return st;
    st = dnnl_primitive_create(&p, pd);
    dnnl_primitive_desc_destroy(pd);
    if (st != dnnl_success) return st;
    dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    st = dnnl_primitive_execute(p, strm, 2, a);
    dnnl_stream_wait(strm);
    dnnl_primitive_destroy(p);
    return st;
}

static dnnl_data_type_t src_type(int k) { return k == K_BF16 ? dnnl_bf16 : k == K_S8 ? dnnl_s8 : k == K_U8 ? dnnl_u8 : dnnl_f32; }
static void *src_data(int k, bufs *b) { return k == K_BF16 ? (void *)b->Abf : k == K_S8 ? (void *)b->As8 : k == K_U8 ? (void *)b->Au8 : (void *)b->A; }

/* the matmul's attributes: int8 gets runtime per-column output scales (weight scale x activation
 * scale), u8 a runtime source zero point */
static dnnl_status_t dn_attr(dnnl_primitive_attr_t *attr, int k)
{
    dnnl_status_t st = dnnl_primitive_attr_create(attr);
    if (st != dnnl_success || (k != K_S8 && k != K_U8)) return st;
    st = dnnl_primitive_attr_set_output_scales(*attr, 1, 1 << 1, &DNNL_RUNTIME_F32_VAL);
    if (st == dnnl_success && k == K_U8)
        st = dnnl_primitive_attr_set_zero_points(*attr, DNNL_ARG_SRC, 1, 0, &DNNL_RUNTIME_S32_VAL);
    return st;
}

/* the weights in the layout the primitive asked for: plain f32 as they are, or converted and
 * packed once (timed into r->prep_ms) */
static dnnl_status_t dn_weights(dn_ctx *c, dnnl_primitive_desc_t pd, const shape *s, bufs *b, int k, result *r)
{
    dnnl_dims_t wd = {s->K, s->N};
    dnnl_format_tag_t wtag = s->tb ? dnnl_ba : dnnl_ab;
    const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    if (k == K_F32) return dnnl_memory_create(&c->wei, want, eng, b->B);
    double t0 = now();
    dnnl_memory_desc_t umd;
    dnnl_memory_t user;
    void *data = b->B;
    if (k == K_S8 || k == K_U8) { quant_weights(b->Bs8, b->wscale, b->B, s->K, s->N, s->tb); data = b->Bs8; }
    dnnl_status_t st = dnnl_memory_desc_init_by_tag(&umd, 2, wd, k == K_S8 || k == K_U8 ? dnnl_s8 : dnnl_f32, wtag);
    if (st == dnnl_success) st = dnnl_memory_create(&user, &umd, eng, data);
    if (st != dnnl_success) return st;
    st = dnnl_memory_create(&c->wei, want, eng, DNNL_MEMORY_ALLOCATE);
    if (st == dnnl_success) st = dn_reorder(user, c->wei);
    dnnl_memory_destroy(user);
    r->prep_ms = (now() - t0) * 1e3;
    return st;
}

/* the per-call conversion of the activations: f32 -> bf16, or quantised with a fresh scale */
typedef struct cvt_ctx { int k; size_t nA; int N; bufs *b; } cvt_ctx;

static void cvt_call(void *p)
{
    cvt_ctx *c = p;
    if (c->k == K_BF16) to_bf16(c->b->Abf, c->b->A, c->nA);
    else quant_acts(c->b, c->nA, c->N, c->k == K_U8);
}

static result run_dnnl(const shape *s, bufs *b, int k)
{
    result res = {0}, *r = &res;
    dn_ctx c = {0};
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    static const int32_t zp128 = 128;
    size_t nA = (size_t)s->M * s->K;
    cvt_ctx cv = {k, nA, s->N, b};
    dnnl_memory_desc_t amd, wmd, cmd, smd;
    dnnl_dims_t ad = {s->M, s->K}, wd = {s->K, s->N}, cd = {s->M, s->N}, sd = {s->N}, zd = {1};
    DN(dnnl_memory_desc_init_by_tag(&amd, 2, ad, src_type(k), s->ta ? dnnl_ba : dnnl_ab));
    DN(dnnl_memory_desc_init_by_tag(&wmd, 2, wd, k == K_F32 || k == K_F32PACK ? dnnl_f32 : k == K_BF16 ? dnnl_bf16 : dnnl_s8,
                                    k == K_F32 ? (s->tb ? dnnl_ba : dnnl_ab) : dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&cmd, 2, cd, dnnl_f32, dnnl_ab));
    DN(dn_attr(&attr, k));
    double t0 = now();
    dnnl_matmul_desc_t md;
    DN(dnnl_matmul_desc_init(&md, &amd, &wmd, NULL, &cmd));
    DN(dnnl_primitive_desc_create(&pd, &md, attr, eng, NULL));
    DN(dnnl_primitive_create(&c.prim, pd));
    r->create_ms = (now() - t0) * 1e3;
    DN(dn_weights(&c, pd, s, b, k, r));
    if (k != K_F32 && k != K_F32PACK) cvt_call(&cv); /* the operands of the calls, after the weights' scales */
    DN(dnnl_memory_create(&c.src, &amd, eng, src_data(k, b)));
    DN(dnnl_memory_create(&c.dst, &cmd, eng, b->C));
    c.args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, c.src};
    c.args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, c.wei};
    c.args[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, c.dst};
    c.nargs = 3;
    if (k == K_S8 || k == K_U8) {
        DN(dnnl_memory_desc_init_by_tag(&smd, 1, sd, dnnl_f32, dnnl_a));
        DN(dnnl_memory_create(&c.osc, &smd, eng, b->oscale));
        c.args[c.nargs++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_OUTPUT_SCALES, c.osc};
    }
    if (k == K_U8) {
        DN(dnnl_memory_desc_init_by_tag(&smd, 1, zd, dnnl_s32, dnnl_a));
        DN(dnnl_memory_create(&c.zp, &smd, eng, (void *)&zp128));
        c.args[c.nargs++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, c.zp};
    }
    r->ms = time_call(dn_call, &c);
    DN(c.st);
    r->err = rel_err(b->C, b->ref, (size_t)s->M * s->N);
    if (k != K_F32 && k != K_F32PACK) r->cvt_ms = time_call(cvt_call, &cv);
    r->ok = 1;
out:
    dnnl_primitive_destroy(c.prim);
    dnnl_primitive_desc_destroy(pd);
    dnnl_primitive_attr_destroy(attr);
    dnnl_memory_destroy(c.src);
    dnnl_memory_destroy(c.wei);
    dnnl_memory_destroy(c.dst);
    dnnl_memory_destroy(c.osc);
    dnnl_memory_destroy(c.zp);
    return res;
}

/* ==== driver ================================================================================ */

static void bufs_init(bufs *b, const shape *s)
{
    size_t nA = (size_t)s->M * s->K, nB = (size_t)s->K * s->N, nC = (size_t)s->M * s->N;
    b->A = xalloc(4 * nA); b->B = xalloc(4 * nB); b->C = xalloc(4 * nC); b->ref = xalloc(4 * nC);
    b->Abf = xalloc(2 * nA); b->As8 = xalloc(nA); b->Au8 = xalloc(nA); b->Bs8 = xalloc(nB);
    b->wscale = xalloc(4 * (size_t)s->N); b->oscale = xalloc(4 * (size_t)s->N);
    /* values in [-1, 1): no denormals or zeros that could make a product faster than real work */
    unsigned x = 12345;
    for (size_t i = 0; i < nA; i++) { x = x * 1103515245u + 12345u; b->A[i] = (float)((x >> 8) & 0xffff) / 32768 - 1; }
    for (size_t i = 0; i < nB; i++) { x = x * 1103515245u + 12345u; b->B[i] = (float)((x >> 8) & 0xffff) / 32768 - 1; }
}

static void bufs_free(bufs *b)
{
    free(b->A); free(b->B); free(b->C); free(b->ref); free(b->Abf); free(b->As8); free(b->Au8); free(b->Bs8);
    free(b->wscale); free(b->oscale);
}

static void report(const shape *s, int threads, int k, const result *r)
{
    double gf = 2.0 * s->M * s->N * s->K / 1e6;
    char name[64];
    /* OpenBLAS's kernels are chosen at load (OPENBLAS_CORETYPE or the CPU): named with them */
    snprintf(name, sizeof name, k == K_BLAS ? "%s(%s)" : "%s", kind_name[k], openblas_get_corename());
    if (!r->ok) { printf("%s\t%s\t%d\t%s\tn/a\t%s\n", s->set, s->name, threads, name, r->why); return; }
    printf("%s\t%s\t%d\t%s\t%.1f\t%.1f\t%.4f\t%.4f\t%.2f\t%.2f\t%.1e\n", s->set, s->name, threads, name,
           gf / r->ms, gf / (r->ms + r->cvt_ms), r->ms, r->cvt_ms, r->prep_ms, r->create_ms, r->err);
    fflush(stdout);
}

/* whether --kernels names this kernel (one of its comma-separated entries) */
static int wanted(const char *name)
{
    size_t n = strlen(name);
    for (const char *p = kernels; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p))
        if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == 0)) return 1;
    return !kernels;
}

static void run_shape(const shape *s, const int *threads, int nt)
{
    bufs b;
    bufs_init(&b, s);
    int lda = s->ta ? s->M : s->K, ldb = s->tb ? s->K : s->N;
    cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans, s->tb ? CblasTrans : CblasNoTrans, s->M, s->N,
                s->K, 1, b.A, lda, b.B, ldb, 0, b.ref, s->N);
    for (int t = 0; t < nt; t++) {
        omp_set_num_threads(threads[t]);
        openblas_set_num_threads(threads[t]);
        for (int k = 0; k < NKIND; k++) {
            int transposed = s->ta || s->tb;
            /* libxsmm: per-step sizes only; int8: forward (decoding) products only */
            if (k == K_XSMM && (transposed || s->M > 800 || s->N > 3000)) continue;
            if ((k == K_S8 || k == K_U8) && transposed) continue;
            if (!wanted(kind_name[k])) continue;
            result r = k == K_BLAS ? run_blas(s, &b) : k == K_XSMM ? run_xsmm(s, &b, threads[t]) : run_dnnl(s, &b, k);
            report(s, threads[t], k, &r);
        }
    }
    bufs_free(&b);
}

static int parse_threads(int *t, const char *arg)
{
    int n = 0;
    for (const char *p = arg; *p && n < 8;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 1024) return -1;
        t[n++] = (int)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

int main(int argc, char **argv)
{
    int threads[8] = {1, 2}, nt = 2;
    const char *set = "all", *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) nt = parse_threads(threads, argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--set") && i + 1 < argc) set = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--kernels") && i + 1 < argc) kernels = argv[++i];
        else nt = -1;
        if (nt < 1 || !(seconds > 0)) {
            fprintf(stderr, "usage: bench_gemm [--threads 1,2] [--seconds S] [--set small|paper|all] [--only SHAPE] [--kernels K,..]\n");
            return 2;
        }
    }
    /* primitives are created afresh each time, so that creation is timed, not a cache hit */
    dnnl_set_primitive_cache_capacity(0);
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success || dnnl_stream_create(&strm, eng, dnnl_stream_default_flags) != dnnl_success) {
        fprintf(stderr, "bench_gemm: no oneDNN CPU engine\n");
        return 1;
    }
    libxsmm_init();
    const dnnl_version_t *v = dnnl_version();
    printf("# %s; oneDNN %d.%d.%d isa 0x%x; libxsmm target %s; median of 5 batches of ~%.2fs/5\n",
           openblas_get_config(), v->major, v->minor, v->patch, (unsigned)dnnl_get_effective_cpu_isa(),
           libxsmm_get_target_arch(), seconds);
    printf("set\tshape\tthreads\tkernel\tgflops\tgflops_with_cvt\tms\tcvt_ms\tprep_ms\tcreate_ms\trel_err\n");
    for (int i = 0; i < NSHAPE; i++)
        if ((!strcmp(set, "all") || !strcmp(set, shapes[i].set)) && (!only || strstr(shapes[i].name, only)))
            run_shape(&shapes[i], threads, nt);
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    libxsmm_finalize();
    return 0;
}
