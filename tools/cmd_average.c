/* cmd_average.c: `nmt average --out M MODEL...`: checkpoint averaging, the mean of several models'
 * parameters (the last checkpoints of a run, or its best ones) written as one model file. */
#include <stdio.h>
#include <stdlib.h>

#include "base/paths.h"
#include "cmd.h"
#include "nmt.h"
#include "opt.h"

#define MAX_MODELS 256

int cmd_average(int argc, char **argv)
{
    const char *out = NULL;
    opt table[] = {
        OPT_STR1("--out -o", &out, "FILE", "where the averaged model is written (not one of the inputs)"),
        CMD_DEVICE_OPT,
        OPT_END,
    };
    opt_cmd c = {"average", "Usage: nmt average --out FILE MODEL MODEL...\n"
                 "Averages the parameters of models of one configuration and the same vocabularies (checkpoint\n"
                 "averaging: e.g. the models a run saved at its last validations). The configuration, vocabularies and\n"
                 "text settings are the first model's.\n\n", NULL, table, MAX_MODELS, "at most 256 models"};
    char *args[MAX_MODELS];
    int n, rc = opt_parse(&c, argc, argv, args, &n);
    if (rc != OPT_GO) return rc;
    if (!out || n < 1) {
        fprintf(stderr, "nmt average: error: --out and at least one model are required (nmt average --help)\n");
        return CMD_USAGE;
    }
    nmt_err err;
    path_role in[MAX_MODELS], outp[1] = {{out, "the averaged model (--out)"}};
    for (int i = 0; i < n; i++) in[i] = (path_role){args[i], "a model to average"};
    nmt_model *m = NULL;
    if (path_check_outputs(in, n, outp, 1, &err) || nmt_model_average(&m, (const char *const *)args, n, &err) ||
        nmt_model_save(m, out, &err)) {
        fprintf(stderr, "nmt average: error: %s\n", err.msg);
        nmt_model_free(m);
        return CMD_ERR;
    }
    nmt_model_free(m);
    fprintf(stderr, "nmt average: %d models averaged into %s\n", n, out);
    return CMD_OK;
}
