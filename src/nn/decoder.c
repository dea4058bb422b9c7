/* decoder.c: s_0 = tanh(W_s h←_1 + b_s) (RNNencdec: of h→_Tx), and the recurrence
 *   c_i = attention(s_{i-1}, h)  (RNNencdec: h→_Tx),
 *   s_i = GRU(s_{i-1}; ȳ_{i-1}·W + c_i·C + b)                      (MODEL.md sections 2, 3)
 * with the variants of section 5 as small additions at marked points: RecAtt adds R_a c_{i-1} to
 * the query, InputFeed F c_{i-1} to the GRU input, Markov / LocFer the window ξ to the energies.
 * ȳ_{i-1}·W is one product over all positions before the loop (teacher forcing); the
 * recurrent, attention and context products run per step. Weight gradients of per-step
 * products are formed after the loop from stored per-step gradients, one product each. */
#include <math.h>

#include "backend/backend.h"
#include "nn/decoder.h"
#include "nn/step.h"
#include "base/fault.h"
#include "base/prof.h"

void dec_layout(dec_ws *w, arena *a, const nmt_config *c, int B, int Tx, int Ty)
{
    size_t m = c->emb, n = c->hid, na = c->att, cd = ctx_dim(c), TB = (size_t)Ty * B, SB = (size_t)Tx * B;
    int search = has_attention(c);
    w->Eprev = arena_take(a, sizeof(real) * TB * m);
    w->Y = arena_take(a, sizeof(real) * TB * 3 * n);
    w->S = arena_take(a, sizeof(real) * (TB + B) * n);
    w->C = arena_take(a, sizeof(real) * TB * cd);
    w->UaH = search ? arena_take(a, sizeof(real) * SB * na) : NULL;
    w->Q = search ? arena_take(a, sizeof(real) * TB * na) : NULL;
    w->alpha = search ? arena_take(a, sizeof(real) * TB * Tx) : NULL;
    w->pre = arena_take(a, sizeof(real) * B * 3 * n);
    w->cache.z = arena_take(a, sizeof(real) * TB * n);
    w->cache.r = arena_take(a, sizeof(real) * TB * n);
    w->cache.hc = arena_take(a, sizeof(real) * TB * n);
    w->cache.rh = arena_take(a, sizeof(real) * TB * n);
    w->dS = arena_take(a, sizeof(real) * TB * n);
    w->dC = arena_take(a, sizeof(real) * TB * cd);
    w->dEprev = arena_take(a, sizeof(real) * TB * m);
    w->dA = arena_take(a, sizeof(real) * TB * 3 * n);
    w->dQ = search ? arena_take(a, sizeof(real) * TB * na) : NULL;
    w->dUaH = search ? arena_take(a, sizeof(real) * SB * na) : NULL;
    w->dv_rows = search ? arena_take(a, sizeof(real) * B * na) : NULL;
    w->carry = arena_take(a, sizeof(real) * B * n);
    w->dh = arena_take(a, sizeof(real) * B * n);
    w->tmp = arena_take(a, sizeof(real) * B * (3 * n > (size_t)Tx ? 3 * n : (size_t)Tx));
    size_t K = xi_kind(c) ? (size_t)xi_width(c) : 0;
    w->XI = K ? arena_take(a, sizeof(real) * TB * Tx * K) : NULL;
    w->cum = K ? arena_take(a, sizeof(real) * B * Tx) : NULL;
    w->dxi = K ? arena_take(a, sizeof(real) * B * Tx * K) : NULL;
    w->dal = K ? arena_take(a, sizeof(real) * B * Tx) : NULL;
    w->dM_rows = K ? arena_take(a, sizeof(real) * B * K * na) : NULL;
    int fd = has_fertdec(c);
    w->cov = fd ? arena_take(a, sizeof(real) * (TB + B) * m) : NULL;
    w->G = fd ? arena_take(a, sizeof(real) * TB * m) : NULL;
    w->TH = fd ? arena_take(a, sizeof(real) * TB * n) : NULL;
    w->YG = fd ? arena_take(a, sizeof(real) * TB * m) : NULL;
    w->dGP = fd ? arena_take(a, sizeof(real) * TB * m) : NULL;
    w->dTH = fd ? arena_take(a, sizeof(real) * TB * n) : NULL;
    w->dDc = fd ? arena_take(a, sizeof(real) * (TB + B) * m) : NULL;
    w->ddc = fd ? arena_take(a, sizeof(real) * B * m) : NULL;
    w->ddi = fd ? arena_take(a, sizeof(real) * B * m) : NULL;
    /* last, so that the buffers above keep their offsets whatever the variant */
    w->nrm = fd ? arena_take(a, sizeof(double) * B * (Ty + 1)) : NULL;
    w->u = fd ? arena_take(a, sizeof(real) * B * 2 * (Ty + 1)) : NULL;
    w->hnrm = fd ? arena_take_host(a, sizeof(double) * B * (Ty + 1)) : NULL;
    w->hu = fd ? arena_take_host(a, sizeof(real) * B * 2 * (Ty + 1)) : NULL;
    w->drop_emb = w->drop_h = NULL;
    w->ga = NULL;
    w->ga_tmp = NULL;
}

double dec_extra_cost(const dec_ws *w, const nmt_config *c)
{
    return has_fertdec(c) ? c->fert_step_w * w->cost_step + c->fert_left_w * w->cost_left : 0;
}

static gru_cache cache_at(gru_cache c, size_t off)
{
    gru_cache r = {c.z + off, c.r + off, c.hc + off, c.rh + off};
    return r;
}

/* The row block of the annotations that s_0 reads: h←_1, or h→_Tx for RNNencdec (padding
 * carried the last real state to position Tx, so one block serves every row). */
static size_t s0_source(const nmt_config *c, int B, int Tx, int hd)
{
    return has_attention(c) ? (size_t)c->hid : (size_t)(Tx - 1) * B * hd;
}

void dec_init_state(const bk_ctx *x, real *s0, const enc_ws *e, const nmt_config *c, const params *p, int B, int Tx)
{
    int n = c->hid, hd = e->ndir * n;
    mm(x, 0, 0, B, n, n, e->H + s0_source(c, B, Tx, hd), hd, p->init_W, n, 0, s0, n);
    x->b->act_rows(BK_TANH, s0, n, s0, n, p->init_b, B, n);
}

/* The pointers of step i into the stored sequences (training keeps every step for backward). */
static void step_views(dec_ws *w, const nmt_config *c, int B, int Tx, int i, dec_bufs *bf, dec_rows *prev, dec_rows *next)
{
    size_t o = (size_t)i * B, m = c->emb, n = c->hid, na = c->att, cd = ctx_dim(c);
    int xk = xi_kind(c), fd = has_fertdec(c), K = xk ? xi_width(c) : 0;
    *bf = (dec_bufs){w->pre, fd ? w->G + o * m : NULL, w->Q ? w->Q + o * na : NULL, w->alpha ? w->alpha + o * Tx : NULL,
                     w->C + o * cd, xk ? w->XI + o * Tx * K : NULL, fd ? w->TH + o * n : NULL, w->tmp,
                     cache_at(w->cache, o * n), NULL, w->drop_h};
    /* Markov reads α_{i-1} and keeps α_i where it is; LocFer sums into cum in place */
    real *aprev = xk == XI_LOCFER ? w->cum : xk == XI_MARKOV && i ? w->alpha + (o - B) * Tx : NULL;
    real *anext = xk == XI_LOCFER ? w->cum : xk == XI_MARKOV ? bf->alpha : NULL;
    *prev = (dec_rows){w->S + o * n, i ? w->C + (o - B) * cd : NULL, aprev, fd ? w->cov + o * m : NULL, (int)n, (int)cd, Tx, (int)m};
    *next = (dec_rows){w->S + (o + B) * n, bf->ctx, anext, fd ? w->cov + (o + B) * m : NULL, (int)n, (int)cd, Tx, (int)m};
}

/* FertDec's norms are smoothed below FERT_EPS (Huber): h(v) = ||v|| from FERT_EPS up, else
 * ||v||² / (2 FERT_EPS) + FERT_EPS / 2, whose gradient v / max(||v||, FERT_EPS) stays finite.
 * The plain norm's v / ||v|| overflowed float where the coverage decayed to denormals (||v|| of
 * 1e-43 on 30-word targets of a trained model: 4% of its updates skipped as non-finite). */
#ifdef NMT_FAULTS
#define FERT_EPS nmt_fert_eps /* the gradient check widens it so that its norms fall inside */
#else
#define FERT_EPS 1e-12
#endif
static double fert_norm(double r) { return r >= FERT_EPS ? r : r * r / (2 * FERT_EPS) + FERT_EPS / 2; }

/* Every sentence's norms ||d_{i+1} - d_i|| (i < L) and ||d_{L+1}|| into nrm, sentence b's from
 * b·(Ty+1) on, read back into hnrm in one copy. One sentence's steps are rows B·m apart. */
static void fert_norms(const bk_ctx *x, dec_ws *w, const nmt_config *c, const batch *bt)
{
    const backend_ops *bk = x->b;
    int B = bt->B, m = c->emb, ld = B * m, T1 = bt->Ty + 1;
    for (int b = 0; b < B; b++) {
        int L = bt->ylen[b];
        const real *d = w->cov + (size_t)b * m; /* d_1 of sentence b */
        bk->dist_rows(w->nrm + (size_t)b * T1, d + ld, ld, d, ld, L, m);
        bk->dist_rows(w->nrm + (size_t)b * T1 + L, d + (size_t)L * ld, m, NULL, 0, 1, m);
    }
    bk->copy_out(w->hnrm, w->nrm, sizeof(double) * B * T1);
}

/* FertDec's costs over each sentence's own steps: (1/Ty) Σ h(d_{i+1} - d_i) and h(d_{Ty+1}),
 * summed in order on the host. */
static void fert_costs(const bk_ctx *x, dec_ws *w, const nmt_config *c, const batch *bt)
{
    int T1 = bt->Ty + 1;
    fert_norms(x, w, c, bt);
    for (int b = 0; b < bt->B; b++) {
        int L = bt->ylen[b];
        const double *nb = w->hnrm + (size_t)b * T1;
        double st = 0;
        for (int i = 0; i < L; i++) st += fert_norm(nb[i]);
        w->cost_step += st / L;
        w->cost_left += fert_norm(nb[L]);
    }
}

void dec_forward(const bk_ctx *x, dec_ws *w, const enc_ws *e, const nmt_config *c, const params *p, const batch *bt)
{
    const backend_ops *bk = x->b;
    int B = bt->B, Tx = bt->Tx, Ty = bt->Ty, m = c->emb, n = c->hid, hd = e->ndir * c->hid;
    size_t TB = (size_t)Ty * B;

    bk->zero_rows(w->Eprev, m, B, m); /* ȳ_0 = 0 */
    bk->gather_rows(w->Eprev + (size_t)B * m, p->Et, bt->dev_y, (int)(TB - B), m);
    if (w->drop_emb) /* one sentence's mask at every position: row stride 0 over rows of B·m */
        bk->mul_rows(w->Eprev + (size_t)B * m, B * m, w->Eprev + (size_t)B * m, B * m, w->drop_emb, 0, Ty - 1, B * m);
    /* teacher forcing: the input-side terms of every step in one product */
    dec_input_terms(x, w->Y, w->Eprev, PW(p, dec_W), p->dec_b, (int)TB, m, 3 * n);
    dec_init_state(x, w->S, e, c, p, B, Tx);
    if (has_attention(c)) dec_project_annotations(x, w->UaH, e->H, p, c, Tx * B, hd);
    if (xi_kind(c) == XI_LOCFER) bk->zero_rows(w->cum, Tx, B, Tx);
    int fd = has_fertdec(c);
    if (fd) {
        dec_coverage_init(x, w->cov, e->ex, e->mask, B, Tx, m);
        dec_input_terms(x, w->YG, w->Eprev, PW(p, fer_Wg), p->fer_bg, (int)TB, m, m);
    }
    dec_src src = {e->H, w->UaH, bt->dev_xlen, B, Tx, hd};
    for (int i = 0; i < Ty; i++) {
        dec_bufs bf;
        dec_rows prev, next;
        step_views(w, c, B, Tx, i, &bf, &prev, &next);
        bk->copy_rows(w->pre, 3 * n, w->Y + (size_t)i * B * 3 * n, 3 * n, B, 3 * n);
        if (fd) bk->copy_rows(bf.g, m, w->YG + (size_t)i * B * m, m, B, m);
        dec_step(x, &bf, c, p, &src, B, NULL, &prev, &next);
    }
    w->cost_step = w->cost_left = 0;
    if (fd) fert_costs(x, w, c, bt);
}

/* Gradients of FertDec's costs w.r.t. each d_i into dDc (0 where a norm is 0), and
 * dL/dd_{Ty+1} into ddc, where the backward loop starts. */
static void fert_cost_grads(const bk_ctx *x, dec_ws *w, const nmt_config *c, const batch *bt, real scale)
{
    const backend_ops *bk = x->b;
    int B = bt->B, m = c->emb, ld = B * m;
    size_t TB = (size_t)bt->Ty * B;
    int T1 = bt->Ty + 1;
    bk->zero_rows(w->dDc, m, (int)(TB + B), m);
    fert_norms(x, w, c, bt);
    /* the scales on the host, sentence b's at hu + 2·T1·b: +u, then -u from T1 on, the last
     * difference's at L; uploaded in one copy */
    for (int b = 0; b < B; b++) {
        int L = bt->ylen[b];
        const double *nb = w->hnrm + (size_t)b * T1;
        real *ub = w->hu + (size_t)b * 2 * T1;
        for (int i = 0; i < L; i++) ub[i] = nb[i] <= 0 ? 0 : (real)(scale * c->fert_step_w / L / fmax(nb[i], FERT_EPS));
        for (int i = 0; i < L; i++) ub[T1 + i] = -ub[i]; /* y - u x = y + (-u) x, bit for bit */
        ub[L] = nb[L] > 0 ? (real)(scale * c->fert_left_w / fmax(nb[L], FERT_EPS)) : 0;
    }
    bk->copy_in(w->u, w->hu, sizeof(real) * B * 2 * T1);
    for (int b = 0; b < B; b++) {
        int L = bt->ylen[b];
        const real *d = w->cov + (size_t)b * m, *ub = w->u + (size_t)b * 2 * T1;
        real *dd = w->dDc + (size_t)b * m;
        /* h(d_{i+1} - d_i) sends +u (d_{i+1} - d_i) to d_{i+1}, then -u (...) to d_i: each row
         * gets its + before its -, as a loop over i would. A zero norm means d_{i+1} = d_i, so
         * u = 0 adds zeros to sums that started at +0 and changes nothing. */
        bk->axpy_diff_rows(dd + ld, ld, ub, d + ld, ld, d, ld, L, m);
        bk->axpy_diff_rows(dd, ld, ub + T1, d + ld, ld, d, ld, L, m);
        const real *dl = d + (size_t)L * ld;
        if (w->hnrm[(size_t)b * T1 + L] > 0 && !FAULT(FAULT_FERTDEC_LEFT))
            bk->axpy_diff_rows(dd + (size_t)L * ld, m, ub + L, dl, m, NULL, 0, 1, m);
    }
    bk->copy_rows(w->ddc, m, w->dDc + TB * m, m, B, m); /* dL/dd_{Ty+1} */
}

/* What reaches α_i directly, for rows starting at o: later steps' ξ (later, or NULL) plus
 * guided alignment's cost (w->ga, or none). LocFer's later must stay the sum sent to earlier α
 * alone, so the two are added into room of their own. */
static const real *guided_dalpha(const bk_ctx *x, dec_ws *w, int B, int Tx, size_t o, const real *later)
{
    if (!w->ga || FAULT(FAULT_GUIDED)) return later;
    const real *gi = w->ga + o * Tx;
    if (!later) return gi;
    x->b->add_rows(w->ga_tmp, Tx, later, Tx, gi, Tx, B, Tx);
    return w->ga_tmp;
}

/* Step i of the backward recurrence: from dh = dL/ds_i (the readout's share plus what step i+1
 * sent back) to the GRU pre-activation gradients dA_i, dQ_i, dc_i's shares, and carry =
 * dL/ds_{i-1}. */
static void step_backward(const bk_ctx *x, dec_ws *w, enc_ws *e, const nmt_config *c, const params *p, const batch *bt, int i)
{
    const backend_ops *bk = x->b;
    int B = bt->B, Tx = bt->Tx, m = c->emb, n = c->hid, na = c->att, cd = ctx_dim(c);
    int hd = e->ndir * n, search = has_attention(c), xk = xi_kind(c), K = xk ? xi_width(c) : 0, fd = has_fertdec(c);
    attn_dims ad = {B, Tx, B, na, hd, hd};
    size_t o = (size_t)i * B;
    bk->add_rows(w->dh, n, w->dS + o * n, n, w->carry, n, B, n);
    bk->zero_rows(w->carry, n, B, n);
    const real *di = fd ? w->cov + o * m : NULL;
    if (fd) { /* d_{i+1} = g_i ∘ d_i and s_i's tanh(V_h d_i) term */
        real *dgp = w->dGP + o * m, *dth = w->dTH + o * n;
        const real *gi = w->G + o * m, *th = w->TH + o * n;
        bk->mul_rows(dgp, m, w->ddc, m, di, m, B, m); /* (dd_{i+1} ∘ d_i) ∘ σ'(g_i) */
        bk->act_grad_rows(BK_SIGMOID, dgp, m, dgp, m, gi, m, B, m);
        bk->mul_rows(w->ddi, m, w->ddc, m, gi, m, B, m);
        bk->act_grad_rows(BK_TANH, dth, n, w->dh, n, th, n, B, n);
        mm(x, 0, 1, B, m, n, dth, n, p->fer_Vh, n, 1, w->ddi, m);
        mm(x, 0, 1, B, m, m, dgp, m, p->fer_Vg, m, 1, w->ddi, m);
        mm(x, 0, 1, B, n, m, dgp, m, p->fer_Ug, m, 1, w->carry, n);   /* g_i read s_{i-1} */
        mm(x, 0, 1, B, cd, m, dgp, m, p->fer_Cg, m, 1, w->dC + o * cd, cd); /* ... and c_i */
    }
    gru_backward(x, w->dA + o * 3 * n, 3 * n, w->carry, w->dh, cache_at(w->cache, o * n), w->S + o * n, n,
                 p->dec_U, p->dec_Uh, NULL, w->drop_h, B, n, w->tmp);
    if (fd) { /* V d_i in the GRU input; then dL/dd_i is complete */
        mm(x, 0, 1, B, m, 3 * n, w->dA + o * 3 * n, 3 * n, p->fer_V, 3 * n, 1, w->ddi, m);
        bk->add_rows(w->ddc, m, w->ddi, m, w->dDc + o * m, m, B, m);
    }
    real *dci = w->dC + o * cd, *dcprev = i ? w->dC + (o - B) * cd : NULL;
    if (!FAULT(FAULT_DEC_CTX_GRU))
        mm(x, 0, 1, B, cd, 3 * n, w->dA + o * 3 * n, 3 * n, p->dec_C, 3 * n, 1, dci, cd);
    if (has_inputfeed(c) && dcprev)
        mm(x, 0, 1, B, cd, 3 * n, w->dA + o * 3 * n, 3 * n, p->dec_F, 3 * n, 1, dcprev, cd);
    if (search) {
        PROF_BEGIN(ta);
        attn_xi xf = {K, p->att_M, xk ? w->XI + o * Tx * K : NULL, w->dxi, w->dM_rows};
        /* dal holds what step i+1's ξ sent back to α_i (zero at the last step) */
        const real *dal = guided_dalpha(x, w, B, Tx, o, xk ? w->dal : NULL);
        attn_backward(x, w->dQ + o * na, w->dUaH, e->dH, w->dv_rows, dci, dal, w->alpha + o * Tx,
                      w->UaH, w->Q + o * na, p->att_v, e->H, bt->dev_xlen, xk ? &xf : NULL, ad, w->tmp);
        if (xk) { /* send ξ_i's gradient back to α_{i-1} (LocFer: to every earlier α, by summing) */
            if (xk == XI_MARKOV || FAULT(FAULT_LOCFER_SUM)) bk->zero_rows(w->dal, Tx, B, Tx);
            if (i) bk->attn_window_backward(w->dal, w->dxi, bt->dev_xlen, B, Tx, c->window);
        }
        mm(x, 0, 1, B, n, na, w->dQ + o * na, na, p->att_W, na, 1, w->carry, n);
        if (has_recatt(c) && dcprev && !FAULT(FAULT_RECATT_PREV))
            mm(x, 0, 1, B, cd, na, w->dQ + o * na, na, p->att_R, na, 1, dcprev, cd);
        PROF_END(PROF_ATT_BWD, ta);
    } else {
        real *dcfix = e->dH + (size_t)(Tx - 1) * B * hd; /* h→_Tx: a whole annotation row, cd = hd */
        bk->add_rows(dcfix, hd, dcfix, hd, dci, cd, B, cd);
    }
}

/* The weight gradients of the per-step products, one product each over all steps. */
static void weight_grads(const bk_ctx *x, dec_ws *w, enc_ws *e, const nmt_config *c, const params *p, params *g, const batch *bt)
{
    int B = bt->B, Tx = bt->Tx, Ty = bt->Ty, m = c->emb, n = c->hid, na = c->att, cd = ctx_dim(c);
    int hd = e->ndir * n, search = has_attention(c), xk = xi_kind(c), K = xk ? xi_width(c) : 0, fd = has_fertdec(c);
    size_t TB = (size_t)Ty * B;
    mm(x, 1, 0, m, 3 * n, (int)TB, w->Eprev, m, w->dA, 3 * n, 1, g->dec_W, 3 * n);
    colsum_add(x, g->dec_b, w->dA, (int)TB, 3 * n, 3 * n);
    mm(x, 0, 1, (int)TB, m, 3 * n, w->dA, 3 * n, p->dec_W, 3 * n, 1, w->dEprev, m);
    mm(x, 1, 0, cd, 3 * n, (int)TB, w->C, cd, w->dA, 3 * n, 1, g->dec_C, 3 * n);
    const real *sp = w->S; /* the states dec_U read: s_{i-1}, or s_{i-1}∘m formed in dS, read by now */
    if (w->drop_h) {
        gru_drop_states(x, w->dS, n, w->S, n, w->drop_h, Ty, B, n);
        sp = w->dS;
    }
    mm(x, 1, 0, n, 2 * n, (int)TB, sp, n, w->dA, 3 * n, 1, g->dec_U, 2 * n);
    mm(x, 1, 0, n, n, (int)TB, w->cache.rh, n, w->dA + 2 * n, 3 * n, 1, g->dec_Uh, n);
    if (search) {
        mm(x, 1, 0, n, na, (int)TB, w->S, n, w->dQ, na, 1, g->att_W, na);
        colsum_add(x, g->att_v, w->dv_rows, B, na, na);
        mm(x, 1, 0, hd, na, Tx * B, e->H, hd, w->dUaH, na, 1, g->att_U, na);
        colsum_add(x, g->att_b, w->dUaH, Tx * B, na, na);
        mm(x, 0, 1, Tx * B, hd, na, w->dUaH, na, p->att_U, na, 1, e->dH, hd);
        if (has_recatt(c) && Ty > 1) /* step i's query read c_{i-1} */
            mm(x, 1, 0, cd, na, (int)(TB - B), w->C, cd, w->dQ + (size_t)B * na, na, 1, g->att_R, na);
        if (xk) colsum_add(x, g->att_M, w->dM_rows, B, K * na, K * na);
    }
    if (has_inputfeed(c) && Ty > 1)
        mm(x, 1, 0, cd, 3 * n, (int)(TB - B), w->C, cd, w->dA + (size_t)B * 3 * n, 3 * n, 1, g->dec_F, 3 * n);
    if (fd) {
        mm(x, 1, 0, m, 3 * n, (int)TB, w->cov, m, w->dA, 3 * n, 1, g->fer_V, 3 * n);
        mm(x, 1, 0, m, n, (int)TB, w->cov, m, w->dTH, n, 1, g->fer_Vh, n);
        mm(x, 1, 0, m, m, (int)TB, w->Eprev, m, w->dGP, m, 1, g->fer_Wg, m);
        mm(x, 1, 0, n, m, (int)TB, w->S, n, w->dGP, m, 1, g->fer_Ug, m);
        mm(x, 1, 0, cd, m, (int)TB, w->C, cd, w->dGP, m, 1, g->fer_Cg, m);
        mm(x, 1, 0, m, m, (int)TB, w->cov, m, w->dGP, m, 1, g->fer_Vg, m);
        colsum_add(x, g->fer_bg, w->dGP, (int)TB, m, m);
        mm(x, 0, 1, (int)TB, m, m, w->dGP, m, p->fer_Wg, m, 1, w->dEprev, m);
        /* d_1 = Σ_j x̄_j: its gradient goes to every real source word's embedding, in the order
         * of j then b (through the source embeddings' dropout mask, the same at every j) */
        if (e->drop_emb) x->b->mul_rows(w->ddc, m, w->ddc, m, e->drop_emb, m, B, m);
        for (int j = 0; j < Tx; j++)
            x->b->scatter_add_rows(g->Es, w->ddc, bt->dev_x + (size_t)j * B, e->mask + (size_t)j * B, B, m);
    }
}

void dec_backward(const bk_ctx *x, dec_ws *w, enc_ws *e, const nmt_config *c, const params *p, params *g, const batch *bt, real scale)
{
    const backend_ops *bk = x->b;
    int B = bt->B, Tx = bt->Tx, Ty = bt->Ty, m = c->emb, n = c->hid, na = c->att;
    int hd = e->ndir * n, xk = xi_kind(c), K = xk ? xi_width(c) : 0;
    size_t TB = (size_t)Ty * B;
    if (has_attention(c)) {
        bk->zero_rows(w->dUaH, na, Tx * B, na);
        bk->zero_rows(w->dv_rows, na, B, na);
    }
    if (xk) {
        bk->zero_rows(w->dal, Tx, B, Tx);
        bk->zero_rows(w->dM_rows, K * na, B, K * na);
    }
    if (has_fertdec(c)) fert_cost_grads(x, w, c, bt, scale);
    bk->zero_rows(w->carry, n, B, n);
    for (int i = Ty - 1; i >= 0; i--) step_backward(x, w, e, c, p, bt, i);
    /* carry now holds dL/ds_0. */
    weight_grads(x, w, e, c, p, g, bt);
    /* s_0 = tanh(src·W_s + b_s) */
    bk->act_grad_rows(BK_TANH, w->carry, n, w->carry, n, w->S, n, B, n);
    size_t src = s0_source(c, B, Tx, hd);
    mm(x, 1, 0, n, n, B, e->H + src, hd, w->carry, n, 1, g->init_W, n);
    colsum_add(x, g->init_b, w->carry, B, n, n);
    mm(x, 0, 1, B, n, n, w->carry, n, p->init_W, n, 1, e->dH + src, hd);
    /* ȳ_{i-1} = Ey[y_{i-1}] (∘ its dropout mask) for i > 1; padding rows carry zero gradient */
    if (w->drop_emb)
        bk->mul_rows(w->dEprev + (size_t)B * m, B * m, w->dEprev + (size_t)B * m, B * m, w->drop_emb, 0, Ty - 1, B * m);
    bk->scatter_add_rows(g->Et, w->dEprev + (size_t)B * m, bt->dev_y, NULL, (int)(TB - B), m);
}
