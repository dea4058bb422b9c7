/* bf16_ref.h: rounding to bf16 written by value rather than by bits, for the tests that hold the
 * backend's rounding to it (test_bf16_round.c, test_backend.c): the nearest of the two bf16
 * neighbours, computed in double, ties to the even one; NaN stays NaN, infinities stay. */
#ifndef NMT_BF16_REF_H
#define NMT_BF16_REF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* the bf16 value nearest to f (ties to an even last bit), by comparing distances */
static inline uint16_t want_bf16(float f)
{
    if (isnan(f)) return 0x7fc0;
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t lo = (uint16_t)(u >> 16); /* toward zero */
    if (isinf(f) || (u & 0xffff) == 0) return lo;
    uint16_t hi = (uint16_t)(lo + 1); /* away from zero: the next magnitude */
    /* past the largest finite bf16 the next step would be 2^128: IEEE rounds to infinity there */
    double vhi = (hi & 0x7fff) == 0x7f80 ? copysign(ldexp(1, 128), f) : from_bf16(hi);
    double dlo = fabs((double)f - from_bf16(lo)), dhi = fabs(vhi - f);
    if (dlo < dhi) return lo;
    if (dhi < dlo) return hi;
    return (lo & 1) ? hi : lo;
}

/* got is want (any NaN for a NaN) */
static inline int same_bf16(uint16_t got, uint16_t want)
{
    int nan_got = (got & 0x7fff) > 0x7f80, nan_want = (want & 0x7fff) > 0x7f80;
    return nan_want ? nan_got : got == want;
}

#endif
