/* err.c: status strings, error records and the log callback. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

const char *nmt_status_str(int code)
{
    switch (code) {
    case NMT_OK: return "ok";
    case NMT_ERR_IO: return "I/O error";
    case NMT_ERR_FORMAT: return "malformed input";
    case NMT_ERR_NOMEM: return "out of memory";
    case NMT_ERR_ARG: return "invalid argument";
    case NMT_ERR_MISMATCH: return "mismatched inputs";
    case NMT_ERR_NUMERIC: return "non-finite value";
    case NMT_ERR_INTERRUPTED: return "interrupted";
    default: return "unknown status";
    }
}

int nmt_fail(nmt_err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        e->code = code;
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int nmt_args_null(nmt_err *e, const char *fn, const char *names, const void *const *ptr, int n)
{
    int bad = 0;
    while (bad < n && ptr[bad]) bad++;
    if (bad == n) return 0;
    const char *p = names;
    for (int i = 0; i < bad && strchr(p, ','); i++) p = strchr(p, ',') + 1 + strspn(strchr(p, ',') + 1, " ");
    return nmt_fail(e, NMT_ERR_ARG, "%s: %.*s is NULL", fn, (int)strcspn(p, ", "), p);
}

int nmt_strs_null(nmt_err *e, const char *fn, const char *what, const char *const *a, int n)
{
    for (int i = 0; a && i < n; i++)
        if (!a[i]) return nmt_fail(e, NMT_ERR_ARG, "%s: %s[%d] is NULL", fn, what, i);
    return 0;
}

static nmt_log_fn log_fn;
static void *log_user;

void nmt_set_log(nmt_log_fn fn, void *user)
{
    log_fn = fn;
    log_user = user;
}

void nmt_log(char level, const char *fmt, ...)
{
    if (!log_fn) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    log_fn(level, buf, log_user);
}

void nmt_assert_fail(const char *cond, const char *file, int line)
{
    fprintf(stderr, "nmt: internal error: %s:%d: assertion '%s' failed\n", file, line, cond);
    abort();
}

#ifdef NMT_FAULTS
int nmt_fault;
double nmt_fert_eps = 1e-12;
#endif

/* ------------------------------------------------------------------ profiling (prof.h) */
#include <time.h>

#include "base/prof.h"

int prof_enabled;
double prof_sec[PROF_N];

double prof_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

const char *prof_name(int phase)
{
    static const char *names[PROF_N] = {"encoder fwd", "encoder bwd", "attention fwd", "attention bwd",
                                        "decoder fwd (incl. attention)", "decoder bwd (incl. attention)", "readout+softmax fwd",
                                        "readout+softmax bwd", "optimizer"};
    return phase >= 0 && phase < PROF_N ? names[phase] : "?";
}
