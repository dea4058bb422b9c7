/* cmd_models.h: the models of `nmt translate` and `nmt score`: --model (repeated for an ensemble),
 * --models and --weights, loading them and a decoder over them. */
#ifndef NMT_CMD_MODELS_H
#define NMT_CMD_MODELS_H

#include "nmt.h"
#include "opt.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define MAX_MODELS 16

/* The models as the options name them (--model repeated, or --models A B ...: more than one is
 * an ensemble) and their --weights. */
typedef struct model_list {
    const char *path[MAX_MODELS];
    int n;
    double weight[MAX_MODELS];
    int nweights;
    nmt_model *m[MAX_MODELS];
} model_list;

/* --model FILE and --models FILE... (option functions, opt.h) */
const char *add_model(void *dst, const char *val, int nth);
/* --weights W1,W2,...: positive numbers, one per model */
const char *parse_weights(void *dst, const char *val, int nth);
/* Loads every model of l into l->m; the second and later must share the first's vocabularies
 * (the message names the files). The exit status. */
int load_models(const char *cmd, model_list *l);
void free_models(model_list *l);
/* An ensemble's decoder over l's models (one model: a plain decoder). */
int decoder_of(nmt_decoder **d, const model_list *l, const nmt_translate_opts *o, nmt_err *err);

/* The options that name the models, for both commands' tables. */
#define MODEL_OPTS(l) \
    {.names = "--model", .kind = OPTK_FN, .dst = l, .fn = add_model, .arg = "FILE", \
     .help = "the model (required); repeat it for an ensemble: each model keeps its\n" \
             "own state and a word's score is the mean of the models' log-probabilities\n" \
             "(the vocabularies must be the same; docs/CLI.md)"}, \
    {.names = "--models", .kind = OPTK_FN, .dst = l, .fn = add_model, .flags = OPT_MORE, .arg = "FILE...", \
     .help = "the models of an ensemble in one option (adds to --model)"}, \
    {.names = "--weights", .kind = OPTK_FN, .dst = l, .fn = parse_weights, .arg = "W1,W2,...", \
     .help = "the ensemble's weights, one per model in order, normalised to sum\n" \
             "to 1 (default: equal)"}

#endif
