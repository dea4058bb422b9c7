/* vec.h: element-wise exp, tanh and sigmoid eight floats at a time (AVX2 + FMA), for the loops
 * that are not matrix products: the attention's tanh and the softmax's exp were most of the
 * non-GEMM time. The float64 build (gradient checks) keeps libm's scalar functions.
 * Every element goes through the same instructions wherever it sits in an array (tails are
 * padded into a full vector), so results never depend on alignment, batching or threads. */
#ifndef NMT_VEC_H
#define NMT_VEC_H

#include "base/real.h"

#if defined(__AVX2__) && defined(__FMA__) && !defined(NMT_REAL_DOUBLE)
#define NMT_SIMD 1
#include <immintrin.h>

/* e^x. x = n ln2 + r with |r| <= ln2/2 (ln2 split in two so that n ln2 is exact), e^r by its
 * Taylor series to r^7 (truncation below 1e-8 relative there), then 2^n put into the exponent.
 * Clamping to [-87, 88] keeps 2^n a normal float; min/max take x second so NaN passes through. */
static inline __m256 exp8(__m256 x)
{
    x = _mm256_max_ps(_mm256_set1_ps(-87.0f), x);
    x = _mm256_min_ps(_mm256_set1_ps(88.0f), x);
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* tanh x. For |x| >= 0.35, (1 - t)/(1 + t) with t = e^{-2|x|} (1 - t >= 0.5, so no
 * cancellation); below, the odd Taylor series to x^11 (next term < 1e-8 relative there). */
static inline __m256 tanh8(__m256 x)
{
    __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 a = _mm256_andnot_ps(sign, x);
    __m256 t = exp8(_mm256_mul_ps(a, _mm256_set1_ps(-2.0f)));
    __m256 one = _mm256_set1_ps(1.0f);
    __m256 big = _mm256_div_ps(_mm256_sub_ps(one, t), _mm256_add_ps(one, t));
    big = _mm256_or_ps(big, _mm256_and_ps(sign, x));
    __m256 x2 = _mm256_mul_ps(x, x);
    __m256 p = _mm256_set1_ps(-1382.0f / 155925);
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(62.0f / 2835));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-17.0f / 315));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(2.0f / 15));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.0f / 3));
    p = _mm256_mul_ps(p, x2);
    __m256 small = _mm256_fmadd_ps(p, x, x);
    return _mm256_blendv_ps(big, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.35f), _CMP_LT_OQ));
}

/* σ(x) = 1 / (1 + e^{-x}) */
static inline __m256 sigmoid8(__m256 x)
{
    __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

/* the first n (< 8) lanes of p; the rest 0 */
static inline __m256 load_part(const float *p, int n)
{
    float b[8] = {0};
    for (int i = 0; i < n; i++) b[i] = p[i];
    return _mm256_loadu_ps(b);
}

static inline void store_part(float *p, __m256 v, int n)
{
    float b[8];
    _mm256_storeu_ps(b, v);
    for (int i = 0; i < n; i++) p[i] = b[i];
}

static inline float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#else
#define NMT_SIMD 0
#endif

/* Σ_k a_k b_k (eight partial sums, then a fixed tree: the same order on every call) */
static inline real vec_dot(const real *a, const real *b, int n)
{
    int k = 0;
    real s = 0;
#if NMT_SIMD
    __m256 acc = _mm256_setzero_ps();
    for (; k + 8 <= n; k += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + k), _mm256_loadu_ps(b + k), acc);
    s = hsum8(acc);
#endif
    for (; k < n; k++) s += a[k] * b[k];
    return s;
}

/* y += alpha x */
static inline void vec_axpy(real *y, real alpha, const real *x, int n)
{
    int k = 0;
#if NMT_SIMD
    __m256 al = _mm256_set1_ps(alpha);
    for (; k + 8 <= n; k += 8) _mm256_storeu_ps(y + k, _mm256_fmadd_ps(al, _mm256_loadu_ps(x + k), _mm256_loadu_ps(y + k)));
#endif
    for (; k < n; k++) y[k] += alpha * x[k];
}

/* y = f(x) over n elements; y may be x. */
void vec_exp(real *y, const real *x, int n);
void vec_tanh(real *y, const real *x, int n);
void vec_sigmoid(real *y, const real *x, int n);

/* y_k = e^{x_k - shift}; returns Σ_k y_k accumulated in double. y may be x, or NULL when only
 * the sum is wanted. */
double vec_exp_sum(real *y, const real *x, real shift, int n);

/* log Σ_k e^{z_k}, max-shifted, the sum accumulated in double: the softmax's normaliser, so that
 * log p_k = z_k - the result. e (optional; may be z) receives e^{z_k - max}, *sum (optional)
 * Σ_k e^{z_k - max}. */
real vec_logsumexp(real *e, const real *z, int n, double *sum);

/* the largest element (-inf for n = 0; NaN elements are skipped, as a scalar `>` scan does) */
real vec_max(const real *x, int n);

#endif
