/* optim.c: clipping and updates (MODEL.md section 4: "if the L2 norm of the whole gradient
 * exceeds 1, rescale it to norm 1", then Adadelta with ρ 0.95, ε 1e-6):
 *   E[g²] = ρE[g²] + (1-ρ)g²,  Δ = sqrt(E[Δ²] + ε) / sqrt(E[g²] + ε) · g,
 *   E[Δ²] = ρE[Δ²] + (1-ρ)Δ²,  p -= lr · Δ. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "optim.h"

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

void optim_free(optim *o)
{
    if (!o) return;
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
            double s = 0;
            size_t e = (c + 1) * CH < n ? (c + 1) * CH : n;
            for (size_t i = c * CH; i < e; i++) s += (double)g[i] * g[i];
            part[c - c0] = s;
        }
        for (size_t c = c0; c < c1; c++) total += part[c - c0];
    }
    return sqrt(total);
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
    real scale = clip > 0 && nrm > clip ? (real)(clip / nrm) : 1;
    size_t n = o->n;
    real lr = (real)o->lr, rho = (real)o->rho, eps = (real)o->eps;
    o->step++;
    switch (o->kind) {
    case OPT_ADADELTA:
#pragma omp parallel for simd schedule(static)
        for (size_t i = 0; i < n; i++) {
            real gi = g[i] * scale;
            g[i] = 0;
            o->s1[i] = rho * o->s1[i] + (1 - rho) * gi * gi;
            real d = rsqrt_(o->s2[i] + eps) / rsqrt_(o->s1[i] + eps) * gi;
            o->s2[i] = rho * o->s2[i] + (1 - rho) * d * d;
            p[i] -= lr * d;
        }
        break;
    case OPT_ADAGRAD:
#pragma omp parallel for simd schedule(static)
        for (size_t i = 0; i < n; i++) {
            real gi = g[i] * scale;
            g[i] = 0;
            o->s1[i] += gi * gi;
            p[i] -= lr * gi / (rsqrt_(o->s1[i]) + eps);
        }
        break;
    case OPT_ADAM: {
        real b1 = (real)o->beta1, b2 = (real)o->beta2;
        real c1 = (real)(1 - pow(o->beta1, (double)o->step)), c2 = (real)(1 - pow(o->beta2, (double)o->step));
#pragma omp parallel for simd schedule(static)
        for (size_t i = 0; i < n; i++) {
            real gi = g[i] * scale;
            g[i] = 0;
            o->s1[i] = b1 * o->s1[i] + (1 - b1) * gi;
            o->s2[i] = b2 * o->s2[i] + (1 - b2) * gi * gi;
            p[i] -= lr * (o->s1[i] / c1) / (rsqrt_(o->s2[i] / c2) + eps);
        }
        break;
    }
    default:
#pragma omp parallel for simd schedule(static)
        for (size_t i = 0; i < n; i++) {
            p[i] -= lr * g[i] * scale;
            g[i] = 0;
        }
    }
    return NMT_OK;
}
