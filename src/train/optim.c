/* optim.c: clipping and updates (MODEL.md section 4: "if the L2 norm of the whole gradient
 * exceeds 1, rescale it to norm 1", then Adadelta with ρ 0.95, ε 1e-6):
 *   E[g²] = ρE[g²] + (1-ρ)g²,  Δ = sqrt(E[Δ²] + ε) / sqrt(E[g²] + ε) · g,
 *   E[Δ²] = ρE[Δ²] + (1-ρ)Δ²,  p -= lr · Δ.
 * lr is the base rate times the schedule's factor of the update (optim_schedule: Marian's
 * --lr-warmup and --lr-decay-inv-sqrt; docs/TRAINING.md).
 * The optimizers are rows of a table; the loops over parameters are the backend's update
 * kernels (backend.h lists each rule's formulas). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "base/err.h"
#include "nn/model.h"
#include "train/optim.h"

typedef struct optim_def {
    const char *name;
    int nstate;                     /* state tensors, each of the parameters' size */
    double lr, rho, eps, b1, b2;    /* defaults */
    int rule;                       /* the backend's update rule: update (dense), update_rows (lazy) */
    int lazy;                       /* a row whose gradient is all zero may be skipped */
    int decays;                     /* ... yet its state decays by ρ each step: owed, paid later */
} optim_def;

/* Adam moves rows whose gradient is zero (its moments carry on), so it is never lazy; AdaGrad
 * and SGD leave such a row as it is; Adadelta's averages decay. */
static const optim_def defs[] = {
    [OPT_ADADELTA] = {"adadelta", 2, 1.0, 0.95, 1e-6, 0.9, 0.999, BK_ADADELTA, 1, 1},
    [OPT_ADAGRAD] = {"adagrad", 1, 0.01, 0.95, 1e-10, 0.9, 0.999, BK_ADAGRAD, 1, 0},
    [OPT_ADAM] = {"adam", 2, 0.001, 0.95, 1e-8, 0.9, 0.999, BK_ADAM, 0, 0},
    [OPT_SGD] = {"sgd", 0, 0.1, 0.95, 1e-6, 0.9, 0.999, BK_SGD, 1, 0},
};
enum { NDEFS = sizeof defs / sizeof defs[0] };

static const optim_def *def_of(int kind) { return kind >= 0 && kind < NDEFS ? &defs[kind] : NULL; }

int optim_parse(const char *name)
{
    for (int i = 0; i < NDEFS; i++)
        if (!strcmp(name, defs[i].name)) return i;
    return -1;
}

const char *optim_name(int kind) { return def_of(kind) ? defs[kind].name : "unknown"; }

int optim_kind_states(int kind) { return def_of(kind) ? defs[kind].nstate : 0; }

int optim_init(optim *o, const bk_ctx *x, int kind, size_t n, nmt_err *err)
{
    memset(o, 0, sizeof *o);
    o->b = x->b;
    const optim_def *d = def_of(kind);
    if (!d) return nmt_fail(err, NMT_ERR_ARG, "unknown optimizer %d", kind);
    o->kind = kind;
    o->n = n;
    o->lr = d->lr;
    o->lr_scale = 1;
    o->rho = d->rho;
    o->eps = d->eps;
    o->beta1 = d->b1;
    o->beta2 = d->b2;
    for (int i = 0; i < d->nstate; i++)
        if (!(o->state[i] = o->b->alloc(sizeof(real) * n))) {
            optim_free(o);
            return nmt_fail(err, NMT_ERR_NOMEM, "cannot allocate optimizer state for %zu parameters", n);
        }
    return NMT_OK;
}

int optim_state_count(const optim *o) { return optim_kind_states(o->kind); }

real *optim_state(const optim *o, int i) { return i >= 0 && i < optim_state_count(o) ? o->state[i] : NULL; }

void optim_state_name(const optim *o, int i, int legacy, char *buf, size_t size)
{
    if (legacy) snprintf(buf, size, "opt.s%d", i + 1); /* the format before states were named per optimizer */
    else snprintf(buf, size, "optim.%s.%d", optim_name(o->kind), i);
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
    unsigned *lag = o->b->alloc(sizeof(unsigned) * (rows > 0 ? rows : 1));
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

void optim_settle(optim *o)
{
    const optim_def *d = def_of(o->kind);
    if (!d || !d->decays) return; /* nothing is ever owed */
    for (int i = 0; i < o->nsparse; i++) {
        const struct optim_rows *q = &o->sparse[i];
        o->b->settle_rows(o->state, d->nstate, (real)o->rho, q->off, q->rows, q->cols, q->lag);
    }
}

void optim_free(optim *o)
{
    if (!o || !o->b) return; /* never initialised: nothing held */
    const backend_ops *bk = o->b;
    for (int i = 0; i < o->nsparse; i++) bk->free(o->sparse[i].lag);
    o->nsparse = 0;
    for (int i = 0; i < OPTIM_MAX_STATE; i++) {
        bk->free(o->state[i]);
        o->state[i] = NULL;
    }
}

double optim_schedule(long u, long warmup, long decay_inv_sqrt)
{
    double f = 1;
    if (warmup > 0 && u < warmup) f = (double)u / (double)warmup;
    if (decay_inv_sqrt > 0 && u > decay_inv_sqrt) f *= sqrt((double)decay_inv_sqrt / (double)u);
    return f;
}

double grad_norm(const backend_ops *b, const real *g, size_t n) { return sqrt(b->sumsq(g, n)); }

int optim_step(optim *o, real *p, real *g, double clip, double *norm)
{
    const backend_ops *bk = o->b;
    const optim_def *d = def_of(o->kind);
    double nrm = grad_norm(o->b, g, o->n);
    if (norm) *norm = nrm;
    if (!isfinite(nrm) || !d) {
        for (size_t at = 0; at < o->n; at += INT_MAX) /* rows of at most INT_MAX */
            bk->zero_rows(g + at, 0, 1, (int)(o->n - at < INT_MAX ? o->n - at : INT_MAX));
        return NMT_ERR_NUMERIC;
    }
    o->step++;
    bk_hyper h = {(real)(o->lr * o->lr_scale), (real)o->rho, (real)o->eps, (real)o->beta1, (real)o->beta2,
                  (real)(1 - pow(o->beta1, (double)o->step)), (real)(1 - pow(o->beta2, (double)o->step)),
                  clip > 0 && nrm > clip ? (real)(clip / nrm) : 1};
    size_t at = 0;
    for (int i = 0; d->lazy && i < o->nsparse; i++) {
        const struct optim_rows *q = &o->sparse[i];
        bk->update(d->rule, &h, p, g, o->state, at, q->off);
        bk->update_rows(d->rule, &h, p, g, o->state, d->nstate, q->off, q->rows, q->cols, d->decays ? q->lag : NULL);
        at = q->off + (size_t)q->rows * q->cols;
    }
    bk->update(d->rule, &h, p, g, o->state, at, o->n);
    return NMT_OK;
}
