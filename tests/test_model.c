/* test_model.c: a sentence gives the same log-probabilities alone and inside a padded batch
 * (both models); save -> load gives the same log-probabilities bit for bit; bad model files
 * (truncated, not a model, wrong shape, offset past the end, bad config, bad vocabulary,
 * NaN weights, missing tensor) are each refused with their own message; the decoding step fed
 * the reference words gives training's log-probabilities (one decoder step serves both). */
/* kernel sets: quick: a sentence alone and in a padded batch (tests/cli/kernels.sh) */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "decode/infer.h"
#include "backend/cpu/vec.h"
#include "nn/net.h"
#include "io/safetensors.h"
#include "helpers.h"
#include "test.h"
#include "data/vocab.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

static rng R;
static char dir[256];

static char **make_words(int n, const char *prefix)
{
    char **w = malloc(sizeof(char *) * n);
    for (int i = 0; i < n; i++) {
        w[i] = malloc(32);
        if (i == 0) strcpy(w[i], "</s>");
        else if (i == 1) strcpy(w[i], "<unk>");
        else snprintf(w[i], 32, "%s%d", prefix, i);
    }
    return w;
}

static void free_words(char **w, int n)
{
    for (int i = 0; i < n; i++) free(w[i]);
    free(w);
}

static int tied; /* new models tie the target embeddings to the softmax layer (maxout 6 = emb) */

/* Configs compare field by field: the struct has padding after tied_emb. */
static int same_config(const nmt_config *a, const nmt_config *b)
{
    return a->arch == b->arch && a->src_vocab == b->src_vocab && a->tgt_vocab == b->tgt_vocab && a->emb == b->emb &&
           a->hid == b->hid && a->att == b->att && a->maxout == b->maxout && a->window == b->window &&
           a->fert_step_w == b->fert_step_w && a->fert_left_w == b->fert_left_w && a->tied_emb == b->tied_emb;
}

static nmt_model *new_model(int arch)
{
    nmt_config c = {arch, 13, 17, 6, 7, 5, tied ? 6 : 4, 2, 1.0, 1.0, tied, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    char **sw = make_words(c.src_vocab, "s"), **tw = make_words(c.tgt_vocab, "t");
    nmt_model *m = NULL;
    nmt_err err;
    int rc = nmt_model_create(&m, &c, (const char *const *)sw, (const char *const *)tw, 7, &err);
    CHECKF(rc == 0, "%s", err.msg);
    /* Wider weights than Appendix B's, so that padding mistakes would show in the outputs. */
    for (size_t i = 0; i < m->pt.total; i++) m->P[i] = (real)(0.3 * rng_normal(&R));
    free_words(sw, c.src_vocab);
    free_words(tw, c.tgt_vocab);
    return m;
}

/* Sentences as id lists ending in EOS (0); builds a padded time-major batch of rows [lo, hi). */
static void fill_batch(batch *bt, int *const *src, const int *sl, int *const *tgt, const int *tl, int lo, int hi)
{
    int B = hi - lo;
    bt->B = B; bt->Tx = 0; bt->Ty = 0;
    for (int b = lo; b < hi; b++) {
        if (sl[b] > bt->Tx) bt->Tx = sl[b];
        if (tl[b] > bt->Ty) bt->Ty = tl[b];
    }
    bt->x = calloc((size_t)bt->Tx * B, sizeof(int));
    bt->y = calloc((size_t)bt->Ty * B, sizeof(int));
    bt->xlen = malloc(sizeof(int) * B);
    bt->ylen = malloc(sizeof(int) * B);
    for (int b = 0; b < B; b++) {
        bt->xlen[b] = sl[lo + b];
        bt->ylen[b] = tl[lo + b];
        for (int t = 0; t < sl[lo + b]; t++) bt->x[t * B + b] = src[lo + b][t];
        for (int t = 0; t < tl[lo + b]; t++) bt->y[t * B + b] = tgt[lo + b][t];
    }
}

static void free_batch(batch *bt)
{
    free(bt->x); free(bt->y); free(bt->xlen); free(bt->ylen);
}

#define NS 5
static int *src[NS], *tgt[NS], sl[NS] = {3, 9, 1, 6, 4}, tl[NS] = {7, 2, 5, 1, 8};

static void make_sentences(void)
{
    for (int s = 0; s < NS; s++) {
        src[s] = malloc(sizeof(int) * sl[s]);
        tgt[s] = malloc(sizeof(int) * tl[s]);
        for (int t = 0; t < sl[s]; t++) src[s][t] = t == sl[s] - 1 ? 0 : 1 + (int)rng_below(&R, 12);
        for (int t = 0; t < tl[s]; t++) tgt[s][t] = t == tl[s] - 1 ? 0 : 1 + (int)rng_below(&R, 16);
    }
}

/* logp of every sentence in one padded batch, [NS][max tl] */
static void batch_logp(const nmt_model *m, real out[NS][8])
{
    batch bt;
    fill_batch(&bt, src, sl, tgt, tl, 0, NS);
    net_ws ws = {0};
    NMT_ASSERT(net_ws_reserve(TX, &ws, &m->cfg, bt.B, bt.Tx, bt.Ty, NULL) == 0);
    real *lp = malloc(sizeof(real) * bt.Ty * bt.B);
    net_forward(TX, &ws, &m->cfg, &m->p, &bt, lp);
    for (int b = 0; b < NS; b++)
        for (int t = 0; t < tl[b]; t++) out[b][t] = lp[t * NS + b];
    free(lp);
    net_ws_free(&ws);
    free_batch(&bt);
}

static void test_padding(int arch)
{
    nmt_model *m = new_model(arch);
    real together[NS][8];
    batch_logp(m, together);
    /* one reused workspace for all single-sentence batches: also checks that a workspace laid
     * out for a bigger batch gives the same results */
    net_ws ws = {0};
    NMT_ASSERT(net_ws_reserve(TX, &ws, &m->cfg, NS, 9, 8, NULL) == 0);
    double worst = 0;
    for (int s = 0; s < NS; s++) {
        batch bt;
        fill_batch(&bt, src, sl, tgt, tl, s, s + 1);
        NMT_ASSERT(net_ws_reserve(TX, &ws, &m->cfg, 1, bt.Tx, bt.Ty, NULL) == 0);
        real lp[8];
        net_forward(TX, &ws, &m->cfg, &m->p, &bt, lp);
        for (int t = 0; t < tl[s]; t++) worst = fmax(worst, fabs(lp[t] - together[s][t]) / fabs(together[s][t]));
        free_batch(&bt);
    }
    CHECKF(worst <= 1e-5, "%s: alone vs batched differ by %.3g relative", nmt_arch_name(arch), worst);
    printf("%s: alone vs in a padded batch of %d: largest relative difference %.2e\n", nmt_arch_name(arch), NS, worst);
    net_ws_free(&ws);
    nmt_model_free(m);
}

/* The encoder runs each step on the rows still inside their sentence when the rows are sorted by
 * source length (batch_fill's order), and on every row with a mask otherwise: the same five
 * sentences in both orders give the same log-probabilities and the same gradients. */
static void test_sorted_rows(int arch)
{
    nmt_model *m = new_model(arch);
    int perm[NS], *ps[NS], *pt_[NS], psl[NS], ptl[NS];
    for (int i = 0; i < NS; i++) perm[i] = i;
    for (int i = 1; i < NS; i++) /* by source length, longest first */
        for (int j = i; j > 0 && sl[perm[j]] > sl[perm[j - 1]]; j--) { int q = perm[j]; perm[j] = perm[j - 1]; perm[j - 1] = q; }
    for (int i = 0; i < NS; i++) { ps[i] = src[perm[i]]; pt_[i] = tgt[perm[i]]; psl[i] = sl[perm[i]]; ptl[i] = tl[perm[i]]; }
    batch a, b;
    fill_batch(&a, src, sl, tgt, tl, 0, NS);
    fill_batch(&b, ps, psl, pt_, ptl, 0, NS);
    real *ga = calloc(m->pt.total, sizeof(real)), *gb = calloc(m->pt.total, sizeof(real));
    real *la = malloc(sizeof(real) * a.Ty * NS), *lb = malloc(sizeof(real) * b.Ty * NS);
    params g;
    net_ws ws = {0};
    NMT_ASSERT(net_ws_reserve(TX, &ws, &m->cfg, NS, a.Tx, a.Ty, NULL) == 0);
    params_point(&g, &m->pt, ga);
    net_forward(TX, &ws, &m->cfg, &m->p, &a, la);
    net_backward(TX, &ws, &m->cfg, &m->p, &g, &a, (real)1 / NS);
    params_point(&g, &m->pt, gb);
    net_forward(TX, &ws, &m->cfg, &m->p, &b, lb);
    net_backward(TX, &ws, &m->cfg, &m->p, &g, &b, (real)1 / NS);
    double worst_lp = 0, num = 0, den = 0;
    for (int i = 0; i < NS; i++)
        for (int t = 0; t < ptl[i]; t++)
            worst_lp = fmax(worst_lp, fabs(lb[t * NS + i] - la[t * NS + perm[i]]) / fabs(la[t * NS + perm[i]]));
    for (size_t k = 0; k < m->pt.total; k++) { num = fmax(num, fabs(ga[k] - gb[k])); den = fmax(den, fabs(ga[k])); }
    CHECKF(worst_lp <= 1e-5, "%s: sorted rows change log p by %.3g relative", nmt_arch_name(arch), worst_lp);
    CHECKF(den > 0 && num <= 1e-5 * den, "%s: sorted rows change the gradient by %.3g of its largest entry", nmt_arch_name(arch),
           den > 0 ? num / den : 1.0);
    printf("%s: rows sorted by length vs not: log p within %.2e, gradient within %.2e\n", nmt_arch_name(arch), worst_lp,
           den > 0 ? num / den : 1.0);
    net_ws_free(&ws);
    free(ga); free(gb); free(la); free(lb);
    free_batch(&a); free_batch(&b);
    nmt_model_free(m);
}

static void test_save_load(int arch)
{
    nmt_model *m = new_model(arch), *m2 = NULL;
    char path[300];
    snprintf(path, sizeof path, "%s/m.nmt", dir);
    nmt_err err;
    int rc = nmt_model_save(m, path, &err);
    CHECKF(rc == 0, "save: %s", err.msg);
    rc = nmt_model_load(&m2, path, &err);
    CHECKF(rc == 0, "load: %s", err.msg);
    if (rc) { nmt_model_free(m); return; }
    CHECK(same_config(&m->cfg, &m2->cfg));
    CHECK(m2->src->n == m->src->n && !strcmp(vocab_word(m2->tgt, 5), vocab_word(m->tgt, 5)));
    CHECK(vocab_id(m2->src, "s7", 2) == 7 && vocab_id(m2->src, "zzz", 3) == VOCAB_UNK);
    real a[NS][8] = {{0}}, b[NS][8] = {{0}};
    batch_logp(m, a);
    batch_logp(m2, b);
    CHECKF(memcmp(a, b, sizeof a) == 0, "%s: log-probabilities changed through save/load", nmt_arch_name(arch));
    nmt_model_free(m);
    nmt_model_free(m2);
}

/* RecAtt with R_a = 0, InputFeed with F = 0, Markov / LocFer with M_a = 0 are RNNsearch: the
 * same weights must give exactly RNNsearch's log-probabilities (MODEL.md section 5). */
static void test_zero_extras(void)
{
    nmt_model *base = new_model(NMT_ARCH_RNNSEARCH);
    real want[NS][8] = {{0}};
    batch_logp(base, want);
    for (int arch = NMT_ARCH_RECATT; arch < NMT_ARCH_RNN_COUNT; arch++) {
        nmt_model *v = new_model(arch);
        for (int i = 0; i < v->pt.n; i++) {
            const tensor_info *t = &v->pt.t[i], *bt = param_table_find(&base->pt, t->name);
            size_t cnt = (size_t)t->rows * t->cols;
            if (bt) memcpy(v->P + t->offset, base->P + bt->offset, sizeof(real) * cnt);
            else memset(v->P + t->offset, 0, sizeof(real) * cnt); /* the variant's own weights */
        }
        real got[NS][8] = {{0}};
        batch_logp(v, got);
        CHECKF(memcmp(got, want, sizeof got) == 0, "%s with its extra weights at 0 differs from rnnsearch", nmt_arch_name(arch));
        nmt_model_free(v);
    }
    nmt_model_free(base);
}

/* ---------------------------------------------------------------- bad files */
static void spit(const char *p, const void *b, size_t n)
{
    FILE *f = fopen(p, "wb");
    fwrite(b, 1, n, f);
    fclose(f);
}

/* Loads path; expects failure with code and a message containing `want`. */
static void expect_bad(const char *what, const char *path, int code, const char *want)
{
    nmt_model *m = NULL;
    nmt_err err = {0, ""};
    int rc = nmt_model_load(&m, path, &err);
    CHECKF(rc == code && m == NULL && strstr(err.msg, want), "%s: got %d \"%s\", expected %d with \"%s\"", what, rc,
           err.msg, code, want);
    if (!rc) nmt_model_free(m);
    printf("  %-28s -> %s\n", what, err.msg);
}

/* Removes the checksum table from a header (nh[len] == 0): the file then reads as one written
 * before checksums, so that each field's own check is what a patched header meets. */
static size_t strip_checksums(char *h, size_t len)
{
    char *at = strstr(h, ",\"" ST_CRC_KEY "\":\"");
    if (!at) return len;
    char *e = at + strlen(",\"" ST_CRC_KEY "\":\"");
    while (*e && !(*e == '"' && e[-1] != '\\')) e++;   /* the value's closing quote */
    NMT_ASSERT(*e);
    memmove(at, e + 1, len - (size_t)(e + 1 - h) + 1);
    return len - (size_t)(e + 1 - at);
}

/* Rewrites the JSON header of a model file with one substitution, keeping the data section,
 * and drops its checksums. */
static void patch_header(const char *in, const char *out, const char *from, const char *to)
{
    size_t n;
    unsigned char *b = (unsigned char *)test_slurp(in, &n);
    uint64_t hl = 0;
    for (int i = 0; i < 8; i++) hl |= (uint64_t)b[i] << (8 * i);
    char *h = malloc(hl + strlen(to) + 1);
    memcpy(h, b + 8, hl);
    h[hl] = 0;
    char *at = strstr(h, from);
    NMT_ASSERT(at);
    size_t pre = at - h, fl = strlen(from), tlen = strlen(to);
    char *nh = malloc(hl + tlen + 16);
    memcpy(nh, h, pre);
    memcpy(nh + pre, to, tlen);
    memcpy(nh + pre + tlen, at + fl, hl - pre - fl);
    size_t nl = hl - fl + tlen;
    nh[nl] = 0;
    nl = strip_checksums(nh, nl);
    while ((8 + nl) % 8) nh[nl++] = ' ';
    FILE *f = fopen(out, "wb");
    for (int i = 0; i < 8; i++) fputc((int)((nl >> (8 * i)) & 255), f);
    fwrite(nh, 1, nl, f);
    fwrite(b + 8 + hl, 1, n - 8 - hl, f);
    fclose(f);
    free(h); free(nh); free(b);
}

/* 1 when a and b hold the same config, vocabularies and weights. */
static int same_model(const nmt_model *a, const nmt_model *b)
{
    if (!same_config(&a->cfg, &b->cfg) || a->pt.total != b->pt.total ||
        memcmp(a->P, b->P, sizeof(real) * a->pt.total))
        return 0;
    for (int i = 0; i < a->src->n; i++) if (strcmp(vocab_word(a->src, i), vocab_word(b->src, i))) return 0;
    for (int i = 0; i < a->tgt->n; i++) if (strcmp(vocab_word(a->tgt, i), vocab_word(b->tgt, i))) return 0;
    return 1;
}

/* Damage in a model file is refused, never loaded as other weights or words: a flipped weight
 * by its checksum, with its own message; and every single-byte change anywhere in the file. */
static void test_checksums(const char *good, const nmt_model *m)
{
    char bad[300];
    snprintf(bad, sizeof bad, "%s/flip.nmt", dir);
    size_t n;
    unsigned char *b = (unsigned char *)test_slurp(good, &n);
    b[n - 3] ^= 0x10; /* inside the last tensor's data */
    spit(bad, b, n);
    expect_bad("flipped weight", bad, NMT_ERR_FORMAT, "flip.nmt: checksum mismatch in tensor ");
    b[n - 3] ^= 0x10;
    patch_header(good, bad, "\"format\"", "\"fornat\"");
    expect_bad("unknown metadata key", bad, NMT_ERR_FORMAT, "unknown metadata key 'fornat'");
    patch_header(good, bad, "\"format\"", "\"format\"");
    nmt_model *x = NULL;
    nmt_err err;
    CHECKF(nmt_model_load(&x, bad, &err) == 0 && same_model(m, x), "a model file without checksums must still load: %s", err.msg);
    nmt_model_free(x);
    int changed = 0, tried = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char flip = (unsigned char)(1u << (i % 8)) | (i % 3 == 0 ? 0x80 : 0);
        b[i] ^= flip;
        spit(bad, b, n);
        b[i] ^= flip;
        x = NULL;
        tried++;
        if (nmt_model_load(&x, bad, &err) == 0) changed += !same_model(m, x);
        nmt_model_free(x);
    }
    CHECKF(changed == 0, "%d of %d one-byte changes loaded as a different model", changed, tried);
    free(b);
    unlink(bad);
}

static void test_bad_files(void)
{
    nmt_model *m = new_model(NMT_ARCH_RNNSEARCH);
    char good[300], bad[300];
    snprintf(good, sizeof good, "%s/good.nmt", dir);
    snprintf(bad, sizeof bad, "%s/bad.nmt", dir);
    nmt_err err;
    NMT_ASSERT(nmt_model_save(m, good, &err) == 0);
    test_checksums(good, m);
    /* the tests below change fields: from here on `good` is a file without checksums, so that
     * they meet each field's own check (as a hostile file with recomputed checksums would) */
    patch_header(good, good, "\"format\"", "\"format\"");
    size_t n;
    unsigned char *b = (unsigned char *)test_slurp(good, &n);

    printf("bad model files:\n");
    snprintf(bad, sizeof bad, "%s/missing.nmt", dir);
    expect_bad("missing file", bad, NMT_ERR_IO, "missing.nmt");
    snprintf(bad, sizeof bad, "%s/bad.nmt", dir);
    spit(bad, b, n - 100);
    expect_bad("truncated data", bad, NMT_ERR_FORMAT, "bad.nmt");
    spit(bad, b, 5);
    expect_bad("truncated header", bad, NMT_ERR_FORMAT, "bad.nmt");
    spit(bad, "not a model at all, just text\n", 30);
    expect_bad("not safetensors", bad, NMT_ERR_FORMAT, "bad.nmt");
    /* every truncation point of the first few KB fails cleanly */
    int all_fail = 1;
    for (size_t cut = 0; cut < n && cut < 4096; cut += 7) {
        spit(bad, b, cut);
        nmt_model *x = NULL;
        if (nmt_model_load(&x, bad, &err) == 0) { all_fail = 0; nmt_model_free(x); }
    }
    CHECKF(all_fail, "a truncated model file loaded");

    patch_header(good, bad, "\"format\":\"nmt-model\"", "\"format\":\"something\"");
    expect_bad("wrong format name", bad, NMT_ERR_FORMAT, "not an nmt model");
    patch_header(good, bad, "\"format_version\":\"1\"", "\"format_version\":\"9\"");
    expect_bad("future format version", bad, NMT_ERR_FORMAT, "version 9");
    patch_header(good, bad, "\\\"hid\\\":7", "\\\"hid\\\":8");
    expect_bad("shape against config", bad, NMT_ERR_FORMAT, "expected");
    patch_header(good, bad, "\\\"emb\\\":6", "\\\"emb\\\":6,\\\"embb\\\":6");
    expect_bad("unknown config key", bad, NMT_ERR_FORMAT, "unknown config key 'embb'");
    patch_header(good, bad, "\\\"arch\\\":\\\"rnnsearch\\\"", "\\\"arch\\\":\\\"transformr\\\"");
    expect_bad("unknown architecture", bad, NMT_ERR_FORMAT, "unknown architecture");
    patch_header(good, bad, "\\\"arch\\\":\\\"rnnsearch\\\"", "\\\"arch\\\":\\\"transformer\\\"");
    expect_bad("a Transformer without its sizes", bad, NMT_ERR_FORMAT, "a transformer model's config lacks a 'transformer' object");
    patch_header(good, bad, "\\\"t16\\\"", "\\\"t15\\\"");
    expect_bad("duplicate vocabulary entry", bad, NMT_ERR_FORMAT, "appears twice");
    patch_header(good, bad, "\\\"src_vocab\\\":13", "\\\"src_vocab\\\":14");
    expect_bad("vocabulary size vs config", bad, NMT_ERR_FORMAT, "source vocabulary has 13 words");
    {   /* words past the config's count are refused before cJSON builds them (80 bytes each) */
        char *many = malloc(8 * 5000 + 16);
        size_t k = (size_t)sprintf(many, "\\\"t16\\\"");
        for (int i = 0; i < 5000; i++) k += (size_t)sprintf(many + k, ",\\\"\\\"");
        patch_header(good, bad, "\\\"t16\\\"", many);
        free(many);
        expect_bad("a vocabulary of 5,000 more words", bad, NMT_ERR_FORMAT, "target vocabulary has more words than the config's");
    }
    patch_header(good, bad, "\"out_bias\"", "\"out_bias2\"");
    expect_bad("unexpected tensor", bad, NMT_ERR_FORMAT, "unexpected tensor 'out_bias2'");
    patch_header(good, bad, "\"att_v\"", "\"opt.att_v\"");
    expect_bad("missing tensor", bad, NMT_ERR_FORMAT, "att_v");
    /* tied embeddings: a flag, and a model that says so stores no out_W */
    patch_header(good, bad, "\\\"emb\\\":6", "\\\"emb\\\":6,\\\"tied_embeddings\\\":1");
    expect_bad("tied_embeddings not a boolean", bad, NMT_ERR_FORMAT, "'tied_embeddings' is not true or false");
    patch_header(good, bad, "\\\"emb\\\":6", "\\\"emb\\\":6,\\\"tied_embeddings\\\":true");
    expect_bad("tied_embeddings with emb != maxout", bad, NMT_ERR_FORMAT, "tied embeddings need the embedding size equal");

    /* offsets past the end: rewrite one tensor's end offset to beyond the data */
    {
        uint64_t hl = 0;
        for (int i = 0; i < 8; i++) hl |= (uint64_t)b[i] << (8 * i);
        char *h = malloc(hl + 1);
        memcpy(h, b + 8, hl);
        h[hl] = 0;
        char *at = strstr(h, "\"out_bias\"");
        char *off = strstr(at, "data_offsets\":[");
        NMT_ASSERT(off);
        off += strlen("data_offsets\":[");
        char *comma = strchr(off, ','), *close = strchr(off, ']');
        char from[64], to[64];
        snprintf(from, sizeof from, "%.*s]", (int)(close - off), off);
        long begin = strtol(off, NULL, 10);
        (void)comma;
        snprintf(to, sizeof to, "%ld,%ld]", begin, begin + 100000 * 4);
        patch_header(good, bad, from, to);
        free(h);
        expect_bad("offset past the end", bad, NMT_ERR_FORMAT, "bad.nmt");
    }
    /* a NaN weight */
    {
        memcpy(bad, good, sizeof good);
        unsigned char *c = malloc(n);
        memcpy(c, b, n);
        float nan = NAN;
        memcpy(c + n - 4, &nan, 4); /* the last element of the last tensor */
        snprintf(bad, sizeof bad, "%s/bad.nmt", dir);
        spit(bad, c, n);
        free(c);
        expect_bad("NaN weight", bad, NMT_ERR_NUMERIC, "non-finite");
    }
    /* a failed save leaves the old file intact */
    CHECK(nmt_model_save(m, "/nonexistent-dir/x.nmt", &err) == NMT_ERR_IO);
    free(b);
    nmt_model_free(m);
}

/* Decoding's path (infer_encode, then infer_step row by row, each fed the reference word) must
 * give the log-probabilities of training's teacher-forced forward pass: the two share
 * dec_step, so any variant term added to one and not the other shows here. */
static void test_step_matches_training(int arch)
{
    nmt_model *m = new_model(arch);
    real ref[NS][8];
    batch_logp(m, ref);
    batch bt;
    fill_batch(&bt, src, sl, tgt, tl, 0, NS);
    infer_ws w = {0};
    NMT_ASSERT(infer_reserve(TX, &w, &m->cfg, NS, bt.Tx, NS, 64, NULL) == 0);
    infer_encode(&w, m, &bt);
    int D = infer_state_dim(&m->cfg, bt.Tx), Ky = m->cfg.tgt_vocab, rows[NS], yprev[NS];
    real *sa = malloc(sizeof(real) * NS * D), *sb = malloc(sizeof(real) * NS * D);
    infer_init_states(TX, &w, &m->cfg, sa, D, NS, bt.Tx);
    double worst = 0;
    for (int b = 0; b < NS; b++) { rows[b] = b; yprev[b] = -1; }
    for (int t = 0; t < bt.Ty; t++) {
        infer_step(&w, m, &bt, NS, rows, yprev, sa, sb, D);
        for (int b = 0; b < NS; b++) {
            if (t >= tl[b]) continue;
            const real *z = w.logits + (size_t)b * Ky;
            double lp = z[tgt[b][t]] - vec_logsumexp(NULL, z, Ky, NULL);
            double d = fabs(lp - ref[b][t]) / (fabs(ref[b][t]) + 1e-30);
            if (d > worst) worst = d;
            yprev[b] = tgt[b][t];
        }
        real *x = sa; sa = sb; sb = x;
    }
    CHECKF(worst <= 1e-5, "%s: decoding step and training disagree by %.3g relative", nmt_arch_name(arch), worst);
    free(sa); free(sb);
    infer_free(&w);
    free_batch(&bt);
    nmt_model_free(m);
}

/* Mean and largest magnitude of a tensor, and its second moment. */
static void moments(const real *w, size_t n, double *mean2, double *maxabs)
{
    *mean2 = 0;
    *maxabs = 0;
    for (size_t k = 0; k < n; k++) {
        *mean2 += (double)w[k] * w[k] / n;
        if (fabs(w[k]) > *maxabs) *maxabs = fabs(w[k]);
    }
}

/* The three initialisations against their distributions: a tensor drawn Glorot-uniform lies in
 * [-a, a], a = sqrt(6 / (rows + cols)), fills that range and has second moment a²/3; the paper's
 * draws keep their standard deviations and v_a its zeros; biases are zero under all three. */
static void test_init_schemes(void)
{
    nmt_config c = nmt_config_default();
    c.arch = NMT_ARCH_RECATT;
    c.src_vocab = 300; c.tgt_vocab = 200; c.emb = 32; c.hid = 40; c.att = 36; c.maxout = 16;
    param_table pt;
    param_table_build(&pt, &c);
    real *P = malloc(sizeof(real) * pt.total);
    if (!P) { CHECK(0); return; }
    for (int scheme = NMT_INIT_PAPER; scheme <= NMT_INIT_GLOROT; scheme++) {
        rng r;
        rng_seed(&r, 5);
        CHECK(params_init(&pt, P, c.hid, &r, scheme) == 0);
        for (int i = 0; i < pt.n; i++) {
            const tensor_info *t = &pt.t[i];
            size_t n = (size_t)t->rows * t->cols;
            double m2, mx, a = sqrt(6.0 / (t->rows + t->cols));
            moments(P + t->offset, n, &m2, &mx);
            int att = !strncmp(t->name, "att_", 4) && strcmp(t->name, "att_b");
            int bias = t->init == INIT_ZERO && strcmp(t->name, "att_v");
            int glorot = !bias && (scheme == NMT_INIT_GLOROT || (scheme == NMT_INIT_GLOROT_ATT && att));
            if (bias) {
                CHECKF(mx == 0, "scheme %d: bias %s not zero", scheme, t->name);
            } else if (glorot) {
                CHECKF(mx <= a && mx > 0.8 * a, "scheme %d: %s max %g, a = %g", scheme, t->name, mx, a);
                /* the second moment of n uniform draws, within five standard errors */
                double se = a * a * sqrt(4.0 / 45 / n);
                CHECKF(fabs(m2 - a * a / 3) < 5 * se, "scheme %d: %s second moment %g, want %g", scheme, t->name, m2, a * a / 3);
            } else if (!strcmp(t->name, "att_v")) {
                CHECKF(mx == 0, "scheme %d: v_a not zero", scheme);
            } else if (t->init != INIT_ORTHO_BLOCKS) {
                double sd = t->init == INIT_NORMAL_001 ? 0.01 : 0.001;
                CHECKF(fabs(sqrt(m2) - sd) < 0.1 * sd, "scheme %d: %s sd %g, want %g", scheme, t->name, sqrt(m2), sd);
            }
        }
    }
    free(P);
}

/* FertDec whose extract gate shuts (bias -48: g about 1e-21): the coverage falls to denormals
 * within three steps, where 1 / ||d_{i+1} - d_i|| overflows float; the cost and every gradient
 * must stay finite (a trained model's long sentences got there: its updates were skipped). */
static void test_fert_decay(int arch)
{
    nmt_model *m = new_model(arch);
    for (int k = 0; k < m->cfg.emb; k++) m->p.fer_bg[k] = -48;
    batch bt;
    fill_batch(&bt, src, sl, tgt, tl, 0, NS);
    net_ws ws = {0};
    NMT_ASSERT(net_ws_reserve(TX, &ws, &m->cfg, bt.B, bt.Tx, bt.Ty, NULL) == 0);
    real *lp = malloc(sizeof(real) * bt.Ty * bt.B), *G = calloc(m->pt.total, sizeof(real));
    params g;
    params_point(&g, &m->pt, G);
    double nll = net_forward(TX, &ws, &m->cfg, &m->p, &bt, lp), extra = net_extra_cost(&ws, &m->cfg);
    double tiny = INFINITY; /* the smallest non-zero step norm: the test needs one that overflows 1/x */
    int md = m->cfg.emb, ld = NS * md;
    for (int b = 0; b < NS; b++)
        for (int i = 0; i < tl[b]; i++) {
            double q = 0;
            for (int k = 0; k < md; k++) {
                double x = (double)ws.dec.cov[(size_t)(i + 1) * ld + b * md + k] - ws.dec.cov[(size_t)i * ld + b * md + k];
                q += x * x;
            }
            if (q > 0 && sqrt(q) < tiny) tiny = sqrt(q);
        }
    net_backward(TX, &ws, &m->cfg, &m->p, &g, &bt, (real)1 / NS);
    size_t bad = 0;
    for (size_t i = 0; i < m->pt.total; i++) bad += !isfinite(G[i]);
    CHECKF(tiny < 1e-40, "%s: the coverage did not decay far enough to test (smallest step %g)", nmt_arch_name(arch), tiny);
    CHECKF(isfinite(nll) && isfinite(extra), "%s: cost %g + %g", nmt_arch_name(arch), nll, extra);
    CHECKF(!bad, "%s: %zu gradient entries not finite where the coverage decays to %g", nmt_arch_name(arch), bad, tiny);
    free(lp); free(G);
    net_ws_free(&ws);
    free_batch(&bt);
    nmt_model_free(m);
}

int main(void)
{
    rng_seed(&R, 99);
    snprintf(dir, sizeof dir, "/tmp/nmt-test-model-%d", (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd)) return 1;
    make_sentences();
    for (int arch = 0; arch < NMT_ARCH_RNN_COUNT; arch++) {
        test_padding(arch);
        test_sorted_rows(arch);
        test_save_load(arch);
        test_step_matches_training(arch);
    }
    /* tied embeddings: W_o = Et^T in training and decoding alike, one stored tensor */
    tied = 1;
    for (int arch = 0; arch < NMT_ARCH_RNN_COUNT; arch += NMT_ARCH_FERTDEC) {
        test_padding(arch);
        test_save_load(arch);
        test_step_matches_training(arch);
        nmt_model *m = new_model(arch);
        CHECK(!param_table_find(&m->pt, "out_W") && !m->p.out_W && m->cfg.tied_emb == 1);
        nmt_model_free(m);
    }
    tied = 0;
    test_zero_extras();
    test_fert_decay(NMT_ARCH_FERTDEC);
    test_fert_decay(NMT_ARCH_RECATT_FERTDEC);
    test_bad_files();
    test_init_schemes();
    for (int s = 0; s < NS; s++) { free(src[s]); free(tgt[s]); }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) return 1;
    return test_done("test_model");
}
