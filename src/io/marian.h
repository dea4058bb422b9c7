/* marian.h: Marian's Transformer models (OPUS-MT's .npz files) converted into nmt models
 * (marian.c; docs/OPUS-MT.md). The public entry is nmt_model_import_marian in nmt.h. */
#ifndef NMT_MARIAN_H
#define NMT_MARIAN_H

#include "nmt.h"

/* What model.yml says beyond nmt_config: an SSRU decoder, the guided-alignment layer (0-based). */
typedef struct marian_extra {
    int ssru;
    int align_layer;
} marian_extra;

/* The model of the .npz npz with the vocabulary .yml files vocabs[0] (source) and vocabs[1]
 * (target; NULL: the source's, a joint vocabulary). */
int marian_import(nmt_model **out, const char *npz, const char *const vocabs[2], marian_extra *x, nmt_err *err);

#endif
