/* safetensors.c: reading and writing the safetensors container (see safetensors.h).
 * The loader treats every file as hostile: every length, offset and size is checked with
 * overflow-safe arithmetic before any data byte is touched, and each problem has its own message.
 *
 * What the loader checks, in order:
 *   - the file holds the 8-byte header length N; N <= ST_MAX_HEADER; N <= bytes that follow;
 *   - the header is UTF-8 without NUL bytes, one JSON object, only whitespace after it;
 *   - "__metadata__" (at most once) is an object of strings with distinct keys;
 *   - every other key is a tensor name of 1..ST_MAX_NAME bytes whose value is an object with
 *     exactly the keys dtype (a known name), shape (0..8 non-negative integers whose product,
 *     times the element size, does not overflow) and data_offsets (two non-negative integers,
 *     begin <= end <= data section length, end - begin = numel * element size);
 *   - tensor names are distinct;
 *   - the byte ranges, sorted, tile the data section exactly: no overlap, no gap, no trailing
 *     bytes (an empty tensor must sit at a boundary, not inside another tensor's range);
 *   - the checksums (ST_CRC_KEY), when present: one well-formed CRC per tensor and one for the
 *     metadata, which is checked at once; tensor data is checked at load when the file is read
 *     whole, else by each st_read_* (st_open). The structural checks above cannot see a flipped
 *     weight or vocabulary letter; the checksums can.
 * cJSON hands numbers over as doubles, so integers are judged by value: 4.0 and 4e0 pass as 4.
 * Alignment is not required of files read (the data may start anywhere); st_data callers memcpy.
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <zlib.h>

#include "base/atomic.h"
#include "base/err.h"
#include "io/safetensors.h"

/* The data is raw little-endian; reading it with memcpy is only right on a little-endian host. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c assumes a little-endian host"
#endif

/* JSON numbers arrive as doubles: above 2^53 an integer may already have been rounded, so such
 * values are refused rather than trusted (no real file has offsets or dims that large). */
#define MAX_JSON_INT 9007199254740992.0

static const struct { const char *name; size_t size; } dtypes[ST_NDTYPE] = {
    [ST_F32] = {"F32", 4},  [ST_F64] = {"F64", 8},   [ST_I32] = {"I32", 4},
    [ST_I64] = {"I64", 8},  [ST_U8] = {"U8", 1},     [ST_I8] = {"I8", 1},
    [ST_I16] = {"I16", 2},  [ST_U16] = {"U16", 2},   [ST_U32] = {"U32", 4},
    [ST_U64] = {"U64", 8},  [ST_F16] = {"F16", 2},   [ST_BF16] = {"BF16", 2},
    [ST_BOOL] = {"BOOL", 1}, [ST_F8_E4M3] = {"F8_E4M3", 1}, [ST_F8_E5M2] = {"F8_E5M2", 1},
};

const char *st_dtype_name(int dtype)
{
    return dtype >= 0 && dtype < ST_NDTYPE ? dtypes[dtype].name : "?";
}

size_t st_dtype_size(int dtype)
{
    return dtype >= 0 && dtype < ST_NDTYPE ? dtypes[dtype].size : 0;
}

int st_dtype_parse(const char *s)
{
    for (int i = 0; s && i < ST_NDTYPE; i++)
        if (strcmp(s, dtypes[i].name) == 0) return i;
    return -1;
}

/* "[10,20]"; "[]" for a scalar. Truncates quietly: it only feeds messages. */
static void fmt_shape(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    size_t k = 0;
    k += (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < ndim && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
}

/* Product of the dims into *numel and numel * esize into *nbytes; 0, or -1 on overflow.
 * A zero dim anywhere makes the tensor empty however large the other dims are. */
static int shape_size(int ndim, const int64_t *shape, size_t esize, uint64_t *numel,
                      uint64_t *nbytes)
{
    uint64_t n = 1;
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0) { *numel = 0; *nbytes = 0; return 0; }
    for (int i = 0; i < ndim; i++) {
        uint64_t d = (uint64_t)shape[i];
        if (n > UINT64_MAX / d) return -1;
        n *= d;
    }
    if (esize && n > UINT64_MAX / esize) return -1;
    *numel = n;
    *nbytes = n * esize;
    return 0;
}

/* Index of the first byte that breaks UTF-8 (overlong forms, surrogates, > U+10FFFF and NUL
 * included), or len when all is well. */
static size_t utf8_bad(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        if (c == 0) return i;
        if (c < 0x80) { i++; continue; }
        size_t n;
        unsigned cp, min;
        if (c >= 0xc2 && c <= 0xdf) { n = 1; cp = c & 0x1f; min = 0x80; }
        else if (c >= 0xe0 && c <= 0xef) { n = 2; cp = c & 0x0f; min = 0x800; }
        else if (c >= 0xf0 && c <= 0xf4) { n = 3; cp = c & 0x07; min = 0x10000; }
        else return i;
        if (len - i <= n) return i;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return i;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
        i += n + 1;
    }
    return len;
}

/* ================================ checksums ================================ */

/* zlib's crc32 over any length (its length argument is an unsigned int). */
static uint32_t crc_bytes(uint32_t crc, const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n) {
        uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;
        crc = (uint32_t)crc32(crc, b, k);
        b += k;
        n -= k;
    }
    return crc;
}

/* The start of a tensor's CRC: what its bytes mean (dtype and shape), so that bytes relabelled
 * with another dtype or shape do not pass. */
static uint32_t crc_desc(int dtype, int ndim, const int64_t *shape)
{
    const char *dn = st_dtype_name(dtype);
    uint32_t c = crc_bytes((uint32_t)crc32(0, Z_NULL, 0), dn, strlen(dn) + 1);
    unsigned char nd = (unsigned char)ndim, le[8];
    c = crc_bytes(c, &nd, 1);
    for (int i = 0; i < ndim; i++) {
        for (int k = 0; k < 8; k++) le[k] = (unsigned char)((uint64_t)shape[i] >> (8 * k));
        c = crc_bytes(c, le, 8);
    }
    return c;
}

static int cmp_key(const void *a, const void *b);

/* CRC of the metadata pairs other than ST_CRC_KEY, in key order (writers may reorder them);
 * -1 when out of memory. */
static int64_t crc_meta(char **key, char **val, size_t n)
{
    char ***idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx) return -1;
    for (size_t i = 0; i < n; i++) idx[i] = &key[i];
    qsort(idx, n, sizeof *idx, cmp_key);
    uint32_t c = (uint32_t)crc32(0, Z_NULL, 0);
    for (size_t i = 0; i < n; i++) {
        size_t j = (size_t)(idx[i] - key);
        if (strcmp(key[j], ST_CRC_KEY) == 0) continue;
        c = crc_bytes(c, key[j], strlen(key[j]) + 1);
        c = crc_bytes(c, val[j], strlen(val[j]) + 1);
    }
    free(idx);
    return c;
}

/* ================================ reading ================================ */

struct st_file {
    char *name;
    int fd;                      /* st_open: the file, data read on demand; -1 when in memory */
    size_t data_off;             /* st_open: where the data section starts in the file */
    unsigned char *buf;          /* the whole file (st_open: the first 8 + N bytes only) */
    size_t len;
    const unsigned char *data;   /* buf + 8 + N */
    size_t data_len;
    int n;
    st_tensor *t;
    st_tensor **by_name;         /* sorted by name, for st_find */
    int nmeta;
    char **mkey, **mval;
    int has_crc;                 /* ST_CRC_KEY present (and its table well-formed) */
};

/* Prefixes the file name to every loader message. */
__attribute__((format(printf, 4, 5)))
static int ffail(const st_file *f, int code, nmt_err *err, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return nmt_fail(err, code, "%s: %s", f->name, msg);
}

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

/* The comparators sort pointers into one array, so that ties break by position (file order)
 * and no global state is needed: loading stays thread-safe. */
static int cmp_name(const void *a, const void *b)
{
    const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x > y) - (x < y);
}

static int cmp_range(const void *a, const void *b)
{
    const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return (x > y) - (x < y);
}

static int cmp_key(const void *a, const void *b)
{
    char *const *x = *(char *const *const *)a, *const *y = *(char *const *const *)b;
    int c = strcmp(*x, *y);
    return c ? c : (x > y) - (x < y);
}

/* A JSON number that is an integer in [0, 2^53]. */
static int json_uint(const cJSON *j, uint64_t *v)
{
    if (!cJSON_IsNumber(j)) return -1;
    double d = j->valuedouble;
    if (!(d >= 0 && d <= MAX_JSON_INT)) return -1;   /* also refuses NaN */
    uint64_t u = (uint64_t)d;
    if ((double)u != d) return -1;
    *v = u;
    return 0;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static int parse_metadata(st_file *f, const cJSON *m, nmt_err *err)
{
    if (!cJSON_IsObject(m))
        return ffail(f, NMT_ERR_FORMAT, err, "__metadata__ is not a JSON object");
    size_t cnt = 0;
    for (const cJSON *c = m->child; c; c = c->next) cnt++;
    if (cnt == 0) return 0;
    f->mkey = calloc(cnt, sizeof *f->mkey);
    f->mval = calloc(cnt, sizeof *f->mval);
    if (!f->mkey || !f->mval) return ffail(f, NMT_ERR_NOMEM, err, "out of memory (metadata)");
    for (const cJSON *c = m->child; c; c = c->next) {
        if (!cJSON_IsString(c) || !c->valuestring)
            return ffail(f, NMT_ERR_FORMAT, err, "__metadata__ value for '%.200s' is not a string",
                         c->string);
        int i = f->nmeta;
        f->mkey[i] = dup_str(c->string);
        f->mval[i] = dup_str(c->valuestring);
        f->nmeta++;   /* counted before the check so that st_free releases both */
        if (!f->mkey[i] || !f->mval[i])
            return ffail(f, NMT_ERR_NOMEM, err, "out of memory (metadata)");
    }
    /* Sorting finds duplicate keys in n log n: a hostile header can hold millions of them. */
    char ***idx = malloc(cnt * sizeof *idx);
    if (!idx) return ffail(f, NMT_ERR_NOMEM, err, "out of memory (metadata)");
    for (int i = 0; i < f->nmeta; i++) idx[i] = &f->mkey[i];
    qsort(idx, cnt, sizeof *idx, cmp_key);
    for (int i = 1; i < f->nmeta; i++)
        if (strcmp(*idx[i - 1], *idx[i]) == 0) {
            int rc = ffail(f, NMT_ERR_FORMAT, err, "duplicate __metadata__ key '%.200s'",
                           *idx[i]);
            free(idx);
            return rc;
        }
    free(idx);
    return 0;
}

/* Fills t (whose name is already set) from its header entry. */
static int parse_entry(st_file *f, st_tensor *t, const cJSON *e, nmt_err *err)
{
    const char *nm = t->name;
    if (!cJSON_IsObject(e))
        return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': entry is not a JSON object", nm);
    const cJSON *jd = NULL, *js = NULL, *jo = NULL;
    for (const cJSON *c = e->child; c; c = c->next) {
        const cJSON **slot = strcmp(c->string, "dtype") == 0 ? &jd
                           : strcmp(c->string, "shape") == 0 ? &js
                           : strcmp(c->string, "data_offsets") == 0 ? &jo : NULL;
        if (!slot)
            return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': unknown key '%.100s'", nm, c->string);
        if (*slot)
            return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': duplicate key '%s'", nm, c->string);
        *slot = c;
    }
    if (!jd) return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': missing 'dtype'", nm);
    if (!js) return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': missing 'shape'", nm);
    if (!jo) return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': missing 'data_offsets'", nm);

    if (!cJSON_IsString(jd) || !jd->valuestring)
        return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': dtype is not a string", nm);
    t->dtype = st_dtype_parse(jd->valuestring);
    if (t->dtype < 0)
        return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': unknown dtype '%.40s'", nm,
                     jd->valuestring);

    if (!cJSON_IsArray(js))
        return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': shape is not an array", nm);
    int nd = 0;
    for (const cJSON *c = js->child; c; c = c->next, nd++) {
        uint64_t v;
        if (nd >= ST_MAX_DIMS)
            return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': shape has more than %d dimensions",
                         nm, ST_MAX_DIMS);
        if (json_uint(c, &v))
            return ffail(f, NMT_ERR_FORMAT, err,
                         "tensor '%s': shape[%d] is not a non-negative integer (at most 2^53)",
                         nm, nd);
        t->shape[nd] = (int64_t)v;
    }
    t->ndim = nd;
    uint64_t numel, need;
    char sh[200];
    fmt_shape(sh, sizeof sh, t->ndim, t->shape);
    if (shape_size(t->ndim, t->shape, st_dtype_size(t->dtype), &numel, &need))
        return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': shape %s overflows 64 bits in bytes",
                     nm, sh);

    uint64_t off[2];
    int k = 0;
    if (!cJSON_IsArray(jo))
        return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': data_offsets is not an array", nm);
    for (const cJSON *c = jo->child; c; c = c->next, k++)
        if (k >= 2 || json_uint(c, &off[k]))
            return ffail(f, NMT_ERR_FORMAT, err,
                         "tensor '%s': data_offsets is not two non-negative integers", nm);
    if (k != 2)
        return ffail(f, NMT_ERR_FORMAT, err,
                     "tensor '%s': data_offsets is not two non-negative integers", nm);
    t->begin = off[0];
    t->end = off[1];
    if (t->begin > t->end)
        return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': data_offsets [%llu,%llu] begin after end",
                     nm, (unsigned long long)t->begin, (unsigned long long)t->end);
    if (t->end > f->data_len)
        return ffail(f, NMT_ERR_FORMAT, err,
                     "tensor '%s': data_offsets end %llu is past the end of the data section "
                     "(%zu bytes)", nm, (unsigned long long)t->end, f->data_len);
    if (t->end - t->begin != need)
        return ffail(f, NMT_ERR_FORMAT, err,
                     "tensor '%s': data_offsets [%llu,%llu] hold %llu bytes but shape %s of %s "
                     "needs %llu", nm, (unsigned long long)t->begin, (unsigned long long)t->end,
                     (unsigned long long)(t->end - t->begin), sh, st_dtype_name(t->dtype),
                     (unsigned long long)need);
    return 0;
}

/* Distinct names, and byte ranges that tile [0, data_len) exactly. */
static int check_table(st_file *f, nmt_err *err)
{
    if (f->n == 0) {
        if (f->data_len)
            return ffail(f, NMT_ERR_FORMAT, err,
                         "%zu trailing bytes in the data section, which holds no tensor",
                         f->data_len);
        return 0;
    }
    f->by_name = malloc((size_t)f->n * sizeof *f->by_name);
    st_tensor **idx = malloc((size_t)f->n * sizeof *idx);
    if (!f->by_name || !idx) {
        free(idx);
        return ffail(f, NMT_ERR_NOMEM, err, "out of memory (tensor table)");
    }
    for (int i = 0; i < f->n; i++) f->by_name[i] = idx[i] = &f->t[i];
    qsort(f->by_name, (size_t)f->n, sizeof *idx, cmp_name);
    qsort(idx, (size_t)f->n, sizeof *idx, cmp_range);
    int rc = 0;
    for (int i = 1; i < f->n && !rc; i++)
        if (strcmp(f->by_name[i - 1]->name, f->by_name[i]->name) == 0)
            rc = ffail(f, NMT_ERR_FORMAT, err, "duplicate tensor name '%s'", f->by_name[i]->name);
    uint64_t pos = 0;
    const st_tensor *prev = NULL;
    for (int i = 0; i < f->n && !rc; i++) {
        const st_tensor *t = idx[i];
        if (t->begin < pos)
            rc = ffail(f, NMT_ERR_FORMAT, err, "tensors '%s' [%llu,%llu] and '%s' [%llu,%llu] "
                       "overlap", prev->name, (unsigned long long)prev->begin,
                       (unsigned long long)prev->end, t->name, (unsigned long long)t->begin,
                       (unsigned long long)t->end);
        else if (t->begin > pos)
            rc = ffail(f, NMT_ERR_FORMAT, err, "bytes [%llu,%llu) of the data section belong to "
                       "no tensor (gap before '%s')", (unsigned long long)pos,
                       (unsigned long long)t->begin, t->name);
        pos = t->end;
        prev = t;
    }
    if (!rc && pos < f->data_len)
        rc = ffail(f, NMT_ERR_FORMAT, err, "%llu trailing bytes after the last tensor (data "
                   "section is %zu bytes, tensors cover %llu)",
                   (unsigned long long)(f->data_len - pos), f->data_len, (unsigned long long)pos);
    free(idx);
    return rc;
}

static int parse_header(st_file *f, const cJSON *root, nmt_err *err)
{
    if (!cJSON_IsObject(root))
        return ffail(f, NMT_ERR_FORMAT, err, "header is not a JSON object");
    size_t cnt = 0;
    int seen_meta = 0;
    for (const cJSON *c = root->child; c; c = c->next) cnt++;
    if (cnt > (size_t)INT32_MAX)
        return ffail(f, NMT_ERR_FORMAT, err, "header has too many entries");
    f->t = calloc(cnt ? cnt : 1, sizeof *f->t);
    if (!f->t) return ffail(f, NMT_ERR_NOMEM, err, "out of memory (%zu header entries)", cnt);
    for (const cJSON *c = root->child; c; c = c->next) {
        int rc;
        if (strcmp(c->string, "__metadata__") == 0) {
            if (seen_meta++) return ffail(f, NMT_ERR_FORMAT, err, "duplicate __metadata__");
            if ((rc = parse_metadata(f, c, err))) return rc;
            continue;
        }
        size_t len = strlen(c->string);
        if (len == 0) return ffail(f, NMT_ERR_FORMAT, err, "empty tensor name");
        if (len > ST_MAX_NAME)
            return ffail(f, NMT_ERR_FORMAT, err, "tensor name '%.40s...' is %zu bytes long "
                         "(max %d)", c->string, len, ST_MAX_NAME);
        st_tensor *t = &f->t[f->n];
        if (!(t->name = dup_str(c->string)))
            return ffail(f, NMT_ERR_NOMEM, err, "out of memory (tensor names)");
        f->n++;
        if ((rc = parse_entry(f, t, c, err))) return rc;
    }
    return check_table(f, err);
}

/* "1a2b3c4d" (8 hex digits) as a CRC; -1 when malformed. */
static int64_t parse_crc(const cJSON *j)
{
    if (!cJSON_IsString(j) || !j->valuestring || strlen(j->valuestring) != 8) return -1;
    uint32_t v = 0;
    for (const char *p = j->valuestring; *p; p++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
        if (d < 0) return -1;
        v = v << 4 | (uint32_t)d;
    }
    return v;
}

static int corrupt(const st_file *f, nmt_err *err, const char *what)
{
    return ffail(f, NMT_ERR_FORMAT, err, "checksum mismatch in %s: the file is corrupt", what);
}

/* Reads the ST_CRC_KEY table into the tensors and checks the metadata against it. */
static int read_crc_table(st_file *f, const char *json, nmt_err *err)
{
    cJSON *o = cJSON_Parse(json);
    int rc = cJSON_IsObject(o) ? 0 : ffail(f, NMT_ERR_FORMAT, err, "the checksum table (%s) is not a JSON object: the file is corrupt", ST_CRC_KEY);
    int64_t meta = -1;
    for (const cJSON *c = o ? o->child : NULL; c && !rc; c = c->next) {
        int64_t v = parse_crc(c);
        st_tensor *t = strcmp(c->string, "__metadata__") ? (st_tensor *)st_find(f, c->string) : NULL;
        if (v < 0 || (!t && strcmp(c->string, "__metadata__")) || (t && t->has_crc))
            rc = ffail(f, NMT_ERR_FORMAT, err, "the checksum table has a bad entry '%.100s': the file is corrupt", c->string);
        else if (t) { t->crc = (uint32_t)v; t->has_crc = 1; }
        else if (meta >= 0) rc = ffail(f, NMT_ERR_FORMAT, err, "the checksum table lists the metadata twice: the file is corrupt");
        else meta = v;
    }
    cJSON_Delete(o);
    for (int i = 0; i < f->n && !rc; i++)
        if (!f->t[i].has_crc) rc = ffail(f, NMT_ERR_FORMAT, err, "tensor '%s' has no checksum: the file is corrupt", f->t[i].name);
    if (rc) return rc;
    if (meta < 0) return ffail(f, NMT_ERR_FORMAT, err, "the checksum table lacks the metadata's: the file is corrupt");
    int64_t have = crc_meta(f->mkey, f->mval, (size_t)f->nmeta);
    if (have < 0) return ffail(f, NMT_ERR_NOMEM, err, "out of memory (checksums)");
    return have == meta ? 0 : corrupt(f, err, "the metadata");
}

/* Files written before checksums existed (or by other programs) have no ST_CRC_KEY: they load
 * as before, unchecked. A file read whole has its tensors checked here; st_open's, as read. */
static int check_checksums(st_file *f, nmt_err *err)
{
    const char *json = st_meta(f, ST_CRC_KEY);
    if (!json) return 0;
    int rc = read_crc_table(f, json, err);
    if (rc) return rc;
    f->has_crc = 1;
    for (int i = 0; i < f->n && f->fd < 0; i++) {
        const st_tensor *t = &f->t[i];
        uint32_t c = crc_bytes(crc_desc(t->dtype, t->ndim, t->shape), f->data + t->begin, (size_t)(t->end - t->begin));
        if (c != t->crc) {
            char what[300];
            snprintf(what, sizeof what, "tensor %s", t->name);
            return corrupt(f, err, what);
        }
    }
    return 0;
}

/* Validates f->buf[0..len) and builds the tables; f->name and f->buf are set. */
static int parse_file(st_file *f, nmt_err *err)
{
    if (f->len < 8)
        return ffail(f, NMT_ERR_FORMAT, err, "file is %zu bytes, shorter than the 8-byte header "
                     "length", f->len);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | f->buf[i];
    if (n > ST_MAX_HEADER)
        return ffail(f, NMT_ERR_FORMAT, err, "header length %llu exceeds the limit of %u bytes "
                     "(not a safetensors file?)", (unsigned long long)n, ST_MAX_HEADER);
    if (n > f->len - 8)
        return ffail(f, NMT_ERR_FORMAT, err, "header length %llu is larger than the %zu bytes "
                     "after the length field (truncated file?)", (unsigned long long)n, f->len - 8);
    const unsigned char *h = f->buf + 8;
    f->data = h + n;
    f->data_len = f->len - 8 - (size_t)n;
    if (n == 0) return ffail(f, NMT_ERR_FORMAT, err, "header is empty");
    size_t bad = utf8_bad(h, (size_t)n);
    if (bad < n)
        return ffail(f, NMT_ERR_FORMAT, err, "header is not valid UTF-8%s (byte %zu of the header)",
                     h[bad] ? "" : ": NUL byte", bad);

    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts((const char *)h, (size_t)n, &end, 0);
    if (!root) {
        size_t at = end && end >= (const char *)h ? (size_t)(end - (const char *)h) : 0;
        return ffail(f, NMT_ERR_FORMAT, err, "header is not valid JSON (near byte %zu of %llu)",
                     at, (unsigned long long)n);
    }
    /* Writers pad with spaces; anything else after the object means a damaged header. */
    for (const char *p = end; p < (const char *)h + n; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            cJSON_Delete(root);
            return ffail(f, NMT_ERR_FORMAT, err, "header is not valid JSON: text after the object "
                         "(byte %zu of %llu)", (size_t)(p - (const char *)h),
                         (unsigned long long)n);
        }
    int rc = parse_header(f, root, err);
    cJSON_Delete(root);
    return rc ? rc : check_checksums(f, err);
}

static st_file *file_new(const char *name)
{
    st_file *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->fd = -1;
    if (!(f->name = dup_str(name ? name : "<memory>"))) { free(f); return NULL; }
    return f;
}

/* Takes ownership of f: on failure it is freed. */
static int finish_load(st_file **out, st_file *f, nmt_err *err)
{
    int rc = parse_file(f, err);
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

/* Opens path as a regular file no larger than memory can index; *fd and *size on success. */
static int open_regular(const char *path, int *fd_out, size_t *size, nmt_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return nmt_fail(err, NMT_ERR_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX - 1) {
        close(fd);
        return nmt_fail(err, NMT_ERR_NOMEM, "%s: file too large to hold in memory", path);
    }
    *fd_out = fd;
    *size = (size_t)sb.st_size;
    return NMT_OK;
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
    if ((rc = open_regular(path, &fd, &size, err))) return rc;
    /* the header length, then as much of the header as the checks of parse_file let it read */
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
    if ((rc = open_regular(path, &fd, &size, err))) return rc;
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

const st_tensor *st_find(const st_file *f, const char *name)
{
    if (!f || !name) return NULL;
    int lo = 0, hi = f->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const st_tensor *t = f->by_name[mid];
        int c = strcmp(name, t->name);
        if (c == 0) return t;
        if (c < 0) hi = mid - 1; else lo = mid + 1;
    }
    return NULL;
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
    if (!errno) return ffail(f, NMT_ERR_IO, err, "file shrank while reading tensor '%s'", t->name);
    return ffail(f, NMT_ERR_IO, err, "reading tensor '%s': %s", t->name, strerror(errno));
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
    uint32_t crc = crc_desc(t->dtype, t->ndim, t->shape);
    for (size_t i0 = 0; i0 < n; i0 += per) {
        size_t k = n - i0 < per ? n - i0 : per;
        int rc = data_read(f, t, i0 * from, buf, k * from, err);
        if (!rc) rc = conv(f, t, dst, buf, i0, k, err);
        if (rc) return rc;
        crc = crc_bytes(crc, buf, k * from);
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
    return corrupt(f, err, what);
}

/* All of t, unconverted, into dst (nb bytes), checked. */
static int read_whole(const st_file *f, const st_tensor *t, void *dst, size_t nb, nmt_err *err)
{
    int rc = data_read(f, t, 0, dst, nb, err);
    if (rc || f->fd < 0 || !t->has_crc) return rc;
    return read_checked(f, t, crc_bytes(crc_desc(t->dtype, t->ndim, t->shape), dst, nb), err);
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
            return ffail(f, NMT_ERR_NUMERIC, err, "tensor '%s' element %zu = %g does not fit in float32", t->name,
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

const char *st_meta(const st_file *f, const char *key)
{
    for (int i = 0; f && key && i < f->nmeta; i++)
        if (strcmp(f->mkey[i], key) == 0) return f->mval[i];
    return NULL;
}

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
    if (!t || shape_size(t->ndim, t->shape, 0, &numel, &nbytes)) return 0;
    return (size_t)numel;   /* loaded tensors fit: their bytes lie inside the file */
}

size_t st_nbytes(const st_tensor *t) { return t ? (size_t)(t->end - t->begin) : 0; }

int st_expect(const st_file *f, const char *name, int dtype, int ndim, const int64_t *shape,
              nmt_err *err)
{
    const st_tensor *t = st_find(f, name);
    if (!t) return ffail(f, NMT_ERR_FORMAT, err, "no tensor '%s'", name);
    if (dtype >= 0 && t->dtype != dtype)
        return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s' has dtype %s, expected %s", name,
                     st_dtype_name(t->dtype), st_dtype_name(dtype));
    int same = t->ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = t->shape[i] == shape[i];
    if (!same) {
        char a[200], b[200];
        fmt_shape(a, sizeof a, t->ndim, t->shape);
        fmt_shape(b, sizeof b, ndim, shape);
        return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s' has shape %s, expected %s", name, a, b);
    }
    return 0;
}

/* The tensor to copy into an n-element destination, or NULL after setting the error. */
static const st_tensor *find_n(const st_file *f, const char *name, size_t n, int *rc,
                               nmt_err *err)
{
    if (!f || !name) { *rc = nmt_fail(err, NMT_ERR_ARG, "st_read: NULL argument"); return NULL; }
    const st_tensor *t = st_find(f, name);
    if (!t) { *rc = ffail(f, NMT_ERR_FORMAT, err, "no tensor '%s'", name); return NULL; }
    size_t have = st_numel(t);
    if (have != n) {
        *rc = ffail(f, NMT_ERR_FORMAT, err, "tensor '%s' has %zu elements, expected %zu", name,
                    have, n);
        return NULL;
    }
    return t;
}

static int bad_dtype(const st_file *f, const st_tensor *t, const char *want, nmt_err *err)
{
    return ffail(f, NMT_ERR_FORMAT, err, "tensor '%s' has dtype %s, expected %s", t->name,
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

/* ================================ writing ================================ */

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
    return utf8_bad((const unsigned char *)s, n) == n;
}

/* Sets (or replaces) a metadata pair, without the argument checks. */
static int meta_set(st_writer *w, const char *key, const char *value)
{
    char *v = dup_str(value);
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
    char *k = dup_str(key);
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
    if (shape_size(ndim, shape, dtypes[dtype].size, &numel, &nbytes) || nbytes > SIZE_MAX)
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
    if (!(t->name = dup_str(name))) return wfail(w, NMT_ERR_NOMEM, "st_writer_add: out of memory");
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
    int64_t m = crc_meta(w->mkey, w->mval, w->nmeta);
    snprintf(hex, sizeof hex, "%08lx", (unsigned long)(uint32_t)(m < 0 ? 0 : m));
    sb_str(&b, "{\"__metadata__\":\"");
    sb_str(&b, hex);
    sb_str(&b, "\"");
    for (size_t i = 0; i < w->n; i++) {
        const struct wtensor *t = &w->t[i];
        uint32_t c = crc_bytes(crc_desc(t->dtype, t->ndim, t->shape), t->data, (size_t)t->nbytes);
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
            if (dtypes[w->t[i].dtype].size == es) order[k++] = i;
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
