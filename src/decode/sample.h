/* sample.h: translation by sampling (nmt_translate_opts.sample): each sentence of a batch draws
 * o->nbest translations word by word from the model's (or ensemble's) distribution at
 * temperature o->temp, among the o->topk most probable words when topk > 0, then among the
 * nucleus of o->topp when below 1, never UNK with o->no_unk. Each draw has its own random
 * stream, seeded from its sentence's o->seeds[b] and its number, so what a sentence draws does
 * not depend on the batch it is in. */
#ifndef NMT_SAMPLE_H
#define NMT_SAMPLE_H

#include "decode/beam.h"

/* Draws for every sentence of src; out[0..src->B) receive them best score first (ranked as the
 * beam ranks: o->normalize, o->alpha), as beam_search_ens's results (free with beam_sent_free).
 * A hypothesis's logprob is the model's, not the tempered or truncated distribution's. */
int sample_search_ens(beam_sent *out, infer_ens *e, const batch *src, const beam_opts *o, nmt_err *err);

/* Nucleus sampling's cut (Holtzman et al. 2020, "top-p"): of the weights w[0..n) (all > 0), the
 * largest t with Σ_{w_i >= t} w_i >= p · Σ w. The nucleus, every word of weight >= t, is the
 * fewest most probable words that hold p of the mass, words of equal weight kept together; the
 * most probable alone when p is 0, 0 (all) when p >= 1. Expected O(n); reorders w. */
double sample_nucleus_floor(double *w, int n, double p);

#endif
