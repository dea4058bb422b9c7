/* variant.h: the architectures as data (MODEL.md sections 2 and 5): each one is a row of
 * features, which terms it adds to the attention query, the energies, the GRU input and the
 * decoder state. Code asks about features, never about architecture names, so a new variant
 * that combines existing terms is one more row in variant.c. */
#ifndef NMT_VARIANT_H
#define NMT_VARIANT_H

#include "nmt.h"

enum { XI_NONE, XI_MARKOV, XI_LOCFER };

typedef struct variant {
    const char *name;       /* as nmt train --arch spells it */
    int attention;          /* 0: RNNencdec's fixed context h→_Tx and a forward encoder only */
    int query_ctx;          /* RecAtt: + R_a c_{i-1} in the attention query */
    int input_ctx;          /* InputFeed: + F c_{i-1} in the GRU input */
    int energy_xi;          /* Markov / LocFer: + M_a ξ_ij in the energies, ξ from α_{i-1} or Σα */
    int coverage;           /* FertDec: the coverage vector d_i, its extract gate and costs */
    int family;             /* enum family: which network runs the model */
    int typed_out;          /* decodes in int8 / bf16 and over a shortlist (decode/outlayer.c) */
    int guidable;           /* its attention can be trained towards word links (--guided-alignment) */
} variant;

/* The model families: the recurrent systems of MODEL.md, and the Transformer (nn/transformer.h).
 * The layers that drive any model (net.c for training, decode/infer.c for the search) ask the
 * family once and call its functions; the loops above them never do. */
enum family { FAMILY_RNN, FAMILY_TRANSFORMER };

/* The row of a config's architecture (which must pass nmt_config_check). */
const variant *variant_of(const nmt_config *c);
/* The row of an architecture id, NULL when out of range. */
const variant *variant_get(int arch);

static inline int model_family(const nmt_config *c) { return variant_of(c)->family; }
static inline int is_transformer(const nmt_config *c) { return model_family(c) == FAMILY_TRANSFORMER; }
static inline int has_attention(const nmt_config *c) { return variant_of(c)->attention; }
static inline int has_recatt(const nmt_config *c) { return variant_of(c)->query_ctx; }
static inline int has_inputfeed(const nmt_config *c) { return variant_of(c)->input_ctx; }
static inline int has_fertdec(const nmt_config *c) { return variant_of(c)->coverage; }
static inline int xi_kind(const nmt_config *c) { return variant_of(c)->energy_xi; }
static inline int xi_width(const nmt_config *c) { return 2 * c->window + 1; }
/* Needs c_{i-1} in the decoder state (RecAtt, InputFeed). */
static inline int needs_prev_ctx(const nmt_config *c) { return has_recatt(c) || has_inputfeed(c); }
/* Context size c: 2n with attention (a bidirectional encoder), n for RNNencdec. */
static inline int ctx_dim(const nmt_config *c) { return has_attention(c) ? 2 * c->hid : c->hid; }
/* Encoder directions: 2 with attention, 1 for RNNencdec. */
static inline int enc_dirs(const nmt_config *c) { return has_attention(c) ? 2 : 1; }

#endif
