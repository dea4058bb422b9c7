/* test_npz.c: the .npz reader against independent evidence: Marian's four model files (every
 * parameter of params.txt with its shape, the YAML), fixtures NumPy wrote (values compared bit
 * for bit with NumPy's own float32 conversion), one crafted bad file per refusal, and damage
 * made here: every truncation, flipped bytes, lying sizes. Usage: test_npz
 * (NMT_SHARED names the shared folder, default ../shared; the fixtures: tests/data/npz/) */
/* kernel sets: one: a file reader, no products */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/npz.h"
#include "helpers.h"
#include "test.h"

#define FIX "tests/data/npz/"

/* one pass, or one failure saying what came instead of code `want` and text `sub` */
#define CHECK_ERR(rc, e, want, sub) \
    CHECKF((rc) == (want) && strstr((e).msg, (sub)) != NULL, \
           "rc %d msg '%s', wanted rc %d and '%s'", (rc), (e).msg, (want), (sub))

/* Loads an image that must be refused as NMT_ERR_FORMAT with `sub` in a message naming it. */
static void refuse_mem(const void *img, size_t n, const char *sub)
{
    npz_file *f = (npz_file *)1;
    nmt_err e = {0};
    int rc = npz_load_mem(&f, img, n, "bad.npz", &e);
    CHECK_ERR(rc, e, NMT_ERR_FORMAT, sub);
    CHECK(f == NULL);
    CHECKF(strncmp(e.msg, "bad.npz: ", 9) == 0, "message does not name the file: %s", e.msg);
    npz_free(rc ? NULL : f);
}

/* ---------------------------------------------------------------- 1. Marian's models */

static int dtype_of_params(const char *s)
{
    return !strcmp(s, "float32") ? NPZ_F32 : !strcmp(s, "int8") ? NPZ_I8 : -1;
}

/* One line of params.txt, "name dtype 7241x64", against the archive. */
static void check_param(const npz_file *f, const char *line, const char *model)
{
    char name[256], dt[32], sh[64];
    CHECKF(sscanf(line, "%255s %31s %63s", name, dt, sh) == 3, "%s: params line '%s'", model, line);
    const npz_array *a = npz_find(f, name);
    CHECKF(a != NULL, "%s: array '%s' missing", model, name);
    if (!a) return;
    CHECKF(a->dtype == dtype_of_params(dt), "%s: '%s' dtype %s, params say %s", model, name, npz_dtype_name(a->dtype), dt);
    int nd = 0;
    int64_t want[NPZ_MAX_DIMS] = {0};
    for (char *p = sh; *p && nd < NPZ_MAX_DIMS; nd++) {
        want[nd] = strtoll(p, &p, 10);
        if (*p == 'x') p++;
    }
    int same = a->ndim == nd;
    for (int i = 0; same && i < nd; i++) same = a->shape[i] == want[i];
    CHECKF(same, "%s: '%s' shape differs from params.txt's %s", model, name, sh);
    if (a->dtype != NPZ_F32) return;
    float *v = malloc(a->numel * sizeof *v + 1);
    nmt_err e = {0};
    CHECKF(v && npz_read_f32(f, a, v, a->numel, &e) == 0, "%s: read '%s': %s", model, name, e.msg);
    int finite = 1;
    for (size_t i = 0; v && i < a->numel; i++) finite &= isfinite(v[i]) != 0;
    CHECKF(finite, "%s: '%s' has a value that is not finite", model, name);
    free(v);
}

static void test_marian_one(const char *shared, const char *model)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/peers/marian/vectors/%s/model.npz", shared, model);
    npz_file *f = NULL;
    nmt_err e = {0};
    int rc = npz_load(&f, path, &e);
    CHECKF(rc == 0, "%s: %s", model, e.msg);
    if (rc) return;
    snprintf(path, sizeof path, "%s/peers/marian/vectors/%s/params.txt", shared, model);
    size_t nl = 0;
    char **lines = test_read_lines(path, &nl);
    CHECKF(lines && nl > 80, "%s: cannot read params.txt", path);
    for (size_t i = 0; lines && i < nl; i++) check_param(f, lines[i], model);
    CHECKF((size_t)npz_count(f) == nl, "%s: %d arrays, params.txt lists %zu", model, npz_count(f), nl);
    test_free_lines(lines, nl);
    const char *yml = npz_model_yml(f);
    CHECKF(yml && strstr(yml, "type: transformer\n") && strstr(yml, "dim-emb: 64\n"), "%s: model.yml", model);
    snprintf(path, sizeof path, "%s/peers/marian/vectors/%s/special_model.yml", shared, model);
    size_t n = 0;
    char *want = test_slurp(path, &n);
    while (want && n && want[n - 1] == '\n') want[--n] = 0;
    size_t yn = yml ? strlen(yml) : 0;
    while (yml && yn && yml[yn - 1] == '\n') yn--;
    CHECKF(want && yml && yn == n && !memcmp(yml, want, n), "%s: model.yml differs from special_model.yml", model);
    free(want);
    npz_free(f);
}

static void test_marian(void)
{
    const char *shared = getenv("NMT_SHARED");
    if (!shared || !*shared) shared = "../shared";
    char probe[1024];
    snprintf(probe, sizeof probe, "%s/peers/marian/vectors/a_postnorm_tiedall/model.npz", shared);
    FILE *fp = fopen(probe, "rb");
    if (!fp) {
        printf("SKIP Marian models: %s absent\n", probe);
        return;
    }
    fclose(fp);
    const char *models[] = {"a_postnorm_tiedall", "b_prenorm_tiedtgt", "c_ssru_tiedall", "d_guided_untied"};
    for (int i = 0; i < 4; i++) test_marian_one(shared, models[i]);
}

/* ---------------------------------------------------------------- 2. NumPy's values */

/* One line of good_mixed.expect: name, dtype, shape, float32 bits, against the archive. */
static void check_expect_line(const npz_file *f, char *line)
{
    char *save = NULL, *name = strtok_r(line, " ", &save), *dt = strtok_r(NULL, " ", &save);
    char *sh = strtok_r(NULL, " ", &save);
    if (!name || name[0] == '#') return;
    const npz_array *a = npz_find(f, name);
    CHECKF(a && dt && sh && !strcmp(npz_dtype_name(a->dtype) + 1, dt + 1), "array '%s' missing or of another dtype", name);
    if (!a || !sh) return;
    int nd = 0, same = 1;
    for (char *p = sh; *p != '-' && *p; nd++) {
        long long d = strtoll(p, &p, 10);
        same &= nd < a->ndim && a->shape[nd] == d;
        if (*p == 'x') p++;
    }
    CHECKF(same && nd == a->ndim, "array '%s': shape differs from %s", name, sh);
    float *v = malloc(a->numel * sizeof *v + 1);
    nmt_err e = {0};
    CHECKF(v && npz_read_f32(f, a, v, a->numel, &e) == 0, "read '%s': %s", name, e.msg);
    size_t k = 0;
    for (char *t; v && (t = strtok_r(NULL, " \n", &save)); k++) {
        uint32_t want = (uint32_t)strtoul(t, NULL, 16), got = 0;
        if (k < a->numel) memcpy(&got, &v[k], 4);
        CHECKF(k < a->numel && got == want, "'%s'[%zu]: bits %08x, NumPy says %08x", name, k, got, want);
    }
    CHECKF(k == a->numel, "'%s': %zu values expected, %llu read", name, k, (unsigned long long)a->numel);
    free(v);
}

static void test_values(void)
{
    npz_file *f = NULL;
    nmt_err e = {0};
    int rc = npz_load(&f, FIX "good_mixed.npz", &e);
    CHECKF(rc == 0, "%s", e.msg);
    if (rc) return;
    size_t nl = 0;
    char **lines = test_read_lines(FIX "good_mixed.expect", &nl);
    CHECK(lines && nl == 11);
    for (size_t i = 0; lines && i < nl; i++) check_expect_line(f, lines[i]);
    test_free_lines(lines, nl);
    CHECK(npz_count(f) == 12);
    CHECK(!strcmp(npz_get(f, 0)->name, "a") && !strcmp(npz_get(f, 11)->name, "special:model.yml"));
    CHECK(npz_get(f, 12) == NULL && npz_get(f, -1) == NULL && npz_find(f, "nope") == NULL);
    CHECK(npz_find(f, "s")->ndim == 0 && npz_find(f, "s")->numel == 1);
    CHECK(npz_find(f, "empty")->numel == 0);
    /* the YAML without its NUL padding; the byte string as bytes, refused as numbers */
    CHECK(npz_model_yml(f) && !strcmp(npz_model_yml(f), "type: transformer\ndim-emb: 8\n"));
    const npz_array *b = npz_find(f, "bytes");
    size_t nb = 0;
    const void *raw = npz_bytes(f, b, &nb);
    CHECK(b && b->dtype == NPZ_S1 && raw && nb == 4 && !memcmp(raw, "ab\0c", 4));
    float x[4];
    rc = npz_read_f32(f, b, x, 4, &e);
    CHECK_ERR(rc, e, NMT_ERR_ARG, "holds bytes");
    rc = npz_read_f32(f, npz_find(f, "a"), x, 4, &e);
    CHECK_ERR(rc, e, NMT_ERR_MISMATCH, "has 6 elements");
    npz_array copy = *npz_find(f, "a");
    CHECK(npz_read_f32(f, &copy, x, 6, &e) == NMT_ERR_ARG);   /* only the file's own records */
    npz_free(f);

    /* numpy.savez's own archive: stored entries, ZIP64 extra fields in the local headers */
    rc = npz_load(&f, FIX "good_savez.npz", &e);
    CHECKF(rc == 0, "%s", e.msg);
    const npz_array *w = rc ? NULL : npz_find(f, "w");
    float wv[12] = {0};
    CHECK(w && w->ndim == 2 && w->shape[0] == 3 && w->shape[1] == 4 && npz_read_f32(f, w, wv, 12, &e) == 0);
    int ok = 1;
    for (int i = 0; i < 12; i++) ok &= wv[i] == (float)i;
    CHECK(ok && npz_model_yml(f) == NULL);
    npz_free(f);
}

/* ---------------------------------------------------------------- 3. refusals */

static void refuse_file(const char *name, int code, const char *sub)
{
    char path[256];
    snprintf(path, sizeof path, FIX "%s", name);
    npz_file *f = (npz_file *)1;
    nmt_err e = {0};
    int rc = npz_load(&f, path, &e);
    CHECK_ERR(rc, e, code, sub);
    CHECKF(f == NULL && strncmp(e.msg, path, strlen(path)) == 0, "%s: message does not name the file: %s", name, e.msg);
    npz_free(rc ? NULL : f);
}

static void test_refusals(void)
{
    refuse_file("bad_fortran.npz", NMT_ERR_FORMAT, "array 'a': fortran_order True");
    refuse_file("bad_bigendian.npz", NMT_ERR_FORMAT, "big-endian dtype '>f4'");
    refuse_file("bad_dtype.npz", NMT_ERR_FORMAT, "unsupported dtype '<f8'");
    refuse_file("bad_structured.npz", NMT_ERR_FORMAT, "structured dtype");
    refuse_file("bad_shape.npz", NMT_ERR_FORMAT, "data is shorter than its shape says: shape (9, 3) of <f4 needs 108 bytes, the entry holds 24");
    refuse_file("bad_long.npz", NMT_ERR_FORMAT, "12 bytes after its data");
    refuse_file("bad_header.npz", NMT_ERR_FORMAT, "array 'a': .npy header does not parse");
    refuse_file("bad_notnpy.npz", NMT_ERR_FORMAT, "entry 'readme.txt' is not a .npy array");
    refuse_file("bad_dup.npz", NMT_ERR_FORMAT, "duplicate array 'a' (entries 1 and 3)");
    refuse_file("bad_yml.npz", NMT_ERR_FORMAT, "a NUL byte inside the text");
    refuse_file("make_fixtures.py", NMT_ERR_FORMAT, "not a ZIP archive");
    refuse_file("absent.npz", NMT_ERR_IO, "absent.npz");
    refuse_file("", NMT_ERR_IO, "");
    refuse_mem("", 0, "an empty file");
    refuse_mem("\x89PNG\r\n\x1a\n", 8, "not a ZIP archive");
    /* the smallest archive: an end record alone, no entries */
    unsigned char end[22] = {0x50, 0x4b, 5, 6};
    npz_file *f = NULL;
    nmt_err e = {0};
    CHECK(npz_load_mem(&f, end, 22, "x", &e) == 0 && npz_count(f) == 0 && npz_find(f, "a") == NULL);
    npz_free(f);
    end[8] = end[10] = 3;   /* three entries in a directory of 0 bytes */
    refuse_mem(end, 22, "3 entries cannot fit");
    CHECK(npz_load(NULL, "x", &e) == NMT_ERR_ARG && npz_load_mem(&f, NULL, 4, "x", &e) == NMT_ERR_ARG);
    npz_free(NULL);
    CHECK(npz_count(NULL) == 0 && npz_get(NULL, 0) == NULL && npz_model_yml(NULL) == NULL);
}

/* ---------------------------------------------------------------- 4. damage made here */

/* offset of the central record of entry `name` in img, or 0 */
static size_t central_of(const unsigned char *img, size_t n, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i + 46 + nl <= n; i++)
        if (!memcmp(img + i, "PK\1\2", 4) && img[i + 28] == nl && !memcmp(img + i + 46, name, nl)) return i;
    return 0;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* A central directory of 40 records all naming the deflated entry at c: overlapping entries,
 * by which a small file would inflate 40 times over, refused before the duplicate names. */
static void test_overlap(const unsigned char *img, size_t n, size_t c)
{
    size_t cd = central_of(img, n, "a.npy"), rl = 46 + img[c + 28] + img[c + 30] + img[c + 32];
    unsigned char *m = malloc(cd + 40 * rl + 22);
    memcpy(m, img, cd);
    for (int i = 0; i < 40; i++) memcpy(m + cd + (size_t)i * rl, img + c, rl);
    unsigned char *end = m + cd + 40 * rl;
    memset(end, 0, 22);
    memcpy(end, "PK\5\6", 4);
    end[8] = end[10] = 40;
    put32(end + 12, (uint32_t)(40 * rl));
    put32(end + 16, (uint32_t)cd);
    refuse_mem(m, cd + 40 * rl + 22, "entries overlap");
    free(m);
}

/* Every prefix is refused as truncated; every flipped byte is refused, or harmless where the
 * byte is one the reader ignores; a flip in stored array data is a CRC mismatch. */
static void test_damage(void)
{
    size_t n = 0;
    unsigned char *img = (unsigned char *)test_slurp(FIX "good_mixed.npz", &n);
    CHECK(img && n > 2000);
    if (!img) return;
    int bad_prefix = 0, bad_flip = 0, crc = 0, crc_want = 0;
    for (size_t k = 1; k < n; k++) {
        nmt_err e = {0};
        npz_file *f = NULL;
        int rc = npz_load_mem(&f, img, k, "cut.npz", &e);
        if ((rc != NMT_ERR_FORMAT || !strstr(e.msg, "cut.npz: truncated")) && ++bad_prefix <= 3)
            fprintf(stderr, "prefix of %zu bytes: rc %d %s\n", k, rc, e.msg);
        npz_free(f);
    }
    CHECKF(bad_prefix == 0, "%d prefixes not refused as truncated", bad_prefix);
    /* the stored float32 data of 'a': 0.0, -0.0, 1.5 ... as NumPy wrote it */
    const unsigned char a_data[12] = {0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0xc0, 0x3f};
    unsigned char *at = memmem(img, n, a_data, 12);
    CHECK(at != NULL);
    for (size_t k = 0; k < n; k++) {
        nmt_err e = {0};
        npz_file *f = NULL;
        img[k] ^= 0x5a;
        int rc = npz_load_mem(&f, img, n, "flip.npz", &e);
        img[k] ^= 0x5a;
        if (rc && (rc != NMT_ERR_FORMAT || strncmp(e.msg, "flip.npz: ", 10))) bad_flip++;
        int in_a = at && img + k >= at && img + k < at + 24;
        crc_want += in_a;
        crc += in_a && rc == NMT_ERR_FORMAT && strstr(e.msg, "CRC-32 mismatch");
        npz_free(f);
    }
    CHECKF(bad_flip == 0, "%d flips gave another code or an unnamed message", bad_flip);
    CHECKF(crc == crc_want && crc == 24, "%d of %d flips in stored data found by the CRC", crc, crc_want);

    /* lying sizes in the central directory */
    size_t c = central_of(img, n, "c.npy"), s = central_of(img, n, "a.npy");
    CHECK(c && s);
    unsigned char *m = malloc(n);
    memcpy(m, img, n);
    put32(m + c + 24, 0x7fffffffu);   /* deflated 'c' claims 2 GiB */
    refuse_mem(m, n, "more than deflate can give");
    memcpy(m, img, n);
    put32(m + c + 24, 100);           /* ... or fewer bytes than it inflates to */
    refuse_mem(m, n, "inflates to more than the 100 bytes");
    memcpy(m, img, n);
    put32(m + s + 20, 0x70000000u);   /* stored 'a' runs past the file */
    put32(m + s + 24, 0x70000000u);
    refuse_mem(m, n, "truncated: its 1879048192 bytes");
    memcpy(m, img, n);
    put32(m + s + 42, 7);             /* its local header elsewhere */
    refuse_mem(m, n, "no local header at offset 7");
    memcpy(m, img, n);
    put32(m + s + 16, 0);             /* its CRC */
    refuse_mem(m, n, "entry 'a.npy': CRC-32 mismatch (recorded 00000000");
    free(m);
    test_overlap(img, n, c);
    free(img);
}

/* A Marian model cut and damaged at spread offsets (every offset would take minutes). */
static void test_damage_marian(void)
{
    const char *shared = getenv("NMT_SHARED");
    char path[1024];
    snprintf(path, sizeof path, "%s/peers/marian/vectors/c_ssru_tiedall/model.npz", shared && *shared ? shared : "../shared");
    size_t n = 0;
    unsigned char *img = (unsigned char *)test_slurp(path, &n);
    if (!img) { printf("SKIP Marian damage: %s absent\n", path); return; }
    int bad = 0;
    for (int i = 0; i < 60; i++) {
        size_t k = (size_t)((uint64_t)n * (uint64_t)(i * 7919 % 60) / 60) + (size_t)i;
        nmt_err e = {0};
        npz_file *f = NULL;
        int rc = npz_load_mem(&f, img, k + 1 < n ? k + 1 : n - 1, "cut.npz", &e);
        bad += rc != NMT_ERR_FORMAT || !strstr(e.msg, "truncated");
        npz_free(f);
        img[k % n] ^= 0x01;
        rc = npz_load_mem(&f, img, n, "flip.npz", &e);
        img[k % n] ^= 0x01;
        bad += rc != NMT_ERR_FORMAT || !strstr(e.msg, "flip.npz: ");
        npz_free(f);
    }
    CHECKF(bad == 0, "%d cuts or flips of a Marian model not refused", bad);
    free(img);
}

int main(void)
{
    test_marian();
    test_values();
    test_refusals();
    test_damage();
    test_damage_marian();
    return test_done("test_npz");
}
