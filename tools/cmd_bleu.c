/* cmd_bleu.c: `nmt bleu REF [REF...] < HYP` (or -i HYP), in sacreBLEU's order: corpus or
 * sentence BLEU, chrF2 (chrF++ with --chrf-word-order 2) and TER of a hypothesis file against
 * one or more reference files, numbers and signatures as sacreBLEU 2.x prints them (its text
 * and JSON formats), with our version in the signatures. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/corpus.h"
#include "eval/bleu.h"
#include "eval/bootstrap.h"
#include "eval/chrf.h"
#include "eval/ter.h"
#include "cmd.h"
#include "opt.h"
#include "text/unicode.h"

#define MAX_REFS 64
#define MAX_REFS_STR "64"
#define MAX_SYS 64 /* parse_input says so */
#define BS_SEED 12345 /* sacreBLEU's default SACREBLEU_SEED */
#define VERSION "nmt-" NMT_VERSION_STRING

static const char bleu_usage[] =
    "Usage: nmt bleu [options] REF [REF...] < HYP\n"
    "       nmt bleu [options] -i HYP REF [REF...]\n"
    "       nmt bleu [options] REF [REF...] -i BASELINE SYS [SYS...] --paired-bs\n"
    "\n"
    "Scores the hypothesis HYP against one or more reference files (UTF-8, one segment per line,\n"
    "line k of every file belonging together) with BLEU, chrF2 (chrF++) and/or TER, computed\n"
    "exactly as sacreBLEU 2.x computes them. The order is sacreBLEU's: the references are the arguments, the\n"
    "hypothesis comes on standard input or with -i (`sacrebleu REF... -i HYP` runs as it is).\n"
    "\n"
    "Options:\n";

static const char bleu_after[] =
    "\n"
    "Output (text): one line per metric, e.g.\n"
    "  BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:" VERSION " = 50.8636\n"
    "    87.5/62.6/47.6/36.8 (BP = 0.914 ratio = 0.917 hyp_len = 12388 ref_len = 13505)\n"
    "  (one line): the score, the 1- to 4-gram precisions, the brevity penalty, the ratio\n"
    "  hyp_len / ref_len and the token counts. chrF2 (chrF2++) and TER print their signature\n"
    "  and score, in the order -m names the metrics.\n"
    "With --sentence and several metrics, their scores are separated by tabs.\n"
    "--paired-bs (sacreBLEU's paired bootstrap resampling, BLEU only) prints the signature, then one\n"
    "line per system: its name, its BLEU, the resampled mean and 95% interval, and for each system\n"
    "after the baseline the p-value of its difference from the baseline ('*' below 0.05).\n"
    "Exit status: 0 success, 1 unreadable or mismatched input, 2 bad usage.\n";

/* ---------------- input ---------------- */

/* Reads path ("-": standard input) through the library's line reader: every line valid UTF-8
 * without NUL bytes, errors naming file:line, gzip data decompressed. Prints the error and
 * returns CMD_ERR on failure. */
static int text_load(textfile *t, const char *path)
{
    nmt_err err;
    int rc = !strcmp(path, "-") ? textfile_read_fd(t, 0, "<stdin>", &err) : textfile_read(t, path, &err);
    if (rc) fprintf(stderr, "nmt bleu: error: %s\n", err.msg);
    return rc ? CMD_ERR : CMD_OK;
}

/* ---------------- options ---------------- */

enum { M_BLEU, M_CHRF, M_TER, NMETRICS };
static const char *const metric_names[NMETRICS] = {"bleu", "chrf", "ter"};

struct args {
    bleu_opts bleu;
    chrf_opts chrf;
    ter_opts ter;
    int do_bleu, do_chrf, do_ter, sentence, score_only, json, paired, bs_n;
    int rank[NMETRICS], nranked; /* 1 + the place of a metric's first mention in -m, 0 if none */
    int order[NMETRICS], norder; /* the metrics to compute: -m's order, then any --chrf adds */
    long width;
    const char *inputs[MAX_SYS]; /* -i's files: the hypothesis, or with --paired-bs the systems */
    int ninputs;
    const char *files[MAX_REFS + 1]; /* the hypothesis ("-": standard input), then the references */
    int nfiles;
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "nmt bleu: error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (nmt bleu --help shows the usage)\n");
    va_end(ap);
    return CMD_USAGE;
}

#define METRIC_HINT "expected bleu, chrf or ter (chrF++ is -m chrf --chrf-word-order 2)"

/* Whether val, which is not a metric name, reads as a mistyped one rather than a file: no such
 * file, and no '.' or '/' in it ("chrf2", "TER"). -m then takes it, to refuse it by name. */
static int looks_like_metric(const char *val)
{
    return *val && !strpbrk(val, "./") && access(val, F_OK) != 0;
}

/* -m bleu chrf ter (sacreBLEU's spelling, one metric per argument) or -m bleu,chrf; dst NULL only
 * asks whether val continues the list: a metric list does, and so does a word that is no file
 * and reads as a mistyped metric, to be refused; anything else (a REF) ends it. The first value
 * replaces the default, later ones add. */
static const char *parse_metrics(void *dst, const char *val, int nth)
{
    int want[NMETRICS] = {0}, order[NMETRICS], n = 0;
    char buf[64];
    if (strlen(val) >= sizeof buf) return METRIC_HINT;
    strcpy(buf, val);
    for (char *m = strtok(buf, ","); m; m = strtok(NULL, ",")) {
        int k = 0;
        while (k < NMETRICS && strcmp(m, metric_names[k])) k++;
        if (k == NMETRICS && !dst) return looks_like_metric(val) ? NULL : "not a metric";
        if (k == NMETRICS) return nth ? "unknown metric, and no file of that name: " METRIC_HINT : "unknown metric: " METRIC_HINT;
        if (!want[k]) order[n++] = k;
        want[k] = 1;
    }
    if (n == 0) return METRIC_HINT;
    struct args *a = dst;
    if (!a) return NULL;
    if (nth == 0) {
        a->do_bleu = a->do_chrf = a->do_ter = a->nranked = 0;
        memset(a->rank, 0, sizeof a->rank);
    }
    int *flag[NMETRICS] = {&a->do_bleu, &a->do_chrf, &a->do_ter};
    for (int i = 0; i < n; i++) {
        if (!a->rank[order[i]]) a->rank[order[i]] = ++a->nranked; /* sacreBLEU's dict keeps the first */
        *flag[order[i]] = 1;
    }
    return NULL;
}

/* The metrics to compute in their order: -m's, then those --chrf turned on. */
static void finish_order(struct args *a)
{
    int on[NMETRICS] = {a->do_bleu, a->do_chrf, a->do_ter};
    a->norder = 0;
    for (int r = 1; r <= a->nranked; r++)
        for (int m = 0; m < NMETRICS; m++)
            if (on[m] && a->rank[m] == r) a->order[a->norder++] = m, on[m] = 0;
    for (int m = 0; m < NMETRICS; m++)
        if (on[m]) a->order[a->norder++] = m;
}

/* -i FILE [FILE...] (sacreBLEU's nargs): every value is a file; dst NULL asks whether the next
 * argument is one more. */
static const char *parse_input(void *dst, const char *val, int nth)
{
    (void)nth;
    struct args *a = dst;
    if (!a) return NULL;
    if (a->ninputs == MAX_SYS) return "too many files (at most 64)";
    a->inputs[a->ninputs++] = val;
    return NULL;
}

static const char *parse_smooth(void *dst, const char *val, int nth)
{
    (void)nth;
    return bleu_smooth_parse(val, dst) ? "expected exp, none, floor or add-k" : NULL;
}

/* sacreBLEU's -l SRC-TGT (its recorded command lines carry it): two language codes. It picks
 * sacreBLEU's tokenizer when -tok is not given: its own for a Chinese, Japanese or Korean target,
 * which nmt bleu does not have, else 13a as here. */
static const char *parse_langpair(void *dst, const char *val, int nth)
{
    (void)nth;
    /* two language codes of 2 or 3 lowercase letters: anything else (a file named ref-a.fr after an
     * old -l meaning lowercase) is refused rather than taken for a pair and dropped */
    size_t a = strspn(val, "abcdefghijklmnopqrstuvwxyz"), b = a < strlen(val) ? strspn(val + a + 1, "abcdefghijklmnopqrstuvwxyz") : 0;
    const char *dash = val + a;
    if (a < 2 || a > 3 || *dash != '-' || b < 2 || b > 3 || dash[1 + b])
        return "expected a language pair such as en-fr (sacreBLEU's -l; lowercasing is -lc)";
    if (dst) *(const char **)dst = dash + 1;
    return NULL;
}

/* What nmt bleu says when the hypothesis would be read from a terminal, or is empty on
 * standard input: most likely a command line in the order before sacreBLEU's. */
#define ORDER_HINT "the order is sacreBLEU's: nmt bleu REF [REF...] < HYP, or nmt bleu -i HYP REF [REF...] " \
                   "(the hypothesis no longer comes first)"

/* --paired-bs: the systems are -i's files, the references the arguments; BLEU alone, as text. */
static int paired_args(struct args *a, int nrefs)
{
    if (a->ninputs < 2) return usage_error("--paired-bs compares systems with a baseline: -i BASELINE SYS [SYS...]");
    if (a->do_chrf || a->do_ter || !a->do_bleu) return usage_error("--paired-bs scores BLEU only");
    if (a->sentence || a->json || a->score_only)
        return usage_error("--paired-bs prints its own lines: not with --sentence, --format json or --score-only");
    a->nfiles = nrefs + 1;
    return OPT_GO;
}

/* Returns OPT_GO, or the exit status after --help or a usage error. */
static int parse_args(struct args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->do_bleu = 1;
    a->width = 4;
    a->bs_n = 1000;
    const char *target = NULL;
    opt table[] = {
        {.names = "-i --input", .kind = OPTK_FN, .dst = a, .fn = parse_input, .flags = OPT_MORE, .arg = "HYP",
         .help = "the hypothesis file (default: standard input); with --paired-bs the\n"
                 "baseline, then the systems compared with it"},
        OPT_FLAG("--paired-bs", &a->paired, 1, "paired bootstrap resampling of BLEU (as sacreBLEU's --paired-bs;\n"
                 "seed 12345)"),
        OPT_INT("--paired-bs-n", &a->bs_n, 40, 1000000, "N", "resamples for --paired-bs (default {})"),
        OPT_FN("-t -tok --tokenize", &a->bleu.tokenize, cmd_parse_bleu_tok, "13a|intl|none", "BLEU tokenizer (default 13a)"),
        OPT_FLAG("-lc --lowercase", &a->bleu.lowercase, 1, "case-insensitive: lowercase hypothesis and references"),
        {.names = "-m --metrics", .kind = OPTK_FN, .dst = a, .fn = parse_metrics, .flags = OPT_MORE, .arg = "LIST",
         .help = "bleu, chrf, ter or several ('bleu chrf ter' or bleu,chrf,ter;\n"
                 "default bleu): the list ends at the next option or at the first\n"
                 "argument that is no metric name (a REF)"},
        {.names = "--chrf", .kind = OPTK_FLAG, .dst = &a->do_chrf, .dst2 = &a->do_bleu, .lo = 1,
         .help = "the same as --metrics bleu chrf"},
        OPT_INT("-cw --chrf-word-order", &a->chrf.word_order, 0, CHRF_MAX_WORD_ORDER, "N",
                "chrF's word n-gram orders (default {}; 2 is chrF++, as sacreBLEU's)"),
        OPT_FLAG("--ter-case-sensitive", &a->ter.case_sensitive, 1, "TER tells upper from lower case (sacreBLEU's TER\n"
                 "default, case:lc, does not; -lc does not change TER)"),
        OPT_FLAG("--ter-normalized", &a->ter.normalized, 1, "TER splits off punctuation first (tercom's normalisation)"),
        OPT_FLAG("--ter-no-punct", &a->ter.no_punct, 1, "TER removes . , ? : ; ! \" ( ) first"),
        OPT_FN("-s --smooth-method", &a->bleu.smooth, parse_smooth, "M", "BLEU smoothing: exp, none, floor or add-k (default exp)"),
        OPT_DBL("-sv --smooth-value", &a->bleu.smooth_value, 0, 1e9, "X", "the value for floor (default 0.1) or add-k (default 1)"),
        OPT_FLAG("--sentence -sl --sentence-level", &a->sentence, 1, "one line of scores per segment (sentence BLEU uses\n"
                 "effective order, as sacrebleu --sentence-level does)"),
        OPT_FLAG("-b --score-only", &a->score_only, 1, "print only the score(s)"),
        OPT_LONG("-w --width", &a->width, 0, 17, "N", "decimals of the scores (default {})"),
        OPT_CHOICE("-f --format", &a->json, "text|json", "corpus output format (default {}; json as sacreBLEU's)"),
        OPT_FN("-l --language-pair", &target, parse_langpair, "SRC-TGT", "as sacreBLEU's: checked, changes nothing (a zh, ja or ko\n"
               "target, where sacreBLEU picks a tokenizer of its own, needs -tok)"),
        OPT_END,
    };
    opt_cmd c = {"bleu", bleu_usage, bleu_after, table, MAX_REFS, "at most " MAX_REFS_STR " reference files"};
    int nrefs, rc = opt_parse(&c, argc, argv, (char **)a->files + 1, &nrefs);
    if (rc != OPT_GO) return rc;
    if (target && a->do_bleu && !opt_given(&c, "--tokenize") && (!strcmp(target, "zh") || !strcmp(target, "ja") || !strcmp(target, "ko")))
        return usage_error("-l: sacreBLEU scores a '%s' target with a tokenizer of its own, which nmt bleu does not have; "
                           "give -tok 13a, intl or none", target);
    if (!a->paired && opt_given(&c, "--paired-bs-n")) return usage_error("--paired-bs-n goes with --paired-bs");
    finish_order(a);
    if (!a->do_chrf && opt_given(&c, "--chrf-word-order")) return usage_error("--chrf-word-order goes with -m chrf");
    if (!a->do_ter && (opt_given(&c, "--ter-case-sensitive") || opt_given(&c, "--ter-normalized") || opt_given(&c, "--ter-no-punct")))
        return usage_error("the --ter-* options go with -m ter");
    /* without --paired-bs, -i names one hypothesis: files after it are references (nmt bleu -i HYP REF) */
    for (int i = 1; i < a->ninputs && !a->paired; i++) {
        if (nrefs == MAX_REFS) return usage_error("at most " MAX_REFS_STR " reference files");
        a->files[1 + nrefs++] = a->inputs[i];
    }
    if (nrefs < 1) return usage_error("expected at least one REF; %s", ORDER_HINT);
    for (int i = 1; i <= nrefs; i++)
        if (!strcmp(a->files[i], "-"))
            return usage_error("a REF cannot be '-': standard input is the hypothesis (or -i HYP)");
    if (a->paired) return paired_args(a, nrefs);
    if (!a->ninputs && isatty(STDIN_FILENO))
        return usage_error("no hypothesis: standard input is a terminal; %s", ORDER_HINT);
    a->files[0] = a->ninputs ? a->inputs[0] : "-";
    a->nfiles = nrefs + 1;
    if (a->sentence && a->json && !a->score_only)
        return usage_error("--format json is for corpus scores, not --sentence");
    a->bleu.effective_order = a->sentence; /* as sacrebleu --sentence-level */
    return OPT_GO;
}

/* ---------------- output ---------------- */

static void bleu_verbose(char *buf, size_t size, const bleu_score *s)
{
    snprintf(buf, size, "%.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %lld ref_len = %lld)",
             s->precisions[0], s->precisions[1], s->precisions[2], s->precisions[3], s->bp,
             s->ratio, (long long)s->hyp_len, (long long)s->ref_len);
}

/* Python's float(f"{x:.{w}f}") printed by json.dumps: the rounded digits without trailing
 * zeros, keeping one decimal ("0.0", "100.0", "50.8636"). */
static void json_number(char *buf, size_t size, double x, int width)
{
    snprintf(buf, size, "%.*f", width, x);
    char *dot = strchr(buf, '.');
    if (!dot) {
        size_t n = strlen(buf);
        if (n + 2 < size) strcpy(buf + n, ".0");
        return;
    }
    char *e = buf + strlen(buf) - 1;
    while (e > dot + 1 && *e == '0') *e-- = '\0';
}

/* sacreBLEU's JSON object for one metric: name, score, signature, [verbose_score], then each
 * signature field, indented by one space. */
static void print_json(const char *name, double score, int width, const char *sig,
                       const char *verbose)
{
    char num[64];
    json_number(num, sizeof num, score, width);
    printf("{\n \"name\": \"%s\",\n \"score\": %s,\n \"signature\": \"%s\",\n", name, num, sig);
    if (verbose) printf(" \"verbose_score\": \"%s\",\n", verbose);
    const char *p = sig;
    while (*p) {
        const char *bar = strchr(p, '|'), *end = bar ? bar : p + strlen(p);
        const char *colon = memchr(p, ':', (size_t)(end - p));
        if (colon)
            printf(" \"%.*s\": \"%.*s\"%s\n", (int)(colon - p), p, (int)(end - colon - 1),
                   colon + 1, bar ? "," : "");
        p = bar ? bar + 1 : end;
    }
    printf("}");
}

/* ---------------- the command ---------------- */

/* The hypothesis and reference files, checked to have the same number of lines, at least one. */
static int load_texts(textfile *t, const struct args *a)
{
    int rc = CMD_OK;
    for (int i = 0; i < a->nfiles && rc == CMD_OK; i++) rc = text_load(&t[i], a->files[i]);
    /* an empty or mismatched standard input is likely a command line in the old order */
    const char *hint = !strcmp(a->files[0], "-") ? " (" ORDER_HINT ")" : "";
    for (int i = 1; i < a->nfiles && rc == CMD_OK; i++) {
        if (t[i].nlines != t[0].nlines) {
            fprintf(stderr, "nmt bleu: error: %s has %ld lines but %s has %ld%s\n", t[0].path, t[0].nlines, t[i].path,
                    t[i].nlines, hint);
            rc = CMD_ERR;
        }
    }
    if (rc == CMD_OK && t[0].nlines == 0) {
        fprintf(stderr, "nmt bleu: error: %s has no lines to score%s\n", t[0].path, hint);
        rc = CMD_ERR;
    }
    return rc;
}

/* The statistics of every metric, summed over the lines scored so far. */
typedef struct stats {
    bleu_stats bleu;
    chrf_stats chrf;
    ter_stats ter;
} stats;

/* One metric's result as sacreBLEU prints it: its name, score, signature, BLEU's details. */
typedef struct result {
    char name[32], sig[256], verbose[256];
    double score;
} result;

/* The results of the metrics asked for, in their order, from statistics. */
static int results(result *r, const struct args *a, const stats *st, int nrefs)
{
    for (int i = 0; i < a->norder; i++) {
        result *x = &r[i];
        x->verbose[0] = '\0';
        if (a->order[i] == M_BLEU) {
            bleu_score s;
            nmt_err err = {0};
            if (bleu_compute(&s, &st->bleu, &a->bleu, &err)) {
                fprintf(stderr, "nmt bleu: error: %s\n", err.msg);
                return CMD_ERR;
            }
            snprintf(x->name, sizeof x->name, "BLEU");
            x->score = s.score;
            bleu_signature(x->sig, sizeof x->sig, &a->bleu, nrefs, VERSION);
            bleu_verbose(x->verbose, sizeof x->verbose, &s);
        } else if (a->order[i] == M_CHRF) {
            chrf_name(x->name, sizeof x->name, &a->chrf);
            x->score = chrf_compute(&st->chrf, &a->chrf);
            chrf_signature(x->sig, sizeof x->sig, &a->chrf, nrefs, VERSION);
        } else {
            snprintf(x->name, sizeof x->name, "TER");
            x->score = ter_compute(&st->ter);
            ter_signature(x->sig, sizeof x->sig, &a->ter, nrefs, VERSION);
        }
    }
    return CMD_OK;
}

/* One line's scores (--sentence-level), from statistics over that line alone: tab-separated. */
static int print_sentence(const struct args *a, const stats *st, int nrefs)
{
    result r[NMETRICS];
    if (results(r, a, st, nrefs)) return CMD_ERR;
    int w = (int)a->width;
    for (int i = 0; i < a->norder; i++) {
        if (i) putchar('\t');
        if (a->score_only) printf("%.*f", w, r[i].score);
        else printf("%s|%s = %.*f%s%s", r[i].name, r[i].sig, w, r[i].score, *r[i].verbose ? " " : "", r[i].verbose);
    }
    putchar('\n');
    return CMD_OK;
}

/* The corpus scores: plain, score only, or sacreBLEU's JSON (one object, or a list of them
 * for several metrics). */
static int print_corpus(const struct args *a, const stats *st, int nrefs)
{
    result r[NMETRICS];
    if (results(r, a, st, nrefs)) return CMD_ERR;
    int w = (int)a->width, many = a->norder > 1;
    if (a->json && !a->score_only && many) printf("[\n");
    for (int i = 0; i < a->norder; i++) {
        if (a->score_only) printf("%.*f\n", w, r[i].score);
        else if (!a->json) printf("%s|%s = %.*f%s%s\n", r[i].name, r[i].sig, w, r[i].score, *r[i].verbose ? " " : "", r[i].verbose);
        else {
            print_json(r[i].name, r[i].score, w, r[i].sig, *r[i].verbose ? r[i].verbose : NULL);
            printf(i + 1 < a->norder ? ",\n" : "\n");
        }
    }
    if (a->json && !a->score_only && many) printf("]\n");
    return CMD_OK;
}

/* Adds line l of the texts to the statistics of every metric asked for. */
static int add_line(stats *st, const struct args *a, const textfile *t, const char **refs, int nrefs, long l)
{
    nmt_err err = {0};
    for (int r = 0; r < nrefs; r++) refs[r] = t[r + 1].line[l];
    const char *hyp = t[0].line[l];
    if ((a->do_bleu && bleu_add_sentence(&st->bleu, hyp, refs, nrefs, &a->bleu, &err)) ||
        (a->do_chrf && chrf_add_sentence(&st->chrf, hyp, refs, nrefs, &a->chrf, &err)) ||
        (a->do_ter && ter_add_sentence(&st->ter, hyp, refs, nrefs, &a->ter, &err))) {
        fprintf(stderr, "nmt bleu: error: %s:%ld: %s\n", t[0].path, l + 1, err.msg);
        return CMD_ERR;
    }
    return CMD_OK;
}

/* System k's per-segment statistics against the references ref[0..nrefs), each file already
 * checked to have nseg lines. */
static int segment_stats(bleu_stats *seg, const textfile *sys, const textfile *ref, int nrefs, const char **refs,
                         const bleu_opts *o)
{
    for (long l = 0; l < sys->nlines; l++) {
        nmt_err err = {0};
        for (int r = 0; r < nrefs; r++) refs[r] = ref[r].line[l];
        if (bleu_add_sentence(&seg[l], sys->line[l], refs, nrefs, o, &err)) {
            fprintf(stderr, "nmt bleu: error: %s:%ld: %s\n", sys->path, l + 1, err.msg);
            return CMD_ERR;
        }
    }
    return CMD_OK;
}

static void print_paired(const struct args *a, const char *sig, const bleu_bs *bs)
{
    int w = (int)a->width;
    printf("BLEU|%s, paired bootstrap: %d resamples, seed %d\n", sig, a->bs_n, BS_SEED);
    for (int s = 0; s < a->ninputs; s++) {
        printf("%s%s\tBLEU %.*f (mean %.*f +- %.*f)", s ? "" : "Baseline: ", a->inputs[s], w, bs[s].score, w, bs[s].mean, w,
               bs[s].ci);
        if (s) printf(" (p = %.4f)%s", bs[s].p, bs[s].p < 0.05 ? " *" : "");
        putchar('\n');
    }
}

/* --paired-bs: every system against the references, resampled together. */
static int run_paired(const struct args *a)
{
    int nrefs = a->nfiles - 1, nsys = a->ninputs, rc = CMD_OK;
    textfile *t = calloc((size_t)(nrefs + nsys), sizeof *t);
    const char **refs = calloc((size_t)nrefs, sizeof *refs);
    bleu_stats **seg = calloc((size_t)nsys, sizeof *seg);
    bleu_bs *bs = calloc((size_t)nsys, sizeof *bs);
    if (!t || !refs || !seg || !bs) rc = CMD_ERR, fprintf(stderr, "nmt bleu: error: out of memory\n");
    for (int i = 0; i < nrefs + nsys && rc == CMD_OK; i++) rc = text_load(&t[i], i < nrefs ? a->files[1 + i] : a->inputs[i - nrefs]);
    for (int i = 1; i < nrefs + nsys && rc == CMD_OK; i++)
        if (t[i].nlines != t[0].nlines)
            rc = CMD_ERR, fprintf(stderr, "nmt bleu: error: %s has %ld lines but %s has %ld\n", t[0].path, t[0].nlines,
                                  t[i].path, t[i].nlines);
    if (rc == CMD_OK && t[0].nlines == 0) rc = CMD_ERR, fprintf(stderr, "nmt bleu: error: %s has no lines to score\n", t[0].path);
    for (int s = 0; s < nsys && rc == CMD_OK; s++) {
        seg[s] = calloc((size_t)t[0].nlines, sizeof **seg);
        if (!seg[s]) rc = CMD_ERR, fprintf(stderr, "nmt bleu: error: out of memory\n");
        else rc = segment_stats(seg[s], &t[nrefs + s], t, nrefs, refs, &a->bleu);
    }
    nmt_err err = {0};
    if (rc == CMD_OK && bleu_paired_bootstrap(bs, (const bleu_stats *const *)seg, nsys, t[0].nlines, a->bs_n, BS_SEED,
                                              &a->bleu, &err))
        rc = CMD_ERR, fprintf(stderr, "nmt bleu: error: %s\n", err.msg);
    if (rc == CMD_OK) {
        char sig[256];
        bleu_signature(sig, sizeof sig, &a->bleu, nrefs, VERSION);
        print_paired(a, sig, bs);
    }
    for (int i = 0; t && i < nrefs + nsys; i++) textfile_free(&t[i]);
    for (int s = 0; seg && s < nsys; s++) free(seg[s]);
    free(t); free(refs); free(seg); free(bs);
    return rc;
}

int cmd_bleu(int argc, char **argv)
{
    struct args a;
    int rc = parse_args(&a, argc, argv);
    if (rc != OPT_GO) return rc;
    if (a.paired) return run_paired(&a);

    int nfiles = a.nfiles, nrefs = a.nfiles - 1;
    textfile *t = calloc((size_t)nfiles, sizeof *t);
    const char **refs = calloc((size_t)nrefs, sizeof *refs);
    if (!t || !refs) {
        fprintf(stderr, "nmt bleu: error: out of memory\n");
        free(t);
        free(refs);
        return CMD_ERR;
    }
    rc = load_texts(t, &a);
    a.chrf.lowercase = a.bleu.lowercase; /* -lc lowercases chrF too (TER has its own option) */
    stats st;
    memset(&st, 0, sizeof st);
    for (long l = 0; rc == CMD_OK && l < t[0].nlines; l++) {
        if (a.sentence) memset(&st, 0, sizeof st);
        rc = add_line(&st, &a, t, refs, nrefs, l);
        if (rc == CMD_OK && a.sentence) rc = print_sentence(&a, &st, nrefs);
    }
    if (rc == CMD_OK && !a.sentence) rc = print_corpus(&a, &st, nrefs);
    for (int i = 0; i < nfiles; i++) textfile_free(&t[i]);
    free(t);
    free(refs);
    return rc;
}
