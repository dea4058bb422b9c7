/* st_header.c: validation of a safetensors header (the reading side of safetensors.h).
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "io/st_internal.h"

/* Prefixes the file name to every loader message. */
int st_ffail(const st_file *f, int code, nmt_err *err, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return nmt_fail(err, code, "%s: %s", f->name, msg);
}

/* The lookups in the tables the header gives (the checksums' check below uses them too). */
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

const char *st_meta(const st_file *f, const char *key)
{
    for (int i = 0; f && key && i < f->nmeta; i++)
        if (strcmp(f->mkey[i], key) == 0) return f->mval[i];
    return NULL;
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

static int parse_metadata(st_file *f, const cJSON *m, nmt_err *err)
{
    if (!cJSON_IsObject(m))
        return st_ffail(f, NMT_ERR_FORMAT, err, "__metadata__ is not a JSON object");
    size_t cnt = 0;
    for (const cJSON *c = m->child; c; c = c->next) cnt++;
    if (cnt == 0) return 0;
    f->mkey = calloc(cnt, sizeof *f->mkey);
    f->mval = calloc(cnt, sizeof *f->mval);
    if (!f->mkey || !f->mval) return st_ffail(f, NMT_ERR_NOMEM, err, "out of memory (metadata)");
    for (const cJSON *c = m->child; c; c = c->next) {
        if (!cJSON_IsString(c) || !c->valuestring)
            return st_ffail(f, NMT_ERR_FORMAT, err, "__metadata__ value for '%.200s' is not a string",
                         c->string);
        int i = f->nmeta;
        f->mkey[i] = st_dup_str(c->string);
        f->mval[i] = st_dup_str(c->valuestring);
        f->nmeta++;   /* counted before the check so that st_free releases both */
        if (!f->mkey[i] || !f->mval[i])
            return st_ffail(f, NMT_ERR_NOMEM, err, "out of memory (metadata)");
    }
    /* Sorting finds duplicate keys in n log n: a hostile header can hold millions of them. */
    char ***idx = malloc(cnt * sizeof *idx);
    if (!idx) return st_ffail(f, NMT_ERR_NOMEM, err, "out of memory (metadata)");
    for (int i = 0; i < f->nmeta; i++) idx[i] = &f->mkey[i];
    qsort(idx, cnt, sizeof *idx, st_cmp_key);
    for (int i = 1; i < f->nmeta; i++)
        if (strcmp(*idx[i - 1], *idx[i]) == 0) {
            int rc = st_ffail(f, NMT_ERR_FORMAT, err, "duplicate __metadata__ key '%.200s'",
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
        return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': entry is not a JSON object", nm);
    const cJSON *jd = NULL, *js = NULL, *jo = NULL;
    for (const cJSON *c = e->child; c; c = c->next) {
        const cJSON **slot = strcmp(c->string, "dtype") == 0 ? &jd
                           : strcmp(c->string, "shape") == 0 ? &js
                           : strcmp(c->string, "data_offsets") == 0 ? &jo : NULL;
        if (!slot)
            return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': unknown key '%.100s'", nm, c->string);
        if (*slot)
            return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': duplicate key '%s'", nm, c->string);
        *slot = c;
    }
    if (!jd) return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': missing 'dtype'", nm);
    if (!js) return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': missing 'shape'", nm);
    if (!jo) return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': missing 'data_offsets'", nm);

    if (!cJSON_IsString(jd) || !jd->valuestring)
        return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': dtype is not a string", nm);
    t->dtype = st_dtype_parse(jd->valuestring);
    if (t->dtype < 0)
        return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': unknown dtype '%.40s'", nm,
                     jd->valuestring);

    if (!cJSON_IsArray(js))
        return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': shape is not an array", nm);
    int nd = 0;
    for (const cJSON *c = js->child; c; c = c->next, nd++) {
        uint64_t v;
        if (nd >= ST_MAX_DIMS)
            return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': shape has more than %d dimensions",
                         nm, ST_MAX_DIMS);
        if (json_uint(c, &v))
            return st_ffail(f, NMT_ERR_FORMAT, err,
                         "tensor '%s': shape[%d] is not a non-negative integer (at most 2^53)",
                         nm, nd);
        t->shape[nd] = (int64_t)v;
    }
    t->ndim = nd;
    uint64_t numel, need;
    char sh[200];
    st_fmt_shape(sh, sizeof sh, t->ndim, t->shape);
    if (st_shape_size(t->ndim, t->shape, st_dtype_size(t->dtype), &numel, &need))
        return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': shape %s overflows 64 bits in bytes",
                     nm, sh);

    uint64_t off[2];
    int k = 0;
    if (!cJSON_IsArray(jo))
        return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': data_offsets is not an array", nm);
    for (const cJSON *c = jo->child; c; c = c->next, k++)
        if (k >= 2 || json_uint(c, &off[k]))
            return st_ffail(f, NMT_ERR_FORMAT, err,
                         "tensor '%s': data_offsets is not two non-negative integers", nm);
    if (k != 2)
        return st_ffail(f, NMT_ERR_FORMAT, err,
                     "tensor '%s': data_offsets is not two non-negative integers", nm);
    t->begin = off[0];
    t->end = off[1];
    if (t->begin > t->end)
        return st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s': data_offsets [%llu,%llu] begin after end",
                     nm, (unsigned long long)t->begin, (unsigned long long)t->end);
    if (t->end > f->data_len)
        return st_ffail(f, NMT_ERR_FORMAT, err,
                     "tensor '%s': data_offsets end %llu is past the end of the data section "
                     "(%zu bytes)", nm, (unsigned long long)t->end, f->data_len);
    if (t->end - t->begin != need)
        return st_ffail(f, NMT_ERR_FORMAT, err,
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
            return st_ffail(f, NMT_ERR_FORMAT, err,
                         "%zu trailing bytes in the data section, which holds no tensor",
                         f->data_len);
        return 0;
    }
    f->by_name = malloc((size_t)f->n * sizeof *f->by_name);
    st_tensor **idx = malloc((size_t)f->n * sizeof *idx);
    if (!f->by_name || !idx) {
        free(idx);
        return st_ffail(f, NMT_ERR_NOMEM, err, "out of memory (tensor table)");
    }
    for (int i = 0; i < f->n; i++) f->by_name[i] = idx[i] = &f->t[i];
    qsort(f->by_name, (size_t)f->n, sizeof *idx, cmp_name);
    qsort(idx, (size_t)f->n, sizeof *idx, cmp_range);
    int rc = 0;
    for (int i = 1; i < f->n && !rc; i++)
        if (strcmp(f->by_name[i - 1]->name, f->by_name[i]->name) == 0)
            rc = st_ffail(f, NMT_ERR_FORMAT, err, "duplicate tensor name '%s'", f->by_name[i]->name);
    uint64_t pos = 0;
    const st_tensor *prev = NULL;
    for (int i = 0; i < f->n && !rc; i++) {
        const st_tensor *t = idx[i];
        if (t->begin < pos)
            rc = st_ffail(f, NMT_ERR_FORMAT, err, "tensors '%s' [%llu,%llu] and '%s' [%llu,%llu] "
                       "overlap", prev->name, (unsigned long long)prev->begin,
                       (unsigned long long)prev->end, t->name, (unsigned long long)t->begin,
                       (unsigned long long)t->end);
        else if (t->begin > pos)
            rc = st_ffail(f, NMT_ERR_FORMAT, err, "bytes [%llu,%llu) of the data section belong to "
                       "no tensor (gap before '%s')", (unsigned long long)pos,
                       (unsigned long long)t->begin, t->name);
        pos = t->end;
        prev = t;
    }
    if (!rc && pos < f->data_len)
        rc = st_ffail(f, NMT_ERR_FORMAT, err, "%llu trailing bytes after the last tensor (data "
                   "section is %zu bytes, tensors cover %llu)",
                   (unsigned long long)(f->data_len - pos), f->data_len, (unsigned long long)pos);
    free(idx);
    return rc;
}

static int parse_header(st_file *f, const cJSON *root, nmt_err *err)
{
    if (!cJSON_IsObject(root))
        return st_ffail(f, NMT_ERR_FORMAT, err, "header is not a JSON object");
    size_t cnt = 0;
    int seen_meta = 0;
    for (const cJSON *c = root->child; c; c = c->next) cnt++;
    if (cnt > (size_t)INT32_MAX)
        return st_ffail(f, NMT_ERR_FORMAT, err, "header has too many entries");
    f->t = calloc(cnt ? cnt : 1, sizeof *f->t);
    if (!f->t) return st_ffail(f, NMT_ERR_NOMEM, err, "out of memory (%zu header entries)", cnt);
    for (const cJSON *c = root->child; c; c = c->next) {
        int rc;
        if (strcmp(c->string, "__metadata__") == 0) {
            if (seen_meta++) return st_ffail(f, NMT_ERR_FORMAT, err, "duplicate __metadata__");
            if ((rc = parse_metadata(f, c, err))) return rc;
            continue;
        }
        size_t len = strlen(c->string);
        if (len == 0) return st_ffail(f, NMT_ERR_FORMAT, err, "empty tensor name");
        if (len > ST_MAX_NAME)
            return st_ffail(f, NMT_ERR_FORMAT, err, "tensor name '%.40s...' is %zu bytes long "
                         "(max %d)", c->string, len, ST_MAX_NAME);
        st_tensor *t = &f->t[f->n];
        if (!(t->name = st_dup_str(c->string)))
            return st_ffail(f, NMT_ERR_NOMEM, err, "out of memory (tensor names)");
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

int st_corrupt(const st_file *f, nmt_err *err, const char *what)
{
    return st_ffail(f, NMT_ERR_FORMAT, err, "checksum mismatch in %s: the file is corrupt", what);
}

/* Reads the ST_CRC_KEY table into the tensors and checks the metadata against it. */
static int read_crc_table(st_file *f, const char *json, nmt_err *err)
{
    long most = 3L * f->n + 8; /* a name, a CRC and a comma per tensor, and the metadata's */
    if (st_json_values(json, most) > most)
        return st_ffail(f, NMT_ERR_FORMAT, err, "the checksum table (%s) holds more entries than the file has tensors: the file is corrupt", ST_CRC_KEY);
    cJSON *o = cJSON_Parse(json);
    int rc = cJSON_IsObject(o) ? 0 : st_ffail(f, NMT_ERR_FORMAT, err, "the checksum table (%s) is not a JSON object: the file is corrupt", ST_CRC_KEY);
    int64_t meta = -1;
    for (const cJSON *c = o ? o->child : NULL; c && !rc; c = c->next) {
        int64_t v = parse_crc(c);
        st_tensor *t = strcmp(c->string, "__metadata__") ? (st_tensor *)st_find(f, c->string) : NULL;
        if (v < 0 || (!t && strcmp(c->string, "__metadata__")) || (t && t->has_crc))
            rc = st_ffail(f, NMT_ERR_FORMAT, err, "the checksum table has a bad entry '%.100s': the file is corrupt", c->string);
        else if (t) { t->crc = (uint32_t)v; t->has_crc = 1; }
        else if (meta >= 0) rc = st_ffail(f, NMT_ERR_FORMAT, err, "the checksum table lists the metadata twice: the file is corrupt");
        else meta = v;
    }
    cJSON_Delete(o);
    for (int i = 0; i < f->n && !rc; i++)
        if (!f->t[i].has_crc) rc = st_ffail(f, NMT_ERR_FORMAT, err, "tensor '%s' has no checksum: the file is corrupt", f->t[i].name);
    if (rc) return rc;
    if (meta < 0) return st_ffail(f, NMT_ERR_FORMAT, err, "the checksum table lacks the metadata's: the file is corrupt");
    int64_t have = st_crc_meta(f->mkey, f->mval, (size_t)f->nmeta);
    if (have < 0) return st_ffail(f, NMT_ERR_NOMEM, err, "out of memory (checksums)");
    return have == meta ? 0 : st_corrupt(f, err, "the metadata");
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
        uint32_t c = st_crc_bytes(st_crc_desc(t->dtype, t->ndim, t->shape), f->data + t->begin, (size_t)(t->end - t->begin));
        if (c != t->crc) {
            char what[300];
            snprintf(what, sizeof what, "tensor %s", t->name);
            return st_corrupt(f, err, what);
        }
    }
    return 0;
}

/* cJSON spends about 80 bytes on every value it parses, so a 10 MB header whose shape holds five
 * million zeros took 418 MB before the "more than 8 dimensions" refusal. This pass over the
 * bytes refuses such a header first, in constant memory: no safetensors field is an array of
 * more than ST_MAX_DIMS values, none nests deeper than three levels (tensor, field, array), and
 * ST_MAX_VALUES values would describe a hundred thousand tensors. Strings are skipped whole (a
 * backslash escapes the next byte), so brackets and commas inside names do not count. The limits
 * are loose, so that what the parse finds later keeps its own message ("more than 8 dimensions"). */
#define ST_SCAN_ARRAY 64         /* values in one array: ST_MAX_DIMS is refused by name later */
#define ST_SCAN_DEPTH 16
#define ST_MAX_VALUES 1000000

static int prescan_header(const st_file *f, const unsigned char *h, size_t n, nmt_err *err)
{
    long count[ST_SCAN_DEPTH]; /* commas so far in each open array; -1 for an object */
    int depth = 0;
    long values = 0;           /* strings, containers and commas: about cJSON's nodes */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = h[i];
        if (c == '"') {
            for (i++; i < n && h[i] != '"'; i++) i += h[i] == '\\';
            values++;
        } else if (c == '[' || c == '{') {
            if (depth == ST_SCAN_DEPTH)
                return st_ffail(f, NMT_ERR_FORMAT, err, "header nests deeper than %d levels (byte %zu)", ST_SCAN_DEPTH, i);
            count[depth++] = c == '[' ? 0 : -1;
            values++;
        } else if (c == ']' || c == '}') {
            depth -= depth > 0;
        } else if (c == ',') {
            values++;
            if (depth && count[depth - 1] >= 0 && ++count[depth - 1] >= ST_SCAN_ARRAY)
                return st_ffail(f, NMT_ERR_FORMAT, err, "header holds an array of more than %d values (byte %zu): "
                                "no safetensors field does", ST_SCAN_ARRAY, i);
        }
        if (values > ST_MAX_VALUES)
            return st_ffail(f, NMT_ERR_FORMAT, err, "header holds more than %d JSON values", ST_MAX_VALUES);
    }
    return 0;
}

long st_json_values(const char *s, long stop)
{
    long values = 0;
    for (; *s && values <= stop; s++) {
        if (*s == '"') {
            for (s++; *s && *s != '"'; s++) s += s[0] == '\\' && s[1];
            values++;
            if (!*s) break;
        } else {
            values += *s == '[' || *s == '{' || *s == ',';
        }
    }
    return values;
}

/* Validates f->buf[0..len) and builds the tables; f->name and f->buf are set. */
int st_parse_file(st_file *f, nmt_err *err)
{
    if (f->len < 8)
        return st_ffail(f, NMT_ERR_FORMAT, err, "file is %zu bytes, shorter than the 8-byte header "
                     "length", f->len);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | f->buf[i];
    if (n > ST_MAX_HEADER)
        return st_ffail(f, NMT_ERR_FORMAT, err, "header length %llu exceeds the limit of %u bytes "
                     "(not a safetensors file?)", (unsigned long long)n, ST_MAX_HEADER);
    if (n > f->len - 8)
        return st_ffail(f, NMT_ERR_FORMAT, err, "header length %llu is larger than the %zu bytes "
                     "after the length field (truncated file?)", (unsigned long long)n, f->len - 8);
    const unsigned char *h = f->buf + 8;
    f->data = h + n;
    f->data_len = f->len - 8 - (size_t)n;
    if (n == 0) return st_ffail(f, NMT_ERR_FORMAT, err, "header is empty");
    size_t bad = st_utf8_bad(h, (size_t)n);
    if (bad < n)
        return st_ffail(f, NMT_ERR_FORMAT, err, "header is not valid UTF-8%s (byte %zu of the header)",
                     h[bad] ? "" : ": NUL byte", bad);

    int scan = prescan_header(f, h, (size_t)n, err);
    if (scan) return scan;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts((const char *)h, (size_t)n, &end, 0);
    if (!root) {
        size_t at = end && end >= (const char *)h ? (size_t)(end - (const char *)h) : 0;
        return st_ffail(f, NMT_ERR_FORMAT, err, "header is not valid JSON (near byte %zu of %llu)",
                     at, (unsigned long long)n);
    }
    /* Writers pad with spaces; anything else after the object means a damaged header. */
    for (const char *p = end; p < (const char *)h + n; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            cJSON_Delete(root);
            return st_ffail(f, NMT_ERR_FORMAT, err, "header is not valid JSON: text after the object "
                         "(byte %zu of %llu)", (size_t)(p - (const char *)h),
                         (unsigned long long)n);
        }
    int rc = parse_header(f, root, err);
    cJSON_Delete(root);
    return rc ? rc : check_checksums(f, err);
}
