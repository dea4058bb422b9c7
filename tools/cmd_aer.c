/* cmd_aer.c: `nmt aer`, the alignment quality of hard links and of attention matrices against
 * a human gold alignment: precision, recall, AER and SAER over the whole corpus (src/eval/aer.h).
 * It parses options, calls the readers and metrics, and prints one "name value" line each. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval/aer.h"
#include "cmd.h"
#include "opt.h"

static const char aer_usage[] =
    "Usage: nmt aer --gold FILE (--test FILE | --soft FILE | both) [options]\n"
    "Scores word alignments against gold links (S = sure, P = sure + possible), over the\n"
    "whole corpus: precision = |A&P|/|A|, recall = |A&S|/|S|,\n"
    "AER = 1 - (|A&S| + |A&P|)/(|A| + |S|) (Och & Ney 2003) and, for attention matrices,\n"
    "SAER, the same with A replaced by the weights (Tu et al. 2016).\n\n";

static const char aer_after[] =
    "\nSource is the language named first in the gold folder (en for en-fr). Output, one\n"
    "'name value' per line: sentences, A, S, P, A&S, A&P, precision, recall, AER, and with\n"
    "--soft M_A (the summed weights), SAER. A ratio over zero prints n/a.\n";

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "nmt aer: error: %s%s%s%s (nmt aer --help)\n", msg, arg ? " '" : "", arg ? arg : "",
            arg ? "'" : "");
    return CMD_USAGE;
}

static void print_ratio(const char *name, double v)
{
    if (isnan(v)) printf("%-10s n/a\n", name);
    else printf("%-10s %.6f\n", name, v);
}

struct opts {
    const char *gold, *gold_possible, *test, *soft, *src, *tgt;
    aer_gold_opts g;
    int reverse;
};

/* Reads everything, checks it against itself, and prints the scores. */
static int run(const struct opts *o, nmt_err *err)
{
    aer_align gold = {0}, test = {0};
    aer_soft soft = {0};
    aer_lengths len = {0};
    aer_stats st = {0};
    int rc = o->gold_possible ? aer_gold_read_pair(&gold, o->gold, o->gold_possible, &o->g, err)
                              : aer_gold_read(&gold, o->gold, &o->g, err);
    if (rc == 0 && o->test) rc = aer_test_read(&test, o->test, o->reverse, err);
    if (rc == 0 && o->soft) rc = aer_soft_read(&soft, o->soft, err);
    /* Lengths from the token files, else those the matrices imply: every index must fit. */
    if (rc == 0 && o->src) rc = aer_lengths_read(&len, o->src, o->tgt, err);
    else if (rc == 0 && o->soft) rc = aer_lengths_from_soft(&len, &soft, err);
    if (rc == 0 && (o->src || o->soft)) {
        rc = aer_check_range(&gold, &len, err);
        if (rc == 0 && o->test) rc = aer_check_range(&test, &len, err);
        if (rc == 0 && o->soft && o->src) rc = aer_soft_check_shape(&soft, &len, err);
    }
    if (rc == 0 && !o->test) rc = aer_soft_argmax(&test, &soft, err);
    if (rc == 0) rc = aer_eval(&st, &gold, &test, err);
    if (rc == 0 && o->soft) rc = aer_eval_soft(&st, &gold, &soft, err);
    if (rc == 0) {
        printf("%-10s %zu\n", "sentences", st.n_sent);
        printf("%-10s %zu\n%-10s %zu\n%-10s %zu\n%-10s %zu\n%-10s %zu\n", "A", st.a, "S", st.s,
               "P", st.p, "A&S", st.a_s, "A&P", st.a_p);
        print_ratio("precision", aer_precision(&st));
        print_ratio("recall", aer_recall(&st));
        print_ratio("AER", aer_rate(&st));
        if (o->soft) {
            printf("%-10s %.6f\n", "M_A", st.m_a);
            print_ratio("SAER", aer_soft_rate(&st));
        }
    }
    aer_align_free(&gold);
    aer_align_free(&test);
    aer_soft_free(&soft);
    aer_lengths_free(&len);
    return rc;
}

int cmd_aer(int argc, char **argv)
{
    struct opts o = {0};
    o.g = aer_gold_opts_default();
    opt table[] = {
        OPT_STR1("--gold", &o.gold, "FILE", "gold links, S and P together (unless --gold-possible is given)"),
        OPT_STR1("--gold-possible", &o.gold_possible, "FILE", "P (sure and possible links); --gold then holds S only"),
        OPT_ENUM("--gold-format", &o.g.format, aer_gold_format_parse, "FMT", "talp, awesome, alibi or naacl",
               "talp     'i-j' sure, 'i?j' possible, 0-based (default; also the\n"
               "         .sure/.possible files and plain Pharaoh)\n"
               "awesome  'i-j' / 'ipj', 1-based (awesome-align *.gold)\n"
               "alibi    'id<TAB>links', 'i-j' / 'ipj', 0-based, French first:\n"
               "         swapped to English first (ALIBI ali_w2w_*.txt)\n"
               "naacl    'sent i j [S|P] [conf]' per line, 1-based, 0 = NULL\n"
               "         (NAACL 2003 *.wa)"),
        OPT_INT("--gold-base", &o.g.base, 0, 1, "N", "0 or 1: the gold positions' base, when not the format's own\n"
                "(naacl with 0 reads Bicici's de-en.ref.wa)"),
        OPT_FLAG("--gold-reverse", &o.g.reverse, 1, "the gold file writes the target position first"),
        OPT_STR1("--test", &o.test, "FILE", "links to score: Pharaoh 'i-j', 0-based, source first, one line\n"
                 "per sentence (an empty line: no link)"),
        OPT_FLAG("--test-reverse", &o.reverse, 1, "the test file writes 'j-i' (target first)"),
        OPT_STR1("--soft", &o.soft, "FILE", "attention matrices: per sentence, one line per target word with\n"
                 "the weights of its Tx source words, then an empty line; no EOS\n"
                 "row or column. Adds SAER; without --test, A is their arg-max."),
        OPT_STR1("--src", &o.src, "FILE", "the tokenized source sentences: every position is checked\n"
                 "against the sentence lengths (tokens split on single spaces)"),
        OPT_STR1("--tgt", &o.tgt, "FILE", "the tokenized target sentences, for the same check"),
        OPT_OLD("--reverse", "--test-reverse"),
        OPT_END,
    };
    opt_cmd c = {"aer", aer_usage, aer_after, table, 0, NULL};
    int nargs, rc = opt_parse(&c, argc, argv, NULL, &nargs);
    if (rc != OPT_GO) return rc;
    if (!o.gold) return usage_error("--gold FILE is required", NULL);
    if (!o.test && !o.soft) return usage_error("give --test FILE, --soft FILE or both", NULL);
    if (!o.src != !o.tgt) return usage_error("--src and --tgt go together", NULL);

    nmt_err err = {0};
    if (run(&o, &err)) {
        fprintf(stderr, "nmt aer: error: %s\n", err.msg);
        return CMD_ERR;
    }
    return CMD_OK;
}
