/* rules.h: the optimizer rules of backend.h on one element i, shared by the CPU's loops
 * (cpu/update.c) and the CUDA kernels (cuda/update.cu), so that both compute each element by
 * the same expressions in the same order; g[i] is read and left zero. */
#ifndef NMT_RULES_H
#define NMT_RULES_H

#include <stddef.h>

#include "base/real.h"

#ifdef __CUDACC__
#define BK_HD __host__ __device__
#define BK_SQRT sqrtf /* real is float there (cuda_int.h) */
#else
#define BK_HD
#define BK_SQRT real_sqrt
#endif

static inline BK_HD void rule_adadelta(real *p, real *g, real *s0, real *s1, size_t i, real lr, real scale, real rho,
                                       real eps)
{
    real gi = g[i] * scale;
    g[i] = 0;
    s0[i] = rho * s0[i] + (1 - rho) * gi * gi;
    real d = BK_SQRT(s1[i] + eps) / BK_SQRT(s0[i] + eps) * gi;
    s1[i] = rho * s1[i] + (1 - rho) * d * d;
    p[i] -= lr * d;
}

static inline BK_HD void rule_adagrad(real *p, real *g, real *s0, size_t i, real lr, real scale, real eps)
{
    real gi = g[i] * scale;
    g[i] = 0;
    s0[i] += gi * gi;
    p[i] -= lr * gi / (BK_SQRT(s0[i]) + eps);
}

static inline BK_HD void rule_adam(real *p, real *g, real *s0, real *s1, size_t i, real lr, real scale, real b1,
                                   real b2, real c1, real c2, real eps)
{
    real gi = g[i] * scale;
    g[i] = 0;
    s0[i] = b1 * s0[i] + (1 - b1) * gi;
    s1[i] = b2 * s1[i] + (1 - b2) * gi * gi;
    p[i] -= lr * (s0[i] / c1) / (BK_SQRT(s1[i] / c2) + eps);
}

static inline BK_HD void rule_sgd(real *p, real *g, size_t i, real lr, real scale)
{
    p[i] -= lr * g[i] * scale;
    g[i] = 0;
}

#endif
