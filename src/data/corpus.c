/* corpus.c: reading corpora, counting words, building vocabularies and id sequences. Every
 * input error names the file and the line. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/corpus.h"
#include "base/err.h"
#include "text/linereader.h"
#include "data/pipeline.h"
#include "text/words.h"

/* Lines collected one by one: appended to one pool, remembered by offset since the pool moves
 * as it grows, and pointed at once all are in. */
typedef struct pool {
    char *buf;
    size_t cap, used;
    size_t *off;
    long n, off_cap;
} pool;

static int pool_add(pool *p, const char *s, size_t n)
{
    if (p->n == p->off_cap) {
        long nc = p->off_cap ? p->off_cap * 2 : 1024;
        size_t *no = realloc(p->off, sizeof *no * (size_t)nc);
        if (!no) return -1;
        p->off = no;
        p->off_cap = nc;
    }
    if (p->used + n + 1 > p->cap) {
        size_t nc = p->cap ? p->cap : 1 << 20;
        while (p->used + n + 1 > nc) nc *= 2;
        char *nb = realloc(p->buf, nc);
        if (!nb) return -1;
        p->buf = nb;
        p->cap = nc;
    }
    memcpy(p->buf + p->used, s, n);
    p->buf[p->used + n] = 0;
    p->off[p->n++] = p->used;
    p->used += n + 1;
    return 0;
}

/* Hands the pool's text to t (whose line array has room for p->n lines) and frees the rest. */
static void pool_to_textfile(pool *p, textfile *t)
{
    free(t->buf);
    t->buf = p->buf;
    t->nlines = p->n;
    for (long i = 0; i < p->n; i++) t->line[i] = p->buf + p->off[i];
    free(p->off);
    memset(p, 0, sizeof *p);
}

static void pool_free(pool *p)
{
    free(p->buf);
    free(p->off);
    memset(p, 0, sizeof *p);
}

/* Every line of the open reader r into t; r is freed. */
static int read_lines(textfile *t, linereader *r, const char *name, nmt_err *err)
{
    pool p = {0};
    char *s;
    size_t n;
    int rc;
    while ((rc = linereader_next(r, &s, &n, err)) == 1)
        if (pool_add(&p, s, n)) {
            rc = nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory", name);
            break;
        }
    linereader_free(r);
    if (!rc && (!(t->line = malloc(sizeof(char *) * (p.n ? p.n : 1))) || !(t->path = strdup(name))))
        rc = nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory", name);
    if (rc) {
        pool_free(&p);
        textfile_free(t);
        return rc;
    }
    pool_to_textfile(&p, t);
    return NMT_OK;
}

int textfile_read(textfile *t, const char *path, nmt_err *err)
{
    memset(t, 0, sizeof *t);
    linereader r;
    int rc = linereader_init(&r, path, LINEREADER_UTF8, err);
    return rc ? rc : read_lines(t, &r, path, err);
}

int textfile_read_fd(textfile *t, int fd, const char *name, nmt_err *err)
{
    memset(t, 0, sizeof *t);
    linereader r;
    int rc = linereader_init_fd(&r, fd, name, LINEREADER_UTF8, err);
    return rc ? rc : read_lines(t, &r, name, err);
}

void textfile_free(textfile *t)
{
    if (!t) return;
    free(t->path);
    free(t->buf);
    free(t->line);
    memset(t, 0, sizeof *t);
}

/* Said once per file: its first line that a Moses tokenizer seems to have written already. */
static void warn_tokenized(const textfile *t, nmt_text *tp)
{
    for (long i = 0; text_pipe_tokenizes(tp) && i < t->nlines; i++) {
        const char *mark = text_tokenized_mark(t->line[i], strlen(t->line[i]));
        if (!mark) continue;
        nmt_log('W', "%s:%ld: '%s' looks like tokenized text, which is tokenized again here (the model's text stages, or "
                "--tokenize): give raw text", t->path, i + 1, mark);
        return;
    }
}

int textfile_encode(textfile *t, nmt_text *tp, nmt_err *err)
{
    if (!text_pipe_has_stages(tp)) return NMT_OK;
    warn_tokenized(t, tp);
    pool p = {0};
    int rc = NMT_OK;
    for (long i = 0; i < t->nlines && !rc; i++) {
        const char *s;
        size_t n;
        int bad;
        nmt_err inner;
        if ((rc = text_pipe_line(tp, t->line[i], strlen(t->line[i]), &s, &n, &bad, &inner)))
            nmt_fail(err, rc, "%s:%ld: %s", t->path, i + 1, inner.msg);
        else if (pool_add(&p, s, n))
            rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    if (rc) pool_free(&p);
    else pool_to_textfile(&p, t); /* the encoded text takes the place of the raw text */
    return rc;
}

/* ------------------------------------------------------------------ word counts */
static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 1099511628211ULL; }
    return h;
}

static const wordcount *sort_wc;
static int cmp_count(const void *a, const void *b)
{
    long i = *(const long *)a, j = *(const long *)b;
    long ci = sort_wc->count[i], cj = sort_wc->count[j];
    if (ci != cj) return ci > cj ? -1 : 1;
    return strcmp(sort_wc->word[i], sort_wc->word[j]);
}

int wordcount_build(wordcount *wc, const textfile *t, nmt_err *err)
{
    memset(wc, 0, sizeof *wc);
    size_t tsize = 1 << 16, used = 0;
    long *slot = malloc(sizeof(long) * tsize); /* type index + 1, 0 = empty */
    long cap = 1 << 14;
    char **word = malloc(sizeof(char *) * cap);
    long *count = malloc(sizeof(long) * cap);
    if (!slot || !word || !count) goto oom;
    memset(slot, 0, sizeof(long) * tsize);
    for (long li = 0; li < t->nlines; li++) {
        const char *p = t->line[li], *s;
        size_t len;
        while ((s = text_next_word(&p, &len))) {
            size_t mask = tsize - 1, h = hash_bytes(s, len) & mask;
            while (slot[h] && !(strncmp(word[slot[h] - 1], s, len) == 0 && word[slot[h] - 1][len] == 0))
                h = (h + 1) & mask;
            wc->ntokens++;
            if (slot[h]) { count[slot[h] - 1]++; continue; }
            if ((long)used == cap) {
                cap *= 2;
                char **nw = realloc(word, sizeof(char *) * cap);
                if (nw) word = nw;
                long *nc = realloc(count, sizeof(long) * cap);
                if (nc) count = nc;
                if (!nw || !nc) goto oom;
            }
            word[used] = strndup(s, len);
            if (!word[used]) goto oom;
            count[used] = 1;
            slot[h] = (long)++used;
            if (used * 2 > tsize) { /* grow and rehash */
                size_t ns = tsize * 2;
                long *n2 = calloc(ns, sizeof(long));
                if (!n2) goto oom;
                for (size_t k = 0; k < used; k++) {
                    size_t h2 = hash_bytes(word[k], strlen(word[k])) & (ns - 1);
                    while (n2[h2]) h2 = (h2 + 1) & (ns - 1);
                    n2[h2] = (long)k + 1;
                }
                free(slot);
                slot = n2;
                tsize = ns;
            }
        }
    }
    free(slot);
    wc->ntypes = (long)used;
    wc->word = word;
    wc->count = count;
    /* sort types by (falling count, bytes), as the reference breaks ties */
    long *idx = malloc(sizeof(long) * (used ? used : 1));
    char **w2 = malloc(sizeof(char *) * (used ? used : 1));
    long *c2 = malloc(sizeof(long) * (used ? used : 1));
    if (!idx || !w2 || !c2) { free(idx); free(w2); free(c2); wordcount_free(wc); return nmt_fail(err, NMT_ERR_NOMEM, "out of memory counting words"); }
    for (size_t k = 0; k < used; k++) idx[k] = (long)k;
    sort_wc = wc;
    qsort(idx, used, sizeof(long), cmp_count);
    for (size_t k = 0; k < used; k++) { w2[k] = word[idx[k]]; c2[k] = count[idx[k]]; }
    free(idx);
    free(word);
    free(count);
    wc->word = w2;
    wc->count = c2;
    return NMT_OK;
oom:
    free(slot);
    for (size_t k = 0; word && k < used; k++) free(word[k]);
    free(word);
    free(count);
    memset(wc, 0, sizeof *wc);
    return nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory counting words", t->path);
}

void wordcount_free(wordcount *wc)
{
    if (!wc) return;
    for (long k = 0; k < wc->ntypes; k++) free(wc->word[k]);
    free(wc->word);
    free(wc->count);
    memset(wc, 0, sizeof *wc);
}

int vocab_from_counts(vocab **out, const wordcount *wc, int K, nmt_err *err)
{
    long nw = K - 2;
    if (nw > wc->ntypes) nw = wc->ntypes;
    /* The two reserved strings cannot collide with a corpus word of the same spelling: such a
     * word is skipped (it would map to the reserved id anyway). */
    const char **w = malloc(sizeof(char *) * (nw + 2));
    if (!w) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    int n = 0;
    w[n++] = VOCAB_EOS_STR;
    w[n++] = VOCAB_UNK_STR;
    for (long k = 0; k < wc->ntypes && n < nw + 2; k++)
        if (strcmp(wc->word[k], VOCAB_EOS_STR) && strcmp(wc->word[k], VOCAB_UNK_STR)) w[n++] = wc->word[k];
    int rc = vocab_from_words(out, w, n, err);
    free(w);
    return rc;
}

double wordcount_coverage(const wordcount *wc, int K)
{
    long cov = 0;
    for (long k = 0; k < wc->ntypes && k < K - 2; k++) cov += wc->count[k];
    return wc->ntokens ? (double)cov / wc->ntokens : 0;
}

/* ------------------------------------------------------------------ pairs */
void pairs_free(pairs *p)
{
    if (!p) return;
    free(p->src_off); free(p->tgt_off); free(p->src); free(p->tgt); free(p->line);
    free(p->link_off); free(p->link);
    memset(p, 0, sizeof *p);
}

/* One side of a pair as ids, EOS appended; returns the ids written. */
static long map_line(const char *line, const vocab *v, int *out, long *unk)
{
    int n;
    text_pipe_ids(v, line, out, INT_MAX, &n, unk);
    out[n] = VOCAB_EOS;
    return n + 1;
}

int pairs_build(pairs *p, const textfile *s, const textfile *t, const vocab *sv, const vocab *tv, int max_len,
                nmt_err *err)
{
    memset(p, 0, sizeof *p);
    if (s->nlines != t->nlines)
        return nmt_fail(err, NMT_ERR_MISMATCH, "%s has %ld lines but %s has %ld: a parallel corpus needs one line per sentence on each side",
                        s->path, s->nlines, t->path, t->nlines);
    long ns = 0, nt = 0, keep = 0;
    p->nlines = s->nlines;
    for (long i = 0; i < s->nlines; i++) {
        int a = text_count_words(s->line[i]), b = text_count_words(t->line[i]);
        if (!a || !b) { p->empty++; continue; }
        if (max_len && (a > max_len || b > max_len)) { p->too_long++; continue; }
        ns += a + 1;
        nt += b + 1;
        keep++;
    }
    if (keep > 2000000000L) return nmt_fail(err, NMT_ERR_ARG, "%s: more than 2e9 sentence pairs", s->path);
    p->src_off = malloc(sizeof(long) * (keep + 1));
    p->tgt_off = malloc(sizeof(long) * (keep + 1));
    p->src = malloc(sizeof(int) * (ns ? ns : 1));
    p->tgt = malloc(sizeof(int) * (nt ? nt : 1));
    p->line = malloc(sizeof(long) * (keep ? keep : 1));
    if (!p->src_off || !p->tgt_off || !p->src || !p->tgt || !p->line) {
        pairs_free(p);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for %ld sentence pairs", keep);
    }
    long so = 0, to = 0;
    int k = 0;
    for (long i = 0; i < s->nlines; i++) {
        int a = text_count_words(s->line[i]), b = text_count_words(t->line[i]);
        if (!a || !b || (max_len && (a > max_len || b > max_len))) continue;
        p->src_off[k] = so;
        p->tgt_off[k] = to;
        p->line[k] = i + 1;
        so += map_line(s->line[i], sv, p->src + so, &p->src_unk);
        to += map_line(t->line[i], tv, p->tgt + to, &p->tgt_unk);
        p->src_tokens += a;
        p->tgt_tokens += b;
        k++;
    }
    p->src_off[k] = so;
    p->tgt_off[k] = to;
    p->n = k;
    return NMT_OK;
}
