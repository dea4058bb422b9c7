/* step.h: one decoder step (MODEL.md sections 2, 3 and 5), the same code for teacher-forced
 * training (decoder.c, all sentences at step i) and for beam search (infer.c, any set of
 * hypotheses, each reading one source sentence):
 *   q_i = W_a s_{i-1} [+ R_a c_{i-1}],  α_i, c_i = attention(q_i, h [, ξ_i])  (RNNencdec: h→_Tx)
 *   s_i = GRU(s_{i-1}; ȳ_{i-1}·W + b + C c_i [+ F c_{i-1}] [+ V d_i]) [+ tanh(V_h d_i)]
 *   d_{i+1} = σ(ȳ_{i-1}·W_g + b_g + U_g s_{i-1} + C_g c_i + V_g d_i) ∘ d_i          (FertDec)
 * The input-side terms that depend on ȳ_{i-1} alone (ȳ·W + b, ȳ·W_g + b_g) are the caller's:
 * training forms them for all steps in one product, decoding per step. */
#ifndef NMT_STEP_H
#define NMT_STEP_H

#include "nn/gru.h"
#include "nn/model.h"

/* The source side every step reads: annotations H [Tx, S, hd] (row j*S + s), U_a h_j + b_a
 * [Tx, S, n'], and the real source lengths of the S sentences. */
typedef struct dec_src {
    const real *H, *UaH;
    const int *xlen;
    int S, Tx, hd;
} dec_src;

/* A set of rows' recurrent state, each part a pointer and a row stride: s_i [n]; c_i [c]
 * (RecAtt, InputFeed); α_i (Markov) or Σ_{i'<=i} α_i' (LocFer) [Tx]; d_{i+1} [m] (FertDec).
 * In a previous state, c and a NULL mean zero (the first step). */
typedef struct dec_rows {
    real *s, *c, *a, *d;
    int ld_s, ld_c, ld_a, ld_d;
} dec_rows;

/* Where one step writes for H rows. pre [H,3n] holds ȳ·W + b on entry and the GRU's
 * pre-activations after; g [H,m] holds ȳ·W_g + b_g on entry and the extract gate after
 * (FertDec). The others are outputs kept for backward (training) or read by the readout:
 * q [H,n'], alpha [H,Tx] (zero for RNNencdec), ctx [H,c], xi [H,Tx,K] (Markov / LocFer),
 * cache (the GRU's, each [H,n]), th [H,n] tanh(V_h d_i) (FertDec). tmp: 3n*H reals;
 * rowlen: H ints (used when rows map to sentences through src_of). */
typedef struct dec_bufs {
    real *pre, *g, *q, *alpha, *ctx, *xi, *th, *tmp;
    gru_cache cache;
    const int *rowlen;  /* [H] with src_of: each row's source length (the caller's, on the device) */
    const real *drop;   /* [H,n] training's dropout mask on s_{i-1} in the GRU's recurrent products, or NULL */
} dec_bufs;

/* One step for H rows; row h reads sentence src_of[h] (NULL: sentence h). Writes next's parts
 * (next->a may alias prev->a for LocFer's in-place sum, and may be bufs->alpha for Markov). */
void dec_step(const bk_ctx *x, const dec_bufs *b, const nmt_config *c, const params *p, const dec_src *src, int H, const int *src_of,
              const dec_rows *prev, const dec_rows *next);

/* U_a h_j + b_a for every annotation row: [rows, n'] from H [rows, hd]. */
void dec_project_annotations(const bk_ctx *x, real *UaH, const real *H, const params *p, const nmt_config *c, int rows, int hd);
/* FertDec's d_1 = Σ_j x̄_j over each sentence's real positions (EOS included), from the source
 * embeddings ex [Tx, S, m] and the encoder's mask [Tx, S] of real positions. */
void dec_coverage_init(const bk_ctx *x, real *d, const real *ex, const unsigned char *mask, int S, int Tx, int m);
/* ȳ·W + b into y [rows, cols] from E [rows, m]: the input-side terms of a step. */
void dec_input_terms(const bk_ctx *x, real *y, const real *E, bk_weight W, const real *b, int rows, int m, int cols);

#endif
