/* fdcheck.h: central finite differences in float64 against an analytic gradient, shared by the
 * gradient-check programs (test_*_f64.c): every element of a tensor nudged both ways. */
#ifndef NMT_FDCHECK_H
#define NMT_FDCHECK_H

#include <math.h>
#include <stdio.h>

#include "base/real.h"

#define EPS 1e-6
/* float64 central differences with EPS = 1e-6 err by ~1e-10; a wrong term errs by O(|g|). */
#define ABS_TOL 1e-7
#define REL_TOL 1e-6

typedef double (*loss_fn)(void *ctx);

/* Compares analytic[i] with the central difference of f over x[i] for every element; returns
 * the number of mismatches (the first three printed), and *maxrel the largest relative error
 * seen. quiet (a fault self-test, which only asks whether a mismatch exists) prints nothing and
 * stops at the first mismatch. */
static inline int fd_compare(const char *what, real *x, size_t n, const real *analytic, loss_fn f, void *ctx,
                             double *maxrel, int quiet)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        real keep = x[i];
        x[i] = keep + EPS;
        double lp = f(ctx);
        x[i] = keep - EPS;
        double lm = f(ctx);
        x[i] = keep;
        double num = (lp - lm) / (2 * EPS), an = analytic[i], diff = fabs(num - an);
        double scale = fmax(fabs(num), fabs(an));
        double rel = scale > 1e-4 ? diff / scale : diff; /* near zero, judge absolutely */
        if (rel > *maxrel) *maxrel = rel;
        if (diff > ABS_TOL + REL_TOL * scale) {
            if (quiet) return 1;
            if (bad < 3) fprintf(stderr, "  %s[%zu]: analytic %.10g, numeric %.10g\n", what, i, an, num);
            bad++;
        }
    }
    return bad;
}

#endif
