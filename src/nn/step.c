/* step.c: the decoder step of step.h, shared by training and decoding. Every product runs on
 * all H rows at once; the variants add their terms at the points MODEL.md section 5 names.
 * Products and element-wise work are backend kernels; this file only orders them. A decoder's
 * products by the model's weights run in their own type (params.tw, backend.h mmw). */
#include "backend/backend.h"
#include "base/prof.h"
#include "nn/attention.h"
#include "nn/decoder.h"
#include "nn/step.h"

void dec_input_terms(const bk_ctx *x, real *y, const real *E, bk_weight W, const real *b, int rows, int m, int cols)
{
    mmw(x, rows, cols, m, E, m, W, 0, y, cols);
    x->b->act_rows(BK_IDENTITY, y, cols, y, cols, b, rows, cols);
}

void dec_project_annotations(const bk_ctx *x, real *UaH, const real *H, const params *p, const nmt_config *c, int rows, int hd)
{
    dec_input_terms(x, UaH, H, PW(p, att_U), p->att_b, rows, hd, c->att);
}

void dec_coverage_init(const bk_ctx *x, real *d, const real *ex, const unsigned char *mask, int S, int Tx, int m)
{
    const backend_ops *bk = x->b;
    bk->zero_rows(d, m, S, m);
    /* position by position, so that each d sums its words in the order of j */
    for (int j = 0; j < Tx; j++)
        bk->scatter_add_rows(d, ex + (size_t)j * S * m, NULL, mask + (size_t)j * S, S, m);
}

/* q_i, then α_i and c_i; RNNencdec copies its fixed context h→_Tx of each row's sentence. */
static void step_attention(const bk_ctx *x, const dec_bufs *b, const nmt_config *c, const params *p, const dec_src *src, int H,
                           const int *src_of, const dec_rows *prev)
{
    const backend_ops *bk = x->b;
    int n = c->hid, na = c->att, cd = ctx_dim(c), Tx = src->Tx, xk = xi_kind(c);
    if (!has_attention(c)) { /* h→_Tx is a whole annotation row (cd = hd): gathered by sentence */
        const real *cfix = src->H + (size_t)(Tx - 1) * src->S * src->hd;
        if (src_of) bk->gather_rows(b->ctx, cfix, src_of, H, cd);
        else bk->copy_rows(b->ctx, cd, cfix, src->hd, H, cd);
        if (b->alpha) bk->zero_rows(b->alpha, Tx, H, Tx); /* decoding reports no attention */
        return;
    }
    PROF_BEGIN(t0);
    mmw(x, H, na, n, prev->s, prev->ld_s, PW(p, att_W), 0, b->q, na);
    if (has_recatt(c) && prev->c) /* RecAtt: + R_a c_{i-1} (c_0 = 0) */
        mmw(x, H, na, cd, prev->c, prev->ld_c, PW(p, att_R), 1, b->q, na);
    attn_xi xf, *xp = NULL;
    if (xk) { /* ξ from α_{i-1} (Markov) or Σ_{i'<i} α_i' (LocFer); zero at the first step */
        int K = xi_width(c);
        const int *len = src_of ? b->rowlen : src->xlen; /* each row's source length */
        if (prev->a) bk->attn_window(b->xi, prev->a, prev->ld_a, len, H, Tx, c->window);
        else bk->zero_rows(b->xi, Tx * K, H, Tx * K);
        xf = (attn_xi){K, p->att_M, b->xi, NULL, NULL};
        xp = &xf;
    }
    attn_dims ad = {H, Tx, src->S, na, src->hd, src->hd};
    attn_forward(x, b->alpha, b->ctx, src->UaH, b->q, p->att_v, src->H, src->xlen, src_of, xp, ad);
    PROF_END(PROF_ATT_FWD, t0);
}

/* FertDec after the GRU: s_i += tanh(V_h d_i); g_i = σ(ȳ·W_g + b_g + U_g s_{i-1} + C_g c_i +
 * V_g d_i); d_{i+1} = g_i ∘ d_i. */
static void step_coverage(const bk_ctx *x, const dec_bufs *b, const nmt_config *c, const params *p, int H, const dec_rows *prev,
                          const dec_rows *next)
{
    const backend_ops *bk = x->b;
    int n = c->hid, m = c->emb, cd = ctx_dim(c);
    mmw(x, H, n, m, prev->d, prev->ld_d, PW(p, fer_Vh), 0, b->th, n);
    bk->act_rows(BK_TANH, b->th, n, b->th, n, NULL, H, n);
    bk->add_rows(next->s, next->ld_s, next->s, next->ld_s, b->th, n, H, n);
    mmw(x, H, m, n, prev->s, prev->ld_s, PW(p, fer_Ug), 1, b->g, m);
    mmw(x, H, m, cd, b->ctx, cd, PW(p, fer_Cg), 1, b->g, m);
    mmw(x, H, m, m, prev->d, prev->ld_d, PW(p, fer_Vg), 1, b->g, m);
    bk->act_rows(BK_SIGMOID, b->g, m, b->g, m, NULL, H, m);
    bk->mul_rows(next->d, next->ld_d, b->g, m, prev->d, prev->ld_d, H, m);
}

/* What the next step reads besides s_i: c_i, and α_i (Markov) or the running Σα (LocFer). */
static void step_carry(const bk_ctx *x, const dec_bufs *b, const nmt_config *c, int H, int Tx, const dec_rows *prev, const dec_rows *next)
{
    const backend_ops *bk = x->b;
    int cd = ctx_dim(c), xk = xi_kind(c);
    if (next->c && next->c != b->ctx) bk->copy_rows(next->c, next->ld_c, b->ctx, cd, H, cd);
    if (xk == XI_MARKOV && next->a != b->alpha) bk->copy_rows(next->a, next->ld_a, b->alpha, Tx, H, Tx);
    if (xk == XI_LOCFER) { /* Σα so far; with no previous sum, α itself (a softmax is never -0, so 0 + α = α) */
        if (prev->a) bk->add_rows(next->a, next->ld_a, prev->a, prev->ld_a, b->alpha, Tx, H, Tx);
        else bk->copy_rows(next->a, next->ld_a, b->alpha, Tx, H, Tx);
    }
}

void dec_step(const bk_ctx *x, const dec_bufs *b, const nmt_config *c, const params *p, const dec_src *src, int H, const int *src_of,
              const dec_rows *prev, const dec_rows *next)
{
    int n = c->hid, m = c->emb, cd = ctx_dim(c);
    step_attention(x, b, c, p, src, H, src_of, prev);
    mmw(x, H, 3 * n, cd, b->ctx, cd, PW(p, dec_C), 1, b->pre, 3 * n);
    if (has_inputfeed(c) && prev->c) /* InputFeed: + F c_{i-1} */
        mmw(x, H, 3 * n, cd, prev->c, prev->ld_c, PW(p, dec_F), 1, b->pre, 3 * n);
    if (has_fertdec(c)) /* FertDec: + V d_i in every gate and the candidate */
        mmw(x, H, 3 * n, m, prev->d, prev->ld_d, PW(p, fer_V), 1, b->pre, 3 * n);
    gru_forward(x, next->s, next->ld_s, b->cache, b->pre, 3 * n, prev->s, prev->ld_s, PW(p, dec_U), PW(p, dec_Uh), NULL, b->drop, H,
                n, b->tmp);
    if (has_fertdec(c)) step_coverage(x, b, c, p, H, prev, next);
    step_carry(x, b, c, H, src->Tx, prev, next);
}
