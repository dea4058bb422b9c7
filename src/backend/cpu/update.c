/* update.c: the CPU kernels of the optimizers (the rules of backend.h, MODEL.md section 4): the
 * gradient's squared norm in a fixed order, the dense update in blocks over the threads, and the
 * row-lazy update of embedding matrices, whose skipped rows owe their decay until touched. */
#include <math.h>

#include "backend/cpu/cpu.h"
#include "backend/cpu/vec.h"
#include "backend/rules.h"

double cpu_sumsq(const real *g, size_t n)
{
    /* Fixed chunks summed in a fixed order: the same bits whatever the thread count, so a
     * resumed run clips exactly as an uninterrupted one. */
    enum { CH = 1 << 16 };
    size_t nch = (n + CH - 1) / CH;
    double part[256], total = 0;
    for (size_t c0 = 0; c0 < nch; c0 += 256) {
        size_t c1 = nch - c0 < 256 ? nch : c0 + 256;
#pragma omp parallel for schedule(static) if (cpu_team((long)(c1 - c0), (long)(c1 - c0) * CH))
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
    return total;
}

/* The rule on parameters [lo, hi); g is read and left zero. One loop per rule, so that each
 * vectorises on its own; the element's expressions are rules.h's. */
static void update_span(int rule, const bk_hyper *h, real *p, real *g, real *const *s, size_t lo, size_t hi)
{
    real lr = h->lr, scale = h->scale;
    switch (rule) {
    case BK_ADADELTA: {
        real *s0 = s[0], *s1 = s[1], rho = h->rho, eps = h->eps;
#pragma omp simd
        for (size_t i = lo; i < hi; i++) rule_adadelta(p, g, s0, s1, i, lr, scale, rho, eps);
        break;
    }
    case BK_ADAGRAD: {
        real *s0 = s[0], eps = h->eps;
#pragma omp simd
        for (size_t i = lo; i < hi; i++) rule_adagrad(p, g, s0, i, lr, scale, eps);
        break;
    }
    case BK_ADAM: {
        real *s0 = s[0], *s1 = s[1], b1 = h->b1, b2 = h->b2, c1 = h->c1, c2 = h->c2, eps = h->eps;
#pragma omp simd
        for (size_t i = lo; i < hi; i++) rule_adam(p, g, s0, s1, i, lr, scale, b1, b2, c1, c2, eps);
        break;
    }
    default: /* BK_SGD */
#pragma omp simd
        for (size_t i = lo; i < hi; i++) rule_sgd(p, g, i, lr, scale);
    }
}

void cpu_update(int rule, const bk_hyper *h, real *p, real *g, real *const *s, size_t lo, size_t hi)
{
    enum { BLK = 1 << 14 };
    if (hi <= lo) return;
    size_t nb = (hi - lo + BLK - 1) / BLK;
#pragma omp parallel for schedule(static) if (cpu_team((long)nb, (long)(hi - lo)))
    for (size_t b = 0; b < nb; b++)
        update_span(rule, h, p, g, s, lo + b * BLK, lo + b * BLK + BLK < hi ? lo + b * BLK + BLK : hi);
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

/* row r pays its owed decays, one multiplication at a time as the eager loop would have */
static void settle_row(real *const *s, int ns, real rho, size_t lo, int cols, unsigned *lag)
{
    unsigned k = *lag;
    if (!k) return;
    for (unsigned t = 0; t < k; t++)
        for (int i = 0; i < ns; i++) {
            real *a = s[i] + lo;
            for (int j = 0; j < cols; j++) a[j] = rho * a[j];
        }
    *lag = 0;
}

void cpu_update_rows(int rule, const bk_hyper *h, real *p, real *g, real *const *s, int ns, size_t off, int rows,
                     int cols, unsigned *lag)
{
    /* the touched rows are the frequent words, at low ids: hand rows out in small chunks */
#pragma omp parallel for schedule(dynamic, 64) if (cpu_team(rows, (long)rows * cols))
    for (int r = 0; r < rows; r++) {
        size_t lo = off + (size_t)r * cols;
        if (row_is_zero(g + lo, cols)) {
            if (lag) lag[r]++;
            continue;
        }
        if (lag) settle_row(s, ns, h->rho, lo, cols, &lag[r]);
        update_span(rule, h, p, g, s, lo, lo + cols);
    }
}

void cpu_settle_rows(real *const *s, int ns, real rho, size_t off, int rows, int cols, unsigned *lag)
{
#pragma omp parallel for schedule(static) if (cpu_team(rows, (long)rows * cols))
    for (int r = 0; r < rows; r++) settle_row(s, ns, rho, off + (size_t)r * cols, cols, &lag[r]);
}
