/* sample.h: translation by sampling (nmt_translate_opts.sample): each sentence of a batch draws
 * o->nbest translations word by word from the model's (or ensemble's) distribution at
 * temperature o->temp, among the o->topk most probable words when topk > 0, never UNK with
 * o->no_unk. Each draw has its own random stream, seeded from its sentence's o->seeds[b] and its
 * number, so what a sentence draws does not depend on the batch it is in. */
#ifndef NMT_SAMPLE_H
#define NMT_SAMPLE_H

#include "decode/beam.h"

/* Draws for every sentence of src; out[0..src->B) receive them best score first (ranked as the
 * beam ranks: o->normalize, o->alpha), as beam_search_ens's results (free with beam_sent_free).
 * A hypothesis's logprob is the model's, not the tempered or truncated distribution's. */
int sample_search_ens(beam_sent *out, infer_ens *e, const batch *src, const beam_opts *o, nmt_err *err);

#endif
