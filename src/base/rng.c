/* rng.c: xoshiro256** generator, Gaussian draws and orthogonal matrices (MODEL.md section 4:
 * "every recurrent matrix a random orthogonal matrix"). */
#include <math.h>
#include <stdlib.h>

#include "base/rng.h"

uint64_t rng_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t *x) { return rng_mix64(*x += 0x9e3779b97f4a7c15ULL); }

void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_u64(rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = rotl(s[3], 45);
    return out;
}

double rng_uniform(rng *r) { return (rng_u64(r) >> 11) * (1.0 / 9007199254740992.0); }

real *rng_dropout_mask(rng *r, real *mask, size_t n, double p)
{
    real keep = (real)(1 / (1 - p));
    for (size_t q = 0; q < n; q++) mask[q] = rng_uniform(r) < p ? 0 : keep;
    return mask;
}

double rng_normal(rng *r)
{
    /* One draw per call (the second Box-Muller value is dropped) keeps the state the only
     * thing a checkpoint must save. */
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint64_t rng_below(rng *r, uint64_t n)
{
    uint64_t lim = UINT64_MAX - UINT64_MAX % n, v;
    do v = rng_u64(r); while (v >= lim);
    return v % n;
}

int rng_orthogonal(rng *r, real *Q, int n, int ldq)
{
    /* Modified Gram-Schmidt on the columns of a Gaussian matrix, in double. Normalising each
     * column to unit length is the QR with a positive diagonal of R, i.e. the sign fix. */
    double *a = malloc(sizeof(double) * (size_t)n * n);
    if (!a) return -1;
    for (long i = 0; i < (long)n * n; i++) a[i] = rng_normal(r);
    /* a is column-major here: column j is a[j*n .. j*n+n). */
    for (int j = 0; j < n; j++) {
        double *cj = a + (long)j * n;
        for (int pass = 0; pass < 2; pass++) /* re-orthogonalise once: keeps Q^T Q = I to 1e-15 */
            for (int k = 0; k < j; k++) {
                double *ck = a + (long)k * n, d = 0;
                for (int i = 0; i < n; i++) d += ck[i] * cj[i];
                for (int i = 0; i < n; i++) cj[i] -= d * ck[i];
            }
        double nrm = 0;
        for (int i = 0; i < n; i++) nrm += cj[i] * cj[i];
        nrm = sqrt(nrm);
        for (int i = 0; i < n; i++) cj[i] /= nrm;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) Q[(long)i * ldq + j] = (real)a[(long)j * n + i];
    free(a);
    return 0;
}
