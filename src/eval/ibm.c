/* ibm.c: IBM Model 1 with fast_align's diagonal prior (Brown et al. 1993; Dyer et al. 2013),
 * trained by EM over a sparse t table, and its Viterbi alignments. The model and the data layout
 * are described in ibm.h; this file says how the work is arranged. The corpus is ibm_corpus.c,
 * symmetrisation ibm_sym.c. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "data/corpus.h"
#include "base/err.h"
#include "eval/ibm.h"
#include "text/words.h"

/* The E-step writes its posteriors for a run of consecutive sentence pairs (a chunk) into one
 * buffer before they are added to the counts in sentence order: about this many cells (one per
 * distinct conditioning word, NULL included, and distinct generated word of a pair) per chunk,
 * 24 MB of buffers; a longer pair gets a chunk of its own. */
#define CHUNK_CELLS ((size_t)1 << 20)
#define NOT_FOUND SIZE_MAX

ibm_opts ibm_opts_default(void)
{
    ibm_opts o;
    o.iterations = 5;
    o.model1_iterations = 1;
    o.favor_diagonal = 1;
    o.lambda = 4.0;
    o.p0 = 0.08;
    o.threads = 0;
    return o;
}

int ibm_opts_check(const ibm_opts *o, nmt_err *err)
{
    if (o->iterations < 0) return nmt_fail(err, NMT_ERR_ARG, "iterations %d: negative", o->iterations);
    if (o->model1_iterations < 0)
        return nmt_fail(err, NMT_ERR_ARG, "model1_iterations %d: negative", o->model1_iterations);
    if (!(o->lambda >= 0) || !isfinite(o->lambda))
        return nmt_fail(err, NMT_ERR_ARG, "lambda %g: must be finite and >= 0", o->lambda);
    if (!(o->p0 >= 0 && o->p0 < 1)) return nmt_fail(err, NMT_ERR_ARG, "p0 %g: must be in [0, 1)", o->p0);
    if (o->threads < 0) return nmt_fail(err, NMT_ERR_ARG, "threads %d: negative", o->threads);
    return NMT_OK;
}

/* ==== model ==================================================================================== */

struct ibm_model {
    const ibm_corpus *c;
    int gen, cond;      /* corpus sides of the generated (f) and the conditioning (e) words */
    ibm_opts o;
    int nthreads;       /* fixed at init: the per-thread scratch is sized for it */
    int iter;           /* EM iterations done */
    int diag;           /* the prior of the last iteration (of the first, before any) */
    long words;         /* generated words in trained pairs */
    /* t: row r = conditioning word r-1 (row 0 = NULL) holds the generated words seen with it,
     * sorted by id, in col[row_off[r] .. row_off[r+1]); t and count are parallel to col. */
    int rows;
    size_t *row_off;
    int *col;
    double *t, *count;
    size_t npairs;
    /* The distinct words of each pair, so that a word repeated in a sentence is looked up and
     * counted once (long noisy lines repeat many: it halves the work on wmt_enfr): pair k's
     * conditioning rows are urow[uoff[0][k] ..] (NULL first), its generated words ugen[uoff[1][k]
     * ..] (sorted, so that the searches in a row move forward); cmap and gmap, parallel to the
     * corpus ids, give each word's index in those lists. */
    long *uoff[2];
    int *urow, *ugen, *cmap, *gmap;
    /* E-step chunks: pairs chunk[h] .. chunk[h+1]-1 fill cells 0 .. chunk_cells[h]-1 of slot
     * (which t entry), tval (its t) and acc (its posterior summed over positions); pair k's
     * cells start at cell_off[k], one per (distinct conditioning row, distinct generated word). */
    long nchunks;
    long *chunk;
    size_t *chunk_cells, *cell_off;
    size_t *slot;
    double *tval, *acc;
    double *scratch;    /* [nthreads][max conditioning length + 1]: one word's posteriors */
    double *ll;         /* [n] log-likelihood of each pair, summed in order afterwards */
};

void ibm_model_free(ibm_model *m)
{
    if (!m) return;
    free(m->row_off);
    free(m->col);
    free(m->t);
    free(m->count);
    for (int s = 0; s < 2; s++) free(m->uoff[s]);
    free(m->urow);
    free(m->ugen);
    free(m->cmap);
    free(m->gmap);
    free(m->chunk);
    free(m->chunk_cells);
    free(m->cell_off);
    free(m->slot);
    free(m->tval);
    free(m->acc);
    free(m->scratch);
    free(m->ll);
    free(m);
}

static int threads_of(const ibm_opts *o) { return o->threads > 0 ? o->threads : backend_cpu()->threads(); }

static inline int pair_trained(const ibm_corpus *c, long k)
{
    return ibm_corpus_len(c, 0, k) > 0 && ibm_corpus_len(c, 1, k) > 0;
}

/* The t entry of (row, generated word f), NOT_FOUND if they never co-occur: a binary search
 * written so that the compiler can use conditional moves, since the E-step spends most of its
 * time here. It narrows [b, b+len) down to the last entry <= f. */
static inline size_t t_find(const ibm_model *m, int row, int f)
{
    size_t len = m->row_off[row + 1] - m->row_off[row];
    if (!len) return NOT_FOUND;
    const int *b = m->col + m->row_off[row];
    while (len > 1) {
        size_t half = len >> 1;
        b = b[half] <= f ? b + half : b;
        len -= half;
    }
    return *b == f ? (size_t)(b - m->col) : NOT_FOUND;
}

/* Builds the sorted rows of t without sorting: an inverted index lists, for each generated word
 * f, the trained pairs that hold it; visiting f in increasing order and appending f to the row
 * of every conditioning word (and NULL) of those pairs leaves every row sorted. `mark` keeps a
 * row from taking the same f twice. The first pass only counts, the second fills. */
static int build_rows(ibm_model *m, nmt_err *err)
{
    const ibm_corpus *c = m->c;
    int vg = c->voc[m->gen]->n, vc = c->voc[m->cond]->n;
    m->rows = vc + 1;
    long *occ_off = calloc((size_t)vg + 1, sizeof(long));
    long *last = malloc(sizeof(long) * (size_t)vg);
    int *mark = malloc(sizeof(int) * (size_t)m->rows);
    m->row_off = calloc((size_t)m->rows + 1, sizeof(size_t));
    long *occ = NULL;
    int rc = NMT_OK;
    if (!occ_off || !last || !mark || !m->row_off) goto oom;

    /* inverted index of the generated side, each pair once per word */
    for (int f = 0; f < vg; f++) last[f] = -1;
    for (long k = 0; k < c->n; k++) {
        if (!pair_trained(c, k)) continue;
        for (long x = c->off[m->gen][k]; x < c->off[m->gen][k + 1]; x++) {
            int f = c->ids[m->gen][x];
            if (last[f] != k) { last[f] = k; occ_off[f + 1]++; }
        }
    }
    for (int f = 0; f < vg; f++) occ_off[f + 1] += occ_off[f];
    occ = malloc(sizeof(long) * (size_t)(occ_off[vg] ? occ_off[vg] : 1));
    if (!occ) goto oom;
    for (int f = 0; f < vg; f++) last[f] = -1;
    for (long k = 0; k < c->n; k++) {
        if (!pair_trained(c, k)) continue;
        for (long x = c->off[m->gen][k]; x < c->off[m->gen][k + 1]; x++) {
            int f = c->ids[m->gen][x];
            if (last[f] != k) { last[f] = k; occ[occ_off[f]++] = k; }
        }
    }
    /* occ_off[f] now points past f's list, i.e. at the start of f+1's: shift back */
    for (int f = vg; f > 0; f--) occ_off[f] = occ_off[f - 1];
    occ_off[0] = 0;

    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r < m->rows; r++) mark[r] = -1;
        for (int f = 0; f < vg; f++) {
            for (long q = occ_off[f]; q < occ_off[f + 1]; q++) {
                long k = occ[q];
                for (long x = c->off[m->cond][k] - 1; x < c->off[m->cond][k + 1]; x++) {
                    /* x = off - 1 stands for NULL (row 0) */
                    int r = x < c->off[m->cond][k] ? 0 : c->ids[m->cond][x] + 1;
                    if (mark[r] == f) continue;
                    mark[r] = f;
                    if (pass == 0) m->row_off[r + 1]++;
                    else m->col[m->row_off[r]++] = f;
                }
            }
        }
        if (pass == 0) {
            for (int r = 0; r < m->rows; r++) m->row_off[r + 1] += m->row_off[r];
            m->npairs = m->row_off[m->rows];
            size_t np = m->npairs ? m->npairs : 1;
            m->col = malloc(sizeof(int) * np);
            m->t = malloc(sizeof(double) * np);
            m->count = malloc(sizeof(double) * np);
            if (!m->col || !m->t || !m->count) goto oom;
        } else {
            /* row_off[r] advanced to the end of row r: shift back as above */
            for (int r = m->rows; r > 0; r--) m->row_off[r] = m->row_off[r - 1];
            m->row_off[0] = 0;
        }
    }
    /* Uniform start: every t(f|e) = 1/(generated types seen), so that the first E-step's
     * posteriors are the prior alone (Brown et al.: any uniform start gives Model 1 the same
     * first iteration). Row 0 (NULL) holds every generated type seen. */
    size_t types = m->row_off[1] - m->row_off[0];
    for (size_t p = 0; p < m->npairs; p++) m->t[p] = 1.0 / (double)types;
    goto out;
oom:
    rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory for the t table (%zu word pairs)", m->npairs);
out:
    free(occ_off);
    free(last);
    free(mark);
    free(occ);
    return rc;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The distinct-word lists of every trained pair (see struct ibm_model). */
static int build_unique(ibm_model *m, nmt_err *err)
{
    const ibm_corpus *c = m->c;
    long n = c->n;
    int vc = c->voc[m->cond]->n, vg = c->voc[m->gen]->n, vmax = vc > vg ? vc : vg;
    size_t nc = (size_t)c->off[m->cond][n], ng = (size_t)c->off[m->gen][n];
    m->uoff[0] = malloc(sizeof(long) * (size_t)(n + 1));
    m->uoff[1] = malloc(sizeof(long) * (size_t)(n + 1));
    m->urow = malloc(sizeof(int) * (nc + (size_t)n + 1));
    m->ugen = malloc(sizeof(int) * (ng + 1));
    m->cmap = malloc(sizeof(int) * (nc + 1));
    m->gmap = malloc(sizeof(int) * (ng + 1));
    long *mark = malloc(sizeof(long) * (size_t)(vmax ? vmax : 1));
    int *pos = malloc(sizeof(int) * (size_t)(vmax ? vmax : 1));
    if (!m->uoff[0] || !m->uoff[1] || !m->urow || !m->ugen || !m->cmap || !m->gmap || !mark || !pos) {
        free(mark);
        free(pos);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for the word lists of %ld pairs", n);
    }
    long nr = 0, nu = 0;
    for (int side = 0; side < 2; side++) {
        for (int v = 0; v < vmax; v++) mark[v] = -1;
        for (long k = 0; k < n; k++) {
            m->uoff[side][k] = side ? nu : nr;
            if (!pair_trained(c, k)) continue;
            const int *w = side ? c->ids[m->gen] : c->ids[m->cond];
            long b = side ? c->off[m->gen][k] : c->off[m->cond][k];
            long e = side ? c->off[m->gen][k + 1] : c->off[m->cond][k + 1];
            if (side == 0) {
                /* NULL, then the words in order of first appearance */
                long first = nr;
                m->urow[nr++] = 0;
                for (long x = b; x < e; x++) {
                    if (mark[w[x]] != k) {
                        mark[w[x]] = k;
                        pos[w[x]] = (int)(nr - first);
                        m->urow[nr++] = w[x] + 1;
                    }
                    m->cmap[x] = pos[w[x]];
                }
            } else {
                long first = nu;
                for (long x = b; x < e; x++)
                    if (mark[w[x]] != k) { mark[w[x]] = k; m->ugen[nu++] = w[x]; }
                qsort(m->ugen + first, (size_t)(nu - first), sizeof(int), cmp_int);
                for (long q = first; q < nu; q++) pos[m->ugen[q]] = (int)(q - first);
                for (long x = b; x < e; x++) m->gmap[x] = pos[w[x]];
            }
        }
        m->uoff[side][n] = side ? nu : nr;
    }
    free(mark);
    free(pos);
    return NMT_OK;
}

/* Cells of pair k: one per distinct conditioning row (NULL included) and distinct generated
 * word. */
static size_t pair_cells(const ibm_model *m, long k)
{
    return (size_t)(m->uoff[0][k + 1] - m->uoff[0][k]) * (size_t)(m->uoff[1][k + 1] - m->uoff[1][k]);
}

static int build_chunks(ibm_model *m, nmt_err *err)
{
    long n = m->c->n;
    m->cell_off = malloc(sizeof(size_t) * (size_t)(n ? n : 1));
    m->ll = malloc(sizeof(double) * (size_t)(n ? n : 1));
    m->chunk = malloc(sizeof(long) * (size_t)(n + 1));
    m->chunk_cells = malloc(sizeof(size_t) * (size_t)(n ? n : 1));
    m->scratch = malloc(sizeof(double) * (size_t)m->nthreads * (size_t)(m->c->max_len[m->cond] + 1));
    if (!m->cell_off || !m->ll || !m->chunk || !m->chunk_cells || !m->scratch)
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for %ld sentence pairs", n);
    size_t cur = 0, max_cells = 1;
    m->nchunks = 0;
    for (long k = 0; k < n; k++) {
        size_t cells = pair_cells(m, k);
        if (k == 0 || (cur > 0 && cur + cells > CHUNK_CELLS)) {
            if (k > 0) m->chunk_cells[m->nchunks - 1] = cur;
            m->chunk[m->nchunks++] = k;
            cur = 0;
        }
        m->cell_off[k] = cur;
        cur += cells;
        if (cur > max_cells) max_cells = cur;
    }
    if (n > 0) m->chunk_cells[m->nchunks - 1] = cur;
    m->chunk[m->nchunks] = n;
    m->slot = malloc(sizeof(size_t) * max_cells);
    m->tval = malloc(sizeof(double) * max_cells);
    m->acc = malloc(sizeof(double) * max_cells);
    if (!m->slot || !m->tval || !m->acc)
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for %zu E-step cells", max_cells);
    return NMT_OK;
}

int ibm_model_init(ibm_model **out, const ibm_corpus *c, int reverse, const ibm_opts *o,
                   nmt_err *err)
{
    *out = NULL;
    int rc = ibm_opts_check(o, err);
    if (rc) return rc;
    ibm_model *m = calloc(1, sizeof *m);
    if (!m) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    m->c = c;
    m->gen = reverse ? 0 : 1;
    m->cond = reverse ? 1 : 0;
    m->o = *o;
    m->nthreads = threads_of(o);
    m->diag = o->favor_diagonal && o->model1_iterations == 0;
    for (long k = 0; k < c->n; k++)
        if (pair_trained(c, k)) m->words += ibm_corpus_len(c, m->gen, k);
    rc = build_rows(m, err);
    if (rc == 0) rc = build_unique(m, err);
    if (rc == 0) rc = build_chunks(m, err);
    if (rc) { ibm_model_free(m); return rc; }
    *out = m;
    return NMT_OK;
}

/* ==== EM ======================================================================================= */

/* E-step for pair k: for every generated word i, the posterior of each conditioning position
 * (post[0] = NULL), and which t entry it belongs to. Returns log p(f | e) of the pair, NaN if a
 * word's probability is not a positive finite number.
 *
 * Diagonal prior (Dyer et al. 2013, eq. 2-3), positions from 1:
 *     p(f_i) = p0 t(f_i|NULL) + (1 - p0) / Z * sum_j exp(-lambda |i/m - j/n|) t(f_i|e_j)
 * Plain Model 1 (Brown et al. 1993, eq. 16 with uniform alignment):
 *     p(f_i) = 1/(n+1) * sum_{j=0..n} t(f_i|e_j)
 * and the posterior of a_i = j is each term over their sum. */
static double estep_pair(const ibm_model *m, long k, int diag, size_t *slot, double *tval,
                         double *acc, double *post)
{
    const ibm_corpus *c = m->c;
    const int *urow = m->urow + m->uoff[0][k], *ugen = m->ugen + m->uoff[1][k];
    const int *cmap = m->cmap + c->off[m->cond][k], *gmap = m->gmap + c->off[m->gen][k];
    int nr = (int)(m->uoff[0][k + 1] - m->uoff[0][k]), nu = (int)(m->uoff[1][k + 1] - m->uoff[1][k]);
    int n = ibm_corpus_len(c, m->cond, k), mm = ibm_corpus_len(c, m->gen, k);
    if (!pair_trained(c, k)) return 0;
    /* Every t(f | e) of the pair once, one row of t at a time, the words of the row in increasing
     * order: successive searches share the row's upper levels in cache. */
    for (int r = 0; r < nr; r++)
        for (int q = 0; q < nu; q++) {
            size_t s = t_find(m, urow[r], ugen[q]);
            NMT_ASSERT(s != NOT_FOUND);
            slot[(size_t)r * nu + q] = s;
            tval[(size_t)r * nu + q] = m->t[s];
            acc[(size_t)r * nu + q] = 0;
        }
    double ll = 0, lambda = m->o.lambda, p0 = m->o.p0;
    for (int i = 0; i < mm; i++) {
        /* post[j]: the terms of p(f_i), j = 0 for NULL, then the posteriors */
        const double *tv = tval + gmap[i];
        double sum = 0, p, scale;
        post[0] = tv[0];
        for (int j = 1; j <= n; j++) post[j] = tv[(size_t)cmap[j - 1] * nu];
        if (diag) {
            double x = (double)(i + 1) / mm, z = 0;
            for (int j = 1; j <= n; j++) {
                double d = exp(-lambda * fabs(x - (double)j / n));
                post[j] *= d;
                z += d;
                sum += post[j];
            }
            double pnull = p0 * post[0];
            p = pnull + (1 - p0) * sum / z;
            if (!(p > 0) || !isfinite(p)) return NAN;
            post[0] = pnull / p;
            scale = (1 - p0) / (z * p);
        } else {
            for (int j = 0; j <= n; j++) sum += post[j];
            p = sum / (n + 1);
            if (!(p > 0) || !isfinite(p)) return NAN;
            post[0] /= sum;
            scale = 1 / sum;
        }
        double *ac = acc + gmap[i];
        ac[0] += post[0];
        for (int j = 1; j <= n; j++) ac[(size_t)cmap[j - 1] * nu] += post[j] * scale;
        ll += log(p);
    }
    return ll;
}

/* The loops below run on the backend's threads: each body gets a range of indices and its
 * thread's number. */
typedef struct em_job { const ibm_model *m; int diag; long k0; size_t stride; int *a; long first; } em_job;

/* E-step of pairs k0 + [lo, hi): each pair writes its own cells; nothing is shared but the
 * read-only t */
static void estep_body(void *ctx, long lo, long hi, int thread)
{
    const em_job *j = ctx;
    const ibm_model *m = j->m;
    double *post = m->scratch + j->stride * (size_t)thread;
    for (long k = j->k0 + lo; k < j->k0 + hi; k++) {
        size_t x = m->cell_off[k];
        m->ll[k] = estep_pair(m, k, j->diag, m->slot + x, m->tval + x, m->acc + x, post);
    }
}

/* M-step of rows [lo, hi) (Brown et al. 1993, eq. 17 normalised per e): rows are independent */
static void mstep_body(void *ctx, long lo, long hi, int thread)
{
    const ibm_model *m = ((const em_job *)ctx)->m;
    (void)thread;
    for (long r = lo; r < hi; r++) {
        double s = 0;
        for (size_t p = m->row_off[r]; p < m->row_off[r + 1]; p++) s += m->count[p];
        /* a row with no mass (p0 = 0 leaves NULL's empty) keeps its t */
        if (s > 0)
            for (size_t p = m->row_off[r]; p < m->row_off[r + 1]; p++) m->t[p] = m->count[p] / s;
    }
}

int ibm_model_em(ibm_model *m, ibm_iter_stats *st, nmt_err *err)
{
    const ibm_corpus *c = m->c;
    const backend_ops *bk = backend_cpu();
    int diag = m->o.favor_diagonal && m->iter >= m->o.model1_iterations, nt = m->nthreads;
    em_job job = {m, diag, 0, (size_t)m->c->max_len[m->cond] + 1, NULL, 0};
    memset(m->count, 0, sizeof(double) * m->npairs);
    for (long h = 0; h < m->nchunks; h++) {
        job.k0 = m->chunk[h];
        bk->parallel_for(m->chunk[h + 1] - m->chunk[h], 8, nt, estep_body, &job);
        /* Serial, in sentence order: the counts come out the same for any number of threads. */
        for (size_t x = 0; x < m->chunk_cells[h]; x++) m->count[m->slot[x]] += m->acc[x];
    }
    double ll = 0;
    for (long k = 0; k < c->n; k++) {
        if (isnan(m->ll[k]))
            return nmt_fail(err, NMT_ERR_NUMERIC,
                            "EM iteration %d: a word of sentence pair %ld has probability 0 or "
                            "not a number (t underflowed)", m->iter + 1, k + 1);
        ll += m->ll[k];
    }
    bk->parallel_for(m->rows, 64, nt, mstep_body, &job);
    m->iter++;
    m->diag = diag;
    if (st) {
        st->iteration = m->iter;
        st->diagonal = diag;
        st->loglik = ll;
        st->words = m->words;
        st->pairs = m->npairs;
    }
    return NMT_OK;
}

double ibm_model_t(const ibm_model *m, int cond, int gen)
{
    if (cond < -1 || cond + 1 >= m->rows || gen < 0) return 0;
    size_t p = t_find(m, cond + 1, gen);
    return p == NOT_FOUND ? 0 : m->t[p];
}

/* ==== Viterbi ================================================================================== */

/* a_i = argmax_j delta(j | i, m, n) t(f_i | e_j): the best real position is found on the
 * unnormalised terms, then compared with NULL's; on a tie NULL and then the lower position win. */
static void viterbi_pair(const ibm_model *m, long k, int *a)
{
    const ibm_corpus *c = m->c;
    const int *e = c->ids[m->cond] + c->off[m->cond][k], *f = c->ids[m->gen] + c->off[m->gen][k];
    int n = ibm_corpus_len(c, m->cond, k), mm = ibm_corpus_len(c, m->gen, k);
    for (int i = 0; i < mm; i++) {
        int fi = f[i], best = -1;
        size_t p = n > 0 ? t_find(m, 0, fi) : NOT_FOUND;
        double tn = p == NOT_FOUND ? 0 : m->t[p], bestv = 0, z = 0;
        double x = (double)(i + 1) / mm;
        for (int j = 0; j < n; j++) {
            double w = m->diag ? exp(-m->o.lambda * fabs(x - (double)(j + 1) / n)) : 1;
            size_t q = t_find(m, e[j] + 1, fi);
            double v = w * (q == NOT_FOUND ? 0 : m->t[q]);
            z += w;
            if (v > bestv) { bestv = v; best = j; }
        }
        if (best >= 0) {
            /* NULL's term against the best word's: p0 t_0 vs (1-p0) w t / Z, or t_0 vs t */
            double pnull = m->diag ? m->o.p0 * tn : tn, preal = m->diag ? (1 - m->o.p0) * bestv / z : bestv;
            if (!(preal > pnull)) best = -1;
        }
        a[i] = best;
    }
}

/* pairs first + [lo, hi), each into its own slice of a */
static void viterbi_body(void *ctx, long lo, long hi, int thread)
{
    const em_job *j = ctx;
    const long *off = j->m->c->off[j->m->gen];
    (void)thread;
    for (long k = j->first + lo; k < j->first + hi; k++) viterbi_pair(j->m, k, j->a + (off[k] - off[j->first]));
}

int ibm_model_viterbi(const ibm_model *m, long first, long count, int *a, nmt_err *err)
{
    const ibm_corpus *c = m->c;
    if (first < 0 || count < 0 || first + count > c->n)
        return nmt_fail(err, NMT_ERR_ARG, "pairs %ld..%ld: outside the corpus of %ld", first + 1,
                        first + count, c->n);
    em_job job = {m, m->diag, 0, 0, a, first};
    backend_cpu()->parallel_for(count, 16, m->nthreads, viterbi_body, &job);
    return NMT_OK;
}
