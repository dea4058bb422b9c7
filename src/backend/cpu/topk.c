/* topk.c: the beam's scan of one row of logits (decode/beam.c): its log-normaliser, and the few
 * words that can still be among its sentence's best, found by skipping the vocabulary eight
 * words at a time against a bound; and the weighted sum of log-probabilities an ensemble of
 * models searches instead. Rows run in parallel. */
#include <float.h>
#include <math.h>

#include "backend/cpu/cpu.h"
#include "backend/cpu/vec.h"

/* first v >= from with z[v] >= thr, or -1 */
static int next_above(const real *z, int from, int V, real thr)
{
    int v = from;
#if NMT_SIMD
    __m256 t = _mm256_set1_ps(thr);
    for (; v + 8 <= V; v += 8) {
        int msk = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(z + v), t, _CMP_GE_OQ));
        if (msk) return v + __builtin_ctz(msk);
    }
#endif
    for (; v < V; v++)
        if (z[v] >= thr) return v;
    return -1;
}

/* One row: lse = log Σ exp z (0 when logp: z is an ensemble's log-probabilities), and every
 * allowed word whose lp(v) = z[v] - lse reaches the need-th best lp of the row. A word left
 * out has `need` words of its own row strictly above it, so it cannot be among its sentence's
 * best `need` whatever the row's base score: the sentence's choice among these lists is the
 * choice over whole rows. Returns the count, or -1 when ties make more than cap. heap: scratch
 * for need candidates. */
static int row_candidates(real *lp_out, int *v_out, int cap, real *lse_out, const real *z, int V, int need,
                          int skip, topk_item *heap, int logp)
{
    real lse = logp ? 0 : vec_logsumexp(NULL, z, V, NULL);
    *lse_out = lse;
    /* the need largest z (lp is monotone in z): the scores are the z themselves, exact in
     * double, so the scan's bound is the worst kept z as it is */
    int nheap = 0, v = 0;
    for (; v < V && nheap < need; v++)
        if (v != skip) topk_push(heap, &nheap, need, (topk_item){z[v], v});
    while (nheap && v < V && (v = next_above(z, v, V, (float)heap[0].score)) >= 0) {
        if (v != skip) topk_push(heap, &nheap, need, (topk_item){z[v], v});
        v++;
    }
    if (nheap == 0) return 0;
    real lpk = (real)(z[heap[0].idx] - lse); /* the need-th best lp */
    /* every z with fl(z - lse) >= lpk lies above this bound */
    double slack = 4 * FLT_EPSILON * (fabs(lpk) + fabs(lse)) + FLT_MIN;
    float lo = nextafterf((float)((double)lpk + lse - slack), -INFINITY);
    int n = 0;
    for (v = next_above(z, 0, V, lo); v >= 0; v = next_above(z, v + 1, V, lo)) {
        if (v == skip) continue;
        real lp = (real)(z[v] - lse);
        if (lp < lpk) continue;
        if (n == cap) return -1;
        lp_out[n] = lp;
        v_out[n++] = v;
    }
    return n;
}

void cpu_topk_rows(int *n, real *lp, int *v, real *lse, const real *z, int H, int V, const int *need, int cap,
                   int skip, topk_item *heap, int kmax, int logp)
{
#pragma omp parallel for schedule(static) if (cpu_team(H, (long)H * V))
    for (int r = 0; r < H; r++)
        n[r] = row_candidates(lp + (size_t)r * cap, v + (size_t)r * cap, cap, &lse[r], z + (size_t)r * V, V, need[r],
                              skip, heap + (size_t)r * kmax, logp);
}

/* One model's share of an ensemble's scores: the same lse and the same rounded difference as
 * row_candidates forms, so that an ensemble of copies of one model scores as that model. */
void cpu_logp_acc_rows(real *y, const real *z, int H, int V, real w, int first)
{
#pragma omp parallel for schedule(static) if (cpu_team(H, (long)H * V))
    for (int r = 0; r < H; r++) {
        const real *zr = z + (size_t)r * V;
        real *yr = y + (size_t)r * V, lse = vec_logsumexp(NULL, zr, V, NULL);
        if (first)
            for (int v = 0; v < V; v++) yr[v] = w * (real)(zr[v] - lse);
        else
            for (int v = 0; v < V; v++) yr[v] += w * (real)(zr[v] - lse);
    }
}
