/* test_api_args.c: the public API refuses arguments the command line cannot produce but a
 * library caller can: an unknown optimizer (it used to write a checkpoint nothing could
 * resume), a negative clip, a NaN or infinite learning rate (NaN silently became the default),
 * a batch size times sort blocks past an int, negative sentence counts for nmt_translate,
 * nmt_score and nmt_force_align, and a target over NMT_MAX_TGT_WORDS (it used to be cut); and
 * nmt_blas_speed refuses a NaN or negative budget, and leaves the thread count as it found it
 * (it times on one thread). And every public function, each pointer argument NULL in turn: the
 * documented refusal, never a crash (a table the header's declarations are checked against). */
/* kernel sets: one: argument checks, no numbers compared (tests/cli/kernels.sh) */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmt.h"
#include "helpers.h"
#include "test.h"

static char dir[64];

static void write_file(const char *name, const char *text, char *path, size_t n)
{
    (void)test_write_in(dir, name, text, path, n); /* a file not written fails the call that reads it */
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

/* A vocabulary word that is not UTF-8 is refused when the model is made, naming it (it used to
 * be taken, and its save to fail as "out of memory"). */
static void test_vocab_utf8(void)
{
    static const char *sw[] = {"</s>", "<unk>", "a", "caf\xE9"}, *tw[] = {"</s>", "<unk>", "x", "y"};
    nmt_config c = {NMT_ARCH_RNNSEARCH, 4, 4, 3, 3, 3, 2, 2, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    nmt_model *m = NULL;
    nmt_err err = {0, ""};
    int rc = nmt_model_create(&m, &c, sw, tw, 1, &err);
    CHECKF(rc != 0 && !m && strstr(err.msg, "entry 3 is not UTF-8 (byte 4"), "rc %d '%s'", rc, err.msg);
    nmt_model_free(m);
    nmt_text *t = NULL;
    nmt_text_opts o = nmt_text_default_opts();
    rc = nmt_text_init(&t, &o, sw, 4, &err);
    CHECKF(rc != 0 && strstr(err.msg, "not UTF-8"), "text pipeline: rc %d '%s'", rc, err.msg);
    nmt_text_free(t);
}

static void test_decode_args(void)
{
    static const char *sw[] = {"</s>", "<unk>", "a", "b"}, *tw[] = {"</s>", "<unk>", "x", "y"};
    nmt_config c = {NMT_ARCH_RNNSEARCH, 4, 4, 3, 3, 3, 2, 2, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
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
    /* weights each finite whose sum is not: refused (each weight / sum was 0: empty translations) */
    const nmt_model *two[2] = {m, m};
    double big[2] = {DBL_MAX, DBL_MAX / 2};
    nmt_decoder *de = NULL;
    CHECKF(nmt_decoder_init_ensemble(&de, two, big, 2, &o, &err) == NMT_ERR_ARG && !de && strstr(err.msg, "not a finite number"),
           "weights summing past DBL_MAX: '%s'", err.msg);
    nmt_decoder_free(de);
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

/* ------------------------------------------------------------------ every public function
 * Each public function of nmt.h, called with each pointer argument NULL in turn (and, for arrays
 * of strings, with a NULL entry), in a child process: it must return its documented refusal
 * (NMT_ERR_ARG, NULL, -1, 0) or, for the free functions, nothing, and never crash or hang. A
 * function nmt.h declares that this table does not list fails the test: one added later gets its
 * argument cases here. */
static nmt_model *M;
static nmt_decoder *D;
static nmt_text *TX;
static char model_path[128], lex_path[128];
static const char *SW[] = {"</s>", "<unk>", "a", "b"}, *TW[] = {"</s>", "<unk>", "x", "y"};
static const char *SW_HOLE[] = {"</s>", "<unk>", NULL, "b"};
static nmt_err E;

#define NUL(i, p) (k == (i) ? NULL : (p))
#define ARG(call) ((call) == NMT_ERR_ARG)

static int c_config_check(int k) { (void)k; return ARG(nmt_config_check(NULL, &E)); }
/* no argument: its sizes pass the check (d a multiple of the heads, hid = att = maxout = d) */
static int c_config_transformer(int k)
{
    (void)k;
    nmt_config c = nmt_config_transformer();
    return nmt_config_check(&c, NULL) == NMT_OK && c.arch == NMT_ARCH_TRANSFORMER;
}
static int c_arch_name(int k) { (void)k; return nmt_arch_name(-1) != NULL && nmt_arch_name(1000) != NULL; }
static int c_arch_parse(int k) { (void)k; return nmt_arch_parse(NULL) == -1; }
static int c_model_create(int k)
{
    nmt_model *out = NULL;
    nmt_config c = *nmt_model_config(M);
    int rc = nmt_model_create(NUL(0, &out), NUL(1, &c), k == 4 ? SW_HOLE : NUL(2, SW), k == 5 ? SW_HOLE : NUL(3, TW), 1, &E);
    return ARG(rc) && !out;
}
static int c_model_load(int k) { nmt_model *o = NULL; return ARG(nmt_model_load(NUL(0, &o), NUL(1, model_path), &E)); }
static int c_model_save(int k) { return ARG(nmt_model_save(NUL(0, M), NUL(1, model_path), &E)); }
static int c_model_free(int k) { (void)k; nmt_model_free(NULL); return 1; }
static int c_model_average(int k)
{
    nmt_model *o = NULL;
    const char *paths[2] = {model_path, k == 2 ? NULL : model_path};
    return ARG(nmt_model_average(NUL(0, &o), NUL(1, paths), 2, &E));
}
/* no output, archive, vocabulary list; a NULL vocabulary; a NULL SentencePiece model */
static int c_model_import_marian(int k)
{
    nmt_model *o = NULL;
    const char *v[2] = {k == 3 ? NULL : model_path, NULL}, *sp[2] = {model_path, NULL};
    return ARG(nmt_model_import_marian(NUL(0, &o), NUL(1, model_path), NUL(2, v), k == 4 ? sp : NULL, &E)) && !o;
}
static int c_model_config(int k) { (void)k; return nmt_model_config(NULL) == NULL; }
static int c_model_num_params(int k) { (void)k; return nmt_model_num_params(NULL) == 0; }
/* no model, a side that is neither, an id out of range */
static int c_model_vocab_size(int k) { return nmt_model_vocab_size(NUL(0, M), k == 1 ? 2 : NMT_SOURCE) == 0; }
static int c_model_vocab_entry(int k)
{
    static const int side[3] = {NMT_TARGET, -1, NMT_TARGET}, id[3] = {0, 0, 4};
    return nmt_model_vocab_entry(NUL(0, M), side[k], id[k]) == NULL && nmt_model_vocab_entry(M, NMT_TARGET, -1) == NULL;
}
static int c_model_has_subwords(int k) { (void)k; return nmt_model_has_subwords(NULL) == 0; }
static int c_model_has_text_stages(int k) { (void)k; return nmt_model_has_text_stages(NULL) == 0; }
static int c_text_init(int k)
{
    nmt_text *t = NULL;
    nmt_text_opts o = nmt_text_default_opts();
    return ARG(nmt_text_init(NUL(0, &t), NUL(1, &o), k == 2 ? SW_HOLE : SW, 4, &E));
}
static int c_text_init_model(int k)
{
    nmt_text *t = NULL;
    nmt_text_opts o = nmt_text_default_opts();
    return ARG(nmt_text_init_model(NUL(0, &t), NUL(1, &o), NUL(2, M), NMT_SOURCE, &E));
}
static int c_text_free(int k) { (void)k; nmt_text_free(NULL); return 1; }
static int c_text_encode(int k)
{
    nmt_text_line l;
    return ARG(nmt_text_encode(NUL(0, TX), NUL(1, "a b"), 3, NUL(2, &l), &E));
}
static int c_text_decode(int k)
{
    int ids[2] = {2, 3};
    const char *text;
    size_t len;
    return ARG(nmt_text_decode(NUL(0, TX), NUL(1, ids), 2, NUL(2, &text), NUL(3, &len), &E));
}
static int c_text_decode_words(int k)
{
    const char *w[2] = {"a", k == 4 ? NULL : "b"}, *text;
    size_t len;
    return ARG(nmt_text_decode_words(NUL(0, TX), NUL(1, w), 2, NUL(2, &text), NUL(3, &len), &E));
}
static int c_text_decode_line(int k)
{
    const char *w[2] = {"a", k == 3 ? NULL : "b"};
    nmt_text_line l;
    return ARG(nmt_text_decode_line(NUL(0, TX), NUL(1, w), 2, NUL(2, &l), &E));
}
static int c_attention_to_words(int k)
{
    int of[1] = {0};
    nmt_word_map map = {1, k == 4 ? NULL : of, 1};
    float att[4] = {0.5f, 0.5f, 0.5f, 0.5f}, out[4];
    return ARG(nmt_attention_to_words(NUL(0, out), NUL(1, att), 0, NUL(2, &map), NUL(3, &map), &E));
}
static int c_lexicon_load(int k) { nmt_lexicon *o = NULL; return ARG(nmt_lexicon_load(NUL(0, &o), NUL(1, lex_path), &E)); }
static int c_lexicon_free(int k) { (void)k; nmt_lexicon_free(NULL); return 1; }
static int c_shortlist_load(int k)
{
    nmt_shortlist *o = NULL;
    return ARG(nmt_shortlist_load(NUL(0, &o), NUL(1, lex_path), NUL(2, M), 2, 2, &E));
}
static int c_shortlist_free(int k) { (void)k; nmt_shortlist_free(NULL); return 1; }
static int c_precision_supported(int k) { (void)k; return nmt_precision_supported(-1) == 0 && nmt_precision_supported(99) == 0; }
static int c_decoder_init(int k)
{
    nmt_decoder *o = NULL;
    nmt_translate_opts t = nmt_translate_default_opts();
    return ARG(nmt_decoder_init(NUL(0, &o), NUL(1, M), NUL(2, &t), &E));
}
static int c_decoder_init_ensemble(int k)
{
    nmt_decoder *o = NULL;
    nmt_translate_opts t = nmt_translate_default_opts();
    const nmt_model *ms[2] = {M, k == 3 ? NULL : M};
    double w[2] = {1, 1};
    return ARG(nmt_decoder_init_ensemble(NUL(0, &o), NUL(1, ms), w, 2, NUL(2, &t), &E));
}
static int c_model_check_vocab(int k) { return ARG(nmt_model_check_vocab(NUL(0, M), "a", NUL(1, M), "b", &E)); }
static int c_decoder_free(int k) { (void)k; nmt_decoder_free(NULL); return 1; }
static int c_decoder_set_opts(int k)
{
    nmt_translate_opts t = nmt_translate_default_opts();
    return ARG(nmt_decoder_set_opts(NUL(0, D), NUL(1, &t), &E));
}
static int c_translate(int k)
{
    const char *src[2] = {"a b", k == 3 ? NULL : "b"};
    nmt_translation tr[2];
    return ARG(nmt_translate(NUL(0, D), NUL(1, src), 2, NUL(2, tr), &E));
}
static int c_translate_hints(int k)
{
    const char *src[2] = {"a b", k == 4 ? NULL : "b"}, *ph[1] = {k == 5 ? NULL : "x"};
    nmt_hint h[2] = {{"x", ph, 1}, {NULL, NULL, 0}};
    nmt_translation tr[2];
    return ARG(nmt_translate_hints(NUL(0, D), NUL(1, src), NUL(2, h), 2, NUL(3, tr), &E));
}
/* the pointers, then a source with no ids, an id past the vocabulary, a hint with no offsets */
static int c_translate_ids(int k)
{
    int ids[2] = {2, k == 4 ? 1 << 20 : 3}, off[2] = {0, 1};
    nmt_source src[1] = {{k == 3 ? NULL : ids, 2, NULL}};
    nmt_hint_ids h[1] = {{NULL, 0, ids, k == 5 ? NULL : off, 1}};
    nmt_translation tr[1];
    return ARG(nmt_translate_ids(NUL(0, D), NUL(1, src), h, 1, NUL(2, tr), &E));
}
/* a translator over M and one of its workers (each case runs in a child of its own) */
static nmt_worker *worker_of_m(void)
{
    nmt_translator *t = NULL;
    nmt_worker *w = NULL;
    nmt_translate_opts o = nmt_translate_default_opts();
    NMT_ASSERT(nmt_translator_init(&t, (const nmt_model *const *)&M, NULL, 1, &o, NULL, NULL, NULL) == 0);
    NMT_ASSERT(nmt_worker_take(t, NULL, &w, NULL) == 0);
    return w;
}
static int c_text_looks_tokenized(int k)
{
    (void)k;
    return nmt_text_looks_tokenized(NULL, "a &apos;", 8) == NULL && nmt_text_looks_tokenized(TX, NULL, 0) == NULL;
}
/* the pointers, then a NULL model in the list, then no model */
static int c_translator_init(int k)
{
    nmt_translator *t = NULL;
    nmt_translate_opts o = nmt_translate_default_opts();
    const nmt_model *ms[2] = {M, k == 3 ? NULL : M};
    return ARG(nmt_translator_init(NUL(0, &t), NUL(1, ms), NULL, k == 3 ? 2 : k == 4 ? 0 : 1, NUL(2, &o), NULL, NULL, &E)) && !t;
}
static int c_translator_free(int k) { (void)k; nmt_translator_free(NULL); return 1; }
static int c_worker_take(int k)
{
    nmt_worker *x = NULL;
    nmt_translator *t = NULL;
    nmt_translate_opts o = nmt_translate_default_opts();
    NMT_ASSERT(nmt_translator_init(&t, (const nmt_model *const *)&M, NULL, 1, &o, NULL, NULL, NULL) == 0);
    return ARG(nmt_worker_take(NUL(0, t), NULL, NUL(1, &x), &E));
}
static int c_worker_give(int k) { (void)k; nmt_worker_give(NULL); return 1; }
static int c_worker_decoder(int k) { (void)k; return nmt_worker_decoder(NULL) == NULL; }
static int c_worker_text(int k) { (void)k; return nmt_worker_text(NULL, NMT_SOURCE) == NULL; }
static int c_worker_encode(int k)
{
    nmt_sentence s;
    return ARG(nmt_worker_encode(NUL(0, worker_of_m()), NUL(1, "a b"), 3, NUL(2, &s), &E));
}
/* the pointers, then a pipeline with no vocabulary */
static int c_sentence_encode(int k)
{
    nmt_sentence s;
    nmt_text *plain = NULL;
    nmt_text_opts o = nmt_text_default_opts();
    NMT_ASSERT(nmt_text_init(&plain, &o, NULL, 0, NULL) == 0);
    return ARG(nmt_sentence_encode(k == 3 ? plain : NUL(0, TX), NUL(1, "a b"), 3, NUL(2, &s), &E));
}
static int c_worker_hint(int k, int prefix)
{
    nmt_worker *w = worker_of_m();
    nmt_sentence s;
    NMT_ASSERT(nmt_worker_encode(w, "a b", 3, &s, NULL) == 0);
    nmt_worker *a = NUL(0, w);
    nmt_sentence *b = NUL(1, &s);
    return ARG(prefix ? nmt_worker_prefix(a, b, NUL(2, "x"), &E) : nmt_worker_phrase(a, b, NUL(2, "x"), &E));
}
static int c_worker_prefix(int k) { return c_worker_hint(k, 1); }
static int c_worker_phrase(int k) { return c_worker_hint(k, 0); }
/* the pointers, then a negative count */
static int c_worker_translate(int k)
{
    nmt_worker *w = worker_of_m();
    nmt_sentence s;
    nmt_translation tr[1];
    NMT_ASSERT(nmt_worker_encode(w, "a b", 3, &s, NULL) == 0);
    return ARG(nmt_worker_translate(NUL(0, w), NUL(1, &s), k == 3 ? -1 : 1, NUL(2, tr), &E));
}
static int c_sentence_free(int k) { (void)k; nmt_sentence_free(NULL); return 1; }
/* a pipeline of one worker over M's translator */
static nmt_pipeline *pipeline_of_m(void)
{
    nmt_translator *t = NULL;
    nmt_pipeline *p = NULL;
    nmt_translate_opts o = nmt_translate_default_opts();
    NMT_ASSERT(nmt_translator_init(&t, (const nmt_model *const *)&M, NULL, 1, &o, NULL, NULL, NULL) == 0);
    NMT_ASSERT(nmt_pipeline_init(&p, t, 1, 1, NULL) == 0);
    return p;
}
/* the pointers, then no worker, then more than NMT_MAX_WORKERS */
static int c_pipeline_init(int k)
{
    nmt_translator *t = NULL;
    nmt_pipeline *p = NULL;
    nmt_translate_opts o = nmt_translate_default_opts();
    NMT_ASSERT(nmt_translator_init(&t, (const nmt_model *const *)&M, NULL, 1, &o, NULL, NULL, NULL) == 0);
    return ARG(nmt_pipeline_init(NUL(0, &p), NUL(1, t), k == 2 ? 0 : k == 3 ? NMT_MAX_WORKERS + 1 : 1, 1, &E)) && !p;
}
/* the pointers, then a negative count */
static int c_pipeline_put(int k)
{
    nmt_sentence s[1];
    nmt_translation tr[1];
    memset(s, 0, sizeof s);
    return ARG(nmt_pipeline_put(NUL(0, pipeline_of_m()), NUL(1, s), k == 3 ? -1 : 0, NUL(2, tr), &E));
}
/* the pointers, then nothing in flight */
static int c_pipeline_get(int k)
{
    nmt_translation *tr;
    return ARG(nmt_pipeline_get(NUL(0, pipeline_of_m()), k == 2 ? &tr : NUL(1, &tr), &E));
}
static int c_pipeline_free(int k) { (void)k; nmt_pipeline_free(NULL); return 1; }
/* NULL: a put would be refused, nothing is in flight */
static int c_pipeline_full(int k) { (void)k; return nmt_pipeline_full(NULL) && !nmt_pipeline_full(pipeline_of_m()); }
static int c_pipeline_pending(int k) { (void)k; return nmt_pipeline_pending(NULL) == 0 && nmt_pipeline_pending(pipeline_of_m()) == 0; }
static int c_translation_free(int k) { (void)k; nmt_translation_free(NULL, 3); return 1; }
static int c_hard_link(int k) { (void)k; return nmt_hard_link(NULL, 0) == -1; }
static int c_score(int k)
{
    const char *src[1] = {k == 4 ? NULL : "a b"}, *tgt[1] = {k == 5 ? NULL : "x"};
    double lp[1];
    int nt[1]; /* may be NULL */
    return ARG(nmt_score(NUL(0, D), NUL(1, src), NUL(2, tgt), 1, NUL(3, lp), nt, &E));
}
static int c_force_align(int k)
{
    const char *src[1] = {k == 4 ? NULL : "a b"}, *tgt[1] = {k == 5 ? NULL : "x"};
    nmt_alignment al[1];
    return ARG(nmt_force_align(NUL(0, D), NUL(1, src), NUL(2, tgt), 1, NUL(3, al), &E));
}
static int c_alignment_free(int k) { (void)k; nmt_alignment_free(NULL, 2); return 1; }
static int c_set_threads(int k)
{
    static const int n[] = {100000, 1 << 30, -5};
    nmt_set_threads(n[k]);
    return omp_get_max_threads() >= 1 && omp_get_max_threads() <= NMT_MAX_THREADS;
}
static int c_blas_speed(int k) { (void)k; return ARG(nmt_blas_speed(0, NULL, &E)); }
static int c_metric_score(int k)
{
    const char *h[1] = {k == 3 ? NULL : "a"}, *r[1] = {k == 4 ? NULL : "a"};
    double sc;
    return ARG(nmt_metric_score(NMT_METRIC_BLEU, NUL(0, h), NUL(1, r), 1, NUL(2, &sc), &E));
}
static int c_metric_parse(int k) { (void)k; return nmt_metric_parse(NULL) == -1; }
static int c_metric_name(int k) { (void)k; return nmt_metric_name(-1) != NULL && nmt_metric_name(99) != NULL; }
static int c_train_preset(int k)
{
    nmt_train_opts o = nmt_train_default_opts();
    return ARG(nmt_train_preset(NUL(0, &o), NUL(1, "hour"), &E));
}
static int c_train(int k) { (void)k; return ARG(nmt_train(NULL, NULL, NULL, &E)); }
static int c_status_str(int k) { (void)k; return nmt_status_str(12345) != NULL && nmt_status_str(-12345) != NULL; }
static int c_set_log(int k) { (void)k; nmt_set_log(NULL, NULL); return 1; }
static int c_none(int k) { (void)k; return 1; } /* no argument to get wrong */
static int c_model_num_tensors(int k) { (void)k; return nmt_model_num_tensors(NULL) == 0; }
static int c_model_tensor(int k)
{
    const char *name;
    int nd;
    int64_t shape[2];
    return ARG(nmt_model_tensor(NUL(0, M), 0, NUL(1, &name), NUL(2, &nd), k == 3 ? NULL : shape, NULL, &E)) &&
           ARG(nmt_model_tensor(M, -1, &name, &nd, shape, NULL, &E));
}
/* the device: no name, one this build lacks, or another while a model (M) is live, is refused
 * and leaves the device as it was */
static int c_set_device(int k)
{
    const char *was = nmt_device();
    return ARG(nmt_set_device(k == 0 ? NULL : "no-such-device", &E)) && !strcmp(nmt_device(), was);
}
static int c_model_device(int k) { (void)k; return nmt_model_device(NULL) == NULL; }
static int c_device(int k) { (void)k; return nmt_device() != NULL; }
/* corpus scores: hyps, the reference sets, one set, a hypothesis, a reference, the result */
static int corpus_case(int k, int chrf)
{
    const char *h[1] = {k == 3 ? NULL : "a"}, *r[1] = {k == 4 ? NULL : "a"};
    const char *const *sets[1] = {k == 2 ? NULL : r};
    nmt_bleu_result b;
    double x;
    if (chrf) return ARG(nmt_chrf_corpus(NUL(0, h), NUL(1, sets), 1, 1, 0, NUL(5, &x), &E));
    return ARG(nmt_bleu_corpus(NUL(0, h), NUL(1, sets), 1, 1, NULL, 0, NUL(5, &b), &E));
}
static int c_bleu_corpus(int k) { return corpus_case(k, 0); }
static int c_chrf_corpus(int k) { return corpus_case(k, 1); }

static const struct api_case {
    const char *name;
    int n; /* cases: c(0) .. c(n - 1) */
    int (*c)(int k);
} cases[] = {
    {"nmt_config_default", 1, c_none}, {"nmt_config_transformer", 1, c_config_transformer}, {"nmt_config_check", 1, c_config_check}, {"nmt_arch_name", 1, c_arch_name},
    {"nmt_arch_parse", 1, c_arch_parse}, {"nmt_model_create", 6, c_model_create}, {"nmt_model_load", 2, c_model_load},
    {"nmt_model_save", 2, c_model_save}, {"nmt_model_free", 1, c_model_free}, {"nmt_model_average", 3, c_model_average},
    {"nmt_model_import_marian", 5, c_model_import_marian},
    {"nmt_model_config", 1, c_model_config}, {"nmt_model_num_params", 1, c_model_num_params},
    {"nmt_model_vocab_size", 2, c_model_vocab_size}, {"nmt_model_vocab_entry", 3, c_model_vocab_entry},
    {"nmt_model_has_subwords", 1, c_model_has_subwords}, {"nmt_model_has_text_stages", 1, c_model_has_text_stages},
    {"nmt_text_default_opts", 1, c_none}, {"nmt_text_init", 3, c_text_init}, {"nmt_text_init_model", 3, c_text_init_model},
    {"nmt_text_free", 1, c_text_free}, {"nmt_text_encode", 3, c_text_encode}, {"nmt_text_decode", 4, c_text_decode},
    {"nmt_text_decode_words", 5, c_text_decode_words}, {"nmt_text_decode_line", 4, c_text_decode_line},
    {"nmt_attention_to_words", 5, c_attention_to_words}, {"nmt_lexicon_load", 2, c_lexicon_load},
    {"nmt_lexicon_free", 1, c_lexicon_free}, {"nmt_shortlist_load", 3, c_shortlist_load},
    {"nmt_shortlist_free", 1, c_shortlist_free}, {"nmt_precision_supported", 1, c_precision_supported},
    {"nmt_translate_default_opts", 1, c_none}, {"nmt_decoder_init", 3, c_decoder_init},
    {"nmt_decoder_init_ensemble", 4, c_decoder_init_ensemble}, {"nmt_model_check_vocab", 2, c_model_check_vocab},
    {"nmt_decoder_free", 1, c_decoder_free}, {"nmt_decoder_set_opts", 2, c_decoder_set_opts}, {"nmt_translate", 4, c_translate},
    {"nmt_translate_hints", 6, c_translate_hints}, {"nmt_translation_free", 1, c_translation_free},
    {"nmt_hard_link", 1, c_hard_link}, {"nmt_score", 6, c_score},
    {"nmt_force_align", 6, c_force_align}, {"nmt_alignment_free", 1, c_alignment_free}, {"nmt_set_threads", 3, c_set_threads},
    {"nmt_blas_speed", 1, c_blas_speed}, {"nmt_metric_score", 5, c_metric_score}, {"nmt_metric_parse", 1, c_metric_parse},
    {"nmt_metric_name", 1, c_metric_name}, {"nmt_train_default_opts", 1, c_none}, {"nmt_train_preset", 2, c_train_preset},
    {"nmt_train", 1, c_train}, {"nmt_status_str", 1, c_status_str}, {"nmt_set_log", 1, c_set_log},
    {"nmt_model_num_tensors", 1, c_model_num_tensors}, {"nmt_model_tensor", 4, c_model_tensor},
    {"nmt_set_device", 2, c_set_device}, {"nmt_model_device", 1, c_model_device},
    {"nmt_translate_ids", 6, c_translate_ids}, {"nmt_text_looks_tokenized", 1, c_text_looks_tokenized},
    {"nmt_translator_init", 5, c_translator_init}, {"nmt_translator_free", 1, c_translator_free},
    {"nmt_worker_take", 2, c_worker_take}, {"nmt_worker_give", 1, c_worker_give}, {"nmt_worker_decoder", 1, c_worker_decoder},
    {"nmt_worker_text", 1, c_worker_text}, {"nmt_worker_encode", 3, c_worker_encode},
    {"nmt_sentence_encode", 4, c_sentence_encode}, {"nmt_worker_prefix", 3, c_worker_prefix},
    {"nmt_worker_phrase", 3, c_worker_phrase}, {"nmt_worker_translate", 4, c_worker_translate},
    {"nmt_sentence_free", 1, c_sentence_free}, {"nmt_device", 1, c_device}, {"nmt_bleu_corpus", 6, c_bleu_corpus},
    {"nmt_chrf_corpus", 6, c_chrf_corpus}, {"nmt_pipeline_init", 4, c_pipeline_init}, {"nmt_pipeline_put", 4, c_pipeline_put},
    {"nmt_pipeline_get", 3, c_pipeline_get}, {"nmt_pipeline_free", 1, c_pipeline_free}, {"nmt_pipeline_full", 1, c_pipeline_full},
    {"nmt_pipeline_pending", 1, c_pipeline_pending},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

/* case k of c in a child: 0 when it gave the refusal, else what went wrong */
static const char *run_case(const struct api_case *c, int k)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(30);
        _exit(c->c(k) ? 0 : 1);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) return "fork failed";
    if (WIFEXITED(st)) return WEXITSTATUS(st) ? "accepted (or a wrong status)" : NULL;
    return WTERMSIG(st) == SIGALRM ? "hung" : "crashed";
}

/* the functions nmt.h declares ("type nmt_name(" at the start of a line), each listed once above */
static void test_table_complete(void)
{
    FILE *f = fopen("include/nmt.h", "r");
    CHECKF(f != NULL, "include/nmt.h: cannot read it (the tests run from the repository's root)");
    if (!f) return;
    char line[512];
    int declared = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] < 'a' || line[0] > 'z' || strncmp(line, "typedef", 7) == 0) continue;
        char *q = strchr(line, '('), *p = q, *semi = strchr(line, ';');
        if (!q || (semi && semi < q) || strchr(line, '=')) continue;
        while (p > line && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= '0' && p[-1] <= '9'))) p--;
        *q = 0;
        if (strncmp(p, "nmt_", 4)) continue;
        int found = 0;
        for (int i = 0; i < NCASES; i++) found += !strcmp(cases[i].name, p);
        CHECKF(found == 1, "%s: declared in nmt.h, %d argument cases in tests/test_api_args.c", p, found);
        declared++;
    }
    fclose(f);
    CHECKF(declared == NCASES, "%d functions in nmt.h, %d in the table", declared, NCASES);
}

static void test_every_function(void)
{
    nmt_config c = {NMT_ARCH_RNNSEARCH, 4, 4, 3, 3, 3, 2, 2, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    nmt_translate_opts o = nmt_translate_default_opts();
    nmt_text_opts to = nmt_text_default_opts();
    char text[64];
    snprintf(model_path, sizeof model_path, "%s/every.nmt", dir);
    if (nmt_model_create(&M, &c, SW, TW, 1, &E) || nmt_decoder_init(&D, M, &o, &E) || nmt_text_init(&TX, &to, SW, 4, &E) ||
        nmt_model_save(M, model_path, &E)) {
        CHECKF(0, "the fixtures: %s", E.msg);
        return;
    }
    snprintf(text, sizeof text, "a\tx\t3\t3\n");
    write_file("lex.tsv", text, lex_path, sizeof lex_path);
    for (int i = 0; i < NCASES; i++)
        for (int k = 0; k < cases[i].n; k++) {
            const char *why = run_case(&cases[i], k);
            CHECKF(!why, "%s, argument case %d: %s", cases[i].name, k, why);
        }
    /* in this process too: the thread count clamped, the caller's other counts kept */
    nmt_set_threads(1 << 30);
    CHECKF(omp_get_max_threads() == NMT_MAX_THREADS, "nmt_set_threads(2^30): %d threads", omp_get_max_threads());
    nmt_set_threads(2);
    CHECK(omp_get_max_threads() == 2);
    unlink(model_path);
    unlink(lex_path);
    nmt_text_free(TX);
    nmt_decoder_free(D);
    nmt_model_free(M);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/nmt-api-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    test_train_opts();
    test_decode_args();
    test_vocab_utf8();
    test_blas_speed();
    test_table_complete();
    test_every_function();
    rmdir(dir);
    return test_done("test_api_args");
}
