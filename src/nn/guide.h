/* guide.h: guided alignment training (Chen et al. 2016; docs/TRAINING.md): a cost on the
 * attention weights α_i of every target word that has word links, pulling them towards the
 * links. For target word i of a sentence with links to source words L_i (a_ij = 1/|L_i| for j
 * in L_i, else 0):
 *   ce:  G_i = -Σ_{j∈L_i} a_ij log(α_ij + ε),      ∂G_i/∂α_ij = -a_ij / (α_ij + ε)
 *   mse: G_i = Σ_{j<|x|} (α_ij - a_ij)²,           ∂G_i/∂α_ij = 2 (α_ij - a_ij)
 * over the sentence's real source positions (its EOS included: a_ij = 0 there). Target words
 * without links, the target EOS and padding contribute nothing. The training loss adds
 * λ Σ_i G_i per sentence beside its summed NLL; the gradient reaches α_i, then the attention's
 * softmax and energies through attn_backward's dα input. A Transformer's α is one head of one
 * decoder layer's encoder-decoder attention (its softmax P), the gradient added to that head's
 * dP before the softmax's backward (transformer.c): the same cost, read in batch-major layout.
 * α is read back once per batch and the cost and its gradient formed on the host in double
 * (a log and a ratio per link: no kernel of the table does that), the gradient uploaded once. */
#ifndef NMT_GUIDE_H
#define NMT_GUIDE_H

#include "backend/backend.h"
#include "data/batch.h"
#include "nmt.h"

#define GUIDE_EPS 1e-6 /* ε in log(α + ε): a link on a position the softmax underflowed stays finite */

typedef struct guide_ws {
    int kind;            /* enum nmt_guided_cost */
    int batch_major;     /* α and dA are [B, Ty, Tx] (a Transformer head's P), not [Ty*B, Tx] */
    double weight;       /* λ */
    size_t cap;          /* reals in dA, hA, hG: B·Tx·Ty of the largest batch */
    size_t cap_row;      /* reals in tmp: B·Tx */
    real *dA;            /* device [Ty*B, Tx]: λ·scale·∂G/∂α of the last batch, zero where no link reaches
                            (a Transformer's: first the room its head's α is gathered into) */
    real *tmp;           /* device [B, Tx]: Markov / LocFer add it to what later steps send to α_i */
    real *hA, *hG;       /* host: α read back; the gradient built */
    double cost;         /* the last forward's Σ G over its sentences (unweighted) */
    int active;          /* the last forward had links to guide with */
    const backend_ops *b; /* dA's and tmp's backend, which frees them */
} guide_ws;

/* Buffers for batches up to B x Tx x Ty on x's device. */
int guide_init(const bk_ctx *x, guide_ws *g, int kind, double weight, int B, int Tx, int Ty, nmt_err *err);
void guide_free(guide_ws *g); /* accepts NULL */

/* After the decoder's forward pass: reads α [Ty*B, Tx] (batch_major: [B, Ty, Tx]) back and
 * returns Σ G over the batch (unweighted; also in g->cost). */
double guide_forward(const bk_ctx *x, guide_ws *g, const real *alpha, const batch *bt, const batch_links *l);
/* The gradient of scale·λ·Σ G w.r.t. α into g->dA (uploaded, α's layout); returns g->dA. */
const real *guide_backward(const bk_ctx *x, guide_ws *g, const batch *bt, const batch_links *l, real scale);

#endif
