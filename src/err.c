/* err.c: status strings, error records and the log callback. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "err.h"

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
#endif
