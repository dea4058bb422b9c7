/* test_api_args.c: the public API refuses arguments the command line cannot produce but a
 * library caller can: an unknown optimizer (it used to write a checkpoint nothing could
 * resume), a negative clip, a NaN or infinite learning rate (NaN silently became the default),
 * a batch size times sort blocks past an int, negative sentence counts for nmt_translate,
 * nmt_score and nmt_force_align, and a target over NMT_MAX_TGT_WORDS (it used to be cut); and
 * nmt_blas_speed refuses a NaN or negative budget, and leaves the thread count as it found it
 * (it times on one thread). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include <unistd.h>

#include "nmt.h"
#include "test.h"

static char dir[64];

static void write_file(const char *name, const char *text, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f) { fputs(text, f); fclose(f); }
}

/* nmt_train with one bad setting: refused with NMT_ERR_ARG and `want` in the message, and no
 * model written. */
static void train_bad(const char *what, nmt_train_opts o, const char *want)
{
    nmt_err err = {0, ""};
    int rc = nmt_train(&o, NULL, NULL, &err);
    CHECKF(rc == NMT_ERR_ARG && strstr(err.msg, want), "%s: rc %d '%s', expected '%s'", what, rc, err.msg, want);
    CHECKF(access(o.model, F_OK) != 0, "%s: a model was written", what);
}

static void test_train_opts(void)
{
    char src[128], tgt[128], model[128];
    write_file("s", "a b c\nd e\nf g\n", src, sizeof src);
    write_file("t", "x y\nz\nw v\n", tgt, sizeof tgt);
    snprintf(model, sizeof model, "%s/m.nmt", dir);
    nmt_train_opts o = nmt_train_default_opts();
    o.src = src; o.tgt = tgt; o.model = model;
    o.cfg.emb = o.cfg.hid = o.cfg.att = 4; o.cfg.maxout = 2; o.cfg.src_vocab = o.cfg.tgt_vocab = 10;
    o.max_updates = 1; o.batch = 2; o.threads = 1;
    nmt_train_opts b = o;
    b.optimizer = 7;
    train_bad("unknown optimizer", b, "unknown optimizer 7");
    b = o; b.optimizer = -1;
    train_bad("negative optimizer", b, "unknown optimizer -1");
    b = o; b.clip = -1;
    train_bad("negative clip", b, "clip -1");
    b = o; b.clip = NAN;
    train_bad("NaN clip", b, "clip nan");
    b = o; b.lr = NAN;
    train_bad("NaN learning rate", b, "learning rate nan");
    b = o; b.lr = INFINITY;
    train_bad("infinite learning rate", b, "learning rate inf");
    b = o; b.lr_decay = 2;
    train_bad("decay above 1", b, "lr_decay 2");
    b = o; b.batch = 100000; b.sort_blocks = 100000;
    train_bad("batch x blocks past an int", b, "pairs per block");
    b = o; b.max_updates = -5;
    train_bad("negative limit", b, "negative");
    nmt_err err = {0, ""};
    CHECKF(nmt_train(&o, NULL, NULL, &err) == 0, "the same options, corrected, train: %s", err.msg);
    unlink(model);
    char extra[200];
    snprintf(extra, sizeof extra, "%s.ckpt", model); unlink(extra);
    snprintf(extra, sizeof extra, "%s.log.tsv", model); unlink(extra);
    unlink(src); unlink(tgt);
}

static void test_decode_args(void)
{
    static const char *sw[] = {"</s>", "<unk>", "a", "b"}, *tw[] = {"</s>", "<unk>", "x", "y"};
    nmt_config c = {NMT_ARCH_RNNSEARCH, 4, 4, 3, 3, 3, 2, 2, 1.0, 1.0, 0};
    nmt_model *m = NULL;
    nmt_decoder *d = NULL;
    nmt_err err = {0, ""};
    CHECKF(nmt_model_create(&m, &c, sw, tw, 1, &err) == 0, "%s", err.msg);
    nmt_translate_opts o = nmt_translate_default_opts();
    CHECKF(m && nmt_decoder_init(&d, m, &o, &err) == 0, "%s", err.msg);
    if (!d) { nmt_model_free(m); return; }
    const char *src[1] = {"a b"}, *tgt[1] = {"x y"};
    nmt_translation tr[1];
    nmt_alignment al[1];
    double lp[1];
    int nt[1];
    CHECK(nmt_translate(d, src, -1, tr, &err) == NMT_ERR_ARG && strstr(err.msg, "negative"));
    CHECK(nmt_score(d, src, tgt, -3, lp, nt, &err) == NMT_ERR_ARG && strstr(err.msg, "negative"));
    CHECK(nmt_force_align(d, src, tgt, -2, al, &err) == NMT_ERR_ARG && strstr(err.msg, "negative"));
    CHECK(nmt_translate(d, src, 0, tr, &err) == 0);
    /* the longest target scored as it is, one word more refused */
    char *lng = malloc(2 * (NMT_MAX_TGT_WORDS + 1) + 1);
    for (int i = 0; i <= NMT_MAX_TGT_WORDS; i++) memcpy(lng + 2 * i, "x ", 2);
    lng[2 * NMT_MAX_TGT_WORDS] = 0;
    const char *t1[1] = {lng};
    CHECKF(nmt_score(d, src, t1, 1, lp, nt, &err) == 0 && nt[0] == NMT_MAX_TGT_WORDS + 1, "%s", err.msg);
    lng[2 * NMT_MAX_TGT_WORDS] = 'x';
    lng[2 * NMT_MAX_TGT_WORDS + 1] = 0;
    CHECKF(nmt_score(d, src, t1, 1, lp, nt, &err) == NMT_ERR_ARG && strstr(err.msg, "more than the limit of 1200"), "%s", err.msg);
    CHECKF(nmt_force_align(d, src, t1, 1, al, &err) == NMT_ERR_ARG, "%s", err.msg);
    free(lng);
    nmt_decoder_free(d);
    nmt_model_free(m);
}

/* the budget checked; one thread while timing, the caller's count afterwards (no speed asserted) */
static void test_blas_speed(void)
{
    nmt_err err;
    double g = -1;
    CHECK(nmt_blas_speed(NAN, &g, &err) == NMT_ERR_ARG && g == 0);
    CHECK(nmt_blas_speed(-1, &g, &err) == NMT_ERR_ARG);
    nmt_set_threads(3);
    CHECK(nmt_blas_speed(0, &g, &err) == NMT_OK);
    CHECKF(g > 0 && isfinite(g), "%g GFLOP/s", g);
    CHECKF(omp_get_max_threads() == 3, "%d threads after the timing, 3 before", omp_get_max_threads());
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/nmt-api-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    test_train_opts();
    test_decode_args();
    test_blas_speed();
    rmdir(dir);
    return test_done("test_api_args");
}
