/* encoder.c: embeddings and the (bi)directional GRU encoder (MODEL.md sections 1, 3). The input
 * projections of all positions are one product per direction; only U·h runs per step. The
 * backward direction reads j = Tx..1 and, since padding copies the previous state, stays at
 * h←_{Tx+1} = 0 until it reaches each sentence's own last token. Training's variational dropout
 * (docs/TRAINING.md) multiplies each sentence's embeddings by one mask at every position and
 * gives each direction's GRU one mask per sentence on the state its recurrent products read. */
#include "backend/backend.h"
#include "nn/encoder.h"
#include "base/fault.h"

void enc_layout(enc_ws *w, arena *a, const nmt_config *c, int B, int Tx)
{
    size_t m = c->emb, n = c->hid, TB = (size_t)Tx * B;
    w->ndir = enc_dirs(c);
    size_t hd = w->ndir * n;
    w->ex = arena_take(a, sizeof(real) * TB * m);
    w->H = arena_take(a, sizeof(real) * TB * hd);
    w->dH = arena_take(a, sizeof(real) * TB * hd);
    w->dex = arena_take(a, sizeof(real) * TB * m);
    for (int d = 0; d < 2; d++) {
        int on = d < w->ndir;
        w->X[d] = on ? arena_take(a, sizeof(real) * TB * 3 * n) : NULL;
        w->dA[d] = on ? arena_take(a, sizeof(real) * TB * 3 * n) : NULL;
        w->cache[d].z = on ? arena_take(a, sizeof(real) * TB * n) : NULL;
        w->cache[d].r = on ? arena_take(a, sizeof(real) * TB * n) : NULL;
        w->cache[d].hc = on ? arena_take(a, sizeof(real) * TB * n) : NULL;
        w->cache[d].rh = on ? arena_take(a, sizeof(real) * TB * n) : NULL;
    }
    w->mask = arena_take(a, TB);
    w->hmask = arena_take_host(a, TB);
    w->step_cache = 0;
    w->drop_emb = w->drop_h[0] = w->drop_h[1] = NULL;
    for (int d = 0; d < 2; d++) {
        int on = d < w->ndir;
        w->carry[d] = on ? arena_take(a, sizeof(real) * B * n) : NULL;
        w->dh[d] = on ? arena_take(a, sizeof(real) * B * n) : NULL;
        w->tmp[d] = on ? arena_take(a, sizeof(real) * B * 3 * n) : NULL;
    }
}

static gru_cache cache_at(gru_cache c, size_t off)
{
    gru_cache r = {c.z + off, c.r + off, c.hc + off, c.rh + off};
    return r;
}

/* The rows still inside their sentence at position t, when they form a prefix: rows sorted by
 * source length, longest first (batch_fill does so). -1 otherwise: every row runs, and the
 * mask makes padding copy the state. A step on the prefix alone skips the padding's products,
 * a quarter of the encoder's work on Multi30k's minibatches. */
static int active_prefix(const batch *bt, int t)
{
    for (int b = 1; b < bt->B; b++)
        if (bt->xlen[b] > bt->xlen[b - 1]) return -1;
    int n = 0;
    while (n < bt->B && bt->xlen[n] > t) n++;
    return n;
}

/* One direction's recurrence: d = 0 reads j = 1..Tx, d = 1 reads j = Tx..1 and writes the second
 * half of each annotation row. */
static void enc_direction_forward(const bk_ctx *x, enc_ws *w, const nmt_config *c, const params *p, const batch *bt, int d)
{
    const backend_ops *bk = x->b;
    int B = bt->B, Tx = bt->Tx, n = c->hid, hd = w->ndir * n;
    for (int s = 0; s < Tx; s++) {
        size_t t = d == 0 ? (size_t)s : (size_t)(Tx - 1 - s);
        int first = s == 0, Bt = active_prefix(bt, (int)t);
        const real *hp = first ? NULL : w->H + (d == 0 ? t - 1 : t + 1) * B * hd + d * n;
        real *h = w->H + t * B * hd + d * n;
        gru_cache ct = cache_at(w->cache[d], w->step_cache ? 0 : t * B * n);
        gru_forward(x, h, hd, ct, w->X[d] + t * B * 3 * n, 3 * n, hp, hd, bk_w32(p->enc_U[d]), bk_w32(p->enc_Uh[d]),
                    Bt < 0 ? w->mask + t * B : NULL, w->drop_h[d], Bt < 0 ? B : Bt, n, w->tmp[d]);
        if (Bt >= 0 && Bt < B) { /* padding: the state carries on; r∘h is read by dU_h */
            if (hp) bk->copy_rows(h + (size_t)Bt * hd, hd, hp + (size_t)Bt * hd, hd, B - Bt, n);
            else bk->zero_rows(h + (size_t)Bt * hd, hd, B - Bt, n);
            bk->zero_rows(ct.rh + (size_t)Bt * n, n, B - Bt, n);
        }
    }
}

/* Backward through one direction's recurrence: fills dA[d] (the gradient of its pre-activations). */
static void enc_direction_backward(const bk_ctx *x, enc_ws *w, const nmt_config *c, const params *p, const batch *bt, int d)
{
    const backend_ops *bk = x->b;
    int B = bt->B, Tx = bt->Tx, n = c->hid, hd = w->ndir * n;
    real *carry = w->carry[d], *dh = w->dh[d];
    bk->zero_rows(carry, n, B, n);
    for (int s = 0; s < Tx; s++) {
        /* forward direction runs backward in time; the backward direction forward */
        size_t t = d == 0 ? (size_t)(Tx - 1 - s) : (size_t)s;
        int first = d == 0 ? t == 0 : (int)t == Tx - 1; /* the step that read h_0 = 0 */
        int Bt = active_prefix(bt, (int)t);
        const real *hp = first ? NULL : w->H + (d == 0 ? t - 1 : t + 1) * B * hd + d * n;
        bk->add_rows(dh, n, w->dH + t * B * hd + d * n, hd, carry, n, B, n);
        bk->zero_rows(carry, n, B, n);
        real *dA = w->dA[d] + t * B * 3 * n;
        gru_backward(x, dA, 3 * n, carry, dh, cache_at(w->cache[d], t * B * n), hp, hd, p->enc_U[d], p->enc_Uh[d],
                     Bt < 0 ? w->mask + t * B : NULL, w->drop_h[d], Bt < 0 ? B : Bt, n, w->tmp[d]);
        if (Bt >= 0 && Bt < B) { /* padding copied h: the gradient passes straight through */
            bk->zero_rows(dA + (size_t)Bt * 3 * n, 3 * n, B - Bt, 3 * n);
            if (!FAULT(FAULT_ENC_CARRY))
                bk->add_rows(carry + (size_t)Bt * n, n, carry + (size_t)Bt * n, n, dh + (size_t)Bt * n, n, B - Bt, n);
        }
    }
}

/* The two directions as the body of a parallel loop */
typedef struct dir_job { const bk_ctx *x; enc_ws *w; const nmt_config *c; const params *p; const batch *bt; } dir_job;

static void dir_forward(void *ctx, long lo, long hi, int thread)
{
    const dir_job *j = ctx;
    (void)thread;
    for (long d = lo; d < hi; d++) enc_direction_forward(j->x, j->w, j->c, j->p, j->bt, (int)d);
}

static void dir_backward(void *ctx, long lo, long hi, int thread)
{
    const dir_job *j = ctx;
    (void)thread;
    for (long d = lo; d < hi; d++) enc_direction_backward(j->x, j->w, j->c, j->p, j->bt, (int)d);
}

void enc_forward(const bk_ctx *x, enc_ws *w, const nmt_config *c, const params *p, const batch *bt)
{
    const backend_ops *bk = x->b;
    int B = bt->B, Tx = bt->Tx, m = c->emb, n = c->hid;
    size_t TB = (size_t)Tx * B;
    bk->gather_rows(w->ex, p->Es, bt->dev_x, (int)TB, m);
    /* one sentence's mask at every position: row stride 0 over rows of B·m */
    if (w->drop_emb) bk->mul_rows(w->ex, B * m, w->ex, B * m, w->drop_emb, 0, Tx, B * m);
    for (size_t i = 0; i < TB; i++) w->hmask[i] = (int)(i / B) < bt->xlen[i % B];
    bk->copy_in(w->mask, w->hmask, TB);
    for (int d = 0; d < w->ndir; d++) {
        mm(x, 0, 0, (int)TB, 3 * n, m, w->ex, m, p->enc_W[d], 3 * n, 0, w->X[d], 3 * n);
        bk->act_rows(BK_IDENTITY, w->X[d], 3 * n, w->X[d], 3 * n, p->enc_b[d], (int)TB, 3 * n);
    }
    /* The two directions are independent recurrences of small per-step products: one thread
     * each (the BLAS runs single-threaded inside a parallel region) beats splitting every small
     * product over both threads, which pays a synchronisation per step. */
    dir_job job = {x, w, c, p, bt};
    bk->parallel_for(w->ndir, 1, 0, dir_forward, &job);
}

void enc_backward(const bk_ctx *x, enc_ws *w, const nmt_config *c, const params *p, params *g, const batch *bt)
{
    const backend_ops *bk = x->b;
    int B = bt->B, Tx = bt->Tx, m = c->emb, n = c->hid, hd = w->ndir * n;
    size_t TB = (size_t)Tx * B;
    dir_job job = {x, w, c, p, bt};
    bk->parallel_for(w->ndir, 1, 0, dir_backward, &job);
    for (int d = 0; d < w->ndir; d++) {
        /* Recurrent weights: h_prev of step t is H[t-1] (forward) or H[t+1] (backward); the step
         * that read the zero state contributes nothing. With dropout the products read H∘m,
         * formed in dH, whose gradients the recurrences above have consumed. */
        const real *hs = w->H;
        if (w->drop_h[d]) {
            gru_drop_states(x, w->dH + (size_t)d * n, hd, w->H + (size_t)d * n, hd, w->drop_h[d], Tx, B, n);
            hs = w->dH;
        }
        if (Tx > 1) {
            if (d == 0)
                mm(x, 1, 0, n, 2 * n, (Tx - 1) * B, hs, hd, w->dA[0] + (size_t)B * 3 * n, 3 * n, 1, g->enc_U[0], 2 * n);
            else
                mm(x, 1, 0, n, 2 * n, (Tx - 1) * B, hs + (size_t)B * hd + n, hd, w->dA[1], 3 * n, 1, g->enc_U[1], 2 * n);
        }
        mm(x, 1, 0, n, n, (int)TB, w->cache[d].rh, n, w->dA[d] + 2 * n, 3 * n, 1, g->enc_Uh[d], n);
        mm(x, 1, 0, m, 3 * n, (int)TB, w->ex, m, w->dA[d], 3 * n, 1, g->enc_W[d], 3 * n);
        colsum_add(x, g->enc_b[d], w->dA[d], (int)TB, 3 * n, 3 * n);
        mm(x, 0, 1, (int)TB, m, 3 * n, w->dA[d], 3 * n, p->enc_W[d], 3 * n, d ? 1 : 0, w->dex, m);
    }
    if (w->drop_emb && !FAULT(FAULT_DROP_EMB)) bk->mul_rows(w->dex, B * m, w->dex, B * m, w->drop_emb, 0, Tx, B * m);
    bk->scatter_add_rows(g->Es, w->dex, bt->dev_x, w->mask, (int)TB, m);
}
