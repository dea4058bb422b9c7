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
/* The links of one line of 0-based Pharaoh "s-t" pairs over a sentence pair's words (sw[0..ns),
 * tw[0..nt)), counted. A malformed link, or an index past either sentence, is NMT_ERR_FORMAT
 * naming path:line. */
int lex_counter_add_links(lex_counter *c, char *const *sw, int ns, char *const *tw, int nt, const char *links,
                          const char *path, long line, nmt_err *err);
/* Each target word of a forced alignment counted with its most-attended source word (MODEL.md
 * section 6; the source EOS is no candidate), over the pair's words. */
int lex_counter_add_attention(lex_counter *c, const nmt_alignment *al, char *const *sw, int ns, char *const *tw,
                              int nt, nmt_err *err);
/* Writes the table: for each source word its top most frequent targets (ties: byte order), most
 * frequent first, sorted by source word; min_count drops pairs seen fewer times. *entries gets
 * the lines written. */
int lex_counter_write(const lex_counter *c, const char *path, long min_count, int top, long *entries, nmt_err *err);

/* The table's translation of a source word, NULL when it has none. */
const char *nmt_lexicon_lookup(const nmt_lexicon *lx, const char *src, size_t len);

#endif
