/* worker.c: the translation worker every front end translates with (nmt.h, "Translators and
 * workers"): a decoder with the model's text pipelines, lent by a translator from its list of
 * idle workers. Text is split and looked up once, by the pipelines; the search reads the ids. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "data/vocab.h"
#include "nn/model.h"

#define MAX_ENSEMBLE 64

struct nmt_worker {
    nmt_translator *t;
    nmt_decoder *d;
    nmt_text *src;   /* input text -> source tokens */
    nmt_text *tgt;   /* output tokens -> text */
    nmt_text *hint;  /* prefixes and phrases: target text with the model's own stages only */
    nmt_worker *next;
};

struct nmt_translator {
    const nmt_model *m[MAX_ENSEMBLE];
    double w[MAX_ENSEMBLE];
    int n, weighted;
    nmt_translate_opts o;   /* the fixed fields (precision, shortlist, lexicon, invariance) */
    nmt_text_opts so, to;
    pthread_mutex_t mu;     /* guards idle */
    nmt_worker *idle;
    int lent;               /* workers out, for nmt_translator_free's check */
};

static void worker_free(nmt_worker *w)
{
    if (!w) return;
    nmt_decoder_free(w->d);
    nmt_text_free(w->src);
    nmt_text_free(w->tgt);
    nmt_text_free(w->hint);
    free(w);
}

/* o with the translator's fixed fields: a worker then converts nothing when it changes options */
static nmt_translate_opts fixed(const nmt_translator *t, const nmt_translate_opts *o)
{
    nmt_translate_opts x = o ? *o : t->o;
    x.precision = t->o.precision;
    x.shortlist = t->o.shortlist;
    x.lexicon = t->o.lexicon;
    x.batch_invariant = t->o.batch_invariant;
    return x;
}

static int worker_new(nmt_translator *t, const nmt_translate_opts *o, nmt_worker **out, nmt_err *err)
{
    nmt_worker *w = calloc(1, sizeof *w);
    if (!w) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    w->t = t;
    nmt_text_opts plain = nmt_text_default_opts();
    int rc = nmt_decoder_init_ensemble(&w->d, t->m, t->weighted ? t->w : NULL, t->n, o, err);
    if (!rc) rc = nmt_text_init_model(&w->src, &t->so, t->m[0], NMT_SOURCE, err);
    if (!rc) rc = nmt_text_init_model(&w->tgt, &t->to, t->m[0], NMT_TARGET, err);
    if (!rc) rc = nmt_text_init_model(&w->hint, &plain, t->m[0], NMT_TARGET, err);
    if (rc) worker_free(w);
    else *out = w;
    return rc;
}

int nmt_translator_init(nmt_translator **out, const nmt_model *const *models, const double *weights, int n,
                        const nmt_translate_opts *o, const nmt_text_opts *src, const nmt_text_opts *tgt, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_translator_init", out, models, o);
    if (bad) return bad;
    *out = NULL;
    if (n < 1 || n > MAX_ENSEMBLE) return nmt_fail(err, NMT_ERR_ARG, "nmt_translator_init: %d models, out of range [1, %d]", n, MAX_ENSEMBLE);
    nmt_translator *t = calloc(1, sizeof *t);
    if (!t) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++) {
        t->m[k] = models[k];
        if (weights) t->w[k] = weights[k];
    }
    t->n = n;
    t->weighted = weights != NULL;
    t->o = *o;
    t->so = src ? *src : nmt_text_default_opts();
    t->to = tgt ? *tgt : nmt_text_default_opts();
    pthread_mutex_init(&t->mu, NULL);
    /* the first worker now: options, precision and text stages are refused here, not later */
    nmt_worker *w = NULL;
    int rc = worker_new(t, o, &w, err);
    if (rc) {
        nmt_translator_free(t);
        return rc;
    }
    t->idle = w;
    *out = t;
    return NMT_OK;
}

void nmt_translator_free(nmt_translator *t)
{
    if (!t) return;
    if (t->lent) nmt_log('W', "nmt_translator_free: %d workers were not given back (they are leaked)", t->lent);
    while (t->idle) {
        nmt_worker *w = t->idle;
        t->idle = w->next;
        worker_free(w);
    }
    pthread_mutex_destroy(&t->mu);
    free(t);
}

int nmt_worker_take(nmt_translator *t, const nmt_translate_opts *o, nmt_worker **out, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_worker_take", t, out);
    if (bad) return bad;
    nmt_translate_opts x = fixed(t, o);
    pthread_mutex_lock(&t->mu);
    nmt_worker *w = t->idle;
    if (w) t->idle = w->next;
    pthread_mutex_unlock(&t->mu);
    int rc = w ? nmt_decoder_set_opts(w->d, &x, err) : worker_new(t, &x, &w, err);
    pthread_mutex_lock(&t->mu);
    if (rc && w) { /* unchanged by the refused options: back in the list */
        w->next = t->idle;
        t->idle = w;
    }
    t->lent += !rc;
    pthread_mutex_unlock(&t->mu);
    if (rc) return rc;
    w->next = NULL;
    *out = w;
    return NMT_OK;
}

void nmt_worker_give(nmt_worker *w)
{
    if (!w) return;
    nmt_translator *t = w->t;
    pthread_mutex_lock(&t->mu);
    w->next = t->idle;
    t->idle = w;
    t->lent--;
    pthread_mutex_unlock(&t->mu);
}

nmt_decoder *nmt_worker_decoder(nmt_worker *w) { return w ? w->d : NULL; }

nmt_text *nmt_worker_text(nmt_worker *w, int side) { return !w ? NULL : side == NMT_SOURCE ? w->src : w->tgt; }

/* ------------------------------------------------------------------ sentences */

void nmt_sentence_free(nmt_sentence *s)
{
    if (!s) return;
    free(s->mem_);
    free(s->hint_mem_);
    memset(s, 0, sizeof *s);
}

int nmt_sentence_encode(nmt_text *t, const char *line, size_t len, nmt_sentence *s, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_sentence_encode", t, line, s);
    if (bad) return bad;
    memset(s, 0, sizeof *s);
    nmt_text_line l;
    int rc = nmt_text_encode(t, line, len, &l, err);
    if (rc) return rc;
    if (!l.ids) return nmt_fail(err, NMT_ERR_ARG, "nmt_sentence_encode: the pipeline has no vocabulary");
    size_t wlen = 1;
    for (int k = 0; k < l.n_text_words; k++) wlen += strlen(l.text_words[k]) + 1;
    size_t ints = 2 * (size_t)l.n_words + 1, bytes = ints * sizeof(int) + l.len + 1 + wlen;
    char *mem = malloc(bytes);
    if (!mem) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    int *ids = (int *)mem, *word_of = ids + l.n_words;
    char *tokens = mem + ints * sizeof(int), *words = tokens + l.len + 1, *p = words;
    memcpy(ids, l.ids, sizeof(int) * (size_t)l.n_words);
    memcpy(word_of, l.word_of, sizeof(int) * (size_t)l.n_words);
    memcpy(tokens, l.text, l.len);
    tokens[l.len] = 0;
    for (int k = 0; k < l.n_text_words; k++) {
        size_t n = strlen(l.text_words[k]);
        if (k) *p++ = ' ';
        memcpy(p, l.text_words[k], n);
        p += n;
    }
    *p = 0;
    s->src = (nmt_source){ids, l.n_words, tokens};
    s->map = (nmt_word_map){l.n_words, word_of, l.n_text_words};
    s->n_unk = l.n_unk;
    s->n_invalid = l.n_invalid;
    s->words = words;
    s->mem_ = mem;
    return NMT_OK;
}

int nmt_worker_encode(nmt_worker *w, const char *line, size_t len, nmt_sentence *s, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_worker_encode", w);
    return bad ? bad : nmt_sentence_encode(w->src, line, len, s, err);
}

/* Room for k more hint tokens and a phrase offset; the hint's pointers follow the array. The
 * array holds the prefix's tokens, then the phrases' (the offsets kept apart, in off_). */
static int hint_room(nmt_sentence *s, int k, nmt_err *err)
{
    int used = s->hint.n_prefix + (s->hint.n_phrases ? s->off_[s->hint.n_phrases] : 0);
    if (used + k > s->hint_cap_ || !s->hint_mem_) { /* never NULL after: an empty prefix points somewhere */
        int cap = 2 * (used + k) + 8;
        int *m = realloc(s->hint_mem_, sizeof(int) * (size_t)cap);
        if (!m) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        s->hint_mem_ = m;
        s->hint_cap_ = cap;
    }
    s->hint.prefix = s->hint_mem_;
    s->hint.tokens = s->hint_mem_ + s->hint.n_prefix;
    s->hint.offsets = s->off_;
    return NMT_OK;
}

/* text through the hint pipeline: its tokens, each one the model can be asked for */
static int hint_line(nmt_worker *w, const char *text, const char *what, nmt_text_line *l, nmt_err *err)
{
    int rc = nmt_text_encode(w->hint, text, strlen(text), l, err);
    for (int k = 0; !rc && k < l->n_words; k++) {
        if (l->ids[k] == VOCAB_UNK && strcmp(l->words[k], VOCAB_UNK_STR))
            return nmt_fail(err, NMT_ERR_ARG, "%s: '%s' is not in the model's target vocabulary", what, l->words[k]);
        if (l->ids[k] == VOCAB_UNK || l->ids[k] == VOCAB_EOS)
            return nmt_fail(err, NMT_ERR_ARG, "%s: '%s' cannot be asked for", what, l->words[k]);
    }
    return rc;
}

int nmt_worker_prefix(nmt_worker *w, nmt_sentence *s, const char *text, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_worker_prefix", w, s, text);
    if (bad) return bad;
    if (s->hint.n_prefix || s->hint.n_phrases)
        return nmt_fail(err, NMT_ERR_ARG, "nmt_worker_prefix: the prefix goes first, once");
    nmt_text_line l;
    int rc = hint_line(w, text, "the prefix", &l, err);
    if (!rc) rc = hint_room(s, l.n_words, err);
    if (rc) return rc;
    if (l.n_words) memcpy(s->hint_mem_, l.ids, sizeof(int) * (size_t)l.n_words);
    s->hint.n_prefix = l.n_words;
    return hint_room(s, 0, err);
}

int nmt_worker_phrase(nmt_worker *w, nmt_sentence *s, const char *text, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_worker_phrase", w, s, text);
    if (bad) return bad;
    int c = s->hint.n_phrases;
    if (c == NMT_MAX_PHRASES) return nmt_fail(err, NMT_ERR_ARG, "more than %d constraint phrases", NMT_MAX_PHRASES);
    char what[32];
    snprintf(what, sizeof what, "constraint %d", c + 1);
    nmt_text_line l;
    int rc = hint_line(w, text, what, &l, err);
    if (!rc && l.n_words == 0) rc = nmt_fail(err, NMT_ERR_ARG, "%s is empty", what);
    if (!rc) rc = hint_room(s, l.n_words, err);
    if (rc) return rc;
    int at = c ? s->off_[c] : 0;
    memcpy(s->hint_mem_ + s->hint.n_prefix + at, l.ids, sizeof(int) * (size_t)l.n_words);
    s->off_[c] = at;
    s->off_[c + 1] = at + l.n_words;
    s->hint.n_phrases = c + 1;
    return hint_room(s, 0, err);
}

int nmt_worker_translate(nmt_worker *w, const nmt_sentence *s, int n, nmt_translation *out, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_worker_translate", w, s, out);
    if (bad) return bad;
    if (n < 0) return nmt_fail(err, NMT_ERR_ARG, "nmt_worker_translate: negative sentence count %d", n);
    if (n == 0) return NMT_OK;
    nmt_source *src = malloc(sizeof *src * (size_t)n);
    nmt_hint_ids *h = NULL;
    int any = 0;
    for (int i = 0; i < n; i++) any |= s[i].hint.n_prefix > 0 || s[i].hint.n_phrases > 0;
    if (any) h = malloc(sizeof *h * (size_t)n);
    if (!src || (any && !h)) {
        free(src);
        free(h);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        src[i] = s[i].src;
        if (h) h[i] = s[i].hint;
    }
    int rc = nmt_translate_ids(w->d, src, h, n, out, err);
    free(src);
    free(h);
    return rc;
}
