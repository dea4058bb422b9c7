/* test_bootstrap.c: paired bootstrap resampling of BLEU against the exact bootstrap distribution.
 * With 5 segments there are 5^5 equally likely resamples; the test scores every one of them
 * (summed segment statistics, bleu_compute) and checks the library's Monte Carlo mean, interval
 * and p-value against them, then the limits: a system against itself, the arguments. */
#include <stdlib.h>
#include <string.h>

#include "eval/bootstrap.h"
#include "base/err.h"
#include "test.h"

enum { NSEG = 5, NTUP = 5 * 5 * 5 * 5 * 5 };

static const char *ref[NSEG] = {"a man is riding a red bike down the street", "two dogs play in the snow",
                                "a woman reads a book in the park", "children are swimming in a lake",
                                "the old man sells fruit at the market"};
static const char *hyp[2][NSEG] = {
    {"a man rides a red bike on the street", "two dogs are playing in snow", "a woman is reading in a park",
     "kids swim in the lake", "an old man sells fruit at a market"},
    {"a man is riding a bike down the street", "two dogs play in the snow", "a lady reads a book",
     "children swim in a lake", "an old man is selling fruits in the market"}};

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The value at which the weight-1/NTUP atoms' cumulative share first reaches q. */
static double quantile(double *v, double q)
{
    qsort(v, NTUP, sizeof *v, cmp_d);
    int k = (int)ceil(q * NTUP) - 1;
    return v[k < 0 ? 0 : k];
}

/* Every resample of the 5 segments: both systems' BLEU, their means, the p-value as the library
 * defines it (|difference| centred on its mean, at least the observed one), the intervals. */
static void exact(const bleu_stats seg[2][NSEG], const bleu_opts *o, double mean[2], double half[2], double *p)
{
    static double sc[2][NTUP], d[NTUP];
    for (int t = 0; t < NTUP; t++) {
        bleu_stats acc[2] = {{0}};
        for (int i = 0, code = t; i < NSEG; i++, code /= NSEG)
            for (int s = 0; s < 2; s++) {
                const bleu_stats *x = &seg[s][code % NSEG];
                acc[s].hyp_len += x->hyp_len, acc[s].ref_len += x->ref_len;
                for (int k = 0; k < BLEU_MAX_ORDER; k++) acc[s].match[k] += x->match[k], acc[s].total[k] += x->total[k];
            }
        for (int s = 0; s < 2; s++) {
            bleu_score b;
            NMT_ASSERT(bleu_compute(&b, &acc[s], o, NULL) == 0);
            sc[s][t] = b.score;
        }
        d[t] = fabs(sc[1][t] - sc[0][t]);
    }
    double md = 0;
    for (int s = 0; s < 2; s++) {
        mean[s] = 0;
        for (int t = 0; t < NTUP; t++) mean[s] += sc[s][t] / NTUP;
        half[s] = 0.5 * (quantile(sc[s], 1 - 1.0 / 40) - quantile(sc[s], 1.0 / 40));
    }
    for (int t = 0; t < NTUP; t++) md += d[t] / NTUP;
    bleu_score b0, b1;
    bleu_stats all[2] = {{0}};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < NSEG; i++) {
            all[s].hyp_len += seg[s][i].hyp_len, all[s].ref_len += seg[s][i].ref_len;
            for (int k = 0; k < BLEU_MAX_ORDER; k++) all[s].match[k] += seg[s][i].match[k], all[s].total[k] += seg[s][i].total[k];
        }
    bleu_compute(&b0, &all[0], o, NULL), bleu_compute(&b1, &all[1], o, NULL);
    long c = 0;
    for (int t = 0; t < NTUP; t++) c += d[t] - md >= fabs(b1.score - b0.score);
    *p = (double)c / NTUP;
}

static void test_against_exact(void)
{
    bleu_opts o = {0};
    o.tokenize = BLEU_TOK_NONE;
    bleu_stats seg[2][NSEG];
    memset(seg, 0, sizeof seg);
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < NSEG; i++) NMT_ASSERT(bleu_add_sentence(&seg[s][i], hyp[s][i], &ref[i], 1, &o, NULL) == 0);
    double mean[2], half[2], p;
    exact(seg, &o, mean, half, &p);
    enum { R = 1000000 };
    const bleu_stats *sys[2] = {seg[0], seg[1]};
    bleu_bs out[2];
    NMT_ASSERT(bleu_paired_bootstrap(out, sys, 2, NSEG, R, 7, &o, NULL) == 0);
    printf("exact: means %.3f %.3f, half-widths %.3f %.3f, p %.4f; resampled: %.3f %.3f, %.3f %.3f, p %.4f\n", mean[0], mean[1],
           half[0], half[1], p, out[0].mean, out[1].mean, out[0].ci, out[1].ci, out[1].p);
    for (int s = 0; s < 2; s++) {
        CHECKF(fabs(out[s].mean - mean[s]) < 0.06, "system %d: resampled mean %.4f, exact %.4f", s, out[s].mean, mean[s]);
        CHECKF(fabs(out[s].ci - half[s]) < 0.05 * half[s], "system %d: interval +-%.4f, exact +-%.4f", s, out[s].ci, half[s]);
    }
    CHECKF(fabs(out[1].p - p) < 5 * sqrt(p * (1 - p) / R) + 2.0 / R, "p %.5f, exact %.5f", out[1].p, p);
    CHECK(out[0].p == -1);
}

/* A system against itself: p is 1 (every resample's difference, 0, is at least the observed 0),
 * and its mean and interval are the baseline's. Too few resamples or segments are refused. */
static void test_limits(void)
{
    bleu_opts o = {0};
    bleu_stats seg[NSEG];
    memset(seg, 0, sizeof seg);
    for (int i = 0; i < NSEG; i++) NMT_ASSERT(bleu_add_sentence(&seg[i], hyp[0][i], &ref[i], 1, &o, NULL) == 0);
    const bleu_stats *sys[3] = {seg, seg, seg};
    bleu_bs out[3];
    NMT_ASSERT(bleu_paired_bootstrap(out, sys, 3, NSEG, 1000, 12345, &o, NULL) == 0);
    CHECKF(out[1].p == 1 && out[2].p == 1, "a system against itself: p %g, %g", out[1].p, out[2].p);
    CHECK(out[1].mean == out[0].mean && out[1].ci == out[0].ci && out[1].score == out[0].score);
    nmt_err err;
    CHECK(bleu_paired_bootstrap(out, sys, 2, NSEG, 39, 1, &o, &err) == NMT_ERR_ARG);
    CHECK(bleu_paired_bootstrap(out, sys, 2, 0, 1000, 1, &o, &err) == NMT_ERR_ARG);
}

int main(void)
{
    test_against_exact();
    test_limits();
    return test_done("test_bootstrap");
}
