/* st_internal.h: what the safetensors files (safetensors.c, st_header.c, st_read.c,
 * st_write.c) share and nothing else sees: the reader's record of a file, and the helpers for
 * shapes, UTF-8, checksums and messages. The public interface is io/safetensors.h. */
#ifndef NMT_ST_INTERNAL_H
#define NMT_ST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "io/safetensors.h"

/* The data is raw little-endian; reading it with memcpy is only right on a little-endian host. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the safetensors code assumes a little-endian host"
#endif

/* JSON numbers arrive as doubles: above 2^53 an integer may already have been rounded, so such
 * values are refused rather than trusted (no real file has offsets or dims that large). */
#define MAX_JSON_INT 9007199254740992.0

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

/* safetensors.c */
void st_fmt_shape(char *buf, size_t cap, int ndim, const int64_t *shape);
int st_shape_size(int ndim, const int64_t *shape, size_t esize, uint64_t *numel, uint64_t *nbytes);
size_t st_utf8_bad(const unsigned char *s, size_t len);
uint32_t st_crc_bytes(uint32_t crc, const void *p, size_t n);
uint32_t st_crc_desc(int dtype, int ndim, const int64_t *shape);
int64_t st_crc_meta(char **key, char **val, size_t n);
int st_cmp_key(const void *a, const void *b);
char *st_dup_str(const char *s);

/* st_header.c */
__attribute__((format(printf, 4, 5)))
int st_ffail(const st_file *f, int code, nmt_err *err, const char *fmt, ...);
int st_corrupt(const st_file *f, nmt_err *err, const char *what);
/* Validates f->buf[0..len) and builds the tables; f->name and f->buf are set. */
int st_parse_file(st_file *f, nmt_err *err);

#endif
