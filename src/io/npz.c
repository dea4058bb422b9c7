/* npz.c: NumPy .npz archives (Marian's model files) read and checked whole: the ZIP structure
 * from its end-of-central-directory record, each entry's local header, raw-deflate data through
 * zlib, CRC-32, then each entry's .npy header (a Python dict literal) against its data length.
 * Facts from PKWARE's APPNOTE.TXT (§4.3.7 local header, §4.3.12 central header, §4.3.16 end
 * record) and NumPy's format description (numpy/lib/format.py docstring, versions 1.0-3.0).
 * The central directory is the authority for sizes: NumPy writes local headers with ZIP64 extra
 * fields and 0xffffffff sizes (zipfile's force_zip64), so a local header gives only its length. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "base/err.h"
#include "base/paths.h"
#include "io/npz.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npz.c copies little-endian array data as it is: a big-endian host needs byte swaps"
#endif

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64_LOC 0x07064b50u
#define LOCAL_LEN 30
#define CENTRAL_LEN 46
#define END_LEN 22
#define STR_(x) #x
#define STR(x) STR_(x)
#define DEFLATE_MAX_RATIO 1032u   /* deflate cannot expand more than about 1032:1 (zlib FAQ) */

typedef struct entry {
    npz_array a;
    char *name;                   /* owned; a.name points here */
    char shown[100];              /* the name fit for messages (show) */
    const unsigned char *data;    /* the array's bytes, after the .npy header */
    size_t nbytes;
    unsigned char *inflated;      /* owned inflated .npy for a deflated entry, else NULL */
} entry;

struct npz_file {
    char *path;
    unsigned char *buf;           /* the whole file */
    size_t len;
    entry *e;
    int n;
    entry **sorted;               /* the entries by name, for npz_find and duplicates */
    char *yml;
};

/* what a failing check needs: the file for messages, the caller's error record */
typedef struct ctx {
    const char *path;
    nmt_err *err;
} ctx;

static const struct { const char *name; size_t size; } dtypes[NPZ_NDTYPE] = {
    [NPZ_F32] = {"<f4", 4}, [NPZ_F16] = {"<f2", 2}, [NPZ_I8] = {"|i1", 1},
    [NPZ_U8] = {"|u1", 1},  [NPZ_I32] = {"<i4", 4}, [NPZ_S1] = {"|S1", 1},
};

const char *npz_dtype_name(int dtype)
{
    return dtype >= 0 && dtype < NPZ_NDTYPE ? dtypes[dtype].name : "?";
}

/* ---------------------------------------------------------------- messages */

/* NMT_ERR_FORMAT "PATH: <what>" */
static int bad(const ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(const ctx *c, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return nmt_fail(c->err, NMT_ERR_FORMAT, "%s: %s", c->path, msg);
}

/* Text from the file fit for a message: control bytes as '?', cut with "..." to fit cap. */
static void show(char *dst, size_t cap, const unsigned char *s, size_t n)
{
    size_t k = 0, i = 0;
    for (; i < n && k + 4 < cap; i++) dst[k++] = s[i] < 32 || s[i] == 127 ? '?' : (char)s[i];
    if (i < n) { memcpy(dst + k, "...", 3); k += 3; }
    dst[k] = 0;
}

/* ---------------------------------------------------------------- little-endian fields */

static uint32_t u16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t u32(const unsigned char *p) { return u16(p) | u16(p + 2) << 16; }

/* ---------------------------------------------------------------- the .npy header */

/* a cursor over the header's dict text */
typedef struct hdr {
    const char *s;
    size_t i, n;
    const char *why;              /* set by the first failure */
} hdr;

static void ws(hdr *h)
{
    while (h->i < h->n && strchr(" \t\r\n", h->s[h->i]) && h->s[h->i]) h->i++;
}

static int expect(hdr *h, char ch, const char *why)
{
    ws(h);
    if (h->i < h->n && h->s[h->i] == ch) { h->i++; return 0; }
    h->why = why;
    return -1;
}

/* A quoted Python string without escapes into out (cap bytes with the NUL). */
static int str(hdr *h, char *out, size_t cap)
{
    ws(h);
    if (h->i >= h->n || (h->s[h->i] != '\'' && h->s[h->i] != '"')) { h->why = "expected a quoted string"; return -1; }
    char q = h->s[h->i++];
    size_t k = 0;
    while (h->i < h->n && h->s[h->i] != q) {
        if (h->s[h->i] == '\\' || k + 1 >= cap) { h->why = "a string too long or with escapes"; return -1; }
        out[k++] = h->s[h->i++];
    }
    if (h->i >= h->n) { h->why = "an unterminated string"; return -1; }
    h->i++;
    out[k] = 0;
    return 0;
}

/* A non-negative integer (Python 2's "3L" too), at most 2^62. */
static int dim(hdr *h, int64_t *v)
{
    ws(h);
    if (h->i >= h->n || h->s[h->i] < '0' || h->s[h->i] > '9') { h->why = "expected a dimension"; return -1; }
    int64_t x = 0;
    while (h->i < h->n && h->s[h->i] >= '0' && h->s[h->i] <= '9') {
        if (x > ((int64_t)1 << 62) / 10) { h->why = "a dimension too large"; return -1; }
        x = x * 10 + (h->s[h->i++] - '0');
    }
    if (h->i < h->n && h->s[h->i] == 'L') h->i++;
    *v = x;
    return 0;
}

/* "(a, b, ...)" with an optional trailing comma; "()" is a scalar. */
static int shape(hdr *h, npz_array *a)
{
    if (expect(h, '(', "shape is not a tuple")) return -1;
    a->ndim = 0;
    for (;;) {
        ws(h);
        if (h->i < h->n && h->s[h->i] == ')') { h->i++; return 0; }
        if (a->ndim == NPZ_MAX_DIMS) { h->why = "more than " STR(NPZ_MAX_DIMS) " dims (the reader's limit)"; return -1; }
        if (dim(h, &a->shape[a->ndim++])) return -1;
        ws(h);
        if (h->i < h->n && h->s[h->i] == ',') h->i++;
        else if (h->i >= h->n || h->s[h->i] != ')') { h->why = "expected ',' or ')' in shape"; return -1; }
    }
}

static int boolean(hdr *h, int *v)
{
    ws(h);
    if (h->n - h->i >= 4 && !memcmp(h->s + h->i, "True", 4)) { *v = 1; h->i += 4; return 0; }
    if (h->n - h->i >= 5 && !memcmp(h->s + h->i, "False", 5)) { *v = 0; h->i += 5; return 0; }
    h->why = "fortran_order is neither True nor False";
    return -1;
}

/* the three keys' values, as found */
typedef struct fields {
    char descr[32];
    int fortran, structured;
    int seen;                     /* bit 0 descr, 1 fortran_order, 2 shape */
} fields;

static int value(hdr *h, const char *key, fields *f, npz_array *a)
{
    static const char *keys[3] = {"descr", "fortran_order", "shape"};
    int k = 0;
    while (k < 3 && strcmp(key, keys[k])) k++;
    if (k == 3) { h->why = "an unknown key"; return -1; }
    if (f->seen & (1 << k)) { h->why = "a key given twice"; return -1; }
    f->seen |= 1 << k;
    if (k == 1) return boolean(h, &f->fortran);
    if (k == 2) return shape(h, a);
    ws(h);
    if (h->i < h->n && h->s[h->i] == '[') { f->structured = 1; h->i = h->n; return 0; }
    return str(h, f->descr, sizeof f->descr);
}

/* {'descr': ..., 'fortran_order': ..., 'shape': (...), } then only blanks. A structured dtype
 * (a list) ends the parse at once: it is refused by name, so the rest is of no interest. */
static int dict(hdr *h, fields *f, npz_array *a)
{
    if (expect(h, '{', "does not start with '{'")) return -1;
    for (;;) {
        ws(h);
        if (h->i < h->n && h->s[h->i] == '}') { h->i++; break; }
        char key[32];
        if (str(h, key, sizeof key) || expect(h, ':', "expected ':' after a key")) return -1;
        if (value(h, key, f, a)) return -1;
        if (f->structured) return 0;
        ws(h);
        if (h->i < h->n && h->s[h->i] == ',') h->i++;
        else if (h->i >= h->n || h->s[h->i] != '}') { h->why = "expected ',' or '}'"; return -1; }
    }
    ws(h);
    if (h->i != h->n) { h->why = "text after the closing '}'"; return -1; }
    if (f->seen != 7) { h->why = "a key of descr, fortran_order, shape is missing"; return -1; }
    return 0;
}

/* The dtype from its .npy spelling: order character, then kind and size. One-byte types take
 * any order character; others must be little-endian. */
static int dtype_of(const ctx *c, const char *nm, const char *d, int *out)
{
    static const char *kinds[NPZ_NDTYPE] = {"f4", "f2", "i1", "u1", "i4", "S1"};
    int k = 0;
    while (d[0] && k < NPZ_NDTYPE && strcmp(d + 1, kinds[k])) k++;
    int known = d[0] && strchr("<>|=", d[0]) && k < NPZ_NDTYPE;
    if (known && (dtypes[k].size == 1 || d[0] == '<')) { *out = k; return 0; }
    char shown[40];
    show(shown, sizeof shown, (const unsigned char *)d, strlen(d));
    if (d[0] == '>')
        return bad(c, "array '%s': big-endian dtype '%s' is not supported (little-endian only)", nm, shown);
    return bad(c, "array '%s': unsupported dtype '%s' (readable: <f4 <f2 |i1 |u1 <i4 |S1)", nm, shown);
}

/* "(7241, 64)" for messages */
static void fmt_shape(char *buf, size_t cap, const npz_array *a)
{
    size_t k = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < a->ndim && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "", (long long)a->shape[i]);
    if (k < cap) snprintf(buf + k, cap - k, a->ndim == 1 ? ",)" : ")");
}

/* The data length the shape and dtype call for, against what the entry holds. */
static int check_size(const ctx *c, entry *e, size_t held)
{
    uint64_t n = 1, es = dtypes[e->a.dtype].size;
    for (int i = 0; i < e->a.ndim; i++) {
        uint64_t d = (uint64_t)e->a.shape[i];
        n = d == 0 ? 0 : n > UINT64_MAX / es / d ? UINT64_MAX : n * d;
    }
    e->a.numel = n;
    char sh[160];
    fmt_shape(sh, sizeof sh, &e->a);
    if (n == UINT64_MAX || n * es > held)
        return bad(c, "array '%s': data is shorter than its shape says: shape %s of %s needs %s%llu bytes, "
                   "the entry holds %zu", e->shown, sh, dtypes[e->a.dtype].name, n == UINT64_MAX ? "over " : "",
                   (unsigned long long)(n == UINT64_MAX ? UINT64_MAX : n * es), held);
    if (n * es < held)
        return bad(c, "array '%s': %zu bytes after its data (shape %s of %s needs %llu)", e->shown,
                   held - (size_t)(n * es), sh, dtypes[e->a.dtype].name, (unsigned long long)(n * es));
    e->nbytes = held;
    return 0;
}

/* The .npy image p[0..n): magic, version, header length, the dict, the data length. */
static int parse_npy(const ctx *c, entry *e, const unsigned char *p, size_t n)
{
    if (n < 10 || memcmp(p, "\x93NUMPY", 6))
        return bad(c, "array '%s': not a .npy array (no \\x93NUMPY magic)", e->shown);
    size_t off = p[6] == 1 ? 10 : 12, hl = p[6] == 1 ? u16(p + 8) : n >= 12 ? u32(p + 8) : 0;
    if (p[6] < 1 || p[6] > 3)
        return bad(c, "array '%s': .npy version %d.%d is not supported (1.0 to 3.0)", e->shown, p[6], p[7]);
    if (off > n || hl > n - off)
        return bad(c, "array '%s': .npy header (%zu bytes) runs past the entry's end (%zu bytes)", e->shown, hl, n);
    hdr h = {(const char *)p + off, 0, hl, NULL};
    fields f = {.descr = ""};
    if (dict(&h, &f, &e->a)) {
        char text[200];
        size_t tl = hl;              /* without NumPy's padding */
        while (tl && (p[off + tl - 1] == ' ' || p[off + tl - 1] == '\n')) tl--;
        show(text, sizeof text, p + off, tl);
        return bad(c, "array '%s': .npy header does not parse: %s at byte %zu of \"%s\"", e->shown, h.why, h.i, text);
    }
    if (f.structured) return bad(c, "array '%s': structured dtype (a list of fields) is not supported", e->shown);
    if (f.fortran) return bad(c, "array '%s': fortran_order True (column-major data) is not supported", e->shown);
    int rc = dtype_of(c, e->shown, f.descr, &e->a.dtype);
    if (rc) return rc;
    e->data = p + off + hl;
    return check_size(c, e, n - off - hl);
}

/* ---------------------------------------------------------------- ZIP entries */

/* the central directory's view of one entry */
typedef struct cent {
    uint32_t flags, method, crc, csize, usize, local;
    const unsigned char *name;
    size_t nlen;
} cent;

/* Raw deflate src[0..sn) into exactly dn bytes at dst. */
static int inflate_to(const ctx *c, const char *nm, const unsigned char *src, size_t sn, unsigned char *dst, size_t dn)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return nmt_fail(c->err, NMT_ERR_NOMEM, "%s: zlib: cannot start inflate", c->path);
    z.next_in = (Bytef *)src;     /* zlib's type is not const; it only reads */
    z.avail_in = (uInt)sn;
    z.next_out = dst;
    z.avail_out = (uInt)dn;
    int zr = inflate(&z, Z_FINISH), rc = 0;
    if (zr == Z_STREAM_END && z.avail_out)
        rc = bad(c, "entry '%s': inflates to %lu bytes, its header says %zu", nm, z.total_out, dn);
    else if (zr == Z_STREAM_END && z.avail_in)
        rc = bad(c, "entry '%s': %u bytes after the end of its deflate stream", nm, z.avail_in);
    else if (zr == Z_DATA_ERROR)
        rc = bad(c, "entry '%s': deflate data is damaged (zlib: %s)", nm, z.msg ? z.msg : "data error");
    else if (zr == Z_MEM_ERROR)
        rc = nmt_fail(c->err, NMT_ERR_NOMEM, "%s: entry '%s': out of memory in inflate", c->path, nm);
    else if (zr != Z_STREAM_END && z.avail_in)
        rc = bad(c, "entry '%s': inflates to more than the %zu bytes its header says", nm, dn);
    else if (zr != Z_STREAM_END)   /* all input read, no end of stream: cut, or sizes that lie */
        rc = bad(c, "entry '%s': its deflate stream does not end within its %zu bytes (truncated or damaged)", nm, sn);
    inflateEnd(&z);
    return rc;
}

/* The entry's uncompressed bytes in *p (into the file's buffer, or inflated and owned by e). */
static int entry_bytes(const ctx *c, entry *e, const cent *ce, const unsigned char *src, const unsigned char **p)
{
    if (ce->method == 0) {
        if (ce->csize != ce->usize)
            return bad(c, "entry '%s.npy': stored, but its sizes differ (%u and %u bytes)", e->shown, ce->csize, ce->usize);
        *p = src;
        return 0;
    }
    if (ce->usize > (uint64_t)ce->csize * DEFLATE_MAX_RATIO + 64)
        return bad(c, "entry '%s.npy': claims %u bytes from %u compressed, more than deflate can give", e->shown,
                   ce->usize, ce->csize);
    if (!(e->inflated = malloc(ce->usize ? ce->usize : 1)))
        return nmt_fail(c->err, NMT_ERR_NOMEM, "%s: out of memory (%u bytes for '%s')", c->path, ce->usize, e->shown);
    char nm[110];
    snprintf(nm, sizeof nm, "%s.npy", e->shown);
    int rc = inflate_to(c, nm, src, ce->csize, e->inflated, ce->usize);
    *p = e->inflated;
    return rc;
}

/* The local header at ce->local: its signature and name, and where the data starts; the data
 * must end before the central directory (at `end`). */
static int local_data(const ctx *c, const unsigned char *buf, size_t end, const cent *ce, const char *nm,
                      const unsigned char **data, size_t *span)
{
    size_t lo = ce->local;
    if (lo > end || end - lo < LOCAL_LEN || u32(buf + lo) != SIG_LOCAL)
        return bad(c, "entry '%s': no local header at offset %zu (damaged archive)", nm, lo);
    size_t nl = u16(buf + lo + 26), xl = u16(buf + lo + 28), at = lo + LOCAL_LEN + nl + xl;
    if (at > end || nl != ce->nlen || memcmp(buf + lo + LOCAL_LEN, ce->name, nl))
        return bad(c, "entry '%s': its local header at offset %zu does not match the central directory "
                   "(damaged archive)", nm, lo);
    if (end - at < ce->csize)
        return bad(c, "entry '%s': truncated: its %u bytes at offset %zu run past the end of the data (%zu)",
                   nm, ce->csize, at, end);
    *data = buf + at;
    *span = at + ce->csize - lo;
    return 0;
}

/* The name: ends in ".npy", no NUL; copied without the suffix. */
static int entry_name(const ctx *c, entry *e, const cent *ce, char *shown, size_t cap)
{
    show(shown, cap, ce->name, ce->nlen);
    if (memchr(ce->name, 0, ce->nlen)) return bad(c, "entry '%s': a NUL byte in its name", shown);
    if (ce->nlen <= 4 || memcmp(ce->name + ce->nlen - 4, ".npy", 4))
        return bad(c, "entry '%s' is not a .npy array (name without .npy)", shown);
    if (!(e->name = malloc(ce->nlen - 3)))
        return nmt_fail(c->err, NMT_ERR_NOMEM, "%s: out of memory", c->path);
    memcpy(e->name, ce->name, ce->nlen - 4);
    e->name[ce->nlen - 4] = 0;
    e->a.name = e->name;
    show(e->shown, sizeof e->shown, ce->name, ce->nlen - 4);
    return 0;
}

/* One entry from its central record: name, flags, method, local header, bytes, CRC, .npy.
 * *used sums the entries' spans: more than the bytes before the central directory means entries
 * that overlap, the trick by which a small archive inflates without bound, refused. */
static int read_entry(const ctx *c, const npz_file *f, size_t cd_off, entry *e, const cent *ce, size_t *used)
{
    char nm[100];
    int rc = entry_name(c, e, ce, nm, sizeof nm);
    if (rc) return rc;
    if (ce->flags & 1) return bad(c, "entry '%s': encrypted entries are not supported", nm);
    if (ce->method != 0 && ce->method != 8)
        return bad(c, "entry '%s': compression method %u is not supported (stored or deflate only)", nm, ce->method);
    if (ce->csize == 0xffffffffu || ce->usize == 0xffffffffu || ce->local == 0xffffffffu)
        return bad(c, "entry '%s': ZIP64 sizes (an entry over 4 GiB) are not supported", nm);
    const unsigned char *src = NULL, *npy = NULL;
    size_t span = 0;
    if ((rc = local_data(c, f->buf, cd_off, ce, nm, &src, &span))) return rc;
    if (span > cd_off - *used)
        return bad(c, "entry '%s': entries overlap (%zu bytes of entries before a central directory at %zu)",
                   nm, *used + span, cd_off);
    *used += span;
    if ((rc = entry_bytes(c, e, ce, src, &npy))) return rc;
    uint32_t crc = (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), npy, ce->usize);
    if (crc != ce->crc)
        return bad(c, "entry '%s': CRC-32 mismatch (recorded %08x, computed %08x): the file is damaged", nm, ce->crc, crc);
    return parse_npy(c, e, npy, ce->usize);
}

/* The central record at p (avail bytes left in the directory); *len its full length. */
static int central(const ctx *c, const unsigned char *p, size_t avail, int i, cent *ce, size_t *len)
{
    if (avail < CENTRAL_LEN || u32(p) != SIG_CENTRAL)
        return bad(c, "central directory entry %d is damaged (no signature)", i + 1);
    size_t nl = u16(p + 28), xl = u16(p + 30), cl = u16(p + 32);
    if (CENTRAL_LEN + nl + xl + cl > avail)
        return bad(c, "central directory entry %d runs past the directory's end (damaged)", i + 1);
    if (u16(p + 34) != 0) return bad(c, "multi-volume archives are not supported");
    *ce = (cent){.flags = u16(p + 8), .method = u16(p + 10), .crc = u32(p + 16), .csize = u32(p + 20),
                 .usize = u32(p + 24), .local = u32(p + 42), .name = p + CENTRAL_LEN, .nlen = nl};
    *len = CENTRAL_LEN + nl + xl + cl;
    return 0;
}

/* ---------------------------------------------------------------- the archive */

/* The end record: the last "PK\5\6" whose comment length reaches exactly the file's end, so
 * that bytes of array data that happen to spell the signature are not taken for it. */
static long find_end(const unsigned char *b, size_t n)
{
    if (n < END_LEN) return -1;
    size_t lowest = n - END_LEN > 0xffff ? n - END_LEN - 0xffff : 0;
    for (size_t at = n - END_LEN + 1; at-- > lowest;)
        if (u32(b + at) == SIG_END && at + END_LEN + u16(b + at + 20) == n) return (long)at;
    return -1;
}

static int no_end(const ctx *c, const unsigned char *b, size_t n)
{
    if (n == 0) return bad(c, "an empty file, not a ZIP archive");
    if ((n >= 4 && u32(b) == SIG_LOCAL) || (n < 4 && !memcmp(b, "PK\3\4", n)))
        return bad(c, "truncated ZIP archive: no end-of-central-directory record (the file was cut short)");
    return bad(c, "not a ZIP archive (no end-of-central-directory record)");
}

/* The central directory's place and entry count from the end record at `end`. */
static int end_record(const ctx *c, const unsigned char *b, size_t end, size_t *cd_off, size_t *cd_len, int *count)
{
    const unsigned char *p = b + end;
    uint32_t here = u16(p + 8), total = u16(p + 10), size = u32(p + 12), off = u32(p + 16);
    if (total == 0xffff || size == 0xffffffffu || off == 0xffffffffu ||
        (end >= 20 && u32(b + end - 20) == SIG_END64_LOC))
        return bad(c, "a ZIP64 archive (over 4 GiB or 65535 entries) is not supported");
    if (u16(p + 4) != 0 || u16(p + 6) != 0 || here != total) return bad(c, "multi-volume archives are not supported");
    if (off > end || size > end - off)
        return bad(c, "truncated or damaged: the central directory (%u bytes at offset %u) runs past its end record "
                   "at offset %zu", size, off, end);
    if (total > size / CENTRAL_LEN)
        return bad(c, "damaged: %u entries cannot fit in a central directory of %u bytes", total, size);
    *cd_off = off;
    *cd_len = size;
    *count = (int)total;
    return 0;
}

/* qsort's comparator over entry pointers (no global state: loads may run on several threads) */
static int by_name(const void *x, const void *y)
{
    return strcmp((*(const entry *const *)x)->name, (*(const entry *const *)y)->name);
}

/* Sorts the entries by name; two with one name are refused (np.load would keep only one). */
static int index_names(const ctx *c, npz_file *f)
{
    if (!(f->sorted = malloc(sizeof *f->sorted * (f->n > 0 ? (size_t)f->n : 1))))
        return nmt_fail(c->err, NMT_ERR_NOMEM, "%s: out of memory", c->path);
    for (int i = 0; i < f->n; i++) f->sorted[i] = &f->e[i];
    qsort(f->sorted, (size_t)f->n, sizeof *f->sorted, by_name);
    for (int i = 1; i < f->n; i++)
        if (!strcmp(f->sorted[i - 1]->name, f->sorted[i]->name)) {
            return bad(c, "duplicate array '%s' (entries %d and %d)", f->sorted[i]->shown, f->sorted[i - 1]->a.index + 1,
                       f->sorted[i]->a.index + 1);
        }
    return 0;
}

/* Marian's YAML: a 1-D byte array, NUL-padded at the end; a NUL before the padding is refused,
 * since the text would silently stop there. */
static int take_yml(const ctx *c, npz_file *f)
{
    const npz_array *a = npz_find(f, NPZ_YML_NAME);
    if (!a) return 0;
    const entry *e = &f->e[a->index];
    if (a->ndim != 1 || dtypes[a->dtype].size != 1)
        return bad(c, "array '%s' is not a 1-D byte array (dtype %s, %d dims)", NPZ_YML_NAME, npz_dtype_name(a->dtype), a->ndim);
    size_t n = e->nbytes;
    while (n && e->data[n - 1] == 0) n--;
    if (memchr(e->data, 0, n)) return bad(c, "array '%s': a NUL byte inside the text", NPZ_YML_NAME);
    if (!(f->yml = malloc(n + 1))) return nmt_fail(c->err, NMT_ERR_NOMEM, "%s: out of memory", c->path);
    memcpy(f->yml, e->data, n);
    f->yml[n] = 0;
    return 0;
}

/* Everything about f->buf, in file order: end record, central directory, each entry. */
static int parse(const ctx *c, npz_file *f)
{
    long end = find_end(f->buf, f->len);
    if (end < 0) return no_end(c, f->buf, f->len);
    size_t cd_off = 0, cd_len = 0, at, used = 0;
    int rc = end_record(c, f->buf, (size_t)end, &cd_off, &cd_len, &f->n);
    if (rc) return rc;
    if (!(f->e = calloc(f->n > 0 ? (size_t)f->n : 1, sizeof *f->e)))
        return nmt_fail(c->err, NMT_ERR_NOMEM, "%s: out of memory (%d entries)", c->path, f->n);
    at = cd_off;
    for (int i = 0; i < f->n; i++) {
        cent ce = {0};
        size_t len = 0;
        if ((rc = central(c, f->buf + at, cd_off + cd_len - at, i, &ce, &len))) return rc;
        f->e[i].a.index = i;
        if ((rc = read_entry(c, f, cd_off, &f->e[i], &ce, &used))) return rc;
        at += len;
    }
    if ((rc = index_names(c, f))) return rc;
    return take_yml(c, f);
}

/* ---------------------------------------------------------------- loading */

/* A new file named path owning buf[0..len) (freed on failure); validates it. */
static int finish(npz_file **out, const char *path, unsigned char *buf, size_t len, nmt_err *err)
{
    npz_file *f = calloc(1, sizeof *f);
    char *p = strdup(path);
    if (!f || !p) {
        free(f);
        free(p);
        free(buf);
        return nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory", path);
    }
    f->path = p;
    f->buf = buf;
    f->len = len;
    ctx c = {path, err};
    int rc = parse(&c, f);
    if (rc) {
        npz_free(f);
        return rc;
    }
    *out = f;
    return NMT_OK;
}

int npz_load_mem(npz_file **out, const void *buf, size_t len, const char *name_for_errors, nmt_err *err)
{
    const char *nm = name_for_errors ? name_for_errors : "<memory>";
    if (!out || (!buf && len)) return nmt_fail(err, NMT_ERR_ARG, "npz_load_mem: NULL argument");
    *out = NULL;
    unsigned char *copy = malloc(len ? len : 1);
    if (!copy) return nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory (%zu bytes)", nm, len);
    if (len) memcpy(copy, buf, len);
    return finish(out, nm, copy, len, err);
}

/* n bytes of fd from its start into dst; 0, or an errno (-1 when the file ended first). */
static int read_all(int fd, unsigned char *dst, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, dst + got, n - got, (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return r < 0 ? errno : -1;
        got += (size_t)r;
    }
    return 0;
}

int npz_load(npz_file **out, const char *path, nmt_err *err)
{
    if (!out || !path) return nmt_fail(err, NMT_ERR_ARG, "npz_load: NULL argument");
    *out = NULL;
    int fd = -1, rc;
    size_t size = 0;
    if ((rc = path_open_regular(path, &fd, &size, err))) return rc;
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf) {
        close(fd);
        return nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory (%zu bytes)", path, size);
    }
    int e = read_all(fd, buf, size);
    close(fd);
    if (e) {
        free(buf);
        return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, e > 0 ? strerror(e) : "the file shrank while being read");
    }
    return finish(out, path, buf, size, err);
}

void npz_free(npz_file *f)
{
    if (!f) return;
    for (int i = 0; f->e && i < f->n; i++) {
        free(f->e[i].name);
        free(f->e[i].inflated);
    }
    free(f->e);
    free(f->sorted);
    free(f->yml);
    free(f->buf);
    free(f->path);
    free(f);
}

/* ---------------------------------------------------------------- access */

const char *npz_name(const npz_file *f) { return f ? f->path : NULL; }
int npz_count(const npz_file *f) { return f ? f->n : 0; }
const char *npz_model_yml(const npz_file *f) { return f ? f->yml : NULL; }

const npz_array *npz_get(const npz_file *f, int i)
{
    return f && i >= 0 && i < f->n ? &f->e[i].a : NULL;
}

const npz_array *npz_find(const npz_file *f, const char *name)
{
    if (!f || !name || !f->sorted) return NULL;
    int lo = 0, hi = f->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, d = strcmp(f->sorted[mid]->name, name);
        if (!d) return &f->sorted[mid]->a;
        if (d < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* a, when it is one of f's arrays (not a copy the caller made) */
static const entry *entry_of(const npz_file *f, const npz_array *a)
{
    return f && a && a->index >= 0 && a->index < f->n && &f->e[a->index].a == a ? &f->e[a->index] : NULL;
}

const void *npz_bytes(const npz_file *f, const npz_array *a, size_t *nbytes)
{
    const entry *e = entry_of(f, a);
    if (!e || !nbytes) return NULL;
    *nbytes = e->nbytes;
    return e->data;
}

/* IEEE binary16 to binary32, exactly: every half is a float. */
static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, ex = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (ex == 0x1f) bits = sign | 0x7f800000u | man << 13;          /* Inf, NaN (payload kept) */
    else if (ex) bits = sign | (ex + 112) << 23 | man << 13;         /* rebias 15 -> 127 */
    else {                                                          /* zero, subnormal: man * 2^-24 */
        float v = (float)man * 0x1p-24f;
        memcpy(&bits, &v, 4);
        bits |= sign;
    }
    float x;
    memcpy(&x, &bits, 4);
    return x;
}

/* src (unaligned, little-endian) of dtype into n floats */
static void convert(float *dst, const unsigned char *src, size_t n, int dtype)
{
    if (dtype == NPZ_F32) { memcpy(dst, src, n * 4); return; }
    for (size_t i = 0; i < n; i++) {
        if (dtype == NPZ_F16) dst[i] = half_to_float((uint16_t)u16(src + 2 * i));
        else if (dtype == NPZ_I8) dst[i] = (float)(int8_t)src[i];
        else if (dtype == NPZ_U8) dst[i] = (float)src[i];
        else dst[i] = (float)(int32_t)u32(src + 4 * i);   /* NPZ_I32: exact up to 2^24 */
    }
}

int npz_read_f32(const npz_file *f, const npz_array *a, float *dst, size_t n, nmt_err *err)
{
    const entry *e = entry_of(f, a);
    if (!e || (!dst && n)) return nmt_fail(err, NMT_ERR_ARG, "npz_read_f32: NULL or foreign argument");
    if (a->dtype == NPZ_S1)
        return nmt_fail(err, NMT_ERR_ARG, "%s: array '%s' holds bytes (|S1), not numbers", f->path, a->name);
    if (n != a->numel)
        return nmt_fail(err, NMT_ERR_MISMATCH, "%s: array '%s' has %llu elements, the caller asked for %zu",
                        f->path, a->name, (unsigned long long)a->numel, n);
    convert(dst, e->data, n, a->dtype);
    return NMT_OK;
}
