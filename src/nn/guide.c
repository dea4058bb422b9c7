/* guide.c: guided alignment's cost and gradient (guide.h), formed on the host from the
 * attention weights read back. Each row's links come sorted by target word, then source word,
 * so one target word's links are one run: a_ij = (links of i to j) / (links of i). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "nn/guide.h"

int guide_init(const bk_ctx *x, guide_ws *g, int kind, double weight, int B, int Tx, int Ty, nmt_err *err)
{
    memset(g, 0, sizeof *g);
    g->kind = kind;
    g->weight = weight;
    g->cap = (size_t)B * Tx * Ty;
    g->cap_row = (size_t)B * Tx;
    g->b = x->b;
    g->dA = x->b->alloc(sizeof(real) * (g->cap ? g->cap : 1));
    g->tmp = x->b->alloc(sizeof(real) * (g->cap_row ? g->cap_row : 1));
    g->hA = malloc(sizeof(real) * (g->cap ? g->cap : 1));
    g->hG = malloc(sizeof(real) * (g->cap ? g->cap : 1));
    if (!g->dA || !g->tmp || !g->hA || !g->hG) {
        guide_free(g);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for guided alignment's buffers");
    }
    return NMT_OK;
}

void guide_free(guide_ws *g)
{
    if (!g) return;
    if (g->b) {
        g->b->free(g->dA);
        g->b->free(g->tmp);
    }
    free(g->hA);
    free(g->hG);
    memset(g, 0, sizeof *g);
}

/* One target word's links lk[0..n) (2 ints each, one target, sources ascending) in row al of α
 * [Tx]: its cost, and with gs != 0 its gradient times gs into gr. xlen: the source's length. */
static double word_cost(int kind, const int *lk, int n, const real *al, int xlen, real *gr, double gs)
{
    double a = 1.0 / n, cost = 0;
    if (kind == NMT_GUIDED_CE) {
        for (int k = 0; k < n; k++) {
            int j = lk[2 * k];
            cost -= a * log(al[j] + GUIDE_EPS);
            if (gs != 0) gr[j] += (real)(gs * -a / (al[j] + GUIDE_EPS));
        }
        return cost;
    }
    int k = 0;
    for (int j = 0; j < xlen; j++) { /* mse over every real position: the target is 0 off the links */
        int c = 0;
        while (k < n && lk[2 * k] == j) { c++; k++; }
        double d = al[j] - c * a;
        cost += d * d;
        if (gs != 0) gr[j] = (real)(gs * 2 * d);
    }
    return cost;
}

/* Σ G over the batch from hA; with gs != 0 also gs·∂G/∂α into hG (zeroed by the caller). */
static double batch_cost(const guide_ws *g, const batch *bt, const batch_links *l, double gs)
{
    int B = bt->B, Tx = bt->Tx, Ty = bt->Ty;
    double cost = 0;
    for (int r = 0; r < B; r++) {
        const int *lk = l->lk + 2 * (size_t)l->off[r];
        int n = l->off[r + 1] - l->off[r];
        for (int a = 0, e; a < n; a = e) {
            int i = lk[2 * a + 1];
            for (e = a; e < n && lk[2 * e + 1] == i; e++) {}
            size_t row = (g->batch_major ? (size_t)r * Ty + i : (size_t)i * B + r) * Tx; /* α_i of row r */
            cost += word_cost(g->kind, lk + 2 * a, e - a, g->hA + row, bt->xlen[r], g->hG + row, gs);
        }
    }
    return cost;
}

double guide_forward(const bk_ctx *x, guide_ws *g, const real *alpha, const batch *bt, const batch_links *l)
{
    size_t n = (size_t)bt->Ty * bt->B * bt->Tx;
    NMT_ASSERT(n <= g->cap);
    x->b->copy_out(g->hA, alpha, sizeof(real) * n);
    g->active = 1;
    return g->cost = batch_cost(g, bt, l, 0);
}

const real *guide_backward(const bk_ctx *x, guide_ws *g, const batch *bt, const batch_links *l, real scale)
{
    size_t n = (size_t)bt->Ty * bt->B * bt->Tx;
    memset(g->hG, 0, sizeof(real) * n);
    batch_cost(g, bt, l, (double)scale * g->weight);
    x->b->copy_in(g->dA, g->hG, sizeof(real) * n);
    return g->dA;
}
