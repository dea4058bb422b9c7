/* test_log.c: the library's warnings reach the log callback of nmt_set_log: a decoder asked for
 * alignments of a model without attention, and training's NMT_REPORT_WARN reports (an unwritable
 * TSV log), which also still reach the report callback with the same text, plus a shortlist
 * smaller than asked for. Without a callback nothing is written anywhere. */
/* kernel sets: one: which warnings reach the log, no numbers compared (tests/cli/kernels.sh) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nmt.h"
#include "helpers.h"
#include "test.h"

/* What the log callback received. */
static struct {
    int n_warn, n_other;
    char last[1024];
    char all[8192];
} got;

static void on_log(char level, const char *msg, void *user)
{
    CHECK(user == &got);
    /* the library's one note on OpenBLAS's kernels (blas.c), at its first product on OpenBLAS where
     * they lack AVX2 on a CPU that has it: a property of the machine, whichever test comes first
     * (decoding's products are our own, so it now comes in training's) */
    if (level == 'W' && !strncmp(msg, "OpenBLAS runs its", 17)) return;
    if (level == 'W') got.n_warn++;
    else got.n_other++;
    snprintf(got.last, sizeof got.last, "%s", msg);
    size_t k = strlen(got.all);
    snprintf(got.all + k, sizeof got.all - k, "%c %s\n", level, msg);
}

static struct {
    int n_warn;
    char all[8192];
} reports;

static void on_report(const nmt_train_report *r, void *user)
{
    (void)user;
    if (r->kind != NMT_REPORT_WARN) return;
    reports.n_warn++;
    size_t k = strlen(reports.all);
    snprintf(reports.all + k, sizeof reports.all - k, "%s\n", r->msg);
}

static void reset(void)
{
    memset(&got, 0, sizeof got);
    memset(&reports, 0, sizeof reports);
}

/* A small RNNencdec model: it has no attention to give alignments from. */
static void test_decoder_warning(void)
{
    nmt_config c = nmt_config_default();
    c.arch = NMT_ARCH_RNNENC;
    c.src_vocab = c.tgt_vocab = 3;
    c.emb = c.hid = c.att = c.maxout = 4;
    const char *words[] = {"</s>", "<unk>", "a"};
    nmt_model *m = NULL;
    nmt_decoder *d = NULL;
    nmt_err err;
    CHECKF(nmt_model_create(&m, &c, words, words, 1, &err) == NMT_OK, "%s", err.msg);
    nmt_translate_opts o = nmt_translate_default_opts();

    reset();
    CHECK(nmt_decoder_init(&d, m, &o, &err) == NMT_OK);
    CHECKF(got.n_warn == 0, "a plain decoder warned: %s", got.last);
    nmt_decoder_free(d);

    o.attention = 1;
    reset();
    CHECK(nmt_decoder_init(&d, m, &o, &err) == NMT_OK);
    CHECKF(got.n_warn == 1 && strstr(got.last, "no attention"), "warnings %d, last '%s'", got.n_warn, got.last);
    nmt_decoder_free(d);

    nmt_set_log(NULL, NULL); /* no callback: nothing to call, nothing printed */
    reset();
    CHECK(nmt_decoder_init(&d, m, &o, &err) == NMT_OK);
    CHECK(got.n_warn == 0);
    nmt_decoder_free(d);
    nmt_set_log(on_log, &got);
    nmt_model_free(m);
}

/* Two updates on three pairs, the TSV log in a folder that does not exist: training goes on and
 * warns at each validation, through both callbacks. */
static void test_train_warnings(const char *dir)
{
    char src[512], tgt[512], model[512], log[512];
    snprintf(src, sizeof src, "%s/s", dir);
    snprintf(tgt, sizeof tgt, "%s/t", dir);
    snprintf(model, sizeof model, "%s/m.nmt", dir);
    snprintf(log, sizeof log, "%s/no/such/dir/log.tsv", dir);
    CHECK(test_write(src, "a b c\nb c\nc a\n") == 0);
    CHECK(test_write(tgt, "x y\ny z\nz x y\n") == 0);
    nmt_train_opts o = nmt_train_default_opts();
    o.src = src;
    o.tgt = tgt;
    o.model = model;
    o.log_tsv = log;
    o.cfg.emb = o.cfg.hid = o.cfg.att = o.cfg.maxout = 4;
    o.cfg.src_vocab = o.cfg.tgt_vocab = 50; /* more than the corpus has: a warning */
    o.batch = 2;
    o.max_updates = 2;
    o.valid_every = 1;
    o.threads = 1;
    reset();
    nmt_err err;
    CHECKF(nmt_train(&o, on_report, NULL, &err) == NMT_OK, "%s", err.msg);
    CHECKF(strstr(got.all, "W could not open the training log"), "log callback got:\n%s", got.all);
    CHECKF(strstr(got.all, "shortlist has 5 entries"), "log callback got:\n%s", got.all);
    /* every WARN report reached the log, with the same text */
    CHECKF(got.n_warn == reports.n_warn && reports.n_warn >= 3, "%d logged, %d reported", got.n_warn, reports.n_warn);
    CHECKF(got.n_other == 0, "%d messages of other levels", got.n_other);
    char *line = reports.all;
    for (char *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        char want[1100];
        snprintf(want, sizeof want, "W %.*s\n", (int)(nl - line), line);
        CHECKF(strstr(got.all, want), "reported but not logged: %.*s", (int)(nl - line), line);
    }
    char ckpt[600];
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", model);
    unlink(ckpt);
    unlink(model);
    unlink(src);
    unlink(tgt);
}

int main(void)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/nmt-test-log.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    nmt_set_log(on_log, &got);
    test_decoder_warning();
    test_train_warnings(dir);
    rmdir(dir);
    return test_done("test_log");
}
