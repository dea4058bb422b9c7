/* bootstrap.c: paired bootstrap resampling for BLEU (bootstrap.h). Each resample is drawn once and
 * summed for every system at once, so the resamples are paired without being stored. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bootstrap.h"
#include "base/err.h"
#include "base/rng.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* sc[r][s]: system s's BLEU on resample r. */
static int resample_all(double *sc, const bleu_stats *const *seg, int nsys, long nseg, int R, uint64_t seed,
                        bleu_stats *acc, const bleu_opts *o, nmt_err *err)
{
    rng g;
    rng_seed(&g, seed);
    for (int r = 0; r < R; r++) {
        memset(acc, 0, sizeof *acc * (size_t)nsys);
        for (long i = 0; i < nseg; i++) {
            long j = (long)rng_below(&g, (uint64_t)nseg);
            for (int s = 0; s < nsys; s++) bleu_stats_add(&acc[s], &seg[s][j]);
        }
        for (int s = 0; s < nsys; s++) {
            bleu_score b;
            int rc = bleu_compute(&b, &acc[s], o, err);
            if (rc) return rc;
            sc[(size_t)r * nsys + s] = b.score;
        }
    }
    return NMT_OK;
}

/* System s's mean and interval from column s of sc, using col[R] as scratch. */
static void interval(bleu_bs *out, const double *sc, int nsys, int s, int R, double *col)
{
    double sum = 0;
    for (int r = 0; r < R; r++) col[r] = sc[(size_t)r * nsys + s], sum += col[r];
    qsort(col, (size_t)R, sizeof *col, cmp_double);
    int lo = R / 40;
    out->mean = sum / R;
    out->ci = 0.5 * (col[R - lo - 1] - col[lo]);
}

/* System s's p-value against system 0. sacreBLEU counts only differences strictly above the
 * observed one, which gives a system compared with itself p = 1/(R+1); at least as large gives 1. */
static double p_value(const double *sc, int nsys, int s, int R, double observed)
{
    double mean = 0;
    for (int r = 0; r < R; r++) mean += fabs(sc[(size_t)r * nsys + s] - sc[(size_t)r * nsys]);
    mean /= R;
    long c = 0;
    for (int r = 0; r < R; r++) c += fabs(sc[(size_t)r * nsys + s] - sc[(size_t)r * nsys]) - mean >= observed;
    return (double)(c + 1) / (R + 1);
}

int bleu_paired_bootstrap(bleu_bs *out, const bleu_stats *const *seg, int nsys, long nseg, int R, uint64_t seed,
                          const bleu_opts *o, nmt_err *err)
{
    if (nsys < 1 || nseg < 1 || R < 40)
        return nmt_fail(err, NMT_ERR_ARG, "paired bootstrap: %d systems, %ld segments, %d resamples (needs 1, 1, 40)", nsys,
                        nseg, R);
    for (int s = 0; s < nsys; s++) {
        bleu_stats all = {0};
        for (long i = 0; i < nseg; i++) bleu_stats_add(&all, &seg[s][i]);
        bleu_score b;
        int rc = bleu_compute(&b, &all, o, err);
        if (rc) return rc;
        out[s].score = b.score;
    }
    double *sc = malloc(sizeof(double) * (size_t)R * nsys), *col = malloc(sizeof(double) * (size_t)R);
    bleu_stats *acc = malloc(sizeof(bleu_stats) * (size_t)nsys);
    int rc = sc && col && acc ? resample_all(sc, seg, nsys, nseg, R, seed, acc, o, err)
                              : nmt_fail(err, NMT_ERR_NOMEM, "paired bootstrap: out of memory");
    for (int s = 0; s < nsys && !rc; s++) {
        interval(&out[s], sc, nsys, s, R, col);
        out[s].p = s ? p_value(sc, nsys, s, R, fabs(out[s].score - out[0].score)) : -1;
    }
    free(sc); free(col); free(acc);
    return rc;
}
