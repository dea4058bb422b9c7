/* vec.c: array forms of vec.h's element-wise functions (the softmax's exp over the vocabulary,
 * the GRU's gates); in the float64 build they are plain loops over libm. */
#include <stddef.h>

#include "backend/cpu/vec.h"

#if NMT_SIMD
#define MAP8(NAME, F8)                                                   \
    void NAME(real *y, const real *x, int n)                             \
    {                                                                    \
        int k = 0;                                                       \
        for (; k + 8 <= n; k += 8) _mm256_storeu_ps(y + k, F8(_mm256_loadu_ps(x + k))); \
        if (k < n) store_part(y + k, F8(load_part(x + k, n - k)), n - k); \
    }
MAP8(vec_exp, exp8)
MAP8(vec_tanh, tanh8)
MAP8(vec_sigmoid, sigmoid8)

double vec_exp_sum(real *y, const real *x, real shift, int n)
{
    __m256 sh = _mm256_set1_ps(shift);
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    double tail = 0;
    int k = 0;
    for (; k + 8 <= n; k += 8) {
        __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + k), sh));
        if (y) _mm256_storeu_ps(y + k, e);
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    if (k < n) { /* padding lanes are e^{0 - shift}: left out of the sum */
        __m256 e = exp8(_mm256_sub_ps(load_part(x + k, n - k), sh));
        float b[8];
        _mm256_storeu_ps(b, e);
        for (int i = 0; i < n - k; i++) tail += b[i];
        if (y) store_part(y + k, e, n - k);
    }
    double b[4], c[4];
    _mm256_storeu_pd(b, s0);
    _mm256_storeu_pd(c, s1);
    return ((b[0] + c[0]) + (b[1] + c[1])) + ((b[2] + c[2]) + (b[3] + c[3])) + tail;
}

real vec_max(const real *x, int n)
{
    /* four running maxima: one would wait on its own latency every eight elements */
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
    int k = 0;
    for (; k + 32 <= n; k += 32) { /* NaN x: keeps m */
        m0 = _mm256_max_ps(_mm256_loadu_ps(x + k), m0);
        m1 = _mm256_max_ps(_mm256_loadu_ps(x + k + 8), m1);
        m2 = _mm256_max_ps(_mm256_loadu_ps(x + k + 16), m2);
        m3 = _mm256_max_ps(_mm256_loadu_ps(x + k + 24), m3);
    }
    for (; k + 8 <= n; k += 8) m0 = _mm256_max_ps(_mm256_loadu_ps(x + k), m0);
    __m256 m = _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3));
    float b[8];
    _mm256_storeu_ps(b, m);
    real mx = -INFINITY;
    for (int i = 0; i < 8; i++)
        if (b[i] > mx) mx = b[i];
    for (; k < n; k++)
        if (x[k] > mx) mx = x[k];
    return mx;
}
#else
void vec_exp(real *y, const real *x, int n) { for (int k = 0; k < n; k++) y[k] = rexp(x[k]); }
void vec_tanh(real *y, const real *x, int n) { for (int k = 0; k < n; k++) y[k] = rtanh(x[k]); }
void vec_sigmoid(real *y, const real *x, int n) { for (int k = 0; k < n; k++) y[k] = rsigmoid(x[k]); }

double vec_exp_sum(real *y, const real *x, real shift, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) {
        real e = rexp(x[k] - shift);
        if (y) y[k] = e;
        s += e;
    }
    return s;
}

real vec_max(const real *x, int n)
{
    real mx = -INFINITY;
    for (int k = 0; k < n; k++)
        if (x[k] > mx) mx = x[k];
    return mx;
}
#endif

real vec_logsumexp(real *e, const real *z, int n, double *sum)
{
    real mx = vec_max(z, n);
    double s = vec_exp_sum(e, z, mx, n);
    if (sum) *sum = s;
    return mx + (real)log(s);
}
