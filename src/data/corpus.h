/* corpus.h: plain-text parallel corpora: one sentence per line, words separated by blanks
 * (text/words.h), UTF-8. Reads and checks files (invalid UTF-8 reported as file:line), builds shortlist
 * vocabularies from counts, and maps sentence pairs to id sequences ending in EOS with the
 * length filter of Appendix B. */
#ifndef NMT_CORPUS_H
#define NMT_CORPUS_H

#include <stddef.h>

#include "nmt.h"
#include "data/vocab.h"
#include "text/words.h"

/* A text file in memory: lines NUL-terminated in place, words split at use. */
typedef struct textfile {
    char *path;
    char *buf;
    long nlines;
    char **line;        /* [nlines] */
} textfile;

/* Every line of path (text/linereader.h: no NUL byte, valid UTF-8, a final "\r" dropped, gzip
 * data decompressed). */
int textfile_read(textfile *t, const char *path, nmt_err *err);
/* The same from an open descriptor (standard input), named name in messages; fd stays open. */
int textfile_read_fd(textfile *t, int fd, const char *name, nmt_err *err);
void textfile_free(textfile *t);
/* Replaces every line by the line the model reads through tp (text_pipe_line: raw text
 * Moses-tokenized as the model's data was, pieces for a subword pipeline); nothing to do when tp
 * has no stage. */
int textfile_encode(textfile *t, nmt_text *tp, nmt_err *err);

/* The word count of text/words.h under its former name, for src/eval/report.c until it includes
 * text/words.h itself. */
static inline int count_tokens(const char *line) { return text_count_words(line); }

/* Word counts over one side of a corpus. */
typedef struct wordcount {
    long ntypes;        /* distinct words */
    long ntokens;
    char **word;        /* [ntypes], sorted by falling count, then byte order */
    long *count;
} wordcount;

int wordcount_build(wordcount *wc, const textfile *t, nmt_err *err);
void wordcount_free(wordcount *wc);
/* The K-word shortlist (K counts EOS and UNK; fewer if the corpus has fewer types). */
int vocab_from_counts(vocab **out, const wordcount *wc, int K, nmt_err *err);
/* Share of the corpus's tokens that a K-word shortlist covers. */
double wordcount_coverage(const wordcount *wc, int K);

/* Sentence pairs as ids, each sentence followed by EOS. */
typedef struct pairs {
    int n;
    long *src_off, *tgt_off;  /* [n+1] into the id arrays */
    int *src, *tgt;
    long *line;               /* [n] 1-based line number of each pair in the files */
    long nlines, empty, too_long;
    long src_tokens, tgt_tokens, src_unk, tgt_unk; /* words kept, EOS not counted */
    /* guided alignment (data/links.h), NULL without: pair k's links are link[2·link_off[k] ..
     * 2·link_off[k+1]), each (source word, target word), sorted by target then source */
    long *link_off;
    int *link;
} pairs;

/* max_len 0 = no limit (words, EOS not counted). Files must have equal line counts. */
int pairs_build(pairs *p, const textfile *s, const textfile *t, const vocab *sv, const vocab *tv, int max_len,
                nmt_err *err);
void pairs_free(pairs *p);
static inline int pair_src_len(const pairs *p, int i) { return (int)(p->src_off[i + 1] - p->src_off[i]); }
static inline int pair_tgt_len(const pairs *p, int i) { return (int)(p->tgt_off[i + 1] - p->tgt_off[i]); }

#endif
