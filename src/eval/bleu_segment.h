/* bleu_segment.h: one segment after sacreBLEU's preprocessing (bleu_text.c), as the n-gram
 * counting of bleu.c and the edit distance of ter.c read it: BLEU's tokenizers and TER's
 * tercom one. Internal to the BLEU and TER files. */
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

/* One segment as a metric sees it: its code points after tokenization and its tokens' spans. */
typedef struct segment {
    cpbuf text;
    size_t *tok_off, *tok_len;
    uint32_t *ids; /* token ids, equal ids for equal tokens across the segment's hyp and refs */
    size_t ntok;
} segment;

/* How a line becomes a segment. */
enum seg_tok {
    SEG_TOK_13A,    /* BLEU's tokenizers (enum bleu_tokenize, same order) */
    SEG_TOK_INTL,
    SEG_TOK_NONE,
    SEG_TOK_TERCOM  /* TER's normalisation (sacreBLEU's TercomTokenizer with normalized=True) */
};
typedef struct seg_prep {
    enum seg_tok tok;
    int lowercase; /* Python str.lower() first */
    int no_punct;  /* TER's no_punct: drop . , ? : ; ! " ( ) after tokenizing */
} seg_prep;

/* rstrip(), lower() if asked, tokenize; then str.split() into tokens (ids not yet set). */
int segment_init(segment *s, const char *line, const seg_prep *p, nmt_err *err);
void segment_free(segment *s);

/* The hypothesis and every present (non-NULL) reference of one line as segments: (*segs)[0] the
 * hypothesis, then the references in order, *nseg in all, token ids shared among them. Errors
 * name the input ("reference 2: invalid UTF-8 at byte 7"); at least one reference is required.
 * Free with segments_free. */
int segments_init(segment **segs, int *nseg, const char *hyp, const char *const *refs, int nrefs,
                  const seg_prep *p, nmt_err *err);
void segments_free(segment *segs, int nseg);

/* The tokens joined by single spaces, as a malloc'ed UTF-8 string. */
int segment_join(char **out, const segment *s, nmt_err *err);

#endif
