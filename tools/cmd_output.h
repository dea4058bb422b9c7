/* cmd_output.h: how `nmt translate` writes its answers: the 1-best line, or n-best lines in the
 * format Marian and Moses tools read (id ||| text ||| features ||| score), with alignments over the
 * printed words and per-token scores (docs/CLI.md, "What `nmt translate` writes"). */
#ifndef NMT_CMD_OUTPUT_H
#define NMT_CMD_OUTPUT_H

#include <stddef.h>

#include "cmd_models.h"
#include "nmt.h"

enum { ALIGN_NONE, ALIGN_HARD, ALIGN_SOFT };

/* What the answers show and what they are made with; zeroed, then the fields above the line set. */
typedef struct out_fmt {
    nmt_text *tgt;       /* output tokens -> printed text (the command's target pipeline) */
    nmt_decoder *d;      /* the search's decoder: word scores by forced decoding */
    nmt_decoder *model_d[MAX_MODELS]; /* an ensemble's models alone (n_models > 1): one feature each */
    int n_models;
    int align, scores, nbest, word_scores;
    /* ---- the formatter's own, grown as needed and kept from one batch to the next */
    nmt_text *unesc;     /* a word alone through the detokenizer: its printed form */
    float *att;          /* a hypothesis's attention over printed words */
    size_t att_cap;
    int *wmap;           /* [tokens]: token -> printed word */
    size_t wmap_cap;
    int *pmap;           /* [text words]: text word -> printed word */
    size_t pmap_cap;
    const char **fsrc, **ftgt; /* the batch's forced-decoding pairs, one per hypothesis printed */
    char *fbuf;          /* their target tokens */
    size_t fsrc_cap, ftgt_cap, fbuf_cap;
    nmt_alignment *fal;  /* [n_fal]: by d, for word scores */
    int n_fal;
    double *feat;        /* [pairs][n_models]: each model's log-probability */
    size_t feat_cap;
} out_fmt;

/* Writes the answers of nb inputs on stdout: tr[i] translated src[i] (the tokens the models read),
 * src_words[i] its token -> word map, first the 0-based index of tr[0]. */
int cmd_out_batch(out_fmt *o, char *const *src, const nmt_translation *tr, const nmt_word_map *src_words, int nb, long first,
              nmt_err *err);
/* Frees what cmd_out_batch grew (not tgt, d or model_d, which are the caller's). */
void cmd_out_free(out_fmt *o);

#endif
