/* test_worker.c: the translation worker (decode/worker.c) against the string entry points, which
 * look words up on their own: text read by a worker and searched as ids gives nmt_translate's
 * translations bit for bit, with hints nmt_translate_hints's, by one model and by an ensemble;
 * hints the model cannot follow are refused naming the entry; idle workers are lent again;
 * threads that share a translator each get their own run's answers; a pipeline of workers hands
 * its batches back in order, each as one worker translates it, and refuses what it cannot hold. */
/* kernel sets: one: the same search reached two ways, compared on one kernel set */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "test.h"
#include "tiny_model.h"

static const char *const SRC[] = {"w2 w3 w4", "w5 zz w6", "", "w3 w3 w2 w6 w4 w7 w2 w9", "w8"};
static const char *const PREFIX[] = {"w3", "", "w4", "w2 w5", NULL};
static const char *const PH0[] = {"w7 w8"}, *const PH3[] = {"w6", "w9 w2"};
enum { NS = 5, THREADS = 4 };

static nmt_translate_opts opts(void)
{
    nmt_translate_opts o = nmt_translate_default_opts();
    o.beam = 5;
    o.n_best = 3;
    o.attention = 1;
    return o;
}

/* the sentences read by w, with the hints above when hinted */
static void read_all(nmt_worker *w, nmt_sentence *s, int hinted)
{
    for (int i = 0; i < NS; i++) {
        NMT_ASSERT(nmt_worker_encode(w, SRC[i], strlen(SRC[i]), &s[i], NULL) == 0);
        if (!hinted) continue;
        if (PREFIX[i]) NMT_ASSERT(nmt_worker_prefix(w, &s[i], PREFIX[i], NULL) == 0);
        for (int k = 0; i == 0 && k < 1; k++) NMT_ASSERT(nmt_worker_phrase(w, &s[i], PH0[k], NULL) == 0);
        for (int k = 0; i == 3 && k < 2; k++) NMT_ASSERT(nmt_worker_phrase(w, &s[i], PH3[k], NULL) == 0);
    }
}

static void hints_of(nmt_hint *h)
{
    for (int i = 0; i < NS; i++) h[i] = (nmt_hint){PREFIX[i], NULL, 0};
    h[0].phrases = PH0, h[0].n_phrases = 1;
    h[3].phrases = PH3, h[3].n_phrases = 2;
}

/* the worker's run against the decoder's on strings, plain and hinted */
static void same_as_strings(nmt_translator *tr, nmt_decoder *d, const char *what)
{
    nmt_worker *w = NULL;
    NMT_ASSERT(nmt_worker_take(tr, NULL, &w, NULL) == 0);
    for (int hinted = 0; hinted < 2; hinted++) {
        nmt_sentence s[NS];
        nmt_translation a[NS], b[NS];
        nmt_hint h[NS];
        hints_of(h);
        read_all(w, s, hinted);
        NMT_ASSERT(nmt_worker_translate(w, s, NS, a, NULL) == 0);
        NMT_ASSERT((hinted ? nmt_translate_hints(d, SRC, h, NS, b, NULL) : nmt_translate(d, SRC, NS, b, NULL)) == 0);
        CHECKF(same_translations(a, b, NS), "%s%s: the worker's translations differ from the strings'", what,
               hinted ? " with hints" : "");
        CHECKF(a[1].n_unk == 1 && a[1].n_src == 3 && a[2].n_hyps == 0, "%s: the counts of the sources", what);
        nmt_translation_free(a, NS);
        nmt_translation_free(b, NS);
        for (int i = 0; i < NS; i++) nmt_sentence_free(&s[i]);
    }
    nmt_worker_give(w);
}

/* what the hint pipeline refuses, each naming the entry; the sentence keeps what it had */
static void refusals(nmt_translator *tr)
{
    nmt_worker *w = NULL;
    nmt_sentence s;
    nmt_err err;
    NMT_ASSERT(nmt_worker_take(tr, NULL, &w, NULL) == 0);
    NMT_ASSERT(nmt_worker_encode(w, "w2 w3", 5, &s, NULL) == 0);
    NMT_ASSERT(nmt_worker_prefix(w, &s, "w4", NULL) == 0 && nmt_worker_phrase(w, &s, "w5 w6", NULL) == 0);
    struct { int prefix; const char *text, *want; } bad[] = {
        {0, "w7 zz", "constraint 2: 'zz' is not in the model's target vocabulary"},
        {0, "</s>", "constraint 2: '</s>' cannot be asked for"},
        {0, "<unk>", "constraint 2: '<unk>' cannot be asked for"},
        {0, "   ", "constraint 2 is empty"},
        {1, "w2", "the prefix goes first, once"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = bad[i].prefix ? nmt_worker_prefix(w, &s, bad[i].text, &err) : nmt_worker_phrase(w, &s, bad[i].text, &err);
        CHECKF(rc == NMT_ERR_ARG && strstr(err.msg, bad[i].want), "'%s': rc %d '%s'", bad[i].text, rc, rc ? err.msg : "");
    }
    CHECK(s.hint.n_prefix == 1 && s.hint.n_phrases == 1 && s.hint.offsets[1] == 2 && s.hint.tokens[1] == 6);
    for (int k = 1; k < NMT_MAX_PHRASES; k++) NMT_ASSERT(nmt_worker_phrase(w, &s, "w7", NULL) == 0);
    CHECK(nmt_worker_phrase(w, &s, "w7", &err) == NMT_ERR_ARG && strstr(err.msg, "more than 64"));
    nmt_sentence_free(&s);
    /* ids the vocabulary lacks, straight to the search */
    int ids[2] = {2, 99};
    nmt_source src = {ids, 2, NULL};
    nmt_translation t;
    int rc = nmt_translate_ids(nmt_worker_decoder(w), &src, NULL, 1, &t, &err);
    CHECKF(rc == NMT_ERR_ARG && strstr(err.msg, "sentence 1: source id 99"), "id 99: rc %d '%s'", rc, rc ? err.msg : "");
    nmt_worker_give(w);
}

/* a worker given back is lent again; options it refuses leave it in the list */
static void lending(nmt_translator *tr)
{
    nmt_worker *a = NULL, *b = NULL, *c = NULL;
    NMT_ASSERT(nmt_worker_take(tr, NULL, &a, NULL) == 0 && nmt_worker_take(tr, NULL, &b, NULL) == 0);
    CHECK(a != b);
    nmt_worker_give(a);
    nmt_translate_opts o = opts();
    o.beam = 0;
    nmt_err err;
    CHECK(nmt_worker_take(tr, &o, &c, &err) == NMT_ERR_ARG && strstr(err.msg, "beam size 0"));
    NMT_ASSERT(nmt_worker_take(tr, NULL, &c, NULL) == 0);
    CHECKF(c == a, "the idle worker was not lent again");
    nmt_worker_give(b);
    nmt_worker_give(c);
}

typedef struct job { nmt_translator *tr; const nmt_translation *want; int same; } job;

static void *run(void *arg)
{
    job *j = arg;
    for (int r = 0; r < 4; r++) {
        nmt_worker *w = NULL;
        nmt_sentence s[NS];
        nmt_translation got[NS];
        NMT_ASSERT(nmt_worker_take(j->tr, NULL, &w, NULL) == 0);
        read_all(w, s, 1);
        NMT_ASSERT(nmt_worker_translate(w, s, NS, got, NULL) == 0);
        j->same += same_translations(got, j->want, NS);
        nmt_translation_free(got, NS);
        for (int i = 0; i < NS; i++) nmt_sentence_free(&s[i]);
        nmt_worker_give(w);
    }
    return NULL;
}

static void threads(nmt_translator *tr, nmt_decoder *d)
{
    nmt_translation want[NS];
    nmt_hint h[NS];
    hints_of(h);
    NMT_ASSERT(nmt_translate_hints(d, SRC, h, NS, want, NULL) == 0);
    job j[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        j[i] = (job){tr, want, 0};
        NMT_ASSERT(pthread_create(&t[i], NULL, run, &j[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECKF(j[i].same == 4, "thread %d: %d of 4 runs gave the translations", i, j[i].same);
    }
    nmt_translation_free(want, NS);
}

/* A pipeline of 3 workers, 6 batches in flight (each the sentences rotated by its number, the odd
 * ones with prefixes, so that no two batches' answers are alike): every batch back in the order
 * put, equal to one worker's run of it; a 7th put refused while 6 are in flight; a get with none
 * in flight refused. */
static void pipeline(nmt_translator *tr)
{
    enum { W = 3, NB = 2 * W };
    nmt_worker *w = NULL;
    nmt_pipeline *p = NULL;
    nmt_err err;
    nmt_sentence s[NB][NS];
    nmt_translation got[NB][NS], want[NS], *back;
    NMT_ASSERT(nmt_worker_take(tr, NULL, &w, NULL) == 0);
    for (int b = 0; b < NB; b++) /* read in place: a sentence holds pointers into itself */
        for (int i = 0, k = b % NS; i < NS; i++, k = (k + 1) % NS) {
            NMT_ASSERT(nmt_worker_encode(w, SRC[k], strlen(SRC[k]), &s[b][i], NULL) == 0);
            if (b % 2 && PREFIX[k]) NMT_ASSERT(nmt_worker_prefix(w, &s[b][i], PREFIX[k], NULL) == 0);
        }
    CHECK(nmt_pipeline_init(&p, tr, 0, 1, &err) == NMT_ERR_ARG && strstr(err.msg, "workers 0 out of range") && !p);
    NMT_ASSERT(nmt_pipeline_init(&p, tr, W, 1, NULL) == 0);
    CHECK(nmt_pipeline_get(p, &back, &err) == NMT_ERR_ARG && strstr(err.msg, "no batch in flight"));
    for (int b = 0; b < NB; b++) NMT_ASSERT(nmt_pipeline_put(p, s[b], NS, got[b], NULL) == 0);
    CHECK(nmt_pipeline_full(p) && nmt_pipeline_pending(p) == NB);
    CHECK(nmt_pipeline_put(p, s[0], NS, got[0], &err) == NMT_ERR_ARG && strstr(err.msg, "in flight already"));
    for (int b = 0; b < NB; b++) {
        CHECK(nmt_pipeline_get(p, &back, NULL) == 0 && back == got[b]);
        NMT_ASSERT(nmt_worker_translate(w, s[b], NS, want, NULL) == 0);
        CHECKF(same_translations(got[b], want, NS), "pipeline batch %d: not one worker's translations", b);
        nmt_translation_free(want, NS);
        nmt_translation_free(got[b], NS);
    }
    CHECK(nmt_pipeline_pending(p) == 0 && !nmt_pipeline_full(p));
    nmt_pipeline_free(p);
    for (int b = 0; b < NB; b++)
        for (int i = 0; i < NS; i++) nmt_sentence_free(&s[b][i]);
    nmt_worker_give(w);
}

int main(void)
{
    rng r;
    rng_seed(&r, 5);
    nmt_config c = {NMT_ARCH_RNNSEARCH, 12, 11, 6, 7, 6, 5, 1, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    nmt_model *m[2] = {tiny_random_model(c, &r, 0.6), NULL};
    c.arch = NMT_ARCH_RECATT_FERTDEC;
    m[1] = tiny_random_model(c, &r, 0.6);
    nmt_translate_opts o = opts();
    double wt[2] = {0.3, 0.7};
    for (int n = 1; n <= 2; n++) {
        nmt_translator *tr = NULL;
        nmt_decoder *d = NULL;
        NMT_ASSERT(nmt_translator_init(&tr, (const nmt_model *const *)m, n > 1 ? wt : NULL, n, &o, NULL, NULL, NULL) == 0);
        NMT_ASSERT(nmt_decoder_init_ensemble(&d, (const nmt_model *const *)m, n > 1 ? wt : NULL, n, &o, NULL) == 0);
        same_as_strings(tr, d, n == 1 ? "one model" : "an ensemble");
        threads(tr, d);
        if (n == 1) {
            refusals(tr);
            lending(tr);
            pipeline(tr);
        }
        nmt_decoder_free(d);
        nmt_translator_free(tr);
    }
    printf("the worker's translations equal the string entry points', alone, with hints and in %d threads\n", THREADS);
    nmt_model_free(m[0]);
    nmt_model_free(m[1]);
    return test_done("test_worker");
}
