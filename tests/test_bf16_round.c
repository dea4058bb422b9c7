/* test_bf16_round.c: the CPU backend's rounding to bf16 (dnnl_cpu_bf16_rows: bf16 training's
 * weights and operands, the bf16 decoder's weights) against a rounding written here by value
 * rather than by bits: the nearest of the two bf16 neighbours, computed in double, ties to the
 * even one; NaN stays NaN, infinities stay. Blocks small enough for the calling thread alone and
 * large ones split over the threads, dense and strided, one long row. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cpu/dnnl_cpu.h"
#include "base/err.h"
#include "base/rng.h"
#include "test.h"

static rng R;

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* the reference: the bf16 value nearest to f (ties to an even last bit), by comparing distances */
static uint16_t want_bf16(float f)
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

static int same(uint16_t got, uint16_t want)
{
    int nan_got = (got & 0x7fff) > 0x7f80, nan_want = (want & 0x7fff) > 0x7f80;
    return nan_want ? nan_got : got == want;
}

static float any_float(void)
{
    switch (rng_u64(&R) % 4) {
    case 0: return (float)(2 * rng_uniform(&R) - 1);
    case 1: return (float)((2 * rng_uniform(&R) - 1) * 1e30);
    case 2: { /* any bit pattern: subnormals, NaNs, infinities, ties */
        uint32_t u = (uint32_t)rng_u64(&R);
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    default: { /* an exact tie: a bf16 value plus half its last place */
        uint32_t u = ((uint32_t)rng_u64(&R) & 0x7f7f0000u) | 0x8000u;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    }
}

/* rows x cols at row stride ldx; checks every converted element, and that the padding is kept */
static void check_block(int rows, int cols, int ldx, const char *what)
{
    size_t nx = (size_t)(rows ? rows - 1 : 0) * ldx + cols, ny = (size_t)rows * cols;
    real *x = malloc(sizeof(real) * (nx ? nx : 1));
    uint16_t *y = malloc(sizeof(uint16_t) * (ny + 8));
    NMT_ASSERT(x && y);
    for (size_t i = 0; i < nx; i++) x[i] = any_float();
    for (size_t i = 0; i < ny + 8; i++) y[i] = 0xabcd;
    dnnl_cpu_bf16_rows(y, x, ldx, rows, cols);
    long bad = 0, first = -1;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            if (!same(y[(size_t)r * cols + c], want_bf16((float)x[(size_t)r * ldx + c])) && bad++ == 0)
                first = (long)r * cols + c;
    int pad = 1;
    for (int i = 0; i < 8; i++) pad &= y[ny + i] == 0xabcd;
    CHECKF(bad == 0 && pad, "%s (%d x %d, stride %d): %ld wrong (first at %ld), padding %s", what, rows, cols, ldx, bad,
           first, pad ? "kept" : "written");
    free(x);
    free(y);
}

static void check_values(void)
{
    const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, FLT_MAX, -FLT_MAX, FLT_MIN, 1e-45f, INFINITY, -INFINITY, NAN,
                       1.00390625f /* 1 + 2^-8: a tie, stays 1 */, 1.01171875f /* 1 + 3 x 2^-8: a tie, goes up */};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        real x = v[i];
        uint16_t y;
        dnnl_cpu_bf16_rows(&y, &x, 1, 1, 1);
        CHECKF(same(y, want_bf16(v[i])), "%g: got 0x%04x, want 0x%04x", (double)v[i], y, want_bf16(v[i]));
    }
    CHECK(want_bf16(1.00390625f) == 0x3f80 && want_bf16(1.01171875f) == 0x3f82); /* the reference's own ties */
}

int main(void)
{
    rng_seed(&R, 11);
    backend()->set_threads(4);
    check_values();
    check_block(3, 37, 41, "small, strided");
    check_block(1, 5000, 0, "one short row");
    check_block(300, 701, 709, "large, strided (threads)");
    check_block(257, 1031, 1031, "large, dense (threads)");
    check_block(1, 250001, 0, "one long row (threads)");
    check_block(0, 10, 10, "no rows");
    return test_done("test_bf16_round");
}
