/* optim.c: clipping and updates (MODEL.md section 4: "if the L2 norm of the whole gradient
 * exceeds 1, rescale it to norm 1", then Adadelta with ρ 0.95, ε 1e-6):
 *   E[g²] = ρE[g²] + (1-ρ)g²,  Δ = sqrt(E[Δ²] + ε) / sqrt(E[g²] + ε) · g,
 *   E[Δ²] = ρE[Δ²] + (1-ρ)Δ²,  p -= lr · Δ. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "nn/model.h"
#include "train/optim.h"
#include "backend/cpu/vec.h"

static const char *names[] = {"adadelta", "adagrad", "adam", "sgd"};

int optim_parse(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, names[i])) return i;
    return -1;
}

const char *optim_name(int kind) { return kind >= 0 && kind < 4 ? names[kind] : "unknown"; }

int optim_init(optim *o, int kind, size_t n, nmt_err *err)
{
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->n = n;
    o->rho = 0.95;
    o->eps = kind == OPT_ADAM ? 1e-8 : kind == OPT_ADAGRAD ? 1e-10 : 1e-6;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->lr = kind == OPT_ADADELTA ? 1.0 : kind == OPT_ADAGRAD ? 0.01 : kind == OPT_ADAM ? 0.001 : 0.1;
    int nstate = kind == OPT_ADADELTA || kind == OPT_ADAM ? 2 : kind == OPT_ADAGRAD ? 1 : 0;
    if (nstate >= 1 && !(o->s1 = calloc(n, sizeof(real)))) goto oom;
    if (nstate >= 2 && !(o->s2 = calloc(n, sizeof(real)))) goto oom;
    return NMT_OK;
oom:
    optim_free(o);
    return nmt_fail(err, NMT_ERR_NOMEM, "cannot allocate optimizer state for %zu parameters", n);
}

int optim_sparse_rows(optim *o, size_t off, int rows, int cols, nmt_err *err)
{
    if (o->nsparse == 4) return nmt_fail(err, NMT_ERR_ARG, "too many row-sparse regions");
    size_t end = off + (size_t)(rows > 0 ? rows : 0) * (size_t)(cols > 0 ? cols : 0);
    if (rows < 0 || cols < 0 || off > o->n || end > o->n)
        return nmt_fail(err, NMT_ERR_ARG, "row-sparse region [%zu, %zu) outside the %zu parameters", off, end, o->n);
    for (int i = 0; i < o->nsparse; i++) { /* optim_step walks the regions in order: no overlap */
        const struct optim_rows *q = &o->sparse[i];
        if (off < q->off + (size_t)q->rows * q->cols && q->off < end)
            return nmt_fail(err, NMT_ERR_ARG, "row-sparse region [%zu, %zu) overlaps another", off, end);
    }
    unsigned *lag = calloc(rows > 0 ? rows : 1, sizeof(unsigned));
    if (!lag) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    int i = o->nsparse++;
    for (; i > 0 && o->sparse[i - 1].off > off; i--) o->sparse[i] = o->sparse[i - 1]; /* kept in order */
    o->sparse[i] = (struct optim_rows){off, rows, cols, lag};
    return NMT_OK;
}

int optim_sparse_embeddings(optim *o, const param_table *pt, nmt_err *err)
{
    const char *names_[2] = {"Es", "Et"};
    for (int i = 0; i < 2; i++) {
        const tensor_info *t = param_table_find(pt, names_[i]);
        int rc = t ? optim_sparse_rows(o, t->offset, t->rows, t->cols, err) : NMT_OK;
        if (rc) return rc;
    }
    return NMT_OK;
}

/* row r of region q pays its owed decays */
static void settle_row(optim *o, const struct optim_rows *q, int r)
{
    unsigned k = q->lag[r];
    if (!k) return;
    real rho = (real)o->rho, *a = o->s1 + q->off + (size_t)r * q->cols, *b = o->s2 + q->off + (size_t)r * q->cols;
    for (unsigned t = 0; t < k; t++)
        for (int j = 0; j < q->cols; j++) {
            a[j] = rho * a[j];
            b[j] = rho * b[j];
        }
    q->lag[r] = 0;
}

void optim_settle(optim *o)
{
    for (int i = 0; i < o->nsparse; i++) {
        const struct optim_rows *q = &o->sparse[i];
#pragma omp parallel for schedule(static)
        for (int r = 0; r < q->rows; r++) settle_row(o, q, r);
    }
}

void optim_free(optim *o)
{
    if (!o) return;
    for (int i = 0; i < o->nsparse; i++) free(o->sparse[i].lag);
    o->nsparse = 0;
    free(o->s1);
    free(o->s2);
    o->s1 = o->s2 = NULL;
}

double grad_norm(const real *g, size_t n)
{
    /* Fixed chunks summed in a fixed order: the same bits whatever the thread count, so a
     * resumed run clips exactly as an uninterrupted one. */
    enum { CH = 1 << 16 };
    size_t nch = (n + CH - 1) / CH;
    double part[256], total = 0;
    for (size_t c0 = 0; c0 < nch; c0 += 256) {
        size_t c1 = nch - c0 < 256 ? nch : c0 + 256;
#pragma omp parallel for schedule(static)
        for (size_t c = c0; c < c1; c++) {
            /* eight running sums (lane i mod 8), added in a fixed tree: one sum would wait on
             * its own latency at every element; eight vectorise */
            double acc[8] = {0}, s = 0;
            size_t i = c * CH, e = (c + 1) * CH < n ? (c + 1) * CH : n;
            for (; i + 8 <= e; i += 8)
                for (int k = 0; k < 8; k++) acc[k] += (double)g[i + k] * g[i + k];
            for (; i < e; i++) s += (double)g[i] * g[i];
            part[c - c0] = (((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))) + s;
        }
        for (size_t c = c0; c < c1; c++) total += part[c - c0];
    }
    return sqrt(total);
}

/* what one step needs besides the arrays */
typedef struct step_k { real lr, rho, eps, b1, b2, c1, c2, scale; } step_k;

/* The update of parameters [lo, hi); g is read and left zero. */
static void update_span(optim *o, const step_k *k, real *p, real *g, size_t lo, size_t hi)
{
    real *s1 = o->s1, *s2 = o->s2, lr = k->lr, scale = k->scale;
    switch (o->kind) {
    case OPT_ADADELTA: {
        real rho = k->rho, eps = k->eps;
#pragma omp simd
        for (size_t i = lo; i < hi; i++) {
            real gi = g[i] * scale;
            g[i] = 0;
            s1[i] = rho * s1[i] + (1 - rho) * gi * gi;
            real d = rsqrt_(s2[i] + eps) / rsqrt_(s1[i] + eps) * gi;
            s2[i] = rho * s2[i] + (1 - rho) * d * d;
            p[i] -= lr * d;
        }
        break;
    }
    case OPT_ADAGRAD: {
        real eps = k->eps;
#pragma omp simd
        for (size_t i = lo; i < hi; i++) {
            real gi = g[i] * scale;
            g[i] = 0;
            s1[i] += gi * gi;
            p[i] -= lr * gi / (rsqrt_(s1[i]) + eps);
        }
        break;
    }
    case OPT_ADAM: {
        real b1 = k->b1, b2 = k->b2, c1 = k->c1, c2 = k->c2, eps = k->eps;
#pragma omp simd
        for (size_t i = lo; i < hi; i++) {
            real gi = g[i] * scale;
            g[i] = 0;
            s1[i] = b1 * s1[i] + (1 - b1) * gi;
            s2[i] = b2 * s2[i] + (1 - b2) * gi * gi;
            p[i] -= lr * (s1[i] / c1) / (rsqrt_(s2[i] / c2) + eps);
        }
        break;
    }
    default:
#pragma omp simd
        for (size_t i = lo; i < hi; i++) {
            p[i] -= lr * g[i] * scale;
            g[i] = 0;
        }
    }
}

/* dense span [lo, hi), in blocks over the threads */
static void update_dense(optim *o, const step_k *k, real *p, real *g, size_t lo, size_t hi)
{
    enum { BLK = 1 << 14 };
    size_t nb = (hi - lo + BLK - 1) / BLK;
#pragma omp parallel for schedule(static)
    for (size_t b = 0; b < nb; b++) update_span(o, k, p, g, lo + b * BLK, lo + b * BLK + BLK < hi ? lo + b * BLK + BLK : hi);
}

/* every element is ±0: the bits without the sign, OR-ed together, eight at a time */
static int row_is_zero(const real *g, int n)
{
    int j = 0;
#if NMT_SIMD
    __m256 acc = _mm256_setzero_ps(), mag = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (; j + 8 <= n; j += 8) acc = _mm256_or_ps(acc, _mm256_and_ps(_mm256_loadu_ps(g + j), mag));
    __m256i bits = _mm256_castps_si256(acc); /* an integer test: denormals count even under DAZ */
    if (!_mm256_testz_si256(bits, bits)) return 0;
#endif
    for (; j < n; j++)
        if (g[j] != 0) return 0;
    return 1;
}

int optim_step(optim *o, real *p, real *g, double clip, double *norm)
{
    double nrm = grad_norm(g, o->n);
    if (norm) *norm = nrm;
    if (!isfinite(nrm)) {
#pragma omp parallel for simd schedule(static)
        for (size_t i = 0; i < o->n; i++) g[i] = 0;
        return NMT_ERR_NUMERIC;
    }
    o->step++;
    step_k k = {(real)o->lr, (real)o->rho, (real)o->eps, (real)o->beta1, (real)o->beta2,
                (real)(1 - pow(o->beta1, (double)o->step)), (real)(1 - pow(o->beta2, (double)o->step)),
                clip > 0 && nrm > clip ? (real)(clip / nrm) : 1};
    int lazy = o->kind != OPT_ADAM; /* Adam moves rows whose gradient is zero */
    size_t at = 0;
    for (int i = 0; lazy && i < o->nsparse; i++) {
        const struct optim_rows *q = &o->sparse[i];
        update_dense(o, &k, p, g, at, q->off);
        /* the touched rows are the frequent words, at low ids: hand rows out in small chunks */
#pragma omp parallel for schedule(dynamic, 64)
        for (int r = 0; r < q->rows; r++) {
            size_t lo = q->off + (size_t)r * q->cols;
            if (row_is_zero(g + lo, q->cols)) {
                if (o->kind == OPT_ADADELTA) q->lag[r]++; /* AdaGrad and SGD leave such a row as it is */
                continue;
            }
            if (o->kind == OPT_ADADELTA) settle_row(o, q, r);
            update_span(o, &k, p, g, lo, lo + q->cols);
        }
        at = q->off + (size_t)q->rows * q->cols;
    }
    update_dense(o, &k, p, g, at, o->n);
    return NMT_OK;
}
