/* beam.c: batched beam search. All live hypotheses of all sentences of a batch advance in one
 * step of every model (ens_step); candidates are chosen per sentence by a partial top-k over (row, word). Ties in
 * score break by the lower (row, word) index, and the final ranking is stable, so results do
 * not depend on how sentences were batched. History is a tree of nodes (parent, word), so
 * nothing is copied when hypotheses branch. A sentence with hints (constrain.h) is forced through
 * its prefix, one candidate a step, and then, with phrases, chooses its candidates by dynamic
 * beam allocation; the log-probabilities of the tokens they want are read on the device
 * (gather_cols), a copy up and one down per step, only while some sentence wants any. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode/beam.h"
#include "base/err.h"
#include "backend/backend.h"
#include "base/topk.h"
#include "data/vocab.h"

int beam_max_len(double max_ratio, int len)
{
    int m = (int)floor(max_ratio * len + 1e-9); /* 1.16 x 25 is 28.999... in doubles: 29 meant */
    return m < 1 ? 1 : m;
}

int beam_len_limit(double max_ratio, int max_len, int len)
{
    int m = beam_max_len(max_ratio, len);
    return max_len > 0 && max_len < m ? max_len : m;
}

typedef topk_item cand;

/* first v >= from with lp[v] >= thr, or -1 (the fallback scan below; the common path is the
 * backend's topk_rows) */
static int next_above(const real *lp, int from, int V, real thr)
{
    for (int v = from; v < V; v++)
        if (lp[v] >= thr) return v;
    return -1;
}

/* Offers every word of one row to the heap: score base + lp(v) with lp(v) = z[v] - lse rounded to
 * float (exactly what a log-softmax pass would have stored; an ensemble's z is lp, lse 0), index
 * off + v. Once the heap is full
 * a word can enter only if its score reaches the worst kept one, so the row is scanned for such
 * words against a float bound on z rounded down by more than every rounding involved (no
 * candidate is missed; topk_push decides exactly). Used for rows whose ties overflowed their
 * candidate list. */
static void push_row(cand *heap, int *nheap, int need, const real *z, int V, real lse, double base, long off,
                     int no_unk)
{
    if (need <= 0) return;
    int v = 0;
    for (; v < V && *nheap < need; v++)
        if (!(no_unk && v == VOCAB_UNK)) topk_push(heap, nheap, need, (cand){base + (real)(z[v] - lse), off + v});
    while (v < V) {
        double d = heap[0].score - base, t = d + lse;
        double slack = 4 * FLT_EPSILON * (fabs(d) + fabs(lse)) + 1e-12 * (fabs(heap[0].score) + fabs(base)) + FLT_MIN;
        float thr = nextafterf((float)(t - slack), -INFINITY);
        if ((v = next_above(z, v, V, thr)) < 0) break;
        if (!(no_unk && v == VOCAB_UNK)) topk_push(heap, nheap, need, (cand){base + (real)(z[v] - lse), off + v});
        v++;
    }
}

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    return topk_better(x, y) ? -1 : topk_better(y, x) ? 1 : 0;
}

typedef struct node { int parent, tok, depth; double logprob; } node;

typedef struct sent_state {
    node *nodes;
    const beam_hint *hint; /* NULL: none */
    cons_state *cs;      /* [cap] each node's progress through the phrases (hint->nc > 0) */
    int nn, cap;
    real *attn;          /* [cap, xlen] when kept */
    int *fin;            /* finished (or cut) node ids */
    int nfin;
    int maxlen, done;
} sent_state;

void beam_sent_free(beam_sent *s)
{
    if (!s) return;
    for (int i = 0; i < s->n; i++) {
        free(s->hyp[i].tok);
        free(s->hyp[i].attn);
    }
    free(s->hyp);
    memset(s, 0, sizeof *s);
}

typedef struct fin_rank { double score; int order, node, ok; } fin_rank;
static int cmp_rank(const void *a, const void *b)
{
    const fin_rank *x = a, *y = b;
    if (x->ok != y->ok) return y->ok - x->ok; /* those that hold every phrase first */
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->order - y->order;
}

double beam_rank_score(const beam_opts *o, double lp, int len)
{
    if (!o->normalize) return lp;
    return o->alpha == 1 ? lp / len : lp / pow(len, o->alpha); /* alpha 1 divides, as before any other alpha existed: the same bits */
}

static int collect(beam_sent *out, sent_state *st, const beam_opts *o, int xlen)
{
    fin_rank *r = malloc(sizeof(fin_rank) * (st->nfin ? st->nfin : 1));
    if (!r) return -1;
    for (int i = 0; i < st->nfin; i++) {
        node *nd = &st->nodes[st->fin[i]];
        r[i].score = beam_rank_score(o, nd->logprob, nd->depth);
        r[i].order = i;
        r[i].node = st->fin[i];
        r[i].ok = !st->cs || cons_done(st->hint, &st->cs[st->fin[i]]);
    }
    qsort(r, st->nfin, sizeof *r, cmp_rank);
    int n = st->nfin < o->nbest ? st->nfin : o->nbest;
    out->hyp = calloc(n ? n : 1, sizeof(beam_hyp));
    if (!out->hyp) { free(r); return -1; }
    out->n = n;
    for (int i = 0; i < n; i++) {
        beam_hyp *h = &out->hyp[i];
        const node *nd = &st->nodes[r[i].node];
        h->len = nd->depth;
        h->logprob = nd->logprob;
        h->score = r[i].score;
        h->tok = malloc(sizeof(int) * (h->len ? h->len : 1));
        if (o->attn) h->attn = malloc(sizeof(real) * (size_t)(h->len ? h->len : 1) * xlen);
        if (!h->tok || (o->attn && !h->attn)) { free(r); return -1; }
        int id = r[i].node;
        for (int d = h->len - 1; d >= 0; d--) {
            h->tok[d] = st->nodes[id].tok;
            if (o->attn) memcpy(h->attn + (size_t)d * xlen, st->attn + (size_t)id * xlen, sizeof(real) * xlen);
            id = st->nodes[id].parent;
        }
        h->finished = h->len > 0 && h->tok[h->len - 1] == VOCAB_EOS;
    }
    free(r);
    return 0;
}

/* The search's scratch, sized for Hmax rows of state width n. On the host: the live
 * hypotheses' rows (their sentence, tree node and last word) now and next, what each row's
 * sentence still needs, the parent row of each next row, and the read-back candidate lists. On
 * the device: the state rows, the kernel's scratch and the same lists, which one copy brings
 * back per step. */
typedef struct search_ws {
    const backend_ops *b; /* the ensemble's backend, where the device buffers live */
    int *row_src, *row_node, *yprev, *nrow_src, *nrow_node, *nyprev, *rneed, *parent;
    cand *heap;
    int cap;             /* candidates kept per row (more only on ties) */
    void *htop;          /* host: the step's candidate lists (top_views) */
    real *hz, *hatt;     /* host: one row of scores (a tie's fallback), the step's attention rows */
    real *sa, *sb, *snew; /* device: state rows */
    cand *dheap;         /* device: topk_rows's scratch */
    int *dneed, *dparent; /* device: rneed and parent, uploaded */
    void *dtop;          /* device: the candidate lists, as on the host */
    /* hints only: the (row, word) pairs whose scores a step reads, row r's from poff[r]; their
     * flat indices into the scores and the log-probabilities read back; a sentence's pool of
     * candidates with their banks, and cons_choose's scratch */
    int *poff, *pword, *pflat, *pbank, *bcnt;
    real *plp;
    cand *pool;
    int *dflat;          /* device: pflat, uploaded */
    real *dz;            /* device: the gathered scores */
} search_ws;

/* The candidate lists of H rows in one block, so that they cross in one copy: their counts,
 * log-normalisers, log-probabilities and words. 8-byte aligned parts; the bytes returned. */
static size_t top_views(void *base, int H, int cap, int **cn, real **lse, real **clp, int **cv)
{
    size_t a = ((sizeof(int) * H + 7) & ~(size_t)7), b = a + ((sizeof(real) * H + 7) & ~(size_t)7);
    size_t c = b + ((sizeof(real) * H * cap + 7) & ~(size_t)7), end = c + sizeof(int) * H * cap;
    char *p = base;
    if (p) {
        *cn = (int *)(void *)p;
        *lse = (real *)(void *)(p + a);
        *clp = (real *)(void *)(p + b);
        *cv = (int *)(void *)(p + c);
    }
    return end;
}

static void search_ws_free(search_ws *s)
{
    free(s->row_src); free(s->row_node); free(s->yprev); free(s->nrow_src); free(s->nrow_node); free(s->nyprev);
    free(s->rneed); free(s->parent); free(s->heap); free(s->htop); free(s->hz); free(s->hatt);
    free(s->poff); free(s->pword); free(s->pflat); free(s->pbank); free(s->bcnt); free(s->plp); free(s->pool);
    const backend_ops *bk = s->b;
    if (!bk) return; /* nothing was allocated on the device */
    bk->free(s->sa); bk->free(s->sb); bk->free(s->snew); bk->free(s->dheap); bk->free(s->dneed); bk->free(s->dparent);
    bk->free(s->dtop);
    bk->free(s->dflat); bk->free(s->dz);
}

/* The hints' scratch (hint_max: the most phrases, and phrase tokens, of a sentence): 0, or -1
 * when out of memory */
static int hint_ws_alloc(search_ws *s, int Hmax, int K, const int *hint_max)
{
    const backend_ops *bk = s->b;
    size_t pairs = (size_t)Hmax * (hint_max[0] + 1), pool = (size_t)K * (hint_max[0] + 3);
    s->poff = malloc(sizeof(int) * (Hmax + 1)); s->pword = malloc(sizeof(int) * pairs);
    s->pflat = malloc(sizeof(int) * pairs); s->plp = malloc(sizeof(real) * pairs);
    s->pool = malloc(sizeof(cand) * pool); s->pbank = malloc(sizeof(int) * pool);
    s->bcnt = malloc(sizeof(int) * 2 * (hint_max[1] + 1));
    s->dflat = bk->alloc(sizeof(int) * pairs); s->dz = bk->alloc(sizeof(real) * pairs);
    return s->poff && s->pword && s->pflat && s->plp && s->pool && s->pbank && s->bcnt && s->dflat && s->dz ? 0 : -1;
}

/* 0, or -1 when out of memory (what was allocated is freed by search_ws_free) */
static int search_ws_alloc(search_ws *s, const backend_ops *bk, int Hmax, int n, int K, int V, int Tx)
{
    s->b = bk;
    s->cap = K + 16;
    size_t ih = sizeof(int) * Hmax, top = top_views(NULL, Hmax, s->cap, NULL, NULL, NULL, NULL);
    s->row_src = malloc(ih); s->row_node = malloc(ih); s->yprev = malloc(ih);
    s->nrow_src = malloc(ih); s->nrow_node = malloc(ih); s->nyprev = malloc(ih);
    s->rneed = malloc(ih); s->parent = malloc(ih);
    s->heap = malloc(sizeof(cand) * K);
    s->htop = malloc(top); s->hz = malloc(sizeof(real) * V); s->hatt = malloc(sizeof(real) * Hmax * Tx);
    s->sa = bk->alloc(sizeof(real) * Hmax * n); s->sb = bk->alloc(sizeof(real) * Hmax * n);
    s->snew = bk->alloc(sizeof(real) * Hmax * n);
    s->dheap = bk->alloc(sizeof(cand) * Hmax * K);
    s->dneed = bk->alloc(ih); s->dparent = bk->alloc(ih); s->dtop = bk->alloc(top);
    return s->row_src && s->row_node && s->yprev && s->nrow_src && s->nrow_node && s->nyprev && s->rneed && s->parent &&
           s->heap && s->htop && s->hz && s->hatt && s->sa && s->sb && s->snew && s->dheap && s->dneed && s->dparent &&
           s->dtop ? 0 : -1;
}

/* Each sentence's tree with its root (the empty hypothesis); the longest search any needs into
 * *maxsteps. -1 when out of memory. */
static int sentences_init(sent_state *st, const batch *src, const beam_opts *o, int *maxsteps)
{
    int K = o->K;
    *maxsteps = 0;
    for (int b = 0; b < src->B; b++) {
        sent_state *s = &st[b];
        s->maxlen = beam_len_limit(o->max_ratio, o->max_len, src->xlen[b]);
        if (s->maxlen > *maxsteps) *maxsteps = s->maxlen;
        s->cap = K * s->maxlen + 1;
        s->nodes = malloc(sizeof(node) * s->cap);
        s->fin = malloc(sizeof(int) * (K + K + 1));
        if (o->attn) s->attn = malloc(sizeof(real) * (size_t)s->cap * src->xlen[b]);
        s->hint = o->hints ? o->hints[b] : NULL;
        if (s->hint && s->hint->nc && !(s->cs = malloc(sizeof(cons_state) * s->cap))) return -1;
        if (!s->nodes || !s->fin || (o->attn && !s->attn)) return -1;
        s->nodes[0] = (node){-1, -1, 0, 0.0};
        if (s->cs) s->cs[0] = cons_start();
        s->nn = 1;
    }
    return 0;
}

/* The step's candidate lists of H rows, read back (views into ws->htop). */
typedef struct step_top { int *cn; real *lse, *clp; int *cv; } step_top;

/* What every sentence's step reads: the lists, the models' scores, the options, the sizes. */
typedef struct step_in {
    const step_top *tp;
    const infer_ens *e;
    const beam_opts *o;
    int V, Tx, t;
} step_in;

/* The best `need` candidates of the sentence's rows [r0, r1), index (r - r0)·V + column, into
 * ws->heap in heap order: their count. */
static int best_candidates(search_ws *ws, const step_in *in, const sent_state *s, int r0, int r1, int need)
{
    const step_top *tp = in->tp;
    int V = in->V, nheap = 0;
    for (int r = r0; r < r1; r++) {
        double base = s->nodes[ws->row_node[r]].logprob;
        long off = (long)(r - r0) * V;
        if (tp->cn[r] < 0) { /* ties overflowed the list: the whole row, read back */
            ws->b->copy_out(ws->hz, in->e->scores + (size_t)r * V, sizeof(real) * V);
            push_row(ws->heap, &nheap, need, ws->hz, V, tp->lse[r], base, off, in->o->no_unk);
            continue;
        }
        for (int q = 0; q < tp->cn[r]; q++)
            topk_push(ws->heap, &nheap, need,
                      (cand){base + tp->clp[(size_t)r * ws->cap + q], off + tp->cv[(size_t)r * ws->cap + q]});
    }
    return nheap;
}

/* A step inside the sentence's prefix: its one row's one candidate, the prefix's token. */
static int forced_candidate(search_ws *ws, const sent_state *s, int r0)
{
    int i = ws->poff[r0];
    ws->heap[0] = (cand){s->nodes[ws->row_node[r0]].logprob + ws->plp[i], ws->pword[i]};
    return 1;
}

static int cmp_idx(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Row r's best listed candidate (EOS only when eos_ok) into *c: 1, or 0 when none. */
static int row_best(cand *c, const step_top *tp, int cap, int r, double base, long off, int eos_ok)
{
    int got = 0;
    for (int q = 0; q < tp->cn[r]; q++) {
        cand x = {base + tp->clp[(size_t)r * cap + q], off + tp->cv[(size_t)r * cap + q]};
        if ((eos_ok || tp->cv[(size_t)r * cap + q] != VOCAB_EOS) && (!got || topk_better(&x, c))) {
            *c = x;
            got = 1;
        }
    }
    return got;
}

/* pool[0..np) sorted by index, without repeats and without EOS from rows that have not met
 * every phrase, then best first: the count kept */
static int pool_clean(cand *pool, int np, const search_ws *ws, const sent_state *s, int r0, int V)
{
    qsort(pool, np, sizeof(cand), cmp_idx);
    int n = 0;
    for (int i = 0; i < np; i++) {
        int r = r0 + (int)(pool[i].idx / V);
        if (n && pool[n - 1].idx == pool[i].idx) continue;
        if (pool[i].idx % V == VOCAB_EOS && !cons_done(s->hint, &s->cs[ws->row_node[r]])) continue;
        pool[n++] = pool[i];
    }
    qsort(pool, n, sizeof(cand), cmp_cand);
    return n;
}

/* A sentence with phrases, past its prefix (Post & Vilar 2018, section 3): the pool is the best
 * `need` of its rows, each row's best and the tokens each row's phrases want; it is shared among
 * the banks of progress (cons_choose) into ws->heap, best first: their count. */
static int constrained_candidates(search_ws *ws, const step_in *in, const sent_state *s, int r0, int r1, int need)
{
    int V = in->V, np = best_candidates(ws, in, s, r0, r1, need);
    cand *pool = ws->pool;
    memcpy(pool, ws->heap, sizeof(cand) * np);
    for (int r = r0; r < r1; r++) {
        double base = s->nodes[ws->row_node[r]].logprob;
        long off = (long)(r - r0) * V;
        np += row_best(&pool[np], in->tp, ws->cap, r, base, off, cons_done(s->hint, &s->cs[ws->row_node[r]]));
        for (int i = ws->poff[r]; i < ws->poff[r + 1]; i++) pool[np++] = (cand){base + ws->plp[i], off + ws->pword[i]};
    }
    np = pool_clean(pool, np, ws, s, r0, V);
    for (int i = 0; i < np; i++)
        ws->pbank[i] = cons_next(s->hint, s->cs[ws->row_node[r0 + (int)(pool[i].idx / V)]], (int)(pool[i].idx % V)).nmet;
    np = cons_choose(pool, ws->pbank, np, need, cons_tokens(s->hint) + 1, ws->bcnt);
    memcpy(ws->heap, pool, sizeof(cand) * np);
    return np;
}

/* The sentence's chosen candidates ws->heap[0..nheap) (best first) become nodes; those that end
 * in EOS finish, the others become the next step's rows from *nh on. Step t is the sentence's
 * last when it has K finished, no live row or reaches its length limit: what is live then
 * competes as it is. */
static void commit(search_ws *ws, const step_in *in, sent_state *s, int b, int r0, int nheap, int *nh, int xlen)
{
    const beam_opts *o = in->o;
    int first_new = *nh, V = in->V;
    for (int k = 0; k < nheap; k++) {
        int r = r0 + (int)(ws->heap[k].idx / V), col = (int)(ws->heap[k].idx % V);
        int v = in->e->vocab ? in->e->vocab[col] : col; /* a shortlist's column to its word */
        int id = s->nn++;
        s->nodes[id] = (node){ws->row_node[r], v, s->nodes[ws->row_node[r]].depth + 1, ws->heap[k].score};
        if (s->cs) s->cs[id] = cons_next(s->hint, s->cs[ws->row_node[r]], col); /* hints are in columns */
        if (o->attn) memcpy(s->attn + (size_t)id * xlen, ws->hatt + (size_t)r * in->Tx, sizeof(real) * xlen);
        if (v == VOCAB_EOS) {
            s->fin[s->nfin++] = id;
            continue;
        }
        ws->nrow_src[*nh] = b;
        ws->nrow_node[*nh] = id;
        ws->nyprev[*nh] = v;
        ws->parent[*nh] = r; /* its state: row r of snew, gathered after the step's choices */
        (*nh)++;
    }
    if (s->nfin >= o->K || *nh == first_new || in->t + 1 >= s->maxlen) {
        for (int q = first_new; q < *nh; q++) s->fin[s->nfin++] = ws->nrow_node[q];
        *nh = first_new;
        s->done = 1;
    }
}

/* One sentence's step: its rows [r0, r1) offer their candidates (the prefix's token while it
 * lasts; by banks with phrases), the best K - nfin become nodes. */
static void expand_sentence(search_ws *ws, const step_in *in, sent_state *s, int b, int r0, int r1, int *nh, int xlen)
{
    int need = in->o->K - s->nfin, nheap;
    const beam_hint *h = s->hint;
    if (h && in->t < h->plen) {
        nheap = forced_candidate(ws, s, r0);
    } else if (h && h->nc) {
        nheap = constrained_candidates(ws, in, s, r0, r1, need);
    } else {
        nheap = best_candidates(ws, in, s, r0, r1, need);
        qsort(ws->heap, nheap, sizeof(cand), cmp_cand);
    }
    commit(ws, in, s, b, r0, nheap, nh, xlen);
}

/* The next step's rows become the current ones. */
static void search_swap(search_ws *ws)
{
    int *ti = ws->row_src; ws->row_src = ws->nrow_src; ws->nrow_src = ti;
    ti = ws->row_node; ws->row_node = ws->nrow_node; ws->nrow_node = ti;
    ti = ws->yprev; ws->yprev = ws->nyprev; ws->nyprev = ti;
    real *tr = ws->sa; ws->sa = ws->sb; ws->sb = tr;
}

/* The log-probabilities at step t of the tokens each row's hints want (the prefix's next, or
 * what its phrases want) into ws->plp, row r's from ws->poff[r], rounded as topk_rows rounds
 * its lists (fl(z - lse), lse the rows' read-back log-normalisers): read on the device, one
 * copy each way, none when no row wants any. */
static void hint_scores(search_ws *ws, const sent_state *st, const infer_ens *e, const real *lse, int H, int t, int V)
{
    int np = 0;
    for (int r = 0; r < H; r++) {
        const sent_state *s = &st[ws->row_src[r]];
        ws->poff[r] = np;
        if (s->hint && t < s->hint->plen) ws->pword[np++] = s->hint->prefix[t];
        else if (s->cs) np += cons_wanted(s->hint, &s->cs[ws->row_node[r]], ws->pword + np);
    }
    ws->poff[H] = np;
    if (!np) return;
    for (int r = 0; r < H; r++)
        for (int i = ws->poff[r]; i < ws->poff[r + 1]; i++) ws->pflat[i] = r * V + ws->pword[i];
    const backend_ops *bk = ws->b;
    bk->copy_in(ws->dflat, ws->pflat, sizeof(int) * np);
    bk->gather_cols(ws->dz, e->scores, ws->dflat, np, 1, 1, 0);
    bk->copy_out(ws->plp, ws->dz, sizeof(real) * np);
    for (int r = 0; r < H; r++)
        for (int i = ws->poff[r]; i < ws->poff[r + 1]; i++) ws->plp[i] = (real)(ws->plp[i] - lse[r]);
}

/* One step's choices: what each row's sentence still needs goes up, the candidate lists (and
 * the attention rows, when kept) come back in one copy each, every sentence expands on the host,
 * and the chosen rows' states are gathered by their parent rows on the device. *H becomes the
 * next step's rows. */
static void nh_step(search_ws *ws, sent_state *st, const infer_ens *e, const beam_opts *o, int *H, int t, int V, int Tx,
                    int n, const batch *src)
{
    const backend_ops *bk = ws->b;
    int h = *H, K = o->K;
    step_top hp, dp;
    size_t top = top_views(ws->htop, h, ws->cap, &hp.cn, &hp.lse, &hp.clp, &hp.cv);
    top_views(ws->dtop, h, ws->cap, &dp.cn, &dp.lse, &dp.clp, &dp.cv);
    for (int r = 0; r < h; r++) ws->rneed[r] = K - st[ws->row_src[r]].nfin; /* what each row's sentence still needs */
    bk->copy_in(ws->dneed, ws->rneed, sizeof(int) * h);
    bk->topk_rows(dp.cn, dp.clp, dp.cv, dp.lse, e->scores, h, V, ws->dneed, ws->cap, o->no_unk ? VOCAB_UNK : -1,
                  ws->dheap, K, e->logp);
    bk->copy_out(ws->htop, ws->dtop, top);
    if (o->attn) bk->copy_out(ws->hatt, e->att, sizeof(real) * h * Tx);
    if (o->hints) hint_scores(ws, st, e, hp.lse, h, t, V);
    step_in in = {&hp, e, o, V, Tx, t};
    int nh = 0;
    for (int r0 = 0; r0 < h;) {
        int b = ws->row_src[r0], r1 = r0;
        while (r1 < h && ws->row_src[r1] == b) r1++;
        expand_sentence(ws, &in, &st[b], b, r0, r1, &nh, src->xlen[b]);
        r0 = r1;
    }
    if (nh) {
        bk->copy_in(ws->dparent, ws->parent, sizeof(int) * nh);
        bk->gather_rows(ws->sb, ws->snew, ws->dparent, nh, n);
        ens_reorder(e, ws->dparent, nh);
    }
    *H = nh;
}

/* The most phrases, and phrase tokens, of a sentence of the batch, into m[0], m[1] */
static void hint_max(const beam_opts *o, int S, int *m)
{
    m[0] = m[1] = 0;
    for (int b = 0; o->hints && b < S; b++) {
        const beam_hint *h = o->hints[b];
        if (h && h->nc > m[0]) m[0] = h->nc;
        if (h && cons_tokens(h) > m[1]) m[1] = cons_tokens(h);
    }
}

/* A batch's hints in the scores' columns: with a shortlist the search reads and compares columns,
 * so each hint word becomes its column, once a batch. */
typedef struct col_hints {
    beam_hint *h;          /* [S] */
    const beam_hint **p;   /* [S] h's entries, NULL where the sentence has no hints */
    int *tok;              /* every prefix and phrase token of the batch: words, then columns */
} col_hints;

static void col_hints_free(col_hints *c)
{
    free(c->h);
    free(c->p);
    free(c->tok);
}

/* Word w's column in words[0..V), ascending and holding it (ens_select put it there). */
static int column_of(const int *words, int V, int w)
{
    int lo = 0, hi = V - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (words[mid] < w) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The batch's shortlist with every hint word in it (a phrase the set lacked could never be
 * written), and o's hints in its columns into c; *oc is o with them. 0 or an error. */
static int hints_select(infer_ens *e, const batch *src, const beam_opts *o, beam_opts *oc, col_hints *c, nmt_err *err)
{
    int S = src->B, n = 0;
    size_t ns = S > 0 ? (size_t)S : 1;
    for (int b = 0; b < S; b++)
        if (o->hints[b]) n += o->hints[b]->plen + (o->hints[b]->nc ? o->hints[b]->off[o->hints[b]->nc] : 0);
    c->h = calloc(ns, sizeof *c->h);
    c->p = calloc(ns, sizeof *c->p);
    c->tok = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!c->h || !c->p || !c->tok) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory in beam search");
    int *t = c->tok;
    for (int b = 0; b < S; b++) {
        const beam_hint *h = o->hints[b];
        if (!h) continue;
        int nt = h->nc ? h->off[h->nc] : 0;
        c->h[b] = *h;
        if (h->plen) memcpy(t, h->prefix, sizeof(int) * h->plen);
        c->h[b].prefix = t;
        t += h->plen;
        if (nt) memcpy(t, h->tok, sizeof(int) * nt);
        c->h[b].tok = t;
        t += nt;
        c->p[b] = &c->h[b];
    }
    int rc = ens_select(e, src, c->tok, n, err);
    for (int i = 0; !rc && i < n; i++) c->tok[i] = column_of(e->vocab, e->V, c->tok[i]);
    *oc = *o;
    oc->hints = c->p;
    return rc;
}

int beam_search_ens(beam_sent *out, infer_ens *e, const batch *src, const beam_opts *o, nmt_err *err)
{
    int S = src->B, K = o->K, Tx = src->Tx, rc = NMT_OK;
    int n = ens_state_dim(e, Tx); /* a hypothesis's whole recurrent state (every model's), copied as one row */
    memset(out, 0, sizeof(beam_sent) * S);
    beam_opts oc;
    col_hints ch = {0};
    if ((rc = ens_reserve(e, S, Tx, S * K, beam_len_limit(o->max_ratio, o->max_len, Tx), err))) return rc;
    if (o->hints && e->sl) {
        rc = hints_select(e, src, o, &oc, &ch, err);
        o = &oc;
    } else rc = ens_select(e, src, NULL, 0, err);
    if (rc) {
        col_hints_free(&ch);
        return rc;
    }
    /* the scores' columns: the vocabulary, or the batch's shortlist (whose columns 0 and 1 are
     * EOS and UNK too, so that the tests on columns below hold for both) */
    int V = e->V;
    search_ws ws = {0};
    sent_state *st = calloc(S, sizeof *st);
    int maxsteps = 0, hm[2];
    hint_max(o, S, hm);
    if (!st || search_ws_alloc(&ws, ens_ctx(e)->b, S * K, n, K, V, Tx) || (o->hints && hint_ws_alloc(&ws, S * K, K, hm)) ||
        sentences_init(st, src, o, &maxsteps)) {
        rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory in beam search");
        goto out;
    }
    ens_encode(e, src);
    ens_init_states(e, ws.sa, S, Tx);
    int H = S;
    for (int b = 0; b < S; b++) {
        ws.row_src[b] = b;
        ws.row_node[b] = 0;
        ws.yprev[b] = -1;
    }
    for (int t = 0; t < maxsteps && H > 0; t++) {
        ens_step(e, src, H, ws.row_src, ws.yprev, ws.sa, ws.snew);
        nh_step(&ws, st, e, o, &H, t, V, Tx, n, src);
        search_swap(&ws);
        backend_mark(ens_ctx(e), BK_MARK_STEP);
    }
    for (int b = 0; b < S; b++)
        if (collect(&out[b], &st[b], o, src->xlen[b])) {
            rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory in beam search");
            break;
        }
out:
    if (rc)
        for (int b = 0; b < S; b++) beam_sent_free(&out[b]);
    for (int b = 0; st && b < S; b++) { free(st[b].nodes); free(st[b].fin); free(st[b].attn); free(st[b].cs); }
    free(st);
    search_ws_free(&ws);
    col_hints_free(&ch);
    return rc;
}
