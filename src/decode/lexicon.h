/* lexicon.h: the lexical table for UNK replacement (MODEL.md section 6, Feng et al. 6.2.2):
 * each source word's most frequently aligned target word, counted over hard alignments of a
 * training corpus; stored as TSV "source<TAB>target<TAB>count<TAB>source count". */
#ifndef NMT_LEXICON_H
#define NMT_LEXICON_H

#include <stddef.h>

#include "nmt.h"

/* Counting (source word, target word) link pairs. */
typedef struct lex_counter lex_counter;
lex_counter *lex_counter_init(void);
void lex_counter_free(lex_counter *c);
int lex_counter_add(lex_counter *c, const char *src, size_t sl, const char *tgt, size_t tl);
/* Writes the table: for each source word its most frequent target (ties: byte order), sorted
 * by source word; min_count drops pairs seen fewer times. */
int lex_counter_write(const lex_counter *c, const char *path, long min_count, long *entries, nmt_err *err);

/* The table's translation of a source word, NULL when it has none. */
const char *nmt_lexicon_lookup(const nmt_lexicon *lx, const char *src, size_t len);

#endif
