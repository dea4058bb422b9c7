/* test.h: the tiny test harness shared by every tests/test_*.c program.
 * Each CHECK counts one pass or one failure; a failure prints file:line and what differed.
 * test_done() prints "name: P passed, F failed" (read by tests/run.sh) and returns the exit
 * status, non-zero when anything failed, so that no mismatch can go unnoticed. */
#ifndef NMT_TEST_H
#define NMT_TEST_H

#include <math.h>
#include <stdio.h>

static int test_passed, test_failed;

#define CHECK(cond) do { \
    if (cond) test_passed++; \
    else { test_failed++; fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)

/* CHECK with a printf-style explanation on failure. */
#define CHECKF(cond, ...) do { \
    if (cond) test_passed++; \
    else { test_failed++; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
           fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } \
} while (0)

/* |a-b| <= tol * max(1, |b|): relative for large values, absolute near zero. */
#define CHECK_NEAR(a, b, tol) do { \
    double a_ = (a), b_ = (b), t_ = (tol) * (fabs(b_) > 1.0 ? fabs(b_) : 1.0); \
    if (fabs(a_ - b_) <= t_) test_passed++; \
    else { test_failed++; fprintf(stderr, "FAIL %s:%d: %s = %.10g, expected %s = %.10g (tol %g)\n", \
           __FILE__, __LINE__, #a, a_, #b, b_, (double)(tol)); } \
} while (0)

static inline int test_done(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, test_passed, test_failed);
    return test_failed ? 1 : 0;
}

#endif
