/* train.c: nmt.train(options): nmt_train with the options of `nmt train -c run.yaml`, keyed by
 * the same long option names (docs/CLI.md; tools/cmd_train.c's table is the reference, and the
 * package's test checks every name `nmt train --help` lists against train_keys()). Progress and
 * validation reports go to a Python callback, which may ask training to stop, as a stop object
 * (threading.Event) or Ctrl-C may: the library then checkpoints and returns. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

enum kind { K_STR, K_INT, K_LONG, K_DBL, K_SET, K_FN };

typedef struct opts_in {
    nmt_train_opts o;
    PyObject *keep; /* the bytes the string options point into */
} opts_in;

typedef int (*key_fn)(opts_in *in, PyObject *v, const char *key);

typedef struct key {
    const char *name;
    int kind;
    size_t off;     /* in nmt_train_opts */
    int set;        /* K_SET: the value a true switch stores */
    key_fn fn;      /* K_FN */
    int family;     /* FAM_RNN or FAM_TF: refused with the other family's --arch; 0: either */
} key;

enum { FAM_RNN = 1, FAM_TF = 2 };

#define OFF(f) offsetof(nmt_train_opts, f)

/* ------------------------------------------------------------------ value readers */

/* v as a str (or os.PathLike) kept alive in in->keep; NULL with an exception */
static const char *str_of(opts_in *in, PyObject *v, const char *key)
{
    PyObject *p = PyOS_FSPath(v);
    if (!p || !PyUnicode_Check(p)) {
        Py_XDECREF(p);
        PyErr_Clear();
        PyErr_Format(nmtpy_arg_error, "%s: expected a str", key);
        return NULL;
    }
    const char *s = nmtpy_cstr(p, key);
    if (!s || PyList_Append(in->keep, p)) s = NULL;
    Py_DECREF(p);
    return s;
}

/* A list value, or "A,B" as the command line writes it: up to max items into out[]; the count */
static int items_of(opts_in *in, PyObject *v, const char *key, const char **out, int max)
{
    if (PyUnicode_Check(v)) {
        const char *s = str_of(in, v, key);
        if (!s) return -1;
        PyObject *sep = PyUnicode_FromString(","), *parts = sep ? PyUnicode_Split(v, sep, -1) : NULL;
        Py_XDECREF(sep);
        if (!parts) return -1;
        int n = items_of(in, parts, key, out, max);
        Py_DECREF(parts);
        return n;
    }
    PyObject *fast = PySequence_Fast(v, "a list");
    if (!fast) return -1;
    int n = (int)PySequence_Fast_GET_SIZE(fast), bad = n < 1 || n > max;
    for (int i = 0; !bad && i < n; i++) bad = !(out[i] = str_of(in, PySequence_Fast_GET_ITEM(fast, i), key));
    Py_DECREF(fast);
    if (bad && !PyErr_Occurred()) PyErr_Format(nmtpy_arg_error, "%s: expected 1 to %d values", key, max);
    return bad ? -1 : n;
}

/* The index of name in names[0..n), or -1 with an exception naming the choices */
static int choice(const char *name, const char *const *names, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(name, names[i])) return i;
    char all[256] = "";
    for (int i = 0; i < n; i++) snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? ", " : "", names[i]);
    PyErr_Format(nmtpy_arg_error, "%s: '%s': expected one of %s", key, name, all);
    return -1;
}

/* ------------------------------------------------------------------ options with their own syntax */

static int set_preset(opts_in *in, PyObject *v, const char *key)
{
    const char *s = str_of(in, v, key);
    nmt_err err = {0, ""};
    int rc = s ? nmt_train_preset(&in->o, s, &err) : -1;
    if (rc > -1 || !s) return rc;
    PyErr_Format(nmtpy_arg_error, "%s: %s", key, err.msg);
    return -1;
}

static int set_arch(opts_in *in, PyObject *v, const char *key)
{
    const char *s = str_of(in, v, key);
    if (s && (in->o.cfg.arch = nmt_arch_parse(s)) < 0) PyErr_Format(nmtpy_arg_error, "%s: unknown architecture '%s'", key, s);
    return s && in->o.cfg.arch >= 0 ? 0 : -1;
}

/* v, one of names[0..n), as its index into *field, plus base; 0 or -1 with an exception */
static int set_choice(opts_in *in, PyObject *v, const char *key, const char *const *names, int n, int *field, int base)
{
    const char *s = str_of(in, v, key);
    int k = s ? choice(s, names, n, key) : -1;
    if (k >= 0) *field = k + base;
    return k < 0 ? -1 : 0;
}

static int set_optimizer(opts_in *in, PyObject *v, const char *key)
{
    static const char *const names[] = {"adadelta", "adagrad", "adam", "sgd"};
    return set_choice(in, v, key, names, 4, &in->o.optimizer, 0);
}

static int set_precision(opts_in *in, PyObject *v, const char *key)
{
    static const char *const names[] = {"fp32", "bf16"};
    int rc = set_choice(in, v, key, names, 2, &in->o.precision, 0);
    in->o.precision = in->o.precision == 1 ? NMT_PREC_BF16 : NMT_PREC_FP32;
    return rc;
}

static int set_init(opts_in *in, PyObject *v, const char *key)
{
    static const char *const names[] = {"paper", "glorot-att", "glorot"}; /* enum nmt_init's order */
    return set_choice(in, v, key, names, 3, &in->o.init, 0);
}

static int set_guided_cost(opts_in *in, PyObject *v, const char *key)
{
    static const char *const names[] = {"ce", "mse"}; /* enum nmt_guided_cost's order */
    return set_choice(in, v, key, names, 2, &in->o.guided_cost, 0);
}

static int set_ffn_act(opts_in *in, PyObject *v, const char *key)
{
    static const char *const names[] = {"relu", "gelu", "swish"}; /* enum nmt_act's order */
    return set_choice(in, v, key, names, 3, &in->o.tf.ffn_act, 0);
}

static int set_norm(opts_in *in, PyObject *v, const char *key)
{
    static const char *const names[] = {"pre", "post"}; /* nmt_config.post_norm */
    return set_choice(in, v, key, names, 2, &in->o.tf.post_norm, 0);
}

static int set_subwords(opts_in *in, PyObject *v, const char *key)
{
    static const char *const names[] = {"unigram", "bpe"};
    return set_choice(in, v, key, names, 2, &in->o.subwords, 1);
}

/* tokenize and lang: two languages */
static int set_langs(opts_in *in, PyObject *v, const char *key)
{
    const char *l[2];
    if (items_of(in, v, key, l, 2) != 2) {
        if (!PyErr_Occurred()) PyErr_Format(nmtpy_arg_error, "%s: expected SRC,TGT languages, e.g. en,fr", key);
        return -1;
    }
    int a = nmtpy_lang(l[0]), b = a < 0 ? -1 : nmtpy_lang(l[1]);
    if (b < 0) return -1;
    int tok = !strcmp(key, "tokenize");
    *(tok ? &in->o.tokenize_src : &in->o.lang_src) = a;
    *(tok ? &in->o.tokenize_tgt : &in->o.lang_tgt) = b;
    return 0;
}

static int set_spm(opts_in *in, PyObject *v, const char *key)
{
    const char *p[2] = {NULL, NULL};
    if (items_of(in, v, key, p, 2) < 1) return -1;
    in->o.spm_src = p[0];
    in->o.spm_tgt = p[1];
    return 0;
}

static int set_metrics(opts_in *in, PyObject *v, const char *key)
{
    const char *m[NMT_MAX_VALID_METRICS];
    int n = items_of(in, v, key, m, NMT_MAX_VALID_METRICS);
    in->o.n_valid_metrics = 0;
    for (int i = 0; i < n; i++) {
        int k = nmt_metric_parse(m[i]);
        for (int j = 0; j < i && k >= 0; j++)
            if (in->o.valid_metrics[j] == k) k = -1;
        if (k < 0) {
            PyErr_Format(nmtpy_arg_error, "%s: '%s': expected ppl, bleu or chrf, each once", key, m[i]);
            return -1;
        }
        in->o.valid_metrics[in->o.n_valid_metrics++] = k;
    }
    return n < 0 ? -1 : 0;
}

/* max-time: seconds, or a str with s, m, h or d */
static int set_time(opts_in *in, PyObject *v, const char *key)
{
    if (PyNumber_Check(v) && !PyUnicode_Check(v)) {
        in->o.max_time = PyFloat_AsDouble(v);
        return PyErr_Occurred() ? -1 : 0;
    }
    const char *s = str_of(in, v, key);
    char *end;
    double x = s ? strtod(s, &end) : 0;
    double mul = !s || end == s ? -1 : !*end || !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60 : !strcmp(end, "h") ? 3600
                                                                      : !strcmp(end, "d") ? 86400 : -1;
    if (s && (mul < 0 || !(x >= 0))) PyErr_Format(nmtpy_arg_error, "%s: expected seconds or a number with s, m, h or d", key);
    in->o.max_time = x * mul;
    return s && mul > 0 && x >= 0 ? 0 : -1;
}

static int set_vocab(opts_in *in, PyObject *v, const char *key)
{
    long k = PyLong_AsLong(v);
    if (k == -1 && PyErr_Occurred()) return -1;
    if (k < 3 || k > 4000000) return PyErr_Format(nmtpy_arg_error, "%s: %ld out of range [3, 4000000]", key, k), -1;
    in->o.cfg.src_vocab = in->o.cfg.tgt_vocab = (int)k;
    return 0;
}

/* alignment_head counts from 0, as nmt train --alignment-head does; the config from 1 (0: the
 * heads' mean). The library checks it against the heads. */
static int set_align_head(opts_in *in, PyObject *v, const char *key)
{
    long k = PyLong_AsLong(v);
    if (k == -1 && PyErr_Occurred()) return -1;
    if (k < 0 || k > 1023) return PyErr_Format(nmtpy_arg_error, "%s: %ld out of range [0, 1023]", key, k), -1;
    in->o.tf.align_head = (int)k + 1;
    return 0;
}

/* the process's device (nmt_set_device), as --device makes it */
static int set_device(opts_in *in, PyObject *v, const char *key)
{
    (void)in;
    const char *name = PyUnicode_Check(v) ? nmtpy_cstr(v, key) : NULL;
    if (!name && PyErr_Occurred()) return -1;
    if (!name) return PyErr_Format(nmtpy_arg_error, "%s: expected a device name", key), -1;
    nmt_err e = {0};
    if (nmt_set_device(name, &e)) return PyErr_Format(nmtpy_arg_error, "%s: %s", key, e.msg), -1;
    return 0;
}

static int set_seed(opts_in *in, PyObject *v, const char *key)
{
    unsigned long long s = PyLong_AsUnsignedLongLong(v);
    if (PyErr_Occurred()) return PyErr_Format(nmtpy_arg_error, "%s: expected an integer >= 0", key), -1;
    in->o.seed = s;
    return 0;
}

/* ------------------------------------------------------------------ the table */

static const key KEYS[] = {
    {"preset", K_FN, 0, 0, set_preset}, /* first, as on the command line: the options beside it override it */
    {"src", K_STR, OFF(src), 0, NULL},
    {"tgt", K_STR, OFF(tgt), 0, NULL},
    {"valid-src", K_STR, OFF(valid_src), 0, NULL},
    {"valid-tgt", K_STR, OFF(valid_tgt), 0, NULL},
    {"model", K_STR, OFF(model), 0, NULL},
    {"checkpoint", K_STR, OFF(checkpoint), 0, NULL},
    {"resume", K_STR, OFF(resume), 0, NULL},
    {"pretrained-model", K_STR, OFF(pretrained), 0, NULL},
    {"log", K_STR, OFF(log_tsv), 0, NULL},
    {"batch-log", K_STR, OFF(batch_log), 0, NULL},
    {"cost-log", K_STR, OFF(cost_log), 0, NULL},
    {"tokenize", K_FN, 0, 0, set_langs},
    {"lowercase", K_SET, OFF(tok_lowercase), 1, NULL},
    {"normalize-punct", K_SET, OFF(tok_normalize), 1, NULL},
    {"subwords", K_FN, 0, 0, set_subwords},
    {"subword-vocab", K_INT, OFF(subword_vocab), 0, NULL},
    {"joint", K_SET, OFF(subword_joint), 1, NULL},
    {"spm-model", K_FN, 0, 0, set_spm},
    {"lang", K_FN, 0, 0, set_langs},
    {"arch", K_FN, 0, 0, set_arch},
    {"window", K_INT, OFF(cfg.window), 0, NULL, FAM_RNN},
    {"fert-step-weight", K_DBL, OFF(cfg.fert_step_w), 0, NULL, FAM_RNN},
    {"fert-left-weight", K_DBL, OFF(cfg.fert_left_w), 0, NULL, FAM_RNN},
    {"vocab", K_FN, 0, 0, set_vocab},
    {"src-vocab", K_INT, OFF(cfg.src_vocab), 0, NULL},
    {"tgt-vocab", K_INT, OFF(cfg.tgt_vocab), 0, NULL},
    {"emb", K_INT, OFF(cfg.emb), 0, NULL, FAM_RNN},
    {"hid", K_INT, OFF(cfg.hid), 0, NULL, FAM_RNN},
    {"att", K_INT, OFF(cfg.att), 0, NULL, FAM_RNN},
    {"maxout", K_INT, OFF(cfg.maxout), 0, NULL, FAM_RNN},
    {"tied-embeddings", K_SET, OFF(cfg.tied_emb), 1, NULL},
    {"tie-embeddings", K_SET, OFF(cfg.tied_emb), 1, NULL},
    {"no-tied-embeddings", K_SET, OFF(cfg.tied_emb), 0, NULL},
    {"init", K_FN, 0, 0, set_init, FAM_RNN},
    /* the Transformer's (--arch transformer) */
    {"dim-model", K_INT, OFF(tf.emb), 0, NULL, FAM_TF},
    {"dim-emb", K_INT, OFF(tf.emb), 0, NULL, FAM_TF},
    {"enc-depth", K_INT, OFF(tf.enc_depth), 0, NULL, FAM_TF},
    {"dec-depth", K_INT, OFF(tf.dec_depth), 0, NULL, FAM_TF},
    {"heads", K_INT, OFF(tf.heads), 0, NULL, FAM_TF},
    {"transformer-heads", K_INT, OFF(tf.heads), 0, NULL, FAM_TF},
    {"dim-ffn", K_INT, OFF(tf.ffn), 0, NULL, FAM_TF},
    {"transformer-dim-ffn", K_INT, OFF(tf.ffn), 0, NULL, FAM_TF},
    {"transformer-ffn-activation", K_FN, 0, 0, set_ffn_act, FAM_TF},
    {"transformer-norm", K_FN, 0, 0, set_norm, FAM_TF},
    {"transformer-ln-eps", K_DBL, OFF(tf.ln_eps), 0, NULL, FAM_TF},
    {"max-positions", K_INT, OFF(tf.max_pos), 0, NULL, FAM_TF},
    {"tied-embeddings-all", K_SET, OFF(cfg.tied_emb), 2, NULL, FAM_TF},
    {"transformer-dropout", K_DBL, OFF(dropout_tf), 0, NULL, FAM_TF},
    {"transformer-dropout-attention", K_DBL, OFF(dropout_attn), 0, NULL, FAM_TF},
    {"transformer-dropout-ffn", K_DBL, OFF(dropout_ffn), 0, NULL, FAM_TF},
    {"alignment-layer", K_INT, OFF(tf.align_layer), 0, NULL, FAM_TF},
    {"alignment-head", K_FN, 0, 0, set_align_head, FAM_TF},
    {"max-len", K_INT, OFF(max_len), 0, NULL},
    {"batch", K_INT, OFF(batch), 0, NULL},
    {"sort-blocks", K_INT, OFF(sort_blocks), 0, NULL},
    {"reshuffle", K_SET, OFF(reshuffle), 1, NULL},
    {"optimizer", K_FN, 0, 0, set_optimizer},
    {"lr", K_DBL, OFF(lr), 0, NULL},
    {"clip", K_DBL, OFF(clip), 0, NULL},
    {"dropout", K_DBL, OFF(dropout), 0, NULL, FAM_RNN},
    {"dropout-emb", K_DBL, OFF(dropout_emb), 0, NULL, FAM_RNN},
    {"dropout-rnn", K_DBL, OFF(dropout_rnn), 0, NULL, FAM_RNN},
    {"label-smoothing", K_DBL, OFF(label_smoothing), 0, NULL},
    {"guided-alignment", K_STR, OFF(guided_alignment), 0, NULL},
    {"guided-alignment-weight", K_DBL, OFF(guided_weight), 0, NULL},
    {"guided-alignment-cost", K_FN, 0, 0, set_guided_cost},
    {"lr-decay", K_DBL, OFF(lr_decay), 0, NULL},
    {"lr-warmup", K_LONG, OFF(lr_warmup), 0, NULL},
    {"lr-decay-inv-sqrt", K_LONG, OFF(lr_decay_inv_sqrt), 0, NULL},
    {"seed", K_FN, 0, 0, set_seed},
    {"device", K_FN, 0, 0, set_device},
    {"overwrite", K_SET, OFF(overwrite), 1, NULL},
    {"threads", K_INT, OFF(threads), 0, NULL},
    {"precision", K_FN, 0, 0, set_precision},
    {"max-nonfinite", K_INT, OFF(max_nonfinite), 0, NULL},
    {"max-updates", K_LONG, OFF(max_updates), 0, NULL},
    {"max-epochs", K_INT, OFF(max_epochs), 0, NULL},
    {"max-time", K_FN, 0, 0, set_time},
    {"valid-every", K_LONG, OFF(valid_every), 0, NULL},
    {"save-every", K_LONG, OFF(save_every), 0, NULL},
    {"patience", K_INT, OFF(patience), 0, NULL},
    {"valid-metrics", K_FN, 0, 0, set_metrics},
    {"valid-metric", K_FN, 0, 0, set_metrics},
    {"valid-beam", K_INT, OFF(valid_beam), 0, NULL},
    {"valid-translation-output", K_STR, OFF(valid_output), 0, NULL},
    {"keep-best", K_INT, OFF(keep_best), 0, NULL},
};
enum { NKEYS = sizeof KEYS / sizeof *KEYS };

/* A number option: an int (not a bool) or, for K_DBL, any real number, stored at k->off. */
static int set_number(opts_in *in, const key *k, PyObject *v)
{
    char *f = (char *)&in->o + k->off;
    if (PyBool_Check(v) || (k->kind != K_DBL && !PyLong_Check(v)) || !PyNumber_Check(v))
        return PyErr_Format(nmtpy_arg_error, "%s: expected a number", k->name), -1;
    if (k->kind == K_DBL) {
        *(double *)f = PyFloat_AsDouble(v);
        return PyErr_Occurred() ? -1 : 0;
    }
    long x = PyLong_AsLong(v);
    if (PyErr_Occurred() || x < 0 || (k->kind == K_INT && x > 2147483647L)) {
        PyErr_Clear();
        return PyErr_Format(nmtpy_arg_error, "%s: expected an integer >= 0%s", k->name, k->kind == K_INT ? " that fits an int" : ""), -1;
    }
    if (k->kind == K_INT) *(int *)f = (int)x;
    else *(long *)f = x;
    return 0;
}

static int set_key(opts_in *in, const key *k, PyObject *v)
{
    if (k->kind == K_FN) return k->fn(in, v, k->name);
    if (k->kind == K_STR) {
        const char *s = str_of(in, v, k->name);
        if (s) *(const char **)((char *)&in->o + k->off) = s;
        return s ? 0 : -1;
    }
    if (k->kind != K_SET) return set_number(in, k, v);
    if (!PyBool_Check(v)) return PyErr_Format(nmtpy_arg_error, "%s: expected True or False", k->name), -1;
    if (v == Py_True) *(int *)((char *)&in->o + k->off) = k->set;
    return 0;
}

/* The key of name (its dashes may be underscores), or NULL with an exception naming it */
static const key *find_key(PyObject *name)
{
    const char *s = PyUnicode_Check(name) ? nmtpy_cstr(name, "an option name") : NULL;
    char norm[64];
    if (!s && PyErr_Occurred()) return NULL;
    if (!s || strlen(s) >= sizeof norm) return PyErr_Format(nmtpy_arg_error, "an option name must be a short str"), NULL;
    for (int i = 0; (norm[i] = s[i] == '_' ? '-' : s[i]); i++) {}
    for (int i = 0; i < NKEYS; i++)
        if (!strcmp(norm, KEYS[i].name)) return &KEYS[i];
    return PyErr_Format(nmtpy_arg_error, "unknown option '%s' (nmt train --help lists them)", s), NULL;
}

/* A key of the other model family than the architecture's is refused with its name, as the
 * program refuses the option (a preset may set either: only the dict's keys count). */
static int check_family(const opts_in *in, PyObject *d)
{
    int tf = in->o.cfg.arch == NMT_ARCH_TRANSFORMER;
    Py_ssize_t pos = 0;
    PyObject *name, *v;
    while (PyDict_Next(d, &pos, &name, &v)) {
        const key *k = find_key(name);
        if (k && k->family == (tf ? FAM_RNN : FAM_TF))
            return PyErr_Format(nmtpy_arg_error, "%s belongs to %s; not with arch %s", k->name,
                                tf ? "the recurrent models" : "arch transformer", nmt_arch_name(in->o.cfg.arch)), -1;
    }
    return 0;
}

/* The dict's options over the defaults, preset first. */
static int read_options(opts_in *in, PyObject *d)
{
    if (!PyDict_Check(d)) return PyErr_SetString(PyExc_TypeError, "options: expected a dict"), -1;
    for (int pass = 0; pass < 2; pass++) {
        Py_ssize_t pos = 0;
        PyObject *name, *v;
        while (PyDict_Next(d, &pos, &name, &v)) {
            const key *k = find_key(name);
            if (!k) return -1;
            if ((k->fn == set_preset) != (pass == 0)) continue;
            if (v == Py_None) return PyErr_Format(nmtpy_arg_error, "%s: None is not a value", k->name), -1;
            if (set_key(in, k, v)) return -1;
        }
    }
    return check_family(in, d);
}

PyObject *nmtpy_train_keys(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *l = PyList_New(NKEYS);
    for (int i = 0; l && i < NKEYS; i++) PyList_SET_ITEM(l, i, PyUnicode_FromString(KEYS[i].name));
    return l;
}

/* ------------------------------------------------------------------ reports */

typedef struct run {
    PyObject *callback, *stop; /* either may be None */
    volatile int flag;         /* the library's stop request */
    PyObject *exc, *exc_val, *exc_tb; /* an exception the callback raised, re-raised at the end */
} run;

static PyObject *report_dict(const nmt_train_report *r)
{
    static const char *const kinds[] = {"start", "progress", "valid", "save", "warn", "end"};
    return Py_BuildValue("{s:s,s:l,s:i,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:O,s:i,s:d,s:s,s:d}", "kind",
                         r->kind >= 0 && r->kind <= NMT_REPORT_END ? kinds[r->kind] : "?", "update", r->update, "epoch",
                         r->epoch, "epoch_frac", r->epoch_frac, "cost", r->cost, "grad_norm", r->grad_norm, "tok_per_s",
                         r->tok_per_s, "elapsed", r->elapsed, "eta", r->eta, "dev_nll", r->dev_nll, "dev_nll_tok",
                         r->dev_nll_tok, "dev_ppl", r->dev_ppl, "dev_bleu", r->dev_bleu, "dev_chrf", r->dev_chrf, "improved",
                         r->improved ? Py_True : Py_False, "bad_validations", r->bad_validations, "lr", r->lr, "msg",
                         r->msg ? r->msg : "", "guided_cost", r->guided_cost);
}

/* The callback of a report, with the GIL: a true return, a raised exception, a set stop object
 * or a signal (Ctrl-C) asks the library to stop. */
static void on_report(const nmt_train_report *r, void *user)
{
    run *u = user;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *res = NULL;
    if (u->callback != Py_None && !u->exc) {
        PyObject *d = report_dict(r);
        res = d ? PyObject_CallOneArg(u->callback, d) : NULL;
        Py_XDECREF(d);
        if (res && PyObject_IsTrue(res) == 1) u->flag = 1;
    }
    if (u->stop != Py_None && !u->exc) {
        PyObject *set = PyObject_CallMethod(u->stop, "is_set", NULL);
        if (set && PyObject_IsTrue(set) == 1) u->flag = 1;
        Py_XDECREF(set);
    }
    Py_XDECREF(res);
    if (!PyErr_Occurred()) PyErr_CheckSignals();
    if (PyErr_Occurred() && !u->exc) {
        PyErr_Fetch(&u->exc, &u->exc_val, &u->exc_tb);
        u->flag = 1;
    }
    PyErr_Clear();
    PyGILState_Release(g);
}

/* train(options, callback, stop) -> True when training ended by its limits, False when stopped */
PyObject *nmtpy_train(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kws[] = {"options", "callback", "stop", NULL};
    PyObject *d;
    run u = {Py_None, Py_None, 0, NULL, NULL, NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO", kws, &d, &u.callback, &u.stop)) return NULL;
    opts_in in = {nmt_train_default_opts(), PyList_New(0)};
    if (!in.keep || read_options(&in, d)) {
        Py_XDECREF(in.keep);
        return NULL;
    }
    if (!in.o.src || !in.o.tgt || !in.o.model) {
        Py_DECREF(in.keep);
        return PyErr_Format(nmtpy_arg_error, "src, tgt and model are required");
    }
    in.o.valid_scorer = nmt_metric_score;
    in.o.stop = (volatile int *)&u.flag;
    nmt_err err = {0, ""};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nmt_train(&in.o, on_report, &u, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(in.keep);
    if (u.exc) {
        PyErr_Restore(u.exc, u.exc_val, u.exc_tb);
        return NULL;
    }
    if (rc && rc != NMT_ERR_INTERRUPTED) return nmtpy_raise(rc, &err);
    return PyBool_FromLong(rc == 0);
}
