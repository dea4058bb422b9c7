/* cmd_models.c: the models of `nmt translate` and `nmt score` (cmd_models.h): the option
 * functions of --model, --models and --weights, loading the models, and a decoder over them. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "cmd_models.h"

/* --model FILE, and --models, which takes every following argument that is not an option (dst
 * NULL only asks whether it would take val). */
const char *add_model(void *dst, const char *val, int nth)
{
    (void)nth;
    model_list *l = dst;
    if (!*val) return "an empty file name";
    if (!l) return NULL;
    if (l->n == MAX_MODELS) return "more than " STR(MAX_MODELS) " models";
    l->path[l->n++] = val;
    return NULL;
}

/* --weights W1,W2,...: positive numbers, one per model */
const char *parse_weights(void *dst, const char *val, int nth)
{
    (void)nth;
    model_list *l = dst;
    l->nweights = 0;
    for (const char *p = val;; p++) {
        char *end;
        double w = strtod(p, &end);
        if (end == p || (*end && *end != ',')) return "expected positive numbers separated by commas";
        if (!(w > 0 && w < 1e30)) return "a weight is not a positive number";
        if (l->nweights == MAX_MODELS) return "more than " STR(MAX_MODELS) " weights";
        l->weight[l->nweights++] = w;
        if (!*(p = end)) return NULL;
    }
}

/* Loads every model of l into l->m; the second and later must share the first's vocabularies
 * (the message names the files). The exit status. */
int load_models(const char *cmd, model_list *l)
{
    nmt_err err;
    if (!l->n) {
        fprintf(stderr, "nmt %s: error: --model is required (nmt %s --help)\n", cmd, cmd);
        return CMD_USAGE;
    }
    if (l->nweights && l->nweights != l->n) {
        fprintf(stderr, "nmt %s: error: --weights gives %d weight%s for %d model%s\n", cmd, l->nweights, l->nweights == 1 ? "" : "s",
                l->n, l->n == 1 ? "" : "s");
        return CMD_USAGE;
    }
    for (int k = 0; k < l->n; k++)
        if (nmt_model_load(&l->m[k], l->path[k], &err) ||
            (k && nmt_model_check_vocab(l->m[0], l->path[0], l->m[k], l->path[k], &err))) {
            fprintf(stderr, "nmt %s: error: %s\n", cmd, err.msg);
            return CMD_ERR;
        }
    return CMD_OK;
}

void free_models(model_list *l)
{
    for (int k = 0; k < l->n; k++) nmt_model_free(l->m[k]);
}

/* An ensemble's decoder over l's models (one model: a plain decoder). */
int decoder_of(nmt_decoder **d, const model_list *l, const nmt_translate_opts *o, nmt_err *err)
{
    return nmt_decoder_init_ensemble(d, (const nmt_model *const *)l->m, l->nweights ? l->weight : NULL, l->n, o, err);
}
