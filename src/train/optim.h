/* optim.h: gradient clipping and the optimizers (Adadelta of Appendix B, AdaGrad of Feng et al.,
 * Adam, SGD), each one entry of a table in optim.c: its name, how many state tensors it keeps,
 * its default hyper-parameters, the backend rule that updates, and whether rows whose gradient
 * is zero may be skipped. State tensors have the parameters' layout; checkpoints save each as
 * optim.<name>.<i>. */
#ifndef NMT_OPTIM_H
#define NMT_OPTIM_H

#include <stddef.h>

#include "nmt.h"
#include "backend/backend.h"
#include "base/real.h"

/* indices into the table; the numbers are nmt_train_opts.optimizer's */
enum optim_kind { OPT_ADADELTA = 0, OPT_ADAGRAD = 1, OPT_ADAM = 2, OPT_SGD = 3 };
#define OPTIM_MAX_STATE 2

typedef struct optim {
    int kind;
    const backend_ops *b; /* the model's backend: where the state lives and the updates run */
    double lr;          /* Adadelta: 1 in the paper; AdaGrad 0.01; Adam 0.001 */
    double lr_scale;    /* this update's factor on lr (optim_schedule); 1 */
    double rho, eps;    /* Adadelta ρ = 0.95, ε = 1e-6 (MODEL.md section 4) */
    double beta1, beta2;/* Adam */
    long step;          /* updates applied */
    size_t n;
    real *state[OPTIM_MAX_STATE]; /* read through optim_state */
    /* Row-sparse regions (the embedding matrices: a batch touches a few hundred of their rows).
     * A row whose gradient is all zero is left alone: under Adadelta its only change would be
     * each state times ρ, which is owed (lag) and paid, one multiplication at a time as the
     * eager loop would, when the row is next touched or optim_settle runs. The result is the
     * eager update's bits; Adam moves untouched rows, so it updates them as dense. */
    int nsparse;
    struct optim_rows { size_t off; int rows, cols; unsigned *lag; } sparse[4];
} optim;

int optim_parse(const char *name);      /* -1 when unknown */
const char *optim_name(int kind);       /* "unknown" when out of range */
int optim_kind_states(int kind);        /* state tensors the kind keeps (0 when unknown) */
/* Paper defaults for the kind; then allocates zeroed state for n parameters. */
int optim_init(optim *o, const bk_ctx *x, int kind, size_t n, nmt_err *err);
void optim_free(optim *o);

/* The state tensors: count, and the i-th (n reals; NULL when i is out of range). */
int optim_state_count(const optim *o);
real *optim_state(const optim *o, int i);
/* The i-th state tensor's name in a checkpoint, "optim.<name>.<i>"; legacy != 0 gives the name
 * checkpoints of the earlier format used, so that they still resume. */
void optim_state_name(const optim *o, int i, int legacy, char *buf, size_t size);

/* Marks g[off, off + rows·cols) as row-sparse (at most 4 regions, not overlapping). */
int optim_sparse_rows(optim *o, size_t off, int rows, int cols, nmt_err *err);
/* The model's row-sparse regions: the embedding matrices Es and Et. */
struct param_table;
int optim_sparse_embeddings(optim *o, const struct param_table *pt, nmt_err *err);
/* Pays every owed decay, so that the state holds what eager updates would have left (before a
 * checkpoint saves it). */
void optim_settle(optim *o);

/* The learning-rate factor of update u (1-based) under Marian's schedules: a linear warm-up
 * u / warmup over the first warmup updates, then with decay_inv_sqrt = D > 0 the factor
 * sqrt(D / u) once u passes D; 1 when both are 0. The step uses lr · factor. */
double optim_schedule(long u, long warmup, long decay_inv_sqrt);

/* L2 norm of g[0..n), accumulated in double. */
double grad_norm(const backend_ops *b, const real *g, size_t n);

/* One update: if the global norm of g exceeds clip (> 0), g is rescaled to norm clip; then the
 * optimizer's step with the learning rate lr · lr_scale. A non-finite norm changes no parameter and returns NMT_ERR_NUMERIC.
 * *norm (optional) receives the norm before clipping. Either way g is left all zeros, ready for
 * the next update's gradients (zeroed in the same pass that reads it, sparing a pass of its own). */
int optim_step(optim *o, real *p, real *g, double clip, double *norm);

#endif
