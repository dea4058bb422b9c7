/* translator.c: nmt._nmt.Translator, one model or an ensemble loaded once and shared by every
 * Python thread that calls it, over libnmt's translator (nmt_translator_init): each call takes
 * a worker (a decoder with the model's text pipelines) and gives it back after, so N threads
 * calling together decode on N workers while the GIL is released. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define MAX_MODELS 16

typedef struct translator {
    PyObject_HEAD
    nmt_model *m[MAX_MODELS];
    int n;
    double weight[MAX_MODELS];
    int weighted;
    nmt_shortlist *sl;
    nmt_lexicon *lx;
    int precision;
    nmt_text_opts so, to; /* the text stages asked for (the model's own apply anyway) */
    nmt_translator *tr;   /* the workers (libnmt's) */
} translator;

static void translator_dealloc(translator *t)
{
    nmt_translator_free(t->tr);
    nmt_shortlist_free(t->sl);
    nmt_lexicon_free(t->lx);
    for (int k = 0; k < t->n; k++) nmt_model_free(t->m[k]);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

/* ------------------------------------------------------------------ construction */

/* The models of paths, checked to share their vocabularies, and their weights (None: equal). */
static int load_models(translator *t, PyObject *paths, PyObject *weights)
{
    strv p;
    if (strv_of_texts(&p, paths, "paths")) return -1;
    if (p.n < 1 || p.n > MAX_MODELS) {
        PyErr_Format(nmtpy_arg_error, "%zd models: give 1 to %d", p.n, MAX_MODELS);
        strv_free(&p);
        return -1;
    }
    nmt_err err = {0, ""};
    int rc = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int k = 0; k < p.n && !rc; k++) {
        rc = nmt_model_load(&t->m[k], p.s[k], &err);
        if (!rc) t->n++;
        if (!rc && k) rc = nmt_model_check_vocab(t->m[0], p.s[0], t->m[k], p.s[k], &err);
    }
    Py_END_ALLOW_THREADS
    strv_free(&p);
    if (rc) return nmtpy_raise(rc, &err), -1;
    if (weights == Py_None) return 0;
    PyObject *fast = PySequence_Fast(weights, "weights: expected a list of numbers");
    if (!fast) return -1;
    int bad = PySequence_Fast_GET_SIZE(fast) != t->n;
    for (int k = 0; !bad && k < t->n; k++) {
        t->weight[k] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, k));
        bad = PyErr_Occurred() != NULL;
    }
    Py_DECREF(fast);
    if (bad && !PyErr_Occurred()) PyErr_Format(nmtpy_arg_error, "weights: give one per model (%d)", t->n);
    t->weighted = 1;
    return bad ? -1 : 0;
}

/* enum nmt_precision of a name, or -1 with an exception */
static int precision_of(const char *name)
{
    static const char *const names[] = {"fp32", "int8", "bf16"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, names[i])) return i;
    PyErr_Format(nmtpy_arg_error, "precision '%s': expected fp32, int8 or bf16", name);
    return -1;
}

static int translator_init(translator *t, PyObject *args, PyObject *kw)
{
    static char *kws[] = {"paths", "weights", "precision", "shortlist", "shortlist_k", "shortlist_f", "lexicon", "tokenize",
                          "detokenize", "lowercase", "normalize_punct", NULL};
    PyObject *paths, *weights = Py_None;
    nmtpy_str prec = {"precision", 0, "fp32"}, sl = {"shortlist", 1, NULL}, lx = {"lexicon", 1, NULL},
              tok = {"tokenize", 1, NULL}, detok = {"detokenize", 1, NULL};
    int k = 100, f = 100;
    if (t->n) { /* before anything changes: a second call must leave a working Translator as it was */
        PyErr_SetString(PyExc_RuntimeError, "Translator.__init__ called twice");
        return -1;
    }
    t->so = nmt_text_default_opts();
    t->to = nmt_text_default_opts();
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO&O&iiO&O&O&pp", kws, &paths, &weights, nmtpy_str_arg, &prec,
                                     nmtpy_str_arg, &sl, &k, &f, nmtpy_str_arg, &lx, nmtpy_str_arg, &tok, nmtpy_str_arg,
                                     &detok, &t->so.lowercase, &t->so.normalize_punct))
        return -1;
    if ((t->precision = precision_of(prec.s)) < 0 || (t->so.lang = nmtpy_lang(tok.s)) < -1 ||
        (t->to.lang = nmtpy_lang(detok.s)) < -1 || load_models(t, paths, weights))
        return -1;
    t->so.tokenize = t->so.lang >= 0;
    t->to.detokenize = t->to.lang >= 0;
    nmt_err err = {0, ""};
    int rc = 0;
    nmt_translate_opts o = nmt_translate_default_opts();
    Py_BEGIN_ALLOW_THREADS
    if (sl.s) rc = nmt_shortlist_load(&t->sl, sl.s, t->m[0], k, f, &err);
    if (!rc && lx.s) rc = nmt_lexicon_load(&t->lx, lx.s, &err);
    o.precision = t->precision;
    o.shortlist = t->sl;
    o.lexicon = t->lx;
    if (!rc) rc = nmt_translator_init(&t->tr, (const nmt_model *const *)t->m, t->weighted ? t->weight : NULL, t->n, &o, &t->so,
                                      &t->to, &err);
    Py_END_ALLOW_THREADS
    return rc ? (nmtpy_raise(rc, &err), -1) : 0;
}

/* ------------------------------------------------------------------ workers */

/* A worker of t with options o (the call's); NULL with an exception. */
static nmt_worker *worker_take(translator *t, const nmt_translate_opts *o)
{
    nmt_err err = {0, ""};
    nmt_worker *w = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nmt_worker_take(t->tr, o, &w, &err);
    Py_END_ALLOW_THREADS
    return rc ? (nmtpy_raise(rc, &err), NULL) : w;
}

/* ------------------------------------------------------------------ decoding options */

/* Asked by libnmt before each batch, without the GIL (nmt_translate_opts.stop): takes it and runs
 * Python's signal handlers, so that Ctrl-C (KeyboardInterrupt, left pending) stops a long call
 * within a batch instead of at its end. Non-zero to stop. */
static int check_signals(void *unused)
{
    (void)unused;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = PyErr_CheckSignals() != 0;
    PyGILState_Release(g);
    return stop;
}

/* The translate options of a call's keywords (translate_batch's and translate's). */
static int decode_opts(translator *t, PyObject *args, PyObject *kw, PyObject **input, nmt_translate_opts *o, int *links)
{
    static char *kws[] = {"input", "beam_size", "num_hypotheses", "length_penalty", "normalize", "max_ratio",
                          "max_decoding_length", "return_attention", "return_alignment", "sampling", "sampling_topk",
                          "sampling_topp", "sampling_temperature", "seed", "no_unk", "unk_replace", "batch_size", NULL};
    *o = nmt_translate_default_opts();
    unsigned long long seed = o->seed;
    int attention = 0;
    *links = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|iidpdipppiddKppi", kws, input, &o->beam, &o->n_best, &o->length_alpha,
                                     &o->normalize, &o->max_ratio, &o->max_len, &attention, links, &o->sample, &o->sample_topk,
                                     &o->sample_topp, &o->temperature, &seed, &o->no_unk, &o->unk_replace, &o->batch))
        return -1;
    o->seed = seed;
    o->attention = attention || *links;
    o->precision = t->precision;
    o->shortlist = t->sl;
    o->lexicon = t->lx;
    o->stop = check_signals;
    if (o->max_len < 0) {
        PyErr_Format(nmtpy_arg_error, "max_decoding_length %d: must be positive (0: no limit)", o->max_len);
        return -1;
    }
    if (!o->sample && o->n_best > o->beam) {
        PyErr_Format(nmtpy_arg_error, "num_hypotheses %d is larger than the beam (%d)", o->n_best, o->beam);
        return -1;
    }
    return 0;
}

/* A sentence's error from libnmt ("sentence K: ...", K from 1) names it as the caller's list
 * does: what[K-1] (source[58] for the 59th). */
static void name_sentence(nmt_err *err, const char *what)
{
    int k, used = 0;
    if (sscanf(err->msg, "sentence %d%n", &k, &used) != 1 || used == 0 || k < 1) return;
    char rest[sizeof err->msg];
    snprintf(rest, sizeof rest, "%s", err->msg + used);
    snprintf(err->msg, sizeof err->msg, "%s[%d]%.990s", what, k - 1, rest); /* room for the name */
}

/* ------------------------------------------------------------------ prefixes and constraints */

/* translate_batch's target_prefix (a token list per sentence, empty for none) and constraints (a
 * list of phrases per sentence, each a token list), read into nmt_hint's for n sentences. */
typedef struct hints {
    strv prefix;          /* [n] joined tokens, or none */
    strv *phrases;        /* [n] each sentence's phrases, joined */
    nmt_hint *h;          /* [n], or NULL when neither was given */
} hints;

static void hints_free(hints *x, Py_ssize_t n)
{
    strv_free(&x->prefix);
    for (Py_ssize_t i = 0; x->phrases && i < n; i++) strv_free(&x->phrases[i]);
    free(x->phrases);
    free(x->h);
}

/* *kw without target_prefix and constraints (a new reference, or NULL), their values in *pfx and
 * *cons (borrowed from *kw as given, or NULL): 0, or -1 with an exception. */
static int hints_take(PyObject **kw, PyObject **pfx, PyObject **cons)
{
    *pfx = *cons = NULL;
    if (!*kw) return 0;
    PyObject *rest = PyDict_Copy(*kw);
    if (!rest) return -1;
    *pfx = PyDict_GetItemString(*kw, "target_prefix");
    *cons = PyDict_GetItemString(*kw, "constraints");
    if ((*pfx && PyDict_DelItemString(rest, "target_prefix")) || (*cons && PyDict_DelItemString(rest, "constraints"))) {
        Py_DECREF(rest);
        return -1;
    }
    if (*pfx == Py_None) *pfx = NULL;
    if (*cons == Py_None) *cons = NULL;
    *kw = rest;
    return 0;
}

/* One sentence per entry of pfx and cons (either may be NULL) for n sentences: 0, or -1 with an
 * exception. */
static int hints_read(hints *x, PyObject *pfx, PyObject *cons, Py_ssize_t n)
{
    memset(x, 0, sizeof *x);
    if (!pfx && !cons) return 0;
    if (pfx && strv_of_tokens(&x->prefix, pfx, "target_prefix")) return -1;
    if (pfx && x->prefix.n != n) {
        PyErr_Format(nmtpy_arg_error, "target_prefix has %zd entries for %zd sentences", x->prefix.n, n);
        return -1;
    }
    PyObject *fast = cons ? PySequence_Fast(cons, "constraints: expected a list (per sentence) of lists of phrases") : NULL;
    if (cons && !fast) return -1;
    if (fast && PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(nmtpy_arg_error, "constraints has %zd entries for %zd sentences", PySequence_Fast_GET_SIZE(fast), n);
        Py_DECREF(fast);
        return -1;
    }
    x->phrases = calloc((size_t)(n ? n : 1), sizeof *x->phrases);
    x->h = calloc((size_t)(n ? n : 1), sizeof *x->h);
    int rc = x->phrases && x->h ? 0 : (PyErr_NoMemory(), -1);
    char what[48];
    for (Py_ssize_t i = 0; !rc && i < n; i++) {
        snprintf(what, sizeof what, "constraints[%zd]", i);
        if (fast && (rc = strv_of_tokens(&x->phrases[i], PySequence_Fast_GET_ITEM(fast, i), what))) break;
        if (x->phrases[i].n > NMT_MAX_PHRASES) {
            PyErr_Format(nmtpy_arg_error, "%s: %zd phrases, at most %d", what, x->phrases[i].n, NMT_MAX_PHRASES);
            rc = -1;
            break;
        }
        x->h[i] = (nmt_hint){pfx ? x->prefix.s[i] : NULL, x->phrases[i].s, (int)x->phrases[i].n};
    }
    Py_XDECREF(fast);
    return rc;
}

/* ------------------------------------------------------------------ results */

/* One hypothesis as (tokens, score, logprob, attention bytes or None, rows, cols, links or None). */
static PyObject *hyp_tuple(nmt_worker *w, const nmt_hypothesis *h, int links)
{
    (void)w;
    PyObject *words = PyList_New(h->n_words);
    for (int i = 0; words && i < h->n_words; i++) {
        PyObject *w = PyUnicode_DecodeUTF8(h->words[i], (Py_ssize_t)strlen(h->words[i]), "replace");
        if (!w) { Py_CLEAR(words); break; }
        PyList_SET_ITEM(words, i, w);
    }
    PyObject *l = Py_None;
    Py_INCREF(l);
    if (links && h->attention) {
        Py_DECREF(l);
        l = nmtpy_links(h->attention, h->attn_cols - 1, h->n_words);
    }
    if (!words || !l) {
        Py_XDECREF(words);
        Py_XDECREF(l);
        return NULL;
    }
    return Py_BuildValue("(NddNiiN)", words, h->score, h->logprob, nmtpy_matrix(h->attention, h->attn_rows, h->attn_cols),
                         h->attn_rows, h->attn_cols, l);
}

/* One hypothesis of a result: what translate_batch or translate returns for it. */
typedef PyObject *(*hyp_fn)(nmt_worker *w, const nmt_hypothesis *h, int links);

/* The translations tr[0..n) as a list of lists of fn's answers. */
static PyObject *translations_list(nmt_worker *w, const nmt_translation *tr, int n, hyp_fn fn, int links)
{
    PyObject *out = PyList_New(n);
    for (int i = 0; out && i < n; i++) {
        PyObject *hs = PyList_New(tr[i].n_hyps);
        for (int h = 0; hs && h < tr[i].n_hyps; h++) {
            PyObject *x = fn(w, &tr[i].hyps[h], links);
            if (!x) { Py_CLEAR(hs); break; }
            PyList_SET_ITEM(hs, h, x);
        }
        if (!hs) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, i, hs);
    }
    return out;
}

/* translate_batch(input: list of token lists, **options) -> [[(tokens, score, logprob, attention, rows, cols, links)]] */
static PyObject *translator_translate_batch(translator *t, PyObject *args, PyObject *kw)
{
    PyObject *input, *pfx, *cons, *kw_in = kw;
    nmt_translate_opts o;
    int links;
    if (hints_take(&kw, &pfx, &cons)) return NULL;
    int bad = decode_opts(t, args, kw, &input, &o, &links);
    if (kw != kw_in) Py_DECREF(kw);
    if (bad) return NULL;
    strv src;
    if (strv_of_tokens(&src, input, "input")) return NULL;
    hints hs;
    nmt_translation *tr = hints_read(&hs, pfx, cons, src.n) ? NULL : calloc((size_t)(src.n ? src.n : 1), sizeof *tr);
    nmt_worker *w = tr ? worker_take(t, &o) : PyErr_Occurred() ? NULL : (nmt_worker *)PyErr_NoMemory();
    if (!w) {
        free(tr);
        strv_free(&src);
        hints_free(&hs, src.n);
        return NULL;
    }
    nmt_err err = {0, ""};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    nmt_decoder *d = nmt_worker_decoder(w);
    rc = hs.h ? nmt_translate_hints(d, src.s, hs.h, (int)src.n, tr, &err) : nmt_translate(d, src.s, (int)src.n, tr, &err);
    Py_END_ALLOW_THREADS
    nmt_worker_give(w);
    name_sentence(&err, "source");
    PyObject *out = rc ? nmtpy_raise(rc, &err) : translations_list(w, tr, (int)src.n, hyp_tuple, links);
    nmt_translation_free(tr, (int)src.n);
    free(tr);
    strv_free(&src);
    hints_free(&hs, src.n);
    return out;
}

/* texts[0..n) read by the worker into s[0..n), then translated */
static int translate_texts(nmt_worker *w, const char *const *texts, int n, nmt_sentence *s, nmt_translation *tr,
                           nmt_err *err)
{
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) rc = nmt_worker_encode(w, texts[i], strlen(texts[i]), &s[i], err);
    return rc ? rc : nmt_worker_translate(w, s, n, tr, err);
}

/* Hypothesis h's text through the worker's target pipeline, and its score: (text, score). */
static PyObject *text_tuple(nmt_worker *w, const nmt_hypothesis *h, int links)
{
    (void)links;
    const char *text;
    size_t len;
    nmt_err err = {0, ""};
    int rc = nmt_text_decode_words(nmt_worker_text(w, NMT_TARGET), h->words, h->n_words, &text, &len, &err);
    PyObject *s = rc ? nmtpy_raise(rc, &err) : PyUnicode_DecodeUTF8(text, (Py_ssize_t)len, "replace");
    return s ? Py_BuildValue("(Nd)", s, h->score) : NULL;
}

/* translate(texts, **options) -> [[(text, score)]]: raw text in and out through the model's
 * text stages (and the ones the Translator was given), as nmt translate does */
static PyObject *translator_translate(translator *t, PyObject *args, PyObject *kw)
{
    PyObject *input;
    nmt_translate_opts o;
    int links;
    if (decode_opts(t, args, kw, &input, &o, &links)) return NULL;
    o.attention = 0;
    strv texts;
    if (strv_of_texts(&texts, input, "texts")) return NULL;
    int n = (int)texts.n;
    nmt_sentence *src = calloc((size_t)(n ? n : 1), sizeof *src);
    nmt_translation *tr = calloc((size_t)(n ? n : 1), sizeof *tr);
    nmt_worker *w = src && tr ? worker_take(t, &o) : (nmt_worker *)PyErr_NoMemory();
    nmt_err err = {0, ""};
    int rc = w ? 0 : -1;
    if (w) {
        Py_BEGIN_ALLOW_THREADS
        rc = translate_texts(w, texts.s, n, src, tr, &err);
        Py_END_ALLOW_THREADS
        name_sentence(&err, "texts");
    }
    PyObject *out = !w ? NULL : rc ? nmtpy_raise(rc, &err) : translations_list(w, tr, n, text_tuple, 0);
    if (w) nmt_worker_give(w);
    if (tr) nmt_translation_free(tr, n);
    for (int i = 0; src && i < n; i++) nmt_sentence_free(&src[i]);
    free(src);
    free(tr);
    strv_free(&texts);
    return out;
}

/* ------------------------------------------------------------------ forced decoding */

/* One pair as (logprob, token log-probabilities, attention bytes or None, rows, cols, links). */
static PyObject *alignment_tuple(const nmt_alignment *a)
{
    PyObject *lp = nmtpy_float_list(a->token_logprob, a->n_tgt + 1);
    PyObject *links = lp ? nmtpy_links(a->attention, a->n_src, a->n_tgt) : NULL;
    if (!links) {
        Py_XDECREF(lp);
        return NULL;
    }
    return Py_BuildValue("(dNNiiN)", a->logprob, lp, nmtpy_matrix(a->attention, a->n_tgt + 1, a->n_src + 1), a->n_tgt + 1,
                         a->n_src + 1, links);
}

/* force(source, target) -> [(logprob, token logprobs, attention, rows, cols, links)], both
 * token lists: score_batch and align */
static PyObject *translator_force(translator *t, PyObject *args)
{
    PyObject *s, *g;
    if (!PyArg_ParseTuple(args, "OO", &s, &g)) return NULL;
    strv src, tgt;
    if (strv_of_tokens(&src, s, "source")) return NULL;
    if (strv_of_tokens(&tgt, g, "target")) {
        strv_free(&src);
        return NULL;
    }
    if (src.n != tgt.n) {
        PyErr_Format(nmtpy_arg_error, "%zd source sentences for %zd targets", src.n, tgt.n);
        strv_free(&src);
        strv_free(&tgt);
        return NULL;
    }
    nmt_translate_opts o = nmt_translate_default_opts();
    o.precision = t->precision; /* as the worker has it: no conversion of the weights again */
    o.shortlist = t->sl;
    o.stop = check_signals;
    int n = (int)src.n;
    nmt_alignment *al = calloc((size_t)(n ? n : 1), sizeof *al);
    nmt_worker *w = al ? worker_take(t, &o) : (nmt_worker *)PyErr_NoMemory();
    nmt_err err = {0, ""};
    int rc = w ? 0 : -1;
    if (w) {
        Py_BEGIN_ALLOW_THREADS
        rc = nmt_force_align(nmt_worker_decoder(w), src.s, tgt.s, n, al, &err);
        Py_END_ALLOW_THREADS
        nmt_worker_give(w);
    }
    PyObject *out = !w ? NULL : rc ? nmtpy_raise(rc, &err) : PyList_New(n);
    for (int i = 0; out && !rc && i < n; i++) {
        PyObject *x = alignment_tuple(&al[i]);
        if (!x) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, i, x);
    }
    if (al && !rc) nmt_alignment_free(al, n);
    free(al);
    strv_free(&src);
    strv_free(&tgt);
    return out;
}

/* The configuration of the first model, and the number of models. */
static PyObject *translator_info(translator *t, PyObject *unused)
{
    (void)unused;
    const nmt_config *c = nmt_model_config(t->m[0]);
    return Py_BuildValue("{s:s,s:i,s:i,s:i,s:n}", "arch", nmt_arch_name(c->arch), "src_vocab", c->src_vocab, "tgt_vocab",
                         c->tgt_vocab, "models", t->n, "params", (Py_ssize_t)nmt_model_num_params(t->m[0]));
}

static PyMethodDef translator_methods[] = {
    {"translate_batch", (PyCFunction)(void (*)(void))translator_translate_batch, METH_VARARGS | METH_KEYWORDS, NULL},
    {"translate", (PyCFunction)(void (*)(void))translator_translate, METH_VARARGS | METH_KEYWORDS, NULL},
    {"force", (PyCFunction)translator_force, METH_VARARGS, NULL},
    {"info", (PyCFunction)translator_info, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject nmtpy_translator_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "nmt._nmt.Translator",
    .tp_basicsize = sizeof(translator),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A model (or an ensemble) loaded once, shared by threads.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)translator_init,
    .tp_dealloc = (destructor)translator_dealloc,
    .tp_methods = translator_methods,
};
