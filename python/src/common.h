/* common.h: what the C parts of the Python package (nmt._nmt) share: libnmt's errors raised as
 * Python exceptions, and Python sequences of strings read into C arrays of UTF-8 strings. Only
 * the public C API (nmt.h) is used. */
#ifndef NMTPY_COMMON_H
#define NMTPY_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "nmt.h"

/* nmt.Error (RuntimeError), nmt.ArgumentError (also ValueError), nmt.FileError (also OSError) */
extern PyObject *nmtpy_error, *nmtpy_arg_error, *nmtpy_file_error;

/* Raises the exception of libnmt's status rc with err's message; returns NULL. NMT_ERR_INTERRUPTED
 * with an exception pending (a signal handler's, raised while libnmt asked whether to stop)
 * leaves that one. */
PyObject *nmtpy_raise(int rc, const nmt_err *err);

/* The UTF-8 of str o, for C, where a NUL would end it early and cut it there unseen (a model path
 * "x\0.nmt" wrote to "x"): refused with nmt.ArgumentError (a ValueError) naming what, as the nmt
 * program refuses NUL bytes. A non-str is a TypeError naming what. Borrowed: valid while o lives.
 * Every str the package hands to C passes here, directly or through nmtpy_str_arg. */
const char *nmtpy_cstr(PyObject *o, const char *what);

/* A named string argument for PyArg_Parse's "O&" with nmtpy_str_arg: set what (and none_ok for
 * an argument that may be None, which gives s NULL) before parsing. */
typedef struct nmtpy_str {
    const char *what;
    int none_ok;
    const char *s;
} nmtpy_str;
int nmtpy_str_arg(PyObject *o, void *str);

/* n UTF-8 strings s[0..n) that stay valid while keep (a list of the str objects) lives. */
typedef struct strv {
    Py_ssize_t n;
    const char **s;
    PyObject *keep;
} strv;

/* The strings of seq (a sequence of str); what names it in errors. 0, or -1 with an exception. */
int strv_of_texts(strv *v, PyObject *seq, const char *what);
/* A sequence of token lists, each joined by single spaces (tokens must be non-empty and hold no
 * whitespace: libnmt splits at blanks). 0, or -1 with an exception. */
int strv_of_tokens(strv *v, PyObject *seq, const char *what);
void strv_free(strv *v);

/* A list of floats, or NULL with an exception. */
PyObject *nmtpy_float_list(const double *x, int n);
/* rows x cols float32 values as bytes (the Python layer views them as an array), or None for NULL. */
PyObject *nmtpy_matrix(const float *a, int rows, int cols);
/* The hard links (source, target) of an attention over n_tgt target words and n_src + 1 columns. */
PyObject *nmtpy_links(const float *att, int n_src, int n_tgt);

/* A language code (en, fr, de)'s enum nmt_lang, NMT_LANG_NONE for NULL, or -2 with an exception. */
int nmtpy_lang(const char *code);

/* The Translator type (translator.c) and nmt.train (train.c). */
extern PyTypeObject nmtpy_translator_type;
PyObject *nmtpy_train(PyObject *self, PyObject *args, PyObject *kw);
PyObject *nmtpy_train_keys(PyObject *self, PyObject *unused);

#endif
