/* test_backend.c: every kernel of the compute backend, called through the backend table (never a
 * backend's own functions), against a plain scalar reference written here in double precision.
 * Buffers go in and out through the table's copy_in/copy_out, so that any later backend can be
 * held to the same tests. Sizes are odd on purpose: rows of 21, 37 or 203 leave vector tails,
 * and the thread count is set above one so that parallel loops split. With --fingerprint it
 * prints a hash of OpenBLAS's products instead (kernels.sh: which kernel sets round alike). */
/* kernel sets: all: each op against plain loops, whatever kernels the products run on (tests/cli/kernels.sh) */
#include <cblas.h>
#undef I /* cblas.h brings complex.h's I; this file names heads I */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/cpu/cpu.h"
#include "base/err.h"
#include "base/rng.h"
#include "bf16_ref.h"
#include "helpers.h"
#include "test.h"
#include "device.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

static const backend_ops *bk;
static rng R;

/* ==== buffers on the backend ================================================================ */

static void *pool[64];
static int npool;

static void *dev_alloc(size_t bytes)
{
    void *p = bk->alloc(bytes);
    NMT_ASSERT(p && npool < 64);
    return pool[npool++] = p;
}

static void *dev_copy(const void *host, size_t bytes)
{
    void *d = dev_alloc(bytes);
    bk->copy_in(d, host, bytes);
    return d;
}

/* an output buffer holding junk, so that an element the kernel fails to write shows */
static void *dev_junk(size_t bytes)
{
    unsigned char *h = malloc(bytes ? bytes : 1);
    NMT_ASSERT(h);
    memset(h, 0x5a, bytes);
    void *d = dev_copy(h, bytes);
    free(h);
    return d;
}

static real *dev_r(const real *h, size_t n) { return dev_copy(h, sizeof(real) * n); }
static int *dev_i(const int *h, size_t n) { return dev_copy(h, sizeof(int) * n); }
static void get(void *host, const void *dev, size_t bytes) { bk->copy_out(host, dev, bytes); }
static void release(void) { while (npool) bk->free(pool[--npool]); }

static double *dbl(const real *x, size_t n)
{
    double *d = malloc(sizeof(double) * (n ? n : 1));
    NMT_ASSERT(d);
    for (size_t i = 0; i < n; i++) d[i] = x[i];
    return d;
}

/* one check over a whole array: |got - want| <= tol · max(1, |want|) everywhere */
static void close_all(const char *what, const real *got, const double *want, size_t n, double tol)
{
    size_t bad = 0, at = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs(got[i] - want[i]) / (fabs(want[i]) > 1 ? fabs(want[i]) : 1);
        if (!(e <= tol)) { bad++; if (!(e <= worst)) { worst = e; at = i; } }
    }
    CHECKF(bad == 0, "%s: %zu of %zu off, worst at %zu: %.9g, expected %.9g", what, bad, n, at,
           n ? (double)got[at] : 0.0, n ? want[at] : 0.0);
}

/* relative: |got - want| <= tol · |want| (for values spanning many decades) */
static void close_rel(const char *what, const real *got, const double *want, size_t n, double tol)
{
    size_t bad = 0, at = 0;
    for (size_t i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= tol * fabs(want[i]))) { if (!bad) at = i; bad++; }
    CHECKF(bad == 0, "%s: %zu of %zu off, first at %zu: %.9g, expected %.9g", what, bad, n, at,
           n ? (double)got[at] : 0.0, n ? want[at] : 0.0);
}

static double sigm(double x) { return 1 / (1 + exp(-x)); }

/* ==== memory, threads ======================================================================= */

typedef struct pf_ctx { int *hits; long grain; int nthreads, bad; } pf_ctx;

static void pf_body(void *ctx, long lo, long hi, int thread)
{
    pf_ctx *c = ctx;
    if (hi - lo > c->grain || thread < 0 || thread >= c->nthreads) c->bad = 1;
    for (long i = lo; i < hi; i++) __atomic_fetch_add(&c->hits[i], 1, __ATOMIC_RELAXED);
}

static void test_memory_threads(void)
{
    enum { N = 1000 };
    unsigned char *z = malloc(N), h[N];
    /* blocks given back and taken again are zero-filled all the same */
    for (int k = 0; k < 8; k++) dev_junk(N + 64 * k);
    release();
    int zero = 1;
    for (int k = 0; k < 8; k++) {
        get(z, dev_alloc(N), N);
        for (int i = 0; i < N; i++) zero &= z[i] == 0;
    }
    CHECKF(zero, "alloc: memory not zero-filled");
    void *d = pool[npool - 1];
    for (int i = 0; i < N; i++) h[i] = (unsigned char)(i * 7);
    bk->copy_in(d, h, N);
    get(z, d, N);
    CHECKF(!memcmp(z, h, N), "copy_in then copy_out does not give the bytes back");
    free(z);
    release();

    bk->set_threads(3);
    CHECK(bk->threads() == 3);
    for (long n = 0; n <= 1001; n += 143) {
        int hits[1001] = {0};
        pf_ctx c = {hits, 16, 3, 0};
        bk->parallel_for(n, 16, 3, pf_body, &c);
        int once = 1;
        for (long i = 0; i < 1001; i++) once &= hits[i] == (i < n);
        CHECKF(once && !c.bad, "parallel_for over %ld: an index not visited exactly once, or a bad chunk", n);
    }
    bk->set_threads(4);
}

/* Resident bytes of this process (statm's second field), -1 where /proc cannot be read. */
static double resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size, res;
    int ok = f && fscanf(f, "%ld %ld", &size, &res) == 2;
    if (f) fclose(f);
    return ok ? (double)res * sysconf(_SC_PAGESIZE) : -1;
}

/* A large block comes zero-filled without being made resident: workspaces are sized for the
 * longest batch and optimizer state covers every embedding row, and most of both is never
 * written. Writing one byte per page then makes it resident, which shows that the measure sees
 * the pages. */
static void test_alloc_untouched(void)
{
    enum { MIB = 1 << 20, BIG = 256 * MIB };
    if (bk != backend_cpu()) { /* the pages are read and written here: the CPU's memory alone */
        printf("test_backend: %s: the check of untouched pages is the CPU backend's, skipped\n", bk->name);
        return;
    }
    double before = resident_bytes();
    if (before < 0) {
        printf("test_backend: /proc/self/statm unreadable, resident-memory check skipped\n");
        return;
    }
    unsigned char *p = bk->alloc(BIG);
    NMT_ASSERT(p);
    double grew = resident_bytes() - before;
    CHECKF(grew < BIG / 2, "alloc of %d MiB made %.1f MiB resident", BIG / MIB, grew / MIB);
    int zero = 1;
    for (size_t i = 0; i < BIG; i += 4096) zero &= p[i] == 0;
    for (size_t i = 0; i < BIG; i += 4096) p[i] = 1;
    grew = resident_bytes() - before;
    CHECKF(zero && grew >= BIG / 2, "a written %d MiB block: %.1f MiB resident, zero-filled %d", BIG / MIB, grew / MIB,
           zero);
    bk->free(p);
}

/* ==== products ============================================================================== */

static void test_gemm(void)
{
    enum { M = 19, N = 23, K = 37 };
    double betas[3] = {0, 1, 0.5};
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int bi = 0; bi < 3; bi++) {
                int lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 2, ldc = N + 5;
                real *A = test_rnd(&R, (size_t)(ta ? K : M) * lda, -1, 1), *B = test_rnd(&R, (size_t)(tb ? N : K) * ldb, -1, 1);
                real *C = test_rnd(&R, (size_t)M * ldc, -1, 1), *got = malloc(sizeof(real) * M * ldc);
                double *want = dbl(C, (size_t)M * ldc);
                for (int i = 0; i < M; i++)
                    for (int j = 0; j < N; j++) {
                        double s = 0;
                        for (int k = 0; k < K; k++)
                            s += (double)(ta ? A[k * lda + i] : A[i * lda + k]) * (tb ? B[j * ldb + k] : B[k * ldb + j]);
                        want[i * ldc + j] = s + betas[bi] * C[i * ldc + j];
                    }
                real *dC = dev_r(C, (size_t)M * ldc);
                bk->gemm(ta, tb, M, N, K, dev_r(A, (size_t)(ta ? K : M) * lda), lda, dev_r(B, (size_t)(tb ? N : K) * ldb),
                         ldb, (real)betas[bi], dC, ldc);
                get(got, dC, sizeof(real) * M * ldc);
                char what[64];
                snprintf(what, sizeof what, "gemm ta %d tb %d beta %g", ta, tb, betas[bi]);
                close_all(what, got, want, (size_t)M * ldc, 1e-5);
                free(A); free(B); free(C); free(got); free(want);
                release();
            }
    /* K = 0: only beta C remains */
    real C[6] = {1, 2, 3, 4, 5, 6}, got[6];
    double want[6] = {0.5, 1, 1.5, 2, 2.5, 3};
    real *dC = dev_r(C, 6);
    bk->gemm(0, 0, 2, 3, 0, dC, 3, dC, 3, (real)0.5, dC, 3);
    get(got, dC, sizeof got);
    close_all("gemm K = 0", got, want, 6, 0);
    release();
}

static void test_colsum(void)
{
    enum { M = 70, N = 29, LDA = 31 };
    real *A = test_rnd(&R, (size_t)M * LDA, -1, 1), *C = test_rnd(&R, N, -1, 1), got[N];
    double want[N];
    for (int j = 0; j < N; j++) {
        want[j] = C[j];
        for (int i = 0; i < M; i++) want[j] += A[i * LDA + j];
    }
    real *dC = dev_r(C, N);
    bk->colsum_add(dC, dev_r(A, (size_t)M * LDA), M, N, LDA);
    get(got, dC, sizeof got);
    close_all("colsum_add", got, want, N, 1e-5);
    free(A); free(C);
    release();
}

/* ==== element-wise ========================================================================== */

static void test_elementwise(void)
{
    enum { N = 1003 };
    real *x = test_rnd(&R, N, -80, 80), *got = malloc(sizeof(real) * N);
    x[0] = 0;
    x[1] = (real)1e-4;
    double *want = malloc(sizeof(double) * N);
    for (int i = 0; i < N; i++) want[i] = exp(x[i]);
    real *dx = dev_r(x, N), *dy = dev_junk(sizeof(real) * N);
    bk->vexp(dy, dx, N);
    get(got, dy, sizeof(real) * N);
    close_rel("vexp", got, want, N, 4e-7);
    bk->vexp(dx, dx, N); /* in place */
    get(got, dx, sizeof(real) * N);
    close_rel("vexp", got, want, N, 4e-7);
    free(x); free(got); free(want);
    release();
}

/* ==== element-wise over strided rows ======================================================== */

/* Two shapes: a few rows, and enough rows × columns that the kernels split rows over threads.
 * Every buffer has its own row stride wider than the row, and the references start from the
 * output's old contents, so an element written outside a row's cols shows as a mismatch. */
typedef struct rows_shape { int R, cols, ldy, lda, ldb; } rows_shape;
static const rows_shape SHAPES[2] = {{5, 37, 40, 42, 38}, {171, 203, 205, 209, 204}};

static double act_ref(int f, double x)
{
    switch (f) {
    case BK_TANH: return tanh(x);
    case BK_SIGMOID: return sigm(x);
    case BK_RELU: return x > 0 ? x : 0;
    case BK_GELU: return 0.5 * x * (1 + tanh(sqrt(2 / acos(-1.0)) * (x + 0.044715 * x * x * x)));
    case BK_SWISH: return x * sigm(x);
    default: return x;
    }
}

static double act_grad_ref(int f, double dy, double y)
{
    return f == BK_TANH ? dy * (1 - y * y) : f == BK_SIGMOID ? dy * y * (1 - y) : dy;
}

static const char *fn_name(int f)
{
    static const char *const name[] = {"identity", "tanh", "sigmoid", "relu", "gelu", "swish"};
    return f >= 0 && f <= BK_SWISH ? name[f] : "?";
}

/* y = f(x + b) (b NULL: f(x)), into a separate buffer and in place */
static void test_act_rows(const rows_shape *s, int f, int with_b)
{
    int NR = s->R, C = s->cols;
    real *y0 = test_rnd(&R, (size_t)NR * s->ldy, -1, 1), *x = test_rnd(&R, (size_t)NR * s->lda, -4, 4), *b = test_rnd(&R, C, -1, 1);
    real *got = malloc(sizeof(real) * NR * s->ldy);
    double *want = dbl(y0, (size_t)NR * s->ldy), *want_in = dbl(x, (size_t)NR * s->lda);
    for (int r = 0; r < NR; r++)
        for (int k = 0; k < C; k++) {
            double v = act_ref(f, (double)x[r * s->lda + k] + (with_b ? b[k] : 0));
            want[r * s->ldy + k] = v;
            want_in[r * s->lda + k] = v;
        }
    real *dy = dev_r(y0, (size_t)NR * s->ldy), *dx = dev_r(x, (size_t)NR * s->lda), *db = with_b ? dev_r(b, C) : NULL;
    char what[96];
    snprintf(what, sizeof what, "act_rows %s%s, %d x %d", fn_name(f), with_b ? " + b" : "", NR, C);
    bk->act_rows(f, dy, s->ldy, dx, s->lda, db, NR, C);
    get(got, dy, sizeof(real) * NR * s->ldy);
    close_all(what, got, want, (size_t)NR * s->ldy, 1e-6);
    bk->act_rows(f, dx, s->lda, dx, s->lda, db, NR, C);
    got = realloc(got, sizeof(real) * NR * s->lda);
    get(got, dx, sizeof(real) * NR * s->lda);
    close_all(what, got, want_in, (size_t)NR * s->lda, 1e-6);
    free(y0); free(x); free(b); free(got); free(want); free(want_in);
    release();
}

/* an activation's derivative (from its output y, or with from_x its input) into dx, then in
 * place over dy; want and want_in are the results the two calls must give */
static void grad_rows_run(const rows_shape *s, int f, int from_x, const real *dx0, const real *dy, const real *y,
                          const double *want, const double *want_in, const char *what, double tol)
{
    int NR = s->R, C = s->cols;
    void (*g)(int, real *, int, const real *, int, const real *, int, int, int) =
        from_x ? bk->act_grad_x_rows : bk->act_grad_rows;
    real *got = malloc(sizeof(real) * NR * (s->ldy > s->lda ? s->ldy : s->lda));
    real *ddx = dev_r(dx0, (size_t)NR * s->ldy), *ddy = dev_r(dy, (size_t)NR * s->lda), *dev_y = dev_r(y, (size_t)NR * s->ldb);
    g(f, ddx, s->ldy, ddy, s->lda, dev_y, s->ldb, NR, C);
    get(got, ddx, sizeof(real) * NR * s->ldy);
    close_all(what, got, want, (size_t)NR * s->ldy, tol);
    g(f, ddy, s->lda, ddy, s->lda, dev_y, s->ldb, NR, C);
    get(got, ddy, sizeof(real) * NR * s->lda);
    close_all(what, got, want_in, (size_t)NR * s->lda, tol);
    free(got);
    release();
}

/* dx = dy ∘ f'(y) with y the activation's output, into dx and in place over dy */
static void test_act_grad_rows(const rows_shape *s, int f)
{
    int NR = s->R, C = s->cols;
    real *dx0 = test_rnd(&R, (size_t)NR * s->ldy, -1, 1), *dy = test_rnd(&R, (size_t)NR * s->lda, -2, 2);
    real *y = test_rnd(&R, (size_t)NR * s->ldb, f == BK_SIGMOID ? 0 : -1, 1);
    double *want = dbl(dx0, (size_t)NR * s->ldy), *want_in = dbl(dy, (size_t)NR * s->lda);
    for (int r = 0; r < NR; r++)
        for (int k = 0; k < C; k++) {
            double v = act_grad_ref(f, dy[r * s->lda + k], y[r * s->ldb + k]);
            want[r * s->ldy + k] = v;
            want_in[r * s->lda + k] = v;
        }
    char what[96];
    snprintf(what, sizeof what, "act_grad_rows %s, %d x %d", fn_name(f), NR, C);
    grad_rows_run(s, f, 0, dx0, dy, y, want, want_in, what, 1e-6);
    free(dx0); free(dy); free(y); free(want); free(want_in);
}

/* zero_rows, copy_rows, add_rows and mul_rows (each into y, then add and mul in place over a) */
static void test_rows_basic(const rows_shape *s)
{
    int NR = s->R, C = s->cols;
    size_t ny = (size_t)NR * s->ldy, na = (size_t)NR * s->lda;
    real *y0 = test_rnd(&R, ny, -1, 1), *a = test_rnd(&R, na, -2, 2), *b = test_rnd(&R, (size_t)NR * s->ldb, -2, 2);
    real *got = malloc(sizeof(real) * (ny > na ? ny : na));
    double *want = malloc(sizeof(double) * (ny > na ? ny : na));
    const char *names[4] = {"zero_rows", "copy_rows", "add_rows", "mul_rows"};
    real *da = dev_r(a, na), *db = dev_r(b, (size_t)NR * s->ldb);
    for (int q = 0; q < 4; q++) {
        for (size_t i = 0; i < ny; i++) want[i] = y0[i];
        for (int r = 0; r < NR; r++)
            for (int k = 0; k < C; k++) {
                double av = a[r * s->lda + k], bv = b[r * s->ldb + k];
                want[r * s->ldy + k] = q == 0 ? 0 : q == 1 ? av : q == 2 ? av + bv : av * bv;
            }
        real *dy = dev_r(y0, ny);
        if (q == 0) bk->zero_rows(dy, s->ldy, NR, C);
        else if (q == 1) bk->copy_rows(dy, s->ldy, da, s->lda, NR, C);
        else if (q == 2) bk->add_rows(dy, s->ldy, da, s->lda, db, s->ldb, NR, C);
        else bk->mul_rows(dy, s->ldy, da, s->lda, db, s->ldb, NR, C);
        get(got, dy, sizeof(real) * ny);
        char what[64];
        snprintf(what, sizeof what, "%s, %d x %d", names[q], NR, C);
        close_all(what, got, want, ny, 1e-6);
    }
    for (int q = 2; q < 4; q++) { /* y = a: the accumulating form the layers use */
        real *dy = dev_r(a, na);
        for (size_t i = 0; i < na; i++) want[i] = a[i];
        for (int r = 0; r < NR; r++)
            for (int k = 0; k < C; k++) {
                double av = a[r * s->lda + k], bv = b[r * s->ldb + k];
                want[r * s->lda + k] = q == 2 ? av + bv : av * bv;
            }
        if (q == 2) bk->add_rows(dy, s->lda, dy, s->lda, db, s->ldb, NR, C);
        else bk->mul_rows(dy, s->lda, dy, s->lda, db, s->ldb, NR, C);
        get(got, dy, sizeof(real) * na);
        close_all(q == 2 ? "add_rows in place" : "mul_rows in place", got, want, na, 1e-6);
    }
    free(y0); free(a); free(b); free(got); free(want);
    release();
}

/* y_r += u_r (x_r - z_r) and ||x_r - z_r||, with z and without */
static void test_rows_dist(const rows_shape *s)
{
    int NR = s->R, C = s->cols;
    size_t ny = (size_t)NR * s->ldy;
    real *y0 = test_rnd(&R, ny, -1, 1), *x = test_rnd(&R, (size_t)NR * s->lda, -2, 2), *z = test_rnd(&R, (size_t)NR * s->ldb, -2, 2);
    real *u = test_rnd(&R, NR, -3, 3), *got = malloc(sizeof(real) * ny);
    double *want = malloc(sizeof(double) * ny), *wd = malloc(sizeof(double) * NR), *gd = malloc(sizeof(double) * NR);
    u[0] = 0; /* a zero scale leaves its row as it is */
    real *dx = dev_r(x, (size_t)NR * s->lda), *dz = dev_r(z, (size_t)NR * s->ldb), *du = dev_r(u, NR);
    for (int wz = 0; wz < 2; wz++) {
        for (size_t i = 0; i < ny; i++) want[i] = y0[i];
        for (int r = 0; r < NR; r++) {
            double ss = 0;
            for (int k = 0; k < C; k++) {
                double d = (double)x[r * s->lda + k] - (wz ? z[r * s->ldb + k] : 0);
                want[r * s->ldy + k] += u[r] * d;
                ss += d * d;
            }
            wd[r] = sqrt(ss);
        }
        real *dy = dev_r(y0, ny);
        double *dd = dev_junk(sizeof(double) * NR);
        bk->axpy_diff_rows(dy, s->ldy, du, dx, s->lda, wz ? dz : NULL, s->ldb, NR, C);
        bk->dist_rows(dd, dx, s->lda, wz ? dz : NULL, s->ldb, NR, C);
        get(got, dy, sizeof(real) * ny);
        get(gd, dd, sizeof(double) * NR);
        char what[64];
        snprintf(what, sizeof what, "axpy_diff_rows%s, %d x %d", wz ? "" : " (no z)", NR, C);
        close_all(what, got, want, ny, 2e-6);
        int bad = 0;
        for (int r = 0; r < NR; r++) bad += !(fabs(gd[r] - wd[r]) <= 1e-6 * wd[r]);
        CHECKF(!bad, "dist_rows%s, %d x %d: %d of %d norms off", wz ? "" : " (no z)", NR, C, bad, NR);
    }
    free(y0); free(x); free(z); free(u); free(got); free(want); free(wd); free(gd);
    release();
}

/* ==== GRU step ============================================================================== */

enum { GB = 5, GN = 21, LDA = 3 * GN + 2, LDHP = GN + 3, LDH = GN + 1, LDDA = 3 * GN + 1 };

static void test_gru_forward(int with_hp)
{
    real *a = test_rnd(&R, GB * LDA, -2, 2), *zr = test_rnd(&R, GB * 2 * GN, -2, 2), *hp = test_rnd(&R, GB * LDHP, -1, 1);
    real *uq = test_rnd(&R, GB * GN, -2, 2), *h0 = test_rnd(&R, GB * LDH, -1, 1);
    unsigned char mask[GB] = {1, 0, 1, 1, 0};
    double wz[GB * GN], wr[GB * GN], wrh[GB * GN], whc[GB * GN], *wh = dbl(h0, GB * LDH);
    for (int b = 0; b < GB; b++)
        for (int k = 0; k < GN; k++) {
            int i = b * GN + k;
            double prev = with_hp ? hp[b * LDHP + k] : 0;
            wz[i] = sigm((double)a[b * LDA + k] + zr[b * 2 * GN + k]);
            wr[i] = sigm((double)a[b * LDA + GN + k] + zr[b * 2 * GN + GN + k]);
            wrh[i] = wr[i] * prev;
            whc[i] = tanh((double)a[b * LDA + 2 * GN + k] + uq[i]);
            wh[b * LDH + k] = mask[b] ? prev + wz[i] * (whc[i] - prev) : prev;
        }
    real *dz = dev_junk(sizeof(real) * GB * GN), *dr = dev_junk(sizeof(real) * GB * GN);
    real *drh = dev_junk(sizeof(real) * GB * GN), *dhc = dev_junk(sizeof(real) * GB * GN);
    real *da = dev_r(a, GB * LDA), *dhp = with_hp ? dev_r(hp, GB * LDHP) : NULL, *dh = dev_r(h0, GB * LDH);
    bk->gru_gates(dz, dr, drh, da, LDA, dev_r(zr, GB * 2 * GN), dhp, LDHP, GB, GN);
    real z[GB * GN], r[GB * GN], rh[GB * GN], hc[GB * GN], h[GB * LDH];
    get(z, dz, sizeof z);
    bk->gru_state(dh, LDH, dhc, dz, da + 2 * GN, LDA, dev_r(uq, GB * GN), dhp, LDHP, dev_copy(mask, GB), GB, GN);
    get(r, dr, sizeof r); get(rh, drh, sizeof rh); get(hc, dhc, sizeof hc); get(h, dh, sizeof h);
    close_all("gru_gates z", z, wz, GB * GN, 3e-7);
    close_all("gru_gates r", r, wr, GB * GN, 3e-7);
    close_all("gru_gates r∘h", rh, wrh, GB * GN, 3e-7);
    close_all("gru_state tanh", hc, whc, GB * GN, 3e-7);
    close_all("gru_state h (stride, mask)", h, wh, GB * LDH, 1e-6);
    free(a); free(zr); free(hp); free(uq); free(h0); free(wh);
    release();
}

static void test_gru_backward(int with_hp)
{
    real *g = test_rnd(&R, GB * GN, -1, 1), *z = test_rnd(&R, GB * GN, 0, 1), *hc = test_rnd(&R, GB * GN, -1, 1), *r = test_rnd(&R, GB * GN, 0, 1);
    real *hp = test_rnd(&R, GB * LDHP, -1, 1), *da0 = test_rnd(&R, GB * LDDA, -1, 1), *dhp0 = test_rnd(&R, GB * GN, -1, 1), *dq = test_rnd(&R, GB * GN, -1, 1);
    unsigned char mask[GB] = {1, 1, 0, 1, 0};
    double *wda = dbl(da0, GB * LDDA), *wdhp = dbl(dhp0, GB * GN);
    for (int b = 0; b < GB; b++)
        for (int k = 0; k < GN; k++) {
            int i = b * GN + k;
            double prev = with_hp ? hp[b * LDHP + k] : 0;
            if (!mask[b]) {
                wda[b * LDDA + k] = wda[b * LDDA + GN + k] = wda[b * LDDA + 2 * GN + k] = 0;
                wdhp[i] += g[i];
                continue;
            }
            wdhp[i] += (double)g[i] * (1 - z[i]);
            wda[b * LDDA + 2 * GN + k] = (double)g[i] * z[i] * (1 - (double)hc[i] * hc[i]);
            wda[b * LDDA + k] = (double)g[i] * (hc[i] - prev) * z[i] * (1 - z[i]);
        }
    real da[GB * LDDA], dhp[GB * GN];
    real *dda = dev_r(da0, GB * LDDA), *ddhp = dev_r(dhp0, GB * GN), *dev_hp = with_hp ? dev_r(hp, GB * LDHP) : NULL;
    unsigned char *dmask = dev_copy(mask, GB);
    bk->gru_grad_state(dda, LDDA, ddhp, dev_r(g, GB * GN), dev_r(z, GB * GN), dev_r(hc, GB * GN), dev_hp, LDHP, dmask, GB, GN);
    get(da, dda, sizeof da); get(dhp, ddhp, sizeof dhp);
    close_all("gru_grad_state da", da, wda, GB * LDDA, 1e-6);
    close_all("gru_grad_state dh_prev", dhp, wdhp, GB * GN, 1e-6);
    if (with_hp) { /* the reset path, after the caller's dq = da_h·U_h^T */
        for (int b = 0; b < GB; b++)
            for (int k = 0; k < GN && mask[b]; k++) {
                int i = b * GN + k;
                wdhp[i] += (double)dq[i] * r[i];
                wda[b * LDDA + GN + k] = (double)dq[i] * hp[b * LDHP + k] * r[i] * (1 - r[i]);
            }
        bk->gru_grad_reset(dda, LDDA, ddhp, dev_r(dq, GB * GN), dev_r(r, GB * GN), dev_hp, LDHP, dmask, GB, GN);
        get(da, dda, sizeof da); get(dhp, ddhp, sizeof dhp);
        close_all("gru_grad_reset da", da, wda, GB * LDDA, 1e-6);
        close_all("gru_grad_reset dh_prev", dhp, wdhp, GB * GN, 1e-6);
    }
    free(g); free(z); free(hc); free(r); free(hp); free(da0); free(dhp0); free(dq); free(wda); free(wdhp);
    release();
}

/* ==== attention ============================================================================= */

enum { AT = 9, ANA = 19, AHD = 22, ALDH = 25, AK = 3 };

/* pre_jk for query row b (q [.,na]) against source row s of UaH, with ξ of row b */
static double att_pre(const real *q, const real *UaH, const real *M, const real *xi, int b, int s, int Bs, int j, int k)
{
    double p = (double)q[b * ANA + k] + UaH[((size_t)j * Bs + s) * ANA + k];
    for (int o = 0; xi && o < AK; o++) p += (double)xi[((size_t)b * AT + j) * AK + o] * M[o * ANA + k];
    return p;
}

/* the forward in double: alpha [B,Tx], ctx [B,hd] */
static void att_ref(double *alpha, double *ctx, const real *UaH, const real *q, const real *v, const real *H,
                    const real *M, const real *xi, const int *xlen, const int *src, int B, int Bs)
{
    for (int b = 0; b < B; b++) {
        int s = src ? src[b] : b, L = xlen[s];
        double e[AT], mx = -INFINITY, sum = 0;
        for (int j = 0; j < L; j++) {
            e[j] = 0;
            for (int k = 0; k < ANA; k++) e[j] += v[k] * tanh(att_pre(q, UaH, M, xi, b, s, Bs, j, k));
            if (e[j] > mx) mx = e[j];
        }
        for (int j = 0; j < L; j++) sum += exp(e[j] - mx);
        for (int j = 0; j < AT; j++) alpha[b * AT + j] = j < L ? exp(e[j] - mx) / sum : 0;
        for (int c = 0; c < AHD; c++) {
            ctx[b * AHD + c] = 0;
            for (int j = 0; j < L; j++) ctx[b * AHD + c] += alpha[b * AT + j] * H[((size_t)j * Bs + s) * ALDH + c];
        }
    }
}

static void test_attn_forward(int with_xi)
{
    enum { B = 6, BS = 3 };
    int src[B] = {0, 2, 1, 1, 0, 2}, xlen[BS] = {9, 4, 7};
    real *UaH = test_rnd(&R, AT * BS * ANA, -1, 1), *q = test_rnd(&R, B * ANA, -1, 1), *v = test_rnd(&R, ANA, -1, 1);
    real *H = test_rnd(&R, AT * BS * ALDH, -1, 1), *M = test_rnd(&R, AK * ANA, -1, 1), *xi = test_rnd(&R, B * AT * AK, 0, 1);
    for (int i = 0; i < B * AT * AK; i += 4) xi[i] = 0; /* zero features are skipped: still right */
    double wal[B * AT], wctx[B * AHD];
    att_ref(wal, wctx, UaH, q, v, H, M, with_xi ? xi : NULL, xlen, src, B, BS);
    bk_attn a = {B, AT, BS, ANA, AHD, ALDH, with_xi ? AK : 0, dev_r(M, AK * ANA), with_xi ? dev_r(xi, B * AT * AK) : NULL,
                 NULL, NULL};
    real al[B * AT], ctx[B * AHD], *dal = dev_junk(sizeof al), *dctx = dev_junk(sizeof ctx);
    bk->attn_forward(dal, dctx, dev_r(UaH, AT * BS * ANA), dev_r(q, B * ANA), dev_r(v, ANA), dev_r(H, AT * BS * ALDH),
                     dev_i(xlen, BS), dev_i(src, B), &a);
    get(al, dal, sizeof al); get(ctx, dctx, sizeof ctx);
    close_all(with_xi ? "attn_forward alpha (ξ)" : "attn_forward alpha", al, wal, B * AT, 2e-6);
    close_all(with_xi ? "attn_forward context (ξ)" : "attn_forward context", ctx, wctx, B * AHD, 2e-6);
    free(UaH); free(q); free(v); free(H); free(M); free(xi);
    release();
}

/* the backward in double, accumulating into the w* arrays as the kernel does (dq, dxi written) */
static void att_backward_ref(double *wdq, double *wdU, double *wdH, double *wdv, double *wdxi, double *wdM,
                             const real *dctx, const real *dalpha, const real *al, const real *UaH, const real *q,
                             const real *v, const real *H, const real *M, const real *xi, const int *xlen, int B)
{
    for (int b = 0; b < B; b++) {
        int L = xlen[b];
        double da[AT], s = 0;
        for (int j = 0; j < L; j++) {
            const real *h = H + ((size_t)j * B + b) * ALDH;
            da[j] = dalpha ? dalpha[b * AT + j] : 0;
            for (int c = 0; c < AHD; c++) {
                da[j] += (double)dctx[b * AHD + c] * h[c];
                wdH[((size_t)j * B + b) * ALDH + c] += (double)al[b * AT + j] * dctx[b * AHD + c];
            }
            s += al[b * AT + j] * da[j];
        }
        for (int k = 0; k < ANA; k++) wdq[b * ANA + k] = 0;
        for (int j = 0; j < AT * AK && xi; j++) wdxi[b * AT * AK + j] = 0;
        for (int j = 0; j < L; j++) {
            double de = al[b * AT + j] * (da[j] - s), dpre[ANA];
            for (int k = 0; k < ANA; k++) {
                double t = tanh(att_pre(q, UaH, M, xi, b, b, B, j, k));
                wdv[b * ANA + k] += de * t;
                dpre[k] = de * v[k] * (1 - t * t);
                wdU[((size_t)j * B + b) * ANA + k] += dpre[k];
                wdq[b * ANA + k] += dpre[k];
            }
            for (int o = 0; xi && o < AK; o++) {
                double acc = 0;
                for (int k = 0; k < ANA; k++) {
                    acc += dpre[k] * M[o * ANA + k];
                    wdM[(size_t)b * AK * ANA + o * ANA + k] += xi[((size_t)b * AT + j) * AK + o] * dpre[k];
                }
                wdxi[((size_t)b * AT + j) * AK + o] = acc;
            }
        }
    }
}

static void test_attn_backward(int with_xi)
{
    enum { B = 5, NU = AT * B * ANA, NH = AT * B * ALDH };
    int xlen[B] = {9, 3, 6, 9, 1};
    real *UaH = test_rnd(&R, NU, -1, 1), *q = test_rnd(&R, B * ANA, -1, 1), *v = test_rnd(&R, ANA, -1, 1), *H = test_rnd(&R, NH, -1, 1);
    real *M = test_rnd(&R, AK * ANA, -1, 1), *xi = test_rnd(&R, B * AT * AK, 0, 1), *dctx = test_rnd(&R, B * AHD, -1, 1);
    real *dalpha = test_rnd(&R, B * AT, -1, 1), *dU0 = test_rnd(&R, NU, -1, 1), *dH0 = test_rnd(&R, NH, -1, 1), *dv0 = test_rnd(&R, B * ANA, -1, 1);
    real *dM0 = test_rnd(&R, B * AK * ANA, -1, 1), al[B * AT], ctx[B * AHD];
    const real *xp = with_xi ? xi : NULL;
    double wal[B * AT], wctx[B * AHD];
    att_ref(wal, wctx, UaH, q, v, H, M, xp, xlen, NULL, B, B);
    for (int i = 0; i < B * AT; i++) al[i] = (real)wal[i];
    double *wdU = dbl(dU0, NU), *wdH = dbl(dH0, NH), *wdv = dbl(dv0, B * ANA), *wdM = dbl(dM0, B * AK * ANA);
    double wdq[B * ANA], wdxi[B * AT * AK];
    att_backward_ref(wdq, wdU, wdH, wdv, wdxi, wdM, dctx, with_xi ? dalpha : NULL, al, UaH, q, v, H, M, xp, xlen, B);
    real *dUaH = dev_r(UaH, NU), *dq_ = dev_r(q, B * ANA), *dv_ = dev_r(v, ANA), *dH_ = dev_r(H, NH);
    int *dxlen = dev_i(xlen, B);
    real *gq = dev_junk(sizeof(real) * B * ANA), *gU = dev_r(dU0, NU), *gH = dev_r(dH0, NH), *gv = dev_r(dv0, B * ANA);
    real *gxi = dev_junk(sizeof(real) * B * AT * AK), *gM = dev_r(dM0, B * AK * ANA);
    bk_attn a = {B, AT, B, ANA, AHD, ALDH, with_xi ? AK : 0, dev_r(M, AK * ANA), with_xi ? dev_r(xi, B * AT * AK) : NULL,
                 gxi, gM};
    /* the forward with src NULL (training's layout) first */
    real *dal = dev_junk(sizeof al), *dctx_ = dev_junk(sizeof ctx);
    bk->attn_forward(dal, dctx_, dUaH, dq_, dv_, dH_, dxlen, NULL, &a);
    get(ctx, dctx_, sizeof ctx);
    close_all("attn_forward context, src NULL", ctx, wctx, B * AHD, 2e-6);
    bk->attn_backward(gq, gU, gH, gv, dev_r(dctx, B * AHD), with_xi ? dev_r(dalpha, B * AT) : NULL, dev_r(al, B * AT),
                      dUaH, dq_, dv_, dH_, dxlen, &a, dev_junk(sizeof(real) * B * AT));
    real *got = malloc(sizeof(real) * NH);
    get(got, gq, sizeof(real) * B * ANA); close_all("attn_backward dq", got, wdq, B * ANA, 2e-6);
    get(got, gU, sizeof(real) * NU); close_all("attn_backward dUaH", got, wdU, NU, 2e-6);
    get(got, gH, sizeof(real) * NH); close_all("attn_backward dH", got, wdH, NH, 2e-6);
    get(got, gv, sizeof(real) * B * ANA); close_all("attn_backward dv_rows", got, wdv, B * ANA, 2e-6);
    if (with_xi) {
        get(got, gxi, sizeof(real) * B * AT * AK); close_all("attn_backward dξ", got, wdxi, B * AT * AK, 2e-6);
        get(got, gM, sizeof(real) * B * AK * ANA); close_all("attn_backward dM_rows", got, wdM, B * AK * ANA, 2e-6);
    }
    free(got); free(UaH); free(q); free(v); free(H); free(M); free(xi); free(dctx); free(dalpha);
    free(dU0); free(dH0); free(dv0); free(dM0); free(wdU); free(wdH); free(wdv); free(wdM);
    release();
}

/* ==== readout =============================================================================== */

/* the ξ window of Markov / LocFer and its backward: rows of lengths 0 .. Tx, windows k = 0 and 2
 * (so that windows run past both ends of a sentence), source rows ld apart */
static void test_attn_window(int k)
{
    enum { WH = 6, WT = 11, WLD = 14 };
    int len[WH] = {WT, 1, 0, 5, 10, 2}, K = 2 * k + 1;
    size_t nxi = (size_t)WH * WT * K;
    real *src = test_rnd(&R, WH * WLD, 0, 1), *dxi = test_rnd(&R, nxi, -1, 1), *dsrc0 = test_rnd(&R, WH * WT, -1, 1);
    real *got = malloc(sizeof(real) * nxi);
    double *want = calloc(nxi, sizeof(double)), *wds = dbl(dsrc0, WH * WT);
    for (int b = 0; b < WH; b++)
        for (int j = 0; j < len[b]; j++)
            for (int o = 0; o < K; o++) {
                int p = j - k + o;
                if (p < 0 || p >= len[b]) continue;
                want[((size_t)b * WT + j) * K + o] = src[b * WLD + p];
                wds[b * WT + p] += dxi[((size_t)b * WT + j) * K + o];
            }
    int *dlen = dev_i(len, WH);
    real *dx = dev_junk(sizeof(real) * nxi), *dd = dev_r(dsrc0, WH * WT);
    bk->attn_window(dx, dev_r(src, WH * WLD), WLD, dlen, WH, WT, k);
    get(got, dx, sizeof(real) * nxi);
    char what[64];
    snprintf(what, sizeof what, "attn_window k = %d", k);
    close_all(what, got, want, nxi, 0);
    bk->attn_window_backward(dd, dev_r(dxi, nxi), dlen, WH, WT, k);
    get(got, dd, sizeof(real) * WH * WT);
    snprintf(what, sizeof what, "attn_window_backward k = %d", k);
    close_all(what, got, wds, WH * WT, 1e-6);
    free(src); free(dxi); free(dsrc0); free(got); free(want); free(wds);
    release();
}

/* ==== the Transformer ======================================================================= */

enum { LR = 13, LC = 45, LDX = LC + 3, LDY = LC + 6, LDDX = LC + 1 };
static const double LN_EPS = 1e-5;

/* layer norm's statistics of one row in double: μ and 1/sqrt(σ² + eps), σ² the biased variance */
static void ln_stats_ref(double *mu, double *rstd, const real *x, int n)
{
    double s = 0, q = 0;
    for (int k = 0; k < n; k++) s += x[k];
    *mu = s / n;
    for (int k = 0; k < n; k++) q += (x[k] - *mu) * (x[k] - *mu);
    *rstd = 1 / sqrt(q / n + LN_EPS);
}

/* y = LN(x) with the row stride of each buffer wider than the row (the old contents of y outside
 * the rows' columns must stay), stats [R, 2]; rows whose mean is far from 0 */
static void test_layer_norm(void)
{
    real *x = test_rnd(&R, LR * LDX, -2, 2), *y0 = test_rnd(&R, LR * LDY, -1, 1), *g = test_rnd(&R, LC, 0.5, 1.5);
    real *b = test_rnd(&R, LC, -1, 1), *got = malloc(sizeof(real) * LR * LDY), st[2 * LR];
    for (int r = 0; r < LR; r++)
        for (int k = 0; k < LC; k++) x[r * LDX + k] += (real)(r - 6);
    double *want = dbl(y0, LR * LDY), wst[2 * LR];
    for (int r = 0; r < LR; r++) {
        ln_stats_ref(&wst[2 * r], &wst[2 * r + 1], x + r * LDX, LC);
        for (int k = 0; k < LC; k++)
            want[r * LDY + k] = g[k] * (x[r * LDX + k] - wst[2 * r]) * wst[2 * r + 1] + b[k];
    }
    real *dy = dev_r(y0, LR * LDY), *dst = dev_junk(sizeof st);
    bk->layer_norm(dy, LDY, dst, dev_r(x, LR * LDX), LDX, dev_r(g, LC), dev_r(b, LC), LR, LC, (real)LN_EPS);
    get(got, dy, sizeof(real) * LR * LDY);
    get(st, dst, sizeof st);
    close_all("layer_norm y", got, want, LR * LDY, 2e-6);
    close_all("layer_norm stats (μ, 1/σ)", st, wst, 2 * LR, 1e-6);
    free(x); free(y0); free(g); free(b); free(got); free(want);
    release();
}

/* dx = (acc: +=) rstd (γ∘dy - mean(γ∘dy) - x̂ mean(γ∘dy∘x̂)) and gx = dy∘x̂, from the statistics
 * the forward stored; the reference's gradient is itself checked against central differences of
 * Σ dy ∘ LN(x) in double, so that a wrong formula in both would not pass */
static void ln_backward_ref(double *dx, double *gx, const real *dy, const real *x, double mu, double rstd,
                            const real *g, int n)
{
    double sg = 0, sgx = 0;
    for (int k = 0; k < n; k++) {
        double xh = (x[k] - mu) * rstd;
        gx[k] = dy[k] * xh;
        sg += g[k] * dy[k];
        sgx += g[k] * dy[k] * xh;
    }
    for (int k = 0; k < n; k++) dx[k] = rstd * (g[k] * dy[k] - sg / n - (x[k] - mu) * rstd * sgx / n);
}

static double ln_loss(const double *x, const real *dy, const real *g, int n)
{
    double s = 0, q = 0, l = 0;
    for (int k = 0; k < n; k++) s += x[k];
    for (int k = 0; k < n; k++) q += (x[k] - s / n) * (x[k] - s / n);
    for (int k = 0; k < n; k++) l += dy[k] * g[k] * (x[k] - s / n) / sqrt(q / n + LN_EPS);
    return l;
}

static void ln_backward_fd(const real *x, const real *dy, const real *g, const double *dx, int n)
{
    double xd[LC], worst = 0, h = 1e-5;
    for (int k = 0; k < n; k++) xd[k] = x[k];
    for (int k = 0; k < n; k++) {
        xd[k] = x[k] + h;
        double lp = ln_loss(xd, dy, g, n);
        xd[k] = x[k] - h;
        double lm = ln_loss(xd, dy, g, n);
        xd[k] = x[k];
        worst = fmax(worst, fabs((lp - lm) / (2 * h) - dx[k]));
    }
    CHECKF(worst < 1e-6, "layer_norm_backward: the reference's dx is %.3g from central differences", worst);
}

static void test_layer_norm_backward(int acc)
{
    real *x = test_rnd(&R, LR * LDX, -2, 2), *dy = test_rnd(&R, LR * LDY, -1, 1), *g = test_rnd(&R, LC, 0.5, 1.5);
    real *dx0 = test_rnd(&R, LR * LDDX, -1, 1), *got = malloc(sizeof(real) * LR * LDDX), st[2 * LR];
    double *wdx = dbl(dx0, LR * LDDX), wgx[LR * LC], d[LC];
    for (int r = 0; r < LR; r++) {
        double mu, rstd;
        ln_stats_ref(&mu, &rstd, x + r * LDX, LC);
        st[2 * r] = (real)mu; /* the kernel's inputs, and the reference's from the same values */
        st[2 * r + 1] = (real)rstd;
        ln_backward_ref(d, wgx + r * LC, dy + r * LDY, x + r * LDX, st[2 * r], st[2 * r + 1], g, LC);
        for (int k = 0; k < LC; k++) wdx[r * LDDX + k] = (acc ? wdx[r * LDDX + k] : 0) + d[k];
        if (r == 0) ln_backward_fd(x, dy, g, d, LC);
    }
    real *ddx = dev_r(dx0, LR * LDDX), *dgx = dev_junk(sizeof(real) * LR * LC);
    bk->layer_norm_backward(ddx, LDDX, acc, dgx, dev_r(dy, LR * LDY), LDY, dev_r(x, LR * LDX), LDX, dev_r(st, 2 * LR),
                            dev_r(g, LC), LR, LC);
    get(got, ddx, sizeof(real) * LR * LDDX);
    close_all(acc ? "layer_norm_backward dx (acc)" : "layer_norm_backward dx", got, wdx, LR * LDDX, 2e-6);
    get(got, dgx, sizeof(real) * LR * LC);
    close_all("layer_norm_backward gx", got, wgx, LR * LC, 1e-6);
    free(x); free(dy); free(g); free(dx0); free(got); free(wdx);
    release();
}

enum { SN = 3, SH = 2, SQ = 5, SK = 13 };

/* softmax(scale · S) of each row over its keys j < len (klen[o] or kfix; with causal also
 * j <= i + qoff), the rest 0; a row with no key all 0 */
static void test_attn_softmax(const int *klen, int kfix, int causal, int qoff)
{
    const real scale = (real)0.37;
    enum { NS = SN * SH * SQ * SK };
    real *S = test_rnd(&R, NS, -6, 6), got[NS];
    double want[NS];
    for (int r = 0; r < SN * SH * SQ; r++) {
        int o = r / (SH * SQ), i = r % SQ, len = klen ? klen[o] : kfix;
        if (causal && i + qoff + 1 < len) len = i + qoff + 1;
        if (len > SK) len = SK;
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < len; j++) mx = fmax(mx, scale * (double)S[r * SK + j]);
        for (int j = 0; j < len; j++) sum += exp(scale * (double)S[r * SK + j] - mx);
        for (int j = 0; j < SK; j++) want[r * SK + j] = j < len ? exp(scale * (double)S[r * SK + j] - mx) / sum : 0;
    }
    real *dS = dev_r(S, NS);
    bk->attn_softmax(dS, klen ? dev_i(klen, SN) : NULL, kfix, SN, SH, SQ, SK, causal, qoff, scale);
    get(got, dS, sizeof got);
    char what[96];
    snprintf(what, sizeof what, "attn_softmax (%s, causal %d, qoff %d)", klen ? "klen" : "kfix", causal, qoff);
    close_all(what, got, want, NS, 1e-6);
    free(S);
    release();
}

/* dS = scale P ∘ (dP - Σ_j P_j dP_j) per row, into its own buffer and in place over dP */
static void test_attn_softmax_backward(void)
{
    enum { ROWS = 17, TK = 13, N = ROWS * TK };
    const real scale = (real)0.37;
    real *P = test_rnd(&R, N, 0, 1), *dP = test_rnd(&R, N, -2, 2), got[N];
    double want[N];
    for (int r = 0; r < ROWS; r++) {
        double s = 0, d = 0;
        for (int j = 0; j < TK; j++) s += P[r * TK + j];
        for (int j = 0; j < TK; j++) P[r * TK + j] = (real)(P[r * TK + j] / s);
        for (int j = 0; j < TK; j++) d += (double)P[r * TK + j] * dP[r * TK + j];
        for (int j = 0; j < TK; j++) want[r * TK + j] = scale * (double)P[r * TK + j] * (dP[r * TK + j] - d);
    }
    real *dp = dev_r(P, N), *ddP = dev_r(dP, N), *dS = dev_junk(sizeof got);
    bk->attn_softmax_backward(dS, dp, ddP, ROWS, TK, scale);
    get(got, dS, sizeof got);
    close_all("attn_softmax_backward", got, want, N, 1e-6);
    bk->attn_softmax_backward(ddP, dp, ddP, ROWS, TK, scale);
    get(got, ddP, sizeof got);
    close_all("attn_softmax_backward in place", got, want, N, 1e-6);
    free(P); free(dP);
    release();
}

/* the batched products' layout: O products' groups of `inner` heads; operand X of product (o, k)
 * at o·ox + k·ix, each a matrix of `span` elements with gaps between them */
enum { BM = 5, BN = 7, BK = 11, BO = 4, BNB = 3 };
typedef struct bmm_case { int ta, tb, inner, sel; real beta; } bmm_case;

/* the elements a matrix of rows x cols with row stride ld covers */
static long mat_span(int rows, int cols, int ld) { return (long)(rows - 1) * ld + cols; }

/* op(A)[i,k] and op(B)[k,j] of one product */
static double opa(const bmm_case *t, const real *A, int lda, int i, int k)
{
    return t->ta ? A[k * lda + i] : A[i * lda + k];
}
static double opb(const bmm_case *t, const real *B, int ldb, int k, int j)
{
    return t->tb ? B[j * ldb + k] : B[k * ldb + j];
}

static void test_gemm_batched(const bmm_case *t)
{
    static const int sel[BO] = {2, 0, 2, 1};
    int I = t->inner, NB = t->sel ? BNB : BO;
    int lda = (t->ta ? BM : BK) + 2, ldb = (t->tb ? BK : BN) + 3, ldc = BN + 1;
    long sa = mat_span(t->ta ? BK : BM, t->ta ? BM : BK, lda), sb = mat_span(t->tb ? BN : BK, t->tb ? BK : BN, ldb);
    long sc = mat_span(BM, BN, ldc);
    bk_batch s = {BO * I, I, I * (sa + 2) + 3, sa + 2, I * (sb + 1) + 5, sb + 1, I * (sc + 1) + 2, sc + 1, NULL};
    size_t na = (size_t)(BO * s.oa + 4), nb = (size_t)(NB * s.ob + 4), nc = (size_t)(BO * s.oc + 4);
    real *A = test_rnd(&R, na, -1, 1), *B = test_rnd(&R, nb, -1, 1), *C = test_rnd(&R, nc, -1, 1);
    real *got = malloc(sizeof(real) * nc), *alone = malloc(sizeof(real) * nc);
    double *want = dbl(C, nc);
    for (int p = 0; p < BO * I; p++) {
        int o = p / I, k = p % I;
        const real *a = A + o * s.oa + k * s.ia, *b = B + (t->sel ? sel[o] : o) * s.ob + k * s.ib;
        long c = o * s.oc + k * s.ic;
        for (int i = 0; i < BM; i++)
            for (int j = 0; j < BN; j++) {
                double v = 0;
                for (int q = 0; q < BK; q++) v += opa(t, a, lda, i, q) * opb(t, b, ldb, q, j);
                want[c + i * ldc + j] = v + (t->beta != 0 ? t->beta * (double)C[c + i * ldc + j] : 0);
                if (t->beta == 0) C[c + i * ldc + j] = NAN; /* beta 0: C is not read */
            }
    }
    real *dA = dev_r(A, na), *dB = dev_r(B, nb), *dC = dev_r(C, nc), *dC1 = dev_r(C, nc);
    s.sel = t->sel ? dev_i(sel, BO) : NULL;
    bk->gemm_batched(t->ta, t->tb, BM, BN, BK, dA, lda, dB, ldb, t->beta, dC, ldc, &s);
    get(got, dC, sizeof(real) * nc);
    char what[96];
    snprintf(what, sizeof what, "gemm_batched ta %d tb %d, %d heads, beta %g%s", t->ta, t->tb, I, t->beta,
             t->sel ? ", sel" : "");
    close_all(what, got, want, nc, 1e-5);
    /* every row computed alone: the rows one call at a time give the same bits */
    for (int i = 0; i < BM; i++)
        bk->gemm_batched(t->ta, t->tb, 1, BN, BK, dA + (t->ta ? i : i * lda), lda, dB, ldb, t->beta, dC1 + i * ldc, ldc,
                         &s);
    get(alone, dC1, sizeof(real) * nc);
    CHECKF(!memcmp(alone, got, sizeof(real) * nc), "%s: a row computed alone differs from the same row among %d", what,
           BM);
    free(A); free(B); free(C); free(got); free(alone); free(want);
    release();
}

/* Wider and deeper products than above: columns over several of the CPU kernel's 16-column
 * blocks, rows past its 4-row ones, and K past its packed tile (1024), where it takes the plain
 * loop. On the CPU (and devsim, its kernels) every element is the float sum in order from k = 0,
 * one product then one addition: the same bits as that loop written here, and so a row's result
 * cannot depend on the rows or heads beside it. Other devices: within 1e-5 of it. */
static void test_gemm_batched_wide(int ta, int tb, int M, int N, int K)
{
    int lda = (ta ? M : K) + 1, ldb = (tb ? K : N) + 2, ldc = N + 3;
    long sa = mat_span(ta ? K : M, ta ? M : K, lda), sb = mat_span(tb ? N : K, tb ? K : N, ldb), sc = mat_span(M, N, ldc);
    bk_batch s = {2, 2, 2 * sa, sa, 2 * sb, sb, 2 * sc, sc, NULL};
    real *A = test_rnd(&R, 4 * sa, -1, 1), *B = test_rnd(&R, 4 * sb, -1, 1), *C = calloc(4 * sc, sizeof(real));
    real *want = calloc(4 * sc, sizeof(real));
    double *wd = calloc(4 * sc, sizeof(double));
    bmm_case t = {ta, tb, 2, 0, 0};
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                real v = 0;
                for (int q = 0; q < K; q++) {
                    real prod = (real)opa(&t, A + p * sa, lda, i, q) * (real)opb(&t, B + p * sb, ldb, q, j);
                    v = v + prod;
                }
                want[p * sc + i * ldc + j] = v;
                wd[p * sc + i * ldc + j] = v;
            }
    real *dA = dev_r(A, 4 * sa), *dB = dev_r(B, 4 * sb), *dC = dev_r(C, 4 * sc);
    bk->gemm_batched(ta, tb, M, N, K, dA, lda, dB, ldb, 0, dC, ldc, &s);
    get(C, dC, sizeof(real) * 4 * sc);
    char what[96];
    snprintf(what, sizeof what, "gemm_batched ta %d tb %d, %d x %d x %d", ta, tb, M, N, K);
    int cpu = !strcmp(bk->name, "cpu") || !strcmp(bk->name, "devsim");
    if (cpu) {
        long off = 0;
        for (long e = 0; e < 2 * sc && !off; e++) off = memcmp(&C[e], &want[e], sizeof(real)) ? e + 1 : 0;
        CHECKF(!off, "%s: element %ld is %.9g, the in-order float sum %.9g", what, off - 1, off ? C[off - 1] : 0,
               off ? want[off - 1] : 0);
    } else {
        close_all(what, C, wd, 2 * sc, 1e-5);
    }
    free(A); free(B); free(C); free(want); free(wd);
    release();
}

/* A search step's one-row products: with B picked by sel, the hypotheses of a sentence side by
 * side (runs of one B, as the CPU merges into one product), or each with its own B (the CPU's
 * four at once). Every element the in-order float sum of its own row and B on the CPU (and
 * devsim), within 1e-5 elsewhere; runs of 1 to 6 rows, over and under the 4-row blocks; 24
 * products, past groups of 4, enough for a team; columns over two 16-column blocks and 11 more
 * (a short 8 x 8 transpose); K past the transposes. */
static void test_gemm_batched_runs(int tb, real beta, int use_sel)
{
    enum { G = 12, H = 2, N = 43, K = 45, NS = 3 };
    static const int sel[G] = {0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 2, 2};
    int nmat = use_sel ? NS : G, ldb = (tb ? K : N) + 2;
    long sa = K + 3, sb = mat_span(tb ? N : K, tb ? K : N, ldb), sc = N + 1;
    bk_batch s = {G * H, H, H * sa + 1, sa, H * sb, sb, H * sc + 2, sc, NULL};
    size_t na = (size_t)(G * s.oa), nb = (size_t)(nmat * s.ob), nc = (size_t)(G * s.oc);
    real *A = test_rnd(&R, na, -1, 1), *B = test_rnd(&R, nb, -1, 1), *C = test_rnd(&R, nc, -1, 1);
    real *want = malloc(sizeof(real) * nc);
    double *wd = malloc(sizeof(double) * nc);
    bmm_case t = {0, tb, H, 1, beta};
    memcpy(want, C, sizeof(real) * nc);
    for (long e = 0; e < (long)nc; e++) wd[e] = C[e];
    for (int o = 0; o < G; o++)
        for (int k = 0; k < H; k++)
            for (int jj = 0; jj < N; jj++) {
                const real *a = A + o * s.oa + k * s.ia, *b = B + (use_sel ? sel[o] : o) * s.ob + k * s.ib;
                long c = o * s.oc + k * s.ic + jj;
                real v = 0;
                for (int q = 0; q < K; q++) v = v + (real)opa(&t, a, 0, 0, q) * (real)opb(&t, b, ldb, q, jj);
                want[c] = beta == 0 ? v : beta * C[c] + v;
                wd[c] = want[c];
                if (beta == 0) C[c] = NAN; /* beta 0: C is not read */
            }
    real *dA = dev_r(A, na), *dB = dev_r(B, nb), *dC = dev_r(C, nc);
    s.sel = use_sel ? dev_i(sel, G) : NULL;
    bk->gemm_batched(0, tb, 1, N, K, dA, (int)sa, dB, ldb, beta, dC, (int)sc, &s);
    get(C, dC, sizeof(real) * nc);
    char what[96];
    snprintf(what, sizeof what, "gemm_batched one row, %s, tb %d, beta %g", use_sel ? "runs of one B" : "a B each", tb,
             beta);
    if (!strcmp(bk->name, "cpu") || !strcmp(bk->name, "devsim")) {
        long off = 0;
        for (long e = 0; e < (long)nc && !off; e++) off = memcmp(&C[e], &want[e], sizeof(real)) ? e + 1 : 0;
        CHECKF(!off, "%s: element %ld is %.9g, the in-order float sum %.9g", what, off - 1, off ? C[off - 1] : 0,
               off ? want[off - 1] : 0);
    } else {
        close_all(what, C, wd, nc, 1e-5);
    }
    free(A); free(B); free(C); free(want); free(wd);
    release();
}

static void tests_gemm_batched(void)
{
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            test_gemm_batched_wide(ta, tb, 9, 37, 45);
            test_gemm_batched_wide(ta, tb, 3, 24, 19);
            test_gemm_batched_wide(ta, tb, 3, 20, 1100);
        }
    for (int tb = 0; tb < 2; tb++)
        for (int beta = 0; beta < 2; beta++)
            for (int use_sel = 0; use_sel < 2; use_sel++) test_gemm_batched_runs(tb, (real)beta, use_sel);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int inner = 1; inner <= 3; inner += 2)
                for (int beta = 0; beta < 2; beta++)
                    for (int sel = 0; sel < 2; sel++) {
                        bmm_case t = {ta, tb, inner, sel, (real)beta};
                        test_gemm_batched(&t);
                    }
}

/* the feed-forward activations and their derivatives in double */
static double act_x_grad_ref(int f, double x)
{
    double c = sqrt(2 / acos(-1.0)), t = tanh(c * (x + 0.044715 * x * x * x)), s = sigm(x);
    switch (f) {
    case BK_RELU: return x > 0;
    case BK_GELU: return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x);
    case BK_SWISH: return s + x * s * (1 - s);
    case BK_TANH: return 1 - tanh(x) * tanh(x);
    case BK_SIGMOID: return s * (1 - s);
    default: return 1;
    }
}

/* dx = dy ∘ f'(x) from the input, into dx and in place over dy; the reference's derivative
 * checked against central differences of act_ref first (relu away from its kink) */
static void test_act_grad_x_rows(const rows_shape *s, int f)
{
    int NR = s->R, C = s->cols;
    real *dx0 = test_rnd(&R, (size_t)NR * s->ldy, -1, 1), *dy = test_rnd(&R, (size_t)NR * s->lda, -2, 2);
    real *x = test_rnd(&R, (size_t)NR * s->ldb, -5, 5);
    double *want = dbl(dx0, (size_t)NR * s->ldy), *want_in = dbl(dy, (size_t)NR * s->lda), worst = 0, h = 1e-5;
    for (int r = 0; r < NR; r++)
        for (int k = 0; k < C; k++) {
            double xv = x[r * s->ldb + k], d = act_x_grad_ref(f, xv);
            if (fabs(xv) > 1e-3) worst = fmax(worst, fabs((act_ref(f, xv + h) - act_ref(f, xv - h)) / (2 * h) - d));
            want[r * s->ldy + k] = want_in[r * s->lda + k] = dy[r * s->lda + k] * d;
        }
    char what[96];
    snprintf(what, sizeof what, "act_grad_x_rows %s, %d x %d", fn_name(f), NR, C);
    CHECKF(worst < 1e-8, "%s: the reference's derivative is %.3g from central differences", what, worst);
    grad_rows_run(s, f, 1, dx0, dy, x, want, want_in, what, 2e-6);
    free(dx0); free(dy); free(x); free(want); free(want_in);
}

/* dst row i (stride ldd) = src row ids[i] (stride lds), cols columns; the rest of dst unchanged */
static void test_gather_rows_ld(void)
{
    enum { SR = 9, LDS = 23, COLS = 17, LDD = 19, N = 6 };
    int ids[N] = {3, 0, 8, 3, 5, 8};
    real *src = test_rnd(&R, SR * LDS, -1, 1), *dst0 = test_rnd(&R, N * LDD, -1, 1), got[N * LDD];
    double *want = dbl(dst0, N * LDD);
    for (int i = 0; i < N; i++)
        for (int k = 0; k < COLS; k++) want[i * LDD + k] = src[ids[i] * LDS + k];
    real *dd = dev_r(dst0, N * LDD);
    bk->gather_rows_ld(dd, LDD, dev_r(src, SR * LDS), LDS, dev_i(ids, N), N, COLS);
    get(got, dd, sizeof got);
    close_all("gather_rows_ld", got, want, N * LDD, 0);
    free(src); free(dst0); free(want);
    release();
}

/* entry i of a dropout mask: u = the top 24 bits of splitmix64's finaliser of seed + (i+1)·φ, / 2^24 */
static real drop_ref(uint64_t seed, long i, real p, real keep)
{
    uint64_t z = seed + (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ldexp((double)(z >> 40), -24) >= p ? keep : 0;
}

/* dropout masks: each entry 0 or 1/(1-p), the kept share near 1-p, the same mask from the same
 * seed, another from another seed, and the entry at i the same whatever n (a hash of (seed, i)) */
static void test_dropout_mask(void)
{
    enum { N = 20000 };
    real *a = malloc(sizeof(real) * N), *b = malloc(sizeof(real) * N), *c = malloc(sizeof(real) * N);
    real *da = dev_r(a, N), *db = dev_r(b, N), *dc = dev_r(c, N);
    double p = 0.3;
    bk->dropout_mask(da, N, 42, (real)p);
    bk->dropout_mask(db, N, 42, (real)p);
    bk->dropout_mask(dc, N - 1, 43, (real)p);
    get(a, da, sizeof(real) * N);
    get(b, db, sizeof(real) * N);
    get(c, dc, sizeof(real) * (N - 1));
    int bad = 0, kept = 0, same_c = 0;
    real keep = (real)(1 / (1 - p));
    for (int i = 0; i < N; i++) {
        bad += !(a[i] == 0 || a[i] == keep) || a[i] != b[i];
        kept += a[i] != 0;
        same_c += i < N - 1 && a[i] == c[i];
    }
    CHECKF(!bad, "dropout_mask: %d entries neither 0 nor 1/(1-p), or not drawn again by the same seed", bad);
    CHECKF(fabs(kept / (double)N - (1 - p)) < 0.02, "dropout_mask: %d of %d kept at p %.1f", kept, N, p);
    CHECKF(same_c < 0.7 * N, "dropout_mask: seeds 42 and 43 agree on %d of %d entries", same_c, N);
    bk->dropout_mask(dc, 100, 42, (real)p);
    get(c, dc, sizeof(real) * 100);
    CHECK(!memcmp(a, c, sizeof(real) * 100));
    /* the hash as backend.h states it, written here; on the CPU in both its forms */
    int off = -1;
    for (int i = 0; i < N && off < 0; i++) off = a[i] != drop_ref(42, i, (real)p, keep) ? i : -1;
    CHECKF(off < 0, "dropout_mask: entry %d is %g, splitmix64 gives %g", off, off < 0 ? 0 : a[off],
           off < 0 ? 0 : drop_ref(42, off, (real)p, keep));
    if (!strcmp(bk->name, "cpu") && cpu_dropout_wide(-1)) {
        cpu_dropout_wide(0);
        bk->dropout_mask(dc, N - 3, 42, (real)p);
        cpu_dropout_wide(1);
        get(c, dc, sizeof(real) * (N - 3));
        CHECKF(!memcmp(a, c, sizeof(real) * (N - 3)), "dropout_mask: the scalar form differs from AVX-512's");
    }
    free(a); free(b); free(c);
    release();
}

static void test_maxout(void)
{
    enum { TB = 14, N = 9, L = 13, V = 203, H = 7 };
    int rows[N] = {0, 2, 3, 5, 6, 7, 10, 12, 13};
    real *tt = test_rnd(&R, TB * 2 * L, -1, 1), *b = test_rnd(&R, 2 * L, -1, 1), *dt = test_rnd(&R, N * L, -1, 1), *dtt0 = test_rnd(&R, TB * 2 * L, -1, 1);
    tt[2 * 2 * L + 1] = tt[2 * 2 * L] + b[0] - b[1]; /* a tie: the first of the pair wins */
    double wt[N * L], *wdtt = dbl(dtt0, TB * 2 * L);
    unsigned char wwh[TB * L], wh[TB * L];
    for (int r = 0; r < N; r++)
        for (int k = 0; k < L; k++) {
            int i = rows[r];
            double x0 = (real)(tt[i * 2 * L + 2 * k] + b[2 * k]), x1 = (real)(tt[i * 2 * L + 2 * k + 1] + b[2 * k + 1]);
            wwh[i * L + k] = x1 > x0;
            wt[r * L + k] = x1 > x0 ? x1 : x0;
            wdtt[i * 2 * L + 2 * k + wwh[i * L + k]] = dt[r * L + k];
        }
    real t[N * L], *dtv = dev_junk(sizeof t), *dtt_ = dev_r(tt, TB * 2 * L), *db = dev_r(b, 2 * L);
    unsigned char *dwh = dev_junk(TB * L);
    int *drows = dev_i(rows, N);
    bk->maxout(dtv, dwh, dtt_, db, drows, N, L);
    get(t, dtv, sizeof t); get(wh, dwh, sizeof wh);
    close_all("maxout", t, wt, N * L, 0);
    int same = 1;
    for (int r = 0; r < N; r++) same &= !memcmp(wh + rows[r] * L, wwh + rows[r] * L, L);
    CHECKF(same, "maxout: the recorded winners differ");
    real *gdtt = dev_r(dtt0, TB * 2 * L), *dtt = malloc(sizeof(real) * TB * 2 * L);
    bk->maxout_backward(gdtt, dev_r(dt, N * L), dwh, drows, N, L);
    get(dtt, gdtt, sizeof(real) * TB * 2 * L);
    close_all("maxout_backward", dtt, wdtt, TB * 2 * L, 0);
    bk->maxout(dtv, NULL, dtt_, db, NULL, N, L); /* rows NULL: the first N rows, no winners kept */
    get(t, dtv, sizeof t);
    for (int r = 0; r < N; r++)
        for (int k = 0; k < L; k++) {
            real x0 = tt[r * 2 * L + 2 * k] + b[2 * k], x1 = tt[r * 2 * L + 2 * k + 1] + b[2 * k + 1];
            wt[r * L + k] = x1 > x0 ? x1 : x0;
        }
    close_all("maxout, rows NULL", t, wt, N * L, 0);
    real *row = test_rnd(&R, V, -1, 1), *Z = malloc(sizeof(real) * H * V), *dZ = dev_junk(sizeof(real) * H * V);
    double *wZ = malloc(sizeof(double) * H * V);
    for (int i = 0; i < H * V; i++) wZ[i] = row[i % V];
    bk->repeat_row(dZ, dev_r(row, V), H, V);
    get(Z, dZ, sizeof(real) * H * V);
    close_all("repeat_row", Z, wZ, H * V, 0);
    free(tt); free(b); free(dt); free(dtt0); free(wdtt); free(dtt); free(row); free(Z); free(wZ);
    release();
}

static void test_softmax_nll(double ls)
{
    enum { TB = 8, N = 5, V = 203, BLK = 2, NBLK = (N + BLK - 1) / BLK };
    int rows[N] = {0, 1, 3, 4, 6}, y[TB] = {5, 202, 7, 0, 100, 9, 201, 3};
    real *z = test_rnd(&R, N * V, -8, 8), *lp0 = test_rnd(&R, TB, -1, 1), *dbias0 = test_rnd(&R, V, -1, 1);
    double *wz = malloc(sizeof(double) * N * V), wrinv[N], wnll[N], *wlp = dbl(lp0, TB), *wdb = dbl(dbias0, V);
    double *wg = malloc(sizeof(double) * N * V);
    const double scale = 0.37;
    for (int r = 0; r < N; r++) {
        double mx = -INFINITY, sum = 0;
        for (int k = 0; k < V; k++) mx = z[r * V + k] > mx ? z[r * V + k] : mx;
        for (int k = 0; k < V; k++) sum += wz[r * V + k] = exp(z[r * V + k] - mx);
        wrinv[r] = 1 / sum;
        wlp[rows[r]] = z[r * V + y[rows[r]]] - mx - log(sum);
        wnll[r] = -wlp[rows[r]];
        double mean = 0; /* (1/V) Σ_k -log p(k), term by term */
        for (int k = 0; k < V; k++) mean += (mx + log(sum) - z[r * V + k]) / V;
        wnll[r] = (1 - ls) * wnll[r] + ls * mean;
        for (int k = 0; k < V; k++) {
            double q = (k == y[rows[r]] ? 1 - ls : 0) + ls / V;
            wg[r * V + k] = scale * (wz[r * V + k] * wrinv[r] - q);
            wdb[k] += wg[r * V + k];
        }
    }
    real *dz = dev_r(z, N * V), *dlp = dev_r(lp0, TB), *got = malloc(sizeof(real) * N * V), lp[TB];
    double *drinv = dev_junk(sizeof(double) * N), *dnll = dev_junk(sizeof(double) * N), rinv[N], nll[N];
    int *drows = dev_i(rows, N), *dy = dev_i(y, TB);
    bk->softmax_nll(dz, drinv, dnll, dlp, drows, dy, N, V, ls);
    get(got, dz, sizeof(real) * N * V); get(rinv, drinv, sizeof rinv); get(nll, dnll, sizeof nll); get(lp, dlp, sizeof lp);
    close_rel("softmax_nll e^{z - max}", got, wz, N * V, 1e-6);
    close_all("softmax_nll log p (only at rows)", lp, wlp, TB, 1e-6);
    int ok = 1;
    for (int r = 0; r < N; r++) ok &= fabs(rinv[r] - wrinv[r]) <= 1e-6 * wrinv[r] && fabs(nll[r] - wnll[r]) <= 1e-5;
    CHECKF(ok, "softmax_nll (smoothing %g): 1/Σ or the NLL differ", ls);
    real *ddb = dev_r(dbias0, V), db[V], *dz2 = dev_r(got, N * V), *ddb2 = dev_r(dbias0, V);
    bk->softmax_nll_backward(dz, ddb, dev_junk(sizeof(real) * NBLK * V), drinv, drows, dy, N, V, (real)scale, (real)ls, BLK,
                             NULL);
    get(got, dz, sizeof(real) * N * V); get(db, ddb, sizeof db);
    close_all("softmax_nll_backward dlogits", got, wg, N * V, 1e-6);
    close_all("softmax_nll_backward dbias", db, wdb, V, 1e-6);
    /* asked for the bf16 form as well: the same dlogits and bias gradient, bit for bit, and each
     * bf16 the nearest to its dlogit */
    uint16_t *dz16 = dev_junk(sizeof(uint16_t) * N * V), *z16 = malloc(sizeof(uint16_t) * N * V);
    real *got2 = malloc(sizeof(real) * N * V), db2[V];
    bk->softmax_nll_backward(dz2, ddb2, dev_junk(sizeof(real) * NBLK * V), drinv, drows, dy, N, V, (real)scale, (real)ls,
                             BLK, dz16);
    get(got2, dz2, sizeof(real) * N * V); get(db2, ddb2, sizeof db2); get(z16, dz16, sizeof(uint16_t) * N * V);
    CHECKF(!memcmp(got2, got, sizeof(real) * N * V) && !memcmp(db2, db, sizeof db),
           "softmax_nll_backward (smoothing %g): asking for the bf16 form changed dlogits or dbias", ls);
    int round_bad = 0;
    for (int i = 0; i < N * V; i++) round_bad += !same_bf16(z16[i], want_bf16((float)got[i]));
    CHECKF(!round_bad, "softmax_nll_backward (smoothing %g): %d of %d bf16 dlogits not the nearest", ls, round_bad, N * V);
    free(z); free(lp0); free(dbias0); free(wz); free(wlp); free(wdb); free(wg); free(got); free(got2); free(z16);
    release();
}

static void test_embeddings(void)
{
    enum { ROWS = 20, COLS = 37, N = 11 };
    int ids[N] = {3, 0, 19, 3, 7, -1, 7, 12, 0, 5, 3}; /* -1: a zero row */
    unsigned char mask[N] = {1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1};
    real *table = test_rnd(&R, ROWS * COLS, -1, 1), *src = test_rnd(&R, N * COLS, -1, 1), got[ROWS * COLS];
    double want[ROWS * COLS];
    for (int i = 0; i < N * COLS; i++) want[i] = ids[i / COLS] < 0 ? 0 : table[ids[i / COLS] * COLS + i % COLS];
    real *dtab = dev_r(table, ROWS * COLS), *dst = dev_junk(sizeof(real) * N * COLS);
    int *dids = dev_i(ids, N);
    bk->gather_rows(dst, dtab, dids, N, COLS);
    get(got, dst, sizeof(real) * N * COLS);
    close_all("gather_rows", got, want, N * COLS, 0);
    ids[5] = 7;
    dids = dev_i(ids, N);
    /* m: with the mask; q: ids NULL, row i onto row i */
    for (int m = 0; m < 2; m++)
        for (int q = 0; q < 2; q++) {
            for (int i = 0; i < ROWS * COLS; i++) want[i] = table[i];
            for (int i = 0; i < N; i++)
                for (int k = 0; k < COLS && (m == 0 || mask[i]); k++) want[(q ? i : ids[i]) * COLS + k] += src[i * COLS + k];
            real *d = dev_r(table, ROWS * COLS);
            bk->scatter_add_rows(d, dev_r(src, N * COLS), q ? NULL : dids, m ? dev_copy(mask, N) : NULL, N, COLS);
            get(got, d, sizeof got);
            char what[64];
            snprintf(what, sizeof what, "scatter_add_rows%s%s", m ? ", masked" : "", q ? ", ids NULL" : "");
            close_all(what, got, want, ROWS * COLS, 1e-6);
        }
    /* scatter_rows: distinct rows replaced, the others left as they were */
    int put[5] = {4, 0, 19, 11, 7};
    for (int i = 0; i < ROWS * COLS; i++) want[i] = table[i];
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < COLS; k++) want[put[i] * COLS + k] = src[i * COLS + k];
    real *d = dev_r(table, ROWS * COLS);
    bk->scatter_rows(d, dev_r(src, 5 * COLS), dev_i(put, 5), 5, COLS);
    get(got, d, sizeof got);
    close_all("scatter_rows", got, want, ROWS * COLS, 0);
    /* gather_cols: columns of table [ROWS, COLS] by index, and rows of it transposed */
    int cols[4] = {36, 0, 5, 5};
    real *dcol = dev_junk(sizeof(real) * COLS * 4);
    for (int k = 0; k < ROWS; k++)
        for (int j = 0; j < 4; j++) want[k * 4 + j] = table[k * COLS + cols[j]];
    bk->gather_cols(dcol, dtab, dev_i(cols, 4), 4, ROWS, 1, COLS);
    get(got, dcol, sizeof(real) * ROWS * 4);
    close_all("gather_cols (columns)", got, want, ROWS * 4, 0);
    for (int k = 0; k < COLS; k++)
        for (int j = 0; j < 4; j++) want[k * 4 + j] = table[put[j] * COLS + k];
    bk->gather_cols(dcol, dtab, dev_i(put, 4), 4, COLS, COLS, 1);
    get(got, dcol, sizeof(real) * COLS * 4);
    close_all("gather_cols (rows transposed)", got, want, COLS * 4, 0);
    /* single elements by flat index (beam search's scores of the words a prefix or a constraint wants) */
    int flat[5] = {0, ROWS * COLS - 1, 3 * COLS + 2, 3 * COLS + 2, COLS};
    for (int j = 0; j < 5; j++) want[j] = table[flat[j]];
    bk->gather_cols(dcol, dtab, dev_i(flat, 5), 5, 1, 1, 0);
    get(got, dcol, sizeof(real) * 5);
    close_all("gather_cols (elements)", got, want, 5, 0);
    free(table); free(src);
    release();
}

/* ==== optimizer ============================================================================= */

/* one element of a rule, in double; s0, s1 the element's state */
static void rule_ref(int rule, const bk_hyper *h, double *p, double g, double *s0, double *s1)
{
    g *= h->scale;
    switch (rule) {
    case BK_ADADELTA: {
        *s0 = h->rho * *s0 + (1 - h->rho) * g * g;
        double d = sqrt(*s1 + h->eps) / sqrt(*s0 + h->eps) * g;
        *s1 = h->rho * *s1 + (1 - h->rho) * d * d;
        *p -= h->lr * d;
        break;
    }
    case BK_ADAGRAD: *s0 += g * g; *p -= h->lr * g / (sqrt(*s0) + h->eps); break;
    case BK_ADAM:
        *s0 = h->b1 * *s0 + (1 - h->b1) * g;
        *s1 = h->b2 * *s1 + (1 - h->b2) * g * g;
        *p -= h->lr * (*s0 / h->c1) / (sqrt(*s1 / h->c2) + h->eps);
        break;
    default: *p -= h->lr * g;
    }
}

static const bk_hyper HYP = {0.01f, 0.95f, 1e-6f, 0.9f, 0.999f, 0.271f, 0.002997f, 0.8f};

static void test_sumsq(void)
{
    enum { N = (1 << 17) + 1005 };
    real *g = test_rnd(&R, N, -1, 1);
    double want = 0;
    for (int i = 0; i < N; i++) want += (double)g[i] * g[i];
    double got = bk->sumsq(dev_r(g, N), N);
    CHECKF(fabs(got - want) <= 1e-12 * want, "sumsq %.17g, expected %.17g", got, want);
    free(g);
    release();
}

static void test_update(int rule)
{
    enum { N = (1 << 15) + 37, LO = 5, HI = N - 3 };
    real *p = test_rnd(&R, N, -1, 1), *g = test_rnd(&R, N, -1, 1), *s0 = test_rnd(&R, N, 0, 1), *s1 = test_rnd(&R, N, 0, 1), *got = malloc(sizeof(real) * N);
    double *wp = dbl(p, N), *wg = dbl(g, N), *ws0 = dbl(s0, N), *ws1 = dbl(s1, N);
    for (int i = LO; i < HI; i++) {
        rule_ref(rule, &HYP, &wp[i], g[i], &ws0[i], &ws1[i]);
        wg[i] = 0;
    }
    real *dp = dev_r(p, N), *dg = dev_r(g, N), *ds[2] = {dev_r(s0, N), dev_r(s1, N)};
    bk->update(rule, &HYP, dp, dg, ds, LO, HI);
    char what[64];
    const char *names[4] = {"sgd", "adagrad", "adadelta", "adam"};
    snprintf(what, sizeof what, "update %s: parameters", names[rule]);
    get(got, dp, sizeof(real) * N); close_all(what, got, wp, N, 2e-6);
    snprintf(what, sizeof what, "update %s: gradient zeroed", names[rule]);
    get(got, dg, sizeof(real) * N); close_all(what, got, wg, N, 0);
    snprintf(what, sizeof what, "update %s: state", names[rule]);
    get(got, ds[0], sizeof(real) * N); close_all(what, got, ws0, N, 2e-6);
    get(got, ds[1], sizeof(real) * N); close_all(what, got, ws1, N, 2e-6);
    free(p); free(g); free(s0); free(s1); free(got); free(wp); free(wg); free(ws0); free(ws1);
    release();
}

/* The lazy form over rows [OFF, OFF + ROWS·COLS): rows with an all-zero gradient (-0 included) are
 * skipped and, with lag, owe a decay; a touched row pays what it owes first. */
static void test_update_rows(int rule, int with_lag)
{
    enum { OFF = 7, ROWS = 40, COLS = 13, N = OFF + ROWS * COLS + 5 };
    real *p = test_rnd(&R, N, -1, 1), *g = test_rnd(&R, N, -1, 1), *s0 = test_rnd(&R, N, 0, 1), *s1 = test_rnd(&R, N, 0, 1), *got = malloc(sizeof(real) * N);
    unsigned lag[ROWS], glag[ROWS];
    for (int r = 0; r < ROWS; r++) {
        lag[r] = with_lag ? (unsigned)(r % 3) : 0;
        if (r % 4 == 1 || r == ROWS - 1)
            for (int k = 0; k < COLS; k++) g[OFF + r * COLS + k] = k == 3 ? -0.0f : 0;
    }
    double *wp = dbl(p, N), *wg = dbl(g, N), *ws0 = dbl(s0, N), *ws1 = dbl(s1, N);
    unsigned wlag[ROWS];
    for (int r = 0; r < ROWS; r++) {
        size_t lo = OFF + (size_t)r * COLS;
        wlag[r] = lag[r];
        if (r % 4 == 1 || r == ROWS - 1) { wlag[r] += with_lag; continue; }
        for (int k = 0; k < COLS; k++) {
            for (unsigned t = 0; t < wlag[r]; t++) { ws0[lo + k] *= HYP.rho; ws1[lo + k] *= HYP.rho; }
            rule_ref(rule, &HYP, &wp[lo + k], g[lo + k], &ws0[lo + k], &ws1[lo + k]);
            wg[lo + k] = 0;
        }
        wlag[r] = 0;
    }
    real *dp = dev_r(p, N), *dg = dev_r(g, N), *ds[2] = {dev_r(s0, N), dev_r(s1, N)};
    unsigned *dlag = dev_copy(lag, sizeof lag);
    int ns = rule == BK_ADAGRAD ? 1 : rule == BK_SGD ? 0 : 2;
    bk->update_rows(rule, &HYP, dp, dg, ds, ns, OFF, ROWS, COLS, with_lag ? dlag : NULL);
    char what[80];
    snprintf(what, sizeof what, "update_rows rule %d%s", rule, with_lag ? ", owed decays" : "");
    get(got, dp, sizeof(real) * N); close_all(what, got, wp, N, 2e-6);
    get(got, dg, sizeof(real) * N); close_all(what, got, wg, N, 0);
    get(got, ds[0], sizeof(real) * N); close_all(what, got, ws0, N, 2e-6);
    if (ns == 2) { get(got, ds[1], sizeof(real) * N); close_all(what, got, ws1, N, 2e-6); }
    get(glag, dlag, sizeof glag);
    CHECKF(!memcmp(glag, with_lag ? wlag : lag, sizeof glag), "%s: lag counters", what);
    if (with_lag) { /* then settle: every owed decay paid, lag back to 0 */
        for (int r = 0; r < ROWS; r++)
            for (int k = 0; k < COLS; k++)
                for (unsigned t = 0; t < wlag[r]; t++) {
                    ws0[OFF + r * COLS + k] *= HYP.rho;
                    ws1[OFF + r * COLS + k] *= HYP.rho;
                }
        bk->settle_rows(ds, 2, HYP.rho, OFF, ROWS, COLS, dlag);
        get(got, ds[0], sizeof(real) * N); close_all("settle_rows", got, ws0, N, 2e-6);
        get(got, ds[1], sizeof(real) * N); close_all("settle_rows", got, ws1, N, 2e-6);
        get(glag, dlag, sizeof glag);
        int zero = 1;
        for (int r = 0; r < ROWS; r++) zero &= glag[r] == 0;
        CHECKF(zero, "settle_rows: lag counters not reset");
    }
    free(p); free(g); free(s0); free(s1); free(got); free(wp); free(wg); free(ws0); free(ws1);
    release();
}

/* ==== beam search's row scan ================================================================ */

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void test_topk_rows(void)
{
    enum { H = 5, V = 203, CAP = 8, KMAX = 5, SKIP = 1 };
    int need[H] = {3, 1, 5, 0, 2};
    /* distinct values 0.01 apart, shuffled, so that the best words are never in doubt */
    real *z = malloc(sizeof(real) * H * V);
    for (int r = 0; r < H; r++) {
        for (int v = 0; v < V; v++) z[r * V + v] = (real)(0.01 * v - 1);
        for (int v = V - 1; v > 0; v--) {
            int u = (int)rng_below(&R, (uint64_t)v + 1);
            real t = z[r * V + v]; z[r * V + v] = z[r * V + u]; z[r * V + u] = t;
        }
    }
    z[2 * V + SKIP] = 5; /* the best word of row 2 is the skipped one */
    for (int v = 10; v < 22; v++) z[4 * V + v] = 7; /* row 4: 12 tie for best, more than CAP */
    int n[H], cv[H * CAP];
    real lse[H], clp[H * CAP];
    int *dn = dev_junk(sizeof n), *dv = dev_junk(sizeof cv);
    real *dlse = dev_junk(sizeof lse), *dlp = dev_junk(sizeof clp);
    bk->topk_rows(dn, dlp, dv, dlse, dev_r(z, H * V), H, V, dev_i(need, H), CAP, SKIP,
                  dev_junk(sizeof(topk_item) * H * KMAX), KMAX, 0);
    get(n, dn, sizeof n); get(cv, dv, sizeof cv); get(lse, dlse, sizeof lse); get(clp, dlp, sizeof clp);
    for (int r = 0; r < H; r++) {
        double s = 0, kth = INFINITY;
        for (int v = 0; v < V; v++) s += exp(z[r * V + v]);
        double wl = log(s);
        CHECKF(fabs(lse[r] - wl) <= 1e-6 * fabs(wl) + 1e-6, "topk_rows: row %d log Σ e^z %.9g, expected %.9g", r, lse[r], wl);
        /* the need-th best z among the allowed words (ties counted); the candidates are those at or
         * above it, in word order */
        double sorted[V];
        int na = 0;
        for (int v = 0; v < V; v++)
            if (v != SKIP) sorted[na++] = z[r * V + v];
        qsort(sorted, na, sizeof(double), cmp_desc);
        if (need[r] > 0) kth = sorted[need[r] - 1];
        int want = 0, ok = 1;
        for (int v = 0; v < V && need[r] > 0; v++) {
            if (v == SKIP || z[r * V + v] < kth) continue;
            if (want < n[r]) ok &= cv[r * CAP + want] == v && fabs(clp[r * CAP + want] - (z[r * V + v] - wl)) <= 1e-5;
            want++;
        }
        if (want > CAP) CHECKF(n[r] == -1, "topk_rows: row %d has %d tied candidates, more than %d: got %d", r, want, CAP, n[r]);
        else CHECKF(n[r] == want && ok, "topk_rows: row %d: %d candidates (expected %d) or a wrong word", r, n[r], want);
    }
    free(z);
    release();
}

/* An ensemble's scores (logp_acc_rows) against log-softmax in double; then topk_rows reading them
 * as log-probabilities (logp 1): lse 0 and the candidates' lp the scores themselves. */
static void test_logp_rows(void)
{
    enum { H = 3, V = 61, CAP = 8, KMAX = 2 };
    real *z1 = malloc(sizeof(real) * H * V), *z2 = malloc(sizeof(real) * H * V), y[H * V];
    for (int i = 0; i < H * V; i++) { z1[i] = (real)(3 * rng_normal(&R)); z2[i] = (real)(3 * rng_normal(&R)); }
    real *dy = dev_junk(sizeof y);
    bk->logp_acc_rows(dy, dev_r(z1, H * V), H, V, (real)0.25, 1);
    bk->logp_acc_rows(dy, dev_r(z2, H * V), H, V, (real)0.75, 0);
    get(y, dy, sizeof y);
    double worst = 0;
    for (int r = 0; r < H; r++) {
        double s1 = 0, s2 = 0;
        for (int v = 0; v < V; v++) { s1 += exp(z1[r * V + v]); s2 += exp(z2[r * V + v]); }
        for (int v = 0; v < V; v++) {
            double want = 0.25 * (z1[r * V + v] - log(s1)) + 0.75 * (z2[r * V + v] - log(s2));
            worst = fmax(worst, fabs(y[r * V + v] - want) / (1 + fabs(want)));
        }
    }
    CHECKF(worst < 1e-5, "logp_acc_rows: relative error %.3g against log-softmax in double", worst);
    int need[H] = {2, 1, 2}, n[H], cv[H * CAP];
    real lse[H], clp[H * CAP];
    int *dn = dev_junk(sizeof n), *dv = dev_junk(sizeof cv);
    real *dlse = dev_junk(sizeof lse), *dlp = dev_junk(sizeof clp);
    bk->topk_rows(dn, dlp, dv, dlse, dy, H, V, dev_i(need, H), CAP, -1, dev_junk(sizeof(topk_item) * H * KMAX), KMAX, 1);
    get(n, dn, sizeof n); get(cv, dv, sizeof cv); get(lse, dlse, sizeof lse); get(clp, dlp, sizeof clp);
    for (int r = 0; r < H; r++) {
        int ok = n[r] >= need[r] && lse[r] == 0;
        for (int q = 0; ok && q < n[r]; q++) ok = clp[r * CAP + q] == y[r * V + cv[r * CAP + q]];
        int best = 0, found = 0;
        for (int v = 1; v < V; v++) if (y[r * V + v] > y[r * V + best]) best = v;
        for (int q = 0; ok && q < n[r]; q++) found |= cv[r * CAP + q] == best;
        ok = ok && found;
        CHECKF(ok, "topk_rows (logp): row %d: lse %g, %d candidates, not the scores as they are", r, lse[r], n[r]);
    }
    free(z1);
    free(z2);
    release();
}

/* ==== the products' fingerprint (tests/cli/kernels.sh) ======================================= */

/* `test_backend --fingerprint` prints one hash of OpenBLAS's float and double products on shapes
 * that cross its blocking sizes, each transpose, on 1, 2 and 4 threads. OPENBLAS_CORETYPE changes
 * nothing else that nmt computes, so two kernel sets with one fingerprint round alike, and
 * kernels.sh reruns the suite under only one of them (Zen's kernels are Haswell's). */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ULL;
    return h;
}

static int fingerprint(void)
{
    static const int shp[][3] = {{1, 1, 1},      {7, 13, 5},    {64, 64, 64},  {80, 1000, 256}, {33, 257, 1025},
                                 {256, 300, 2048}, {3, 500, 4096}, {96, 300, 700}, {1, 2048, 1024}, {200, 64, 3000}};
    uint64_t h = 1469598103934665603ULL;
    for (int t = 1; t <= 4; t *= 2) {
        bk->set_threads(t);
        for (size_t i = 0; i < sizeof shp / sizeof shp[0]; i++) {
            int M = shp[i][0], N = shp[i][1], K = shp[i][2];
            size_t a = (size_t)M * K, b = (size_t)K * N, c = (size_t)M * N;
            float *A = malloc(4 * a), *B = malloc(4 * b), *C = malloc(4 * c);
            double *dA = malloc(8 * a), *dB = malloc(8 * b), *dC = malloc(8 * c);
            if (!A || !B || !C || !dA || !dB || !dC) {
                free(A), free(B), free(C), free(dA), free(dB), free(dC);
                return 1;
            }
            rng_seed(&R, 7 + i);
            for (size_t j = 0; j < a; j++) dA[j] = A[j] = (float)(2 * rng_uniform(&R) - 1);
            for (size_t j = 0; j < b; j++) dB[j] = B[j] = (float)(2 * rng_uniform(&R) - 1);
            for (int ta = 0; ta < 2; ta++)
                for (int tb = 0; tb < 2; tb++) {
                    enum CBLAS_TRANSPOSE oa = ta ? CblasTrans : CblasNoTrans, ob = tb ? CblasTrans : CblasNoTrans;
                    for (size_t j = 0; j < c; j++) C[j] = (float)(dC[j] = 0.5);
                    cblas_sgemm(CblasRowMajor, oa, ob, M, N, K, 1, A, ta ? M : K, B, tb ? K : N, 0.5f, C, N);
                    cblas_dgemm(CblasRowMajor, oa, ob, M, N, K, 1, dA, ta ? M : K, dB, tb ? K : N, 0.5, dC, N);
                    h = fnv(fnv(h, C, 4 * c), dC, 8 * c);
                }
            free(A), free(B), free(C), free(dA), free(dB), free(dC);
        }
    }
    printf("%016llx\n", (unsigned long long)h);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--fingerprint")) {
        bk = TX->b;
        return fingerprint();
    }
    if (test_device_missing("test_backend")) return test_done("test_backend");
    bk = TX->b;
    rng_seed(&R, 2024);
    bk->set_threads(4); /* more threads than rows in some kernels, fewer in others */
    test_memory_threads();
    test_alloc_untouched();
    test_gemm();
    test_colsum();
    test_elementwise();
    for (int q = 0; q < 2; q++) {
        test_rows_basic(&SHAPES[q]);
        for (int f = BK_IDENTITY; f <= BK_SWISH; f++) {
            test_act_rows(&SHAPES[q], f, 0);
            test_act_rows(&SHAPES[q], f, 1);
            if (f <= BK_SIGMOID) test_act_grad_rows(&SHAPES[q], f); /* from the output: these three */
            test_act_grad_x_rows(&SHAPES[q], f);
        }
        test_rows_dist(&SHAPES[q]);
    }
    for (int hp = 0; hp < 2; hp++) {
        test_gru_forward(hp);
        test_gru_backward(hp);
    }
    for (int xi = 0; xi < 2; xi++) {
        test_attn_forward(xi);
        test_attn_backward(xi);
    }
    test_attn_window(0);
    test_attn_window(2);
    test_layer_norm();
    test_layer_norm_backward(0);
    test_layer_norm_backward(1);
    static const int klen[SN] = {13, 4, 0}; /* all keys, some, none */
    test_attn_softmax(klen, 0, 0, 0);
    test_attn_softmax(NULL, 9, 0, 0);
    test_attn_softmax(klen, 0, 1, 0);
    test_attn_softmax(klen, 0, 1, 3);
    test_attn_softmax(NULL, 11, 1, 7);
    test_attn_softmax(NULL, SK, 1, -2); /* the first queries see no key */
    test_attn_softmax_backward();
    tests_gemm_batched();
    test_gather_rows_ld();
    test_dropout_mask();
    test_maxout();
    test_softmax_nll(0);
    test_softmax_nll(0.1);
    test_embeddings();
    test_sumsq();
    for (int rule = BK_SGD; rule <= BK_ADAM; rule++) test_update(rule);
    test_update_rows(BK_ADADELTA, 1);
    test_update_rows(BK_ADADELTA, 0);
    test_update_rows(BK_ADAGRAD, 0);
    test_update_rows(BK_SGD, 0);
    test_topk_rows();
    test_logp_rows();
    return test_done("test_backend");
}
