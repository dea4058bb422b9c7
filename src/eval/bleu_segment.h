/* bleu_segment.h: one BLEU segment after sacreBLEU's preprocessing (bleu_text.c), as the n-gram
 * counting of bleu.c reads it. Internal to the BLEU files. */
#ifndef NMT_BLEU_SEGMENT_H
#define NMT_BLEU_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "eval/bleu.h"

/* A growable array of code points. */
typedef struct cpbuf {
    uint32_t *v;
    size_t n, cap;
} cpbuf;

/* One segment as BLEU sees it: its code points after tokenization and its tokens' spans. */
typedef struct segment {
    cpbuf text;
    size_t *tok_off, *tok_len;
    uint32_t *ids; /* token ids, equal ids for equal tokens across the segment's hyp and refs */
    size_t ntok;
} segment;

/* sacreBLEU's BLEU._preprocess_segment: lower(), rstrip(), tokenize; then str.split(). */
int segment_init(segment *s, const char *line, const bleu_opts *o, nmt_err *err);
void segment_free(segment *s);

#endif
