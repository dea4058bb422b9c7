/* cmd_score.c: `nmt score`, forced decoding of given translations by one model or an ensemble
 * (the models' options: cmd_models.h). */
#include <stdlib.h>

#include "base/err.h"
#include "cmd.h"
#include "cmd_models.h"
#include "data/corpus.h"
#include "nmt.h"
#include "opt.h"

/* Pairs scored in one call: a multiple of the decoder's batch, which nmt_score works through in
 * turn, so that the numbers are those of one call over all pairs; between calls the progress line. */
#define CALL_BATCHES 8

/* What score's options set. */
struct score_args {
    const char *src, *tgt, *output;
    int threads, progress, invariant;
    model_list models;
};

/* Parses score's options into a; OPT_GO, or the exit status (help, usage error). */
static int score_options(int argc, char **argv, struct score_args *a)
{
    opt table[] = {
        MODEL_OPTS(&a->models),
        OPT_STR("--src", &a->src, "FILE", "source sentences, tokenized (or raw for a model trained on raw text),\none per line"),
        OPT_STR("--tgt", &a->tgt, "FILE", "their translations (the same number of lines)"),
        OPT_INT("--threads", &a->threads, 1, 1024, "N", "threads (default: all cores)"),
        CMD_BATCH_INVARIANT_OPT(&a->invariant),
        CMD_DEVICE_OPT,
        CMD_OUTPUT_OPT(&a->output),
        CMD_PROGRESS_OPT(&a->progress),
        OPT_END,
    };
    opt_cmd c = {"score", "Usage: nmt score --model FILE [--model FILE ...] --src FILE --tgt FILE [--threads N]\n"
                 "Forced decoding: for each pair, the log-probability of the target (with its EOS) given the source\n"
                 "(a subword model's raw text is cut into its pieces first, and TOKENS counts pieces); an ensemble's\n"
                 "is the weighted mean of its models' log-probabilities, the score nmt translate searches with.\n"
                 "Prints one line per pair: TOTAL<TAB>PER_TOKEN<TAB>TOKENS (tokens count the EOS).\n"
                 "Limits: sources are read up to " STR(NMT_MAX_SRC_WORDS) " words; a target over " STR(NMT_MAX_TGT_WORDS) " words is an error.\n\n", NULL, table, 0, NULL};
    int nargs, rc = opt_parse(&c, argc, argv, NULL, &nargs);
    if (rc != OPT_GO) return rc;
    if (a->threads) nmt_set_threads(a->threads);
    if (!a->src || !a->tgt) { fprintf(stderr, "nmt score: error: --src and --tgt are required\n"); return CMD_USAGE; }
    return OPT_GO;
}

/* Both files, the same number of lines, as the model reads them; the exit status. */
static int read_pairs(const struct score_args *a, textfile *S, textfile *T)
{
    nmt_err err;
    if (textfile_read(S, a->src, &err) || textfile_read(T, a->tgt, &err)) {
        fprintf(stderr, "nmt score: error: %s\n", err.msg);
        return CMD_ERR;
    }
    if (S->nlines != T->nlines) {
        fprintf(stderr, "nmt score: error: %s has %ld lines but %s has %ld\n", a->src, S->nlines, a->tgt, T->nlines);
        return CMD_ERR;
    }
    if (cmd_model_lines(a->models.m[0], S, T, &err)) { /* a subword model reads raw text as its pieces */
        fprintf(stderr, "nmt score: error: %s\n", err.msg);
        return CMD_ERR;
    }
    return CMD_OK;
}

/* Every pair's log-probability and length, then one line each (nothing printed on an error). */
static int score_all(nmt_decoder *d, const textfile *S, const textfile *T, int progress, nmt_err *err)
{
    long ns = S->nlines, step = (long)nmt_translate_default_opts().batch * CALL_BATCHES;
    double *lp = malloc(sizeof(double) * (ns ? ns : 1));
    int *nt = malloc(sizeof(int) * (ns ? ns : 1)), rc = lp && nt ? NMT_OK : nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    cmd_progress prog;
    cmd_progress_start(&prog, "score", progress);
    for (long i = 0; i < ns && !rc; i += step) {
        int n = (int)(ns - i < step ? ns - i : step);
        rc = nmt_score(d, (const char *const *)S->line + i, (const char *const *)T->line + i, n, lp + i, nt + i, err);
        cmd_progress_add(&prog, n);
    }
    cmd_progress_end(&prog);
    for (long i = 0; i < ns && !rc; i++) printf("%.6f\t%.6f\t%d\n", lp[i], lp[i] / nt[i], nt[i]);
    free(lp);
    free(nt);
    return rc;
}

int cmd_score(int argc, char **argv)
{
    struct score_args a = {.invariant = 1};
    int rc = score_options(argc, argv, &a);
    if (rc != OPT_GO) return rc;
    textfile S = {0}, T = {0};
    nmt_decoder *d = NULL;
    nmt_translate_opts o = nmt_translate_default_opts();
    o.batch_invariant = a.invariant;
    nmt_err err;
    path_role in[MAX_MODELS + 2];
    int nin = cmd_model_roles(in, a.models.path, a.models.n);
    in[nin++] = (path_role){a.src, "the --src file"};
    in[nin++] = (path_role){a.tgt, "the --tgt file"};
    if (!(rc = load_models("score", &a.models)) && !(rc = read_pairs(&a, &S, &T)) &&
        !(rc = a.output ? cmd_output_to("score", a.output, in, nin) : 0) &&
        (decoder_of(&d, &a.models, &o, &err) || score_all(d, &S, &T, a.progress, &err))) {
        fprintf(stderr, "nmt score: error: %s\n", err.msg);
        rc = CMD_ERR;
    }
    nmt_decoder_free(d);
    textfile_free(&S);
    textfile_free(&T);
    free_models(&a.models);
    return rc;
}
