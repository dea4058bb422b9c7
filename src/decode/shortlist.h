/* shortlist.h: a lexical shortlist for decoding (Marian's --shortlist): the output layer of a
 * batch of source sentences computes only the union of each source word's K best translations
 * in a lexical table (`nmt lex`), the F most frequent target words, EOS and UNK; the softmax is
 * taken over that set. */
#ifndef NMT_SHORTLIST_H
#define NMT_SHORTLIST_H

#include "data/batch.h"
#include "nmt.h"

struct nmt_shortlist {
    int k, f;          /* translations per source word, most frequent target words */
    int nsrc, ntgt;    /* the model's vocabulary sizes */
    int *off;          /* [nsrc + 1]: source id s's translations are tgt[off[s] .. off[s+1]), best first */
    int *tgt;
};

/* The batch's set, with the target words extra[0..nextra) (the batch's prefixes and constraint
 * phrases, which must be in it), as target ids in ascending order into ids (room for ntgt), its
 * size returned; ids[0] = EOS and ids[1] = UNK always. mark: ntgt bytes of scratch. */
int shortlist_select(const nmt_shortlist *sl, const batch *src, const int *extra, int nextra, int *ids,
                     unsigned char *mark);

#endif
