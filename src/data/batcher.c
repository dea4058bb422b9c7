/* batcher.c: Appendix-B minibatch order and padded batch assembly. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "data/batcher.h"
#include "base/err.h"

static void shuffle(int *a, int n, rng *r)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(r, (uint64_t)i + 1), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static const pairs *sort_p;
static int cmp_len(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    int ta = pair_tgt_len(sort_p, a), tb = pair_tgt_len(sort_p, b);
    if (ta != tb) return ta - tb;
    int sa = pair_src_len(sort_p, a), sb = pair_src_len(sort_p, b);
    if (sa != sb) return sa - sb;
    return a - b; /* qsort is not stable: the index makes the order unique */
}

int batcher_init(batcher *bt, const pairs *p, int B, int k, int reshuffle, uint64_t seed, nmt_err *err)
{
    memset(bt, 0, sizeof *bt);
    if (p->n < 1) return nmt_fail(err, NMT_ERR_ARG, "no sentence pairs to train on");
    /* blocks of B·k pairs are indexed with ints */
    if (B < 1 || k < 1 || (long long)B * k > INT_MAX)
        return nmt_fail(err, NMT_ERR_ARG, "batch %d x sort blocks %d: a block must hold 1 to %d pairs", B, k, INT_MAX);
    bt->p = p;
    bt->B = B;
    bt->k = k;
    bt->reshuffle = reshuffle;
    bt->shuffled = malloc(sizeof(int) * p->n);
    bt->order = malloc(sizeof(int) * p->n);
    bt->starts = malloc(sizeof(int) * ((size_t)p->n / B + (size_t)p->n / ((size_t)B * k) + 3));
    if (!bt->shuffled || !bt->order || !bt->starts) {
        batcher_free(bt);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    rng_seed(&bt->r, seed ^ 0x5eedba7c4e5ULL);
    for (int i = 0; i < p->n; i++) bt->shuffled[i] = i;
    shuffle(bt->shuffled, p->n, &bt->r); /* "shuffled once before training" */
    bt->epoch = 1;
    batcher_plan(bt);
    return NMT_OK;
}

void batcher_free(batcher *bt)
{
    if (!bt) return;
    free(bt->shuffled);
    free(bt->order);
    free(bt->starts);
    memset(bt, 0, sizeof *bt);
}

void batcher_plan(batcher *bt)
{
    int n = bt->p->n, blk = bt->B * bt->k;
    if (bt->reshuffle && bt->epoch > 1) shuffle(bt->shuffled, n, &bt->r);
    memcpy(bt->order, bt->shuffled, sizeof(int) * n);
    sort_p = bt->p;
    bt->nb = 0;
    for (int b0 = 0; b0 < n; b0 += blk) {
        int len = n - b0 < blk ? n - b0 : blk;
        qsort(bt->order + b0, len, sizeof(int), cmp_len);
        int first = bt->nb;
        for (int s = 0; s < len; s += bt->B) bt->starts[bt->nb++] = b0 + s;
        if (bt->reshuffle) {
            /* visit this block's minibatches in random order: permute whole minibatches */
            int nbk = bt->nb - first, *tmp = malloc(sizeof(int) * len), *perm = malloc(sizeof(int) * nbk);
            int *st = malloc(sizeof(int) * (nbk + 1));
            if (tmp && perm && st) {
                for (int i = 0; i < nbk; i++) { perm[i] = i; st[i] = bt->starts[first + i]; }
                st[nbk] = b0 + len;
                shuffle(perm, nbk, &bt->r);
                int pos = b0;
                for (int i = 0; i < nbk; i++) {
                    int a = st[perm[i]], e = st[perm[i] + 1];
                    bt->starts[first + i] = pos;
                    memcpy(tmp + (pos - b0), bt->order + a, sizeof(int) * (e - a));
                    pos += e - a;
                }
                memcpy(bt->order + b0, tmp, sizeof(int) * len);
            } /* on allocation failure the block keeps its sorted order: still a valid schedule */
            free(tmp); free(perm); free(st);
        }
    }
    bt->starts[bt->nb] = n;
    bt->next = 0;
}

const int *batcher_next(batcher *bt, int *count)
{
    if (bt->next >= bt->nb) {
        bt->epoch++;
        batcher_plan(bt);
    }
    int i = bt->next++;
    *count = bt->starts[i + 1] - bt->starts[i];
    return bt->order + bt->starts[i];
}

double batcher_progress(const batcher *bt) { return bt->nb ? (double)bt->next / bt->nb : 0; }

/* Room for the links of any B pairs: B times the most one pair has. */
static int links_room(batch_buf *bb, const pairs *p, int B)
{
    long most = 0;
    for (int i = 0; i < p->n; i++)
        if (p->link_off[i + 1] - p->link_off[i] > most) most = p->link_off[i + 1] - p->link_off[i];
    if (most * B > INT_MAX / 2) return -1;
    bb->links.off = malloc(sizeof(int) * ((size_t)B + 1));
    size_t room = (size_t)most * (size_t)B;
    bb->links.lk = malloc(sizeof(int) * 2 * (room ? room : 1));
    return bb->links.off && bb->links.lk ? 0 : -1;
}

int batch_buf_init(batch_buf *bb, const pairs *p, int B, nmt_err *err)
{
    memset(bb, 0, sizeof *bb);
    for (int i = 0; i < p->n; i++) {
        if (pair_src_len(p, i) > bb->capTx) bb->capTx = pair_src_len(p, i);
        if (pair_tgt_len(p, i) > bb->capTy) bb->capTy = pair_tgt_len(p, i);
    }
    bb->capB = B;
    bb->b.x = malloc(sizeof(int) * (size_t)B * (bb->capTx ? bb->capTx : 1));
    bb->b.y = malloc(sizeof(int) * (size_t)B * (bb->capTy ? bb->capTy : 1));
    bb->b.xlen = malloc(sizeof(int) * B);
    bb->b.ylen = malloc(sizeof(int) * B);
    bb->order = malloc(sizeof(int) * B);
    if (p->link_off && links_room(bb, p, B)) {
        batch_buf_free(bb);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for batches' links");
    }
    if (!bb->b.x || !bb->b.y || !bb->b.xlen || !bb->b.ylen || !bb->order) {
        batch_buf_free(bb);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for batches");
    }
    return NMT_OK;
}

void batch_buf_free(batch_buf *bb)
{
    if (!bb) return;
    free(bb->b.x); free(bb->b.y); free(bb->b.xlen); free(bb->b.ylen); free(bb->order);
    free(bb->links.off); free(bb->links.lk);
    memset(bb, 0, sizeof *bb);
}

/* Each row's links, in the rows' order. */
static void fill_links(batch_links *l, const pairs *p, const int *ids, const int *ord, int count)
{
    l->off[0] = 0;
    for (int r = 0; r < count; r++) {
        int k = ids[ord[r]];
        long n = p->link_off[k + 1] - p->link_off[k];
        memcpy(l->lk + 2 * (size_t)l->off[r], p->link + 2 * p->link_off[k], sizeof(int) * 2 * (size_t)n);
        l->off[r + 1] = l->off[r] + (int)n;
    }
}

void batch_fill(batch_buf *bb, const pairs *p, const int *ids, int count)
{
    batch *b = &bb->b;
    int *ord = bb->order;
    for (int r = 0; r < count; r++) { /* insertion sort, stable: a minibatch is 80 pairs */
        int len = pair_src_len(p, ids[r]), q = r;
        for (; q > 0 && pair_src_len(p, ids[ord[q - 1]]) < len; q--) ord[q] = ord[q - 1];
        ord[q] = r;
    }
    b->B = count;
    b->Tx = b->Ty = 0;
    for (int r = 0; r < count; r++) {
        b->xlen[r] = pair_src_len(p, ids[ord[r]]);
        b->ylen[r] = pair_tgt_len(p, ids[ord[r]]);
        if (b->xlen[r] > b->Tx) b->Tx = b->xlen[r];
        if (b->ylen[r] > b->Ty) b->Ty = b->ylen[r];
    }
    memset(b->x, 0, sizeof(int) * (size_t)b->Tx * count);
    memset(b->y, 0, sizeof(int) * (size_t)b->Ty * count);
    for (int r = 0; r < count; r++) {
        const int *s = p->src + p->src_off[ids[ord[r]]], *t = p->tgt + p->tgt_off[ids[ord[r]]];
        for (int i = 0; i < b->xlen[r]; i++) b->x[(size_t)i * count + r] = s[i];
        for (int i = 0; i < b->ylen[r]; i++) b->y[(size_t)i * count + r] = t[i];
    }
    if (p->link_off) fill_links(&bb->links, p, ids, ord, count);
}

void sort_by_length(int *ids, int n, const pairs *p)
{
    sort_p = p;
    qsort(ids, n, sizeof(int), cmp_len);
}
