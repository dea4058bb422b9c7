/* err.h: filling error records and logging, shared by every module of the library. */
#ifndef NMT_ERR_H
#define NMT_ERR_H

#include "nmt.h"

/* Sets e (if not NULL) to code and a printf-style message; returns code, so that a failing
 * function can end with `return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));`. */
int nmt_fail(nmt_err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The first check of a public function: NMT_ERR_ARG "fn: NAME is NULL" for the first of the n
 * pointers that is NULL, names their names separated by ", " (NMT_ARGS spells them); else 0. */
int nmt_args_null(nmt_err *e, const char *fn, const char *names, const void *const *p, int n);
#define NMT_ARGS(err, fn, ...)                                                                  \
    nmt_args_null(err, fn, #__VA_ARGS__, (const void *const[]){__VA_ARGS__},                      \
                  (int)(sizeof((const void *const[]){__VA_ARGS__}) / sizeof(const void *)))
/* NMT_ERR_ARG "fn: what[i] is NULL" for the first NULL of a[0..n) (n < 0 is the caller's check) */
int nmt_strs_null(nmt_err *e, const char *fn, const char *what, const char *const *a, int n);

/* Log through the user's callback (nmt_set_log); no-op when none is set. */
void nmt_log(char level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Programmer invariants only (never input checks): abort with file:line, on in release builds. */
#define NMT_ASSERT(c) do { if (!(c)) nmt_assert_fail(#c, __FILE__, __LINE__); } while (0)
void nmt_assert_fail(const char *cond, const char *file, int line) __attribute__((noreturn));

#endif
