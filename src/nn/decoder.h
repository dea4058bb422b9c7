/* decoder.h: the target side up to the decoder states (MODEL.md sections 2 and 3): s_0, then
 * for each target position the context c_i (attention, or RNNencdec's fixed h→_Tx) and the GRU
 * state s_i. The deep output that reads s_i, y_{i-1} and c_i is in readout.h. */
#ifndef NMT_DECODER_H
#define NMT_DECODER_H

#include "backend/arena.h"
#include "nn/attention.h"
#include "data/batch.h"
#include "nn/encoder.h"
#include "nn/gru.h"
#include "nn/model.h"

typedef struct dec_ws {
    real *Eprev;      /* [Ty*B, m]  ȳ_{i-1}; row block 0 is ȳ_0 = 0 */
    real *Y;          /* [Ty*B, 3n] ȳ_{i-1}·dec_W + dec_b */
    real *S;          /* [(Ty+1)*B, n] s_0 .. s_Ty */
    real *C;          /* [Ty*B, c]  contexts c_1 .. c_Ty */
    real *UaH;        /* [Tx*B, n'] U_a h_j + b_a */
    real *Q;          /* [Ty*B, n'] attention queries W_a s_{i-1} */
    real *alpha;      /* [Ty*B, Tx] attention weights */
    real *pre;        /* [B, 3n] GRU pre-activations of one step */
    gru_cache cache;  /* each [Ty*B, n] */
    /* backward */
    /* training's variational dropout (net_forward; NULL: none), one mask per sentence: */
    const real *drop_emb; /* [B, m] on the target embeddings ȳ */
    const real *drop_h;   /* [B, n] on the state the GRU's recurrent products read */
    real *dS;         /* [Ty*B, n]  gradient reaching s_1..s_Ty from the deep output (with drop_h,
                         s_{i-1}∘m for dU once the backward loop has read it) */
    real *dC;         /* [Ty*B, c]  ... reaching c_i (the GRU's share is added during the loop) */
    real *dEprev;     /* [Ty*B, m] */
    real *dA;         /* [Ty*B, 3n] GRU pre-activation gradients */
    real *dQ;         /* [Ty*B, n'] */
    real *dUaH;       /* [Tx*B, n'] */
    real *dv_rows;    /* [B, n'] */
    real *carry, *dh; /* [B, n] */
    real *tmp;        /* [B, max(3n, Tx)] */
    /* Markov / LocFer */
    real *XI;         /* [Ty*B, Tx, K] the window features of every step */
    real *cum;        /* [B, Tx] LocFer: attention summed over the steps so far */
    real *dxi;        /* [B, Tx, K] */
    real *dal;        /* [B, Tx] gradient reaching α_{i-1} from step i's ξ (LocFer: from all later steps) */
    real *dM_rows;    /* [B, K*n'] */
    /* FertDec */
    real *cov;        /* [(Ty+1)*B, m] FertDec coverage d_1 .. d_{Ty+1} */
    real *G;          /* [Ty*B, m] extract gates g_i */
    real *TH;         /* [Ty*B, n] tanh(V_h d_i) */
    real *YG;         /* [Ty*B, m] ȳ_{i-1}·W_g + b_g */
    real *dGP, *dTH;  /* [Ty*B, m], [Ty*B, n] */
    real *dDc;        /* [(Ty+1)*B, m] gradient of the FertDec costs w.r.t. each d */
    real *ddc, *ddi;  /* [B, m] */
    double *nrm;      /* [B, Ty+1] each sentence's ||d_{i+1} - d_i|| (i < L) and ||d_{L+1}|| */
    real *u;          /* [B, 2(Ty+1)] the scales of their gradients: +u, then -u */
    double *hnrm;     /* host: nrm read back */
    real *hu;         /* host: u built there */
    double cost_step, cost_left; /* summed over the batch's sentences, unweighted */
    /* guided alignment (nn/guide.h; set by net_backward, NULL: none): the gradient reaching each
     * α_i [Ty*B, Tx] directly, and room [B, Tx] to add it to what later steps send (Markov, LocFer) */
    const real *ga;
    real *ga_tmp;
} dec_ws;

/* FertDec's extra cost of the last forward pass (MODEL.md section 5), summed over sentences:
 * step_w · (1/Ty) Σ_i ||d_{i+1} - d_i|| + left_w · ||d_{Ty+1}||; 0 for other models. */
double dec_extra_cost(const dec_ws *w, const nmt_config *c);

/* s_0 [B,n] = tanh(W_s h←_1 + b_s) (RNNencdec: of h→_Tx) from the encoder's annotations. */
void dec_init_state(const bk_ctx *x, real *s0, const enc_ws *e, const nmt_config *c, const params *p, int B, int Tx);

void dec_layout(dec_ws *w, arena *a, const nmt_config *c, int B, int Tx, int Ty);
void dec_forward(const bk_ctx *x, dec_ws *w, const enc_ws *e, const nmt_config *c, const params *p, const batch *bt);
/* Reads w->dS, w->dC, w->dEprev (filled by the readout); ADDS into g and into e->dH. scale is
 * the loss scale (FertDec's costs enter the loss with it, as the NLL does). */
void dec_backward(const bk_ctx *x, dec_ws *w, enc_ws *e, const nmt_config *c, const params *p, params *g, const batch *bt, real scale);

#endif
