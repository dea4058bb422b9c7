/* test_bf16_round.c: the CPU backend's rounding to bf16 (dnnl_cpu_bf16_rows: bf16 training's
 * weights and operands, the bf16 decoder's weights) against a rounding written by value
 * rather than by bits (bf16_ref.h). Blocks small enough for the calling thread alone and
 * large ones split over the threads, dense and strided, one long row. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cpu/dnnl_cpu.h"
#include "base/err.h"
#include "base/rng.h"
#include "bf16_ref.h"
#include "test.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

static rng R;

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
            if (!same_bf16(y[(size_t)r * cols + c], want_bf16((float)x[(size_t)r * ldx + c])) && bad++ == 0)
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
        CHECKF(same_bf16(y, want_bf16(v[i])), "%g: got 0x%04x, want 0x%04x", (double)v[i], y, want_bf16(v[i]));
    }
    CHECK(want_bf16(1.00390625f) == 0x3f80 && want_bf16(1.01171875f) == 0x3f82); /* the reference's own ties */
}

int main(void)
{
    rng_seed(&R, 11);
    TX->b->set_threads(4);
    check_values();
    check_block(3, 37, 41, "small, strided");
    check_block(1, 5000, 0, "one short row");
    check_block(300, 701, 709, "large, strided (threads)");
    check_block(257, 1031, 1031, "large, dense (threads)");
    check_block(1, 250001, 0, "one long row (threads)");
    check_block(0, 10, 10, "no rows");
    return test_done("test_bf16_round");
}
