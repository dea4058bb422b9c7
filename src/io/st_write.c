/* st_write.c: writing a safetensors file: tensors and metadata collected by st_writer, a header
 * of plain JSON, the checksum table, the data laid out so that every tensor is aligned to its
 * element size, and the whole file replaced at once (base/atomic.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"
#include "base/err.h"
#include "io/st_internal.h"

struct wtensor {
    char *name;
    int dtype, ndim;
    int64_t shape[ST_MAX_DIMS];
    const void *data;
    uint64_t nbytes, begin;
};

struct st_writer {
    struct wtensor *t;
    size_t n, cap;
    char **mkey, **mval;
    size_t nmeta, mcap;
    int failed;          /* first add/meta error, replayed by save */
    char why[900];
};

st_writer *st_writer_init(void)
{
    return calloc(1, sizeof(st_writer));
}

void st_writer_free(st_writer *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->n; i++) free(w->t[i].name);
    for (size_t i = 0; i < w->nmeta; i++) { free(w->mkey[i]); free(w->mval[i]); }
    free(w->t);
    free(w->mkey);
    free(w->mval);
    free(w);
}

__attribute__((format(printf, 3, 4)))
static int wfail(st_writer *w, int code, const char *fmt, ...)
{
    if (w && !w->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->why, sizeof w->why, fmt, ap);
        va_end(ap);
        w->failed = code;
    }
    return code;
}

static int valid_utf8(const char *s)
{
    size_t n = strlen(s);
    return st_utf8_bad((const unsigned char *)s, n) == n;
}

/* Sets (or replaces) a metadata pair, without the argument checks. */
static int meta_set(st_writer *w, const char *key, const char *value)
{
    char *v = st_dup_str(value);
    if (!v) return wfail(w, NMT_ERR_NOMEM, "st_writer_meta: out of memory");
    for (size_t i = 0; i < w->nmeta; i++)
        if (strcmp(w->mkey[i], key) == 0) { free(w->mval[i]); w->mval[i] = v; return 0; }
    if (w->nmeta == w->mcap) {
        size_t cap = w->mcap ? 2 * w->mcap : 8;
        char **k = realloc(w->mkey, cap * sizeof *k);
        if (k) w->mkey = k;
        char **vv = k ? realloc(w->mval, cap * sizeof *vv) : NULL;
        if (vv) w->mval = vv;
        if (!k || !vv) { free(v); return wfail(w, NMT_ERR_NOMEM, "st_writer_meta: out of memory"); }
        w->mcap = cap;
    }
    char *k = st_dup_str(key);
    if (!k) { free(v); return wfail(w, NMT_ERR_NOMEM, "st_writer_meta: out of memory"); }
    w->mkey[w->nmeta] = k;
    w->mval[w->nmeta] = v;
    w->nmeta++;
    return 0;
}

int st_writer_meta(st_writer *w, const char *key, const char *value)
{
    if (!w) return NMT_ERR_ARG;
    if (!key || !value) return wfail(w, NMT_ERR_ARG, "st_writer_meta: NULL key or value");
    if (!valid_utf8(key) || !valid_utf8(value))
        return wfail(w, NMT_ERR_ARG, "st_writer_meta: key '%.100s' or its value is not valid "
                     "UTF-8", key);
    if (strcmp(key, ST_CRC_KEY) == 0)
        return wfail(w, NMT_ERR_ARG, "st_writer_meta: key '%s' is reserved for the checksums", key);
    return meta_set(w, key, value);
}

int st_writer_add(st_writer *w, const char *name, int dtype, int ndim, const int64_t *shape,
                  const void *data)
{
    if (!w) return NMT_ERR_ARG;
    if (!name) return wfail(w, NMT_ERR_ARG, "st_writer_add: NULL name");
    size_t len = strlen(name);
    if (len == 0 || len > ST_MAX_NAME || !valid_utf8(name) || strcmp(name, "__metadata__") == 0)
        return wfail(w, NMT_ERR_ARG, "st_writer_add: invalid tensor name '%.100s' (1..%d bytes "
                     "of UTF-8, not __metadata__)", name, ST_MAX_NAME);
    if (dtype < 0 || dtype >= ST_NDTYPE)
        return wfail(w, NMT_ERR_ARG, "st_writer_add: tensor '%s': invalid dtype %d", name, dtype);
    if (ndim < 0 || ndim > ST_MAX_DIMS || (ndim > 0 && !shape))
        return wfail(w, NMT_ERR_ARG, "st_writer_add: tensor '%s': invalid ndim %d", name, ndim);
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0 || (double)shape[i] > MAX_JSON_INT)
            return wfail(w, NMT_ERR_ARG, "st_writer_add: tensor '%s': invalid dim %lld", name,
                         (long long)shape[i]);
    uint64_t numel, nbytes;
    if (st_shape_size(ndim, shape, st_dtype_size(dtype), &numel, &nbytes) || nbytes > SIZE_MAX)
        return wfail(w, NMT_ERR_ARG, "st_writer_add: tensor '%s': size overflows", name);
    if (nbytes && !data)
        return wfail(w, NMT_ERR_ARG, "st_writer_add: tensor '%s': NULL data", name);
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->t[i].name, name) == 0)
            return wfail(w, NMT_ERR_ARG, "st_writer_add: duplicate tensor name '%s'", name);
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        struct wtensor *t = realloc(w->t, cap * sizeof *t);
        if (!t) return wfail(w, NMT_ERR_NOMEM, "st_writer_add: out of memory");
        w->t = t;
        w->cap = cap;
    }
    struct wtensor *t = &w->t[w->n];
    memset(t, 0, sizeof *t);
    if (!(t->name = st_dup_str(name))) return wfail(w, NMT_ERR_NOMEM, "st_writer_add: out of memory");
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
    t->data = data;
    t->nbytes = nbytes;
    w->n++;
    return 0;
}

/* A growable string for the header; oom sticks so that callers check once at the end. */
typedef struct { char *p; size_t len, cap; int oom; } sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) { b->oom = 1; return; }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_u64(sbuf *b, uint64_t v)
{
    char tmp[24];
    int k = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    sb_put(b, tmp, (size_t)k);
}

/* A JSON string literal. Written by hand rather than with cJSON_Print so that integers are
 * always plain digits (cJSON prints large numbers in exponent form, which strict readers refuse). */
static void sb_json(sbuf *b, const char *s)
{
    sb_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') { esc[0] = '\\'; esc[1] = (char)*p; sb_put(b, esc, 2); }
        else if (*p < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", *p); sb_put(b, esc, 6); }
        else sb_put(b, (const char *)p, 1);
    }
    sb_put(b, "\"", 1);
}

/* Header JSON, padded with spaces so that 8 + its length is a multiple of 8; offsets must be set. */
static int build_header(const st_writer *w, sbuf *b)
{
    sb_str(b, "{");
    if (w->nmeta) {
        sb_str(b, "\"__metadata__\":{");
        for (size_t i = 0; i < w->nmeta; i++) {
            if (i) sb_str(b, ",");
            sb_json(b, w->mkey[i]);
            sb_str(b, ":");
            sb_json(b, w->mval[i]);
        }
        sb_str(b, "}");
    }
    for (size_t i = 0; i < w->n; i++) {
        const struct wtensor *t = &w->t[i];
        if (i || w->nmeta) sb_str(b, ",");
        sb_json(b, t->name);
        sb_str(b, ":{\"dtype\":\"");
        sb_str(b, st_dtype_name(t->dtype));
        sb_str(b, "\",\"shape\":[");
        for (int k = 0; k < t->ndim; k++) {
            if (k) sb_str(b, ",");
            sb_u64(b, (uint64_t)t->shape[k]);
        }
        sb_str(b, "],\"data_offsets\":[");
        sb_u64(b, t->begin);
        sb_str(b, ",");
        sb_u64(b, t->begin + t->nbytes);
        sb_str(b, "]}");
    }
    sb_str(b, "}");
    while (!b->oom && (8 + b->len) % 8) sb_str(b, " ");
    return b->oom ? -1 : 0;
}

/* The checksum table (ST_CRC_KEY) of w's tensors and other metadata, as metadata. */
static int add_checksums(st_writer *w)
{
    sbuf b = {0};
    char hex[24];
    int64_t m = st_crc_meta(w->mkey, w->mval, w->nmeta);
    snprintf(hex, sizeof hex, "%08lx", (unsigned long)(uint32_t)(m < 0 ? 0 : m));
    sb_str(&b, "{\"__metadata__\":\"");
    sb_str(&b, hex);
    sb_str(&b, "\"");
    for (size_t i = 0; i < w->n; i++) {
        const struct wtensor *t = &w->t[i];
        uint32_t c = st_crc_bytes(st_crc_desc(t->dtype, t->ndim, t->shape), t->data, (size_t)t->nbytes);
        snprintf(hex, sizeof hex, "%08lx", (unsigned long)c);
        sb_str(&b, ",");
        sb_json(&b, t->name);
        sb_str(&b, ":\"");
        sb_str(&b, hex);
        sb_str(&b, "\"");
    }
    sb_str(&b, "}");
    int rc = m < 0 || b.oom ? wfail(w, NMT_ERR_NOMEM, "out of memory (checksums)") : meta_set(w, ST_CRC_KEY, b.p);
    free(b.p);
    return rc;
}

/* Data order: largest element size first (stable), so that every tensor starts at a multiple
 * of its element size once the header pads the data start to 8. Sets each tensor's begin. */
static int lay_out(st_writer *w, size_t *order)
{
    size_t k = 0;
    for (size_t es = 8; es >= 1; es /= 2)
        for (size_t i = 0; i < w->n; i++)
            if (st_dtype_size(w->t[i].dtype) == es) order[k++] = i;
    NMT_ASSERT(k == w->n);
    uint64_t pos = 0;
    for (size_t i = 0; i < w->n; i++) {
        struct wtensor *t = &w->t[order[i]];
        if (t->nbytes > UINT64_MAX - pos) return -1;
        t->begin = pos;
        pos += t->nbytes;
    }
    return 0;
}

int st_writer_save(st_writer *w, const char *path, nmt_err *err)
{
    if (!w || !path || !*path)
        return nmt_fail(err, NMT_ERR_ARG, "st_writer_save: NULL writer or empty path");
    if (!w->failed) add_checksums(w);
    if (w->failed) return nmt_fail(err, w->failed, "%s: not written: %s", path, w->why);
    size_t *order = malloc((w->n ? w->n : 1) * sizeof *order);
    if (!order) return nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory", path);
    if (lay_out(w, order)) {
        free(order);
        return nmt_fail(err, NMT_ERR_ARG, "%s: total tensor size overflows", path);
    }
    sbuf hdr = {0};
    int rc = NMT_OK;
    if (build_header(w, &hdr))
        rc = nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory (header)", path);
    else if (hdr.len > ST_MAX_HEADER)
        rc = nmt_fail(err, NMT_ERR_ARG, "%s: header would be %zu bytes (limit %u)", path, hdr.len, ST_MAX_HEADER);
    atomic_file af;
    if (!rc && !(rc = atomic_open(&af, path, err))) {
        unsigned char len8[8];
        for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)hdr.len >> (8 * i));
        /* a failed write sets the stream's error flag, which the commit checks */
        int ok = fwrite(len8, 1, 8, af.fp) == 8 && fwrite(hdr.p, 1, hdr.len, af.fp) == hdr.len;
        for (size_t i = 0; i < w->n && ok; i++) {
            const struct wtensor *t = &w->t[order[i]];
            ok = !t->nbytes || fwrite(t->data, 1, (size_t)t->nbytes, af.fp) == t->nbytes;
        }
        if (ok) rc = atomic_commit(&af, err);
        else {
            rc = nmt_fail(err, NMT_ERR_IO, "%s: writing '%s' failed: %s", path, af.tmp, errno ? strerror(errno) : "short write");
            atomic_abort(&af);
        }
    }
    free(order);
    free(hdr.p);
    return rc;
}
