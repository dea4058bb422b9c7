/* topk.h: a bounded min-heap of (score, index) candidates that keeps the best `cap` offered,
 * for the beam's choices per row (in the compute backend) and per sentence (beam.c). Order is
 * total: higher score first, then lower index, so ties break the same way everywhere. */
#ifndef NMT_TOPK_H
#define NMT_TOPK_H

typedef struct topk_item { double score; long idx; } topk_item;

/* a is better than b: higher score, then lower index */
static inline int topk_better(const topk_item *a, const topk_item *b)
{
    return a->score > b->score || (a->score == b->score && a->idx < b->idx);
}

/* Offers c to the heap h of *n items (at most cap). The root h[0] is the worst kept item, so
 * once the heap is full a candidate only has to beat it. */
static inline void topk_push(topk_item *h, int *n, int cap, topk_item c)
{
    if (*n == cap) {
        if (!topk_better(&c, &h[0])) return;
        h[0] = c; /* replace the worst, sift down */
        for (int i = 0;;) {
            int l = 2 * i + 1, r = l + 1, w = i;
            if (l < *n && topk_better(&h[w], &h[l])) w = l;
            if (r < *n && topk_better(&h[w], &h[r])) w = r;
            if (w == i) break;
            topk_item t = h[i]; h[i] = h[w]; h[w] = t; i = w;
        }
        return;
    }
    int i = (*n)++;
    h[i] = c;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!topk_better(&h[p], &h[i])) break;
        topk_item t = h[i]; h[i] = h[p]; h[p] = t; i = p;
    }
}

#endif
