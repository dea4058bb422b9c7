/* fuzz_api.c: the public C API (nmt.h) driven by a short program of calls the input spells out,
 * on a few handle slots: tiny models (nmt_model_create, save and load), decoders and ensembles
 * with fuzzed options, translation, scoring and forced alignment of fuzzed token strings, text
 * pipelines, the metrics, NULL arguments and frees in any order. Beyond crashes, leaks and
 * sanitizer reports it aborts when a call returns anything but NMT_OK or a documented error
 * with a message, or when a result breaks what nmt.h promises of it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "nmt.h"

/* Bounds that keep one input well under 100 ms under ASan: the sizes of a model, how many of
 * them one input makes, its calls, its decoding calls (translate, score, align: the costly
 * ones, about 25 ms each at most under ASan), the sentences of a call and their words. */
#define MAX_OPS 24
#define MAX_MODELS 2
#define MAX_DECODES 3
#define MAX_VOCAB 40
#define MAX_SENTS 3
#define MAX_WORDS 6
#define MAX_BEAM 6
#define SLOTS 2

/* The input, read a byte at a time: zeros once it is spent. */
typedef struct reader {
    const uint8_t *p;
    size_t n, at;
} reader;

static unsigned byte(reader *r) { return r->at < r->n ? r->p[r->at++] : 0; }
static int spent(const reader *r) { return r->at >= r->n; }
static int range(reader *r, int lo, int hi) { return lo + (int)(byte(r) % (unsigned)(hi - lo + 1)); }

/* A broken promise of the API: abort, which libFuzzer and the replay test report. */
static void require(int ok, const char *what)
{
    if (ok) return;
    fprintf(stderr, "fuzz_api: %s\n", what);
    abort();
}

/* Every status is NMT_OK or a documented error that carries its code and a message. */
static int checked(int rc, const nmt_err *err)
{
    require(rc <= 0 && rc >= NMT_ERR_NUMERIC, "a status outside enum nmt_status");
    if (rc == NMT_OK) return rc;
    require(err->code == rc, "an error record whose code is not the status");
    require(err->msg[0] != 0 && memchr(err->msg, 0, sizeof err->msg), "an error without a message");
    return rc;
}

/* The handles: each decoder and pipeline remembers its model slot (an ensemble: both), so that
 * a model is freed only after what uses it, as nmt.h requires. */
typedef struct state {
    nmt_model *model[SLOTS];
    nmt_decoder *dec[SLOTS];
    int dec_uses[SLOTS];  /* bit s: uses model slot s */
    nmt_text *text[SLOTS];
    int text_uses[SLOTS];
    int made;             /* models created or loaded by this input */
    int decodes;          /* decoding calls made by this input */
} state;

static void free_decoder(state *s, int k) { nmt_decoder_free(s->dec[k]); s->dec[k] = NULL; s->dec_uses[k] = 0; }
static void free_text(state *s, int k) { nmt_text_free(s->text[k]); s->text[k] = NULL; s->text_uses[k] = 0; }

/* Frees model slot k after the decoders and pipelines that use it, in the order the input picks. */
static void free_model(state *s, reader *r, int k)
{
    int first_text = byte(r) & 1;
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < SLOTS; j++) {
            if ((pass == 0) == first_text && s->text_uses[j] >> k & 1) free_text(s, j);
            if ((pass == 0) != first_text && s->dec_uses[j] >> k & 1) free_decoder(s, j);
        }
    nmt_model_free(s->model[k]);
    s->model[k] = NULL;
}

/* A temporary folder for saved models, one per process, removed at exit. */
static char tmpdir[64];
static void remove_tmpdir(void)
{
    char path[96];
    snprintf(path, sizeof path, "%s/m.nmt", tmpdir);
    unlink(path);
    rmdir(tmpdir);
}
static const char *model_path(void)
{
    static char path[96];
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/nmt-fuzz-api-XXXXXX");
        if (!mkdtemp(tmpdir)) { tmpdir[0] = 0; return NULL; }
        atexit(remove_tmpdir);
    }
    snprintf(path, sizeof path, "%s/m.nmt", tmpdir);
    return path;
}

/* Vocabulary words "</s>", "<unk>", then "w2", "w3"...; one of them may be replaced by a few
 * input bytes (empty, blank or not UTF-8: create must refuse it with NMT_ERR_FORMAT). */
static void make_words(char w[][8], const char **list, int n, reader *r, int fuzzed)
{
    for (int i = 0; i < n; i++) {
        snprintf(w[i], 8, i == 0 ? "</s>" : i == 1 ? "<unk>" : "w%d", i);
        list[i] = w[i];
    }
    if (!fuzzed || n < 3) return;
    int at = range(r, 2, n - 1), len = range(r, 0, 3);
    for (int i = 0; i < len; i++) w[at][i] = (char)byte(r);
    w[at][len] = 0;
}

static void op_create(state *s, reader *r)
{
    int k = byte(r) % SLOTS;
    if (s->made >= MAX_MODELS) return;
    nmt_config c = nmt_config_default();
    c.arch = range(r, 0, NMT_ARCH_COUNT);  /* one past the last: refused */
    c.src_vocab = range(r, 1, MAX_VOCAB);  /* 1: refused (EOS and UNK are two) */
    c.tgt_vocab = range(r, 2, MAX_VOCAB);
    c.emb = range(r, 4, 16); c.hid = range(r, 4, 16); c.att = range(r, 4, 16); c.maxout = range(r, 4, 16);
    c.window = range(r, 0, 3);
    c.tied_emb = byte(r) & 1;
    if (c.tied_emb && byte(r) & 1) c.maxout = c.emb;
    unsigned flags = byte(r);
    const char *src[MAX_VOCAB], *tgt[MAX_VOCAB];
    char sw[MAX_VOCAB][8], tw[MAX_VOCAB][8];
    make_words(sw, src, c.src_vocab, r, flags & 1);
    make_words(tw, tgt, c.tgt_vocab, r, flags >> 1 & 1);
    nmt_err err = {0, ""}, cerr = {0, ""};
    int ok_cfg = checked(nmt_config_check(&c, &cerr), &cerr) == NMT_OK;
    nmt_model *m = NULL;
    s->made++;
    int rc = checked(nmt_model_create(&m, &c, src, tgt, byte(r), &err), &err);
    if (rc == NMT_OK) {
        require(ok_cfg, "a model created from a configuration nmt_config_check refuses");
        require(nmt_model_config(m)->tgt_vocab == c.tgt_vocab, "the model's configuration changed");
        require(nmt_model_num_params(m) > 0, "a model without parameters");
        if (s->model[k]) free_model(s, r, k);
        s->model[k] = m;
    } else {
        require(!ok_cfg || (flags & 3), "a valid configuration with valid words refused");
    }
}

/* Saves model slot k and loads the file into the other slot (a missing file first, sometimes). */
static void op_save_load(state *s, reader *r)
{
    int k = byte(r) % SLOTS, other = !k;
    const char *path = model_path();
    if (!s->model[k] || !path || s->made >= MAX_MODELS) return;
    nmt_err err = {0, ""};
    if (checked(nmt_model_save(s->model[k], path, &err), &err) != NMT_OK) return;
    nmt_model *m = NULL;
    if (byte(r) & 1) {
        char missing[112];
        snprintf(missing, sizeof missing, "%s/none.nmt", tmpdir);
        require(checked(nmt_model_load(&m, missing, &err), &err) == NMT_ERR_IO, "a missing file loaded");
    }
    s->made++;
    require(checked(nmt_model_load(&m, path, &err), &err) == NMT_OK, "a saved model does not load");
    require(nmt_model_num_params(m) == nmt_model_num_params(s->model[k]), "the loaded model differs in size");
    require(checked(nmt_model_check_vocab(s->model[k], "a", m, "b", &err), &err) == NMT_OK,
            "a loaded model's vocabularies differ");
    if (s->model[other]) free_model(s, r, other);
    s->model[other] = m;
}

/* A double from one byte: the usual values, bounds and just past them, and the non-finite. */
static double real(reader *r, const double *pick, int n)
{
    unsigned b = byte(r);
    if (b < 200) return pick[b % n];
    static const double odd[] = {-1, 0, 1e300, -1e300};
    return b < 204 ? odd[b - 200] : b < 230 ? NAN : INFINITY;
}

static nmt_translate_opts fuzz_opts(reader *r)
{
    static const double ratio[] = {2, 1, 0.5, 1.5}, alpha[] = {1, 0, 0.6, 10, 10.5, -0.1};
    static const double temp[] = {1, 0.5, 2, 0.001, 100, 0.0005, 101}, topp[] = {1, 0.9, 0.5, 0.01};
    nmt_translate_opts o = nmt_translate_default_opts();
    unsigned f = byte(r);
    o.beam = range(r, 0, MAX_BEAM);         /* 0: refused */
    o.n_best = range(r, 0, o.beam + 1);     /* past the beam: refused */
    o.normalize = f & 1;
    o.no_unk = f >> 1 & 1;
    o.attention = f >> 2 & 1;
    o.unk_replace = f >> 3 & 1;
    o.sample = f >> 4 & 1;
    o.batch = range(r, 0, 4);
    o.precision = range(r, 0, 3);           /* 3: unknown */
    o.max_ratio = real(r, ratio, 4);
    o.length_alpha = real(r, alpha, 6);
    o.sample_topk = range(r, 0, 5);
    o.temperature = real(r, temp, 7);
    o.sample_topp = real(r, topp, 4);
    o.seed = byte(r);
    return o;
}

/* A decoder on one model, or an ensemble of both with fuzzed weights. */
static void op_decoder(state *s, reader *r)
{
    static const double wpick[] = {1, 0.5, 2, 0, -1, 1e308};
    int k = byte(r) % SLOTS, on = byte(r) % 3;
    nmt_translate_opts o = fuzz_opts(r);
    nmt_err err = {0, ""};
    nmt_decoder *d = NULL;
    int rc, uses;
    if (on < 2) {
        if (!s->model[on]) return;
        rc = checked(nmt_decoder_init(&d, s->model[on], &o, &err), &err);
        uses = 1 << on;
    } else {
        if (!s->model[0] || !s->model[1]) return;
        const nmt_model *ms[2] = {s->model[0], s->model[1]};
        double w[2] = {real(r, wpick, 6), real(r, wpick, 6)};
        rc = checked(nmt_decoder_init_ensemble(&d, ms, byte(r) & 1 ? w : NULL, 2, &o, &err), &err);
        uses = 3;
    }
    if (rc != NMT_OK) return;
    free_decoder(s, k);
    s->dec[k] = d;
    s->dec_uses[k] = uses;
}

static void op_set_opts(state *s, reader *r)
{
    int k = byte(r) % SLOTS;
    nmt_translate_opts o = fuzz_opts(r);
    nmt_err err = {0, ""};
    if (s->dec[k]) checked(nmt_decoder_set_opts(s->dec[k], &o, &err), &err);
}

/* n sentences of up to MAX_WORDS tokens each: vocabulary words by number (some unknown), or a
 * few raw input bytes; buf holds them. */
static int sentences(reader *r, char buf[][MAX_WORDS * 8], const char **out)
{
    int n = range(r, 0, MAX_SENTS);
    for (int i = 0; i < n; i++) {
        int words = range(r, 0, MAX_WORDS);
        size_t at = 0;
        buf[i][0] = 0;
        for (int w = 0; w < words; w++) {
            unsigned b = byte(r);
            if (b < 200)
                at += (size_t)snprintf(buf[i] + at, 8, "%sw%u", w ? " " : "", b % (MAX_VOCAB + 4));
            else
                for (int j = 0; j < 3; j++) {
                    char c = (char)byte(r);
                    if (c) buf[i][at++] = c;
                }
            buf[i][at] = 0;
        }
        out[i] = buf[i];
    }
    return n;
}

static void check_translation(const nmt_translation *t)
{
    require(t->n_hyps >= 0 && (t->n_hyps == 0 || t->hyps), "hypotheses missing");
    for (int h = 0; h < t->n_hyps; h++) {
        const nmt_hypothesis *y = &t->hyps[h];
        require(y->n_words >= 0 && isfinite(y->logprob) && isfinite(y->score), "a hypothesis out of range");
        /* the attention's shape is set only where it is kept */
        require(!y->attention || y->attn_rows == y->n_words + y->finished, "attention rows are not the output tokens");
        require(!y->attention || y->attn_cols == t->n_src + 1, "attention columns are not the source");
        for (int i = 0; i < y->n_words; i++) {
            require(y->words[i] != NULL, "a hypothesis word is NULL");
            int j = nmt_hard_link(y, i);
            require(j >= -1 && j < t->n_src, "a hard link outside the source");
        }
    }
}

static void op_translate(state *s, reader *r)
{
    int k = byte(r) % SLOTS;
    char buf[MAX_SENTS][MAX_WORDS * 8];
    const char *src[MAX_SENTS];
    int n = sentences(r, buf, src);
    if (!s->dec[k] || s->decodes++ >= MAX_DECODES) return;
    nmt_translation t[MAX_SENTS];
    nmt_err err = {0, ""};
    if (checked(nmt_translate(s->dec[k], src, n, t, &err), &err) != NMT_OK) return;
    for (int i = 0; i < n; i++) check_translation(&t[i]);
    nmt_translation_free(t, n);
}

/* nmt_score or nmt_force_align on n fuzzed pairs. */
static void op_score(state *s, reader *r, int align)
{
    int k = byte(r) % SLOTS;
    char sb[MAX_SENTS][MAX_WORDS * 8], tb[MAX_SENTS][MAX_WORDS * 8];
    const char *src[MAX_SENTS], *tgt[MAX_SENTS];
    int n = sentences(r, sb, src), nt = sentences(r, tb, tgt);
    for (int i = nt; i < n; i++) tgt[i] = "";
    if (!s->dec[k] || s->decodes++ >= MAX_DECODES) return;
    nmt_err err = {0, ""};
    if (align) {
        nmt_alignment a[MAX_SENTS];
        if (checked(nmt_force_align(s->dec[k], src, tgt, n, a, &err), &err) != NMT_OK) return;
        for (int i = 0; i < n; i++) {
            require(a[i].n_src >= 0 && a[i].n_tgt >= 0 && a[i].logprob <= 1e-6, "an alignment out of range");
            require(a[i].token_logprob != NULL, "an alignment without token scores");
            double sum = 0;
            for (int j = 0; j <= a[i].n_tgt; j++) sum += a[i].token_logprob[j];
            require(fabs(sum - a[i].logprob) <= 1e-3 * (1 + fabs(sum)), "token scores do not sum to the score");
        }
        nmt_alignment_free(a, n);
    } else {
        double lp[MAX_SENTS];
        int toks[MAX_SENTS];
        if (checked(nmt_score(s->dec[k], src, tgt, n, lp, byte(r) & 1 ? toks : NULL, &err), &err) != NMT_OK) return;
        for (int i = 0; i < n; i++) require(isfinite(lp[i]) && lp[i] <= 1e-6, "a score out of range");
    }
}

/* A text pipeline: over a model's side, a word list or none; then an encode, a decode of fuzzed
 * ids and of words. */
static void op_text(state *s, reader *r)
{
    int k = byte(r) % SLOTS, how = byte(r) % 3, m = byte(r) % SLOTS;
    unsigned f = byte(r);
    nmt_text_opts o = nmt_text_default_opts();
    o.lang = range(r, -1, 3);  /* 3: unknown */
    o.tokenize = f & 1; o.lowercase = f >> 1 & 1; o.normalize_punct = f >> 2 & 1;
    o.aggressive = f >> 3 & 1; o.escape = f >> 4 & 1; o.detokenize = f >> 5 & 1;
    nmt_err err = {0, ""};
    nmt_text *t = NULL;
    int rc, uses = 0, n_words = range(r, 0, 6);
    const char *list[6] = {"</s>", "<unk>", "a", "man", "rides", "."};
    if (how == 0) {
        if (!s->model[m]) return;
        rc = nmt_text_init_model(&t, &o, s->model[m], byte(r) & 1, &err);
        uses = 1 << m;
    } else {
        rc = nmt_text_init(&t, &o, how == 1 ? list : NULL, n_words, &err);
    }
    if (checked(rc, &err) != NMT_OK) return;
    free_text(s, k);
    s->text[k] = t;
    s->text_uses[k] = uses;
    char line[64];
    size_t len = (size_t)range(r, 0, 63);
    for (size_t i = 0; i < len; i++) line[i] = (char)byte(r);
    nmt_text_line out;
    if (checked(nmt_text_encode(t, line, len, &out, &err), &err) == NMT_OK)
        require(out.text && out.n_words >= 0 && out.n_unk >= 0 && out.n_unk <= out.n_words, "an encoded line out of range");
    int ids[8], n = range(r, 0, 8);
    for (int i = 0; i < n; i++) ids[i] = range(r, -1, MAX_VOCAB + 1);
    const char *text;
    size_t tl;
    if (checked(nmt_text_decode(t, ids, n, &text, &tl, &err), &err) == NMT_OK)
        require(text && strlen(text) == tl, "a decoded line's length is wrong");
    const char *words[3] = {"a", "&amp;", "«x»"};
    n = range(r, 0, 3);
    if (checked(nmt_text_decode_words(t, words, n, &text, &tl, &err), &err) == NMT_OK)
        require(text && strlen(text) == tl, "decoded words' length is wrong");
    if (checked(nmt_text_decode_line(t, words, n, &out, &err), &err) == NMT_OK)
        require(out.text && out.n_words >= 0, "a decoded line out of range");
}

/* Corpus BLEU, chrF and the metric scorer on fuzzed lines; scores stay within 0..100. */
static void op_metric(reader *r)
{
    static const char *tok[] = {NULL, "13a", "intl", "none", "zh"};
    char hb[MAX_SENTS][MAX_WORDS * 8], rb[MAX_SENTS][MAX_WORDS * 8];
    const char *hyps[MAX_SENTS], *refs[MAX_SENTS];
    int n = sentences(r, hb, hyps), nr = sentences(r, rb, refs);
    for (int i = nr; i < n; i++) refs[i] = byte(r) & 1 ? NULL : "";
    const char *const *sets[1] = {refs};
    nmt_err err = {0, ""};
    nmt_bleu_result b;
    double sc;
    int which = byte(r) % 3, lower = byte(r) & 1;
    if (which == 0 && checked(nmt_bleu_corpus(hyps, sets, 1, n, tok[byte(r) % 5], lower, &b, &err), &err) == NMT_OK)
        require(b.score >= 0 && b.score <= 100 + 1e-9, "BLEU outside 0..100");
    if (which == 1 && checked(nmt_chrf_corpus(hyps, sets, 1, n, lower, &sc, &err), &err) == NMT_OK)
        require(sc >= 0 && sc <= 100 + 1e-9, "chrF outside 0..100");
    for (int i = nr; i < n; i++)
        if (!refs[i]) refs[i] = "";
    if (which == 2 && checked(nmt_metric_score(byte(r) % 4, hyps, refs, n, &sc, &err), &err) == NMT_OK)
        require(sc >= 0 && sc <= 100 + 1e-9, "a metric outside 0..100");
}

/* NULL where a handle belongs: NMT_ERR_ARG with a message, never a crash. */
static void op_null(state *s, reader *r)
{
    nmt_err err = {0, ""};
    const char *src[1] = {"w2"};
    nmt_translation t[1];
    double lp[1];
    nmt_decoder *d = NULL;
    nmt_translate_opts o = nmt_translate_default_opts();
    int rc;
    switch (byte(r) % 6) {
    case 0: rc = nmt_translate(NULL, src, 1, t, &err); break;
    case 1: rc = nmt_score(NULL, src, src, 1, lp, NULL, &err); break;
    case 2: rc = nmt_decoder_init(&d, NULL, &o, &err); break;
    case 3: rc = nmt_model_save(NULL, "x", &err); break;
    case 4: rc = s->dec[0] ? nmt_translate(s->dec[0], NULL, 1, t, &err) : NMT_ERR_ARG; break;
    default: rc = s->model[0] ? nmt_decoder_init(&d, s->model[0], NULL, &err) : NMT_ERR_ARG; break;
    }
    if (rc != NMT_ERR_ARG) nmt_decoder_free(d);
    require(rc == NMT_ERR_ARG, "a NULL argument accepted");
    if (err.code) checked(rc, &err);
}

/* The tensors of a model, one index fuzzed (out of range: refused). */
static void op_tensors(state *s, reader *r)
{
    const nmt_model *m = s->model[byte(r) % SLOTS];
    if (!m) return;
    int n = nmt_model_num_tensors(m), i = range(r, -1, 40);
    const char *name;
    int ndim;
    int64_t shape[2];
    float v[64 * 64];
    nmt_err err = {0, ""};
    int rc = checked(nmt_model_tensor(m, i, &name, &ndim, shape, NULL, &err), &err);
    require((rc == NMT_OK) == (i >= 0 && i < n), "a tensor index checked wrongly");
    if (rc == NMT_OK && shape[0] * (ndim > 1 ? shape[1] : 1) <= 64 * 64)
        checked(nmt_model_tensor(m, i, &name, &ndim, shape, v, &err), &err);
}

static void op_free(state *s, reader *r)
{
    int k = byte(r) % SLOTS;
    switch (byte(r) % 3) {
    case 0: free_decoder(s, k); break;
    case 1: free_text(s, k); break;
    default: if (s->model[k]) free_model(s, r, k); break;
    }
}

static void free_all(state *s, reader *r)
{
    int first = byte(r) % SLOTS;
    for (int j = 0; j < SLOTS; j++) {
        int k = (first + j) % SLOTS;
        if (s->model[k]) free_model(s, r, k);
        free_decoder(s, k);
        free_text(s, k);
    }
}

int fuzz_api(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    state s;
    memset(&s, 0, sizeof s);
    nmt_set_threads(1);
    for (int op = 0; op < MAX_OPS && !spent(&r); op++) {
        switch (byte(&r) % 12) {
        case 0: op_create(&s, &r); break;
        case 1: op_save_load(&s, &r); break;
        case 2: op_decoder(&s, &r); break;
        case 3: op_set_opts(&s, &r); break;
        case 4: op_translate(&s, &r); break;
        case 5: op_score(&s, &r, 0); break;
        case 6: op_score(&s, &r, 1); break;
        case 7: op_text(&s, &r); break;
        case 8: op_metric(&r); break;
        case 9: op_null(&s, &r); break;
        case 10: op_tensors(&s, &r); break;
        default: op_free(&s, &r); break;
        }
    }
    free_all(&s, &r);
    return 0;
}
