/* module.c: the nmt._nmt extension module over libnmt's public API: its exceptions and shared
 * helpers, and the functions that need no model object (metrics, the Moses tokenizer, a model
 * file's tensors, checkpoint averaging). The Translator is in translator.c, training in train.c.
 * Every call that computes releases the GIL. */
#include <stdlib.h>
#include <string.h>

#include "common.h"

PyObject *nmtpy_error, *nmtpy_arg_error, *nmtpy_file_error;

PyObject *nmtpy_raise(int rc, const nmt_err *err)
{
    if (rc == NMT_ERR_INTERRUPTED && PyErr_Occurred()) return NULL; /* the signal's own exception (KeyboardInterrupt) */
    PyObject *type = rc == NMT_ERR_ARG || rc == NMT_ERR_MISMATCH ? nmtpy_arg_error
                     : rc == NMT_ERR_IO                          ? nmtpy_file_error
                     : rc == NMT_ERR_NOMEM                       ? PyExc_MemoryError
                                                                 : nmtpy_error;
    PyErr_SetString(type, err->msg[0] ? err->msg : nmt_status_str(rc));
    return NULL;
}

const char *nmtpy_cstr(PyObject *o, const char *what)
{
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: expected str, got %s", what, Py_TYPE(o)->tp_name);
        return NULL;
    }
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(o, &n);
    if (s && memchr(s, 0, (size_t)n)) {
        PyErr_Format(nmtpy_arg_error, "%s holds a NUL character at %zd, which C would read as its end", what,
                     (Py_ssize_t)((const char *)memchr(s, 0, (size_t)n) - s));
        return NULL;
    }
    return s;
}

int nmtpy_str_arg(PyObject *o, void *str)
{
    nmtpy_str *a = str;
    if (o == Py_None && a->none_ok) {
        a->s = NULL;
        return 1;
    }
    return (a->s = nmtpy_cstr(o, a->what)) != NULL;
}

void strv_free(strv *v)
{
    free(v->s);
    Py_CLEAR(v->keep);
    v->s = NULL;
}

/* Appends the UTF-8 of str o to v (entry i, o kept alive in v->keep); what and i name it in errors. */
static int strv_put(strv *v, Py_ssize_t i, PyObject *o, const char *what)
{
    char name[96];
    snprintf(name, sizeof name, "%s[%zd]", what, i);
    return (v->s[i] = nmtpy_cstr(o, name)) ? PyList_Append(v->keep, o) : -1;
}

/* v sized for seq's items; the fast sequence in *fast (to release). */
static int strv_start(strv *v, PyObject *seq, PyObject **fast, const char *what)
{
    memset(v, 0, sizeof *v);
    if (PyUnicode_Check(seq)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a list of sentences, got one str", what);
        return -1;
    }
    if (!(*fast = PySequence_Fast(seq, what))) return -1;
    v->n = PySequence_Fast_GET_SIZE(*fast);
    v->s = malloc(sizeof *v->s * (size_t)(v->n ? v->n : 1));
    v->keep = PyList_New(0);
    if (!v->s || !v->keep) {
        Py_DECREF(*fast);
        strv_free(v);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

int strv_of_texts(strv *v, PyObject *seq, const char *what)
{
    PyObject *fast;
    if (strv_start(v, seq, &fast, what)) return -1;
    for (Py_ssize_t i = 0; i < v->n; i++)
        if (strv_put(v, i, PySequence_Fast_GET_ITEM(fast, i), what)) {
            Py_DECREF(fast);
            strv_free(v);
            return -1;
        }
    Py_DECREF(fast);
    return 0;
}

/* tokens (a sequence of str) joined by spaces, each checked; a new str or NULL. */
static PyObject *join_tokens(PyObject *tokens, const char *what, Py_ssize_t i)
{
    PyObject *fast = PyUnicode_Check(tokens) ? NULL : PySequence_Fast(tokens, "tokens");
    if (!fast) {
        PyErr_Format(PyExc_TypeError, "%s[%zd]: expected a list of tokens", what, i);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(fast); k++) {
        PyObject *t = PySequence_Fast_GET_ITEM(fast, k);
        if (!PyUnicode_Check(t)) {
            PyErr_Format(PyExc_TypeError, "%s[%zd][%zd]: expected str, got %s", what, i, k, Py_TYPE(t)->tp_name);
            Py_DECREF(fast);
            return NULL;
        }
        int bad = PyUnicode_GET_LENGTH(t) == 0;
        for (Py_ssize_t c = 0; !bad && c < PyUnicode_GET_LENGTH(t); c++)
            bad = Py_UNICODE_ISSPACE(PyUnicode_READ_CHAR(t, c)) || PyUnicode_READ_CHAR(t, c) == 0;
        if (bad) {
            PyErr_Format(nmtpy_arg_error, "%s[%zd][%zd]: a token must be a non-empty str without whitespace", what, i, k);
            Py_DECREF(fast);
            return NULL;
        }
    }
    PyObject *sep = PyUnicode_FromString(" "), *line = sep ? PyUnicode_Join(sep, fast) : NULL;
    Py_XDECREF(sep);
    Py_DECREF(fast);
    return line;
}

int strv_of_tokens(strv *v, PyObject *seq, const char *what)
{
    PyObject *fast;
    if (strv_start(v, seq, &fast, what)) return -1;
    for (Py_ssize_t i = 0; i < v->n; i++) {
        PyObject *line = join_tokens(PySequence_Fast_GET_ITEM(fast, i), what, i);
        int rc = line ? strv_put(v, i, line, what) : -1;
        Py_XDECREF(line);
        if (rc) {
            Py_DECREF(fast);
            strv_free(v);
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

PyObject *nmtpy_float_list(const double *x, int n)
{
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *f = PyFloat_FromDouble(x[i]);
        if (!f) { Py_DECREF(l); return NULL; }
        PyList_SET_ITEM(l, i, f);
    }
    return l;
}

PyObject *nmtpy_matrix(const float *a, int rows, int cols)
{
    if (!a) Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)a, (Py_ssize_t)sizeof(float) * rows * cols);
}

PyObject *nmtpy_links(const float *att, int n_src, int n_tgt)
{
    PyObject *l = PyList_New(0);
    nmt_hypothesis h;
    memset(&h, 0, sizeof h);
    h.n_words = n_tgt;
    h.attention = (float *)att;
    h.attn_rows = n_tgt + 1;
    h.attn_cols = n_src + 1;
    for (int i = 0; l && att && i < n_tgt; i++) {
        int j = nmt_hard_link(&h, i);
        PyObject *p = j < 0 ? NULL : Py_BuildValue("(ii)", j, i);
        if (j >= 0 && (!p || PyList_Append(l, p))) Py_CLEAR(l);
        Py_XDECREF(p);
    }
    return l;
}

/* ------------------------------------------------------------------ metrics */

/* hyps and the reference sets refs (a sequence of sequences, each as long as hyps) as C arrays:
 * *sets gets one strv per set. 0, or -1 with an exception. */
static int read_refs(strv *hyps, strv **sets, Py_ssize_t *n_sets, PyObject *h, PyObject *r)
{
    if (strv_of_texts(hyps, h, "hypotheses")) return -1;
    PyObject *fast = PyUnicode_Check(r) ? NULL : PySequence_Fast(r, "references");
    *n_sets = fast ? PySequence_Fast_GET_SIZE(fast) : 0;
    *sets = fast && *n_sets ? calloc((size_t)*n_sets, sizeof **sets) : NULL;
    int rc = *sets ? 0 : -1;
    if (rc && !PyErr_Occurred()) PyErr_SetString(nmtpy_arg_error, "references: expected a list of reference lists");
    for (Py_ssize_t k = 0; !rc && k < *n_sets; k++) {
        rc = strv_of_texts(&(*sets)[k], PySequence_Fast_GET_ITEM(fast, k), "references");
        if (!rc && (*sets)[k].n != hyps->n) {
            PyErr_Format(nmtpy_arg_error, "reference set %zd has %zd lines for %zd hypotheses", k, (*sets)[k].n, hyps->n);
            rc = -1;
        }
    }
    Py_XDECREF(fast);
    return rc;
}

static void free_refs(strv *hyps, strv *sets, Py_ssize_t n_sets)
{
    strv_free(hyps);
    for (Py_ssize_t k = 0; sets && k < n_sets; k++) strv_free(&sets[k]);
    free(sets);
}

/* sacreBLEU's BLEUScore fields as a dict */
static PyObject *bleu_dict(const nmt_bleu_result *b)
{
    return Py_BuildValue("{s:d,s:[dddd],s:[dddd],s:[dddd],s:d,s:L,s:L}", "score", b->score, "counts", b->counts[0],
                         b->counts[1], b->counts[2], b->counts[3], "totals", b->totals[0], b->totals[1], b->totals[2],
                         b->totals[3], "precisions", b->precisions[0], b->precisions[1], b->precisions[2], b->precisions[3],
                         "bp", b->bp, "sys_len", (long long)b->sys_len, "ref_len", (long long)b->ref_len);
}

/* score(hypotheses, references, metric, tokenize, lowercase): metric "bleu" -> dict of sacreBLEU's
 * BLEUScore fields; "chrf" -> float */
static PyObject *py_score(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *h, *r;
    nmtpy_str metric = {"metric", 0, NULL}, tok = {"tokenize", 1, NULL};
    int lc;
    if (!PyArg_ParseTuple(args, "OOO&O&p", &h, &r, nmtpy_str_arg, &metric, nmtpy_str_arg, &tok, &lc)) return NULL;
    int bleu = !strcmp(metric.s, "bleu");
    strv hyps, *sets = NULL;
    Py_ssize_t ns = 0;
    if (read_refs(&hyps, &sets, &ns, h, r)) { free_refs(&hyps, sets, ns); return NULL; }
    const char *const **refs = malloc(sizeof *refs * (size_t)ns);
    for (Py_ssize_t k = 0; refs && k < ns; k++) refs[k] = sets[k].s;
    nmt_bleu_result b;
    double chrf = 0;
    nmt_err err = {0, ""};
    int rc = NMT_ERR_NOMEM;
    if (refs) {
        Py_BEGIN_ALLOW_THREADS
        rc = bleu ? nmt_bleu_corpus(hyps.s, refs, (int)ns, (int)hyps.n, tok.s, lc, &b, &err)
                  : nmt_chrf_corpus(hyps.s, refs, (int)ns, (int)hyps.n, lc, &chrf, &err);
        Py_END_ALLOW_THREADS
    }
    free(refs);
    free_refs(&hyps, sets, ns);
    return rc ? nmtpy_raise(rc, &err) : bleu ? bleu_dict(&b) : PyFloat_FromDouble(chrf);
}

/* ------------------------------------------------------------------ Moses tokenizer */

int nmtpy_lang(const char *code)
{
    if (!code) return NMT_LANG_NONE;
    static const char *const names[] = {"en", "fr", "de"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(code, names[i])) return i;
    PyErr_Format(nmtpy_arg_error, "language '%s': expected en, fr or de", code);
    return -2;
}

/* tokenize(text, lang, lowercase, normalize_punct, aggressive, escape) -> list of tokens */
static PyObject *py_tokenize(PyObject *self, PyObject *args)
{
    (void)self;
    nmtpy_str text = {"text", 0, NULL}, lang = {"lang", 0, NULL};
    nmt_text_opts o = nmt_text_default_opts();
    if (!PyArg_ParseTuple(args, "O&O&pppp", nmtpy_str_arg, &text, nmtpy_str_arg, &lang, &o.lowercase, &o.normalize_punct,
                          &o.aggressive, &o.escape))
        return NULL;
    if ((o.lang = nmtpy_lang(lang.s)) < 0) return NULL;
    o.tokenize = 1;
    nmt_text *t = NULL;
    nmt_text_line l;
    nmt_err err = {0, ""};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nmt_text_init(&t, &o, NULL, 0, &err);
    if (!rc) rc = nmt_text_encode(t, text.s, strlen(text.s), &l, &err);
    Py_END_ALLOW_THREADS
    PyObject *out = rc ? nmtpy_raise(rc, &err) : PyList_New(l.n_words);
    for (int i = 0; !rc && out && i < l.n_words; i++) {
        PyObject *w = PyUnicode_FromString(l.words[i]);
        if (!w) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, i, w);
    }
    nmt_text_free(t);
    return out;
}

/* detokenize(tokens, lang) -> str */
static PyObject *py_detokenize(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *tokens;
    nmtpy_str lang = {"lang", 0, NULL};
    if (!PyArg_ParseTuple(args, "OO&", &tokens, nmtpy_str_arg, &lang)) return NULL;
    nmt_text_opts o = nmt_text_default_opts();
    if ((o.lang = nmtpy_lang(lang.s)) < 0) return NULL;
    o.detokenize = 1;
    strv w;
    if (strv_of_texts(&w, tokens, "tokens")) return NULL;
    nmt_text *t = NULL;
    const char *text = NULL;
    size_t len = 0;
    nmt_err err = {0, ""};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nmt_text_init(&t, &o, NULL, 0, &err);
    if (!rc) rc = nmt_text_decode_words(t, w.s, (int)w.n, &text, &len, &err);
    Py_END_ALLOW_THREADS
    PyObject *out = rc ? nmtpy_raise(rc, &err) : PyUnicode_DecodeUTF8(text, (Py_ssize_t)len, "replace");
    nmt_text_free(t);
    strv_free(&w);
    return out;
}

/* ------------------------------------------------------------------ model files */

/* The model's configuration as a dict. */
static PyObject *config_dict(const nmt_config *c)
{
    return Py_BuildValue("{s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:d,s:d,s:O}", "arch", nmt_arch_name(c->arch), "src_vocab",
                         c->src_vocab, "tgt_vocab", c->tgt_vocab, "emb", c->emb, "hid", c->hid, "att", c->att, "maxout",
                         c->maxout, "window", c->window, "fert_step_weight", c->fert_step_w, "fert_left_weight",
                         c->fert_left_w, "tied_embeddings", c->tied_emb ? Py_True : Py_False);
}

/* Tensor i of m as (name, shape, bytes of float32), or NULL with an exception. */
static PyObject *tensor_tuple(const nmt_model *m, int i)
{
    const char *name;
    int ndim;
    int64_t shape[2];
    nmt_err err = {0, ""};
    int rc = nmt_model_tensor(m, i, &name, &ndim, shape, NULL, &err);
    if (rc) return nmtpy_raise(rc, &err);
    Py_ssize_t n = (Py_ssize_t)shape[0] * (ndim == 2 ? (Py_ssize_t)shape[1] : 1);
    PyObject *b = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(float));
    if (!b) return NULL;
    nmt_model_tensor(m, i, &name, &ndim, shape, (float *)PyBytes_AS_STRING(b), &err);
    PyObject *t = ndim == 2 ? Py_BuildValue("(s(LL)N)", name, (long long)shape[0], (long long)shape[1], b)
                            : Py_BuildValue("(s(L)N)", name, (long long)shape[0], b);
    return t;
}

/* load_tensors(path) -> ([(name, shape, bytes)], config dict) */
static PyObject *py_load_tensors(PyObject *self, PyObject *args)
{
    (void)self;
    nmtpy_str path = {"path", 0, NULL};
    if (!PyArg_ParseTuple(args, "O&", nmtpy_str_arg, &path)) return NULL;
    nmt_model *m = NULL;
    nmt_err err = {0, ""};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nmt_model_load(&m, path.s, &err);
    Py_END_ALLOW_THREADS
    if (rc) return nmtpy_raise(rc, &err);
    int n = nmt_model_num_tensors(m);
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *t = tensor_tuple(m, i);
        if (!t) { Py_CLEAR(l); break; }
        PyList_SET_ITEM(l, i, t);
    }
    PyObject *out = l ? Py_BuildValue("(NN)", l, config_dict(nmt_model_config(m))) : NULL;
    nmt_model_free(m);
    return out;
}

/* average(paths, output): the mean of the models' parameters, written to output */
static PyObject *py_average(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *paths;
    nmtpy_str out = {"output", 0, NULL};
    if (!PyArg_ParseTuple(args, "OO&", &paths, nmtpy_str_arg, &out)) return NULL;
    strv p;
    if (strv_of_texts(&p, paths, "paths")) return NULL;
    nmt_model *m = NULL;
    nmt_err err = {0, ""};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nmt_model_average(&m, p.s, (int)p.n, &err);
    if (!rc) rc = nmt_model_save(m, out.s, &err);
    Py_END_ALLOW_THREADS
    nmt_model_free(m);
    strv_free(&p);
    if (rc) return nmtpy_raise(rc, &err);
    Py_RETURN_NONE;
}

/* set_threads(n): nmt_set_threads, for the whole process */
static PyObject *py_set_threads(PyObject *self, PyObject *args)
{
    (void)self;
    int n;
    if (!PyArg_ParseTuple(args, "i", &n)) return NULL;
    if (n < 0 || n > 1024) return PyErr_Format(nmtpy_arg_error, "threads %d: expected 0 (all cores) to 1024", n);
    nmt_set_threads(n);
    Py_RETURN_NONE;
}

static PyObject *py_set_device(PyObject *self, PyObject *args)
{
    (void)self;
    nmtpy_str name = {"device", 0, NULL};
    if (!PyArg_ParseTuple(args, "O&", nmtpy_str_arg, &name)) return NULL;
    nmt_err e = {0};
    int rc = nmt_set_device(name.s, &e);
    if (rc) return nmtpy_raise(rc, &e);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ the module */

static PyMethodDef methods[] = {
    {"score", py_score, METH_VARARGS, "score(hypotheses, references, 'bleu' or 'chrf', tokenize, lowercase)"},
    {"tokenize", py_tokenize, METH_VARARGS, "tokenize(text, lang, lowercase, normalize_punct, aggressive, escape) -> list"},
    {"detokenize", py_detokenize, METH_VARARGS, "detokenize(tokens, lang) -> str"},
    {"load_tensors", py_load_tensors, METH_VARARGS, "load_tensors(path) -> (tensors, config)"},
    {"average", py_average, METH_VARARGS, "average(paths, output)"},
    {"set_threads", py_set_threads, METH_VARARGS, "set_threads(n): threads of the library (0: all cores)"},
    {"set_device", py_set_device, METH_VARARGS, "set_device(name): the process's device (nmt_set_device)"},
    {"train", (PyCFunction)(void (*)(void))nmtpy_train, METH_VARARGS | METH_KEYWORDS,
     "train(options, callback, stop) -> bool (False: stopped)"},
    {"train_keys", nmtpy_train_keys, METH_NOARGS, "train_keys() -> the option names train takes"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "nmt._nmt", "libnmt's public API for Python.", -1, methods,
                                    NULL, NULL, NULL, NULL};

/* The exception name as a subclass of base and, if not NULL, of also. */
static PyObject *new_error(PyObject *mod, const char *name, PyObject *base, PyObject *also)
{
    PyObject *bases = also ? PyTuple_Pack(2, base, also) : PyTuple_Pack(1, base);
    char full[64];
    snprintf(full, sizeof full, "nmt.%s", name);
    PyObject *e = bases ? PyErr_NewException(full, bases, NULL) : NULL;
    Py_XDECREF(bases);
    if (e && PyModule_AddObjectRef(mod, name, e) < 0) Py_CLEAR(e);
    return e;
}

PyMODINIT_FUNC PyInit__nmt(void)
{
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (!(nmtpy_error = new_error(m, "Error", PyExc_RuntimeError, NULL)) ||
        !(nmtpy_arg_error = new_error(m, "ArgumentError", nmtpy_error, PyExc_ValueError)) ||
        !(nmtpy_file_error = new_error(m, "FileError", nmtpy_error, PyExc_OSError)) ||
        PyType_Ready(&nmtpy_translator_type) < 0 ||
        PyModule_AddObjectRef(m, "Translator", (PyObject *)&nmtpy_translator_type) < 0 ||
        PyModule_AddIntConstant(m, "MAX_SRC_WORDS", NMT_MAX_SRC_WORDS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
