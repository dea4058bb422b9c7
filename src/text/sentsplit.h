/* sentsplit.h: the sentences of a paragraph, by the rules of Moses' split-sentences.perl (a
 * sentence ends at ? or ! or a run of dots before a capital, possibly behind closing quotes or
 * brackets and before opening ones; a word ending in a period ends one before a capital or a
 * digit unless it is a non-breaking prefix of the language (tokenize.h) or an acronym such as
 * U.S.). Raw text in, byte spans out: nothing is allocated, nothing rewritten.
 *
 *     sent_span sp[64];
 *     int n = sent_split(TOK_LANG_EN, text, len, sp, 64);   // sentences; at most 64 written
 */
#ifndef NMT_TEXT_SENTSPLIT_H
#define NMT_TEXT_SENTSPLIT_H

#include <stddef.h>

typedef struct sent_span {
    size_t start, end; /* text[start..end): a sentence, without the blanks around it */
} sent_span;

/* Splits text[0..len) (UTF-8; an invalid byte counts as a letter of no case) into sentences,
 * for lang (enum tok_lang). Writes the first cap spans to out and returns how many sentences
 * there are (0 for blanks alone), which can be more than cap. */
int sent_split(int lang, const char *text, size_t len, sent_span *out, int cap);

#endif
