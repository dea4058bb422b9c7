/* pipeline.h: the text pipeline (nmt_text in nmt.h) and its two halves as the rest of the library
 * calls them one at a time: the text stages of a line (training runs them over whole corpora
 * before it counts words) and words -> ids (training's sentence pairs, translation and forced
 * decoding). Every conversion between text and ids in nmt goes through this module, so that a
 * further stage (subword segmentation, say) is added in one place. */
#ifndef NMT_PIPELINE_H
#define NMT_PIPELINE_H

#include <stddef.h>

#include "nmt.h"
#include "data/vocab.h"

struct subwords;

/* 1 when t has a stage that changes text (tokenizing); 0 when its lines are taken as they are. */
int text_pipe_has_stages(const nmt_text *t);
/* 1 when a and b turn text into the same words: the same tokenizer, language, lowercasing,
 * punctuation normalization, splitting and escapes (detokenizing is an output stage, not compared). */
int text_stages_same(const nmt_text_opts *a, const nmt_text_opts *b);
/* 1 when t runs the Moses tokenizer over its lines. */
int text_pipe_tokenizes(const nmt_text *t);
/* The first mark of text a Moses tokenizer wrote in line[0..len) (its escapes "&apos;" and
 * "&quot;", its aggressive split " @-@ "), or NULL: tokenized again, such text gets its escapes
 * escaped (&amp; apos ;), words the model never saw. Raw text rarely holds them. */
const char *text_tokenized_mark(const char *line, size_t len);

/* The text stages of nmt_text_encode on line[0..len): the result in *out (NUL-terminated, *out_len
 * bytes, valid until the next call on t) and the invalid UTF-8 bytes replaced in *n_invalid.
 * Errors are the tokenizer's (no memory, a line over TOK_MAX_LINE), without file or line. */
int text_pipe_text(nmt_text *t, const char *line, size_t len, const char **out, size_t *out_len, int *n_invalid,
                   nmt_err *err);

/* The line as the model reads it: text_pipe_text's result, then for a subword pipeline its
 * pieces joined by spaces. The same arguments and lifetime. */
int text_pipe_line(nmt_text *t, const char *line, size_t len, const char **out, size_t *out_len, int *n_invalid,
                   nmt_err *err);

/* A pipeline over one side (enum nmt_side) of sw, which must outlive it; ids index v (may be
 * NULL when only text is wanted: decoding then refuses). stages 1: the text stages stored in sw
 * run first (raw text in, raw text out); 0: lines are taken as the stages' output already (a
 * training corpus encoded before its SentencePiece model existed). */
int text_pipe_init_subwords(nmt_text **out, const struct subwords *sw, int side, const vocab *v, int stages, nmt_err *err);

/* nmt_text_init_model's pipeline from the parts of a model's side (NMT_SOURCE or NMT_TARGET): its vocabulary
 * v, its subword units sw (NULL for a word model) and the text stages stored in a word model
 * trained on raw text (stored, NULL for one that stores none), all outliving the pipeline. */
int text_pipe_init_side(nmt_text **out, const nmt_text_opts *o, const vocab *v, const struct subwords *sw,
                        const nmt_text_opts *stored, int side, nmt_err *err);

/* Text stages alone, with no vocabulary, where a subword model's text goes through them before
 * its SentencePiece model exists: lowercasing and punctuation normalization may run without
 * the tokenizer. */
int text_pipe_init_stages(nmt_text **out, const nmt_text_opts *o, nmt_err *err);

/* The words of s mapped to ids through v (UNK for unknown words), the first cap of them kept in
 * ids[0..*kept); *unk grows by the UNKs kept. Returns the number of words in s. */
int text_pipe_ids(const vocab *v, const char *s, int *ids, int cap, int *kept, long *unk);

#endif
