/* lexicon.c: counting aligned word pairs, writing the lexical table, and loading it for lookup.
 * Both use open-addressing hash tables keyed by the strings' FNV-1a hashes. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"
#include "base/err.h"
#include "data/corpus.h"
#include "decode/lexicon.h"

static uint64_t fnv(const char *s, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 1099511628211ULL; }
    return h;
}

/* ------------------------------------------------------------------ counting */
typedef struct pair_entry { char *src, *tgt; long count; } pair_entry;

struct lex_counter {
    pair_entry *e;
    size_t n, cap;
    size_t *slot;   /* index + 1, 0 = empty */
    size_t tsize;
};

lex_counter *lex_counter_init(void)
{
    lex_counter *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->tsize = 1 << 12;
    c->slot = calloc(c->tsize, sizeof(size_t));
    if (!c->slot) { free(c); return NULL; }
    return c;
}

void lex_counter_free(lex_counter *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) { free(c->e[i].src); free(c->e[i].tgt); }
    free(c->e);
    free(c->slot);
    free(c);
}

static uint64_t pair_hash(const char *s, size_t sl, const char *t, size_t tl)
{
    return fnv(t, tl, fnv("\t", 1, fnv(s, sl, 1469598103934665603ULL)));
}

int lex_counter_add(lex_counter *c, const char *src, size_t sl, const char *tgt, size_t tl)
{
    size_t mask = c->tsize - 1, h = pair_hash(src, sl, tgt, tl) & mask;
    while (c->slot[h]) {
        pair_entry *e = &c->e[c->slot[h] - 1];
        if (!strncmp(e->src, src, sl) && !e->src[sl] && !strncmp(e->tgt, tgt, tl) && !e->tgt[tl]) {
            e->count++;
            return 0;
        }
        h = (h + 1) & mask;
    }
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 1024;
        pair_entry *ne = realloc(c->e, nc * sizeof *ne);
        if (!ne) return -1;
        c->e = ne;
        c->cap = nc;
    }
    pair_entry *e = &c->e[c->n];
    e->src = strndup(src, sl);
    e->tgt = strndup(tgt, tl);
    if (!e->src || !e->tgt) { free(e->src); free(e->tgt); return -1; }
    e->count = 1;
    c->slot[h] = ++c->n;
    if (c->n * 2 > c->tsize) { /* grow and rehash */
        size_t ns = c->tsize * 2, *sl2 = calloc(ns, sizeof(size_t));
        if (!sl2) return -1;
        for (size_t i = 0; i < c->n; i++) {
            size_t q = pair_hash(c->e[i].src, strlen(c->e[i].src), c->e[i].tgt, strlen(c->e[i].tgt)) & (ns - 1);
            while (sl2[q]) q = (q + 1) & (ns - 1);
            sl2[q] = i + 1;
        }
        free(c->slot);
        c->slot = sl2;
        c->tsize = ns;
    }
    return 0;
}

/* w[i], or NULL when i is outside [0, n) */
static const char *word_at(char *const *w, int n, long i) { return i >= 0 && i < n ? w[i] : NULL; }

int lex_counter_add_links(lex_counter *c, char *const *sw, int ns, char *const *tw, int nt, const char *links,
                          const char *path, long line, nmt_err *err)
{
    for (const char *p = links; *p;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        char *e, *after;
        long a = strtol(p, &e, 10), b = -1;
        if (e != p && *e == '-') {
            b = strtol(e + 1, &after, 10);
            p = after;
        }
        const char *x = word_at(sw, ns, a), *y = word_at(tw, nt, b);
        if (b < 0 || p == e + 1 || (*p && *p != ' ' && *p != '\t') || !x || !y)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: bad link or index out of range near '%.20s'", path, line, e);
        if (lex_counter_add(c, x, strlen(x), y, strlen(y))) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    return NMT_OK;
}

int lex_counter_add_attention(lex_counter *c, const nmt_alignment *al, char *const *sw, int ns, char *const *tw,
                              int nt, nmt_err *err)
{
    int cols = al->n_src + 1;
    for (int i = 0; i < al->n_tgt && i < nt && al->n_src > 0; i++) {
        const float *row = al->attention + (size_t)i * cols;
        int best = 0;
        for (int j = 1; j < al->n_src; j++)
            if (row[j] > row[best]) best = j;
        if (best < ns && lex_counter_add(c, sw[best], strlen(sw[best]), tw[i], strlen(tw[i])))
            return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    return NMT_OK;
}

static int by_src_count(const void *a, const void *b)
{
    const pair_entry *x = a, *y = b;
    int r = strcmp(x->src, y->src);
    if (r) return r;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->tgt, y->tgt);
}

int lex_counter_write(const lex_counter *c, const char *path, long min_count, int top, long *entries, nmt_err *err)
{
    pair_entry *s = malloc(sizeof(pair_entry) * (c->n ? c->n : 1));
    if (!s) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    memcpy(s, c->e, sizeof(pair_entry) * c->n);
    qsort(s, c->n, sizeof *s, by_src_count);
    /* a file is replaced whole (a full disk leaves the old table, not a truncated one that
     * --unk-replace would accept) */
    atomic_file af = {0};
    FILE *f = stdout;
    if (strcmp(path, "-")) {
        int rc = atomic_open(&af, path, err);
        if (rc) { free(s); return rc; }
        f = af.fp;
    }
    long k = 0;
    for (size_t i = 0; i < c->n;) {
        size_t j = i;
        long total = 0;
        while (j < c->n && !strcmp(s[j].src, s[i].src)) total += s[j++].count;
        /* a source word's run is sorted by falling count: its first top pairs are its best */
        for (size_t q = i; q < j && q < i + (size_t)top && s[q].count >= min_count; q++) {
            fprintf(f, "%s\t%s\t%ld\t%ld\n", s[q].src, s[q].tgt, s[q].count, total);
            k++;
        }
        i = j;
    }
    free(s);
    if (f != stdout) {
        int rc = atomic_commit(&af, err);
        if (rc) return rc;
    } else if (ferror(f) || fflush(f) != 0) {
        return nmt_fail(err, NMT_ERR_IO, "%s: write error", path);
    }
    if (entries) *entries = k;
    return NMT_OK;
}

/* ------------------------------------------------------------------ lookup */
struct nmt_lexicon {
    textfile file;     /* the table's lines, split in place */
    char **src, **tgt;
    long n;
    long *slot;
    size_t tsize;
};

void nmt_lexicon_free(nmt_lexicon *lx)
{
    if (!lx) return;
    textfile_free(&lx->file);
    free(lx->src);
    free(lx->tgt);
    free(lx->slot);
    free(lx);
}

int nmt_lexicon_load(nmt_lexicon **out, const char *path, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_lexicon_load", out, path);
    if (bad) return bad;
    *out = NULL;
    nmt_lexicon *lx = calloc(1, sizeof *lx);
    if (!lx) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    int rc = textfile_read(&lx->file, path, err);
    if (rc) { free(lx); return rc; }
    long n = lx->file.nlines;
    lx->src = malloc(sizeof(char *) * (n ? n : 1));
    lx->tgt = malloc(sizeof(char *) * (n ? n : 1));
    lx->tsize = 16;
    while (lx->tsize < (size_t)n * 2) lx->tsize <<= 1;
    lx->slot = calloc(lx->tsize, sizeof(long));
    if (!lx->src || !lx->tgt || !lx->slot) { nmt_lexicon_free(lx); return nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); }
    for (long i = 0; i < n; i++) {
        char *line = lx->file.line[i], *t1 = strchr(line, '\t');
        char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!*line) continue; /* blank lines are allowed */
        if (!t1 || t1 == line || (t2 ? t2 == t1 + 1 : !t1[1])) {
            nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: expected 'source<TAB>target[<TAB>counts]'", path, i + 1);
            nmt_lexicon_free(lx);
            return NMT_ERR_FORMAT;
        }
        *t1 = 0;
        if (t2) *t2 = 0;
        size_t mask = lx->tsize - 1, h = fnv(line, strlen(line), 1469598103934665603ULL) & mask;
        int dup = 0;
        while (lx->slot[h]) {
            if (!strcmp(lx->src[lx->slot[h] - 1], line)) { dup = 1; break; }
            h = (h + 1) & mask;
        }
        if (dup) {
            nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: source word '%s' listed twice", path, i + 1, line);
            nmt_lexicon_free(lx);
            return NMT_ERR_FORMAT;
        }
        lx->src[lx->n] = line;
        lx->tgt[lx->n] = t1 + 1;
        lx->slot[h] = ++lx->n;
    }
    *out = lx;
    return NMT_OK;
}

const char *nmt_lexicon_lookup(const nmt_lexicon *lx, const char *src, size_t len)
{
    if (!lx) return NULL;
    size_t mask = lx->tsize - 1;
    for (size_t h = fnv(src, len, 1469598103934665603ULL) & mask; lx->slot[h]; h = (h + 1) & mask) {
        const char *s = lx->src[lx->slot[h] - 1];
        if (!strncmp(s, src, len) && !s[len]) return lx->tgt[lx->slot[h] - 1];
    }
    return NULL;
}
