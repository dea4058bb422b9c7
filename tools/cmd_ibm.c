/* cmd_ibm.c: `nmt ibm`, a classical word aligner (IBM Model 1 with fast_align's diagonal prior,
 * src/eval/ibm.h) whose Pharaoh links feed `nmt lex --align` and `nmt aer --test`, so that attention
 * alignments can be compared with it. Parses options, trains one or both directions, prints. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval/aer.h"
#include "cmd.h"
#include "data/corpus.h"
#include "base/err.h"
#include "eval/ibm.h"
#include "text/words.h"
#include "opt.h"

static const char ibm_usage[] =
    "Usage: nmt ibm --src FILE --tgt FILE [options] > links\n"
    "Word alignment with IBM Model 1 and fast_align's diagonal prior (Dyer et al. 2013):\n"
    "p(a_i = j) = p0 for NULL, else (1-p0) exp(-lambda |i/m - j/n|) / Z; t(f|e) by EM.\n"
    "Prints one line per sentence pair: Pharaoh links 's-t' (0-based source position, target\n"
    "position), sorted by source then target; an empty line for a pair with an empty side.\n\n";

static const char ibm_after[] =
    "\nProgress goes to stderr: per iteration the log-likelihood (natural log) per generated\n"
    "word under the parameters before the update, and the seconds it took.\n";

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "nmt ibm: error: %s%s%s%s (nmt ibm --help)\n", msg, arg ? " '" : "", arg ? arg : "",
            arg ? "'" : "");
    return CMD_USAGE;
}

struct opts {
    const char *src, *tgt, *test_src, *test_tgt, *fwd_links, *rev_links;
    ibm_opts o;
    int reverse, sym; /* sym: enum ibm_sym, -1 = one direction only */
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Trains one direction with progress on stderr, then writes the Viterbi alignments of pairs
 * first .. first+count-1 into a (ibm_model_viterbi's layout). */
static int train_direction(const ibm_corpus *c, int reverse, const ibm_opts *o, long first,
                           long count, int *a, nmt_err *err)
{
    ibm_model *m;
    double t0 = now();
    int rc = ibm_model_init(&m, c, reverse, o, err);
    if (rc) return rc;
    const char *dir = reverse ? "reverse, t(source|target)" : "forward, t(target|source)";
    fprintf(stderr, "nmt ibm: %s: t over the co-occurring word pairs built in %.2f s\n", dir, now() - t0);
    for (int it = 0; it < o->iterations && rc == 0; it++) {
        ibm_iter_stats st;
        double t1 = now();
        rc = ibm_model_em(m, &st, err);
        if (rc) break;
        fprintf(stderr, "nmt ibm: %s: iteration %d/%d (%s): log-likelihood per %s word %.6f "
                "(%ld words, %zu word pairs in t), %.2f s\n", dir, st.iteration, o->iterations,
                st.diagonal ? "diagonal prior" : "model 1", reverse ? "source" : "target",
                st.words ? st.loglik / (double)st.words : 0.0, st.words, st.pairs, now() - t1);
    }
    if (rc == 0) rc = ibm_model_viterbi(m, first, count, a, err);
    ibm_model_free(m);
    return rc;
}

static void print_links(FILE *out, const int *l, int nl)
{
    for (int k = 0; k < nl; k++) fprintf(out, k ? " %d-%d" : "%d-%d", l[2 * k], l[2 * k + 1]);
    fputc('\n', out);
}

/* The links of o's pairs on out. */
static int run(const struct opts *o, FILE *out, nmt_err *err)
{
    textfile S, T, TS, TT;
    memset(&TS, 0, sizeof TS);
    memset(&TT, 0, sizeof TT);
    ibm_corpus c;
    memset(&c, 0, sizeof c);
    const char **sl = NULL, **tl = NULL;
    int *afwd = NULL, *arev = NULL, *links = NULL;
    void *scratch = NULL;
    int rc = textfile_read(&S, o->src, err);
    if (rc) return rc;
    rc = textfile_read(&T, o->tgt, err);
    if (rc) { textfile_free(&S); return rc; }
    if (S.nlines != T.nlines) {
        rc = nmt_fail(err, NMT_ERR_MISMATCH, "%s has %ld lines but %s has %ld", o->src, S.nlines,
                      o->tgt, T.nlines);
        goto out;
    }
    if (o->test_src) {
        if ((rc = textfile_read(&TS, o->test_src, err)) || (rc = textfile_read(&TT, o->test_tgt, err)))
            goto out;
        if (TS.nlines != TT.nlines) {
            rc = nmt_fail(err, NMT_ERR_MISMATCH, "%s has %ld lines but %s has %ld", o->test_src,
                          TS.nlines, o->test_tgt, TT.nlines);
            goto out;
        }
    }
    /* training = --src/--tgt then the test pairs; the output covers the test pairs if given */
    long n = S.nlines + TS.nlines, first = o->test_src ? S.nlines : 0, count = n - first;
    sl = malloc(sizeof(char *) * (size_t)(n ? n : 1));
    tl = malloc(sizeof(char *) * (size_t)(n ? n : 1));
    if (!sl || !tl) { rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); goto out; }
    for (long k = 0; k < S.nlines; k++) { sl[k] = S.line[k]; tl[k] = T.line[k]; }
    for (long k = 0; k < TS.nlines; k++) { sl[S.nlines + k] = TS.line[k]; tl[S.nlines + k] = TT.line[k]; }
    if ((rc = ibm_corpus_init(&c, sl, tl, n, err))) goto out;
    long trained = 0;
    for (long k = 0; k < n; k++) trained += ibm_corpus_len(&c, 0, k) > 0 && ibm_corpus_len(&c, 1, k) > 0;
    fprintf(stderr, "nmt ibm: %ld sentence pairs (%ld with words on both sides), %ld source and "
            "%ld target words\n", n, trained, c.off[0][n], c.off[1][n]);

    int need_fwd = o->sym >= 0 || !o->reverse, need_rev = o->sym >= 0 || o->reverse;
    size_t nsrc = (size_t)(c.off[0][n] - c.off[0][first]), ntgt = (size_t)(c.off[1][n] - c.off[1][first]);
    afwd = malloc(sizeof(int) * (ntgt ? ntgt : 1));
    arev = malloc(sizeof(int) * (nsrc ? nsrc : 1));
    if (!afwd || !arev) { rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); goto out; }
    if (need_fwd && (rc = train_direction(&c, 0, &o->o, first, count, afwd, err))) goto out;
    if (need_rev && (rc = train_direction(&c, 1, &o->o, first, count, arev, err))) goto out;

    /* buffers sized for the largest output pair: scratch, the two directions' links, the result */
    size_t scratch_size = 1;
    int max_links = 1;
    for (long k = first; k < n; k++) {
        int ns = ibm_corpus_len(&c, 0, k), nt = ibm_corpus_len(&c, 1, k);
        if (ibm_links_scratch(ns, nt) > scratch_size) scratch_size = ibm_links_scratch(ns, nt);
        if (ns + nt > max_links) max_links = ns + nt;
    }
    scratch = malloc(scratch_size);
    links = malloc(sizeof(int) * 2 * ((size_t)c.max_len[0] + c.max_len[1] + (size_t)max_links + 1));
    if (!scratch || !links) { rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); goto out; }
    int mode = o->sym >= 0 ? o->sym : o->reverse ? IBM_SYM_REVERSE : IBM_SYM_FORWARD;
    int *lf = links, *lr = links + 2 * (size_t)c.max_len[1], *res = lr + 2 * (size_t)c.max_len[0];
    for (long k = first; k < n; k++) {
        int ns = ibm_corpus_len(&c, 0, k), nt = ibm_corpus_len(&c, 1, k), nf = 0, nr = 0;
        if (need_fwd) nf = ibm_viterbi_links(afwd + (c.off[1][k] - c.off[1][first]), nt, 0, lf);
        if (need_rev) nr = ibm_viterbi_links(arev + (c.off[0][k] - c.off[0][first]), ns, 1, lr);
        int nl = ibm_links(mode, ns, nt, lf, nf, lr, nr, scratch, res);
        NMT_ASSERT(nl >= 0); /* Viterbi links always fit their pair */
        print_links(out, res, nl);
    }
out:
    free(sl);
    free(tl);
    free(afwd);
    free(arev);
    free(scratch);
    free(links);
    ibm_corpus_free(&c);
    textfile_free(&S);
    textfile_free(&T);
    textfile_free(&TS);
    textfile_free(&TT);
    return rc;
}

/* The links of sentence k of a Pharaoh file as an (i, j) list, each checked against the pair's
 * lengths (the file's line in the message). */
static int links_of(const aer_align *a, long k, int ns, int nt, int *out, int *nl, nmt_err *err)
{
    *nl = 0;
    for (size_t x = a->off[k]; x < a->off[k + 1]; x++) {
        const aer_link *l = &a->links[x];
        if (l->i >= ns || l->j >= nt)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: link %d-%d is outside sentence pair %ld, "
                            "which has %d source and %d target words", a->path, l->line, l->i, l->j,
                            k + 1, ns, nt);
        out[2 * *nl] = l->i;
        out[2 * *nl + 1] = l->j;
        (*nl)++;
    }
    return NMT_OK;
}

/* --fwd-links/--rev-links: symmetrise two given directional alignments of --src/--tgt. */
static int combine(const struct opts *o, nmt_err *err)
{
    textfile S, T;
    aer_align fa, ra;
    memset(&fa, 0, sizeof fa);
    memset(&ra, 0, sizeof ra);
    int *buf = NULL;
    void *scratch = NULL;
    int rc = textfile_read(&S, o->src, err);
    if (rc) return rc;
    if ((rc = textfile_read(&T, o->tgt, err))) { textfile_free(&S); return rc; }
    if (S.nlines != T.nlines) {
        rc = nmt_fail(err, NMT_ERR_MISMATCH, "%s has %ld lines but %s has %ld", o->src, S.nlines,
                      o->tgt, T.nlines);
        goto out;
    }
    if ((rc = aer_test_read(&fa, o->fwd_links, 0, err)) || (rc = aer_test_read(&ra, o->rev_links, 0, err)))
        goto out;
    const aer_align *both[2] = {&fa, &ra};
    size_t scratch_size = 1, max_links = 1;
    for (int d = 0; d < 2; d++) {
        if (both[d]->n_sent != (size_t)S.nlines) {
            rc = nmt_fail(err, NMT_ERR_MISMATCH, "%s has %zu sentences but %s has %ld lines",
                          both[d]->path, both[d]->n_sent, o->src, S.nlines);
            goto out;
        }
    }
    for (long k = 0; k < S.nlines; k++) {
        size_t sz = ibm_links_scratch(text_count_words(S.line[k]), text_count_words(T.line[k]));
        size_t nl = fa.off[k + 1] - fa.off[k] + ra.off[k + 1] - ra.off[k];
        if (sz > scratch_size) scratch_size = sz;
        if (nl > max_links) max_links = nl;
    }
    scratch = malloc(scratch_size);
    buf = malloc(sizeof(int) * 4 * max_links); /* the forward and reverse links, then the result */
    if (!scratch || !buf) { rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); goto out; }
    for (long k = 0; k < S.nlines; k++) {
        int ns = text_count_words(S.line[k]), nt = text_count_words(T.line[k]), nf, nr;
        int *lf = buf, *lr = NULL, *res = buf + 2 * max_links;
        if ((rc = links_of(&fa, k, ns, nt, lf, &nf, err))) goto out;
        lr = lf + 2 * nf;
        if ((rc = links_of(&ra, k, ns, nt, lr, &nr, err))) goto out;
        int nl = ibm_links(o->sym, ns, nt, lf, nf, lr, nr, scratch, res);
        NMT_ASSERT(nl >= 0); /* every link was checked */
        print_links(stdout, res, nl);
    }
out:
    free(buf);
    free(scratch);
    aer_align_free(&fa);
    aer_align_free(&ra);
    textfile_free(&S);
    textfile_free(&T);
    return rc;
}

int cmd_ibm_links(const char *src, const char *tgt, const char *path, nmt_err *err)
{
    struct opts o;
    memset(&o, 0, sizeof o);
    o.o = ibm_opts_default();
    o.src = src;
    o.tgt = tgt;
    o.sym = IBM_SYM_GROW_DIAG_FINAL_AND;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return nmt_fail(err, NMT_ERR_IO, "%s: %s", tmp, strerror(errno));
    int rc = run(&o, f, err);
    if (fclose(f) && !rc) rc = nmt_fail(err, NMT_ERR_IO, "%s: %s", tmp, strerror(errno));
    if (!rc && rename(tmp, path)) rc = nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
    if (rc) remove(tmp);
    return rc;
}

int cmd_ibm(int argc, char **argv)
{
    struct opts o;
    memset(&o, 0, sizeof o);
    o.o = ibm_opts_default();
    o.sym = -1;
    opt table[] = {
        OPT_STR1("--src", &o.src, "FILE", "tokenized source text, one sentence per line (tokens split on\n"
                 "blanks); the source is what 's' indexes"),
        OPT_STR1("--tgt", &o.tgt, "FILE", "the target side, line k the translation of source line k"),
        OPT_STR1("--test-src", &o.test_src, "FILE", "also align these (e.g. a gold test set): train on --src/--tgt\n"
                 "followed by them, print links for these lines only"),
        OPT_STR1("--test-tgt", &o.test_tgt, "FILE", "their target side"),
        OPT_INT("--iterations", &o.o.iterations, 1, 100000, "N", "EM iterations (default {})"),
        OPT_INT("--model1", &o.o.model1_iterations, 0, 100000, "N", "the first N of them plain IBM Model 1, uniform over NULL and\n"
                "the source words (default {}, like fast_align); N >= iterations\n"
                "gives plain Model 1 throughout"),
        OPT_DBL("--lambda", &o.o.lambda, 0, 1e6, "X", "diagonal tension (default {}; 0: no preference for the diagonal)"),
        {.names = "--p0", .kind = OPTK_DBL, .dst = &o.o.p0, .lo = 0, .hi = 1, .flags = OPT_BELOW_HI, .arg = "X",
         .help = "NULL probability, in [0, 1) (default {})"},
        OPT_FLAG("--reverse", &o.reverse, 1, "align the other way: each source word to a target position\n"
                 "(t(source|target)); links are still printed source first"),
        OPT_ENUM("--sym", &o.sym, ibm_sym_parse, "MODE",
                 "intersect, union, grow-diag, grow-diag-final or grow-diag-final-and (gdfa)", "train both directions and combine their links: intersect,\n"
               "union, grow-diag, grow-diag-final, grow-diag-final-and (gdfa);\n"
               "Koehn et al. 2003 as in Moses' pseudo-code (src/eval/ibm.h)"),
        OPT_INT("--threads", &o.o.threads, 1, 1024, "N", "OpenMP threads (default: OpenMP's); output does not depend on it"),
        OPT_STR1("--fwd-links", &o.fwd_links, "FILE", "with --sym MODE and --rev-links: no training; combine these\n"
                 "two alignments of --src/--tgt (Pharaoh, source first, as 'nmt ibm'\n"
                 "and 'nmt ibm --reverse' print them; any links will do)"),
        OPT_STR1("--rev-links", &o.rev_links, "FILE", "the other direction's links, for --fwd-links"),
        OPT_END,
    };
    opt_cmd c = {"ibm", ibm_usage, ibm_after, table, 0, NULL};
    int nargs, rc = opt_parse(&c, argc, argv, NULL, &nargs);
    if (rc != OPT_GO) return rc;
    /* a training option given, for the message */
    static const char *const training_opts[] = {"--iterations", "--model1", "--lambda", "--p0", "--threads"};
    const char *training = NULL;
    for (int k = 0; k < 5 && !training; k++)
        if (opt_given(&c, training_opts[k])) training = training_opts[k];
    if (!o.src || !o.tgt) return usage_error("--src FILE and --tgt FILE are required", NULL);
    if (!o.test_src != !o.test_tgt) return usage_error("--test-src and --test-tgt go together", NULL);
    if (o.reverse && o.sym >= 0) return usage_error("--reverse and --sym exclude each other", NULL);
    if (o.fwd_links || o.rev_links) {
        if (!o.fwd_links || !o.rev_links) return usage_error("--fwd-links and --rev-links go together", NULL);
        if (o.sym < 0) return usage_error("--fwd-links and --rev-links need --sym MODE", NULL);
        if (o.test_src) return usage_error("--test-src/--test-tgt do not apply to --fwd-links/--rev-links", NULL);
        if (training)
            return usage_error("--fwd-links/--rev-links combine given links: no training option applies:", training);
    }

    nmt_err err = {0};
    if (o.fwd_links ? combine(&o, &err) : run(&o, stdout, &err)) {
        fprintf(stderr, "nmt ibm: error: %s\n", err.msg);
        return CMD_ERR;
    }
    return CMD_OK;
}
