/* cmd_score.c: `nmt score`, forced decoding of given translations by one model or an ensemble
 * (the models' options: cmd_models.h). */
#include <stdlib.h>

#include "cmd.h"
#include "cmd_models.h"
#include "data/corpus.h"
#include "nmt.h"
#include "opt.h"

int cmd_score(int argc, char **argv)
{
    const char *src = NULL, *tgt = NULL;
    int rc, threads = 0;
    model_list models = {0};
    opt table[] = {
        MODEL_OPTS(&models),
        OPT_STR("--src", &src, "FILE", "source sentences, tokenized (or raw for a model trained on raw text),\none per line"),
        OPT_STR("--tgt", &tgt, "FILE", "their translations (the same number of lines)"),
        OPT_INT("--threads", &threads, 1, 1024, "N", "threads (default: all cores)"),
        CMD_DEVICE_OPT,
        OPT_END,
    };
    opt_cmd c = {"score", "Usage: nmt score --model FILE [--model FILE ...] --src FILE --tgt FILE [--threads N]\n"
                 "Forced decoding: for each pair, the log-probability of the target (with its EOS) given the source\n"
                 "(a subword model's raw text is cut into its pieces first, and TOKENS counts pieces); an ensemble's\n"
                 "is the weighted mean of its models' log-probabilities, the score nmt translate searches with.\n"
                 "Prints one line per pair: TOTAL<TAB>PER_TOKEN<TAB>TOKENS (tokens count the EOS).\n"
                 "Limits: sources are read up to " STR(NMT_MAX_SRC_WORDS) " words; a target over " STR(NMT_MAX_TGT_WORDS) " words is an error.\n\n", NULL, table, 0, NULL};
    int nargs;
    if ((rc = opt_parse(&c, argc, argv, NULL, &nargs)) != OPT_GO) return rc;
    if (threads) nmt_set_threads(threads);
    if (!src || !tgt) { fprintf(stderr, "nmt score: error: --src and --tgt are required\n"); return CMD_USAGE; }
    if ((rc = load_models("score", &models))) {
        free_models(&models);
        return rc;
    }
    const nmt_model *m = models.m[0];
    textfile S = {0}, T = {0};
    nmt_err err;
    rc = CMD_ERR;
    if (textfile_read(&S, src, &err) || textfile_read(&T, tgt, &err)) {
        fprintf(stderr, "nmt score: error: %s\n", err.msg);
        goto out;
    }
    long ns = S.nlines;
    if (ns != T.nlines) {
        fprintf(stderr, "nmt score: error: %s has %ld lines but %s has %ld\n", src, ns, tgt, T.nlines);
        goto out;
    }
    if (cmd_model_lines(m, &S, &T, &err)) { /* a subword model reads raw text as its pieces */
        fprintf(stderr, "nmt score: error: %s\n", err.msg);
        goto out;
    }
    nmt_translate_opts o = nmt_translate_default_opts();
    nmt_decoder *d = NULL;
    double *lp = malloc(sizeof(double) * (ns ? ns : 1));
    int *nt_ = malloc(sizeof(int) * (ns ? ns : 1));
    if (decoder_of(&d, &models, &o, &err) || nmt_score(d, (const char *const *)S.line, (const char *const *)T.line, (int)ns, lp, nt_, &err)) {
        fprintf(stderr, "nmt score: error: %s\n", err.msg);
    } else {
        for (long i = 0; i < ns; i++) printf("%.6f\t%.6f\t%d\n", lp[i], lp[i] / nt_[i], nt_[i]);
        rc = CMD_OK;
    }
    free(lp);
    free(nt_);
    nmt_decoder_free(d);
out:
    textfile_free(&S);
    textfile_free(&T);
    free_models(&models);
    return rc;
}
