/* test_backend_pair.c: every kernel of the current device (NMT_DEVICE; the simulated device when
 * that is the CPU) against the CPU backend, op by op: the same inputs go to both through the
 * table's copies, the same call runs on each, and every buffer comes back and is compared, FP32
 * results within 1e-5 element-wise (products 1e-4), integers and bytes exactly. */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/devsim/devsim.h"
#include "base/err.h"
#include "base/rng.h"
#include "test.h"
#include "device.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

static rng R;

/* ==== a case: host buffers, the call, its scalar arguments ================================== */

enum kind { KR, KI, KU8, KD, KSCRATCH }; /* real, int, byte, double; scratch is not compared */
static const size_t KSIZE[] = {sizeof(real), sizeof(int), 1, sizeof(double), 1};

typedef struct buf { int kind; size_t n; void *h; } buf;
typedef struct pcase pcase;
typedef double (*pcall)(const backend_ops *k, void **d, const pcase *c);
struct pcase {
    const char *name;
    int nb;
    buf b[14];
    int i[10];     /* the call's integer arguments */
    double x[4];   /* and its real ones */
    double tol;
};

static void *nul(pcase *c, int kind) /* a NULL argument: a buffer of no elements */
{
    c->b[c->nb++] = (buf){kind, 0, NULL};
    return NULL;
}
static int add(pcase *c, int kind, size_t n, void *h)
{
    c->b[c->nb] = (buf){kind, n, h};
    return c->nb++;
}
/* reals in [lo, hi) */
static int reals(pcase *c, size_t n, double lo, double hi)
{
    real *x = malloc(sizeof(real) * (n ? n : 1));
    NMT_ASSERT(x);
    for (size_t i = 0; i < n; i++) x[i] = (real)(lo + (hi - lo) * rng_uniform(&R));
    return add(c, KR, n, x);
}
/* integers in [lo, hi) */
static int ints(pcase *c, size_t n, int lo, int hi)
{
    int *x = malloc(sizeof(int) * (n ? n : 1));
    NMT_ASSERT(x);
    for (size_t i = 0; i < n; i++) x[i] = lo + (int)rng_below(&R, (uint64_t)(hi - lo));
    return add(c, KI, n, x);
}
static int bytes(pcase *c, int kind, size_t n, int lo, int hi)
{
    unsigned char *x = malloc(KSIZE[kind] * (n ? n : 1));
    NMT_ASSERT(x);
    for (size_t i = 0; i < KSIZE[kind] * n; i++) x[i] = (unsigned char)(lo + (int)rng_below(&R, (uint64_t)(hi - lo)));
    return add(c, kind, n, x);
}
static int doubles(pcase *c, size_t n)
{
    double *x = calloc(n ? n : 1, sizeof(double));
    NMT_ASSERT(x);
    for (size_t i = 0; i < n; i++) x[i] = rng_uniform(&R);
    return add(c, KD, n, x);
}

/* runs the call on backend k: buffers in, call, buffers out into out[i] */
static double run_on(const backend_ops *k, const pcase *c, pcall call, void **out)
{
    void *d[14];
    for (int i = 0; i < c->nb; i++) {
        size_t bytes = KSIZE[c->b[i].kind] * c->b[i].n;
        d[i] = c->b[i].h ? k->alloc(bytes) : NULL;
        NMT_ASSERT(!c->b[i].h || d[i]);
        if (d[i]) k->copy_in(d[i], c->b[i].h, bytes);
    }
    double ret = call(k, d, c);
    for (int i = 0; i < c->nb; i++) {
        size_t bytes = KSIZE[c->b[i].kind] * c->b[i].n;
        out[i] = malloc(bytes ? bytes : 1);
        NMT_ASSERT(out[i]);
        if (d[i]) k->copy_out(out[i], d[i], bytes);
        k->free(d[i]);
    }
    return ret;
}

/* |a - b| <= tol max(1, |a|), a the CPU's; NaN only where the CPU has NaN */
static int near(double a, double b, double tol)
{
    if (a != a) return b != b;
    return fabs(a - b) <= tol * (fabs(a) > 1 ? fabs(a) : 1);
}

static size_t buf_diff(const buf *b, const void *x, const void *y, double tol, size_t *at)
{
    size_t bad = 0;
    for (size_t j = 0; j < b->n; j++) {
        int ok = b->kind == KR ? near(((const real *)x)[j], ((const real *)y)[j], tol)
               : b->kind == KD ? near(((const double *)x)[j], ((const double *)y)[j], tol)
               : b->kind == KI ? ((const int *)x)[j] == ((const int *)y)[j]
               : b->kind == KU8 ? ((const unsigned char *)x)[j] == ((const unsigned char *)y)[j] : 1;
        if (!ok && !bad++) *at = j;
    }
    return bad;
}

static const backend_ops *dev;

/* the case on the CPU and on the device; every buffer compared; the case's memory freed */
static void pair(pcase *c, pcall call)
{
    void *a[14], *b[14];
    double ra = run_on(backend_cpu(), c, call, a), rb = run_on(dev, c, call, b);
    CHECKF(near(ra, rb, c->tol), "%s: returned %.9g, the CPU %.9g", c->name, rb, ra);
    for (int i = 0; i < c->nb; i++) {
        size_t at = 0, bad = buf_diff(&c->b[i], a[i], b[i], c->tol, &at);
        double x = 0, y = 0;
        if (bad && c->b[i].kind == KR) x = ((real *)a[i])[at], y = ((real *)b[i])[at];
        if (bad && c->b[i].kind == KD) x = ((double *)a[i])[at], y = ((double *)b[i])[at];
        if (bad && c->b[i].kind == KI) x = ((int *)a[i])[at], y = ((int *)b[i])[at];
        CHECKF(bad == 0, "%s: argument %d: %zu of %zu differ, first at %zu: %.9g on %s, %.9g on the CPU", c->name, i,
               bad, c->b[i].n, at, y, dev->name, x);
        free(a[i]);
        free(b[i]);
        free(c->b[i].h);
    }
}

static pcase start(const char *name, double tol)
{
    pcase c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.tol = tol;
    return c;
}

#define P(i) ((real *)d[i])
#define PI(i) ((int *)d[i])
#define PU(i) ((unsigned char *)d[i])
#define PD(i) ((double *)d[i])

/* ==== products and rows ===================================================================== */

static double call_gemm(const backend_ops *k, void **d, const pcase *c)
{
    k->gemm(c->i[0], c->i[1], c->i[2], c->i[3], c->i[4], P(0), c->i[5], P(1), c->i[6], (real)c->x[0], P(2), c->i[7]);
    return 0;
}

static void case_gemm(int ta, int tb, double beta)
{
    int M = 37, N = 45, K = 129, lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 1, ldc = N + 2;
    pcase c = start("gemm", 1e-4);
    reals(&c, (size_t)(ta ? K : M) * lda, -1, 1);
    reals(&c, (size_t)(tb ? N : K) * ldb, -1, 1);
    reals(&c, (size_t)M * ldc, -1, 1);
    memcpy(c.i, (int[]){ta, tb, M, N, K, lda, ldb, ldc}, 8 * sizeof(int));
    c.x[0] = beta;
    pair(&c, call_gemm);
}

static double call_colsum(const backend_ops *k, void **d, const pcase *c)
{
    k->colsum_add(P(0), P(1), c->i[0], c->i[1], c->i[2]);
    return 0;
}

static double call_vexp(const backend_ops *k, void **d, const pcase *c)
{
    k->vexp(P(0), P(1), c->i[0]);
    return 0;
}

/* R rows of cols, strides cols + 3 and + 5 */
enum { RR = 7, RC = 133, LY = RC + 3, LX = RC + 5 };

static double call_rows(const backend_ops *k, void **d, const pcase *c)
{
    switch (c->i[0]) {
    case 0: k->zero_rows(P(0), LY, RR, RC); break;
    case 1: k->copy_rows(P(0), LY, P(1), LX, RR, RC); break;
    case 2: k->act_rows(c->i[1], P(0), LY, P(1), LX, P(2), RR, RC); break;
    case 3: k->act_grad_rows(c->i[1], P(0), LY, P(1), LX, P(2), LX, RR, RC); break;
    case 4: k->add_rows(P(0), LY, P(1), LX, P(2), LX, RR, RC); break;
    case 5: k->mul_rows(P(0), LY, P(1), LX, P(2), LX, RR, RC); break;
    case 6: k->axpy_diff_rows(P(0), LY, P(3), P(1), LX, P(2), LX, RR, RC); break;
    case 8: k->act_grad_x_rows(c->i[1], P(0), LY, P(1), LX, P(2), LX, RR, RC); break;
    default: k->dist_rows(PD(3), P(1), LX, P(2), LX, RR, RC);
    }
    return 0;
}

static void case_rows(int op, int f, int with_b)
{
    static const char *const name[] = {"zero_rows", "copy_rows", "act_rows", "act_grad_rows", "add_rows", "mul_rows",
                                       "axpy_diff_rows", "dist_rows", "act_grad_x_rows"};
    pcase c = start(name[op], 1e-5);
    reals(&c, RR * LY, -1, 1);
    reals(&c, RR * LX, op == 2 ? -5 : -2, op == 2 ? 5 : 2);
    if (op == 2 && !with_b) nul(&c, KR);
    else reals(&c, op == 2 ? RC : RR * LX, op == 8 ? -5 : -1, op == 8 ? 5 : 1);
    if (op == 7) doubles(&c, RR);
    else reals(&c, RR, -1, 1);
    c.i[0] = op;
    c.i[1] = f;
    pair(&c, call_rows);
}

static void cases_rows(void)
{
    pcase c = start("colsum_add", 0); /* each column summed in the CPU's order: bit for bit */
    reals(&c, 133, -1, 1);
    reals(&c, 91 * 140, -1, 1);
    memcpy(c.i, (int[]){91, 133, 140}, 3 * sizeof(int));
    pair(&c, call_colsum);
    c = start("vexp", 1e-5);
    reals(&c, 1001, -1, 1);
    reals(&c, 1001, -8, 8);
    c.i[0] = 1001;
    pair(&c, call_vexp);
    for (int op = 0; op < 9; op++) /* act_rows and act_grad_x_rows: every activation */
        for (int f = BK_IDENTITY; f <= (op == 2 || op == 8 ? BK_SWISH : op == 3 ? BK_SIGMOID : BK_IDENTITY); f++)
            for (int b = 0; b < (op == 2 ? 2 : 1); b++) case_rows(op, f, b);
}

/* ==== GRU ==================================================================================== */

enum { GB = 9, GN = 67, GLDA = 3 * GN + 2, GLDHP = GN + 3, GLDH = GN + 1, GLDDA = 3 * GN + 1 };

static double call_gru(const backend_ops *k, void **d, const pcase *c)
{
    real *hp = c->i[1] ? P(5) : NULL;
    if (c->i[0] == 0) { /* gates then state: z r rh hc h, a zr hp uq mask */
        k->gru_gates(P(0), P(1), P(2), P(6), GLDA, P(7), hp, GLDHP, GB, GN);
        k->gru_state(P(4), GLDH, P(3), P(0), P(6) + 2 * GN, GLDA, P(8), hp, GLDHP, PU(9), GB, GN);
    } else { /* backward: da dhp g z hc, hp, r dq mask */
        k->gru_grad_state(P(0), GLDDA, P(1), P(2), P(3), P(4), hp, GLDHP, PU(9), GB, GN);
        k->gru_grad_reset(P(0), GLDDA, P(1), P(7), P(6), P(5), GLDHP, PU(9), GB, GN);
    }
    return 0;
}

static void cases_gru(void)
{
    for (int back = 0; back < 2; back++)
        for (int hp = 0; hp < 2; hp++) {
            if (back && !hp) continue; /* gru_grad_reset reads hp */
            pcase c = start(back ? "gru_grad_state, gru_grad_reset" : "gru_gates, gru_state", 1e-5);
            if (!back) {
                for (int i = 0; i < 4; i++) reals(&c, GB * GN, -1, 1);
                reals(&c, GB * GLDH, -1, 1);
            } else {
                reals(&c, GB * GLDDA, -1, 1);
                reals(&c, GB * GN, -1, 1);
                reals(&c, GB * GN, -1, 1);
                reals(&c, GB * GN, 0, 1);
                reals(&c, GB * GN, -1, 1);
            }
            reals(&c, GB * GLDHP, -1, 1);
            reals(&c, back ? GB * GN : GB * GLDA, back ? 0 : -2, back ? 1 : 2);
            reals(&c, back ? GB * GN : GB * 2 * GN, -2, 2);
            reals(&c, GB * GN, -2, 2);
            bytes(&c, KU8, GB, 0, 2);
            c.i[0] = back;
            c.i[1] = hp;
            pair(&c, call_gru);
        }
}

/* ==== attention ============================================================================== */

enum { AB = 6, ABS = 3, AT = 11, ANA = 45, AHD = 38, ALDH = 41, AKW = 1, AK = 2 * AKW + 1 };

/* buffers: 0 alpha 1 ctx 2 UaH 3 q 4 v 5 H 6 xlen 7 src 8 M 9 xi; backward adds 10 dq 11 dUaH
 * 12 dH 13 dv; the rest ride in the forward's slots (dctx in ctx, dalpha in alpha) */
static double call_attn(const backend_ops *k, void **d, const pcase *c)
{
    /* without src, query row b reads sentence b: no more rows than sentences */
    int K = c->i[1] ? AK : 0, back = c->i[0], B = back || !c->i[2] ? ABS : AB;
    bk_attn a = {B, AT, ABS, ANA, AHD, ALDH, K, P(8), K ? P(9) : NULL, NULL, NULL};
    if (!back) {
        k->attn_forward(P(0), P(1), P(2), P(3), P(4), P(5), PI(6), c->i[2] ? PI(7) : NULL, &a);
        return 0;
    }
    /* backward's own: dxi, dM_rows and tmp in 7 (src unused); α itself stands for dalpha */
    a.dxi = P(7);
    a.dM_rows = P(7) + B * AT * AK;
    k->attn_backward(P(10), P(11), P(12), P(13), P(1), c->i[2] ? P(0) : NULL, P(0), P(2), P(3), P(4), P(5), PI(6), &a,
                     P(7) + B * AT * AK + B * AK * ANA);
    return 0;
}

static void case_attn(int back, int xi, int third)
{
    const char *name = back ? (xi ? "attn_backward (ξ)" : "attn_backward") : (xi ? "attn_forward (ξ)" : "attn_forward");
    pcase c = start(name, 1e-5);
    int B = back ? ABS : AB;
    /* alpha: a real softmax row for backward (it reads α); for forward, junk so large that a read
     * before the energies are written turns the row into NaN */
    int ia = back ? reals(&c, B * AT, 0, 1) : reals(&c, B * AT, 1e30, 2e30);
    reals(&c, B * AHD, -1, 1);
    reals(&c, AT * ABS * ANA, -1, 1);
    reals(&c, B * ANA, -1, 1);
    reals(&c, ANA, -1, 1);
    reals(&c, AT * ABS * ALDH, -1, 1);
    int il = add(&c, KI, ABS, memcpy(malloc(sizeof(int) * ABS), (int[]){9, 4, 11}, sizeof(int) * ABS));
    if (back) reals(&c, B * AT * AK + B * AK * ANA + B * AT, -1, 1);
    else add(&c, KI, AB, memcpy(malloc(sizeof(int) * AB), (int[]){0, 2, 1, 1, 0, 2}, sizeof(int) * AB));
    reals(&c, AK * ANA, -1, 1);
    int ix = reals(&c, B * AT * AK, 0, 1);
    for (int i = 0; i < B * AT * AK; i += 4) ((real *)c.b[ix].h)[i] = 0; /* zero features are skipped */
    if (back) {
        reals(&c, B * ANA, -1, 1);
        reals(&c, AT * ABS * ANA, -1, 1);
        reals(&c, AT * ABS * ALDH, -1, 1);
        reals(&c, B * ANA, -1, 1);
        real *al = c.b[ia].h;
        const int *len = c.b[il].h;
        for (int b = 0; b < B; b++) { /* α sums to 1 over the real positions, 0 after */
            double s = 0;
            for (int j = 0; j < AT; j++) s += j < len[b] ? al[b * AT + j] : 0;
            for (int j = 0; j < AT; j++) al[b * AT + j] = j < len[b] ? (real)(al[b * AT + j] / s) : 0;
        }
    }
    c.i[0] = back;
    c.i[1] = xi;
    c.i[2] = third; /* forward: rows read other sentences (src); backward: dalpha given */
    pair(&c, call_attn);
}

static double call_window(const backend_ops *k, void **d, const pcase *c)
{
    if (c->i[0]) k->attn_window_backward(P(1), P(0), PI(2), RR, AT, c->i[1]);
    else k->attn_window(P(0), P(1), AT + 2, PI(2), RR, AT, c->i[1]);
    return 0;
}

static void cases_attn(void)
{
    for (int back = 0; back < 2; back++)
        for (int xi = 0; xi < 2; xi++)
            for (int third = 0; third < 2; third++) case_attn(back, xi, third);
    for (int back = 0; back < 2; back++)
        for (int w = 0; w <= 2; w += 2) {
            pcase c = start(back ? "attn_window_backward" : "attn_window", 1e-5);
            reals(&c, RR * AT * (2 * w + 1), -1, 1);
            reals(&c, RR * (AT + 2), -1, 1);
            ints(&c, RR, 0, AT + 1);
            c.i[0] = back;
            c.i[1] = w;
            pair(&c, call_window);
        }
}

/* ==== readout ================================================================================ */

enum { ON = 13, OL = 29, OV = 1003, OH = 5 };

/* 0 t 1 which 2 tt 3 b 4 rows / 0 dtt 1 which 2 dt 3 - 4 rows */
static double call_maxout(const backend_ops *k, void **d, const pcase *c)
{
    const int *rows = c->i[1] ? PI(4) : NULL;
    if (c->i[0]) k->maxout_backward(P(0), P(2), PU(1), rows, ON, OL);
    else k->maxout(P(0), c->i[2] ? PU(1) : NULL, P(2), P(3), rows, ON, OL);
    return 0;
}

static int *perm(int n) /* 0 .. n-1 shuffled: distinct rows */
{
    int *p = malloc(sizeof(int) * n);
    NMT_ASSERT(p);
    for (int i = 0; i < n; i++) p[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(&R, (uint64_t)i + 1), t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    return p;
}

static void cases_maxout(void)
{
    for (int back = 0; back < 2; back++)
        for (int rows = 0; rows < 2; rows++) {
            pcase c = start(back ? "maxout_backward" : "maxout", 1e-5);
            reals(&c, back ? (ON + 4) * 2 * OL : ON * OL, -1, 1);
            bytes(&c, KU8, (ON + 4) * OL, back ? 0 : 7, back ? 2 : 8);
            reals(&c, back ? ON * OL : (ON + 4) * 2 * OL, -1, 1);
            reals(&c, 2 * OL, -1, 1);
            add(&c, KI, ON, perm(ON + 4));
            c.i[0] = back;
            c.i[1] = rows;
            c.i[2] = 1;
            pair(&c, call_maxout);
        }
}

/* 0 z 1 rinv 2 nll 3 lp 4 rows 5 y; backward: 6 dbias 7 part */
static double call_softmax(const backend_ops *k, void **d, const pcase *c)
{
    const int *rows = c->i[0] ? PI(4) : NULL;
    k->softmax_nll(P(0), PD(1), PD(2), c->i[0] ? P(3) : NULL, rows, PI(5), ON, OV, c->x[0]);
    if (c->i[1]) k->softmax_nll_backward(P(0), P(6), P(7), PD(1), rows, PI(5), ON, OV, (real)0.37, (real)c->x[0], 4, NULL);
    return 0;
}

static void cases_softmax(void)
{
    for (int back = 0; back < 2; back++)
        for (int ls = 0; ls < 2; ls++)
            for (int rows = 0; rows < 2; rows++) {
                pcase c = start(back ? "softmax_nll, softmax_nll_backward" : "softmax_nll", 1e-5);
                reals(&c, ON * OV, -6, 6);
                doubles(&c, ON);
                doubles(&c, ON);
                reals(&c, ON + 4, -1, 1);
                add(&c, KI, ON, perm(ON + 4));
                ints(&c, ON + 4, 0, OV);
                reals(&c, OV, -1, 1);
                reals(&c, (ON + 3) / 4 * OV, -1, 1);
                c.i[0] = rows;
                c.i[1] = back;
                c.x[0] = ls ? 0.1 : 0;
                pair(&c, call_softmax);
            }
}

/* ==== embeddings ============================================================================= */

enum { EV = 41, EC = 77, EN = 60 };

/* 0 table 1 src/dst 2 ids 3 mask */
static double call_embed(const backend_ops *k, void **d, const pcase *c)
{
    switch (c->i[0]) {
    case 0: k->gather_rows(P(1), P(0), PI(2), EN, EC); break;
    case 1: k->scatter_add_rows(P(0), P(1), c->i[1] ? PI(2) : NULL, c->i[2] ? PU(3) : NULL, c->i[1] ? EN : EV, EC); break;
    case 2: k->scatter_rows(P(0), P(1), PI(2), EV / 2, EC); break;
    case 3: k->gather_cols(P(1), P(0), PI(2), EN, 23, 1, EC); break; /* columns of a [EV, EC] matrix */
    default: k->gather_cols(P(1), P(0), PI(2), EN, 23, EC, 1);       /* rows, transposed */
    }
    return 0;
}

static void cases_embed(void)
{
    static const char *const name[] = {"gather_rows", "scatter_add_rows", "scatter_rows", "gather_cols",
                                       "gather_cols (rows)"};
    for (int op = 0; op < 5; op++)
        for (int ids = 0; ids < (op == 1 ? 2 : 1); ids++)
            for (int mask = 0; mask < (op == 1 ? 2 : 1); mask++) {
                /* the scatter-add sums each word's rows in the CPU's order: bit for bit */
                pcase c = start(name[op], op == 1 ? 0 : 1e-5);
                reals(&c, EV * EC, -1, 1);
                reals(&c, EN * EC, -1, 1);
                int ii = ints(&c, EN, op == 0 ? -1 : 0, op == 1 ? 7 : op >= 3 ? EC < EV ? EC : EV : EV);
                if (op == 2) { /* distinct ids */
                    int *p = perm(EV);
                    memcpy(c.b[ii].h, p, sizeof(int) * (EV / 2));
                    free(p);
                }
                bytes(&c, KU8, EN, 0, 2);
                c.i[0] = op;
                c.i[1] = op != 1 || ids;
                c.i[2] = mask;
                pair(&c, call_embed);
            }
}

/* ==== the Transformer ========================================================================= */

enum { LR = 11, LC = 203, LLY = LC + 3, LLX = LC + 5 };

/* forward: 0 y 1 stats 2 x 3 gamma 4 beta; backward: 0 dx 1 stats 2 x 3 gamma 4 gx 5 dy */
static double call_ln(const backend_ops *k, void **d, const pcase *c)
{
    if (c->i[0]) k->layer_norm_backward(P(0), LLY, c->i[1], P(4), P(5), LLX, P(2), LLX, P(1), P(3), LR, LC);
    else k->layer_norm(P(0), LLY, P(1), P(2), LLX, P(3), P(4), LR, LC, (real)1e-5);
    return 0;
}

static void cases_ln(void)
{
    for (int back = 0; back < 2; back++)
        for (int acc = 0; acc < 1 + back; acc++) {
            pcase c = start(back ? "layer_norm_backward" : "layer_norm", 1e-5);
            reals(&c, LR * LLY, -1, 1);
            int is = reals(&c, 2 * LR, 0.5, 2); /* backward reads (μ, 1/σ): any positive 1/σ */
            int ix = reals(&c, LR * LLX, -2, 2);
            for (int r = 0; r < LR; r++) /* rows with their means far from 0 */
                for (int j = 0; j < LC; j++) ((real *)c.b[ix].h)[r * LLX + j] += (real)(r - 5);
            for (int r = 0; r < LR; r++) ((real *)c.b[is].h)[2 * r] = (real)(r - 5);
            reals(&c, LC, 0.5, 1.5);
            reals(&c, back ? LR * LC : LC, -1, 1);
            reals(&c, LR * LLX, -1, 1);
            c.i[0] = back;
            c.i[1] = acc;
            pair(&c, call_ln);
        }
}

enum { SN = 3, SH = 4, SQ = 7, SK = 37 };

/* 0 S 1 klen (or none); backward: 0 dS 1 P 2 dP */
static double call_softmax_attn(const backend_ops *k, void **d, const pcase *c)
{
    if (c->i[0] == 2) k->attn_softmax_backward(P(2), P(1), P(2), SN * SH * SQ, SK, (real)0.37); /* in place */
    else if (c->i[0]) k->attn_softmax_backward(P(0), P(1), P(2), SN * SH * SQ, SK, (real)0.37);
    else k->attn_softmax(P(0), c->i[1] ? PI(1) : NULL, c->i[2], SN, SH, SQ, SK, c->i[3], c->i[4], (real)0.37);
    return 0;
}

static void cases_softmax_attn(void)
{
    /* klen (or none), kfix, causal, qoff */
    static const int v[][4] = {{1, 0, 0, 0}, {0, 23, 0, 0}, {1, 0, 1, 0}, {1, 0, 1, 5}, {0, SK, 1, -3}};
    for (size_t q = 0; q < sizeof v / sizeof v[0]; q++) {
        pcase c = start("attn_softmax", 1e-5);
        reals(&c, SN * SH * SQ * SK, -8, 8);
        if (v[q][0]) add(&c, KI, SN, memcpy(malloc(sizeof(int) * SN), (int[]){SK, 0, 19}, sizeof(int) * SN));
        else nul(&c, KI);
        memcpy(c.i + 1, v[q], sizeof v[q]);
        pair(&c, call_softmax_attn);
    }
    for (int inplace = 0; inplace < 2; inplace++) {
        pcase c = start("attn_softmax_backward", 1e-5);
        reals(&c, SN * SH * SQ * SK, -1, 1);
        reals(&c, SN * SH * SQ * SK, 0, 0.1);
        reals(&c, SN * SH * SQ * SK, -2, 2);
        c.i[0] = 1 + inplace;
        pair(&c, call_softmax_attn);
    }
}

/* gemm_batched: BO sentences of `inner` heads; B's blocks chosen by sel from BNB */
enum { BM = 9, BN = 21, BK = 35, BO = 5, BNB = 3, BPAD = 7 };

static long mspan(int rows, int cols, int ld) { return (long)(rows - 1) * ld + cols; }

/* the layout of case c: each operand's products BPAD elements apart, its groups of heads too */
static bk_batch batch_of(const pcase *c, int *lda, int *ldb, int *ldc)
{
    int ta = c->i[0], tb = c->i[1], I = c->i[2];
    *lda = (ta ? BM : BK) + 2, *ldb = (tb ? BK : BN) + 1, *ldc = BN + 3;
    long sa = mspan(ta ? BK : BM, ta ? BM : BK, *lda) + BPAD, sb = mspan(tb ? BN : BK, tb ? BK : BN, *ldb) + BPAD;
    long sc = mspan(BM, BN, *ldc) + BPAD;
    return (bk_batch){BO * I, I, I * sa + BPAD, sa, I * sb + BPAD, sb, I * sc + BPAD, sc, NULL};
}

/* 0 A 1 B 2 C 3 sel (or none) */
static double call_batched(const backend_ops *k, void **d, const pcase *c)
{
    int lda, ldb, ldc;
    bk_batch s = batch_of(c, &lda, &ldb, &ldc);
    s.sel = c->i[3] ? PI(3) : NULL;
    k->gemm_batched(c->i[0], c->i[1], BM, BN, BK, P(0), lda, P(1), ldb, (real)c->x[0], P(2), ldc, &s);
    return 0;
}

static void case_batched(int ta, int tb, int inner, int sel, double beta)
{
    pcase c = start("gemm_batched", 1e-5);
    memcpy(c.i, (int[]){ta, tb, inner, sel}, 4 * sizeof(int));
    c.x[0] = beta;
    int lda, ldb, ldc;
    bk_batch s = batch_of(&c, &lda, &ldb, &ldc);
    reals(&c, (size_t)(BO * s.oa), -1, 1);
    reals(&c, (size_t)((sel ? BNB : BO) * s.ob), -1, 1);
    reals(&c, (size_t)(BO * s.oc), -1, 1);
    if (sel) ints(&c, BO, 0, BNB);
    else nul(&c, KI);
    pair(&c, call_batched);
}

/* 0 dst 1 src 2 ids */
static double call_gather_ld(const backend_ops *k, void **d, const pcase *c)
{
    (void)c;
    k->gather_rows_ld(P(0), EC + 4, P(1), EC + 9, PI(2), EN, EC);
    return 0;
}

/* 0 m */
static double call_dropout(const backend_ops *k, void **d, const pcase *c)
{
    (void)c;
    k->dropout_mask(P(0), EN * EC + 7, 0x1234567890abcdefull, (real)0.3);
    return 0;
}

static void cases_transformer(void)
{
    pcase dm = start("dropout_mask", 0);
    reals(&dm, EN * EC + 7, -1, 1);
    pair(&dm, call_dropout);
    cases_ln();
    cases_softmax_attn();
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int inner = 1; inner <= 4; inner += 3)
                for (int sel = 0; sel < 2; sel++) case_batched(ta, tb, inner, sel, ta == tb ? 0 : 1);
    pcase c = start("gather_rows_ld", 0);
    reals(&c, EN * (EC + 4), -1, 1);
    reals(&c, EV * (EC + 9), -1, 1);
    ints(&c, EN, 0, EV);
    pair(&c, call_gather_ld);
}

/* ==== optimizer ============================================================================== */

static const bk_hyper HYP = {0.01f, 0.95f, 1e-6f, 0.9f, 0.999f, 0.271f, 0.002997f, 0.8f};
enum { UROWS = 37, UCOLS = 53, UOFF = 11 };

/* 0 p 1 g 2 s0 3 s1 4 lag */
static double call_update(const backend_ops *k, void **d, const pcase *c)
{
    real *s[2] = {P(2), P(3)};
    int rule = c->i[1], ns = rule == BK_SGD ? 0 : rule == BK_ADAGRAD ? 1 : 2;
    size_t n = UOFF + (size_t)UROWS * UCOLS;
    switch (c->i[0]) {
    case 0: return k->sumsq(P(1), n);
    case 1: k->update(rule, &HYP, P(0), P(1), s, 5, n - 3); return 0;
    case 2: k->update_rows(rule, &HYP, P(0), P(1), s, ns, UOFF, UROWS, UCOLS, c->i[2] ? (unsigned *)PI(4) : NULL); return 0;
    default: k->settle_rows(s, 2, HYP.rho, UOFF, UROWS, UCOLS, (unsigned *)PI(4)); return 0;
    }
}

static void case_update(int op, int rule, int lag)
{
    static const char *const name[] = {"sumsq", "update", "update_rows", "settle_rows"};
    pcase c = start(name[op], 1e-5);
    size_t n = UOFF + (size_t)UROWS * UCOLS;
    reals(&c, n, -1, 1);
    int ig = reals(&c, n, -3, 3);
    reals(&c, n, 0, 1);
    reals(&c, n, 0, 1);
    ints(&c, UROWS, 0, 4);
    real *g = c.b[ig].h;
    for (int r = 0; r < UROWS; r += 3) /* every third row's gradient zero: skipped; one holds -0 */
        for (int j = 0; j < UCOLS; j++) g[UOFF + r * UCOLS + j] = r == 3 && j == 5 ? -0.0f : 0;
    c.i[0] = op;
    c.i[1] = rule;
    c.i[2] = lag;
    pair(&c, call_update);
}

static void cases_update(void)
{
    case_update(0, 0, 0);
    for (int rule = BK_SGD; rule <= BK_ADAM; rule++) {
        case_update(1, rule, 0);
        case_update(2, rule, 0);
    }
    case_update(2, BK_ADADELTA, 1);
    case_update(3, BK_ADADELTA, 1);
}

/* ==== the beam's scans ======================================================================= */

enum { TH = 6, TV = 1999, TCAP = 9, TKMAX = 7 };

/* 0 n 1 lp 2 v 3 lse 4 z 5 need 6 heap 7 y (the ensemble's scores) */
static double call_topk(const backend_ops *k, void **d, const pcase *c)
{
    if (c->i[0]) {
        k->logp_acc_rows(P(7), P(4), TH, TV, (real)0.25, 1);
        k->logp_acc_rows(P(7), P(4), TH, TV, (real)0.75, 0);
    }
    k->topk_rows(PI(0), P(1), PI(2), P(3), c->i[0] ? P(7) : P(4), TH, TV, PI(5), TCAP, c->i[1], (topk_item *)d[6],
                 TKMAX, c->i[0]);
    return 0;
}

static void cases_topk(void)
{
    for (int logp = 0; logp < 2; logp++) {
        pcase c = start(logp ? "logp_acc_rows, topk_rows (logp)" : "topk_rows", 1e-5);
        add(&c, KI, TH, calloc(TH, sizeof(int)));
        add(&c, KR, TH * TCAP, calloc(TH * TCAP, sizeof(real)));
        add(&c, KI, TH * TCAP, calloc(TH * TCAP, sizeof(int)));
        reals(&c, TH, 0, 1);
        int iz = reals(&c, TH * TV, -4, 4);
        int *need = malloc(sizeof(int) * TH);
        memcpy(need, (int[]){3, 1, 7, 0, 2, 5}, sizeof(int) * TH);
        add(&c, KI, TH, need);
        add(&c, KSCRATCH, sizeof(topk_item) * TH * TKMAX, calloc(TH * TKMAX, sizeof(topk_item)));
        reals(&c, TH * TV, -1, 1);
        real *z = c.b[iz].h;
        z[2 * TV + 1] = 9;                                 /* row 2's best is the skipped word */
        for (int v = 100; v < 104; v++) z[4 * TV + v] = 8; /* row 4: 4 tie for best (need 2): all are in */
        for (int v = 10; v < 22; v++) z[5 * TV + v] = 8;   /* row 5: 12 tie, more than the cap: -1 */
        c.i[0] = logp;
        c.i[1] = 1;
        pair(&c, call_topk);
    }
}

int main(void)
{
    rng_seed(&R, 7);
    if (test_device_missing("test_backend_pair")) return test_done("test_backend_pair");
    dev = TX->b == backend_cpu() ? &devsim_backend : TX->b;
    printf("test_backend_pair: %s against the CPU\n", dev->name);
    backend_cpu()->set_threads(3);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int beta = 0; beta < 3; beta++) case_gemm(ta, tb, beta * 0.5);
    cases_rows();
    cases_gru();
    cases_attn();
    cases_maxout();
    cases_softmax();
    cases_embed();
    cases_transformer();
    cases_update();
    cases_topk();
    return test_done("test_backend_pair");
}
