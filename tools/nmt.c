/* nmt.c: the `nmt` command. It only dispatches to one function per subcommand (tools/cmd_*.c);
 * each of those parses its own options and calls the library. Only this program exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "nmt.h"

static const struct cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} cmds[] = {
    {"train", cmd_train, "train a model on a parallel corpus (Appendix B of Bahdanau et al.)"},
    {"translate", cmd_translate, "translate text with beam search (n-best lists, alignments) or by sampling"},
    {"serve", cmd_serve, "HTTP translation server with dynamic batching and a page showing the attention"},
    {"convert", cmd_convert, "a Marian (OPUS-MT) model as an nmt model file"},
    {"average", cmd_average, "checkpoint averaging: the mean of several models' parameters, as one model"},
    {"score", cmd_score, "log-probability of given translations under a model (forced decoding)"},
    {"align", cmd_align, "forced alignment from the attention: Pharaoh links, soft matrices or JSON"},
    {"plot", cmd_plot, "attention heat map of one sentence pair (SVG, PNG, PDF), as Figure 3"},
    {"ibm", cmd_ibm, "word aligner: IBM Model 1 + fast_align's diagonal prior, EM; Pharaoh links"},
    {"lex", cmd_lex, "lexical table for UNK replacement, from attention or given alignments"},
    {"vocab", cmd_vocab, "build and print a shortlist vocabulary with its coverage, or a model's (--model)"},
    {"segment", cmd_segment, "how a model cuts sentences into its tokens (a subword model's pieces)"},
    {"tokenize", cmd_tokenize, "Moses tokenizer.perl (en/fr/de, -a, --no-escape, --lowercase --normalize-punct)"},
    {"detokenize", cmd_detokenize, "Moses detokenizer.perl (en/fr/de)"},
    {"bleu", cmd_bleu, "corpus/sentence BLEU and chrF2, sacreBLEU 2.x's numbers and order (REF... < HYP)"},
    {"report", cmd_report, "Table 1 (BLEU: all / no-UNK) and Figure 2 (BLEU by sentence length: TSV, SVG, PNG) for several systems"},
    {"aer", cmd_aer, "alignment error rate (AER, SAER) against gold alignments"},
    {"blas-kernels", cmd_blas_kernels, "which of OpenBLAS's kernels nmt runs (timed once per CPU model), and why"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "Usage: nmt <command> [options]   (nmt <command> --help for its options)\n\n"
               "Commands:\n");
    for (const struct cmd *c = cmds; c->name; c++) fprintf(f, "  %-12s %s\n", c->name, c->help);
}

/* nmt's loops over the batch are OpenMP, and it is linked with OpenBLAS's OpenMP build, whose
 * products then share the same threads. Its run path yields to LD_LIBRARY_PATH, which can bring
 * in the pthreads build instead: two pools of threads on the same cores, several times slower
 * when they spin. Say so rather than run slowly in silence. */
int openblas_get_parallel(void);

static void blas_threads_check(void)
{
    if (openblas_get_parallel() == 1)
        fprintf(stderr, "[W::nmt] the OpenBLAS loaded is its pthreads build (LD_LIBRARY_PATH?), not the OpenMP one nmt "
                        "was linked with: its threads and nmt's compete for the cores\n");
}

int main(int argc, char **argv)
{
    /* not for blas-kernels, which shows or redoes the choice */
    if ((argc < 2 || strcmp(argv[1], "blas-kernels")) && blas_kernels_choose(argv)) return 2;
    blas_threads_check();
    if (argc < 2) { usage(stderr); return 2; }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) { printf("nmt %s\n", NMT_VERSION_STRING); return 0; }
    const char *dev = getenv("NMT_DEVICE"); /* the library read it too; a bad name is a usage error here */
    nmt_err e;
    if (dev && *dev && nmt_set_device(dev, &e)) {
        fprintf(stderr, "nmt: NMT_DEVICE: %s\n", e.msg);
        return 2;
    }
    for (const struct cmd *c = cmds; c->name; c++)
        if (!strcmp(argv[1], c->name)) {
            nmt_set_log(cmd_log, (void *)c->name); /* the library's warnings, as "nmt CMD: warning: ..." */
            return cmd_finish(c->run(argc - 1, argv + 1));
        }
    fprintf(stderr, "nmt: unknown command '%s' (nmt --help lists them)\n", argv[1]);
    return 2;
}
