/* st_read.c: opening a safetensors file (whole into memory, or the header alone with tensors
 * read on demand) and reading its tensors, converted where the dtype allows it exactly and
 * checked against their checksums. The header's checks are in st_header.c. */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/paths.h"
#include "io/st_internal.h"

void st_free(st_file *f)
{
    if (!f) return;
    for (int i = 0; i < f->n; i++) free(f->t[i].name);
    for (int i = 0; i < f->nmeta; i++) { free(f->mkey[i]); free(f->mval[i]); }
    free(f->t);
    free(f->by_name);
    free(f->mkey);
    free(f->mval);
    free(f->buf);
    free(f->name);
    if (f->fd >= 0) close(f->fd);
    free(f);
}

static st_file *file_new(const char *name)
{
    st_file *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->fd = -1;
    if (!(f->name = st_dup_str(name ? name : "<memory>"))) { free(f); return NULL; }
    return f;
}

/* Takes ownership of f: on failure it is freed. */
static int finish_load(st_file **out, st_file *f, nmt_err *err)
{
    int rc = st_parse_file(f, err);
    if (rc) { st_free(f); return rc; }
    *out = f;
    return 0;
}

int st_load_mem(st_file **out, const void *buf, size_t len, const char *name_for_errors,
                nmt_err *err)
{
    const char *nm = name_for_errors ? name_for_errors : "<memory>";
    if (!out) return nmt_fail(err, NMT_ERR_ARG, "%s: st_load_mem: out is NULL", nm);
    *out = NULL;
    if (!buf && len) return nmt_fail(err, NMT_ERR_ARG, "%s: st_load_mem: buf is NULL", nm);
    st_file *f = file_new(nm);
    if (!f || !(f->buf = malloc(len ? len : 1))) {
        st_free(f);
        return nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory (%zu bytes)", nm, len);
    }
    if (len) memcpy(f->buf, buf, len);
    f->len = len;
    return finish_load(out, f, err);
}

/* n bytes at offset at of fd; 0, or -1 with errno (0 when the file ended first) */
static int read_at(int fd, void *dst, size_t n, size_t at)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)dst + got, n - got, (off_t)(at + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = 0;
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

/* read_at's failure as a message naming the file; errno as read_at left it */
static int read_fail(const char *path, nmt_err *err)
{
    return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, errno ? strerror(errno) : "file shrank while reading");
}

/* A new st_file for path that owns fd (st_free closes it) and holds buf_len bytes of the file
 * from its start; NULL with *rc set on failure, fd closed. */
static st_file *file_read(const char *path, int fd, size_t buf_len, int *rc, nmt_err *err)
{
    st_file *f = file_new(path);
    if (!f) {
        close(fd);
        *rc = nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory", path);
        return NULL;
    }
    f->fd = fd;
    if (!(f->buf = malloc(buf_len ? buf_len : 1))) {
        st_free(f);
        *rc = nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory (%zu bytes)", path, buf_len);
        return NULL;
    }
    if (read_at(fd, f->buf, buf_len, 0)) {
        *rc = read_fail(path, err);
        st_free(f);
        return NULL;
    }
    return f;
}

int st_open(st_file **out, const char *path, nmt_err *err)
{
    if (!out || !path) return nmt_fail(err, NMT_ERR_ARG, "st_open: NULL argument");
    *out = NULL;
    int fd = -1, rc;
    size_t size = 0;
    if ((rc = path_open_regular(path, &fd, &size, err))) return rc;
    /* the header length, then as much of the header as the checks of st_parse_file let it read */
    unsigned char len8[8] = {0};
    if (size >= 8 && read_at(fd, len8, 8, 0)) {
        rc = read_fail(path, err);
        close(fd);
        return rc;
    }
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | len8[i];
    size_t hb = size >= 8 && n <= ST_MAX_HEADER && n <= size - 8 ? 8 + (size_t)n : size < 8 ? size : 8;
    st_file *f = file_read(path, fd, hb, &rc, err);
    if (!f) return rc;
    if (hb >= 8 && memcmp(f->buf, len8, 8)) { /* the buffer was sized from the first read */
        st_free(f);
        return nmt_fail(err, NMT_ERR_IO, "%s: the file changed while it was being read", path);
    }
    f->len = size;
    f->data_off = hb;
    return finish_load(out, f, err);
}

int st_load(st_file **out, const char *path, nmt_err *err)
{
    if (!out || !path) return nmt_fail(err, NMT_ERR_ARG, "st_load: NULL argument");
    *out = NULL;
    int fd = -1, rc;
    size_t size = 0;
    if ((rc = path_open_regular(path, &fd, &size, err))) return rc;
    st_file *f = file_read(path, fd, size, &rc, err);
    if (!f) return rc;
    close(f->fd); /* all of it is in memory */
    f->fd = -1;
    f->len = size;
    return finish_load(out, f, err);
}

const char *st_name(const st_file *f) { return f ? f->name : NULL; }
int st_has_checksums(const st_file *f) { return f ? f->has_crc : 0; }
int st_count(const st_file *f) { return f ? f->n : 0; }
int st_meta_count(const st_file *f) { return f ? f->nmeta : 0; }

const st_tensor *st_get(const st_file *f, int i)
{
    return f && i >= 0 && i < f->n ? &f->t[i] : NULL;
}

const void *st_data(const st_file *f, const st_tensor *t)
{
    return f && t && f->fd < 0 ? f->data + t->begin : NULL;
}

/* Bytes [off, off + nb) of t's data into dst, from memory or from the file (st_open). */
static int data_read(const st_file *f, const st_tensor *t, size_t off, void *dst, size_t nb, nmt_err *err)
{
    if (!nb) return NMT_OK;
    if (f->fd < 0) {
        memcpy(dst, f->data + t->begin + off, nb);
        return NMT_OK;
    }
    if (read_at(f->fd, dst, nb, f->data_off + t->begin + off) == 0) return NMT_OK;
    if (!errno) return st_ffail(f, NMT_ERR_IO, err, "file shrank while reading tensor '%s'", t->name);
    return st_ffail(f, NMT_ERR_IO, err, "reading tensor '%s': %s", t->name, strerror(errno));
}

/* Reads t's n elements of `from` bytes each, chunk by chunk, and hands each chunk to conv, which
 * converts elements [i0, i0 + k) from src (unaligned) into the destination. */
typedef int (*conv_fn)(const st_file *f, const st_tensor *t, void *dst, const unsigned char *src, size_t i0, size_t k,
                       nmt_err *err);
static int read_checked(const st_file *f, const st_tensor *t, uint32_t crc, nmt_err *err);
static int read_converted(const st_file *f, const st_tensor *t, size_t n, size_t from, void *dst, conv_fn conv,
                          nmt_err *err)
{
    unsigned char buf[1 << 15];
    size_t per = sizeof buf / from;
    uint32_t crc = st_crc_desc(t->dtype, t->ndim, t->shape);
    for (size_t i0 = 0; i0 < n; i0 += per) {
        size_t k = n - i0 < per ? n - i0 : per;
        int rc = data_read(f, t, i0 * from, buf, k * from, err);
        if (!rc) rc = conv(f, t, dst, buf, i0, k, err);
        if (rc) return rc;
        crc = st_crc_bytes(crc, buf, k * from);
    }
    return read_checked(f, t, crc, err);
}

/* A whole tensor read from the file (st_open) against its checksum; files read whole were
 * checked at load. */
static int read_checked(const st_file *f, const st_tensor *t, uint32_t crc, nmt_err *err)
{
    if (f->fd < 0 || !t->has_crc || crc == t->crc) return NMT_OK;
    char what[300];
    snprintf(what, sizeof what, "tensor %s", t->name);
    return st_corrupt(f, err, what);
}

/* All of t, unconverted, into dst (nb bytes), checked. */
static int read_whole(const st_file *f, const st_tensor *t, void *dst, size_t nb, nmt_err *err)
{
    int rc = data_read(f, t, 0, dst, nb, err);
    if (rc || f->fd < 0 || !t->has_crc) return rc;
    return read_checked(f, t, st_crc_bytes(st_crc_desc(t->dtype, t->ndim, t->shape), dst, nb), err);
}

static int f64_to_f32(const st_file *f, const st_tensor *t, void *dst, const unsigned char *src, size_t i0, size_t k,
                      nmt_err *err)
{
    float *d = (float *)dst + i0;
    for (size_t i = 0; i < k; i++) {
        double v;
        memcpy(&v, src + i * sizeof v, sizeof v);
        /* Out-of-range double-to-float conversion is undefined in C: refuse it by name. */
        if (isfinite(v) && fabs(v) > FLT_MAX)
            return st_ffail(f, NMT_ERR_NUMERIC, err, "tensor '%s' element %zu = %g does not fit in float32", t->name,
                         i0 + i, v);
        d[i] = (float)v;
    }
    return NMT_OK;
}

/* exact widenings: F32 to F64, I32 to I64 */
#define WIDEN(NAME, FROM, TO)                                                                                      \
    static int NAME(const st_file *f, const st_tensor *t, void *dst, const unsigned char *src, size_t i0, size_t k, \
                    nmt_err *err)                                                                                  \
    {                                                                                                              \
        (void)f; (void)t; (void)err;                                                                               \
        TO *d = (TO *)dst + i0;                                                                                    \
        for (size_t i = 0; i < k; i++) {                                                                           \
            FROM v;                                                                                                \
            memcpy(&v, src + i * sizeof v, sizeof v);                                                              \
            d[i] = v;                                                                                              \
        }                                                                                                          \
        return NMT_OK;                                                                                             \
    }
WIDEN(f32_to_f64, float, double)
WIDEN(i32_to_i64, int32_t, int64_t)

int st_meta_get(const st_file *f, int i, const char **key, const char **value)
{
    if (!f || i < 0 || i >= f->nmeta) return NMT_ERR_ARG;
    if (key) *key = f->mkey[i];
    if (value) *value = f->mval[i];
    return 0;
}

size_t st_numel(const st_tensor *t)
{
    uint64_t numel, nbytes;
    if (!t || st_shape_size(t->ndim, t->shape, 0, &numel, &nbytes)) return 0;
    return (size_t)numel;   /* loaded tensors fit: their bytes lie inside the file */
}

size_t st_nbytes(const st_tensor *t) { return t ? (size_t)(t->end - t->begin) : 0; }

int st_expect(const st_file *f, const char *name, int dtype, int ndim, const int64_t *shape,
              nmt_err *err)
{
    const st_tensor *t = st_find(f, name);
    if (!t) return st_ffail(f, NMT_ERR_FORMAT, err, "no tensor '%s'", name);
    if (dtype >= 0 && t->dtype != dtype)
        return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s' has dtype %s, expected %s", name,
                     st_dtype_name(t->dtype), st_dtype_name(dtype));
    int same = t->ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = t->shape[i] == shape[i];
    if (!same) {
        char a[200], b[200];
        st_fmt_shape(a, sizeof a, t->ndim, t->shape);
        st_fmt_shape(b, sizeof b, ndim, shape);
        return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s' has shape %s, expected %s", name, a, b);
    }
    return 0;
}

/* The tensor to copy into an n-element destination, or NULL after setting the error. */
static const st_tensor *find_n(const st_file *f, const char *name, size_t n, int *rc,
                               nmt_err *err)
{
    if (!f || !name) { *rc = nmt_fail(err, NMT_ERR_ARG, "st_read: NULL argument"); return NULL; }
    const st_tensor *t = st_find(f, name);
    if (!t) { *rc = st_ffail(f, NMT_ERR_FORMAT, err, "no tensor '%s'", name); return NULL; }
    size_t have = st_numel(t);
    if (have != n) {
        *rc = st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s' has %zu elements, expected %zu", name,
                    have, n);
        return NULL;
    }
    return t;
}

static int bad_dtype(const st_file *f, const st_tensor *t, const char *want, nmt_err *err)
{
    return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s' has dtype %s, expected %s", t->name,
                 st_dtype_name(t->dtype), want);
}

int st_read_f32(const st_file *f, const char *name, float *dst, size_t n, nmt_err *err)
{
    int rc = 0;
    const st_tensor *t = find_n(f, name, n, &rc, err);
    if (!t) return rc;
    if (t->dtype == ST_F32) return read_whole(f, t, dst, n * sizeof *dst, err);
    if (t->dtype != ST_F64) return bad_dtype(f, t, "F32 or F64", err);
    return read_converted(f, t, n, sizeof(double), dst, f64_to_f32, err);
}

int st_read_f64(const st_file *f, const char *name, double *dst, size_t n, nmt_err *err)
{
    int rc = 0;
    const st_tensor *t = find_n(f, name, n, &rc, err);
    if (!t) return rc;
    if (t->dtype == ST_F64) return read_whole(f, t, dst, n * sizeof *dst, err);
    if (t->dtype != ST_F32) return bad_dtype(f, t, "F64 or F32", err);
    return read_converted(f, t, n, sizeof(float), dst, f32_to_f64, err);
}

int st_read_i64(const st_file *f, const char *name, int64_t *dst, size_t n, nmt_err *err)
{
    int rc = 0;
    const st_tensor *t = find_n(f, name, n, &rc, err);
    if (!t) return rc;
    if (t->dtype == ST_I64) return read_whole(f, t, dst, n * sizeof *dst, err);
    if (t->dtype != ST_I32) return bad_dtype(f, t, "I64 or I32", err);
    return read_converted(f, t, n, sizeof(int32_t), dst, i32_to_i64, err);
}
