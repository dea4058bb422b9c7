/* request.h: the JSON of POST /translate. A request body is checked (UTF-8, JSON, known fields
 * of the right types and ranges) and becomes a serve_req; its texts go through the source-side
 * text pipeline; the translations come back as one JSON document. Every refusal is an HTTP
 * status with a message that names the field. */
#ifndef NMT_SERVE_REQUEST_H
#define NMT_SERVE_REQUEST_H

#include <stddef.h>

#include "nmt.h"

typedef struct req_limits {
    int max_texts;   /* texts per request */
    int max_words;   /* words per text after tokenization */
    int max_beam;
    int beam;        /* default beam when a request names none */
    long max_attention; /* attention weights an answer may hold, bounded before decoding */
    int split;       /* default of "split": cut texts into sentences (sentsplit.h) */
    int split_lang;  /* by the rules of this language (enum tok_lang) */
} req_limits;

typedef struct serve_req {
    int n;                 /* sentences: the texts, or with split the sentences of the texts */
    char **text;           /* [n] as sent (with split, each sentence cut out of its text) */
    int n_texts;           /* texts as sent */
    int *first;            /* [n_texts + 1] with split: text t is sentences first[t] .. first[t+1] - 1;
                              NULL without */
    nmt_sentence *sent;    /* [n] after the source pipeline (req_encode): ids, tokens, the words a
                              user sees and the word of each token; with their hints (req_encode_hints) */
    nmt_translate_opts o;  /* beam, n_best, normalize, length_alpha, no_unk, the sampling fields; attention if
                              either below */
    int attention;         /* the response carries the attention matrices */
    int alignment;         /* ... and Pharaoh links */
    int split;             /* the texts were cut into sentences */
    char model[65];        /* the model asked for by name; "" for the server's first */
    /* "prefix" and "constraints" (docs/SERVE.md), one entry per text as sent, then (req_encode_hints)
     * in the model's target tokens */
    char **prefix;         /* [n_prefix] NULL: none */
    int n_prefix;
    char ***phrases;       /* [n_cons][n_phrases[i]] */
    int *n_phrases, n_cons;
    int hinted;            /* a prefix or a phrase went into sent (req_encode_hints) */
} serve_req;

/* Parses body[0..len). Returns 0, or an HTTP status (400) with msg filled in. */
int req_parse(serve_req *r, const char *body, size_t len, const req_limits *lim, char *msg, size_t cap);
/* Runs each text through src (the model's source pipeline). Returns 0, or 400 (a text with
 * no words) / 413 (a text over lim->max_words, or attention that could pass
 * lim->max_attention) / 500 with msg. */
int req_encode(serve_req *r, nmt_text *src, const req_limits *lim, char *msg, size_t cap);
/* The name of sentence i of r as its sender knows it: "texts[2]", "the text", and with split
 * "sentence 3 of texts[2]" (a text of one sentence by its own name). */
void req_where(const serve_req *r, int i, char *buf, size_t cap);
/* A message that begins "sentence K" (the library's 1-based number of r's sentence K-1) begins
 * with that sentence's name (req_where) instead; other messages are left as they are. */
void req_name_sentence(const serve_req *r, char *msg, size_t cap);
/* The prefixes and constraint phrases into r's sentences through w (the model's target side, its
 * own text stages): 0, or 400 naming the entry that is empty or holds a token the model does not
 * know, 500. */
int req_encode_hints(serve_req *r, nmt_worker *w, char *msg, size_t cap);
void req_free(serve_req *r);

/* The response to r: {"translations": [...]} (see docs/SERVE.md), malloc'd, or NULL when out
 * of memory. tgt is the model's target pipeline (joining, detokenizing). */
char *req_response(const serve_req *r, const nmt_translation *tr, nmt_text *tgt);
/* Formats msg (cut to cap, a character cut in two dropped, so that it stays UTF-8) and returns
 * status: `return req_refuse(400, msg, cap, "...", ...)`. */
int req_refuse(int status, char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* {"error": {"status": status, "message": msg}}, malloc'd, or NULL; bytes of msg that are not
 * UTF-8 become U+FFFD. */
char *req_error_json(int status, const char *msg);

#endif
