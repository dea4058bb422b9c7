/* helpers.h: what several tests/test_*.c programs need beside test.h, written once: a whole file
 * read (or its lines), a file written, host arrays of random values. static inline, so that a program that
 * calls none of them compiles without unused-function warnings. */
#ifndef NMT_TEST_HELPERS_H
#define NMT_TEST_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/real.h"
#include "base/rng.h"

/* The whole file at path, NUL-terminated (so text can be read as a string, and binary data has
 * its length in *n, when n is not NULL); NULL when it cannot be read or memory runs out. Read in
 * growing blocks, so a pipe or a file that changes size reads whole too. */
static inline char *test_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap);
    for (size_t got; b && (got = fread(b + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (cap - len < 2) {
            char *nb = realloc(b, cap * 2);
            if (!nb) { free(b); b = NULL; break; }
            b = nb;
            cap *= 2;
        }
    }
    if (ferror(f)) { free(b); b = NULL; }
    fclose(f);
    if (b) b[len] = 0;
    if (n) *n = len;
    return b;
}

/* The lines of the file at path, split at '\n' (a last line without one counts), in place in one
 * buffer: lines[0..*n), NULL at lines[*n]; free with test_free_lines. NULL when it cannot be read
 * or memory runs out. */
static inline char **test_read_lines(const char *path, size_t *n)
{
    size_t len, count = 0;
    char *buf = test_slurp(path, &len);
    if (!buf) return NULL;
    for (size_t i = 0; i < len; i++) count += buf[i] == '\n';
    if (len > 0 && buf[len - 1] != '\n') count++;
    /* lines[count + 1] keeps the buffer, for test_free_lines */
    char **lines = malloc((count + 2) * sizeof *lines);
    if (!lines) { free(buf); return NULL; }
    char *p = buf;
    for (size_t k = 0; k < count; k++) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        lines[k] = p;
        p = nl ? nl + 1 : p + strlen(p);
    }
    lines[count] = NULL;
    lines[count + 1] = buf;
    *n = count;
    return lines;
}

static inline void test_free_lines(char **lines, size_t n)
{
    if (lines) free(lines[n + 1]);
    free(lines);
}

/* data[0..n) written to path (replacing it); 0, or -1 after a message naming the file. */
static inline int test_write_n(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    int rc = f && fwrite(data, 1, n, f) == n ? 0 : -1;
    if (f && fclose(f) != 0) rc = -1;
    if (rc) fprintf(stderr, "cannot write %s\n", path);
    return rc;
}

/* text written to path (replacing it); as test_write_n. */
static inline int test_write(const char *path, const char *text) { return test_write_n(path, text, strlen(text)); }

/* text written to dir/name; the joined path into path[0..n) for the caller to pass on. As
 * test_write (-1 also when the path does not fit). */
static inline int test_write_in(const char *dir, const char *name, const char *text, char *path, size_t n)
{
    if ((size_t)snprintf(path, n, "%s/%s", dir, name) >= n) return -1;
    return test_write(path, text);
}

/* n values drawn uniformly from [lo, hi) by r, in a new host array (the caller frees it). */
static inline real *test_rnd(rng *r, size_t n, double lo, double hi)
{
    real *x = malloc(sizeof(real) * (n ? n : 1));
    NMT_ASSERT(x);
    for (size_t i = 0; i < n; i++) x[i] = (real)(lo + (hi - lo) * rng_uniform(r));
    return x;
}

/* n values drawn from N(0, sd^2) by r, in a new host array (the caller frees it). */
static inline real *test_rnd_normal(rng *r, size_t n, double sd)
{
    real *x = malloc(sizeof(real) * (n ? n : 1));
    NMT_ASSERT(x);
    for (size_t i = 0; i < n; i++) x[i] = (real)(sd * rng_normal(r));
    return x;
}

#endif
