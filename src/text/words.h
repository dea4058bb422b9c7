/* words.h: the one word splitter. Tokenized text is words separated by runs of blanks, and the
 * blanks are the six ASCII white-space bytes of TEXT_BLANKS (C's isspace in the "C" locale):
 * training, translation, scoring, forced alignment, the IBM aligner and the lexicon all split
 * lines with it, so a word is the same thing everywhere; a vocabulary entry never holds a blank.
 * Any other byte, UTF-8 no-break spaces included, belongs to a word (the Moses tokenizer has
 * already turned Unicode white space into spaces where a text goes through it). */
#ifndef NMT_WORDS_H
#define NMT_WORDS_H

#include <stddef.h>

#define TEXT_BLANKS " \t\n\v\f\r"

static inline int text_is_blank(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* The next word of the NUL-terminated text at *p: returns its first byte and sets *len, and
 * moves *p past it; NULL (with *p at the end) when no word is left. */
static inline const char *text_next_word(const char **p, size_t *len)
{
    const char *s = *p;
    while (text_is_blank(*s)) s++;
    if (!*s) { *p = s; return NULL; }
    const char *e = s;
    while (*e && !text_is_blank(*e)) e++;
    *len = (size_t)(e - s);
    *p = e;
    return s;
}

/* Words in s. */
int text_count_words(const char *s);

/* Splits s in place: NUL-terminates every word and points words[0..max) at the first max of
 * them. Returns the number of words in s (which may pass max). */
int text_split_words(char *s, char **words, int max);

#endif
