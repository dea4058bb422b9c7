/* npz.h: the reader of NumPy's .npz archives, the format of Marian's model files: a ZIP of .npy
 * arrays (stored or deflated), plus Marian's `special:model.yml`, the model's YAML configuration
 * as a 1-D byte array. Read-only, validated whole at load; nothing here writes an .npz. */
#ifndef NMT_NPZ_H
#define NMT_NPZ_H

#include <stddef.h>
#include <stdint.h>

#include "nmt.h"

/* The element types read; the .npy spelling is npz_dtype_name(). Multi-byte types must be
 * little-endian ('<'); NPZ_S1 is NumPy's one-byte string, which Marian's YAML may use. */
enum npz_dtype { NPZ_F32, NPZ_F16, NPZ_I8, NPZ_U8, NPZ_I32, NPZ_S1, NPZ_NDTYPE };

#define NPZ_MAX_DIMS 4
#define NPZ_YML_NAME "special:model.yml"  /* Marian's configuration entry, without ".npy" */

typedef struct npz_array {
    const char *name;                     /* the entry's name without ".npy"; owned by the file */
    int dtype;                            /* enum npz_dtype */
    int ndim;                             /* 0 = scalar (one element) */
    int64_t shape[NPZ_MAX_DIMS];
    uint64_t numel;                       /* product of the shape */
    int index;                            /* position in the archive's central directory */
} npz_array;

typedef struct npz_file npz_file;         /* opaque: the archive's arrays, all in memory */

const char *npz_dtype_name(int dtype);    /* "<f4", "<f2", "|i1", "|u1", "<i4", "|S1"; "?" */

/* Reads path whole and checks everything before returning: the ZIP structure, every entry's
 * CRC-32, every .npy header, data lengths against shapes, duplicate names. On failure *out is
 * NULL and the code is NMT_ERR_IO (cannot read), NMT_ERR_FORMAT (damaged or foreign: the
 * message starts with the path and says what is wrong) or NMT_ERR_NOMEM. Refused: ZIP64
 * central directories (archives over 4 GiB or 65535 entries), encrypted or multi-volume
 * archives, compression other than stored and deflate, fortran_order True, big-endian and
 * structured dtypes, more than NPZ_MAX_DIMS dims. */
int npz_load(npz_file **out, const char *path, nmt_err *err);
/* The same from a buffer, which is copied; name_for_errors prefixes messages (NULL: "<memory>"). */
int npz_load_mem(npz_file **out, const void *buf, size_t len, const char *name_for_errors,
                 nmt_err *err);
void npz_free(npz_file *f);

const char *npz_name(const npz_file *f);
int npz_count(const npz_file *f);
const npz_array *npz_get(const npz_file *f, int i);             /* archive order; NULL if out of range */
const npz_array *npz_find(const npz_file *f, const char *name); /* NULL if absent */

/* a's n elements as float32 into dst (f16 and the integer types converted exactly).
 * NMT_ERR_MISMATCH when n is not a's element count, NMT_ERR_ARG for a byte-string array. */
int npz_read_f32(const npz_file *f, const npz_array *a, float *dst, size_t n, nmt_err *err);
/* a's raw bytes (little-endian, row-major), size in *nbytes; NULL for a NULL argument. */
const void *npz_bytes(const npz_file *f, const npz_array *a, size_t *nbytes);

/* Marian's configuration: the text of NPZ_YML_NAME with its NUL padding removed, NUL-terminated,
 * owned by the file; NULL when the archive has none. Load refuses one that is not a 1-D byte
 * array, or that holds a NUL before its padding. */
const char *npz_model_yml(const npz_file *f);

#endif
