/* model.c: configuration checks, the parameter table of each architecture and Appendix-B
 * initialisation (MODEL.md sections 1-4). */
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"

#include "base/err.h"
#include "nn/model.h"

nmt_config nmt_config_default(void)
{
    nmt_config c = {NMT_ARCH_RNNSEARCH, 30002, 30002, 620, 1000, 1000, 500, 2, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    return c;
}

nmt_config nmt_config_transformer(void)
{
    nmt_config c = {NMT_ARCH_TRANSFORMER, 30002, 30002, 512, 512, 512, 512, 0, 1.0, 1.0, 1,
                    6, 6, 8, 2048, NMT_ACT_RELU, 0, 0, 1e-6, 0, 0, 0, 0};
    return c;
}

/* The Transformer's sizes; hid, att and maxout must equal emb (they are not read). */
static int transformer_check(const nmt_config *c, nmt_err *err)
{
    if (c->emb < 2 || c->emb > 65536) return nmt_fail(err, NMT_ERR_ARG, "model size %d out of range [2, 65536]", c->emb);
    if (c->enc_depth < 1 || c->enc_depth > TF_MAX_DEPTH || c->dec_depth < 1 || c->dec_depth > TF_MAX_DEPTH)
        return nmt_fail(err, NMT_ERR_ARG, "depths %d and %d: each must be in [1, %d]", c->enc_depth, c->dec_depth, TF_MAX_DEPTH);
    if (c->heads < 1 || c->emb % c->heads)
        return nmt_fail(err, NMT_ERR_ARG, "the model size %d is not divisible by %d heads", c->emb, c->heads);
    if (c->ffn < 1 || c->ffn > 262144) return nmt_fail(err, NMT_ERR_ARG, "feed-forward size %d out of range [1, 262144]", c->ffn);
    if (c->ffn_act < NMT_ACT_RELU || c->ffn_act > NMT_ACT_SWISH) return nmt_fail(err, NMT_ERR_ARG, "unknown activation %d", c->ffn_act);
    if (c->post_norm != 0 && c->post_norm != 1) return nmt_fail(err, NMT_ERR_ARG, "post_norm %d: must be 0 or 1", c->post_norm);
    if (c->max_pos < 0 || c->max_pos > 65536) return nmt_fail(err, NMT_ERR_ARG, "learned positions %d out of range [0, 65536]", c->max_pos);
    if (!(c->ln_eps > 0 && c->ln_eps <= 1)) return nmt_fail(err, NMT_ERR_ARG, "layer norm epsilon %g out of range (0, 1]", c->ln_eps);
    if (c->tied_emb < 0 || c->tied_emb > 2) return nmt_fail(err, NMT_ERR_ARG, "tied_emb %d: must be 0, 1 or 2", c->tied_emb);
    if (c->tied_emb == 2 && c->src_vocab != c->tgt_vocab)
        return nmt_fail(err, NMT_ERR_ARG, "tying all embeddings needs one joint vocabulary: the source has %d entries, the target %d",
                        c->src_vocab, c->tgt_vocab);
    if (c->align_layer < 0 || c->align_layer > c->dec_depth || c->align_head < 0 || c->align_head > c->heads)
        return nmt_fail(err, NMT_ERR_ARG, "alignment layer %d and head %d: must be in [0, %d] and [0, %d] (0: the last layer, the "
                        "mean of the heads)", c->align_layer, c->align_head, c->dec_depth, c->heads);
    if (c->marian_kv != 0 && c->marian_kv != 1) return nmt_fail(err, NMT_ERR_ARG, "marian_kv %d: must be 0 or 1", c->marian_kv);
    if (c->ssru != 0 && c->ssru != 1) return nmt_fail(err, NMT_ERR_ARG, "ssru %d: must be 0 or 1", c->ssru);
    if (c->hid != c->emb || c->att != c->emb || c->maxout != c->emb)
        return nmt_fail(err, NMT_ERR_ARG, "a Transformer's hid, att and maxout are its model size %d (got %d, %d, %d)", c->emb, c->hid,
                        c->att, c->maxout);
    return NMT_OK;
}

/* The Transformer's sizes are 0 in a recurrent model's config. */
static int recurrent_extra_check(const nmt_config *c, nmt_err *err)
{
    if (c->enc_depth || c->dec_depth || c->heads || c->ffn || c->ffn_act || c->post_norm || c->max_pos || c->align_layer ||
        c->align_head || c->marian_kv || c->ssru)
        return nmt_fail(err, NMT_ERR_ARG, "depths, heads, feed-forward size, activation, norm placement, learned positions and "
                        "alignment sources "
                        "belong to the Transformer, not to %s", nmt_arch_name(c->arch));
    if (c->tied_emb == 2) return nmt_fail(err, NMT_ERR_ARG, "tying all embeddings (source too) belongs to the Transformer");
    return NMT_OK;
}

int nmt_config_check(const nmt_config *c, nmt_err *err)
{
    if (!c) return nmt_fail(err, NMT_ERR_ARG, "nmt_config_check: c is NULL");
    if (!variant_get(c->arch)) return nmt_fail(err, NMT_ERR_ARG, "unknown architecture %d", c->arch);
    /* 3 ids at least: EOS, UNK and one word. The upper bounds keep every product of sizes
     * far inside size_t and int row strides. */
    if (c->src_vocab < 3 || c->src_vocab > 4000000) return nmt_fail(err, NMT_ERR_ARG, "source vocabulary %d out of range [3, 4000000]", c->src_vocab);
    if (c->tgt_vocab < 3 || c->tgt_vocab > 4000000) return nmt_fail(err, NMT_ERR_ARG, "target vocabulary %d out of range [3, 4000000]", c->tgt_vocab);
    if (is_transformer(c)) return transformer_check(c, err);
    int rc = recurrent_extra_check(c, err);
    if (rc) return rc;
    if (c->emb < 1 || c->emb > 65536) return nmt_fail(err, NMT_ERR_ARG, "embedding size %d out of range [1, 65536]", c->emb);
    if (c->hid < 1 || c->hid > 65536) return nmt_fail(err, NMT_ERR_ARG, "hidden size %d out of range [1, 65536]", c->hid);
    if (c->att < 1 || c->att > 65536) return nmt_fail(err, NMT_ERR_ARG, "attention size %d out of range [1, 65536]", c->att);
    if (c->maxout < 1 || c->maxout > 65536) return nmt_fail(err, NMT_ERR_ARG, "maxout size %d out of range [1, 65536]", c->maxout);
    if (c->window < 0 || c->window > 100) return nmt_fail(err, NMT_ERR_ARG, "window %d out of range [0, 100]", c->window);
    if (!(c->fert_step_w >= 0 && c->fert_step_w <= 1e6) || !(c->fert_left_w >= 0 && c->fert_left_w <= 1e6))
        return nmt_fail(err, NMT_ERR_ARG, "FertDec cost weights must be in [0, 1e6]");
    if (c->tied_emb != 0 && c->tied_emb != 1) return nmt_fail(err, NMT_ERR_ARG, "tied_emb %d: must be 0 or 1", c->tied_emb);
    if (c->tied_emb && c->emb != c->maxout) /* W_o is [l, Ky], Ey^T is [m, Ky] */
        return nmt_fail(err, NMT_ERR_ARG, "tied embeddings need the embedding size equal to the maxout size (the softmax "
                        "layer's input): emb %d, maxout %d; untie them (tied_emb 0, --no-tied-embeddings) or make them equal", c->emb, c->maxout);
    return NMT_OK;
}

static void add(param_table *pt, const char *name, int rows, int cols, int ndim, int init, size_t slot)
{
    NMT_ASSERT(pt->n < MAX_TENSORS);
    tensor_info *t = &pt->t[pt->n++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->rows = rows;
    t->cols = cols;
    t->ndim = ndim;
    t->init = init;
    t->offset = pt->total;
    t->slot = slot;
    pt->total += (size_t)rows * cols;
}

#define SLOT(f) offsetof(params, f)
#define MAT(name, r, c, init, f) add(pt, name, r, c, 2, init, SLOT(f))
#define VEC(name, c, f) add(pt, name, 1, c, 1, INIT_ZERO, SLOT(f))

/* one Transformer layer's tensors (enum tf_tensor order), named as docs/MODEL-MAP.md lists them */
static void tf_layer_table(param_table *pt, const nmt_config *c, int side, int l)
{
    static const char *const part[TF_NT] = {"self_Wqkv", "self_bqkv", "self_Wo", "self_bo", "self_ln_scale", "self_ln_bias",
                                            "ctx_Wq", "ctx_bq", "ctx_Wkv", "ctx_bkv", "ctx_Wo", "ctx_bo", "ctx_ln_scale",
                                            "ctx_ln_bias", "ffn_W1", "ffn_b1", "ffn_W2", "ffn_b2", "ffn_ln_scale", "ffn_ln_bias"};
    int d = c->emb, f = c->ffn;
    /* rows, cols of each; a vector has rows 0 here */
    const int shape[TF_NT][2] = {{d, 3 * d}, {0, 3 * d}, {d, d}, {0, d}, {0, d}, {0, d},
                                 {d, d}, {0, d}, {d, 2 * d}, {0, 2 * d}, {d, d}, {0, d}, {0, d}, {0, d},
                                 {d, f}, {0, f}, {f, d}, {0, d}, {0, d}, {0, d}};
    /* an SSRU decoder (nmt_config.ssru): its tensors in the self-attention's slots, W|W_f fused
     * as Q|K|V are, no output projection */
    static const char *const ssru_part[TF_SELF_LNB + 1] = {"ssru_W", "ssru_bf", NULL, NULL, "ssru_ln_scale", "ssru_ln_bias"};
    int ssru = side == TF_DEC && c->ssru;
    for (int k = 0; k < TF_NT; k++) {
        if (side == TF_ENC && k >= TF_CTX_WQ && k <= TF_CTX_LNB) continue;
        if (ssru && (k == TF_SELF_WO || k == TF_SELF_BO)) continue;
        char name[40];
        snprintf(name, sizeof name, "%s_l%d_%s", side == TF_ENC ? "enc" : "dec", l + 1, ssru && k <= TF_SELF_LNB ? ssru_part[k] : part[k]);
        size_t slot = tf_slot(side, l, k);
        int lns = k == TF_SELF_LNS || k == TF_CTX_LNS || k == TF_FFN_LNS;
        int cols = ssru && k == TF_SELF_WQKV ? 2 * d : ssru && k == TF_SELF_BQKV ? d : shape[k][1];
        if (shape[k][0]) add(pt, name, shape[k][0], cols, 2, INIT_GLOROT, slot);
        else add(pt, name, 1, cols, 1, lns ? INIT_ONE : INIT_ZERO, slot);
    }
}

static void tf_param_table_build(param_table *pt, const nmt_config *c)
{
    int d = c->emb;
    if (c->tied_emb < 2) MAT("Es", c->src_vocab, d, INIT_NORMAL_EMB, Es);
    MAT("Et", c->tgt_vocab, d, INIT_NORMAL_EMB, Et);
    if (c->max_pos) {
        MAT("enc_Wpos", c->max_pos, d, INIT_NORMAL_EMB, tf_pos[TF_ENC]);
        MAT("dec_Wpos", c->max_pos, d, INIT_NORMAL_EMB, tf_pos[TF_DEC]);
    }
    for (int l = 0; l < c->enc_depth; l++) tf_layer_table(pt, c, TF_ENC, l);
    if (!c->post_norm) {
        add(pt, "enc_top_ln_scale", 1, d, 1, INIT_ONE, SLOT(tf_top[TF_ENC][0]));
        VEC("enc_top_ln_bias", d, tf_top[TF_ENC][1]);
    }
    for (int l = 0; l < c->dec_depth; l++) tf_layer_table(pt, c, TF_DEC, l);
    if (!c->post_norm) {
        add(pt, "dec_top_ln_scale", 1, d, 1, INIT_ONE, SLOT(tf_top[TF_DEC][0]));
        VEC("dec_top_ln_bias", d, tf_top[TF_DEC][1]);
    }
    if (!c->tied_emb) MAT("out_W", d, c->tgt_vocab, INIT_GLOROT, out_W);
    VEC("out_bias", c->tgt_vocab, out_bias);
}

void param_table_build(param_table *pt, const nmt_config *c)
{
    if (is_transformer(c)) {
        memset(pt, 0, sizeof *pt);
        tf_param_table_build(pt, c);
        return;
    }
    int m = c->emb, n = c->hid, na = c->att, l = c->maxout, cd = ctx_dim(c);
    int search = has_attention(c);
    memset(pt, 0, sizeof *pt);
    /* Order = the reference's order, so that a model file lists tensors as it does. */
    MAT("Es", c->src_vocab, m, INIT_NORMAL_001, Es);
    MAT("enc_f_W", m, 3 * n, INIT_NORMAL_001, enc_W[0]);
    VEC("enc_f_b", 3 * n, enc_b[0]);
    MAT("enc_f_U", n, 2 * n, INIT_ORTHO_BLOCKS, enc_U[0]);
    MAT("enc_f_Uh", n, n, INIT_ORTHO_BLOCKS, enc_Uh[0]);
    if (search) {
        MAT("enc_b_W", m, 3 * n, INIT_NORMAL_001, enc_W[1]);
        VEC("enc_b_b", 3 * n, enc_b[1]);
        MAT("enc_b_U", n, 2 * n, INIT_ORTHO_BLOCKS, enc_U[1]);
        MAT("enc_b_Uh", n, n, INIT_ORTHO_BLOCKS, enc_Uh[1]);
    }
    MAT("init_W", n, n, INIT_NORMAL_001, init_W);
    VEC("init_b", n, init_b);
    MAT("Et", c->tgt_vocab, m, INIT_NORMAL_001, Et);
    MAT("dec_W", m, 3 * n, INIT_NORMAL_001, dec_W);
    VEC("dec_b", 3 * n, dec_b);
    MAT("dec_U", n, 2 * n, INIT_ORTHO_BLOCKS, dec_U);
    MAT("dec_Uh", n, n, INIT_ORTHO_BLOCKS, dec_Uh);
    MAT("dec_C", cd, 3 * n, INIT_NORMAL_001, dec_C);
    if (search) {
        MAT("att_W", n, na, INIT_NORMAL_0001, att_W);
        MAT("att_U", 2 * n, na, INIT_NORMAL_0001, att_U);
        VEC("att_b", na, att_b);
        VEC("att_v", na, att_v);
    }
    /* the variants' extra weights (MODEL.md section 5; initialised as its last Choice says) */
    if (has_recatt(c)) MAT("att_R", 2 * n, na, INIT_NORMAL_0001, att_R);
    if (xi_kind(c)) MAT("att_M", xi_width(c), na, INIT_NORMAL_0001, att_M);
    if (has_inputfeed(c)) MAT("dec_F", cd, 3 * n, INIT_NORMAL_001, dec_F);
    if (has_fertdec(c)) {
        MAT("fer_V", m, 3 * n, INIT_NORMAL_001, fer_V);     /* V_z|V_r|V on d_i */
        MAT("fer_Vh", m, n, INIT_NORMAL_001, fer_Vh);       /* V_h: s_i += tanh(V_h d_i) */
        MAT("fer_Wg", m, m, INIT_NORMAL_001, fer_Wg);       /* the extract gate g_i on ȳ_{i-1} */
        MAT("fer_Ug", n, m, INIT_NORMAL_001, fer_Ug);       /* ... on s_{i-1} */
        MAT("fer_Cg", cd, m, INIT_NORMAL_001, fer_Cg);      /* ... on c_i */
        MAT("fer_Vg", m, m, INIT_NORMAL_001, fer_Vg);       /* ... on d_i */
        VEC("fer_bg", m, fer_bg);
    }
    MAT("out_U", n, 2 * l, INIT_NORMAL_001, out_U);
    MAT("out_V", m, 2 * l, INIT_NORMAL_001, out_V);
    MAT("out_C", cd, 2 * l, INIT_NORMAL_001, out_C);
    VEC("out_b", 2 * l, out_b);
    if (!c->tied_emb) MAT("out_W", l, c->tgt_vocab, INIT_NORMAL_001, out_W); /* tied: Et^T, stored once as Et */
    VEC("out_bias", c->tgt_vocab, out_bias);
}

void params_point(params *p, const param_table *pt, real *arena)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < pt->n; i++)
        *(real **)((char *)p + pt->t[i].slot) = arena + pt->t[i].offset;
}

void model_point(nmt_model *m)
{
    params_point(&m->p, &m->pt, m->P);
    memset(m->w, 0, sizeof m->w);
    for (int i = 0; i < m->pt.n; i++) {
        const tensor_info *t = &m->pt.t[i];
        m->w[t->slot / sizeof(real *)] = (bk_weight){m->P + t->offset, t->rows, t->cols, BK_PREC_F32, NULL};
    }
    m->p.tw = m->w;
}

const tensor_info *param_table_find(const param_table *pt, const char *name)
{
    for (int i = 0; i < pt->n; i++)
        if (!strcmp(pt->t[i].name, name)) return &pt->t[i];
    return NULL;
}

int param_table_product_parts(const param_table *pt, const nmt_config *c, size_t (*parts)[2])
{
    int k = 0;
    for (int i = 0; i < pt->n; i++) {
        const tensor_info *t = &pt->t[i];
        int table = t->slot == SLOT(Es) || (t->slot == SLOT(Et) && !c->tied_emb) || t->slot == SLOT(tf_pos[TF_ENC]) ||
                    t->slot == SLOT(tf_pos[TF_DEC]);
        if (t->ndim == 2 && !table) {
            parts[k][0] = t->offset;
            parts[k++][1] = (size_t)t->rows * t->cols;
        }
    }
    return k;
}

/* Glorot and Bengio (2010)'s uniform initialisation: U(-a, a), a = sqrt(6 / (fan_in + fan_out)). */
static void glorot(real *w, int rows, int cols, rng *r)
{
    double a = sqrt(6.0 / (rows + cols));
    for (size_t k = 0; k < (size_t)rows * cols; k++) w[k] = (real)(a * (2 * rng_uniform(r) - 1));
}

/* Is t drawn Glorot-uniform under scheme? Biases never are; v_a (a vector, zero in the paper) is
 * a weight, [n', 1]. */
static int is_glorot(const tensor_info *t, int scheme)
{
    if (t->init >= INIT_ONE) return 0; /* the Transformer's: its own kinds whatever the scheme */
    int weight = t->init != INIT_ZERO || !strcmp(t->name, "att_v");
    if (!weight || scheme == NMT_INIT_PAPER) return 0;
    return scheme == NMT_INIT_GLOROT || (!strncmp(t->name, "att_", 4) && strcmp(t->name, "att_b"));
}

int params_init(const param_table *pt, real *arena, int hid, rng *r, int scheme)
{
    for (int i = 0; i < pt->n; i++) {
        const tensor_info *t = &pt->t[i];
        real *w = arena + t->offset;
        size_t sz = (size_t)t->rows * t->cols;
        if (is_glorot(t, scheme)) {
            glorot(w, t->rows, t->cols, r);
            continue;
        }
        switch (t->init) {
        case INIT_ZERO:
            memset(w, 0, sizeof(real) * sz);
            break;
        case INIT_NORMAL_001:
        case INIT_NORMAL_0001: {
            double sd = t->init == INIT_NORMAL_001 ? 0.01 : 0.001;
            for (size_t k = 0; k < sz; k++) w[k] = (real)(sd * rng_normal(r));
            break;
        }
        case INIT_ONE:
            for (size_t k = 0; k < sz; k++) w[k] = 1;
            break;
        case INIT_GLOROT:
            glorot(w, t->rows, t->cols, r);
            break;
        case INIT_NORMAL_EMB: {
            double sd = 1 / sqrt((double)t->cols);
            for (size_t k = 0; k < sz; k++) w[k] = (real)(sd * rng_normal(r));
            break;
        }
        case INIT_ORTHO_BLOCKS:
            /* [U_z | U_r] is two n x n blocks side by side, each orthogonal on its own. */
            for (int b = 0; b < t->cols / hid; b++)
                if (rng_orthogonal(r, w + (size_t)b * hid, hid, t->cols)) return -1;
            break;
        }
    }
    return 0;
}

real *params_to_host(const struct nmt_model *m)
{
    real *h = malloc(sizeof(real) * (m->pt.total ? m->pt.total : 1));
    if (h) m->cx.b->copy_out(h, m->P, sizeof(real) * m->pt.total);
    return h;
}

void params_from_host(struct nmt_model *m, const real *host)
{
    m->cx.b->copy_in(m->P, host, sizeof(real) * m->pt.total);
}

int params_init_model(struct nmt_model *m, rng *r, int scheme, nmt_err *err)
{
    /* calloc: tensors the scheme leaves alone are zero, as the backend's fresh blocks are */
    real *h = calloc(m->pt.total ? m->pt.total : 1, sizeof(real));
    int bad = !h || params_init(&m->pt, h, m->cfg.hid, r, scheme);
    if (!bad) params_from_host(m, h);
    free(h);
    return bad ? nmt_fail(err, NMT_ERR_NOMEM, "out of memory while initialising") : NMT_OK;
}
