/* test_safetensors.c: the safetensors container against independent evidence: hand-made bytes,
 * the golden files written by Python (checked against their JSON siblings), a cJSON parse of
 * what we write, one crafted bad file per loader error, random corruptions and atomic saves.
 * Usage: test_safetensors [--quick]   (NMT_SHARED names the shared folder, default ../shared) */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/atomic.h"
#include "io/safetensors.h"
#include "helpers.h"
#include "test.h"

/* One pass and a code plus a distinctive piece of the message, or one failure saying what came. */
#define CHECK_ERR(rc, e, want, sub) \
    CHECKF((rc) == (want) && strstr((e).msg, (sub)) != NULL, \
           "rc %d msg '%s', wanted rc %d and '%s'", (rc), (e).msg, (want), (sub))

static char tmpdir[256];

/* ---------------------------------------------------------------- helpers */

static uint64_t le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* A file image from a header text and data bytes: N is the header's exact length. */
static size_t mk(unsigned char *out, const char *hdr, const void *data, size_t dlen)
{
    size_t n = strlen(hdr);
    for (int i = 0; i < 8; i++) out[i] = (unsigned char)((uint64_t)n >> (8 * i));
    memcpy(out + 8, hdr, n);
    if (dlen) memcpy(out + 8 + n, data, dlen);
    return 8 + n + dlen;
}

/* Loads an image that must fail with `code`, the message containing `sub`. */
#define BAD(hdr, dlen, code, sub) do { \
    unsigned char img_[8192], zero_[512] = {0}; \
    size_t n_ = mk(img_, (hdr), zero_, (dlen)); \
    st_file *f_ = (st_file *)1; \
    nmt_err e_ = {0}; \
    int rc_ = st_load_mem(&f_, img_, n_, "bad.st", &e_); \
    CHECK_ERR(rc_, e_, (code), (sub)); \
    CHECK(f_ == NULL); \
    CHECKF(strncmp(e_.msg, "bad.st: ", 8) == 0, "message does not name the file: %s", e_.msg); \
    st_free(rc_ ? NULL : f_); \
} while (0)

static int count_dir(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static rng corrupt_rng;   /* seeded in the fuzz loop, so the corruptions repeat run to run */
static uint64_t rnd(void) { return rng_u64(&corrupt_rng); }

/* ---------------------------------------------------------------- 0. hand-made bytes */

static void test_known_bytes(void)
{
    /* I32 [2] = {1, -1}, F32 [] = 1.5 (0x3fc00000), written out byte by byte. */
    const unsigned char data[12] = {1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0xc0, 0x3f};
    unsigned char img[512];
    size_t n = mk(img, "{\"__metadata__\":{\"k\":\"v\\u00e9\"},"
                       "\"s\":{\"shape\":[],\"dtype\":\"F32\",\"data_offsets\":[8,12]},"
                       "\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]}}   ",
                  data, sizeof data);
    st_file *f = NULL;
    nmt_err e = {0};
    int rc = st_load_mem(&f, img, n, "known", &e);
    CHECKF(rc == 0, "%s", e.msg);
    if (rc) return;
    CHECK(st_count(f) == 2);
    CHECK(strcmp(st_get(f, 0)->name, "s") == 0 && strcmp(st_get(f, 1)->name, "a") == 0);
    CHECK(st_get(f, 2) == NULL && st_get(f, -1) == NULL);
    CHECK(st_get(f, 0)->ndim == 0 && st_numel(st_get(f, 0)) == 1);
    CHECK(strcmp(st_meta(f, "k"), "v\xc3\xa9") == 0);
    CHECK(st_meta(f, "absent") == NULL && st_find(f, "absent") == NULL);
    int64_t a[2] = {0, 0};
    CHECK(st_read_i64(f, "a", a, 2, &e) == 0 && a[0] == 1 && a[1] == -1);
    float s = 0;
    double sd = 0;
    CHECK(st_read_f32(f, "s", &s, 1, &e) == 0 && s == 1.5f);
    CHECK(st_read_f64(f, "s", &sd, 1, &e) == 0 && sd == 1.5);
    CHECK_ERR(st_read_f32(f, "a", &s, 2, &e), e, NMT_ERR_FORMAT, "known: tensor 'a' has dtype I32");
    CHECK_ERR(st_read_i64(f, "a", a, 3, &e), e, NMT_ERR_FORMAT,
              "known: tensor 'a' has 2 elements, expected 3");
    CHECK_ERR(st_read_f64(f, "zz", &sd, 1, &e), e, NMT_ERR_FORMAT, "known: no tensor 'zz'");
    int64_t sh2[1] = {2}, sh3[2] = {2, 1};
    CHECK(st_expect(f, "a", ST_I32, 1, sh2, &e) == 0);
    CHECK(st_expect(f, "a", -1, 1, sh2, &e) == 0);
    CHECK_ERR(st_expect(f, "a", ST_I32, 2, sh3, &e), e, NMT_ERR_FORMAT,
              "tensor 'a' has shape [2], expected [2,1]");
    CHECK_ERR(st_expect(f, "a", ST_F32, 1, sh2, &e), e, NMT_ERR_FORMAT, "has dtype I32, expected F32");
    st_free(f);

    /* A finite F64 beyond float range must not be converted silently (nor by UB). */
    double big[2] = {1.0, 1e300};
    n = mk(img, "{\"b\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,16]}}", big, 16);
    rc = st_load_mem(&f, img, n, "big", &e);
    CHECK(rc == 0);
    float b2[2];
    if (!rc) CHECK_ERR(st_read_f32(f, "b", b2, 2, &e), e, NMT_ERR_NUMERIC, "element 1");
    st_free(f);
    st_free(NULL);
    st_writer_free(NULL);
}

/* ---------------------------------------------------------------- 1. round trip */

static void test_round_trip(void)
{
    float f32[6] = {1.0f, -2.5f, 3.25f, 1e-30f, -0.0f, 65504.0f};
    double f64[4] = {3.141592653589793, -1e300, 5e-324, 0.1};
    int32_t i32[6] = {0, -1, 2147483647, -2147483647 - 1, 7, 8};
    int64_t i64 = -9000000000000000000ll;
    uint8_t u8[5] = {0, 1, 127, 128, 255};
    uint16_t bf[3] = {0x3f80, 0xc000, 0x7fc0};
    int64_t s_f32[2] = {2, 3}, s_f64[1] = {4}, s_i32[3] = {3, 1, 2}, s_u8[1] = {5},
            s_bf[1] = {3}, s_empty[1] = {0}, s_empty3[3] = {2, 0, 3};
    const char *odd_name = "dec.\"W\"\\x\xc3\xbc";
    const char *odd_val = "quote \" backslash \\ newline \n tab \t ctl \x01 utf8 \xe7\xbf\xbb\xe8\xa8\xb3";

    st_writer *w = st_writer_init();
    CHECK(w != NULL);
    if (!w) return;
    /* Added in an order that mixes element sizes, so the data layout differs from header order. */
    CHECK(st_writer_add(w, "u8", ST_U8, 1, s_u8, u8) == 0);
    CHECK(st_writer_add(w, "f32", ST_F32, 2, s_f32, f32) == 0);
    CHECK(st_writer_add(w, "scalar_i64", ST_I64, 0, NULL, &i64) == 0);
    CHECK(st_writer_add(w, "empty", ST_F32, 1, s_empty, NULL) == 0);
    CHECK(st_writer_add(w, "bf16", ST_BF16, 1, s_bf, bf) == 0);
    CHECK(st_writer_add(w, odd_name, ST_F64, 1, s_f64, f64) == 0);
    CHECK(st_writer_add(w, "i32", ST_I32, 3, s_i32, i32) == 0);
    CHECK(st_writer_add(w, "empty3", ST_U8, 3, s_empty3, NULL) == 0);
    CHECK(st_writer_meta(w, "format", "nmt-test 1") == 0);
    CHECK(st_writer_meta(w, "odd", "placeholder") == 0);
    CHECK(st_writer_meta(w, "odd", odd_val) == 0);   /* replaces */
    CHECK(st_writer_meta(w, "empty", "") == 0);

    char path[300];
    snprintf(path, sizeof path, "%s/rt.safetensors", tmpdir);
    nmt_err e = {0};
    int rc = st_writer_save(w, path, &e);
    CHECKF(rc == 0, "%s", e.msg);

    struct { const char *name; int dtype, ndim; const int64_t *shape; const void *data; size_t nb; }
    want[] = {
        {"u8", ST_U8, 1, s_u8, u8, 5}, {"f32", ST_F32, 2, s_f32, f32, 24},
        {"scalar_i64", ST_I64, 0, NULL, &i64, 8}, {"empty", ST_F32, 1, s_empty, NULL, 0},
        {"bf16", ST_BF16, 1, s_bf, bf, 6}, {odd_name, ST_F64, 1, s_f64, f64, 32},
        {"i32", ST_I32, 3, s_i32, i32, 24}, {"empty3", ST_U8, 3, s_empty3, NULL, 0},
    };
    const int nwant = (int)(sizeof want / sizeof want[0]);

    /* The raw file, read without the module: alignment, padding and bytes at the offsets. */
    size_t len = 0;
    unsigned char *raw = (unsigned char *)test_slurp(path, &len);
    CHECK(raw != NULL && len >= 8);
    if (!raw || len < 8) { st_writer_free(w); free(raw); return; }
    uint64_t hn = le64(raw);
    CHECKF((8 + hn) % 8 == 0, "header length %llu leaves the data unaligned", (unsigned long long)hn);
    CHECK(8 + hn <= len);
    size_t dlen = len - 8 - (size_t)hn;
    CHECK(dlen == 5 + 24 + 8 + 6 + 32 + 24);
    cJSON *h = cJSON_ParseWithLength((const char *)raw + 8, (size_t)hn);
    CHECK(h != NULL);
    if (h) {
        /* Independent reading of our JSON: key order, metadata first, shapes, offsets. */
        const cJSON *c = h->child;
        CHECK(c && strcmp(c->string, "__metadata__") == 0);
        CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(c, "odd")->valuestring, odd_val) == 0);
        for (int i = 0; i < nwant && c; i++) {
            c = c->next;
            CHECK(c && strcmp(c->string, want[i].name) == 0);
            if (!c) break;
            const cJSON *sh = cJSON_GetObjectItemCaseSensitive(c, "shape");
            const cJSON *of = cJSON_GetObjectItemCaseSensitive(c, "data_offsets");
            CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(c, "dtype")->valuestring,
                         st_dtype_name(want[i].dtype)) == 0);
            CHECK(cJSON_GetArraySize(sh) == want[i].ndim);
            for (int k = 0; k < want[i].ndim; k++)
                CHECK(cJSON_GetArrayItem(sh, k)->valuedouble == (double)want[i].shape[k]);
            uint64_t b = (uint64_t)cJSON_GetArrayItem(of, 0)->valuedouble;
            uint64_t en = (uint64_t)cJSON_GetArrayItem(of, 1)->valuedouble;
            CHECK(en - b == want[i].nb && en <= dlen);
            CHECKF(b % st_dtype_size(want[i].dtype) == 0, "%s starts at %llu", want[i].name,
                   (unsigned long long)b);
            if (want[i].nb) CHECK(memcmp(raw + 8 + hn + b, want[i].data, want[i].nb) == 0);
        }
        CHECK(c && c->next == NULL);
        cJSON_Delete(h);
    }
    /* Padding is spaces after the closing brace. */
    size_t last = (size_t)hn;
    while (last > 0 && raw[8 + last - 1] == ' ') last--;
    CHECK(last > 0 && raw[8 + last - 1] == '}' && hn - last < 8);

    st_file *f = NULL;
    rc = st_load(&f, path, &e);
    CHECKF(rc == 0, "%s", e.msg);
    if (!rc) {
        CHECK(strcmp(st_name(f), path) == 0);
        CHECK(st_count(f) == nwant);
        for (int i = 0; i < nwant && i < st_count(f); i++) {
            const st_tensor *t = st_get(f, i);
            CHECK(strcmp(t->name, want[i].name) == 0);
            CHECK(st_find(f, want[i].name) == t);
            CHECK(t->dtype == want[i].dtype && t->ndim == want[i].ndim);
            for (int k = 0; k < t->ndim; k++) CHECK(t->shape[k] == want[i].shape[k]);
            CHECK(st_nbytes(t) == want[i].nb);
            CHECK(st_numel(t) == want[i].nb / st_dtype_size(want[i].dtype));
            if (want[i].nb) CHECK(memcmp(st_data(f, t), want[i].data, want[i].nb) == 0);
        }
        CHECK(st_meta_count(f) == 4 && st_meta(f, ST_CRC_KEY) && st_has_checksums(f)); /* + checksums */
        const char *k0 = NULL, *v0 = NULL;
        CHECK(st_meta_get(f, 0, &k0, &v0) == 0 && strcmp(k0, "format") == 0);
        CHECK(st_meta_get(f, 4, &k0, &v0) == NMT_ERR_ARG);
        CHECK(st_meta(f, "format") && strcmp(st_meta(f, "format"), "nmt-test 1") == 0);
        CHECK(st_meta(f, "odd") && strcmp(st_meta(f, "odd"), odd_val) == 0);
        CHECK(st_meta(f, "empty") && strcmp(st_meta(f, "empty"), "") == 0);
        float g[6];
        double d[4];
        int64_t sc = 0, iv[6];
        CHECK(st_read_f32(f, "f32", g, 6, &e) == 0 && memcmp(g, f32, sizeof g) == 0);
        CHECK(st_read_f64(f, odd_name, d, 4, &e) == 0 && memcmp(d, f64, sizeof d) == 0);
        CHECK(st_read_f64(f, "f32", d, 4, &e) == NMT_ERR_FORMAT);   /* it has 6 elements */
        double d6[6];
        CHECK(st_read_f64(f, "f32", d6, 6, &e) == 0 && d6[3] == (double)1e-30f);
        CHECK(st_read_i64(f, "scalar_i64", &sc, 1, &e) == 0 && sc == i64);
        CHECK(st_read_i64(f, "i32", iv, 6, &e) == 0 && iv[1] == -1 && iv[3] == INT32_MIN &&
              iv[2] == INT32_MAX);
        CHECK(st_read_f32(f, "empty", g, 0, &e) == 0);
        /* -1e300 has no float32: refused by name rather than turned into -inf. */
        CHECK_ERR(st_read_f32(f, odd_name, g, 4, &e), e, NMT_ERR_NUMERIC, "element 1 = -1e+300");
    }
    /* The same bytes through st_load_mem give the same table. */
    st_file *f2 = NULL;
    CHECK(st_load_mem(&f2, raw, len, "mem", &e) == 0 && st_count(f2) == nwant);
    for (int i = 0; f && f2 && i < nwant; i++)
        CHECK(st_get(f, i)->begin == st_get(f2, i)->begin && st_get(f, i)->end == st_get(f2, i)->end);
    st_free(f2);
    /* st_open reads the header alone and the data on demand: the same table and the same values,
     * conversions and refusals included; and a file cut short afterwards is an I/O error */
    st_file *f3 = NULL;
    rc = st_open(&f3, path, &e);
    CHECKF(rc == 0, "st_open: %s", e.msg);
    if (!rc) {
        CHECK(st_count(f3) == nwant && st_meta_count(f3) == 4);
        for (int i = 0; f && i < nwant && i < st_count(f3); i++)
            CHECK(st_get(f, i)->begin == st_get(f3, i)->begin && st_get(f, i)->end == st_get(f3, i)->end);
        CHECK(st_data(f3, st_find(f3, "f32")) == NULL);
        float g[6];
        double d6[6], d[4];
        int64_t iv[6];
        CHECK(st_read_f32(f3, "f32", g, 6, &e) == 0 && memcmp(g, f32, sizeof g) == 0);
        CHECK(st_read_f64(f3, odd_name, d, 4, &e) == 0 && memcmp(d, f64, sizeof d) == 0);
        CHECK(st_read_f64(f3, "f32", d6, 6, &e) == 0 && d6[3] == (double)1e-30f);
        CHECK(st_read_i64(f3, "i32", iv, 6, &e) == 0 && iv[1] == -1 && iv[3] == INT32_MIN);
        CHECK_ERR(st_read_f32(f3, odd_name, g, 4, &e), e, NMT_ERR_NUMERIC, "element 1 = -1e+300");
        CHECK(truncate(path, 8 + (off_t)hn) == 0);
        CHECK_ERR(st_read_f32(f3, "f32", g, 6, &e), e, NMT_ERR_IO, "file shrank while reading tensor 'f32'");
        st_free(f3);
    }
    st_free(f);
    free(raw);
    st_writer_free(w);
    unlink(path);

    /* An empty writer makes a valid file with no tensor: only the checksum of no metadata,
     * padded to 8. */
    w = st_writer_init();
    snprintf(path, sizeof path, "%s/empty.safetensors", tmpdir);
    CHECK(st_writer_save(w, path, &e) == 0);
    st_writer_free(w);
    CHECK(st_load(&f, path, &e) == 0 && st_count(f) == 0 && st_meta_count(f) == 1 && st_has_checksums(f));
    st_free(f);
    raw = (unsigned char *)test_slurp(path, &len);
    static const char empty_hdr[] = "{\"__metadata__\":{\"crc32\":\"{\\\"__metadata__\\\":\\\"00000000\\\"}\"}}";
    CHECK(raw && len >= 8 && le64(raw) == len - 8 && len % 8 == 0 &&
          memcmp(raw + 8, empty_hdr, sizeof empty_hdr - 1) == 0);
    free(raw);
    unlink(path);
}

/* ---------------------------------------------------------------- 2. Python-written files */

static char *shared_path(const char *rel)
{
    const char *s = getenv("NMT_SHARED");
    if (!s || !*s) s = "../shared";
    size_t n = strlen(s) + strlen(rel) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", s, rel);
    return p;
}

static cJSON *load_json(const char *rel)
{
    char *p = shared_path(rel);
    size_t len = 0;
    unsigned char *b = p ? (unsigned char *)test_slurp(p, &len) : NULL;
    cJSON *j = b ? cJSON_ParseWithLength((const char *)b, len) : NULL;
    CHECKF(j != NULL, "cannot read %s", p ? p : rel);
    free(b);
    free(p);
    return j;
}

static void test_golden(void)
{
    char *path = shared_path("golden/golden_rnnsearch.safetensors");
    st_file *f = NULL;
    nmt_err e = {0};
    int rc = st_load(&f, path, &e);
    CHECKF(rc == 0, "%s", e.msg);
    free(path);
    cJSON *j = load_json("golden/golden_rnnsearch.json");
    if (rc || !j) { st_free(f); cJSON_Delete(j); return; }

    CHECK(st_meta(f, "model") && strcmp(st_meta(f, "model"),
          cJSON_GetObjectItem(j, "model")->valuestring) == 0);
    int64_t es[2] = {20, 8}, xs[2] = {8, 3};
    CHECK(st_expect(f, "param.Es", ST_F64, 2, es, &e) == 0);
    CHECK(st_expect(f, "x", ST_I64, 2, xs, &e) == 0);
    CHECK(st_find(f, "x_mask") && st_find(f, "x_mask")->dtype == ST_I32);

    /* The batch, time-major and padded with 0, rebuilt from the JSON's pairs. */
    const cJSON *pairs = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "batch"), "pairs");
    int B = cJSON_GetArraySize(pairs);
    CHECK(B == 3);
    for (int side = 0; side < 2 && B == 3; side++) {
        const char *key = side ? "tgt" : "src", *tn = side ? "y" : "x", *mn = side ? "y_mask" : "x_mask";
        int T = 0;
        for (int b = 0; b < B; b++) {
            int len = cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(pairs, b), key));
            if (len > T) T = len;
        }
        int64_t tok[64], mask[64];
        CHECK(T * B <= 64);
        if (T * B > 64) break;
        CHECK(st_read_i64(f, tn, tok, (size_t)(T * B), &e) == 0);
        CHECKF(st_read_i64(f, mn, mask, (size_t)(T * B), &e) == 0, "%s", e.msg);
        int bad = 0;
        for (int b = 0; b < B; b++) {
            const cJSON *s = cJSON_GetObjectItem(cJSON_GetArrayItem(pairs, b), key);
            int len = cJSON_GetArraySize(s);
            for (int t = 0; t < T; t++) {
                int64_t wt = t < len ? (int64_t)cJSON_GetArrayItem(s, t)->valuedouble : 0;
                bad += tok[t * B + b] != wt || mask[t * B + b] != (t < len);
            }
        }
        CHECKF(bad == 0, "%s: %d tokens or mask entries differ from the JSON batch", tn, bad);
    }
    CHECK(st_read_i64(f, "x", (int64_t[24]){0}, 24, &e) == 0);
    int64_t x[24];
    CHECK(st_read_i64(f, "x", x, 24, &e) == 0 && x[0] == 13 && x[1] == 19 && x[2] == 4);

    /* Scalars and vectors that the JSON repeats in decimal: bit-exact after strtod. */
    const cJSON *out = cJSON_GetObjectItem(j, "outputs");
    double loss = 0, norms[2] = {0, 0};
    CHECK(st_read_f64(f, "loss", &loss, 1, &e) == 0);
    CHECK(loss == cJSON_GetObjectItem(out, "loss")->valuedouble);
    CHECK(st_read_f64(f, "adadelta_grad_norms", norms, 2, &e) == 0);
    const cJSON *jn = cJSON_GetObjectItem(out, "adadelta_grad_norms");
    CHECK(norms[0] == cJSON_GetArrayItem(jn, 0)->valuedouble &&
          norms[1] == cJSON_GetArrayItem(jn, 1)->valuedouble);

    /* Every parameter and gradient named in the JSON, with its shape. */
    const cJSON *pl = cJSON_GetObjectItem(j, "params_in_order");
    int np = 0;
    for (const cJSON *p = pl ? pl->child : NULL; p; p = p->next, np++) {
        const cJSON *sh = cJSON_GetObjectItem(p, "shape");
        int64_t s[ST_MAX_DIMS];
        int nd = cJSON_GetArraySize(sh);
        for (int k = 0; k < nd && k < ST_MAX_DIMS; k++)
            s[k] = (int64_t)cJSON_GetArrayItem(sh, k)->valuedouble;
        char nm[300];
        snprintf(nm, sizeof nm, "param.%s", cJSON_GetObjectItem(p, "name")->valuestring);
        CHECKF(st_expect(f, nm, ST_F64, nd, s, &e) == 0, "%s", e.msg);
        snprintf(nm, sizeof nm, "grad.%s", cJSON_GetObjectItem(p, "name")->valuestring);
        CHECKF(st_expect(f, nm, ST_F64, nd, s, &e) == 0, "%s", e.msg);
    }
    CHECK(np >= 20);

    /* F64 -> F32: each value decoded by hand from the raw bytes, then rounded by the compiler. */
    const st_tensor *t = st_find(f, "param.Es");
    float f32[160];
    double f64[160];
    CHECK(st_read_f32(f, "param.Es", f32, 160, &e) == 0);
    CHECK(st_read_f64(f, "param.Es", f64, 160, &e) == 0);
    int bad = 0;
    const unsigned char *raw = st_data(f, t);
    for (int i = 0; i < 160; i++) {
        uint64_t u = le64(raw + 8 * i);
        double d;
        memcpy(&d, &u, 8);
        bad += f64[i] != d || f32[i] != (float)d;
    }
    CHECK(bad == 0);
    CHECK_NEAR(f32[0], -0.01766201587754584, 1e-7);
    CHECK_ERR(st_read_f32(f, "param.Es", f32, 100, &e), e, NMT_ERR_FORMAT,
              "golden_rnnsearch.safetensors: tensor 'param.Es' has 160 elements, expected 100");
    st_free(f);
    cJSON_Delete(j);

    /* The second golden file loads too and names its model. */
    path = shared_path("golden/golden_rnnencdec.safetensors");
    rc = st_load(&f, path, &e);
    CHECKF(rc == 0, "%s", e.msg);
    free(path);
    j = load_json("golden/golden_rnnencdec.json");
    if (!rc && j)
        CHECK(st_meta(f, "model") && strcmp(st_meta(f, "model"),
              cJSON_GetObjectItem(j, "model")->valuestring) == 0 && st_count(f) > 50);
    st_free(f);
    cJSON_Delete(j);
}

/* ---------------------------------------------------------------- 3. crafted bad files */

#define T8(dt, sh, b, e) "{\"a\":{\"dtype\":\"" dt "\",\"shape\":" sh ",\"data_offsets\":[" b "," e "]}}"

static void test_bad_files(void)
{
    nmt_err e = {0};
    st_file *f = NULL;
    unsigned char img[600];

    CHECK_ERR(st_load_mem(&f, "abc", 3, "bad.st", &e), e, NMT_ERR_FORMAT,
              "file is 3 bytes, shorter than the 8-byte header length");
    CHECK_ERR(st_load_mem(&f, NULL, 0, "bad.st", &e), e, NMT_ERR_FORMAT, "file is 0 bytes");
    /* Header length past the end: both numbers in the message. */
    size_t n = mk(img, "{}", NULL, 0);
    img[0] = 100;
    CHECK_ERR(st_load_mem(&f, img, n, "bad.st", &e), e, NMT_ERR_FORMAT,
              "header length 100 is larger than the 2 bytes");
    memset(img, 0xff, 8);
    CHECK_ERR(st_load_mem(&f, img, n, "bad.st", &e), e, NMT_ERR_FORMAT,
              "header length 18446744073709551615 exceeds the limit");
    BAD("", 0, NMT_ERR_FORMAT, "header is empty");
    BAD("{\"a\":", 0, NMT_ERR_FORMAT, "not valid JSON");
    BAD("{\"a\":{}} x", 0, NMT_ERR_FORMAT, "text after the object");
    {   /* NUL inside the declared header */
        const char h[] = "{}\0     ";
        unsigned char im[16];
        for (int i = 0; i < 8; i++) im[i] = i == 0 ? 8 : 0;
        memcpy(im + 8, h, 8);
        CHECK_ERR(st_load_mem(&f, im, 16, "bad.st", &e), e, NMT_ERR_FORMAT, "NUL byte");
    }
    BAD("{\"a\xff\":1}", 0, NMT_ERR_FORMAT, "not valid UTF-8");
    BAD("{\"\xed\xa0\x80\":1}", 0, NMT_ERR_FORMAT, "not valid UTF-8");   /* encoded surrogate */
    BAD("{\"\xc0\xaf\":1}", 0, NMT_ERR_FORMAT, "not valid UTF-8");       /* overlong '/' */
    BAD("[1,2]", 0, NMT_ERR_FORMAT, "header is not a JSON object");
    BAD("{\"a\":5}", 0, NMT_ERR_FORMAT, "tensor 'a': entry is not a JSON object");
    BAD("{\"a\":{\"shape\":[],\"data_offsets\":[0,4]}}", 4, NMT_ERR_FORMAT, "tensor 'a': missing 'dtype'");
    BAD("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, NMT_ERR_FORMAT, "missing 'shape'");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[]}}", 4, NMT_ERR_FORMAT, "missing 'data_offsets'");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4],\"x\":1}}", 4, NMT_ERR_FORMAT,
        "tensor 'a': unknown key 'x'");
    BAD("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}", 4,
        NMT_ERR_FORMAT, "duplicate key 'dtype'");
    BAD(T8("F17", "[1]", "0", "4"), 4, NMT_ERR_FORMAT, "tensor 'a': unknown dtype 'F17'");
    BAD("{\"a\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}}", 4, NMT_ERR_FORMAT,
        "dtype is not a string");
    BAD(T8("F32", "3", "0", "12"), 12, NMT_ERR_FORMAT, "shape is not an array");
    BAD(T8("F32", "[-1]", "0", "4"), 4, NMT_ERR_FORMAT, "shape[0] is not a non-negative integer");
    BAD(T8("F32", "[1,2.5]", "0", "4"), 4, NMT_ERR_FORMAT, "shape[1] is not a non-negative integer");
    BAD(T8("F32", "[\"1\"]", "0", "4"), 4, NMT_ERR_FORMAT, "shape[0] is not a non-negative integer");
    BAD(T8("F32", "[1e300]", "0", "4"), 4, NMT_ERR_FORMAT, "shape[0] is not a non-negative integer");
    BAD(T8("F32", "[1,1,1,1,1,1,1,1,1]", "0", "4"), 4, NMT_ERR_FORMAT, "more than 8 dimensions");
    BAD(T8("F32", "[4294967296,4294967296]", "0", "4"), 4, NMT_ERR_FORMAT, "overflows 64 bits");
    BAD(T8("F32", "[1]", "-4", "0"), 4, NMT_ERR_FORMAT, "data_offsets is not two non-negative");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4]}}", 4, NMT_ERR_FORMAT,
        "data_offsets is not two non-negative");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 8, NMT_ERR_FORMAT,
        "data_offsets is not two non-negative");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":{}}}", 4, NMT_ERR_FORMAT,
        "data_offsets is not an array");
    BAD(T8("F32", "[1]", "8", "4"), 8, NMT_ERR_FORMAT, "data_offsets [8,4] begin after end");
    BAD(T8("F32", "[2]", "0", "8"), 4, NMT_ERR_FORMAT,
        "data_offsets end 8 is past the end of the data section (4 bytes)");
    BAD(T8("F32", "[2,3]", "0", "8"), 8, NMT_ERR_FORMAT,
        "data_offsets [0,8] hold 8 bytes but shape [2,3] of F32 needs 24");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
        "\"b\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}", 24, NMT_ERR_FORMAT,
        "tensors 'a' [0,16] and 'b' [8,24] overlap");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
        "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,8]}}", 16, NMT_ERR_FORMAT,
        "overlap");   /* an empty tensor inside another's range */
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
        "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[16,24]}}", 24, NMT_ERR_FORMAT,
        "bytes [8,16) of the data section belong to no tensor (gap before 'b')");
    BAD(T8("F32", "[1]", "0", "4"), 12, NMT_ERR_FORMAT,
        "8 trailing bytes after the last tensor (data section is 12 bytes, tensors cover 4)");
    BAD("{}", 5, NMT_ERR_FORMAT, "5 trailing bytes in the data section, which holds no tensor");
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
        "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, NMT_ERR_FORMAT,
        "duplicate tensor name 'a'");
    /* Escapes that decode to the same name are the same name. */
    BAD("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
        "\"\\u0061\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, NMT_ERR_FORMAT,
        "duplicate tensor name 'a'");
    BAD("{\"\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, NMT_ERR_FORMAT,
        "empty tensor name");
    BAD("{\"__metadata__\":[\"x\"]}", 0, NMT_ERR_FORMAT, "__metadata__ is not a JSON object");
    BAD("{\"__metadata__\":{\"k\":\"v\",\"n\":3}}", 0, NMT_ERR_FORMAT,
        "__metadata__ value for 'n' is not a string");
    BAD("{\"__metadata__\":{\"k\":\"v\",\"k\":\"w\"}}", 0, NMT_ERR_FORMAT,
        "duplicate __metadata__ key 'k'");
    BAD("{\"__metadata__\":{},\"__metadata__\":{}}", 0, NMT_ERR_FORMAT, "duplicate __metadata__");
    {
        char h[600];
        snprintf(h, sizeof h, "{\"");
        memset(h + 2, 'n', 256);
        snprintf(h + 258, sizeof h - 258, "\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}");
        BAD(h, 1, NMT_ERR_FORMAT, "is 256 bytes long (max 255)");
        /* 255 bytes is the longest name accepted. */
        snprintf(h, sizeof h, "{\"");
        memset(h + 2, 'm', 255);
        snprintf(h + 257, sizeof h - 257, "\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}");
        n = mk(img, h, "z", 1);
        CHECK(st_load_mem(&f, img, n, "ok.st", &e) == 0 && st_count(f) == 1);
        st_free(f);
    }

    /* Missing file and a directory are I/O errors naming the path. */
    char path[300];
    snprintf(path, sizeof path, "%s/does-not-exist.safetensors", tmpdir);
    f = (st_file *)1;
    CHECK_ERR(st_load(&f, path, &e), e, NMT_ERR_IO, "does-not-exist.safetensors: No such file");
    CHECK(f == NULL);
    CHECK_ERR(st_load(&f, tmpdir, &e), e, NMT_ERR_IO, "not a regular file");

    /* Hostile sizes are refused before cJSON builds them (five million zeros took 418 MB): an
     * array longer than any field's, nesting deeper than any header's, too many values. */
    {
        size_t cap = 12000000;
        char *h = malloc(cap);
        unsigned char *im = malloc(cap + 8);
        CHECK(h && im);
        if (h && im) {
            const char pre[] = "{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4],\"shape\":[";
            size_t k = strlen(pre);
            memcpy(h, pre, k);
            for (int i = 0; i < 5000000; i++) { h[k++] = '0'; h[k++] = ','; }
            strcpy(h + k - 1, "]}}");
            n = mk(im, h, "\0\0\0\0", 4);
            CHECK_ERR(st_load_mem(&f, im, n, "bad.st", &e), e, NMT_ERR_FORMAT, "an array of more than 64 values");
            strcpy(h, "{\"a\":");
            for (k = 5; k < 5 + 17; k++) h[k] = '[';
            strcpy(h + k, "1");
            n = mk(im, h, NULL, 0);
            CHECK_ERR(st_load_mem(&f, im, n, "bad.st", &e), e, NMT_ERR_FORMAT, "nests deeper than 16 levels (byte 20)");
            k = (size_t)sprintf(h, "{\"__metadata__\":{");
            for (int i = 0; i < 600000; i++) k += (size_t)sprintf(h + k, "\"%x\":\"\",", i);
            strcpy(h + k - 1, "}}");
            n = mk(im, h, NULL, 0);
            CHECK_ERR(st_load_mem(&f, im, n, "bad.st", &e), e, NMT_ERR_FORMAT, "more than 1000000 JSON values");
            /* at the limits: 64 values and 16 levels pass the scan and meet the parse's own checks */
            memcpy(h, pre, strlen(pre));
            k = strlen(pre);
            for (int i = 0; i < 64; i++) { h[k++] = '1'; h[k++] = ','; }
            strcpy(h + k - 1, "]}}");
            n = mk(im, h, "\0\0\0\0", 4);
            CHECK_ERR(st_load_mem(&f, im, n, "bad.st", &e), e, NMT_ERR_FORMAT, "more than 8 dimensions");
        }
        free(h);
        free(im);
    }

    /* Every truncation of a valid file fails cleanly, as a format error. */
    const double v[3] = {1, 2, 3};
    n = mk(img, "{\"__metadata__\":{\"m\":\"x\"},\"v\":{\"dtype\":\"F64\",\"shape\":[3],"
                "\"data_offsets\":[0,24]}}", v, 24);
    CHECK(st_load_mem(&f, img, n, "full", &e) == 0);
    st_free(f);
    int bad = 0;
    for (size_t cut = 0; cut < n; cut++) {
        unsigned char *cp = malloc(cut ? cut : 1);   /* exact size, so ASan sees any overread */
        memcpy(cp, img, cut);
        f = NULL;
        int rc = st_load_mem(&f, cp, cut, "cut", &e);
        if (rc != NMT_ERR_FORMAT || f != NULL || strncmp(e.msg, "cut: ", 5) != 0) bad++;
        st_free(f);
        free(cp);
    }
    CHECKF(bad == 0, "%d of %zu truncations did not fail with a format error", bad, n);
}

/* ---------------------------------------------------------------- 4. random corruption */

static void test_fuzz(int quick)
{
    static const unsigned char interesting[] = "0123456789-+.eE\"{}[],: \\u\xff\x80";
    float a[6] = {1, 2, 3, 4, 5, 6};
    int32_t b[3] = {-1, 0, 1};
    double c = 2.5;
    unsigned char base[512];
    size_t n = mk(base, "{\"__metadata__\":{\"k\":\"v\"},"
                        "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                        "\"c\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[24,32]},"
                        "\"b\":{\"dtype\":\"I32\",\"shape\":[3],\"data_offsets\":[32,44]}}", NULL, 0);
    memcpy(base + n, a, 24);
    memcpy(base + n + 24, &c, 8);
    memcpy(base + n + 32, b, 12);
    n += 44;
    size_t hlen = (size_t)le64(base);
    nmt_err e = {0};
    st_file *f = NULL;
    CHECK(st_load_mem(&f, base, n, "fuzz", &e) == 0);
    st_free(f);

    int iters = quick ? 600 : 6000, ok = 0, failed = 0, other = 0;
    unsigned char buf[600];
    rng_seed(&corrupt_rng, 0x9e3779b97f4a7c15ull);
    for (int it = 0; it < iters; it++) {
        size_t len = n;
        memcpy(buf, base, n);
        int kind = (int)(rnd() % 4);
        int edits = 1 + (int)(rnd() % 3);
        for (int k = 0; k < edits; k++) {
            if (kind == 0) {                       /* any byte, any value */
                buf[rnd() % len] = (unsigned char)rnd();
            } else if (kind == 1) {                /* header text, JSON-ish values */
                buf[8 + rnd() % hlen] = interesting[rnd() % (sizeof interesting - 1)];
            } else if (kind == 2 && len > 9) {     /* delete a header byte and fix N: deeper parsing */
                size_t at = 8 + rnd() % (len - 8);
                memmove(buf + at, buf + at + 1, len - at - 1);
                len--;
                uint64_t h = le64(buf);
                if (at < 8 + h) h--;
                for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(h >> (8 * i));
            } else {                               /* the length field itself */
                buf[rnd() % 8] = (unsigned char)rnd();
            }
        }
        if (rnd() % 8 == 0) len = (size_t)(rnd() % (len + 1));
        unsigned char *cp = malloc(len ? len : 1);
        memcpy(cp, buf, len);
        f = NULL;
        int rc = st_load_mem(&f, cp, len, "fuzz", &e);
        free(cp);   /* the loaded file must own its own copy */
        if (rc == 0) {
            ok++;
            /* Touch every byte the table claims, so ASan checks the ranges. */
            unsigned sum = 0;
            for (int i = 0; i < st_count(f); i++) {
                const st_tensor *t = st_get(f, i);
                const unsigned char *p = st_data(f, t);
                for (size_t k = 0; k < st_nbytes(t); k++) sum += p[k];
                CHECK(st_find(f, t->name) == t);
                size_t ne = st_numel(t);
                if (ne <= 64) {
                    double d[64];
                    int64_t q[64];
                    float g[64];
                    st_read_f64(f, t->name, d, ne, &e);
                    st_read_i64(f, t->name, q, ne, &e);
                    st_read_f32(f, t->name, g, ne, &e);
                }
            }
            (void)sum;
        } else if (rc == NMT_ERR_FORMAT && f == NULL && strncmp(e.msg, "fuzz: ", 6) == 0) {
            failed++;
        } else {
            other++;
            if (other < 5) fprintf(stderr, "fuzz: rc %d msg '%s'\n", rc, e.msg);
        }
        st_free(f);
    }
    CHECKF(other == 0, "%d corruptions gave something other than a load or a format error", other);
    CHECK(ok > 0 && failed > iters / 2);   /* the loop really exercised both paths */
}

/* ---------------------------------------------------------------- 5. atomic save */

static void test_atomic_save(void)
{
    char path[300], sub[300], bad[300];
    snprintf(path, sizeof path, "%s/atomic", tmpdir);
    mkdir(path, 0700);
    int base_count = count_dir(path);
    CHECK(base_count == 0);
    snprintf(path, sizeof path, "%s/atomic/m.safetensors", tmpdir);
    nmt_err e = {0};
    float a[2] = {1, 2};
    int64_t q = 7, s2[1] = {2}, s1[1] = {1};

    st_writer *w = st_writer_init();
    CHECK(st_writer_add(w, "a", ST_F32, 1, s2, a) == 0);
    CHECK(st_writer_save(w, path, &e) == 0);
    st_writer_free(w);
    w = st_writer_init();
    CHECK(st_writer_add(w, "b", ST_I64, 1, s1, &q) == 0);
    CHECK(st_writer_save(w, path, &e) == 0);
    st_writer_free(w);
    st_file *f = NULL;
    CHECK(st_load(&f, path, &e) == 0 && st_count(f) == 1 && st_find(f, "a") == NULL);
    int64_t got = 0;
    CHECK(st_read_i64(f, "b", &got, 1, &e) == 0 && got == 7);
    st_free(f);
    snprintf(sub, sizeof sub, "%s/atomic", tmpdir);
    CHECK(count_dir(sub) == 1);   /* no temp file left over */

    /* A directory that does not exist: I/O error naming the path, nothing created. */
    snprintf(bad, sizeof bad, "%s/atomic/nope/m.safetensors", tmpdir);
    w = st_writer_init();
    CHECK(st_writer_add(w, "a", ST_F32, 1, s2, a) == 0);
    CHECK_ERR(st_writer_save(w, bad, &e), e, NMT_ERR_IO, "nope/m.safetensors");
    CHECK(count_dir(sub) == 1);

    /* A target that is a directory is refused before anything is written, and left as it is. */
    snprintf(bad, sizeof bad, "%s/atomic/isdir", tmpdir);
    mkdir(bad, 0700);
    CHECK_ERR(st_writer_save(w, bad, &e), e, NMT_ERR_IO, "not a regular file (a directory)");
    CHECK(count_dir(sub) == 2);
    /* The rename fails (the target became a directory after the temporary was opened): the
     * temporary must be gone. */
    {
        char late[600];
        snprintf(late, sizeof late, "%s/atomic/late", tmpdir);
        atomic_file af;
        CHECK(atomic_open(&af, late, &e) == 0);
        fputs("data", af.fp);
        mkdir(late, 0700);
        CHECK_ERR(atomic_commit(&af, &e), e, NMT_ERR_IO, "cannot rename");
        CHECK(count_dir(sub) == 3); /* isdir, late and the first file: no temporary left */
        rmdir(late);
    }
    struct stat sb;
    CHECK(stat(bad, &sb) == 0 && S_ISDIR(sb.st_mode));
    rmdir(bad);
    st_writer_free(w);

    /* A failed add makes the save fail with its message; the old file survives. */
    w = st_writer_init();
    CHECK(st_writer_add(w, "a", ST_F32, 1, s2, a) == 0);
    CHECK(st_writer_add(w, "a", ST_F32, 1, s2, a) == NMT_ERR_ARG);
    CHECK_ERR(st_writer_save(w, path, &e), e, NMT_ERR_ARG, "duplicate tensor name 'a'");
    st_writer_free(w);
    CHECK(st_load(&f, path, &e) == 0 && st_find(f, "b") != NULL);
    st_free(f);
    CHECK(count_dir(sub) == 1);

    /* Argument checks of the writer, each refused. */
    int64_t neg[1] = {-1};
    char longname[300];
    memset(longname, 'x', 256);
    longname[256] = 0;
    w = st_writer_init();
    CHECK(st_writer_add(w, "d", 99, 1, s2, a) == NMT_ERR_ARG);
    CHECK(st_writer_add(w, "d", ST_F32, 9, s2, a) == NMT_ERR_ARG);
    CHECK(st_writer_add(w, "d", ST_F32, 1, neg, a) == NMT_ERR_ARG);
    CHECK(st_writer_add(w, "d", ST_F32, 1, s2, NULL) == NMT_ERR_ARG);
    CHECK(st_writer_add(w, longname, ST_F32, 1, s2, a) == NMT_ERR_ARG);
    CHECK(st_writer_add(w, "", ST_F32, 1, s2, a) == NMT_ERR_ARG);
    CHECK(st_writer_add(w, "__metadata__", ST_F32, 1, s2, a) == NMT_ERR_ARG);
    CHECK(st_writer_add(w, "bad\xff", ST_F32, 1, s2, a) == NMT_ERR_ARG);
    CHECK(st_writer_meta(w, "k", "bad\xc3") == NMT_ERR_ARG);
    /* The first failure is the one reported. */
    CHECK_ERR(st_writer_save(w, path, &e), e, NMT_ERR_ARG, "invalid dtype 99");
    st_writer_free(w);

    unlink(path);
    rmdir(sub);
}

/* ---------------------------------------------------------------- 6. checksums */

/* Same tensors (name, dtype, shape, bytes) and the same metadata values. A flip in the name of
 * the checksum key itself leaves the file unchecked but unchanged: the model loader refuses the
 * unknown key that results (test_model). */
static int same_content(const st_file *a, const st_file *b)
{
    if (st_count(a) != st_count(b) || st_meta_count(a) != st_meta_count(b)) return 0;
    for (int i = 0; i < st_count(a); i++) {
        const st_tensor *x = st_get(a, i), *y = st_find(b, x->name);
        if (!y || x->dtype != y->dtype || x->ndim != y->ndim || st_nbytes(x) != st_nbytes(y)) return 0;
        for (int k = 0; k < x->ndim; k++) if (x->shape[k] != y->shape[k]) return 0;
        if (st_nbytes(x) && memcmp(st_data(a, x), st_data(b, y), st_nbytes(x))) return 0;
    }
    for (int i = 0; i < st_meta_count(a); i++) {
        const char *k, *v, *w;
        st_meta_get(a, i, &k, &v);
        if (strcmp(k, ST_CRC_KEY) && (!(w = st_meta(b, k)) || strcmp(v, w))) return 0;
    }
    return 1;
}

static void test_checksums(void)
{
    float a[4] = {1, 2, 3, 4};
    int32_t b[3] = {7, 8, 9};
    int64_t s4[1] = {4}, s3[1] = {3};
    char path[300];
    snprintf(path, sizeof path, "%s/crc.safetensors", tmpdir);
    st_writer *w = st_writer_init();
    CHECK(st_writer_add(w, "dec_W", ST_F32, 1, s4, a) == 0 && st_writer_add(w, "b", ST_I32, 1, s3, b) == 0);
    CHECK(st_writer_meta(w, "vocab", "[\"le\",\"chat\"]") == 0);
    CHECK(st_writer_meta(w, ST_CRC_KEY, "{}") == NMT_ERR_ARG); /* reserved; the save then fails */
    nmt_err e = {0};
    CHECK_ERR(st_writer_save(w, path, &e), e, NMT_ERR_ARG, "reserved");
    st_writer_free(w);
    w = st_writer_init();
    CHECK(st_writer_add(w, "dec_W", ST_F32, 1, s4, a) == 0 && st_writer_add(w, "b", ST_I32, 1, s3, b) == 0);
    CHECK(st_writer_meta(w, "vocab", "[\"le\",\"chat\"]") == 0);
    CHECK(st_writer_save(w, path, &e) == 0);
    st_writer_free(w);
    size_t len = 0;
    unsigned char *raw = (unsigned char *)test_slurp(path, &len);
    st_file *f = NULL, *g = NULL;
    CHECK(raw && st_load_mem(&f, raw, len, "m.nmt", &e) == 0 && st_has_checksums(f));
    if (!raw || !f) { free(raw); st_free(f); unlink(path); return; }
    size_t hn = (size_t)le64(raw), dat = 8 + hn;

    /* a flipped weight: whole-file loads refuse at once, st_open at the read of that tensor */
    raw[dat + 1] ^= 0x40;   /* the F32 tensor comes first in the data (largest element size) */
    CHECK_ERR(st_load_mem(&g, raw, len, "m.nmt", &e), e, NMT_ERR_FORMAT, "m.nmt: checksum mismatch in tensor dec_W: the file is corrupt");
    FILE *fp = fopen(path, "wb");
    CHECK(fp && fwrite(raw, 1, len, fp) == len && fclose(fp) == 0);
    CHECK(st_open(&g, path, &e) == 0);
    float got[4];
    int64_t gi[3];
    CHECK_ERR(st_read_f32(g, "dec_W", got, 4, &e), e, NMT_ERR_FORMAT, "checksum mismatch in tensor dec_W");
    CHECK(st_read_i64(g, "b", gi, 3, &e) == 0 && gi[2] == 9);   /* the intact tensor reads */
    double gd[4];
    CHECK_ERR(st_read_f64(g, "dec_W", gd, 4, &e), e, NMT_ERR_FORMAT, "checksum mismatch in tensor dec_W");
    st_free(g);
    g = NULL;
    raw[dat + 1] ^= 0x40;
    /* a vocabulary word changed in place (same length): the metadata's checksum */
    char *v = memmem(raw, dat, "chat", 4);
    CHECK(v != NULL);
    if (v) {
        v[0] = 'k';
        CHECK_ERR(st_load_mem(&g, raw, len, "m.nmt", &e), e, NMT_ERR_FORMAT, "m.nmt: checksum mismatch in the metadata: the file is corrupt");
        v[0] = 'c';
    }
    /* Every single-byte change of the file is refused, or leaves the content as it was (JSON
     * whitespace, say): none may load with other weights or words. */
    static const unsigned char flips[] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff};
    int changed = 0, refused = 0;
    for (size_t i = 0; i < len; i++)
        for (size_t k = 0; k < sizeof flips; k++) {
            raw[i] ^= flips[k];
            g = NULL;
            if (st_load_mem(&g, raw, len, "flip", &e) != 0) refused++;
            else changed += !same_content(f, g);
            st_free(g);
            raw[i] ^= flips[k];
        }
    CHECKF(changed == 0, "%d of %zu byte flips loaded with changed content", changed, len * sizeof flips);
    CHECK(refused > 0);
    st_free(f);
    free(raw);
    unlink(path);
}

/* Files without a checksum table, and malformed tables. */
static void test_checksum_tables(void)
{
    float a[1] = {1};
    st_file *f = NULL;
    nmt_err e = {0};
    /* A file without checksums (written before they existed) still loads, unchecked. */
    unsigned char img[256];
    size_t n = mk(img, "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", a, 4);
    CHECK(st_load_mem(&f, img, n, "old", &e) == 0 && !st_has_checksums(f));
    st_free(f);
    /* malformed tables */
    n = mk(img, "{\"__metadata__\":{\"crc32\":\"{\\\"__metadata__\\\":\\\"00000000\\\"}\"},"
                "\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", a, 4);
    CHECK_ERR(st_load_mem(&f, img, n, "t", &e), e, NMT_ERR_FORMAT, "t: tensor 'x' has no checksum: the file is corrupt");
    n = mk(img, "{\"__metadata__\":{\"crc32\":\"{\\\"y\\\":\\\"00000000\\\"}\"}}", NULL, 0);
    CHECK_ERR(st_load_mem(&f, img, n, "t", &e), e, NMT_ERR_FORMAT, "bad entry 'y'");
    n = mk(img, "{\"__metadata__\":{\"crc32\":\"{\\\"__metadata__\\\":\\\"0000000g\\\"}\"}}", NULL, 0);
    CHECK_ERR(st_load_mem(&f, img, n, "t", &e), e, NMT_ERR_FORMAT, "bad entry '__metadata__'");
    n = mk(img, "{\"__metadata__\":{\"crc32\":\"[]\"}}", NULL, 0);
    CHECK_ERR(st_load_mem(&f, img, n, "t", &e), e, NMT_ERR_FORMAT, "not a JSON object");
    n = mk(img, "{\"__metadata__\":{\"crc32\":\"{}\"}}", NULL, 0);
    CHECK_ERR(st_load_mem(&f, img, n, "t", &e), e, NMT_ERR_FORMAT, "lacks the metadata's");
}

int main(int argc, char **argv)
{
    int quick = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/test_st.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("test_safetensors: mkdtemp");
        CHECK(0);
        return test_done("test_safetensors");
    }
    test_known_bytes();
    test_round_trip();
    test_golden();
    test_bad_files();
    test_fuzz(quick);
    test_atomic_save();
    test_checksums();
    test_checksum_tables();
    CHECKF(count_dir(tmpdir) == 0, "files left in %s", tmpdir);
    rmdir(tmpdir);
    return test_done("test_safetensors");
}
