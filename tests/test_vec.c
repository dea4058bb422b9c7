/* test_vec.c: the vectorised exp, tanh and sigmoid of vec.h against libm in double precision
 * over their whole useful range, and the array forms (tails, in-place use, NaN, the max scan
 * and the double-accumulated exp-sum) against plain loops. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "backend/cpu/vec.h"

/* error in units of the float spacing at the true value (floored at FLT_MIN) */
static double ulps(double got, double want)
{
    double a = fabs(want) > FLT_MIN ? fabs(want) : FLT_MIN;
    int e;
    frexp(a, &e);
    return fabs(got - want) / ldexp(1.0, e - 24);
}

typedef void (*vfun)(real *, const real *, int);

/* worst error of f over a dense grid on [lo, hi]; also the worst absolute error */
static void sweep(vfun f, double (*ref)(double), double lo, double hi, double *worst_ulp, double *worst_abs)
{
    enum { N = 200003 };
    real *x = malloc(sizeof(real) * N), *y = malloc(sizeof(real) * N);
    for (int i = 0; i < N; i++) x[i] = (real)(lo + (hi - lo) * i / (N - 1));
    f(y, x, N);
    *worst_ulp = 0; *worst_abs = 0;
    for (int i = 0; i < N; i++) {
        double want = ref(x[i]), u = ulps(y[i], want), d = fabs(y[i] - want);
        if (u > *worst_ulp) *worst_ulp = u;
        if (d > *worst_abs) *worst_abs = d;
    }
    free(x); free(y);
}

static double sig(double x) { return 1 / (1 + exp(-x)); }

/* worst relative error of f in place (as the GRU calls tanh and sigmoid) over a dense grid on
 * [lo, hi] with 0 and 1e-4: where sigmoid is tiny, its absolute bound says nothing */
static double worst_rel_in_place(vfun f, double (*ref)(double), double lo, double hi)
{
    enum { N = 200003 };
    real *x = malloc(sizeof(real) * (N + 2));
    for (int i = 0; i < N; i++) x[i] = (real)(lo + (hi - lo) * i / (N - 1));
    x[N] = 0;
    x[N + 1] = (real)1e-4;
    double *want = malloc(sizeof(double) * (N + 2)), worst = 0;
    for (int i = 0; i < N + 2; i++) want[i] = ref(x[i]);
    f(x, x, N + 2);
    for (int i = 0; i < N + 2; i++) {
        double r = fabs(x[i] - want[i]) / fabs(want[i]);
        if (!(r <= worst)) worst = r; /* NaN counts as the worst */
    }
    free(x); free(want);
    return worst;
}

int main(void)
{
    double u, a;
    sweep(vec_exp, exp, -87, 88, &u, &a);
    printf("exp on [-87, 88]: %.2f ulp\n", u);
    CHECKF(u <= 4, "exp: %.2f ulp", u);
    sweep(vec_exp, exp, -2, 2, &u, &a);
    CHECKF(u <= 3, "exp near 0: %.2f ulp", u);
    sweep(vec_tanh, tanh, -12, 12, &u, &a);
    printf("tanh on [-12, 12]: %.2f ulp, %.3g abs\n", u, a);
    CHECKF(u <= 6, "tanh: %.2f ulp", u);
    sweep(vec_tanh, tanh, -1e-3, 1e-3, &u, &a);
    CHECKF(u <= 2, "tanh near 0: %.2f ulp", u);
    sweep(vec_tanh, tanh, 0.3, 0.4, &u, &a); /* where the two formulas meet */
    CHECKF(u <= 6, "tanh at the switch: %.2f ulp", u);
    sweep(vec_sigmoid, sig, -80, 80, &u, &a);
    printf("sigmoid on [-80, 80]: %.2f ulp, %.3g abs\n", u, a);
    CHECKF(a <= 2e-7, "sigmoid: %.3g abs", a);
    double rel = worst_rel_in_place(vec_tanh, tanh, -9, 9);
    CHECKF(rel <= 4e-7, "tanh in place on [-9, 9]: %.3g relative", rel);
    rel = worst_rel_in_place(vec_sigmoid, sig, -30, 30);
    printf("sigmoid in place on [-30, 30]: %.3g relative\n", rel);
    CHECKF(rel <= 4e-7, "sigmoid in place on [-30, 30]: %.3g relative", rel);

    /* special values: saturation, signed zero, NaN propagation */
    real s[8] = {0.0f, -0.0f, 100.0f, -100.0f, INFINITY, -INFINITY, NAN, 1e-30f}, y[8];
    vec_tanh(y, s, 8);
    CHECK(y[0] == 0 && y[2] == 1 && y[3] == -1 && y[4] == 1 && y[5] == -1 && isnan(y[6]) && y[7] == 1e-30f);
    vec_exp(y, s, 8);
    CHECK(y[0] == 1 && y[1] == 1 && isfinite(y[2]) && y[3] < 1e-37f && y[5] < 1e-37f && isnan(y[6]));
    vec_sigmoid(y, s, 8);
    CHECK(y[0] == 0.5f && y[2] == 1 && y[3] < 1e-37f && isnan(y[6]));

    /* every length 0..40, in place and not: element i's value does not depend on where it sits */
    real buf[48], out[48], one[1];
    for (int n = 0; n <= 40; n++) {
        int bad = 0;
        for (int i = 0; i < n; i++) buf[i] = (real)(0.37 * i - 6.1);
        vec_tanh(out, buf, n);
        for (int i = 0; i < n; i++) { vec_tanh(one, buf + i, 1); bad += one[0] != out[i]; }
        vec_exp(buf, buf, n);
        for (int i = 0; i < n; i++) { real xi = (real)(0.37 * i - 6.1); vec_exp(one, &xi, 1); bad += one[0] != buf[i]; }
        CHECKF(bad == 0, "length %d: %d elements depend on their position", n, bad);
    }

    /* exp-sum and max against plain double loops, with a tail and a NaN skipped by max */
    enum { V = 10007 };
    real *z = malloc(sizeof(real) * V), *e = malloc(sizeof(real) * V);
    for (int i = 0; i < V; i++) z[i] = (real)(-15.0 * ((i * 7919) % V) / V);
    z[123] = 3.5f;
    CHECK(vec_max(z, V) == 3.5f);
    double sum = vec_exp_sum(e, z, 3.5f, V), want = 0;
    for (int i = 0; i < V; i++) want += exp((double)z[i] - 3.5);
    CHECKF(fabs(sum - want) <= 1e-6 * want, "exp-sum %.9g vs %.9g", sum, want);
    CHECK(fabs(e[123] - 1) < 1e-7);
    z[5] = NAN;
    CHECK(vec_max(z, V) == 3.5f);
    CHECK(isinf(vec_max(z, 0)) && vec_max(z, 0) < 0);
    /* the log-sum-exp against double precision, for a length with a tail */
    for (int i = 0; i < V; i++) z[i] = (real)(-15.0 * ((i * 7919) % V) / V + 0.001 * (i % 17));
    double *want_lp = malloc(sizeof(double) * V), mx = -INFINITY, se = 0;
    for (int i = 0; i < V; i++) { want_lp[i] = z[i]; if (want_lp[i] > mx) mx = want_lp[i]; }
    for (int i = 0; i < V; i++) se += exp(want_lp[i] - mx);
    double s2;
    real lse = vec_logsumexp(z, z, V, &s2);
    CHECKF(fabs(lse - (mx + log(se))) < 4e-6, "log-sum-exp %.9g, want %.9g", lse, mx + log(se));
    CHECKF(fabs(s2 - se) <= 1e-6 * se, "sum %.10g, want %.10g", s2, se);
    CHECKF(fabs(z[0] - exp(want_lp[0] - mx)) <= 1e-6, "e^{z - max} stored: %.8g", z[0]);
    free(want_lp); free(z); free(e);
    return test_done("test_vec");
}
