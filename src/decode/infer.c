/* infer.c: translation-time forward pass (MODEL.md sections 1-3): the same equations as
 * encoder.c, decoder.c and readout.c, for rows that each follow their own hypothesis. */
#include <stdlib.h>
#include <string.h>

#include "nn/attention.h"
#include "backend/cpu/blas.h"
#include "nn/decoder.h"
#include "base/err.h"
#include "nn/gru.h"
#include "decode/infer.h"
#include "nn/readout.h"

static size_t layout(void *ws, char *base, const nmt_config *c, const int *d)
{
    infer_ws *w = ws;
    int S = d[0], Tx = d[1], H = d[2];
    arena a = {base, 0};
    size_t n = c->hid, na = c->att, cd = ctx_dim(c), m = c->emb, l = c->maxout;
    enc_layout(&w->enc, &a, c, S, Tx);
    w->enc.step_cache = 1; /* decoding never runs the encoder backward */
    w->UaH = arena_take(&a, sizeof(real) * Tx * S * na);
    w->s0 = arena_take(&a, sizeof(real) * S * n);
    w->Q = arena_take(&a, sizeof(real) * H * na);
    w->alpha = arena_take(&a, sizeof(real) * H * Tx);
    w->ctx = arena_take(&a, sizeof(real) * H * cd);
    w->pre = arena_take(&a, sizeof(real) * H * 3 * n);
    w->E = arena_take(&a, sizeof(real) * H * m);
    w->tt = arena_take(&a, sizeof(real) * H * 2 * l);
    w->t = arena_take(&a, sizeof(real) * H * l);
    w->logp = arena_take(&a, sizeof(real) * H * c->tgt_vocab);
    w->cache.z = arena_take(&a, sizeof(real) * H * n);
    w->cache.r = arena_take(&a, sizeof(real) * H * n);
    w->cache.hc = arena_take(&a, sizeof(real) * H * n);
    w->cache.rh = arena_take(&a, sizeof(real) * H * n);
    w->tmp = arena_take(&a, sizeof(real) * H * 3 * n);
    w->xi = xi_kind(c) ? arena_take(&a, sizeof(real) * H * Tx * xi_width(c)) : NULL;
    w->rowlen = arena_take(&a, sizeof(int) * H);
    w->d0 = has_fertdec(c) ? arena_take(&a, sizeof(real) * S * m) : NULL;
    w->g = has_fertdec(c) ? arena_take(&a, sizeof(real) * H * m) : NULL;
    w->th = has_fertdec(c) ? arena_take(&a, sizeof(real) * H * n) : NULL;
    return a.used;
}

int infer_reserve(infer_ws *w, const nmt_config *c, int S, int Tx, int H, nmt_err *err)
{
    int want[3] = {S, Tx, H};
    return ws_reserve(&w->blk, want, layout, w, c, "decoding", err);
}

void infer_free(infer_ws *w)
{
    if (!w) return;
    ws_block_free(&w->blk);
    memset(w, 0, sizeof *w);
}

void infer_encode(infer_ws *w, const nmt_model *m, const batch *src)
{
    const nmt_config *c = &m->cfg;
    const params *p = &m->p;
    int S = src->B, Tx = src->Tx, na = c->att, hd = w->enc.D * c->hid;
    enc_forward(&w->enc, c, p, src);
    dec_init_state(w->s0, &w->enc, c, p, S, Tx);
    if (has_fertdec(c)) { /* d_1 = Σ_j x̄_j over the real positions */
        int me = c->emb;
        memset(w->d0, 0, sizeof(real) * S * me);
        for (int j = 0; j < Tx; j++)
            for (int b = 0; b < S; b++)
                if (j < src->xlen[b])
                    for (int k = 0; k < me; k++) w->d0[(size_t)b * me + k] += w->enc.ex[((size_t)j * S + b) * me + k];
    }
    if (c->arch != NMT_ARCH_RNNENC) {
        mm(0, 0, Tx * S, na, hd, w->enc.H, hd, p->att_U, na, 0, w->UaH, na);
        for (size_t i = 0; i < (size_t)Tx * S; i++)
            for (int k = 0; k < na; k++) w->UaH[i * na + k] += p->att_b[k];
    }
}

int infer_state_dim(const nmt_config *c, int Tx)
{
    return c->hid + (needs_prev_ctx(c) ? ctx_dim(c) : 0) + (xi_kind(c) ? Tx : 0) + (has_fertdec(c) ? c->emb : 0);
}

/* offset of d_i in a state row: it comes last */
static int d_offset(const nmt_config *c, int Tx) { return infer_state_dim(c, Tx) - c->emb; }

void infer_init_states(const infer_ws *w, const nmt_config *c, real *state, int S, int Tx)
{
    int D = infer_state_dim(c, Tx);
    memset(state, 0, sizeof(real) * S * D);
    for (int b = 0; b < S; b++) {
        memcpy(state + (size_t)b * D, w->s0 + (size_t)b * c->hid, sizeof(real) * c->hid);
        if (has_fertdec(c)) memcpy(state + (size_t)b * D + d_offset(c, Tx), w->d0 + (size_t)b * c->emb, sizeof(real) * c->emb);
    }
}

void infer_step(infer_ws *w, const nmt_model *m, const batch *src, int H, const int *src_of, const int *yprev,
                const real *st_prev, real *st_new)
{
    const nmt_config *c = &m->cfg;
    const params *p = &m->p;
    int S = src->B, Tx = src->Tx, n = c->hid, na = c->att, cd = ctx_dim(c), me = c->emb, hd = w->enc.D * n;
    int D = infer_state_dim(c, Tx), xk = xi_kind(c), K = xk ? xi_width(c) : 0;
    int ocp = n, oal = n + (needs_prev_ctx(c) ? cd : 0); /* offsets of c_{i-1} and α / Σα in a row */
    const real *s_prev = st_prev, *cprev = st_prev + ocp;
    real *s_new = st_new;
    for (int h = 0; h < H; h++) {
        real *e = w->E + (size_t)h * me;
        if (yprev[h] < 0) memset(e, 0, sizeof(real) * me);
        else memcpy(e, p->Et + (size_t)yprev[h] * me, sizeof(real) * me);
    }
    if (c->arch != NMT_ARCH_RNNENC) {
        attn_dims ad = {H, Tx, S, na, hd, hd};
        mm(0, 0, H, na, n, s_prev, D, p->att_W, na, 0, w->Q, na);
        if (has_recatt(c)) mm(0, 0, H, na, cd, cprev, D, p->att_R, na, 1, w->Q, na);
        attn_xi x, *xp = NULL;
        if (xk) {
            for (int h = 0; h < H; h++) w->rowlen[h] = src->xlen[src_of[h]];
            /* the rows' α_{i-1} (or Σα) sit at column oal of each state row, D apart */
            memset(w->xi, 0, sizeof(real) * H * Tx * K);
            for (int h = 0; h < H; h++)
                for (int j = 0; j < w->rowlen[h]; j++)
                    for (int o = 0; o < K; o++) {
                        int q = j + o - c->window;
                        if (q >= 0 && q < w->rowlen[h]) w->xi[((size_t)h * Tx + j) * K + o] = st_prev[(size_t)h * D + oal + q];
                    }
            x = (attn_xi){K, p->att_M, w->xi, NULL, NULL};
            xp = &x;
        }
        attn_forward(w->alpha, w->ctx, w->UaH, w->Q, p->att_v, w->enc.H, src->xlen, src_of, xp, ad);
    } else {
        memset(w->alpha, 0, sizeof(real) * H * Tx);
        const real *cfix = w->enc.H + (size_t)(Tx - 1) * S * hd;
        for (int h = 0; h < H; h++) memcpy(w->ctx + (size_t)h * cd, cfix + (size_t)src_of[h] * hd, sizeof(real) * cd);
    }
    mm(0, 0, H, 3 * n, me, w->E, me, p->dec_W, 3 * n, 0, w->pre, 3 * n);
    for (int h = 0; h < H; h++)
        for (int k = 0; k < 3 * n; k++) w->pre[(size_t)h * 3 * n + k] += p->dec_b[k];
    mm(0, 0, H, 3 * n, cd, w->ctx, cd, p->dec_C, 3 * n, 1, w->pre, 3 * n);
    if (has_inputfeed(c)) mm(0, 0, H, 3 * n, cd, cprev, D, p->dec_F, 3 * n, 1, w->pre, 3 * n);
    int fd = has_fertdec(c), od = fd ? d_offset(c, Tx) : 0;
    if (fd) mm(0, 0, H, 3 * n, me, st_prev + od, D, p->fer_V, 3 * n, 1, w->pre, 3 * n);
    gru_forward(s_new, D, w->cache, w->pre, 3 * n, s_prev, D, p->dec_U, p->dec_Uh, NULL, H, n, w->tmp);
    if (fd) { /* s_i += tanh(V_h d_i); d_{i+1} = σ(W_g ȳ + U_g s_{i-1} + C_g c_i + V_g d_i + b_g) ∘ d_i */
        mm(0, 0, H, n, me, st_prev + od, D, p->fer_Vh, n, 0, w->th, n);
        mm(0, 0, H, me, me, w->E, me, p->fer_Wg, me, 0, w->g, me);
        mm(0, 0, H, me, n, s_prev, D, p->fer_Ug, me, 1, w->g, me);
        mm(0, 0, H, me, cd, w->ctx, cd, p->fer_Cg, me, 1, w->g, me);
        mm(0, 0, H, me, me, st_prev + od, D, p->fer_Vg, me, 1, w->g, me);
        for (int h = 0; h < H; h++) {
            real *sn = s_new + (size_t)h * D, *dn = st_new + (size_t)h * D + od;
            const real *dp = st_prev + (size_t)h * D + od;
            for (int k = 0; k < n; k++) sn[k] += rtanh(w->th[(size_t)h * n + k]);
            for (int k = 0; k < me; k++) dn[k] = rsigmoid(w->g[(size_t)h * me + k] + p->fer_bg[k]) * dp[k];
        }
    }
    /* the rest of the new state: c_i, and α_i (Markov) or Σα up to i (LocFer) */
    for (int h = 0; h < H; h++) {
        real *row = st_new + (size_t)h * D;
        if (needs_prev_ctx(c)) memcpy(row + ocp, w->ctx + (size_t)h * cd, sizeof(real) * cd);
        if (xk == XI_MARKOV) memcpy(row + oal, w->alpha + (size_t)h * Tx, sizeof(real) * Tx);
        if (xk == XI_LOCFER)
            for (int j = 0; j < Tx; j++) row[oal + j] = st_prev[(size_t)h * D + oal + j] + w->alpha[(size_t)h * Tx + j];
    }
    /* s_new has stride D: gather it for the readout's product */
    real *s_dense = w->tmp;
    for (int h = 0; h < H; h++) memcpy(s_dense + (size_t)h * n, s_new + (size_t)h * D, sizeof(real) * n);
    out_step(w->logp, w->tt, w->t, s_dense, w->E, w->ctx, c, p, H);
}
