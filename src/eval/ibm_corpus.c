/* ibm_corpus.c: the IBM aligner's corpus (ibm.h): both sides' vocabularies over every word and
 * each line as ids, words split as everywhere else in nmt. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "data/corpus.h"
#include "base/err.h"
#include "eval/ibm.h"
#include "text/words.h"

void ibm_corpus_free(ibm_corpus *c)
{
    if (!c) return;
    for (int s = 0; s < 2; s++) {
        free(c->off[s]);
        free(c->ids[s]);
        vocab_free(c->voc[s]);
    }
    memset(c, 0, sizeof *c);
}

/* One side: a vocabulary over all its words (wordcount + vocab, so that words are split exactly
 * as everywhere else in nmt), then every line as ids. */
static int corpus_side(ibm_corpus *c, int s, const char *const *lines, long n, nmt_err *err)
{
    /* wordcount_build reads a textfile; this one only points at the caller's lines, which it
     * never writes (hence the cast). */
    textfile view;
    memset(&view, 0, sizeof view);
    view.path = s ? "target side" : "source side";
    view.nlines = n;
    view.line = (char **)lines;
    wordcount wc;
    int rc = wordcount_build(&wc, &view, err);
    if (rc) return rc;
    if (wc.ntypes > INT_MAX - 2) {
        wordcount_free(&wc);
        return nmt_fail(err, NMT_ERR_NOMEM, "%s: too many distinct words", view.path);
    }
    rc = vocab_from_counts(&c->voc[s], &wc, (int)wc.ntypes + 2, err);
    wordcount_free(&wc);
    if (rc) return rc;

    size_t total = 0, maxchars = 0;
    int maxtok = 0;
    for (long k = 0; k < n; k++) {
        int nt = text_count_words(lines[k]);
        size_t len = strlen(lines[k]);
        total += (size_t)nt;
        if (nt > maxtok) maxtok = nt;
        if (len > maxchars) maxchars = len;
    }
    c->max_len[s] = maxtok;
    c->off[s] = malloc(sizeof(long) * (size_t)(n + 1));
    c->ids[s] = malloc(sizeof(int) * (total ? total : 1));
    char *buf = malloc(maxchars + 1);
    char **tok = malloc(sizeof(char *) * (size_t)(maxtok ? maxtok : 1));
    if (!c->off[s] || !c->ids[s] || !buf || !tok) {
        free(buf);
        free(tok);
        return nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory for %zu words", view.path, total);
    }
    long pos = 0;
    for (long k = 0; k < n; k++) {
        c->off[s][k] = pos;
        /* splitting writes NULs: split a copy */
        memcpy(buf, lines[k], strlen(lines[k]) + 1);
        int nt = text_split_words(buf, tok, maxtok);
        for (int w = 0; w < nt; w++) c->ids[s][pos++] = vocab_id(c->voc[s], tok[w], strlen(tok[w]));
    }
    c->off[s][n] = pos;
    free(buf);
    free(tok);
    return NMT_OK;
}

int ibm_corpus_init(ibm_corpus *c, const char *const *src, const char *const *tgt, long n,
                    nmt_err *err)
{
    memset(c, 0, sizeof *c);
    if (n < 0) return nmt_fail(err, NMT_ERR_ARG, "negative number of sentence pairs");
    c->n = n;
    int rc = corpus_side(c, 0, src, n, err);
    if (rc == 0) rc = corpus_side(c, 1, tgt, n, err);
    if (rc) ibm_corpus_free(c);
    return rc;
}

int ibm_corpus_word(const ibm_corpus *c, int side, const char *word)
{
    if (side < 0 || side > 1 || !c->voc[side]) return -1;
    return vocab_find(c->voc[side], word, strlen(word));
}
