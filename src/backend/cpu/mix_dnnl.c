/* mix_dnnl.c: the products of bf16 training (backend.h, "mixed-precision training"): C = op(A)
 * op(B) + beta C with A and B in bf16 and the sums and C in FP32, through oneDNN's matmul with
 * every dimension and stride given at run time, so that one primitive per (transposes, beta) serves
 * every shape (oneDNN then runs its bf16 GEMM, "gemm:jit": 2.0-2.7x OpenBLAS's FP32 on training's
 * shapes: docs/results/speed.md, "Products by library"). A transposed operand is the same memory
 * with its strides swapped. Weights come from bf16 copies made once per update (sync); other
 * operands are rounded at each call into buffers of the calling thread. */
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend/cpu/cpu.h"
#include "backend/cpu/dnnl_cpu.h"
#include "base/err.h"

/* A thread's own: the rounded operands (grown to the largest seen), oneDNN's stream and
 * primitives, [ta][tb][beta], and the memory objects of A, B and C */
typedef struct mix_slot {
    uint16_t *buf[2];
    size_t cap[2];
#ifndef NMT_REAL_DOUBLE
    dnnl_stream_t strm;
    dnnl_primitive_t mm[2][2][2];
    dnnl_cpu_mems mem[3];          /* A's, B's and C's */
#endif
} mix_slot;

struct bk_mix {
    const real *P;
    int nparts;
    size_t (*part)[3];             /* offset in P, length, offset of its copy in w16 */
    uint16_t *w16;                 /* the parts' bf16 copies, one after another */
    int nslots;                    /* one per thread the backend may run */
    mix_slot *slot;
    const real *held;              /* hold: X, its elements, and where its bf16 form lies */
    size_t held_n;
    int held_cols;
    uint16_t *hold_buf;            /* grown to the largest hold (the first batches) */
    size_t hold_cap;
};

#ifndef NMT_REAL_DOUBLE
/* *buf grown to hold need elements (its old contents dropped); 0 when it cannot grow */
static int grow(uint16_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap) return 1;
    free(*buf);
    *cap = 0;
    if (!(*buf = malloc(sizeof(uint16_t) * need))) return 0;
    *cap = need;
    return 1;
}
#endif

static void mix_free(bk_mix *m)
{
    if (!m) return;
    for (int i = 0; m->slot && i < m->nslots; i++) {
        mix_slot *s = &m->slot[i];
        free(s->buf[0]);
        free(s->buf[1]);
#ifndef NMT_REAL_DOUBLE
        for (int k = 0; k < 8; k++) dnnl_primitive_destroy(s->mm[k >> 2][k >> 1 & 1][k & 1]);
        for (int k = 0; k < 3; k++) dnnl_cpu_mems_free(&s->mem[k]);
        dnnl_stream_destroy(s->strm);
#endif
    }
    free(m->slot);
    free(m->hold_buf);
    free(m->part);
    free(m->w16);
    free(m);
}

static void mix_sync(bk_mix *m)
{
    for (int i = 0; i < m->nparts; i++)
        dnnl_cpu_bf16_rows(m->w16 + m->part[i][2], m->P + m->part[i][0], 0, 1, (int)m->part[i][1]);
}

#ifndef NMT_REAL_DOUBLE
static int slot_make(mix_slot *s, nmt_err *err)
{
    dnnl_engine_t eng = dnnl_cpu_engine();
    dnnl_status_t st = eng ? dnnl_stream_create(&s->strm, eng, dnnl_stream_default_flags) : dnnl_runtime_error;
    for (int k = 0; k < 8 && st == dnnl_success; k++)
        st = dnnl_cpu_matmul_any(&s->mm[k >> 2][k >> 1 & 1][k & 1], dnnl_bf16, k >> 2, k >> 1 & 1, k & 1);
    return st == dnnl_success ? NMT_OK : nmt_fail(err, NMT_ERR_ARG, "oneDNN: bf16 matmul not available (status %d)", (int)st);
}
#endif

static int mix_init(bk_mix **out, const real *P, size_t n, const size_t (*parts)[2], int nparts, nmt_err *err)
{
    *out = NULL;
    if (!dnnl_cpu_supported(BK_PREC_BF16))
        return nmt_fail(err, NMT_ERR_ARG, "bf16 training needs AVX512_BF16, which this CPU (or build) lacks: use fp32");
    bk_mix *m = calloc(1, sizeof *m);
    if (!m) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    m->P = P;
    m->nparts = nparts;
    m->nslots = cpu_threads();
    m->part = malloc(sizeof *m->part * (nparts ? nparts : 1));
    m->slot = calloc((size_t)m->nslots, sizeof *m->slot);
    size_t at = 0;
    for (int i = 0; m->part && i < nparts; i++) {
        NMT_ASSERT(parts[i][0] + parts[i][1] <= n && parts[i][1] <= (size_t)INT32_MAX);
        m->part[i][0] = parts[i][0];
        m->part[i][1] = parts[i][1];
        m->part[i][2] = at;
        at += parts[i][1];
    }
    m->w16 = malloc(sizeof(uint16_t) * (at ? at : 1));
    int rc = m->part && m->slot && m->w16 ? NMT_OK : nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
#ifndef NMT_REAL_DOUBLE
    for (int i = 0; !rc && i < m->nslots; i++) rc = slot_make(&m->slot[i], err);
#endif
    if (rc) { mix_free(m); return rc; }
    mix_sync(m);
    *out = m;
    return NMT_OK;
}

#ifndef NMT_REAL_DOUBLE
/* The bf16 form of an operand of rows x cols (row stride ld): inside a kept part, its copy (same
 * stride); otherwise rounded into the slot's buffer k (stride cols). NULL when that buffer cannot
 * grow. */
static const uint16_t *operand(bk_mix *m, mix_slot *s, int k, const real *X, int rows, int cols, int ld, int *ld16)
{
    /* addresses as integers: X may lie in another object than P */
    uintptr_t x = (uintptr_t)X, end = (uintptr_t)(X + (size_t)(rows - 1) * ld + cols);
    uintptr_t h = (uintptr_t)m->held;
    if (m->held && ld == m->held_cols && x >= h && end <= (uintptr_t)(m->held + m->held_n)) {
        *ld16 = ld;
        return m->hold_buf + (x - h) / sizeof(real);
    }
    for (int i = 0; i < m->nparts; i++) {
        uintptr_t lo = (uintptr_t)(m->P + m->part[i][0]), hi = (uintptr_t)(m->P + m->part[i][0] + m->part[i][1]);
        if (x >= lo && end <= hi) {
            *ld16 = ld;
            return m->w16 + m->part[i][2] + (x - lo) / sizeof(real);
        }
    }
    /* grows in the first batches only: then the largest operand fits */
    if (!grow(&s->buf[k], &s->cap[k], (size_t)rows * cols)) return NULL;
    dnnl_cpu_bf16_rows(s->buf[k], X, ld, rows, cols);
    *ld16 = cols;
    return s->buf[k];
}

/* C = A·B (+ C) on bf16 operands with the strides of their stored layouts */
static dnnl_status_t matmul_run(mix_slot *s, int ta, int tb, int M, int N, int K, const uint16_t *A, int lda,
                                const uint16_t *B, int ldb, int beta, real *C, int ldc)
{
    dnnl_memory_t a = NULL, b = NULL, c = NULL;
    dnnl_status_t st = dnnl_cpu_mem(&s->mem[0], dnnl_bf16, M, K, ta ? 1 : lda, ta ? lda : 1, (void *)A, &a);
    if (st == dnnl_success) st = dnnl_cpu_mem(&s->mem[1], dnnl_bf16, K, N, tb ? 1 : ldb, tb ? ldb : 1, (void *)B, &b);
    if (st == dnnl_success) st = dnnl_cpu_mem(&s->mem[2], dnnl_f32, M, N, ldc, 1, C, &c);
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}};
    if (st == dnnl_success) st = dnnl_primitive_execute(s->mm[ta][tb][beta], s->strm, 3, args);
    if (st == dnnl_success) st = dnnl_stream_wait(s->strm);
    return st;
}
#endif

static void mix_gemm(bk_mix *m, int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb,
                     real beta, real *C, int ldc)
{
#ifndef NMT_REAL_DOUBLE
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#endif
    if (M > 0 && N > 0 && K > 0 && (beta == 0 || beta == 1) && t < m->nslots) {
        mix_slot *s = &m->slot[t];
        int la, lb;
        const uint16_t *a = operand(m, s, 0, A, ta ? K : M, ta ? M : K, lda, &la);
        const uint16_t *b = a ? operand(m, s, 1, B, tb ? N : K, tb ? K : N, ldb, &lb) : NULL;
        if (b) {
            dnnl_status_t st = matmul_run(s, ta != 0, tb != 0, M, N, K, a, la, b, lb, beta != 0, C, ldc);
            NMT_ASSERT(st == dnnl_success); /* the primitives were made for every shape at init */
            return;
        }
    }
#else
    (void)m;
#endif
    /* an empty product, another beta, a thread past the slots or no memory for the buffers: FP32 */
    cpu_gemm(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
}

static uint16_t *mix_hold(bk_mix *m, const real *X, int rows, int cols)
{
#ifndef NMT_REAL_DOUBLE
    size_t n = (size_t)rows * cols;
    NMT_ASSERT(!m->held && rows > 0 && cols > 0);
    if (!grow(&m->hold_buf, &m->hold_cap, n)) return NULL;
    m->held = X;
    m->held_n = n;
    m->held_cols = cols;
    return m->hold_buf;
#else
    (void)m, (void)X, (void)rows, (void)cols;
    return NULL;
#endif
}

static void mix_release(bk_mix *m) { m->held = NULL; }

const backend_mix_ops cpu_mix = {
    .init = mix_init,
    .free = mix_free,
    .sync = mix_sync,
    .gemm = mix_gemm,
    .hold = mix_hold,
    .release = mix_release,
};

