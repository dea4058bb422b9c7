/* cmd_vocab.c: `nmt vocab`: the shortlist vocabulary of a tokenized text with its coverage, or a
 * model's vocabulary (--model), one entry a line. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "data/corpus.h"
#include "nmt.h"
#include "opt.h"

/* `nmt vocab --model`: the vocabulary of one side (enum nmt_side) of a model. */
static int vocab_model(const char *path, int side)
{
    nmt_model *m = NULL;
    nmt_err err;
    if (nmt_model_load(&m, path, &err)) {
        fprintf(stderr, "nmt vocab: error: %s\n", err.msg);
        return CMD_ERR;
    }
    int n = nmt_model_vocab_size(m, side);
    for (int id = 0; id < n; id++) printf("%d\t%s\n", id, nmt_model_vocab_entry(m, side, id));
    fprintf(stderr, "nmt vocab: %s: %d %s entries (%s)\n", path, n, side == NMT_SOURCE ? "source" : "target",
            nmt_model_has_subwords(m) ? "SentencePiece pieces, with </s> and <unk>" : "words, with </s> and <unk>");
    nmt_model_free(m);
    return CMD_OK;
}

int cmd_vocab(int argc, char **argv)
{
    long K = 30002;
    const char *model = NULL;
    int side = 0;
    opt table[] = {
        OPT_LONG("--size --vocab", &K, 3, 4000000, "K", "entries counting </s> and <unk> (default {}; --vocab as in\n"
                 "nmt train)"),
        OPT_STR1("--model", &model, "FILE", "print this model's vocabulary instead: 'id<TAB>entry' lines (a subword\n"
                 "model's SentencePiece pieces)"),
        OPT_CHOICE("--side", &side, "src|tgt", "with --model: which side (default src)"),
        OPT_END,
    };
    opt_cmd c = {"vocab", "Usage: nmt vocab [--size K] FILE\n"
                 "       nmt vocab --model FILE [--side src|tgt]\n"
                 "Prints the K-entry shortlist vocabulary of a tokenized text (ids 0 </s> and 1 <unk>, then words by\n"
                 "falling count, ties in byte order), one 'id<TAB>word<TAB>count' line each, and its coverage on stderr.\n"
                 "FILE may be '-' for standard input.\n\n", NULL, table, 1, "one input file only"};
    char *args[1];
    int nargs, rc = opt_parse(&c, argc, argv, args, &nargs);
    if (rc != OPT_GO) return rc;
    const char *in = nargs ? args[0] : NULL;
    if (model && in) { fprintf(stderr, "nmt vocab: error: --model prints the model's vocabulary: no input file\n"); return CMD_USAGE; }
    if (!model && opt_given(&c, "--side")) { fprintf(stderr, "nmt vocab: error: --side goes with --model\n"); return CMD_USAGE; }
    if (model) return vocab_model(model, side);
    if (!in) { fprintf(stderr, "nmt vocab: error: no input file (nmt vocab --help)\n"); return CMD_USAGE; }
    textfile t;
    wordcount wc;
    nmt_err err;
    int rc_read = !strcmp(in, "-") ? textfile_read_fd(&t, 0, "<stdin>", &err) : textfile_read(&t, in, &err);
    if (rc_read || wordcount_build(&wc, &t, &err)) {
        fprintf(stderr, "nmt vocab: error: %s\n", err.msg);
        textfile_free(&t);
        return CMD_ERR;
    }
    printf("0\t</s>\t%ld\n1\t<unk>\t0\n", t.nlines);
    long shown = 0;
    for (long k = 0; k < wc.ntypes && shown < K - 2; k++) {
        if (!strcmp(wc.word[k], "</s>") || !strcmp(wc.word[k], "<unk>")) continue;
        printf("%ld\t%s\t%ld\n", shown + 2, wc.word[k], wc.count[k]);
        shown++;
    }
    fprintf(stderr, "nmt vocab: %ld of %ld word types kept; they cover %.2f%% of the %ld tokens\n", shown, wc.ntypes,
            100 * wordcount_coverage(&wc, (int)K), wc.ntokens);
    wordcount_free(&wc);
    textfile_free(&t);
    return CMD_OK;
}
