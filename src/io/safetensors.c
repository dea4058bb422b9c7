/* safetensors.c: the safetensors container's parts that reading and writing share: the dtype
 * names, shapes, the UTF-8 check and the checksums. The reader is st_header.c (the header's
 * validation) and st_read.c (opening, tensor access); the writer is st_write.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "io/st_internal.h"

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
void st_fmt_shape(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    size_t k = 0;
    k += (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < ndim && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
}

/* Product of the dims into *numel and numel * esize into *nbytes; 0, or -1 on overflow.
 * A zero dim anywhere makes the tensor empty however large the other dims are. */
int st_shape_size(int ndim, const int64_t *shape, size_t esize, uint64_t *numel,
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
size_t st_utf8_bad(const unsigned char *s, size_t len)
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
uint32_t st_crc_bytes(uint32_t crc, const void *p, size_t n)
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
uint32_t st_crc_desc(int dtype, int ndim, const int64_t *shape)
{
    const char *dn = st_dtype_name(dtype);
    uint32_t c = st_crc_bytes((uint32_t)crc32(0, Z_NULL, 0), dn, strlen(dn) + 1);
    unsigned char nd = (unsigned char)ndim, le[8];
    c = st_crc_bytes(c, &nd, 1);
    for (int i = 0; i < ndim; i++) {
        for (int k = 0; k < 8; k++) le[k] = (unsigned char)((uint64_t)shape[i] >> (8 * k));
        c = st_crc_bytes(c, le, 8);
    }
    return c;
}

/* CRC of the metadata pairs other than ST_CRC_KEY, in key order (writers may reorder them);
 * -1 when out of memory. */
int64_t st_crc_meta(char **key, char **val, size_t n)
{
    char ***idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx) return -1;
    for (size_t i = 0; i < n; i++) idx[i] = &key[i];
    qsort(idx, n, sizeof *idx, st_cmp_key);
    uint32_t c = (uint32_t)crc32(0, Z_NULL, 0);
    for (size_t i = 0; i < n; i++) {
        size_t j = (size_t)(idx[i] - key);
        if (strcmp(key[j], ST_CRC_KEY) == 0) continue;
        c = st_crc_bytes(c, key[j], strlen(key[j]) + 1);
        c = st_crc_bytes(c, val[j], strlen(val[j]) + 1);
    }
    free(idx);
    return c;
}


int st_cmp_key(const void *a, const void *b)
{
    char *const *x = *(char *const *const *)a, *const *y = *(char *const *const *)b;
    int c = strcmp(*x, *y);
    return c ? c : (x > y) - (x < y);
}


char *st_dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}
