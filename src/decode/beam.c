/* beam.c: batched beam search. All live hypotheses of all sentences of a batch advance in one
 * infer_step; candidates are chosen per sentence by a partial top-k over (row, word). Ties in
 * score break by the lower (row, word) index, and the final ranking is stable, so results do
 * not depend on how sentences were batched. History is a tree of nodes (parent, word), so
 * nothing is copied when hypotheses branch. */
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
    int m = (int)(max_ratio * len);
    return m < 1 ? 1 : m;
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
 * float (exactly what a log-softmax pass would have stored), index off + v. Once the heap is full
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

typedef struct fin_rank { double score; int order, node; } fin_rank;
static int cmp_rank(const void *a, const void *b)
{
    const fin_rank *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->order - y->order;
}

static int collect(beam_sent *out, sent_state *st, const beam_opts *o, int xlen)
{
    fin_rank *r = malloc(sizeof(fin_rank) * (st->nfin ? st->nfin : 1));
    if (!r) return -1;
    for (int i = 0; i < st->nfin; i++) {
        node *nd = &st->nodes[st->fin[i]];
        r[i].score = o->normalize ? nd->logprob / nd->depth : nd->logprob;
        r[i].order = i;
        r[i].node = st->fin[i];
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

int beam_search(beam_sent *out, infer_ws *w, const nmt_model *m, const batch *src, const beam_opts *o, nmt_err *err)
{
    const nmt_config *c = &m->cfg;
    int S = src->B, K = o->K, V = c->tgt_vocab, Tx = src->Tx, rc = NMT_OK;
    int n = infer_state_dim(c, Tx); /* a hypothesis's whole recurrent state, copied as one row */
    int Hmax = S * K;
    memset(out, 0, sizeof(beam_sent) * S);
    if ((rc = infer_reserve(w, c, S, Tx, Hmax, err))) return rc;
    sent_state *st = calloc(S, sizeof *st);
    int *row_src = malloc(sizeof(int) * Hmax), *row_node = malloc(sizeof(int) * Hmax), *yprev = malloc(sizeof(int) * Hmax);
    int *nrow_src = malloc(sizeof(int) * Hmax), *nrow_node = malloc(sizeof(int) * Hmax), *nyprev = malloc(sizeof(int) * Hmax);
    real *sa = malloc(sizeof(real) * Hmax * n), *sb = malloc(sizeof(real) * Hmax * n), *snew = malloc(sizeof(real) * Hmax * n);
    cand *heap = malloc(sizeof(cand) * K);
    /* per row: lse, and its candidate list (cap words; more only on ties) with scratch for it */
    int cap = K + 16;
    real *lse = malloc(sizeof(real) * Hmax), *clp = malloc(sizeof(real) * Hmax * cap);
    int *cv = malloc(sizeof(int) * Hmax * cap), *cn = malloc(sizeof(int) * Hmax), *rneed = malloc(sizeof(int) * Hmax);
    cand *rheap = malloc(sizeof(cand) * Hmax * K);
    int ok = st && row_src && row_node && yprev && nrow_src && nrow_node && nyprev && sa && sb && snew && heap &&
             lse && clp && cv && cn && rneed && rheap;
    int maxsteps = 0;
    for (int b = 0; ok && b < S; b++) {
        sent_state *s = &st[b];
        s->maxlen = beam_max_len(o->max_ratio, src->xlen[b]);
        if (s->maxlen > maxsteps) maxsteps = s->maxlen;
        s->cap = K * s->maxlen + 1;
        s->nodes = malloc(sizeof(node) * s->cap);
        s->fin = malloc(sizeof(int) * (K + K + 1));
        if (o->attn) s->attn = malloc(sizeof(real) * (size_t)s->cap * src->xlen[b]);
        ok = s->nodes && s->fin && (!o->attn || s->attn);
        if (!ok) break;
        s->nodes[0] = (node){-1, -1, 0, 0.0}; /* the empty hypothesis */
        s->nn = 1;
    }
    if (!ok) { rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory in beam search"); goto out; }

    infer_encode(w, m, src);
    infer_init_states(w, c, sa, S, Tx);
    int H = S;
    for (int b = 0; b < S; b++) {
        row_src[b] = b;
        row_node[b] = 0;
        yprev[b] = -1;
    }
    for (int t = 0; t < maxsteps && H > 0; t++) {
        infer_step(w, m, src, H, row_src, yprev, sa, snew);
        for (int r = 0; r < H; r++) rneed[r] = K - st[row_src[r]].nfin; /* what each row's sentence still needs */
        backend()->topk_rows(cn, clp, cv, lse, w->logp, H, V, rneed, cap, o->no_unk ? VOCAB_UNK : -1, rheap, K);
        int nh = 0;
        for (int r0 = 0; r0 < H;) {
            int b = row_src[r0], r1 = r0;
            while (r1 < H && row_src[r1] == b) r1++;
            sent_state *s = &st[b];
            int need = K - s->nfin, nheap = 0;
            for (int r = r0; r < r1; r++) {
                double base = s->nodes[row_node[r]].logprob;
                long off = (long)(r - r0) * V;
                if (cn[r] < 0) {
                    push_row(heap, &nheap, need, w->logp + (size_t)r * V, V, lse[r], base, off, o->no_unk);
                    continue;
                }
                for (int q = 0; q < cn[r]; q++)
                    topk_push(heap, &nheap, need, (cand){base + clp[(size_t)r * cap + q], off + cv[(size_t)r * cap + q]});
            }
            qsort(heap, nheap, sizeof(cand), cmp_cand);
            int first_new = nh;
            for (int k = 0; k < nheap; k++) {
                int r = r0 + (int)(heap[k].idx / V), v = (int)(heap[k].idx % V);
                int id = s->nn++;
                s->nodes[id] = (node){row_node[r], v, s->nodes[row_node[r]].depth + 1, heap[k].score};
                if (o->attn)
                    memcpy(s->attn + (size_t)id * src->xlen[b], w->alpha + (size_t)r * Tx, sizeof(real) * src->xlen[b]);
                if (v == VOCAB_EOS) {
                    s->fin[s->nfin++] = id;
                } else {
                    nrow_src[nh] = b;
                    nrow_node[nh] = id;
                    nyprev[nh] = v;
                    memcpy(sb + (size_t)nh * n, snew + (size_t)r * n, sizeof(real) * n);
                    nh++;
                }
            }
            if (s->nfin >= K || nh == first_new || t + 1 >= s->maxlen) {
                /* done: what is still live competes as it is */
                for (int q = first_new; q < nh; q++) s->fin[s->nfin++] = nrow_node[q];
                nh = first_new;
                s->done = 1;
            }
            r0 = r1;
        }
        H = nh;
        int *ti = row_src; row_src = nrow_src; nrow_src = ti;
        ti = row_node; row_node = nrow_node; nrow_node = ti;
        ti = yprev; yprev = nyprev; nyprev = ti;
        real *tr = sa; sa = sb; sb = tr;
    }
    for (int b = 0; b < S; b++)
        if (collect(&out[b], &st[b], o, src->xlen[b])) {
            rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory in beam search");
            break;
        }
out:
    if (rc)
        for (int b = 0; b < S; b++) beam_sent_free(&out[b]);
    for (int b = 0; st && b < S; b++) { free(st[b].nodes); free(st[b].fin); free(st[b].attn); }
    free(st); free(row_src); free(row_node); free(yprev); free(nrow_src); free(nrow_node); free(nyprev);
    free(sa); free(sb); free(snew); free(heap); free(lse); free(clp); free(cv); free(cn); free(rneed); free(rheap);
    return rc;
}
