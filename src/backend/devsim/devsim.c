/* devsim.c: the simulated device (devsim.h). Memory: CPU blocks handed out with bit 62 of the
 * address set, which no x86-64 or AArch64 process can dereference (a non-canonical address), so
 * a host read or write of a device buffer faults where it happens. Kernels: every pointer
 * argument is checked to be device memory covering what the kernel reads or writes, the tag is
 * taken off, and the CPU kernel runs. A violated seam is a bug in the caller, not bad input:
 * the backend says which kernel and which argument, then aborts, as a sanitizer does. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu.h"
#include "backend/devsim/devsim.h"

#define TAG ((uintptr_t)1 << 62)

static void *tag(void *p) { return p ? (void *)((uintptr_t)p | TAG) : NULL; }
static void *untag(const void *p) { return (void *)((uintptr_t)p & ~TAG); }
static int tagged(const void *p) { return ((uintptr_t)p & TAG) != 0; }

/* ---- the live blocks, sorted by address (few: parameters, workspaces, optimizer state) ---- */

typedef struct block { uintptr_t lo, hi; } block;

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static block *blocks;
static size_t nblocks, capblocks;
static devsim_stats st;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

/* the index of the first block whose lo > a */
static size_t upper(uintptr_t a)
{
    size_t lo = 0, hi = nblocks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (blocks[mid].lo <= a) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void fail(const char *what, const char *op, const char *arg, const void *p, size_t bytes)
{
    fprintf(stderr, "devsim: %s: argument %s (%p, %zu bytes) %s\n", op, arg, p, bytes, what);
    abort();
}

/* p covers bytes of one live block (p may be NULL only when bytes is 0 or the argument is
 * optional, which the caller decides) */
static void check(const void *p, size_t bytes, const char *op, const char *arg)
{
    if (!p) return;
    if (!tagged(p)) fail("is host memory, not the device's", op, arg, p, bytes);
    uintptr_t a = (uintptr_t)untag(p);
    pthread_rwlock_rdlock(&lock);
    size_t i = upper(a);
    int ok = i > 0 && a < blocks[i - 1].hi && bytes <= blocks[i - 1].hi - a;
    pthread_rwlock_unlock(&lock);
    if (!ok) fail("lies outside every device block", op, arg, p, bytes);
}

static void launch(void)
{
    pthread_mutex_lock(&count_lock);
    st.launches++;
    pthread_mutex_unlock(&count_lock);
}

/* ---- memory ---- */

static void report(void);

static void *dev_alloc(size_t bytes)
{
    char *p = cpu_backend.alloc(bytes ? bytes : 1);
    if (!p) return NULL;
    pthread_rwlock_wrlock(&lock);
    if (nblocks == capblocks) {
        size_t cap = capblocks ? 2 * capblocks : 64;
        block *b = realloc(blocks, cap * sizeof *b);
        if (!b) {
            pthread_rwlock_unlock(&lock);
            cpu_backend.free(p);
            return NULL;
        }
        blocks = b;
        capblocks = cap;
    }
    size_t i = upper((uintptr_t)p);
    memmove(blocks + i + 1, blocks + i, (nblocks - i) * sizeof *blocks);
    blocks[i] = (block){(uintptr_t)p, (uintptr_t)p + bytes};
    nblocks++;
    pthread_rwlock_unlock(&lock);
    pthread_mutex_lock(&count_lock);
    static int reporting;
    if (!reporting && getenv("NMT_DEVSIM_REPORT")) reporting = atexit(report) == 0;
    st.allocs++;
    st.live_bytes += bytes;
    if (st.live_bytes > st.peak_bytes) st.peak_bytes = st.live_bytes;
    pthread_mutex_unlock(&count_lock);
    return tag(p);
}

static void dev_free(void *p)
{
    if (!p) return;
    if (!tagged(p)) fail("is host memory, not the device's", "free", "p", p, 0);
    uintptr_t a = (uintptr_t)untag(p);
    pthread_rwlock_wrlock(&lock);
    size_t i = upper(a);
    int ok = i > 0 && blocks[i - 1].lo == a;
    size_t bytes = ok ? blocks[i - 1].hi - a : 0;
    if (ok) {
        memmove(blocks + i - 1, blocks + i, (nblocks - i) * sizeof *blocks);
        nblocks--;
    }
    pthread_rwlock_unlock(&lock);
    if (!ok) fail("is not the start of a live device block", "free", "p", p, 0);
    pthread_mutex_lock(&count_lock);
    st.live_bytes -= bytes;
    pthread_mutex_unlock(&count_lock);
    cpu_backend.free((void *)a);
}

static void dev_copy_in(void *dst, const void *host, size_t bytes)
{
    check(dst, bytes, "copy_in", "dst");
    if (bytes && tagged(host)) fail("is device memory: copy_in reads the host", "copy_in", "host", host, bytes);
    if (bytes) memcpy(untag(dst), host, bytes);
    pthread_mutex_lock(&count_lock);
    st.bytes_in += bytes;
    pthread_mutex_unlock(&count_lock);
}

static void dev_copy_out(void *host, const void *src, size_t bytes)
{
    check(src, bytes, "copy_out", "src");
    if (bytes && tagged(host)) fail("is device memory: copy_out writes the host", "copy_out", "host", host, bytes);
    if (bytes) memcpy(host, untag(src), bytes);
    pthread_mutex_lock(&count_lock);
    st.bytes_out += bytes;
    pthread_mutex_unlock(&count_lock);
}

int devsim_owns(const void *p)
{
    if (!p || !tagged(p)) return 0;
    uintptr_t a = (uintptr_t)untag(p);
    pthread_rwlock_rdlock(&lock);
    size_t i = upper(a);
    int ok = i > 0 && a < blocks[i - 1].hi;
    pthread_rwlock_unlock(&lock);
    return ok;
}

/* ---- marks and the report ---- */

static void dev_mark(int what)
{
    if (what < 0 || what >= BK_MARK_COUNT) return;
    pthread_mutex_lock(&count_lock);
    devsim_span *s = &st.span[what];
    int end = s->marks > 0; /* the first mark opens the span, every later one moves its end */
    s->launches[end] = st.launches;
    s->bytes_in[end] = st.bytes_in;
    s->bytes_out[end] = st.bytes_out;
    if (!end) {
        s->launches[1] = st.launches;
        s->bytes_in[1] = st.bytes_in;
        s->bytes_out[1] = st.bytes_out;
    }
    s->marks++;
    pthread_mutex_unlock(&count_lock);
}

void devsim_get_stats(devsim_stats *s)
{
    pthread_mutex_lock(&count_lock);
    *s = st;
    pthread_mutex_unlock(&count_lock);
}

/* NMT_DEVSIM_REPORT set: one line per kind of mark at exit, and the totals */
static void report(void)
{
    static const char *name[BK_MARK_COUNT] = {"update", "search step"};
    devsim_stats s;
    devsim_get_stats(&s);
    for (int k = 0; k < BK_MARK_COUNT; k++) {
        const devsim_span *p = &s.span[k];
        if (p->marks < 2) continue;
        double n = (double)(p->marks - 1);
        fprintf(stderr, "devsim: per %s: %.1f launches, %.0f bytes in, %.0f bytes out (%llu %ss)\n", name[k],
                (p->launches[1] - p->launches[0]) / n, (p->bytes_in[1] - p->bytes_in[0]) / n,
                (p->bytes_out[1] - p->bytes_out[0]) / n, p->marks - 1, name[k]);
    }
    fprintf(stderr, "devsim: %llu launches, %llu bytes in, %llu bytes out, %llu allocations, peak %.1f MB, "
            "%llu bytes live at exit\n", s.launches, s.bytes_in, s.bytes_out, s.allocs, s.peak_bytes / 1e6,
            s.live_bytes);
}

/* ---- kernels: check, untag, run the CPU's ---- */

#define RB(n) ((size_t)(n) * sizeof(real))
/* the elements R rows of cols, ld apart, cover */
static size_t span(long R, long cols, long ld) { return R > 0 && cols > 0 ? (size_t)(R - 1) * ld + cols : 0; }
/* a buffer whose extent depends on the values of an index array: its start only */
#define START 0

#define U(p) untag(p)

static void k_gemm(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
                   real *C, int ldc)
{
    check(A, RB(span(ta ? K : M, ta ? M : K, lda)), "gemm", "A");
    check(B, RB(span(tb ? N : K, tb ? K : N, ldb)), "gemm", "B");
    check(C, RB(span(M, N, ldc)), "gemm", "C");
    launch();
    cpu_backend.gemm(ta, tb, M, N, K, U(A), lda, U(B), ldb, beta, U(C), ldc);
}

static void k_gemm_rows(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb,
                        real beta, real *C, int ldc)
{
    check(A, RB(span(ta ? K : M, ta ? M : K, lda)), "gemm_rows", "A");
    check(B, RB(span(tb ? N : K, tb ? K : N, ldb)), "gemm_rows", "B");
    check(C, RB(span(M, N, ldc)), "gemm_rows", "C");
    launch();
    cpu_backend.gemm_rows(ta, tb, M, N, K, U(A), lda, U(B), ldb, beta, U(C), ldc);
}

static void k_colsum_add(real *C, const real *A, int M, int N, int lda)
{
    check(C, RB(N), "colsum_add", "C");
    check(A, RB(span(M, N, lda)), "colsum_add", "A");
    launch();
    cpu_backend.colsum_add(U(C), U(A), M, N, lda);
}

static void k_vexp(real *y, const real *x, int n)
{
    check(y, RB(n), "vexp", "y");
    check(x, RB(n), "vexp", "x");
    launch();
    cpu_backend.vexp(U(y), U(x), n);
}

static void k_zero_rows(real *y, int ldy, int R, int cols)
{
    check(y, RB(span(R, cols, ldy)), "zero_rows", "y");
    launch();
    cpu_backend.zero_rows(U(y), ldy, R, cols);
}

static void k_copy_rows(real *y, int ldy, const real *x, int ldx, int R, int cols)
{
    check(y, RB(span(R, cols, ldy)), "copy_rows", "y");
    check(x, RB(span(R, cols, ldx)), "copy_rows", "x");
    launch();
    cpu_backend.copy_rows(U(y), ldy, U(x), ldx, R, cols);
}

static void k_act_rows(int f, real *y, int ldy, const real *x, int ldx, const real *b, int R, int cols)
{
    check(y, RB(span(R, cols, ldy)), "act_rows", "y");
    check(x, RB(span(R, cols, ldx)), "act_rows", "x");
    check(b, RB(cols), "act_rows", "b");
    launch();
    cpu_backend.act_rows(f, U(y), ldy, U(x), ldx, U(b), R, cols);
}

/* an activation's derivative: from its output (act_grad_rows) or its input (act_grad_x_rows), y */
static void k_grad(void (*g)(int, real *, int, const real *, int, const real *, int, int, int), const char *op, int f,
                   real *dx, int lddx, const real *dy, int lddy, const real *y, int ldy, int R, int cols)
{
    check(dx, RB(span(R, cols, lddx)), op, "dx");
    check(dy, RB(span(R, cols, lddy)), op, "dy");
    check(y, RB(span(R, cols, ldy)), op, g == cpu_backend.act_grad_rows ? "y" : "x");
    launch();
    g(f, U(dx), lddx, U(dy), lddy, U(y), ldy, R, cols);
}
static void k_act_grad_rows(int f, real *dx, int lddx, const real *dy, int lddy, const real *y, int ldy, int R,
                            int cols)
{
    k_grad(cpu_backend.act_grad_rows, "act_grad_rows", f, dx, lddx, dy, lddy, y, ldy, R, cols);
}

static void k_binary(void (*f)(real *, int, const real *, int, const real *, int, int, int), const char *op, real *y,
                     int ldy, const real *a, int lda, const real *b, int ldb, int R, int cols)
{
    check(y, RB(span(R, cols, ldy)), op, "y");
    check(a, RB(span(R, cols, lda)), op, "a");
    check(b, RB(span(R, cols, ldb)), op, "b");
    launch();
    f(U(y), ldy, U(a), lda, U(b), ldb, R, cols);
}
static void k_add_rows(real *y, int ldy, const real *a, int lda, const real *b, int ldb, int R, int cols)
{
    k_binary(cpu_backend.add_rows, "add_rows", y, ldy, a, lda, b, ldb, R, cols);
}
static void k_mul_rows(real *y, int ldy, const real *a, int lda, const real *b, int ldb, int R, int cols)
{
    k_binary(cpu_backend.mul_rows, "mul_rows", y, ldy, a, lda, b, ldb, R, cols);
}

static void k_axpy_diff_rows(real *y, int ldy, const real *u, const real *x, int ldx, const real *z, int ldz, int R,
                             int cols)
{
    check(y, RB(span(R, cols, ldy)), "axpy_diff_rows", "y");
    check(u, RB(R), "axpy_diff_rows", "u");
    check(x, RB(span(R, cols, ldx)), "axpy_diff_rows", "x");
    check(z, RB(span(R, cols, ldz)), "axpy_diff_rows", "z");
    launch();
    cpu_backend.axpy_diff_rows(U(y), ldy, U(u), U(x), ldx, U(z), ldz, R, cols);
}

static void k_dist_rows(double *out, const real *x, int ldx, const real *z, int ldz, int R, int cols)
{
    check(out, sizeof(double) * (R > 0 ? R : 0), "dist_rows", "out");
    check(x, RB(span(R, cols, ldx)), "dist_rows", "x");
    check(z, RB(span(R, cols, ldz)), "dist_rows", "z");
    launch();
    cpu_backend.dist_rows(U(out), U(x), ldx, U(z), ldz, R, cols);
}

static void k_gru_gates(real *z, real *r, real *rh, const real *a, int lda, const real *zr, const real *hp, int ldhp,
                        int B, int n)
{
    const char *op = "gru_gates";
    check(z, RB((size_t)B * n), op, "z");
    check(r, RB((size_t)B * n), op, "r");
    check(rh, RB((size_t)B * n), op, "rh");
    check(a, RB(span(B, n, lda)), op, "a");
    check(zr, RB((size_t)B * 2 * n), op, "zr");
    check(hp, RB(span(B, n, ldhp)), op, "hp");
    launch();
    cpu_backend.gru_gates(U(z), U(r), U(rh), U(a), lda, U(zr), U(hp), ldhp, B, n);
}

static void k_gru_state(real *h, int ldh, real *hc, const real *z, const real *a, int lda, const real *uq,
                        const real *hp, int ldhp, const unsigned char *mask, int B, int n)
{
    const char *op = "gru_state";
    check(h, RB(span(B, n, ldh)), op, "h");
    check(hc, RB((size_t)B * n), op, "hc");
    check(z, RB((size_t)B * n), op, "z");
    check(a, RB(span(B, n, lda)), op, "a");
    check(uq, RB((size_t)B * n), op, "uq");
    check(hp, RB(span(B, n, ldhp)), op, "hp");
    check(mask, (size_t)B, op, "mask");
    launch();
    cpu_backend.gru_state(U(h), ldh, U(hc), U(z), U(a), lda, U(uq), U(hp), ldhp, U(mask), B, n);
}

static void k_gru_grad_state(real *da, int ldda, real *dhp, const real *g, const real *z, const real *hc,
                             const real *hp, int ldhp, const unsigned char *mask, int B, int n)
{
    const char *op = "gru_grad_state";
    check(da, RB(span(B, n, ldda)), op, "da");
    check(dhp, RB(START), op, "dhp");
    check(g, RB((size_t)B * n), op, "g");
    check(z, RB((size_t)B * n), op, "z");
    check(hc, RB((size_t)B * n), op, "hc");
    check(hp, RB(span(B, n, ldhp)), op, "hp");
    check(mask, (size_t)B, op, "mask");
    launch();
    cpu_backend.gru_grad_state(U(da), ldda, U(dhp), U(g), U(z), U(hc), U(hp), ldhp, U(mask), B, n);
}

static void k_gru_grad_reset(real *da, int ldda, real *dhp, const real *dq, const real *r, const real *hp, int ldhp,
                             const unsigned char *mask, int B, int n)
{
    const char *op = "gru_grad_reset";
    check(da, RB(span(B, n, ldda)), op, "da");
    check(dhp, RB(START), op, "dhp");
    check(dq, RB((size_t)B * n), op, "dq");
    check(r, RB((size_t)B * n), op, "r");
    check(hp, RB(span(B, n, ldhp)), op, "hp");
    check(mask, (size_t)B, op, "mask");
    launch();
    cpu_backend.gru_grad_reset(U(da), ldda, U(dhp), U(dq), U(r), U(hp), ldhp, U(mask), B, n);
}

/* the ξ pointers of a, checked and untagged into c */
static const bk_attn *attn_args(bk_attn *c, const bk_attn *a, const char *op)
{
    *c = *a;
    if (!a->K) return c;
    check(a->M, RB((size_t)a->K * a->na), op, "a->M");
    check(a->xi, RB((size_t)a->B * a->Tx * a->K), op, "a->xi");
    check(a->dxi, RB((size_t)a->B * a->Tx * a->K), op, "a->dxi");
    check(a->dM_rows, RB((size_t)a->B * a->K * a->na), op, "a->dM_rows");
    c->M = U(a->M);
    c->xi = U(a->xi);
    c->dxi = U(a->dxi);
    c->dM_rows = U(a->dM_rows);
    return c;
}

static void k_attn_forward(real *alpha, real *ctx, const real *UaH, const real *q, const real *v, const real *H,
                           const int *xlen, const int *src, const bk_attn *a)
{
    const char *op = "attn_forward";
    bk_attn c;
    size_t rows = (size_t)a->Tx * a->Bs;
    check(alpha, RB((size_t)a->B * a->Tx), op, "alpha");
    check(ctx, RB((size_t)a->B * a->hd), op, "ctx");
    check(UaH, RB(rows * a->na), op, "UaH");
    check(q, RB((size_t)a->B * a->na), op, "q");
    check(v, RB(a->na), op, "v");
    check(H, RB(span((long)rows, a->hd, a->ldH)), op, "H");
    check(xlen, sizeof(int) * a->Bs, op, "xlen");
    check(src, sizeof(int) * a->B, op, "src");
    launch();
    cpu_backend.attn_forward(U(alpha), U(ctx), U(UaH), U(q), U(v), U(H), U(xlen), U(src), attn_args(&c, a, op));
}

static void k_attn_backward(real *dq, real *dUaH, real *dH, real *dv_rows, const real *dctx, const real *dalpha,
                            const real *alpha, const real *UaH, const real *q, const real *v, const real *H,
                            const int *xlen, const bk_attn *a, real *tmp)
{
    const char *op = "attn_backward";
    bk_attn c;
    size_t rows = (size_t)a->Tx * a->Bs, bt = (size_t)a->B * a->Tx;
    check(dq, RB((size_t)a->B * a->na), op, "dq");
    check(dUaH, RB(rows * a->na), op, "dUaH");
    check(dH, RB(span((long)rows, a->hd, a->ldH)), op, "dH");
    check(dv_rows, RB((size_t)a->B * a->na), op, "dv_rows");
    check(dctx, RB((size_t)a->B * a->hd), op, "dctx");
    check(dalpha, RB(bt), op, "dalpha");
    check(alpha, RB(bt), op, "alpha");
    check(UaH, RB(rows * a->na), op, "UaH");
    check(q, RB((size_t)a->B * a->na), op, "q");
    check(v, RB(a->na), op, "v");
    check(H, RB(span((long)rows, a->hd, a->ldH)), op, "H");
    check(xlen, sizeof(int) * a->Bs, op, "xlen");
    check(tmp, RB(bt), op, "tmp");
    launch();
    cpu_backend.attn_backward(U(dq), U(dUaH), U(dH), U(dv_rows), U(dctx), U(dalpha), U(alpha), U(UaH), U(q), U(v),
                              U(H), U(xlen), attn_args(&c, a, op), U(tmp));
}

static void k_attn_window(real *xi, const real *src, int ld, const int *len, int H, int Tx, int k)
{
    check(xi, RB((size_t)H * Tx * (2 * k + 1)), "attn_window", "xi");
    check(src, RB(span(H, Tx, ld)), "attn_window", "src");
    check(len, sizeof(int) * H, "attn_window", "len");
    launch();
    cpu_backend.attn_window(U(xi), U(src), ld, U(len), H, Tx, k);
}

static void k_attn_window_backward(real *dsrc, const real *dxi, const int *len, int B, int Tx, int k)
{
    check(dsrc, RB((size_t)B * Tx), "attn_window_backward", "dsrc");
    check(dxi, RB((size_t)B * Tx * (2 * k + 1)), "attn_window_backward", "dxi");
    check(len, sizeof(int) * B, "attn_window_backward", "len");
    launch();
    cpu_backend.attn_window_backward(U(dsrc), U(dxi), U(len), B, Tx, k);
}

/* ---- the Transformer's kernels ---- */

static void k_layer_norm(real *y, int ldy, real *stats, const real *x, int ldx, const real *gamma, const real *beta,
                         int R, int cols, real eps)
{
    const char *op = "layer_norm";
    check(y, RB(span(R, cols, ldy)), op, "y");
    check(stats, RB(2 * (size_t)(R > 0 ? R : 0)), op, "stats");
    check(x, RB(span(R, cols, ldx)), op, "x");
    check(gamma, RB(cols), op, "gamma");
    check(beta, RB(cols), op, "beta");
    launch();
    cpu_backend.layer_norm(U(y), ldy, U(stats), U(x), ldx, U(gamma), U(beta), R, cols, eps);
}

static void k_layer_norm_backward(real *dx, int lddx, int acc, real *gx, const real *dy, int lddy, const real *x,
                                  int ldx, const real *stats, const real *gamma, int R, int cols)
{
    const char *op = "layer_norm_backward";
    check(dx, RB(span(R, cols, lddx)), op, "dx");
    check(gx, RB(span(R, cols, cols)), op, "gx");
    check(dy, RB(span(R, cols, lddy)), op, "dy");
    check(x, RB(span(R, cols, ldx)), op, "x");
    check(stats, RB(2 * (size_t)(R > 0 ? R : 0)), op, "stats");
    check(gamma, RB(cols), op, "gamma");
    launch();
    cpu_backend.layer_norm_backward(U(dx), lddx, acc, U(gx), U(dy), lddy, U(x), ldx, U(stats), U(gamma), R, cols);
}

static void k_attn_softmax(real *S, const int *klen, int kfix, int n, int heads, int Tq, int Tk, int causal, int qoff,
                           real scale)
{
    check(S, RB(span((long)n * heads * Tq, Tk, Tk)), "attn_softmax", "S");
    check(klen, sizeof(int) * (n > 0 ? n : 0), "attn_softmax", "klen"); /* NULL: kfix for every row */
    launch();
    cpu_backend.attn_softmax(U(S), U(klen), kfix, n, heads, Tq, Tk, causal, qoff, scale);
}

static void k_attn_softmax_backward(real *dS, const real *P, const real *dP, long rows, int Tk, real scale)
{
    check(dS, RB(span(rows, Tk, Tk)), "attn_softmax_backward", "dS");
    check(P, RB(span(rows, Tk, Tk)), "attn_softmax_backward", "P");
    check(dP, RB(span(rows, Tk, Tk)), "attn_softmax_backward", "dP");
    launch();
    cpu_backend.attn_softmax_backward(U(dS), U(P), U(dP), rows, Tk, scale);
}

/* the elements [lo, hi) that the products of a batch cover in one operand: product (o, k) starts
 * at base(o)·so + k·sk (base(o) = sel[o] when sel is given, else o) and spans `one` elements */
static void batch_extent(long *lo, long *hi, const int *sel, long so, long sk, int outer, int inner, size_t one)
{
    *lo = *hi = 0;
    if (!one) return;
    for (int o = 0; o < outer; o++)
        for (int k = 0; k < inner; k += inner - 1 > 0 ? inner - 1 : 1) { /* the ends: k·sk is monotone */
            long at = (sel ? sel[o] : o) * so + k * sk;
            if ((o == 0 && k == 0) || at < *lo) *lo = at;
            if ((o == 0 && k == 0) || at + (long)one > *hi) *hi = at + (long)one;
        }
}

/* an operand of gemm_batched: what its products read or write, from its lowest to its highest element */
static void check_batch(const real *p, const int *sel, long so, long sk, int outer, int inner, size_t one,
                        const char *arg)
{
    long lo, hi;
    batch_extent(&lo, &hi, sel, so, sk, outer, inner, one);
    if (!p || hi <= lo) {
        check(p, 0, "gemm_batched", arg);
        return;
    }
    check(p + lo, RB(hi - lo), "gemm_batched", arg);
}

static void k_gemm_batched(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb,
                           real beta, real *C, int ldc, const bk_batch *s)
{
    int inner = s->inner > 0 ? s->inner : 1, outer = s->count > 0 ? s->count / inner : 0;
    check(s->sel, sizeof(int) * outer, "gemm_batched", "s->sel");
    const int *sel = U(s->sel); /* read only once known to be device memory covering every o */
    check_batch(A, NULL, s->oa, s->ia, outer, inner, span(ta ? K : M, ta ? M : K, lda), "A");
    check_batch(B, sel, s->ob, s->ib, outer, inner, span(tb ? N : K, tb ? K : N, ldb), "B");
    check_batch(C, NULL, s->oc, s->ic, outer, inner, span(M, N, ldc), "C");
    bk_batch u = *s;
    u.sel = sel;
    launch();
    cpu_backend.gemm_batched(ta, tb, M, N, K, U(A), lda, U(B), ldb, beta, U(C), ldc, &u);
}

static void k_act_grad_x_rows(int f, real *dx, int lddx, const real *dy, int lddy, const real *x, int ldx, int R,
                              int cols)
{
    k_grad(cpu_backend.act_grad_x_rows, "act_grad_x_rows", f, dx, lddx, dy, lddy, x, ldx, R, cols);
}

/* src's extent follows from the ids, which are read once checked */
static void k_dropout_mask(real *m, long n, uint64_t seed, real p)
{
    check(m, RB(n > 0 ? n : 0), "dropout_mask", "m");
    cpu_backend.dropout_mask(U(m), n, seed, p);
}

static void k_gather_rows_ld(real *dst, long ldd, const real *src, long lds, const int *ids, int n, long cols)
{
    check(dst, RB(span(n, cols, ldd)), "gather_rows_ld", "dst");
    check(ids, sizeof(int) * (n > 0 ? n : 0), "gather_rows_ld", "ids");
    const int *u = U(ids);
    int top = -1;
    for (int i = 0; i < n; i++) {
        if (u[i] < 0) fail("is read at a negative row", "gather_rows_ld", "src", src, 0);
        if (u[i] > top) top = u[i];
    }
    check(src, RB(span(top + 1, cols, lds)), "gather_rows_ld", "src");
    launch();
    cpu_backend.gather_rows_ld(U(dst), ldd, U(src), lds, u, n, cols);
}

static void k_repeat_row(real *Z, const real *row, int H, int V)
{
    check(Z, RB((size_t)H * V), "repeat_row", "Z");
    check(row, RB(V), "repeat_row", "row");
    launch();
    cpu_backend.repeat_row(U(Z), U(row), H, V);
}

static void k_maxout(real *t, unsigned char *which, const real *tt, const real *b, const int *rows, int N, int l)
{
    check(t, RB((size_t)N * l), "maxout", "t");
    check(which, START, "maxout", "which");
    check(tt, RB(START), "maxout", "tt");
    check(b, RB(2 * (size_t)l), "maxout", "b");
    check(rows, sizeof(int) * N, "maxout", "rows");
    launch();
    cpu_backend.maxout(U(t), U(which), U(tt), U(b), U(rows), N, l);
}

static void k_maxout_backward(real *dtt, const real *dt, const unsigned char *which, const int *rows, int N, int l)
{
    check(dtt, RB(START), "maxout_backward", "dtt");
    check(dt, RB((size_t)N * l), "maxout_backward", "dt");
    check(which, START, "maxout_backward", "which");
    check(rows, sizeof(int) * N, "maxout_backward", "rows");
    launch();
    cpu_backend.maxout_backward(U(dtt), U(dt), U(which), U(rows), N, l);
}

static void k_softmax_nll(real *z, double *rinv, double *nll, real *lp, const int *rows, const int *y, int N, int V,
                          double ls)
{
    const char *op = "softmax_nll";
    check(z, RB((size_t)N * V), op, "z");
    check(rinv, sizeof(double) * N, op, "rinv");
    check(nll, sizeof(double) * N, op, "nll");
    check(lp, RB(START), op, "lp");
    check(rows, sizeof(int) * N, op, "rows");
    check(y, START, op, "y");
    launch();
    cpu_backend.softmax_nll(U(z), U(rinv), U(nll), U(lp), U(rows), U(y), N, V, ls);
}

static void k_softmax_nll_backward(real *z, real *dbias, real *part, const double *rinv, const int *rows,
                                   const int *y, int N, int V, real scale, real ls, int blk, uint16_t *z16)
{
    const char *op = "softmax_nll_backward";
    check(z, RB((size_t)N * V), op, "z");
    check(dbias, RB(V), op, "dbias");
    check(part, RB((size_t)((N + blk - 1) / blk) * V), op, "part");
    check(rinv, sizeof(double) * N, op, "rinv");
    check(rows, sizeof(int) * N, op, "rows");
    check(y, START, op, "y");
    check(z16, sizeof(uint16_t) * N * V, op, "z16");
    launch();
    cpu_backend.softmax_nll_backward(U(z), U(dbias), U(part), U(rinv), U(rows), U(y), N, V, scale, ls, blk, U(z16));
}

static void k_gather_rows(real *dst, const real *table, const int *ids, int n, int cols)
{
    check(dst, RB((size_t)n * cols), "gather_rows", "dst");
    check(table, RB(START), "gather_rows", "table");
    check(ids, sizeof(int) * n, "gather_rows", "ids");
    launch();
    cpu_backend.gather_rows(U(dst), U(table), U(ids), n, cols);
}

static void k_scatter_add_rows(real *table, const real *src, const int *ids, const unsigned char *mask, int n,
                               int cols)
{
    check(table, RB(ids ? START : (size_t)n * cols), "scatter_add_rows", "table");
    check(src, RB((size_t)n * cols), "scatter_add_rows", "src");
    check(ids, sizeof(int) * n, "scatter_add_rows", "ids");
    check(mask, (size_t)n, "scatter_add_rows", "mask");
    launch();
    cpu_backend.scatter_add_rows(U(table), U(src), U(ids), U(mask), n, cols);
}

static void k_scatter_rows(real *table, const real *src, const int *ids, int n, int cols)
{
    check(table, RB(START), "scatter_rows", "table");
    check(src, RB((size_t)n * cols), "scatter_rows", "src");
    check(ids, sizeof(int) * n, "scatter_rows", "ids");
    launch();
    cpu_backend.scatter_rows(U(table), U(src), U(ids), n, cols);
}

static void k_gather_cols(real *dst, const real *src, const int *ids, int n, int rows, long sj, long sk)
{
    check(dst, RB((size_t)n * rows), "gather_cols", "dst");
    check(src, RB(START), "gather_cols", "src");
    check(ids, sizeof(int) * n, "gather_cols", "ids");
    launch();
    cpu_backend.gather_cols(U(dst), U(src), U(ids), n, rows, sj, sk);
}

/* a scalar result returned to the host: a copy out of one value on a real device */
static double k_sumsq(const real *g, size_t n)
{
    check(g, RB(n), "sumsq", "g");
    launch();
    double s = cpu_backend.sumsq(U(g), n);
    pthread_mutex_lock(&count_lock);
    st.bytes_out += sizeof s;
    pthread_mutex_unlock(&count_lock);
    return s;
}

enum { NS_MAX = 4 };
static int rule_states(int rule) { return rule == BK_SGD ? 0 : rule == BK_ADAGRAD ? 1 : 2; }

/* the state tensors' pointers, checked over [0, end) and untagged into u */
static real *const *states(real **u, real *const *s, int ns, size_t end, const char *op)
{
    if (!s) return NULL;
    for (int i = 0; i < ns && i < NS_MAX; i++) {
        check(s[i], RB(end), op, "s[i]");
        u[i] = U(s[i]);
    }
    return u;
}

static void k_update(int rule, const bk_hyper *h, real *p, real *g, real *const *s, size_t lo, size_t hi)
{
    real *u[NS_MAX];
    check(p, RB(hi), "update", "p");
    check(g, RB(hi), "update", "g");
    launch();
    cpu_backend.update(rule, h, U(p), U(g), states(u, s, rule_states(rule), hi, "update"), lo, hi);
}

static void k_update_rows(int rule, const bk_hyper *h, real *p, real *g, real *const *s, int ns, size_t off, int rows,
                          int cols, unsigned *lag)
{
    real *u[NS_MAX];
    size_t end = off + (size_t)rows * cols;
    check(p, RB(end), "update_rows", "p");
    check(g, RB(end), "update_rows", "g");
    check(lag, sizeof(unsigned) * rows, "update_rows", "lag");
    launch();
    cpu_backend.update_rows(rule, h, U(p), U(g), states(u, s, ns, end, "update_rows"), ns, off, rows, cols, U(lag));
}

static void k_settle_rows(real *const *s, int ns, real rho, size_t off, int rows, int cols, unsigned *lag)
{
    real *u[NS_MAX];
    check(lag, sizeof(unsigned) * rows, "settle_rows", "lag");
    launch();
    cpu_backend.settle_rows(states(u, s, ns, off + (size_t)rows * cols, "settle_rows"), ns, rho, off, rows, cols,
                            U(lag));
}

static void k_topk_rows(int *n, real *lp, int *v, real *lse, const real *z, int H, int V, const int *need, int cap,
                        int skip, topk_item *heap, int kmax, int logp)
{
    const char *op = "topk_rows";
    check(n, sizeof(int) * H, op, "n");
    check(lp, RB((size_t)H * cap), op, "lp");
    check(v, sizeof(int) * H * cap, op, "v");
    check(lse, RB(H), op, "lse");
    check(z, RB((size_t)H * V), op, "z");
    check(need, sizeof(int) * H, op, "need");
    check(heap, sizeof(topk_item) * H * kmax, op, "heap");
    launch();
    cpu_backend.topk_rows(U(n), U(lp), U(v), U(lse), U(z), H, V, U(need), cap, skip, U(heap), kmax, logp);
}

static void k_logp_acc_rows(real *y, const real *z, int H, int V, real w, int first)
{
    check(y, RB((size_t)H * V), "logp_acc_rows", "y");
    check(z, RB((size_t)H * V), "logp_acc_rows", "z");
    launch();
    cpu_backend.logp_acc_rows(U(y), U(z), H, V, w, first);
}

/* ---- the lower-precision products: the CPU's, on untagged operands ---- */

static int q_qmat_init(bk_qmat **q, int prec, const real *W, int K, int N, int ldw, const float *scales, struct nmt_err *err)
{
    check(W, RB(span(K, N, ldw)), "qmat_init", "W");
    launch();
    return cpu_lowp.qmat_init(q, prec, U(W), K, N, ldw, scales, err);
}

static void q_qgemm(bk_qws *w, int M, const real *A, int lda, const bk_qmat *q, real beta, real *C, int ldc)
{
    check(A, RB(START), "qgemm", "A");
    check(C, RB(START), "qgemm", "C");
    launch();
    cpu_lowp.qgemm(w, M, U(A), lda, q, beta, U(C), ldc);
}

/* conversion and workspaces live in the CPU's memory here, as a device's would live in its own */
static int q_supported(int prec) { return cpu_lowp.supported(prec); }
static void q_qmat_free(bk_qmat *q) { cpu_lowp.qmat_free(q); }
static int q_qws_init(bk_qws **w, int rows, int K, int N, struct nmt_err *err) { return cpu_lowp.qws_init(w, rows, K, N, err); }
static void q_qws_free(bk_qws *w) { cpu_lowp.qws_free(w); }

static const backend_lowp_ops devsim_lowp = {
    .name = "devsim-onednn",
    .supported = q_supported,
    .qmat_init = q_qmat_init,
    .qmat_free = q_qmat_free,
    .qws_init = q_qws_init,
    .qws_free = q_qws_free,
    .qgemm = q_qgemm,
};

/* ---- bf16 training: the CPU's set over the untagged parameters; operands are recognised by
 * their untagged address, as the CPU's products see them ---- */

static int x_init(bk_mix **m, const real *P, size_t n, const size_t (*parts)[2], int nparts, struct nmt_err *err)
{
    check(P, RB(n), "mix.init", "P");
    return cpu_mix.init(m, U(P), n, parts, nparts, err);
}
static void x_free(bk_mix *m) { cpu_mix.free(m); }
static void x_sync(bk_mix *m)
{
    launch();
    cpu_mix.sync(m);
}
static void x_gemm(bk_mix *m, int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb,
                   real beta, real *C, int ldc)
{
    check(A, RB(span(ta ? K : M, ta ? M : K, lda)), "mix.gemm", "A");
    check(B, RB(span(tb ? N : K, tb ? K : N, ldb)), "mix.gemm", "B");
    check(C, RB(span(M, N, ldc)), "mix.gemm", "C");
    launch();
    cpu_mix.gemm(m, ta, tb, M, N, K, U(A), lda, U(B), ldb, beta, U(C), ldc);
}
/* no room lent: the products round the rows themselves, to the same bits (backend.h) */
static uint16_t *x_hold(bk_mix *m, const real *X, int rows, int cols)
{
    (void)m, (void)X, (void)rows, (void)cols;
    return NULL;
}
static void x_release(bk_mix *m) { (void)m; }

static const backend_mix_ops devsim_mix = {
    .init = x_init, .free = x_free, .sync = x_sync, .gemm = x_gemm, .hold = x_hold, .release = x_release,
};

/* ---- threads: the CPU's; a loop's body is host code that calls the kernels above ---- */

static void t_set_threads(int n) { cpu_backend.set_threads(n); }
static int t_threads(void) { return cpu_backend.threads(); }
static void t_parallel_for(long n, long grain, int nthreads, bk_body body, void *ctx)
{
    cpu_backend.parallel_for(n, grain, nthreads, body, ctx);
}

const backend_ops devsim_backend = {
    .name = "devsim",
    .alloc = dev_alloc,
    .free = dev_free,
    .copy_in = dev_copy_in,
    .copy_out = dev_copy_out,
    .set_threads = t_set_threads,
    .threads = t_threads,
    .parallel_for = t_parallel_for,
    .gemm = k_gemm,
    .gemm_rows = k_gemm_rows,
    .colsum_add = k_colsum_add,
    .vexp = k_vexp,
    .zero_rows = k_zero_rows,
    .copy_rows = k_copy_rows,
    .act_rows = k_act_rows,
    .act_grad_rows = k_act_grad_rows,
    .add_rows = k_add_rows,
    .mul_rows = k_mul_rows,
    .axpy_diff_rows = k_axpy_diff_rows,
    .dist_rows = k_dist_rows,
    .gru_gates = k_gru_gates,
    .gru_state = k_gru_state,
    .gru_grad_state = k_gru_grad_state,
    .gru_grad_reset = k_gru_grad_reset,
    .attn_forward = k_attn_forward,
    .attn_backward = k_attn_backward,
    .attn_window = k_attn_window,
    .attn_window_backward = k_attn_window_backward,
    .layer_norm = k_layer_norm,
    .layer_norm_backward = k_layer_norm_backward,
    .attn_softmax = k_attn_softmax,
    .attn_softmax_backward = k_attn_softmax_backward,
    .gemm_batched = k_gemm_batched,
    .act_grad_x_rows = k_act_grad_x_rows,
    .dropout_mask = k_dropout_mask,
    .gather_rows_ld = k_gather_rows_ld,
    .repeat_row = k_repeat_row,
    .maxout = k_maxout,
    .maxout_backward = k_maxout_backward,
    .softmax_nll = k_softmax_nll,
    .softmax_nll_backward = k_softmax_nll_backward,
    .gather_rows = k_gather_rows,
    .scatter_add_rows = k_scatter_add_rows,
    .scatter_rows = k_scatter_rows,
    .gather_cols = k_gather_cols,
    .sumsq = k_sumsq,
    .update = k_update,
    .update_rows = k_update_rows,
    .settle_rows = k_settle_rows,
    .topk_rows = k_topk_rows,
    .logp_acc_rows = k_logp_acc_rows,
    .lowp = &devsim_lowp,
    .mix = &devsim_mix,
    .mark = dev_mark,
};
