/* test_bleu.c: BLEU, sentence BLEU, chrF2, chrF++ and TER against sacreBLEU 2.6.0's own numbers
 * (shared/data/bleu/expected.tsv, sentence_expected.tsv, expected_metrics.tsv and
 * sentence_metrics.tsv, one CHECK per number), and hand-made edge cases: tokenizers, empty
 * lines, no 4-gram match, BP = 1, several references, lowercasing, TER's shifts, invalid UTF-8
 * and bad options. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"
#include "eval/chrf.h"
#include "eval/ter.h"
#include "helpers.h"
#include "test.h"

/* Python floats printed with repr() round-trip exactly, so the library should reproduce them
 * to the last bit; the tolerance only allows for a libm whose exp/log differ in the last ulp. */
#define TOL 1e-14

static int n_exact, n_numbers;

/* One CHECK per number; what names it in the failure message. */
static void check_num(double got, double want, const char *what)
{
    n_numbers++;
    if (got == want) n_exact++;
    CHECKF(fabs(got - want) <= TOL * (fabs(want) > 1.0 ? fabs(want) : 1.0),
           "%s: got %.17g, want %.17g", what, got, want);
}

/* ---------------- file helpers ---------------- */

static char *data_dir(void)
{
    static char dir[1024];
    const char *s = getenv("NMT_SHARED");
    snprintf(dir, sizeof dir, "%s/data/bleu", s && *s ? s : "../shared");
    return dir;
}

/* The lines of a file of the data folder (test_read_lines). NULL if unreadable. */
static char **read_lines(const char *rel, size_t *n)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", data_dir(), rel);
    return test_read_lines(path, n);
}

static void free_lines(char **lines, size_t n) { test_free_lines(lines, n); }

/* Splits s at tabs in place; returns the field count. */
static int split_tabs(char *s, char **f, int max)
{
    int n = 0;
    while (n < max) {
        f[n++] = s;
        char *t = strchr(s, '\t');
        if (!t) break;
        *t = '\0';
        s = t + 1;
    }
    return n;
}

/* "default" or "k=v,k=v" as in expected.tsv's options column. */
static int parse_options(const char *spec, bleu_opts *o)
{
    memset(o, 0, sizeof *o);
    if (!strcmp(spec, "default")) return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *kv = strtok(buf, ","); kv; kv = strtok(NULL, ",")) {
        char *eq = strchr(kv, '=');
        if (!eq) return -1;
        *eq = '\0';
        const char *v = eq + 1;
        if (!strcmp(kv, "tokenize")) {
            if (bleu_tokenize_parse(v, &o->tokenize)) return -1;
        } else if (!strcmp(kv, "lowercase")) {
            o->lowercase = !strcmp(v, "True");
        } else if (!strcmp(kv, "smooth_method")) {
            if (bleu_smooth_parse(v, &o->smooth)) return -1;
        } else if (!strcmp(kv, "smooth_value")) {
            o->smooth_value = strtod(v, NULL);
        } else {
            return -1;
        }
    }
    return 0;
}

/* ---------------- sacreBLEU's corpus-level numbers ---------------- */

#define MAX_CASES 64
#define MAX_REFS 8

struct tcase {
    char name[64], hyp[128], refs[512];
};
static struct tcase cases[MAX_CASES];
static int ncases;

/* Loads a case's hypothesis and references; returns the reference count, -1 on failure. */
static int load_case(const struct tcase *c, char ***hyp, size_t *nh, char **refs[MAX_REFS],
                     size_t nr[MAX_REFS])
{
    *hyp = read_lines(c->hyp, nh);
    CHECKF(*hyp != NULL, "%s: cannot read %s/%s", c->name, data_dir(), c->hyp);
    if (!*hyp) return -1;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", c->refs);
    int k = 0;
    for (char *r = strtok(buf, ","); r && k < MAX_REFS; r = strtok(NULL, ",")) {
        refs[k] = read_lines(r, &nr[k]);
        CHECKF(refs[k] != NULL, "%s: cannot read %s", c->name, r);
        if (!refs[k]) return -1;
        CHECKF(nr[k] == *nh, "%s: %zu hypothesis lines, %zu in %s", c->name, *nh, nr[k], r);
        if (nr[k] != *nh) return -1;
        k++;
    }
    return k;
}

/* The same case with one more reference set and a NULL in every segment, in set i % (k + 1) for
 * segment i (the real references keep their order): a missing reference is skipped, as sacreBLEU
 * drops a None one, so sacreBLEU's values for the k sets must come out again. */
static void check_public_gaps(const char *name, const char *const *hyp, const char *const *const *refs, int k, int n,
                              const bleu_opts *o, const double *want)
{
    const char **set[MAX_REFS + 1];
    int made = 1;
    for (int r = 0; r <= k; r++) made &= (set[r] = calloc((size_t)n + 1, sizeof *set[r])) != NULL;
    for (int i = 0; i < n && made; i++)
        for (int r = 0, from = 0; r <= k; r++) set[r][i] = r == i % (k + 1) ? NULL : refs[from++][i];
    nmt_bleu_result b;
    double chrf = -1;
    nmt_err err = {0};
    CHECKF(made && nmt_bleu_corpus(hyp, (const char *const *const *)set, k + 1, n, bleu_tokenize_name(o->tokenize),
                                   o->lowercase, &b, &err) == 0, "%s with gaps: %s", name, err.msg);
    CHECKF(made && nmt_chrf_corpus(hyp, (const char *const *const *)set, k + 1, n, 0, &chrf, &err) == 0,
           "%s with gaps: %s", name, err.msg);
    char what[128];
    snprintf(what, sizeof what, "%s with a NULL reference a segment: BLEU", name);
    check_num(made ? b.score : -1, want[0], what);
    snprintf(what, sizeof what, "%s with a NULL reference a segment: ref_len", name);
    check_num(made ? (double)b.ref_len : -1, want[8], what);
    snprintf(what, sizeof what, "%s with a NULL reference a segment: chrF", name);
    check_num(chrf, want[17], what);
    for (int r = 0; r <= k; r++) free(set[r]);
}

/* The public nmt_bleu_corpus and nmt_chrf_corpus (sacreBLEU's fields) on the same case, where
 * its options are theirs (exp smoothing, no effective order): want as in expected.tsv. */
static void check_public(const char *name, const char *const *hyp, const char *const *const *refs, int k, int n,
                         const bleu_opts *o, const double *want)
{
    if (o->smooth != BLEU_SMOOTH_EXP || o->effective_order) return;
    nmt_bleu_result r;
    double chrf = -1;
    nmt_err err = {0};
    CHECKF(nmt_bleu_corpus(hyp, refs, k, n, bleu_tokenize_name(o->tokenize), o->lowercase, &r, &err) == 0, "%s: %s", name,
           err.msg);
    CHECKF(nmt_chrf_corpus(hyp, refs, k, n, 0, &chrf, &err) == 0, "%s: %s", name, err.msg);
    double got[18] = {r.score, r.precisions[0], r.precisions[1], r.precisions[2], r.precisions[3], r.bp, want[6],
                      (double)r.sys_len, (double)r.ref_len, r.counts[0], r.counts[1], r.counts[2], r.counts[3],
                      r.totals[0], r.totals[1], r.totals[2], r.totals[3], chrf};
    for (int j = 0; j < 18; j++) {
        char what[128];
        snprintf(what, sizeof what, "%s nmt_bleu_corpus field %d", name, j);
        check_num(got[j], want[j], what);
    }
    check_public_gaps(name, hyp, refs, k, n, o, want);
}

static void test_corpus_expected(void)
{
    size_t nrows;
    char **rows = read_lines("expected.tsv", &nrows);
    CHECKF(rows != NULL, "cannot read %s/expected.tsv (set NMT_SHARED)", data_dir());
    if (!rows) return;
    CHECK(nrows >= 25);
    for (size_t i = 1; i < nrows; i++) { /* row 0 is the header */
        char *f[32];
        int nf = split_tabs(rows[i], f, 32);
        CHECKF(nf == 24, "expected.tsv row %zu has %d fields", i + 1, nf);
        if (nf != 24) continue;
        struct tcase *c = &cases[ncases < MAX_CASES ? ncases++ : MAX_CASES - 1];
        snprintf(c->name, sizeof c->name, "%s", f[0]);
        snprintf(c->hyp, sizeof c->hyp, "%s", f[1]);
        snprintf(c->refs, sizeof c->refs, "%s", f[2]);
        bleu_opts o;
        CHECKF(parse_options(f[3], &o) == 0, "%s: options '%s'", f[0], f[3]);

        char **hyp, **refs[MAX_REFS];
        size_t nh, nr[MAX_REFS];
        int k = load_case(c, &hyp, &nh, refs, nr);
        if (k < 0) continue;
        bleu_stats st = {0};
        chrf_stats cst = {0};
        nmt_err err = {0};
        size_t l = 0;
        for (; l < nh; l++) {
            const char *r[MAX_REFS];
            for (int j = 0; j < k; j++) r[j] = refs[j][l];
            if (bleu_add_sentence(&st, hyp[l], r, k, &o, &err) ||
                chrf_add_sentence(&cst, hyp[l], r, k, NULL, &err))
                break;
        }
        CHECKF(l == nh, "%s line %zu: %s", c->name, l + 1, err.msg);
        bleu_score s;
        CHECK(bleu_compute(&s, &st, &o, &err) == 0);
        double want[18];
        for (int j = 0; j < 18; j++) want[j] = strtod(f[4 + j], NULL);
        const char *names[18] = {"bleu", "p1", "p2", "p3", "p4", "bp", "ratio", "sys_len",
                                 "ref_len", "match1", "match2", "match3", "match4", "total1",
                                 "total2", "total3", "total4", "chrf2"};
        double got[18] = {s.score, s.precisions[0], s.precisions[1], s.precisions[2],
                          s.precisions[3], s.bp, s.ratio, (double)s.hyp_len, (double)s.ref_len,
                          s.match[0], s.match[1], s.match[2], s.match[3], s.total[0], s.total[1],
                          s.total[2], s.total[3], chrf_compute(&cst, NULL)};
        for (int j = 0; j < 18; j++) {
            char what[128];
            snprintf(what, sizeof what, "%s %s", c->name, names[j]);
            check_num(got[j], want[j], what);
        }

        check_public(c->name, (const char *const *)hyp, (const char *const *const *)refs, k, (int)nh, &o, want);

        char sig[256];
        bleu_signature(sig, sizeof sig, &o, k, "2.6.0");
        CHECKF(!strcmp(sig, f[22]), "%s: signature %s, want %s", c->name, sig, f[22]);
        chrf_signature(sig, sizeof sig, NULL, k, "2.6.0");
        CHECKF(!strcmp(sig, f[23]), "%s: chrF signature %s, want %s", c->name, sig, f[23]);

        free_lines(hyp, nh);
        for (int j = 0; j < k; j++) free_lines(refs[j], nr[j]);
    }
    free_lines(rows, nrows);
}

static void test_sentence_expected(void)
{
    size_t nrows;
    char **rows = read_lines("sentence_expected.tsv", &nrows);
    CHECKF(rows != NULL, "cannot read %s/sentence_expected.tsv", data_dir());
    if (!rows) return;
    CHECK(nrows >= 50);
    for (size_t i = 1; i < nrows; i++) {
        char *f[16];
        int nf = split_tabs(rows[i], f, 16);
        CHECKF(nf == 11, "sentence_expected.tsv row %zu has %d fields", i + 1, nf);
        if (nf != 11) continue;
        const struct tcase *c = NULL;
        for (int j = 0; j < ncases; j++)
            if (!strcmp(cases[j].name, f[0])) c = &cases[j];
        CHECKF(c != NULL, "sentence case %s is not in expected.tsv", f[0]);
        if (!c) continue;
        char **hyp, **refs[MAX_REFS];
        size_t nh, nr[MAX_REFS];
        int k = load_case(c, &hyp, &nh, refs, nr);
        if (k < 0) continue;
        size_t line = strtoul(f[1], NULL, 10);
        CHECKF(line >= 1 && line <= nh, "%s: line %zu", f[0], line);
        if (line >= 1 && line <= nh) {
            const char *r[MAX_REFS];
            for (int j = 0; j < k; j++) r[j] = refs[j][line - 1];
            bleu_score s;
            double chrf = -1;
            nmt_err err = {0};
            CHECK(bleu_sentence(&s, hyp[line - 1], r, k, NULL, &err) == 0);
            CHECK(chrf_sentence(&chrf, hyp[line - 1], r, k, NULL, &err) == 0);
            double got[10] = {s.score, s.precisions[0], s.precisions[1], s.precisions[2],
                              s.precisions[3], s.bp, (double)s.hyp_len, (double)s.ref_len, chrf};
            const char *names[9] = {"bleu", "p1", "p2", "p3", "p4", "bp", "sys_len", "ref_len",
                                    "chrf2"};
            for (int j = 0; j < 9; j++) {
                char what[128];
                snprintf(what, sizeof what, "%s line %zu %s", f[0], line, names[j]);
                check_num(got[j], strtod(f[2 + j], NULL), what);
            }
        }
        free_lines(hyp, nh);
        for (int j = 0; j < k; j++) free_lines(refs[j], nr[j]);
    }
    free_lines(rows, nrows);
}

/* ---------------- chrF++ and TER: expected_metrics.tsv, sentence_metrics.tsv ---------------- */

/* The options column for chrF and TER (the keyword arguments sacreBLEU was given). */
static int parse_metric_options(const char *spec, chrf_opts *c, ter_opts *t)
{
    memset(c, 0, sizeof *c);
    memset(t, 0, sizeof *t);
    if (!strcmp(spec, "default")) return 0;
    if (!strcmp(spec, "word_order=2")) c->word_order = 2;
    else if (!strcmp(spec, "case_sensitive=True")) t->case_sensitive = 1;
    else if (!strcmp(spec, "normalized=True")) t->normalized = 1;
    else return -1;
    return 0;
}

/* metric ("BLEU", "chrF", "TER") with options over lines [from, to) of hyp against refs[0..k):
 * the score, and the signature in sig. Non-zero on failure, reported. */
static int score_lines(double *score, char *sig, size_t size, const char *metric, const char *options,
                       char **hyp, char **refs[MAX_REFS], int k, size_t from, size_t to)
{
    bleu_opts b;
    chrf_opts c;
    ter_opts t;
    int bleu = !strcmp(metric, "BLEU"), chrf = !strcmp(metric, "chrF"), ter = !strcmp(metric, "TER");
    int bad = bleu ? parse_options(options, &b) : parse_metric_options(options, &c, &t);
    CHECKF(!bad && (bleu || chrf || ter), "metric %s, options %s", metric, options);
    if (bad || !(bleu || chrf || ter)) return -1;
    bleu_stats bs = {0};
    chrf_stats cs = {0};
    ter_stats ts = {0, 0.0};
    nmt_err err = {0};
    int rc = 0;
    for (size_t l = from; l < to && !rc; l++) {
        const char *r[MAX_REFS];
        for (int j = 0; j < k; j++) r[j] = refs[j][l];
        rc = bleu ? bleu_add_sentence(&bs, hyp[l], r, k, &b, &err)
           : chrf ? chrf_add_sentence(&cs, hyp[l], r, k, &c, &err)
                  : ter_add_sentence(&ts, hyp[l], r, k, &t, &err);
    }
    bleu_score s;
    if (!rc && bleu) rc = bleu_compute(&s, &bs, &b, &err);
    CHECKF(rc == 0, "%s %s: %s", metric, options, err.msg);
    if (rc) return -1;
    *score = bleu ? s.score : chrf ? chrf_compute(&cs, &c) : ter_compute(&ts);
    if (bleu) bleu_signature(sig, size, &b, k, "2.6.0");
    else if (chrf) chrf_signature(sig, size, &c, k, "2.6.0");
    else ter_signature(sig, size, &t, k, "2.6.0");
    return 0;
}

/* Every row of one of the two files: hyp, refs, [line,] metric, options, score, signature. */
/* the sanitizer pass (--quick) scores every third row of the metric vectors: the same code on
 * other files (the plain pass scores them all) */
static int quick;

static void test_metrics_file(const char *file, int sentence, int min_rows)
{
    size_t nrows;
    char **rows = read_lines(file, &nrows);
    CHECKF(rows != NULL, "cannot read %s/%s (set NMT_SHARED)", data_dir(), file);
    if (!rows) return;
    CHECKF(nrows >= (size_t)min_rows, "%s: %zu rows", file, nrows);
    int nf_want = sentence ? 7 : 6, counted[3] = {0, 0, 0};
    for (size_t i = 1; i < nrows; i++) { /* row 0 is the header */
        if (quick && i % 3 != 1) continue;
        char *f[16];
        int nf = split_tabs(rows[i], f, 16);
        CHECKF(nf == nf_want, "%s row %zu has %d fields", file, i + 1, nf);
        if (nf != nf_want) continue;
        struct tcase c;
        snprintf(c.name, sizeof c.name, "%s", f[0]);
        snprintf(c.hyp, sizeof c.hyp, "%s", f[0]);
        snprintf(c.refs, sizeof c.refs, "%s", f[1]);
        char **hyp, **refs[MAX_REFS];
        size_t nh, nr[MAX_REFS];
        int k = load_case(&c, &hyp, &nh, refs, nr);
        if (k < 0) continue;
        size_t line = sentence ? strtoul(f[2], NULL, 10) : 0;
        const char **g = (const char **)f + (sentence ? 3 : 2); /* metric options score signature */
        CHECKF(!sentence || (line >= 1 && line <= nh), "%s row %zu: line %zu", file, i + 1, line);
        double got;
        char sig[256];
        if ((!sentence || (line >= 1 && line <= nh)) &&
            !score_lines(&got, sig, sizeof sig, g[0], g[1], hyp, refs, k, sentence ? line - 1 : 0, sentence ? line : nh)) {
            char what[256];
            snprintf(what, sizeof what, "%s %s line %zu %s %s", f[0], f[1], line, g[0], g[1]);
            check_num(got, strtod(g[2], NULL), what);
            CHECKF(!strcmp(sig, g[3]), "%s: signature %s, want %s", what, sig, g[3]);
            counted[g[0][0] == 'B' ? 0 : g[0][0] == 'c' ? 1 : 2]++;
        }
        free_lines(hyp, nh);
        for (int j = 0; j < k; j++) free_lines(refs[j], nr[j]);
    }
    /* every metric the file holds was scored: chrF and TER always, BLEU at corpus level */
    CHECKF((sentence || counted[0] > 0) && counted[1] > 0 && counted[2] > 0, "%s: %d BLEU, %d chrF, %d TER rows",
           file, counted[0], counted[1], counted[2]);
    free_lines(rows, nrows);
}

/* ---------------- hand-made cases ---------------- */

static void check_tok(const char *in, enum bleu_tokenize t, int lc, const char *want)
{
    bleu_opts o = {0};
    o.tokenize = t;
    o.lowercase = lc;
    char *out = NULL;
    nmt_err err = {0};
    int rc = bleu_tokenize(&out, in, &o, &err);
    CHECKF(rc == 0 && !strcmp(out, want), "tokenize[%s%s](\"%s\") = \"%s\", want \"%s\"",
           bleu_tokenize_name(t), lc ? ",lc" : "", in, rc ? err.msg : out, want);
    free(out);
}

static void test_tokenizers(void)
{
    /* 13a: ASCII punctuation split off except ' and - (unless after a digit); . and , stay
     * between digits; the padding splits a final period even after a number. */
    check_tok("Hello, world!", BLEU_TOK_13A, 0, "Hello , world !");
    check_tok("It's 3.5 km-long, isn't it?", BLEU_TOK_13A, 0, "It's 3.5 km-long , isn't it ?");
    check_tok("In 1999.", BLEU_TOK_13A, 0, "In 1999 .");
    check_tok("pages 5-6 and 1,000", BLEU_TOK_13A, 0, "pages 5 - 6 and 1,000");
    check_tok("&quot;hi&quot; &amp;lt; a&b", BLEU_TOK_13A, 0, "\" hi \" < a & b");
    check_tok("a<skipped>b (c)", BLEU_TOK_13A, 0, "ab ( c )");
    check_tok("x.,y", BLEU_TOK_13A, 0, "x . , y");
    check_tok("hyphen-\nated\nline", BLEU_TOK_13A, 0, "hyphenated line"); /* "-\n" joins */
    check_tok("  trailing   spaces \t ", BLEU_TOK_13A, 0, "trailing spaces");
    check_tok("", BLEU_TOK_13A, 0, "");
    /* 13a leaves non-ASCII punctuation attached, but splits at any Python whitespace. */
    check_tok("l\u2019herbe \u00abvite\u00bb", BLEU_TOK_13A, 0, "l\u2019herbe \u00abvite\u00bb");
    check_tok("a\u00a0b\u3000c", BLEU_TOK_13A, 0, "a b c");
    check_tok("caf\u00e9.", BLEU_TOK_13A, 0, "caf\u00e9 .");
    /* intl: Unicode punctuation split unless between digits, symbols always; no padding, so a
     * number keeps its final period (mteval-v14's behaviour, kept by sacreBLEU). */
    check_tok("l\u2019herbe \u00abvite\u00bb", BLEU_TOK_INTL, 0,
              "l \u2019 herbe \u00ab vite \u00bb");
    check_tok("In 1999.", BLEU_TOK_INTL, 0, "In 1999.");
    check_tok("In 1999. ", BLEU_TOK_INTL, 0, "In 1999."); /* rstrip() comes first */
    check_tok("3.5 $5 x=y 10\u20ac", BLEU_TOK_INTL, 0, "3.5 $ 5 x = y 10 \u20ac");
    check_tok("It's km-long, isn't it?", BLEU_TOK_INTL, 0, "It ' s km - long , isn ' t it ?");
    check_tok("\u00bfQu\u00e9? \u2014 s\u00ed\u2026", BLEU_TOK_INTL, 0,
              "\u00bf Qu\u00e9 ? \u2014 s\u00ed \u2026");
    /* none: whitespace only. */
    check_tok("a,b  c. ", BLEU_TOK_NONE, 0, "a,b c.");
    /* lowercase is Python's str.lower(): full mapping of U+0130 and final sigma. */
    check_tok("The CAT", BLEU_TOK_13A, 1, "the cat");
    check_tok("\u0130STANBUL \u039f\u0394\u039f\u03a3.", BLEU_TOK_13A, 1,
              "i\u0307stanbul \u03bf\u03b4\u03bf\u03c2 .");
    check_tok("\u03a3\u0391\u03a3 \u03a3", BLEU_TOK_NONE, 1, "\u03c3\u03b1\u03c2 \u03c3");
}

static void test_bleu_cases(void)
{
    nmt_err err = {0};
    bleu_score s;
    bleu_opts corpus = {0};

    /* A perfect match scores exp(log 100) = 100.00000000000004, as in sacreBLEU. */
    const char *ref1[] = {"the cat sat on the mat"};
    CHECK(bleu_sentence(&s, "the cat sat on the mat", ref1, 1, NULL, &err) == 0);
    CHECK_NEAR(s.score, 100.0, 1e-12);
    CHECK(s.bp == 1.0 && s.ratio == 1.0 && s.hyp_len == 6 && s.ref_len == 6);

    /* Hypothesis longer than the reference: BP = 1, ratio > 1. */
    CHECK(bleu_sentence(&s, "the cat sat on the mat today", ref1, 1, NULL, &err) == 0);
    CHECK(s.bp == 1.0);
    CHECK_NEAR(s.ratio, 7.0 / 6.0, 1e-15);
    double want = exp((log(600.0 / 7) + log(500.0 / 6) + log(80.0) + log(75.0)) / 4);
    CHECK_NEAR(s.score, want, 1e-12);

    /* No 4-gram match: 0 without smoothing, 100/(2*2) for the 4-gram precision with exp. */
    const char *ref2[] = {"a b c x d e"};
    bleu_stats st = {0};
    CHECK(bleu_add_sentence(&st, "a b c d e", ref2, 1, &corpus, &err) == 0);
    CHECK(st.match[0] == 5 && st.match[1] == 3 && st.match[2] == 1 && st.match[3] == 0);
    CHECK(st.total[0] == 5 && st.total[1] == 4 && st.total[2] == 3 && st.total[3] == 2);
    bleu_opts none = {0};
    none.smooth = BLEU_SMOOTH_NONE;
    CHECK(bleu_compute(&s, &st, &none, &err) == 0);
    CHECK(s.score == 0.0 && s.precisions[3] == 0.0);
    CHECK(bleu_compute(&s, &st, &corpus, &err) == 0);
    CHECK_NEAR(s.precisions[3], 25.0, 1e-15);
    CHECK(s.score > 0.0);
    bleu_opts floor_o = {0};
    floor_o.smooth = BLEU_SMOOTH_FLOOR; /* value 0: the default 0.1 */
    CHECK(bleu_compute(&s, &st, &floor_o, &err) == 0);
    CHECK_NEAR(s.precisions[3], 100.0 * 0.1 / 2, 1e-15);

    /* An empty hypothesis: no n-grams, BP 0, score 0; its reference length still counts. */
    const char *ref3[] = {"a b"};
    CHECK(bleu_sentence(&s, "", ref3, 1, NULL, &err) == 0);
    CHECK(s.score == 0.0 && s.bp == 0.0 && s.hyp_len == 0 && s.ref_len == 2);
    st = (bleu_stats){0};
    const char *ref4[] = {"a b c d"}, *ref5[] = {"e f"};
    CHECK(bleu_add_sentence(&st, "a b c d", ref4, 1, &corpus, &err) == 0);
    CHECK(bleu_add_sentence(&st, "   ", ref5, 1, &corpus, &err) == 0);
    CHECK(bleu_compute(&s, &st, &corpus, &err) == 0);
    CHECK(s.hyp_len == 4 && s.ref_len == 6 && s.precisions[0] == 100.0);
    CHECK_NEAR(s.bp, exp(1.0 - 6.0 / 4.0), 1e-15);
    CHECK_NEAR(s.score, 100.0 * exp(1.0 - 6.0 / 4.0), 1e-12);

    /* An all-empty corpus: 0 everywhere, ratio 0. */
    st = (bleu_stats){0};
    for (int i = 0; i < 3; i++) CHECK(bleu_add_sentence(&st, "", ref3, 1, &corpus, &err) == 0);
    CHECK(bleu_compute(&s, &st, &corpus, &err) == 0);
    CHECK(s.score == 0.0 && s.bp == 0.0 && s.ratio == 0.0 && s.ref_len == 6);

    /* Several references: the closest length, the shorter on a tie; clipping by the max. */
    const char *tie[] = {"a b c d e f", "a b c d"};
    CHECK(bleu_sentence(&s, "a b c d e", tie, 2, NULL, &err) == 0);
    CHECK(s.ref_len == 4);
    const char *closest[] = {"a b c", "a b c d e f"};
    CHECK(bleu_sentence(&s, "a b c d e", closest, 2, NULL, &err) == 0);
    CHECK(s.ref_len == 6);
    const char *clip[] = {"the cat", "the the dog"};
    st = (bleu_stats){0};
    CHECK(bleu_add_sentence(&st, "the the the", clip, 2, &corpus, &err) == 0);
    CHECK(st.match[0] == 2 && st.match[1] == 1 && st.total[0] == 3);
    const char *holes[] = {NULL, "a b", NULL};
    CHECK(bleu_sentence(&s, "a b", holes, 3, NULL, &err) == 0);
    CHECK_NEAR(s.score, 100.0, 1e-12); /* effective order: only 1- and 2-grams */
    CHECK(s.eff_order == 2);

    /* Lowercasing. */
    const char *upper[] = {"THE CAT sat"};
    bleu_opts lc = {0};
    lc.lowercase = 1;
    st = (bleu_stats){0};
    CHECK(bleu_add_sentence(&st, "the cat Sat", upper, 1, &corpus, &err) == 0);
    CHECK(st.match[0] == 0);
    st = (bleu_stats){0};
    CHECK(bleu_add_sentence(&st, "the cat Sat", upper, 1, &lc, &err) == 0);
    CHECK(st.match[0] == 3 && st.match[2] == 1);

    /* 13a keeps l'herbe-style typographic apostrophes in the token; intl splits them. */
    const char *typo[] = {"l'herbe verte"};
    st = (bleu_stats){0};
    CHECK(bleu_add_sentence(&st, "l\u2019herbe verte", typo, 1, &corpus, &err) == 0);
    CHECK(st.match[0] == 1 && st.total[0] == 2);
    bleu_opts intl = {0};
    intl.tokenize = BLEU_TOK_INTL;
    st = (bleu_stats){0};
    CHECK(bleu_add_sentence(&st, "l\u2019herbe verte", typo, 1, &intl, &err) == 0);
    CHECK(st.match[0] == 3 && st.total[0] == 4); /* l ’ herbe verte vs l ' herbe verte */

    /* add-k reports the smoothed counts, like sacreBLEU. */
    bleu_opts addk = {0};
    addk.smooth = BLEU_SMOOTH_ADD_K;
    st = (bleu_stats){0};
    CHECK(bleu_add_sentence(&st, "a b c d e", ref2, 1, &addk, &err) == 0);
    CHECK(bleu_compute(&s, &st, &addk, &err) == 0);
    CHECK(s.match[0] == 5 && s.match[1] == 4 && s.match[3] == 1 && s.total[3] == 3);

    /* Errors. */
    err = (nmt_err){0};
    CHECK(bleu_sentence(&s, "ok \xff", ref1, 1, NULL, &err) == NMT_ERR_FORMAT);
    CHECKF(strstr(err.msg, "hypothesis") && strstr(err.msg, "byte 4"), "msg: %s", err.msg);
    const char *badref[] = {"fine", "\xc3("};
    CHECK(bleu_sentence(&s, "fine", badref, 2, NULL, &err) == NMT_ERR_FORMAT);
    CHECKF(strstr(err.msg, "reference 2") != NULL, "msg: %s", err.msg);
    CHECK(bleu_sentence(&s, "\xed\xa0\x80", ref1, 1, NULL, &err) == NMT_ERR_FORMAT); /* surrogate */
    CHECK(bleu_sentence(&s, "\xc0\xaf", ref1, 1, NULL, &err) == NMT_ERR_FORMAT);     /* overlong */
    CHECK(bleu_sentence(&s, "a", ref1, 0, NULL, &err) == NMT_ERR_ARG);
    const char *nulls[] = {NULL};
    CHECK(bleu_sentence(&s, "a", nulls, 1, NULL, &err) == NMT_ERR_ARG);
    bleu_opts bad = {0};
    bad.tokenize = (enum bleu_tokenize)7;
    CHECK(bleu_sentence(&s, "a", ref1, 1, &bad, &err) == NMT_ERR_ARG);
    bad = (bleu_opts){0};
    bad.smooth_value = -1;
    CHECK(bleu_compute(&s, &st, &bad, &err) == NMT_ERR_ARG);

    /* Names and signatures. */
    enum bleu_tokenize t;
    enum bleu_smooth sm;
    CHECK(bleu_tokenize_parse("intl", &t) == 0 && t == BLEU_TOK_INTL);
    CHECK(bleu_tokenize_parse("zh", &t) == NMT_ERR_ARG);
    CHECK(bleu_smooth_parse("add-k", &sm) == 0 && sm == BLEU_SMOOTH_ADD_K);
    CHECK(bleu_smooth_parse("laplace", &sm) == NMT_ERR_ARG);
    char sig[256];
    bleu_opts so = bleu_sentence_opts();
    so.lowercase = 1;
    bleu_signature(sig, sizeof sig, &so, 4, "nmt-x");
    CHECKF(!strcmp(sig, "nrefs:4|case:lc|eff:yes|tok:13a|smooth:exp|version:nmt-x"), "%s", sig);
    bleu_signature(sig, sizeof sig, &addk, 1, "v");
    CHECKF(!strcmp(sig, "nrefs:1|case:mixed|eff:no|tok:13a|smooth:add-k[1.00]|version:v"), "%s",
           sig);
}

static void test_chrf_cases(void)
{
    nmt_err err = {0};
    chrf_opts lc = {1, 0};
    double f = -1;
    const char *same[] = {"Le chat est noir."};
    CHECK(chrf_sentence(&f, "Le chat est noir.", same, 1, NULL, &err) == 0);
    CHECK(f == 100.0);
    /* Whitespace is removed before counting: spacing does not matter. */
    CHECK(chrf_sentence(&f, "Lechat  est noir .", same, 1, NULL, &err) == 0);
    CHECK(f == 100.0);
    /* abc vs abd: orders 1..3 only; P = R = (2/3 + 1/2 + 0) / 3, and chrF = P when P = R. */
    const char *abd[] = {"abd"};
    CHECK(chrf_sentence(&f, "abc", abd, 1, NULL, &err) == 0);
    CHECK_NEAR(f, 100.0 * (2.0 / 3 + 0.5) / 3, 1e-12);
    /* An empty hypothesis (or reference) has no order with n-grams on both sides: 0. */
    CHECK(chrf_sentence(&f, "", abd, 1, NULL, &err) == 0);
    CHECK(f == 0.0);
    /* The best reference is kept, per segment. */
    const char *two[] = {"xyz", "abc"};
    CHECK(chrf_sentence(&f, "abc", two, 2, NULL, &err) == 0);
    CHECK(f == 100.0);
    chrf_stats st = {0};
    CHECK(chrf_add_sentence(&st, "abc", two, 2, NULL, &err) == 0);
    CHECK(st.hyp[0] == 3 && st.ref[0] == 3 && st.match[0] == 3 && st.hyp[3] == 0);
    /* Characters are code points, and lowercasing applies to both sides. */
    const char *upper[] = {"\u00c9t\u00c9"};
    CHECK(chrf_sentence(&f, "\u00e9t\u00e9", upper, 1, NULL, &err) == 0);
    CHECK_NEAR(f, 100.0 * (1.0 / 3) / 3, 1e-12); /* only "t" matches, orders 1..3 */
    CHECK(chrf_sentence(&f, "\u00e9t\u00e9", upper, 1, &lc, &err) == 0);
    CHECK(f == 100.0);
    CHECK(chrf_sentence(&f, "\xff", upper, 1, NULL, &err) == NMT_ERR_FORMAT);
    char sig[256];
    chrf_signature(sig, sizeof sig, &lc, 2, "v");
    CHECKF(!strcmp(sig, "nrefs:2|case:lc|eff:yes|nc:6|nw:0|space:no|version:v"), "%s", sig);
}

static void check_ter_tok(const char *in, const ter_opts *o, const char *want)
{
    char *out = NULL;
    nmt_err err = {0};
    int rc = ter_tokenize(&out, in, o, &err);
    CHECKF(rc == 0 && !strcmp(out, want), "ter_tokenize(\"%s\") = \"%s\", want \"%s\"", in, rc ? err.msg : out, want);
    free(out);
}

static void test_ter_cases(void)
{
    nmt_err err = {0};
    double f = -1;
    /* Snover et al. 2006 (AMTA), section 2's example: one shift (THIS WEEK), two substitutions
     * and one deletion against 13 reference words: TER = 4/13. */
    const char *snover[] = {"SAUDI ARABIA denied THIS WEEK information published in the AMERICAN new york times"};
    CHECK(ter_sentence(&f, "THIS WEEK THE SAUDIS denied information published in the new york times", snover, 1,
                       NULL, &err) == 0);
    CHECK_NEAR(f, 100.0 * 4 / 13, 1e-13);
    /* A block moved is one edit, not four. */
    const char *abcd[] = {"a b c d"};
    CHECK(ter_sentence(&f, "c d a b", abcd, 1, NULL, &err) == 0);
    CHECK(f == 25.0);
    int64_t e = -1;
    const uint32_t h[] = {3, 4, 1, 2}, r[] = {1, 2, 3, 4};
    CHECK(ter_edits(&e, h, 4, r, 4, &err) == 0 && e == 1);
    CHECK(ter_edits(&e, h, 4, r, 0, &err) == 0 && e == 4); /* no reference words: every word */
    CHECK(ter_edits(&e, h, 0, r, 4, &err) == 0 && e == 4);
    /* Case: ignored by default (sacreBLEU's case:lc), counted with case_sensitive. */
    const char *lower[] = {"the cat"};
    ter_opts cs = {1, 0, 0};
    CHECK(ter_sentence(&f, "The CAT", lower, 1, NULL, &err) == 0 && f == 0.0);
    CHECK(ter_sentence(&f, "The CAT", lower, 1, &cs, &err) == 0 && f == 100.0);
    /* Empty sides: all insertions; edits without reference words score 100; nothing scores 0. */
    const char *empty[] = {""};
    CHECK(ter_sentence(&f, "", abcd, 1, NULL, &err) == 0 && f == 100.0);
    CHECK(ter_sentence(&f, "a b", empty, 1, NULL, &err) == 0 && f == 100.0);
    CHECK(ter_sentence(&f, "  ", empty, 1, NULL, &err) == 0 && f == 0.0);
    /* Several references: the fewest edits (1, against a b c d) over the mean length (4+2)/2. */
    const char *two[] = {"a b c d", "x y"};
    ter_stats st = {0, 0.0};
    CHECK(ter_add_sentence(&st, "a b c", two, 2, NULL, &err) == 0);
    CHECK(st.edits == 1 && st.ref_len == 3.0);
    CHECK_NEAR(ter_compute(&st), 100.0 / 3, 1e-13);
    /* tercom's tokenizer: whitespace only by default; normalized splits punctuation as 13a does
     * and possessives; no_punct drops . , ? : ; ! " ( ). */
    ter_opts norm = {0, 1, 0}, nopunct = {0, 0, 1}, both = {0, 1, 1};
    check_ter_tok("It's 3.5 km-long, isn't it?", NULL, "it's 3.5 km-long, isn't it?");
    check_ter_tok("It's 3.5 km-long, isn't it?", &norm, "it 's 3.5 km-long , isn't it ?");
    check_ter_tok("&quot;Hi&quot; (5-6) a&amp;b.", &norm, "\" hi \" ( 5 - 6 ) a & b .");
    check_ter_tok("Hello, (world)!", &nopunct, "hello world");
    check_ter_tok("Hello, (world)!", &both, "hello world");
    check_ter_tok("", &norm, "");
    char sig[256];
    ter_signature(sig, sizeof sig, &both, 2, "v");
    CHECKF(!strcmp(sig, "nrefs:2|case:lc|tok:tercom|norm:yes|punct:no|asian:no|version:v"), "%s", sig);
    /* Errors. */
    CHECK(ter_sentence(&f, "\xff", abcd, 1, NULL, &err) == NMT_ERR_FORMAT);
    CHECKF(strstr(err.msg, "hypothesis") != NULL, "msg: %s", err.msg);
    const char *nulls[] = {NULL};
    CHECK(ter_sentence(&f, "a", nulls, 1, NULL, &err) == NMT_ERR_ARG);
}

static void test_chrfpp_cases(void)
{
    nmt_err err = {0};
    double f = -1;
    chrf_opts pp = {0, 2};
    /* "a b." has the words a, b, "." (the final period split off); against "a b" the word
     * orders give unigram P = 2/3, R = 1 and bigram P = 1/2, R = 1; the characters: "ab." vs
     * "ab", orders 1 and 2 (P = 2/3, 1/2; R = 1) and order 3 with no reference n-gram. */
    const char *ab[] = {"a b"};
    CHECK(chrf_sentence(&f, "a b.", ab, 1, &pp, &err) == 0);
    double p = (2.0 / 3 + 0.5 + 2.0 / 3 + 0.5) / 4, r = 1.0;
    CHECK_NEAR(f, 100.0 * 5 * p * r / (4 * p + r), 1e-12);
    /* A leading punctuation character is split off when the end has none. */
    const char *quote[] = {"( x"};
    CHECK(chrf_sentence(&f, "(x", quote, 1, &pp, &err) == 0);
    CHECK(f == 100.0);
    char name[32];
    CHECK(!strcmp(chrf_name(name, sizeof name, &pp), "chrF2++"));
    CHECK(!strcmp(chrf_name(name, sizeof name, NULL), "chrF2"));
    chrf_opts bad = {0, CHRF_MAX_WORD_ORDER + 1};
    CHECK(chrf_sentence(&f, "a", ab, 1, &bad, &err) == NMT_ERR_ARG);
}

/* The public scorers refuse what they cannot score, with a message. */
static void test_public_args(void)
{
    const char *hyp[] = {"a b"}, *ref[] = {"a b"};
    const char *const *refs[] = {ref};
    nmt_bleu_result r;
    double x;
    nmt_err err = {0};
    CHECK(nmt_bleu_corpus(hyp, refs, 1, 1, "zh", 0, &r, &err) == NMT_ERR_ARG && strstr(err.msg, "'zh'"));
    CHECK(nmt_bleu_corpus(hyp, refs, 0, 1, NULL, 0, &r, &err) == NMT_ERR_ARG);
    CHECK(nmt_chrf_corpus(hyp, refs, 1, -1, 0, &x, &err) == NMT_ERR_ARG);
    CHECK(nmt_bleu_corpus(hyp, refs, 1, 1, "none", 0, &r, &err) == 0 && r.sys_len == 2 && r.counts[1] == 1 && r.totals[2] == 0);
    /* a segment whose every reference is missing: refused, as sacreBLEU refuses it */
    const char *hyp2[] = {"a b", "c d"}, *ra[] = {"a b", NULL}, *rb[] = {NULL, NULL};
    const char *const *gaps[] = {ra, rb};
    CHECK(nmt_bleu_corpus(hyp2, gaps, 2, 2, NULL, 0, &r, &err) == NMT_ERR_ARG && strstr(err.msg, "segment 1 has no reference"));
    CHECK(nmt_chrf_corpus(hyp2, gaps, 2, 2, 0, &x, &err) == NMT_ERR_ARG && strstr(err.msg, "segment 1 has no reference"));
    CHECK(nmt_bleu_corpus(hyp2, gaps, 2, 1, NULL, 0, &r, &err) == 0 && r.sys_len == 2 && r.ref_len == 2);
}

int main(int argc, char **argv)
{
    quick = argc > 1 && !strcmp(argv[1], "--quick");
    test_corpus_expected();
    test_sentence_expected();
    test_metrics_file("expected_metrics.tsv", 0, 100);
    test_metrics_file("sentence_metrics.tsv", 1, 100);
    test_tokenizers();
    test_bleu_cases();
    test_chrf_cases();
    test_ter_cases();
    test_chrfpp_cases();
    test_public_args();
    printf("sacreBLEU values: %d of %d bit-identical, the rest within %g\n", n_exact, n_numbers,
           TOL);
    return test_done("test_bleu");
}
