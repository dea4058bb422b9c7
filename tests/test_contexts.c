/* test_contexts.c: each model computes in its own context (backend/backend.h's bk_ctx). Two models,
 * one on the CPU and one on the simulated device, translate side by side in two threads, each
 * giving its single-model run bit for bit, while the default device is neither's; an ensemble
 * across the two devices is refused; low-precision weights are converted once per model. */
/* kernel sets: all: two models at once against each alone, in FP32 and int8 (tests/cli/kernels.sh) */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "nn/net.h"
#include "nn/weights.h"
#include "test.h"
#include "tiny_model.h"

static const char *const SRC[] = {"w2 w3 w4", "w5", "w3 w3 w2 w6 w4 w7 w2", "w4 w2", "w8 w9 w2 w3"};
enum { NS = 5, ROUNDS = 6 };

static nmt_translate_opts opts(int precision)
{
    nmt_translate_opts o = nmt_translate_default_opts();
    o.beam = 4;
    o.n_best = 3;
    o.attention = 1;
    o.precision = precision;
    return o;
}

static void translate(const nmt_model *m, int precision, nmt_translation *out)
{
    nmt_translate_opts o = opts(precision);
    nmt_decoder *d = NULL;
    nmt_err err;
    NMT_ASSERT(nmt_decoder_init(&d, m, &o, &err) == 0);
    NMT_ASSERT(nmt_translate(d, SRC, NS, out, &err) == 0);
    nmt_decoder_free(d);
}

typedef struct job {
    const nmt_model *m;
    int precision;
    const nmt_translation *want; /* the model's run alone */
    int same;                    /* rounds that gave it */
} job;

static void *run(void *arg)
{
    job *j = arg;
    for (int r = 0; r < ROUNDS; r++) {
        nmt_translation got[NS];
        translate(j->m, j->precision, got);
        j->same += same_translations(got, j->want, NS);
        nmt_translation_free(got, NS);
    }
    return NULL;
}

/* the model on the CPU and its copy on devsim, alone and then at once */
static void side_by_side(const nmt_model *a, const nmt_model *b, int precision)
{
    nmt_translation wa[NS], wb[NS];
    translate(a, precision, wa);
    translate(b, precision, wb);
    job ja = {a, precision, wa, 0}, jb = {b, precision, wb, 0};
    pthread_t ta, tb;
    NMT_ASSERT(pthread_create(&ta, NULL, run, &ja) == 0 && pthread_create(&tb, NULL, run, &jb) == 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECKF(ja.same == ROUNDS, "%s %s: %d of %d rounds beside the devsim model gave its run alone",
           nmt_arch_name(a->cfg.arch), bk_prec_name(precision), ja.same, ROUNDS);
    CHECKF(jb.same == ROUNDS, "%s %s: %d of %d rounds beside the CPU model gave its run alone",
           nmt_arch_name(a->cfg.arch), bk_prec_name(precision), jb.same, ROUNDS);
    nmt_translation_free(wa, NS);
    nmt_translation_free(wb, NS);
}

/* two decoders of one model at int8 read one conversion of its weights */
static void shared_lowp(const nmt_model *m)
{
    nmt_translate_opts o = opts(NMT_PREC_INT8);
    nmt_decoder *d1 = NULL, *d2 = NULL;
    NMT_ASSERT(nmt_decoder_init(&d1, m, &o, NULL) == 0);
    const struct model_lowp *first = m->lowp[BK_PREC_INT8];
    NMT_ASSERT(nmt_decoder_init(&d2, m, &o, NULL) == 0);
    CHECKF(first && m->lowp[BK_PREC_INT8] == first, "%s: a second int8 decoder converted the weights again",
           nmt_model_device(m));
    nmt_decoder_free(d1);
    nmt_decoder_free(d2);
}

static void test_arch(int arch)
{
    nmt_config c = {arch, 12, 11, 6, 7, 6, 5, 1, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    rng r;
    rng_seed(&r, 11 + (unsigned)arch);
    NMT_ASSERT(nmt_set_device("cpu", NULL) == 0);
    nmt_model *a = tiny_random_model(c, &r, 0.5);
    char path[64];
    snprintf(path, sizeof path, "/tmp/nmt-test-contexts-%d.nmt", (int)getpid());
    NMT_ASSERT(nmt_model_save(a, path, NULL) == 0);
    nmt_err err;
    NMT_ASSERT(nmt_set_device("devsim", &err) == 0);
    nmt_model *b = NULL;
    NMT_ASSERT(nmt_model_load(&b, path, &err) == 0);
    unlink(path);
    CHECK(!strcmp(nmt_model_device(a), "cpu") && !strcmp(nmt_model_device(b), "devsim"));

    /* the default stays on devsim while the CPU model runs, then moves to the CPU under the other */
    side_by_side(a, b, NMT_PREC_FP32);
    NMT_ASSERT(nmt_set_device("cpu", NULL) == 0);
    if (nmt_precision_supported(NMT_PREC_INT8)) {
        side_by_side(a, b, NMT_PREC_INT8);
        shared_lowp(a);
        shared_lowp(b);
    }

    const nmt_model *both[2] = {a, b};
    nmt_decoder *d = NULL;
    nmt_translate_opts o = opts(NMT_PREC_FP32);
    int rc = nmt_decoder_init_ensemble(&d, both, NULL, 2, &o, &err);
    CHECKF(rc == NMT_ERR_ARG && strstr(err.msg, "devsim") && strstr(err.msg, "cpu"),
           "an ensemble across two devices: rc %d, '%s'", rc, rc ? err.msg : "");
    if (!rc) nmt_decoder_free(d);
    printf("%s: the CPU and devsim models side by side, each as alone; a mixed ensemble: %s\n", nmt_arch_name(arch),
           rc ? err.msg : "accepted");
    nmt_model_free(a);
    nmt_model_free(b);
}

int main(void)
{
    test_arch(NMT_ARCH_RNNSEARCH);
    test_arch(NMT_ARCH_RECATT_FERTDEC);
    return test_done("test_contexts");
}
