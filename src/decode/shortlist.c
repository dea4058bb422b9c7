/* shortlist.c: loading a lexical shortlist from the TSV of `nmt lex` ("source<TAB>target[<TAB>
 * count<TAB>source count]", any number of lines per source word) against a model's
 * vocabularies, and choosing a batch's set. A source word's translations are ranked by count
 * (ties, or a table without counts: in the file's order). The F most frequent target words are
 * ids 2 .. F+1: a word model's target vocabulary lists its words by falling frequency after EOS
 * and UNK (data/vocab.h); a subword model's lists SentencePiece's pieces in its own order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "data/corpus.h"
#include "data/vocab.h"
#include "decode/shortlist.h"
#include "nn/model.h"

typedef struct pair { int s, t; long count, line; } pair;

static int by_source_rank(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* One line into *p (p->s < 0 when a word is not the model's: the line is skipped); NMT_ERR_FORMAT
 * naming path:line for a malformed one. Splits the line in place. */
static int parse_line(pair *p, char *line, long no, const nmt_model *m, const char *path, nmt_err *err)
{
    char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    if (!t1 || t1 == line || t1[1] == 0 || t2 == t1 + 1)
        return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: expected 'source<TAB>target[<TAB>count<TAB>source count]'", path, no);
    *t1 = 0;
    p->count = 1;
    if (t2) {
        *t2 = 0;
        char *end;
        errno = 0;
        p->count = strtol(t2 + 1, &end, 10);
        size_t len = strcspn(t2 + 1, "\t");
        if (end == t2 + 1 || (*end && *end != '\t') || errno || p->count < 1)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: count '%.*s' is not a positive integer", path, no,
                            (int)(len < 40 ? len : 40), t2 + 1);
    }
    p->s = vocab_find(m->src, line, strlen(line));
    p->t = vocab_find(m->tgt, t1 + 1, strlen(t1 + 1));
    p->line = no;
    if (p->t < 0) p->s = -1; /* an unknown target word would be UNK, which is always in */
    return NMT_OK;
}

/* The ranked pairs into sl's lists: at most k distinct targets per source word. */
static int lists_build(nmt_shortlist *sl, pair *p, long n, nmt_err *err)
{
    qsort(p, n, sizeof *p, by_source_rank);
    sl->off = calloc((size_t)sl->nsrc + 1, sizeof(int));
    sl->tgt = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!sl->off || !sl->tgt) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    int used = 0;
    for (long i = 0; i < n;) {
        long j = i;
        int s = p[i].s, first = used;
        for (; j < n && p[j].s == s; j++) {
            int dup = 0;
            for (int q = first; q < used && !dup; q++) dup = sl->tgt[q] == p[j].t;
            if (!dup && used - first < sl->k) sl->tgt[used++] = p[j].t;
        }
        sl->off[s + 1] = used - first;
        i = j;
    }
    for (int s = 0; s < sl->nsrc; s++) sl->off[s + 1] += sl->off[s];
    return NMT_OK;
}

void nmt_shortlist_free(nmt_shortlist *sl)
{
    if (!sl) return;
    free(sl->off);
    free(sl->tgt);
    free(sl);
}

int nmt_shortlist_load(nmt_shortlist **out, const char *path, const nmt_model *m, int k, int f, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_shortlist_load", out, path, m);
    if (bad) return bad;
    *out = NULL;
    if (k < 0 || f < 0) return nmt_fail(err, NMT_ERR_ARG, "shortlist: K %d and F %d must not be negative", k, f);
    textfile tf;
    int rc = textfile_read(&tf, path, err);
    if (rc) return rc;
    nmt_shortlist *sl = calloc(1, sizeof *sl);
    pair *p = malloc(sizeof *p * (size_t)(tf.nlines ? tf.nlines : 1));
    if (!sl || !p) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    long n = 0;
    for (long i = 0; !rc && i < tf.nlines; i++) {
        if (!tf.line[i][0]) continue; /* blank lines are allowed */
        if (!(rc = parse_line(&p[n], tf.line[i], i + 1, m, path, err)) && p[n].s >= 0) n++;
    }
    if (!rc) {
        *sl = (nmt_shortlist){.k = k, .f = f, .nsrc = m->cfg.src_vocab, .ntgt = m->cfg.tgt_vocab};
        rc = lists_build(sl, p, n, err);
    }
    free(p);
    textfile_free(&tf);
    if (rc) nmt_shortlist_free(sl);
    else *out = sl;
    return rc;
}

int shortlist_select(const nmt_shortlist *sl, const batch *src, const int *extra, int nextra, int *ids,
                     unsigned char *mark)
{
    int V = sl->ntgt, top = sl->f < V - 2 ? sl->f + 2 : V; /* f + 2 could overflow */
    memset(mark, 0, V);
    memset(mark, 1, top); /* EOS, UNK and the F most frequent words */
    for (int s = 0; s < src->B; s++)
        for (int t = 0; t < src->xlen[s]; t++) {
            int w = src->x[t * src->B + s];
            for (int q = sl->off[w]; q < sl->off[w + 1]; q++) mark[sl->tgt[q]] = 1;
        }
    for (int i = 0; i < nextra; i++) mark[extra[i]] = 1;
    int n = 0;
    for (int v = 0; v < V; v++)
        if (mark[v]) ids[n++] = v;
    return n;
}
