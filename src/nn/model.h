/* model.h: the parameter table of every architecture, the one-allocation parameter arena, and
 * initialisation (MODEL.md sections 1-4). Gradients and optimizer state reuse the same layout,
 * so optimizers and checkpoints are flat loops over the arena. */
#ifndef NMT_MODEL_H
#define NMT_MODEL_H

#include <stddef.h>

#include <pthread.h>

#include "nmt.h"
#include "backend/backend.h"
#include "base/real.h"
#include "base/rng.h"
#include "nn/variant.h"

/* A Transformer layer's tensors (nn/transformer.h), in the order a model file lists them. */
enum tf_tensor {
    TF_SELF_WQKV, TF_SELF_BQKV, TF_SELF_WO, TF_SELF_BO, TF_SELF_LNS, TF_SELF_LNB,
    TF_CTX_WQ, TF_CTX_BQ, TF_CTX_WKV, TF_CTX_BKV, TF_CTX_WO, TF_CTX_BO, TF_CTX_LNS, TF_CTX_LNB,
    TF_FFN_W1, TF_FFN_B1, TF_FFN_W2, TF_FFN_B2, TF_FFN_LNS, TF_FFN_LNB, TF_NT
};
#define TF_MAX_DEPTH NMT_MAX_DEPTH
enum { TF_ENC = 0, TF_DEC = 1 };

/* Pointers into one arena; a tensor the architecture lacks is NULL. Every weight is stored
 * [in, out] (y = x·W + b) and gate blocks are column blocks [z | r | candidate], the layout of
 * the reference implementation, so its tensors load without transposes. */
typedef struct params {
    real *Es;                       /* [Kx, m]   source embeddings Ex */
    real *enc_W[2], *enc_b[2];      /* [m, 3n], [3n]: W_z|W_r|W of the forward (0) and backward (1) GRU */
    real *enc_U[2], *enc_Uh[2];     /* [n, 2n] U_z|U_r, [n, n] U */
    real *init_W, *init_b;          /* [n or 2n.. see model.c, n], [n]: W_s, b_s of s_0 */
    real *Et;                       /* [Ky, m]   target embeddings Ey */
    real *dec_W, *dec_b;            /* [m, 3n], [3n] on y_{i-1} */
    real *dec_U, *dec_Uh;           /* [n, 2n], [n, n] on s_{i-1} */
    real *dec_C;                    /* [c, 3n]   C_z|C_r|C on c_i (c = 2n, RNNencdec n) */
    real *att_W, *att_U, *att_b, *att_v; /* [n, n'], [2n, n'], [n'], [n'] */
    real *att_R;                    /* [2n, n']  RecAtt: R_a on c_{i-1} */
    real *att_M;                    /* [2k+1, n'] Markov / LocFer: M_a on the window ξ_j */
    real *dec_F;                    /* [2n, 3n]  InputFeed: F_z|F_r|F on c_{i-1} */
    real *fer_V, *fer_Vh;           /* [m, 3n], [m, n]  FertDec: d_i into the GRU and the state */
    real *fer_Wg, *fer_Ug, *fer_Cg, *fer_Vg, *fer_bg; /* [m,m], [n,m], [c,m], [m,m], [m]: extract gate */
    real *out_U, *out_V, *out_C, *out_b; /* [n, 2l], [m, 2l], [c, 2l], [2l] */
    real *out_W, *out_bias;         /* [l, Ky] (NULL with tied embeddings: Et^T), [Ky] */
    /* The Transformer (docs/MODEL-MAP.md): each layer's tensors by enum tf_tensor (a layer of the
     * encoder has no TF_CTX_*), the top norms of pre-norm stacks [side][scale, bias], the learned
     * positions [side] (NULL: sinusoidal). Its embeddings are Es and Et (Et alone with tied_emb 2),
     * its output layer out_W (NULL when tied) and out_bias. */
    real *tf[2][TF_MAX_DEPTH][TF_NT];
    real *tf_top[2][2];
    real *tf_pos[2];
    /* the weights as products read them, by slot (nn/weights.h): a decoder's view in another
     * precision; NULL: every product by a weight in the context's FP32 */
    const bk_weight *tw;
} params;

/* the slots of params' tensor pointers (tensor_info.slot / sizeof(real *)) */
#define PARAMS_SLOTS (offsetof(params, tw) / sizeof(real *))

/* the slot (offsetof into params) of tensor k of layer l of a Transformer's side s (TF_ENC, TF_DEC) */
static inline size_t tf_slot(int s, int l, int k)
{
    return offsetof(params, tf) + sizeof(real *) * (((size_t)s * TF_MAX_DEPTH + l) * TF_NT + k);
}

/* The weight in field f of *p as a product reads it (backend.h mmw): its typed form in a view
 * that has them, else its FP32 data. */
#define PW(p, f) params_w((p), offsetof(params, f))
static inline bk_weight params_w(const params *p, size_t off)
{
    if (p->tw) return p->tw[off / sizeof(real *)];
    return bk_w32(*(real *const *)((const char *)p + off));
}

enum init_kind { INIT_NORMAL_001, INIT_NORMAL_0001, INIT_ZERO, INIT_ORTHO_BLOCKS,
                 INIT_ONE,          /* layer norm scales */
                 INIT_GLOROT,       /* the Transformer's weight matrices */
                 INIT_NORMAL_EMB }; /* the Transformer's embeddings: N(0, 1/cols) */

#define MAX_TENSORS (2 * TF_MAX_DEPTH * TF_NT + 16)

typedef struct tensor_info {
    char name[40];
    int rows, cols;        /* a vector has rows = 1 */
    int ndim;              /* 1 or 2, as stored in the model file */
    int init;              /* enum init_kind */
    size_t offset;         /* in elements from the arena's start */
    size_t slot;           /* offsetof(params, field): where its pointer lives */
} tensor_info;

typedef struct param_table {
    int n;
    tensor_info t[MAX_TENSORS];
    size_t total;          /* elements */
} param_table;

/* Builds the table for a config (which must pass nmt_config_check). */
void param_table_build(param_table *pt, const nmt_config *c);
/* Points every field of p into arena (which holds pt->total elements); absent tensors NULL. */
void params_point(params *p, const param_table *pt, real *arena);
/* m->p pointed into m->P, with m->w, the weights' FP32 descriptors, as its typed view */
void model_point(struct nmt_model *m);
const tensor_info *param_table_find(const param_table *pt, const char *name);
/* The parts of the arena that matrix products read as weights, (offset, length) in elements into
 * parts [MAX_TENSORS]: every matrix but the embedding tables, which are read by rows (Ey is
 * kept with tied embeddings, where it is the softmax layer's weights too). Returns the count.
 * For bf16 training's copies (backend.h, bk_mix). */
int param_table_product_parts(const param_table *pt, const nmt_config *c, size_t (*parts)[2]);

/* Initialisation into arena; -1 on allocation failure (orthogonal scratch). scheme (enum
 * nmt_init): NMT_INIT_PAPER is Appendix B's; NMT_INIT_GLOROT_ATT draws the attention's weights
 * (W_a, U_a, v_a and the variants' R_a, M_a) Glorot-uniform instead, NMT_INIT_GLOROT every weight
 * matrix and v_a; biases stay zero. */
int params_init(const param_table *pt, real *arena, int hid, rng *r, int scheme);

typedef struct vocab vocab;
struct nmt_model;
/* The parameters live in the compute backend's memory; the host sees them only through these
 * copies. params_to_host: a malloc'd copy of all of them (NULL when out of memory), the
 * caller's to free; params_from_host: all of them from host [pt.total]. */
real *params_to_host(const struct nmt_model *m);
void params_from_host(struct nmt_model *m, const real *host);
/* params_init on the host, then one copy in; NMT_ERR_NOMEM on failure */
int params_init_model(struct nmt_model *m, rng *r, int scheme, nmt_err *err);
typedef struct st_file st_file;
typedef struct st_writer st_writer;

/* The model object behind the public nmt_model handle. */
struct nmt_model {
    nmt_config cfg;
    param_table pt;
    bk_ctx cx;          /* where its kernels run: the backend and device it was made on */
    real *P;            /* pt.total parameters, one allocation of cx's backend */
    params p;           /* pointers into P; p.tw = w */
    /* every weight as a product reads it: its FP32 data, shape and type, by params slot (the
     * device is cx's); a decoder in int8 or bf16 reads lowp's view instead */
    bk_weight w[PARAMS_SLOTS];
    /* its weights in int8 and bf16 (nn/weights.h), each made once, when a decoder first asks,
     * and shared by every decoder and worker until the model is freed; lock guards the making */
    struct model_lowp *lowp[3];
    pthread_mutex_t lowp_lock;
    vocab *src, *tgt;
    struct subwords *sw; /* a subword model's SentencePiece models (data/subword.h), or NULL */
    /* a word model trained on raw text (nmt train --tokenize): the stages its corpus went
     * through, which it then applies itself (data/pipeline.c); has_text 0 for a model of
     * text tokenized outside, and for a subword model (whose stages are sw->text) */
    int has_text;
    nmt_text_opts text[2];
};

/* The text stages the model applies itself on side (enum nmt_side): a subword model's or a raw-text
 * word model's; NULL for a word model of tokenized text. */
const nmt_text_opts *model_text_stages(const nmt_model *m, int side);

/* Builds a model from an opened model or checkpoint file (validating config, vocabularies,
 * names, dtypes, shapes and values); tensors whose names start with "opt." or "train." belong
 * to checkpoints and are left to their reader. */
int model_from_file(nmt_model **out, const st_file *f, nmt_err *err);
/* Adds the model's metadata and tensors to w: the tensors referenced in *host, a copy of the
 * parameters that the caller frees once w is saved (NULL on failure). */
int model_to_writer(const nmt_model *m, st_writer *w, real **host, nmt_err *err);
/* An empty model of config c (parameters uninitialised) owning the two vocabularies. */
int model_alloc(nmt_model **out, const nmt_config *c, vocab *src, vocab *tgt, nmt_err *err);
/* The dtype a real is stored as. */
int model_real_dtype(void);

#endif
