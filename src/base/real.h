/* real.h: the floating-point type of every parameter and activation. float32 in the product;
 * the gradient-check tests build the same sources with -DNMT_REAL_DOUBLE so that finite
 * differences are taken in float64, where they are accurate to ~1e-8 instead of ~1e-3. */
#ifndef NMT_REAL_H
#define NMT_REAL_H

#include <math.h>

/* The functions at the precision of real; the square root is real_sqrt, not "rsqrt", which
 * conventionally names 1/sqrt(x). */
#ifdef NMT_REAL_DOUBLE
typedef double real;
static inline real rexp(real x) { return exp(x); }
static inline real rtanh(real x) { return tanh(x); }
static inline real rlog(real x) { return log(x); }
static inline real real_sqrt(real x) { return sqrt(x); }
#else
typedef float real;
static inline real rexp(real x) { return expf(x); }
static inline real rtanh(real x) { return tanhf(x); }
static inline real rlog(real x) { return logf(x); }
static inline real real_sqrt(real x) { return sqrtf(x); }
#endif

static inline real rsigmoid(real x) { return (real)1 / ((real)1 + rexp(-x)); }

#endif
