/* model.c: configuration checks, the parameter table of each architecture and Appendix-B
 * initialisation (MODEL.md sections 1-4). */
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"

#include "base/err.h"
#include "nn/model.h"

nmt_config nmt_config_default(void)
{
    nmt_config c = {NMT_ARCH_RNNSEARCH, 30002, 30002, 620, 1000, 1000, 500, 2, 1.0, 1.0, 0};
    return c;
}

int nmt_config_check(const nmt_config *c, nmt_err *err)
{
    if (!c) return nmt_fail(err, NMT_ERR_ARG, "nmt_config_check: c is NULL");
    if (!variant_get(c->arch)) return nmt_fail(err, NMT_ERR_ARG, "unknown architecture %d", c->arch);
    /* 3 ids at least: EOS, UNK and one word. The upper bounds keep every product of sizes
     * far inside size_t and int row strides. */
    if (c->src_vocab < 3 || c->src_vocab > 4000000) return nmt_fail(err, NMT_ERR_ARG, "source vocabulary %d out of range [3, 4000000]", c->src_vocab);
    if (c->tgt_vocab < 3 || c->tgt_vocab > 4000000) return nmt_fail(err, NMT_ERR_ARG, "target vocabulary %d out of range [3, 4000000]", c->tgt_vocab);
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
    t->name = name;
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

void param_table_build(param_table *pt, const nmt_config *c)
{
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
        int table = t->slot == SLOT(Es) || (t->slot == SLOT(Et) && !c->tied_emb);
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
