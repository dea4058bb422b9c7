/* safetensors.h: the tensor container behind model files, checkpoints and golden-value tests.
 * Layout: u64 little-endian header length N, N bytes of JSON (name -> dtype, shape, data_offsets,
 * plus an optional "__metadata__" object of strings), then the raw little-endian row-major data. */
#ifndef NMT_SAFETENSORS_H
#define NMT_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "nmt.h"

/* Element types; the string form in the file is st_dtype_name(): "F32", "BF16", "BOOL" ... */
enum st_dtype {
    ST_F32, ST_F64, ST_I32, ST_I64, ST_U8,
    ST_I8, ST_I16, ST_U16, ST_U32, ST_U64, ST_F16, ST_BF16, ST_BOOL, ST_F8_E4M3, ST_F8_E5M2,
    ST_NDTYPE
};

#define ST_MAX_DIMS 8
#define ST_MAX_NAME 255                  /* bytes, for tensor names */
#define ST_MAX_HEADER 100000000u         /* bytes of JSON header; larger is refused as hostile */

typedef struct st_tensor {
    char *name;
    int dtype;                           /* enum st_dtype */
    int ndim;                            /* 0 = scalar (one element) */
    int64_t shape[ST_MAX_DIMS];
    uint64_t begin, end;                 /* byte range relative to the start of the data section */
    int has_crc;                         /* the file lists a checksum for this tensor */
    uint32_t crc;                        /* crc32 of its dtype, shape and data (see ST_CRC_KEY) */
} st_tensor;

/* Integrity: files written by st_writer_save carry, under this __metadata__ key, a JSON object of
 * CRC-32s (zlib's): "__metadata__" for the other metadata pairs (sorted by key, each key and
 * value NUL-terminated) and one per tensor name for its dtype name, NUL, ndim (one byte), the
 * dims (u64 little-endian) and then its data bytes. Neither the tensors' order nor their offsets
 * are covered, so a file that another writer re-lays out stays valid. The key is reserved. */
#define ST_CRC_KEY "crc32"

const char *st_dtype_name(int dtype);    /* "F32" ...; "?" when out of range */
size_t st_dtype_size(int dtype);         /* bytes per element; 0 when out of range */
int st_dtype_parse(const char *s);       /* enum value, or -1 */

/* ---- reading ---------------------------------------------------------------------------- */

typedef struct st_file st_file;          /* opaque: a file's header, and its data in memory or on disk */

/* Reads and validates everything (see safetensors.c for the list), checksums included: a
 * mismatch is NMT_ERR_FORMAT "m.nmt: checksum mismatch in tensor 'dec_W': the file is corrupt".
 * A file without ST_CRC_KEY (written before checksums existed, or by another program) loads
 * unchecked; st_has_checksums tells which. On failure *out is NULL,
 * the code is NMT_ERR_IO (cannot read), NMT_ERR_FORMAT (malformed) or NMT_ERR_NOMEM, and the
 * message starts with the path. */
int st_load(st_file **out, const char *path, nmt_err *err);
/* The same checks, reading only the header: tensor data are read from the file by st_read_*
 * when asked for, straight into the caller's arrays, so that loading a model never holds it
 * twice (st_data returns NULL for such a file); each read checks that tensor's checksum. The file stays open until st_free; a file that
 * shrinks meanwhile gives NMT_ERR_IO at the read. */
int st_open(st_file **out, const char *path, nmt_err *err);
/* The same from a buffer, which is copied (the caller may free it at once); name_for_errors
 * prefixes every message (NULL reads as "<memory>"). */
int st_load_mem(st_file **out, const void *buf, size_t len, const char *name_for_errors,
                nmt_err *err);
void st_free(st_file *f);

const char *st_name(const st_file *f);   /* the path / name given at load */
int st_has_checksums(const st_file *f);  /* 1 when the file carries ST_CRC_KEY (all verified) */
int st_count(const st_file *f);
const st_tensor *st_get(const st_file *f, int i);                /* in header order; NULL if out of range */
const st_tensor *st_find(const st_file *f, const char *name);    /* NULL if absent */
const void *st_data(const st_file *f, const st_tensor *t);       /* may be unaligned: callers memcpy; NULL after st_open */
const char *st_meta(const st_file *f, const char *key);          /* NULL if absent */
/* The JSON values in s (strings, arrays, objects and commas: about the nodes cJSON would build),
 * counted in constant memory, up to stop + 1. Metadata values that hold JSON are counted against
 * what they should hold before cJSON parses them, since a hostile file can put millions of
 * empty strings in a vocabulary (cJSON spends about 80 bytes on each). */
long st_json_values(const char *s, long stop);
int st_meta_count(const st_file *f);
/* The i-th metadata pair in header order; returns 0, or NMT_ERR_ARG when i is out of range. */
int st_meta_get(const st_file *f, int i, const char **key, const char **value);
size_t st_numel(const st_tensor *t);     /* product of the dims; 1 for a scalar, 0 if any dim is 0 */
size_t st_nbytes(const st_tensor *t);    /* end - begin */

/* Checks that tensor `name` exists with this dtype (-1: any) and exactly this shape, else
 * NMT_ERR_FORMAT with e.g. "m.nmt: tensor 'dec_U' has shape [10,20], expected [10,40]". */
int st_expect(const st_file *f, const char *name, int dtype, int ndim, const int64_t *shape,
              nmt_err *err);

/* Copy tensor `name` into dst, which holds exactly n elements. Missing tensor, another element
 * count ("m.nmt: tensor 'dec_U' has 200 elements, expected 400") or an unconvertible dtype give
 * NMT_ERR_FORMAT and dst is left untouched.
 * st_read_f32: from F32, or F64 rounded to nearest; a finite F64 outside float range gives
 *              NMT_ERR_NUMERIC naming the element, with dst partly written (NaN and Inf are
 *              carried over as they are).
 * st_read_f64: from F64 or F32 (exact).
 * st_read_i64: from I64 or I32 (sign-extended). */
int st_read_f32(const st_file *f, const char *name, float *dst, size_t n, nmt_err *err);
int st_read_f64(const st_file *f, const char *name, double *dst, size_t n, nmt_err *err);
int st_read_i64(const st_file *f, const char *name, int64_t *dst, size_t n, nmt_err *err);

/* ---- writing ---------------------------------------------------------------------------- */

typedef struct st_writer st_writer;

st_writer *st_writer_init(void);         /* NULL on OOM */
/* Sets a metadata pair (copies both strings; setting a key again replaces its value).
 * Both must be valid UTF-8; the key not ST_CRC_KEY, which the save writes itself.
 * Returns 0, NMT_ERR_ARG or NMT_ERR_NOMEM. */
int st_writer_meta(st_writer *w, const char *key, const char *value);
/* Adds a tensor; the name is copied, data (numel * dtype size bytes, may be NULL when that is 0)
 * is referenced until save. Names: 1..ST_MAX_NAME bytes of UTF-8, unique, not "__metadata__";
 * ndim 0..ST_MAX_DIMS, dims >= 0. Returns 0, NMT_ERR_ARG or NMT_ERR_NOMEM.
 * A failed add or meta is also remembered: the next st_writer_save fails with its message, so a
 * tensor silently missing from a saved file is impossible. */
int st_writer_add(st_writer *w, const char *name, int dtype, int ndim, const int64_t *shape,
                  const void *data);
/* Atomic (base/atomic.h): writes PATH.tmp.<pid>.<host>, checks every write, fflush + fsync, renames
 * over PATH and fsyncs the directory. On failure the temp file is removed and an existing PATH
 * is left untouched. The checksums (ST_CRC_KEY) are computed and added to the metadata.
 * Tensors appear in the header in the order added; their data is laid out by element size
 * (largest first, otherwise in order added) so that each tensor starts at a multiple of its
 * element size, and the header is padded with spaces so that the data starts at a multiple of 8. */
int st_writer_save(st_writer *w, const char *path, nmt_err *err);
void st_writer_free(st_writer *w);

#endif /* NMT_SAFETENSORS_H */
