/* sample.c: translation by sampling. Every draw of every sentence is one row; all live rows
 * advance in one step of every model (ens_step), as the beam's hypotheses do, and a row leaves
 * when it draws EOS or reaches its sentence's length limit. A draw keeps its words in a flat
 * array, since draws never branch. Words are drawn by an exponential race whose noise is keyed by
 * (draw, step, word id), not by column: a batch's shortlist that holds more words changes a
 * draw only where one of the extra words wins it, as it would change the beam's output (or, with
 * top-k or top-p, where the extra words move the cut). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode/sample.h"
#include "backend/backend.h"
#include "base/err.h"
#include "base/rng.h"
#include "base/topk.h"
#include "data/vocab.h"

/* The search's scratch for H0 = S × K draws of at most L words over V columns. On the host: the
 * live rows now and next, the draws, and a step's scores and weights read back; on the device:
 * the state rows, the weights' exponentials, and the parents of the next rows. */
typedef struct draw_ws {
    int *row_src, *row_draw, *yprev, *nrow_src, *nrow_draw, *nyprev; /* live rows now and next */
    int *parent;           /* [H0] the row each next row continues */
    uint64_t *stream;      /* [H0] each draw's key, from its sentence's seed and its number */
    int *tok, *len, *maxlen; /* [H0, L] words, [H0] lengths and limits */
    double *lp;            /* [H0] log p so far */
    real *attn;            /* [H0, L, Tx] when kept */
    real *z;               /* [H0, V] a step's scores, read back */
    real *w, *w2;          /* [H0, V] the rows' weights e^{z - max}, and at another temperature */
    real *hatt;            /* [H0, Tx] a step's attention rows, read back when kept */
    real *mx;              /* [H0] each row's largest score */
    int *top;              /* [H0] each row's best drawable column (-1: none) */
    topk_item *best;       /* [topk] */
    double *tw, *sel;      /* [topk] the top k's weights; [V] the nucleus's scratch (topp < 1) */
    real *sa, *sb, *snew;  /* device: the states */
    real *dw;              /* device: [H0, V] where the weights are exponentiated */
    int *dparent;          /* device: parent, uploaded */
    const backend_ops *b;  /* the ensemble's backend, where the device buffers live */
} draw_ws;

static void draw_ws_free(draw_ws *s)
{
    free(s->row_src); free(s->row_draw); free(s->yprev); free(s->nrow_src); free(s->nrow_draw); free(s->nyprev);
    free(s->parent); free(s->stream); free(s->tok); free(s->len); free(s->maxlen); free(s->lp); free(s->attn);
    free(s->z); free(s->w); free(s->w2); free(s->hatt); free(s->mx); free(s->top); free(s->best); free(s->tw);
    free(s->sel);
    const backend_ops *bk = s->b;
    if (!bk) return; /* nothing was allocated on the device */
    bk->free(s->sa); bk->free(s->sb); bk->free(s->snew); bk->free(s->dw); bk->free(s->dparent);
}

static int draw_ws_alloc(draw_ws *s, const backend_ops *bk, int H0, int n, int L, int Tx, int V, const beam_opts *o)
{
    s->b = bk;
    size_t h = (size_t)H0, hv = h * V;
    s->row_src = malloc(sizeof(int) * h); s->row_draw = malloc(sizeof(int) * h); s->yprev = malloc(sizeof(int) * h);
    s->nrow_src = malloc(sizeof(int) * h); s->nrow_draw = malloc(sizeof(int) * h); s->nyprev = malloc(sizeof(int) * h);
    s->parent = malloc(sizeof(int) * h);
    s->stream = malloc(sizeof(uint64_t) * h); s->tok = malloc(sizeof(int) * h * L);
    s->len = calloc(h, sizeof(int)); s->maxlen = malloc(sizeof(int) * h); s->lp = calloc(h, sizeof(double));
    if (o->attn) s->attn = malloc(sizeof(real) * h * L * Tx), s->hatt = malloc(sizeof(real) * h * Tx);
    s->z = malloc(sizeof(real) * hv); s->w = malloc(sizeof(real) * hv); s->w2 = malloc(sizeof(real) * hv);
    s->mx = malloc(sizeof(real) * h); s->top = malloc(sizeof(int) * h);
    int k = o->topk > 0 && o->topk < V ? o->topk : 1, nucleus = o->topp > 0 && o->topp < 1;
    s->best = malloc(sizeof(topk_item) * k);
    s->tw = malloc(sizeof(double) * k);
    if (nucleus) s->sel = malloc(sizeof(double) * V);
    s->sa = bk->alloc(sizeof(real) * h * n); s->sb = bk->alloc(sizeof(real) * h * n);
    s->snew = bk->alloc(sizeof(real) * h * n); s->dw = bk->alloc(sizeof(real) * hv);
    s->dparent = bk->alloc(sizeof(int) * h);
    return s->row_src && s->row_draw && s->yprev && s->nrow_src && s->nrow_draw && s->nyprev && s->parent && s->stream &&
           s->tok && s->len && s->maxlen && s->lp && (!o->attn || (s->attn && s->hatt)) && s->z && s->w && s->w2 &&
           s->mx && s->top && s->best && s->tw && (!nucleus || s->sel) && s->sa && s->sb && s->snew && s->dw &&
           s->dparent ? 0 : -1;
}

/* The race's entry of column c of weight w (> 0): its key E / w, E = -log U with U uniform in
 * (0, 1) from (key, word id), replaces *best if less. Most columns lose without the log: where
 * best·w <= 2^-55 since U <= 1 - 2^-54 < e^{-best·w}, and where U <= 1 - best·w <= e^{-best·w}. */
static void race(double *best, int *pick, int c, double w, uint64_t key, const int *ids)
{
    double x = *best * w;
    if (x <= 0x1p-55) return;
    uint64_t h = rng_mix64(key ^ rng_mix64((uint64_t)(ids ? ids[c] : c)));
    double u = ((double)(h >> 11) + 0.5) * 0x1p-53;
    if (u <= 1 - x) return;
    double k = -log(u) / w;
    if (k < *best) *best = k, *pick = c;
}

double sample_nucleus_floor(double *w, int n, double p)
{
    double total = 0, above = 0, mx = 0; /* above: the weights known to lie above w[0..n) */
    uint64_t pick = (uint64_t)n;         /* pivots by a fixed hash: linear on any order of weights */
    for (int i = 0; i < n; i++) total += w[i], mx = fmax(mx, w[i]);
    double target = p * total;
    if (!(target > 0) || p >= 1) return p >= 1 ? 0 : mx;
    if (mx >= target) return mx; /* the most probable word alone: common, and spares the select */
    while (n > 0) {
        double piv = w[rng_mix64(++pick) % (uint64_t)n], sg = 0, se = 0;
        int lt = 0, i = 0, gt = n; /* [0, lt) above the pivot, [lt, i) equal to it, [gt, n) below */
        while (i < gt) {
            double x = w[i];
            if (x > piv) w[i++] = w[lt], w[lt++] = x, sg += x;
            else if (x < piv) w[i] = w[--gt], w[gt] = x;
            else se += x, i++;
        }
        if (above + sg >= target) n = lt; /* the floor lies above the pivot */
        else if (above + sg + se >= target || gt == n) return piv;
        else above += sg + se, w += gt, n -= gt; /* below it (gt == n: rounding has used up the mass) */
    }
    return mx; /* not reached: each step keeps the side that holds the floor, never empty */
}

/* The least weight a word of the row may have under o->topp: the nucleus floor of the weights
 * e[0..n) but column skip (e != NULL) or of w[0..n); 0 when every word may be drawn. */
static double floor_of(draw_ws *ws, const real *e, const double *w, int n, int skip, const beam_opts *o)
{
    if (!(o->topp > 0 && o->topp < 1)) return 0;
    int m = 0;
    for (int c = 0; c < n; c++) {
        double x = e ? e[c] : w[c];
        if (x > 0 && c != skip) ws->sel[m++] = x;
    }
    return sample_nucleus_floor(ws->sel, m, o->topp);
}

/* The exponentials of H rows [H, V] of x, in place, by the backend's kernel (the bits the
 * search has always drawn with), in one round trip. */
static void exp_rows(draw_ws *ws, real *x, int H, int V)
{
    const backend_ops *bk = ws->b;
    size_t bytes = sizeof(real) * H * V;
    bk->copy_in(ws->dw, x, bytes);
    bk->vexp(ws->dw, ws->dw, H * V);
    bk->copy_out(x, ws->dw, bytes);
}

/* Whether a row's weights at temperature o->temp are not its plain e^{z - max}: they are drawn
 * from w2 = e^{(z - z_top) / temp} then (the whole row, without top-k). */
static int other_weights(const beam_opts *o, int V, const real *z, real mx, int top)
{
    int sub = o->topk > 0 && o->topk < V, same = top >= 0 && o->temp == 1 && z[top] == mx;
    return !sub && !same;
}

/* A step's weights for its H rows: w = e^{z - max} for every row and, where other_weights, w2 =
 * e^{(z - z_top) / temp}, each set exponentiated in one kernel call. */
static void step_weights(draw_ws *ws, int H, int V, const beam_opts *o)
{
    int skip = o->no_unk ? VOCAB_UNK : -1, any = 0;
    for (int r = 0; r < H; r++) {
        const real *z = ws->z + (size_t)r * V;
        real mx = -INFINITY, *e = ws->w + (size_t)r * V;
        int top = -1;
        for (int c = 0; c < V; c++) {
            if (z[c] > mx) mx = z[c];
            if (c != skip && (top < 0 || z[c] > z[top])) top = c;
        }
        for (int c = 0; c < V; c++) e[c] = z[c] - mx;
        ws->mx[r] = mx;
        ws->top[r] = top;
        if (other_weights(o, V, z, mx, top)) {
            real zt = top >= 0 ? z[top] : 0, *e2 = ws->w2 + (size_t)r * V;
            double inv = 1.0 / o->temp;
            for (int c = 0; c < V; c++) e2[c] = (real)((z[c] - zt) * inv);
            any = 1;
        }
    }
    exp_rows(ws, ws->w, H, V);
    if (any) exp_rows(ws, ws->w2, H, V); /* the rows that do not need it are exponentiated unread */
}

/* One word drawn from row r of the step (scores ws->z, columns 0..V, word ids ids[c] or c) at
 * temperature o->temp among the o->topk best (all when 0), then among the nucleus of o->topp,
 * UNK left out with o->no_unk: the column with the least E_c / w_c, w_c = exp((z_c - z_top) /
 * temp), E_c an Exp(1) number keyed by (key, word id). The least of independent Exp(1) / w is
 * column c with probability w_c / Σ w (the exponential race, a form of the Gumbel-max trick),
 * whatever order the columns are visited in; the most probable goes first, so that the others
 * mostly lose at once. Also *lp, the word's log-probability under the model (logp: z holds them
 * already). EOS when no word has weight. */
static int draw_word(draw_ws *ws, int r, int V, const int *ids, const beam_opts *o, int logp, uint64_t key, double *lp)
{
    const real *z = ws->z + (size_t)r * V, *e = ws->w + (size_t)r * V;
    int skip = o->no_unk ? VOCAB_UNK : -1, sub = o->topk > 0 && o->topk < V, n = 0, top = ws->top[r];
    real mx = ws->mx[r];
    double sum = 0;
    for (int c = 0; c < V; c++) sum += e[c];
    double lse = logp ? 0 : mx + log(sum), inv = 1.0 / o->temp, best = INFINITY;
    int pick = VOCAB_EOS, same = top >= 0 && o->temp == 1 && z[top] == mx; /* e holds the weights already */
    real zt = top >= 0 ? z[top] : 0; /* weights relative to the best drawable word: it has weight 1 */
    if (sub) {
        for (int c = 0; c < V; c++)
            if (c != skip) topk_push(ws->best, &n, o->topk, (topk_item){z[c], c});
        for (int i = 0; i < n; i++) { /* k weights, one at a time */
            int c = (int)ws->best[i].idx;
            ws->tw[i] = same ? e[c] : exp((z[c] - zt) * inv);
        }
        double lo = floor_of(ws, NULL, ws->tw, n, -1, o);
        for (int i = 0; i < n; i++)
            if (ws->tw[i] > 0 && ws->tw[i] >= lo) race(&best, &pick, (int)ws->best[i].idx, ws->tw[i], key, ids);
    } else {
        if (!same) e = ws->w2 + (size_t)r * V;
        double lo = floor_of(ws, e, NULL, V, skip, o);
        if (top >= 0 && e[top] > 0) race(&best, &pick, top, e[top], key, ids);
        for (int c = 0; c < V; c++)
            if (c != skip && c != top && e[c] > 0 && e[c] >= lo) race(&best, &pick, c, e[c], key, ids);
    }
    *lp = (real)(z[pick] - lse); /* rounded as the beam rounds a word's log-probability */
    return pick;
}

/* Draw d's row r of step t: its word, log-probability and attention row; 1 when the draw goes
 * on (no EOS, under its limit). */
static int extend(draw_ws *ws, const infer_ens *e, int r, int d, const beam_opts *o, int V, int L, int Tx)
{
    uint64_t key = rng_mix64(ws->stream[d] ^ (uint64_t)ws->len[d]); /* this draw's step */
    double lp;
    int c = draw_word(ws, r, V, e->vocab, o, e->logp, key, &lp), v = e->vocab ? e->vocab[c] : c;
    if (o->attn) memcpy(ws->attn + ((size_t)d * L + ws->len[d]) * Tx, ws->hatt + (size_t)r * Tx, sizeof(real) * Tx);
    ws->tok[(size_t)d * L + ws->len[d]++] = v;
    ws->lp[d] += lp;
    return v != VOCAB_EOS && ws->len[d] < ws->maxlen[d];
}

typedef struct draw_rank { double score; int draw; } draw_rank;
static int cmp_rank(const void *a, const void *b)
{
    const draw_rank *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->draw - y->draw;
}

/* Sentence b's K draws into out, best score first (equal scores in draw order). -1 without memory. */
static int collect(beam_sent *out, const draw_ws *ws, int b, const beam_opts *o, int L, int Tx, int xlen)
{
    int K = o->nbest;
    draw_rank *rk = malloc(sizeof *rk * K);
    out->hyp = calloc(K, sizeof(beam_hyp));
    if (!rk || !out->hyp) { free(rk); return -1; }
    for (int j = 0; j < K; j++) {
        int d = b * K + j;
        rk[j] = (draw_rank){beam_rank_score(o, ws->lp[d], ws->len[d]), d};
    }
    qsort(rk, K, sizeof *rk, cmp_rank);
    out->n = K;
    int rc = 0;
    for (int i = 0; i < K && !rc; i++) {
        beam_hyp *h = &out->hyp[i];
        int d = rk[i].draw;
        h->len = ws->len[d];
        h->logprob = ws->lp[d];
        h->score = rk[i].score;
        h->tok = malloc(sizeof(int) * h->len);
        if (o->attn) h->attn = malloc(sizeof(real) * (size_t)h->len * xlen);
        if (!h->tok || (o->attn && !h->attn)) { rc = -1; break; }
        memcpy(h->tok, ws->tok + (size_t)d * L, sizeof(int) * h->len);
        for (int t = 0; o->attn && t < h->len; t++)
            memcpy(h->attn + (size_t)t * xlen, ws->attn + ((size_t)d * L + t) * Tx, sizeof(real) * xlen);
        h->finished = h->tok[h->len - 1] == VOCAB_EOS;
    }
    free(rk);
    return rc;
}

/* Every draw's row, its sentence's initial state (gathered on the device), stream and length
 * limit. */
static void draws_init(draw_ws *ws, infer_ens *e, const batch *src, const beam_opts *o, int n)
{
    int S = src->B, K = o->nbest;
    ens_init_states(e, ws->snew, S, src->Tx);
    for (int d = 0; d < S * K; d++) ws->parent[d] = d / K;
    ws->b->copy_in(ws->dparent, ws->parent, sizeof(int) * S * K);
    ws->b->gather_rows(ws->sa, ws->snew, ws->dparent, S * K, n);
    for (int b = 0; b < S; b++) {
        int lim = beam_len_limit(o->max_ratio, o->max_len, src->xlen[b]);
        for (int j = 0; j < K; j++) {
            int d = b * K + j;
            ws->row_src[d] = b;
            ws->row_draw[d] = d;
            ws->yprev[d] = -1;
            ws->maxlen[d] = lim;
            ws->stream[d] = rng_mix64(o->seeds[b] + 0x9E3779B97F4A7C15ull * (uint64_t)(j + 1)); /* its j-th draw */
        }
    }
}

static void swap_rows(draw_ws *ws)
{
    int *ti = ws->row_src; ws->row_src = ws->nrow_src; ws->nrow_src = ti;
    ti = ws->row_draw; ws->row_draw = ws->nrow_draw; ws->nrow_draw = ti;
    ti = ws->yprev; ws->yprev = ws->nyprev; ws->nyprev = ti;
    real *tr = ws->sa; ws->sa = ws->sb; ws->sb = tr;
}

/* The longest length limit of src's sentences. */
static int longest_limit(const batch *src, const beam_opts *o)
{
    int L = 1;
    for (int b = 0; b < src->B; b++) {
        int lim = beam_len_limit(o->max_ratio, o->max_len, src->xlen[b]);
        if (lim > L) L = lim;
    }
    return L;
}

int sample_search_ens(beam_sent *out, infer_ens *e, const batch *src, const beam_opts *o, nmt_err *err)
{
    int S = src->B, K = o->nbest, H = S * K, Tx = src->Tx, rc = NMT_OK;
    int n = ens_state_dim(e, Tx), L = longest_limit(src, o);
    memset(out, 0, sizeof(beam_sent) * S);
    if ((rc = ens_reserve(e, S, Tx, H, L, err)) || (rc = ens_select(e, src, NULL, 0, err))) return rc;
    int V = e->V;
    draw_ws ws = {0};
    if (draw_ws_alloc(&ws, ens_ctx(e)->b, H, n, L, Tx, V, o)) {
        draw_ws_free(&ws);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory in sampling");
    }
    ens_encode(e, src);
    draws_init(&ws, e, src, o, n);
    const backend_ops *bk = ws.b;
    for (int t = 0; t < L && H > 0; t++) {
        ens_step(e, src, H, ws.row_src, ws.yprev, ws.sa, ws.snew);
        bk->copy_out(ws.z, e->scores, sizeof(real) * H * V); /* the step's scores, drawn from on the host */
        if (o->attn) bk->copy_out(ws.hatt, e->att, sizeof(real) * H * Tx);
        step_weights(&ws, H, V, o);
        int nh = 0;
        for (int r = 0; r < H; r++) {
            int d = ws.row_draw[r];
            if (!extend(&ws, e, r, d, o, V, L, Tx)) continue;
            ws.nrow_src[nh] = ws.row_src[r];
            ws.nrow_draw[nh] = d;
            ws.nyprev[nh] = ws.tok[(size_t)d * L + ws.len[d] - 1];
            ws.parent[nh++] = r;
        }
        if (nh) { /* the live draws' states, gathered by the rows they continue */
            bk->copy_in(ws.dparent, ws.parent, sizeof(int) * nh);
            bk->gather_rows(ws.sb, ws.snew, ws.dparent, nh, n);
            ens_reorder(e, ws.dparent, nh);
        }
        H = nh;
        swap_rows(&ws);
        backend_mark(ens_ctx(e), BK_MARK_STEP);
    }
    for (int b = 0; b < S && !rc; b++)
        if (collect(&out[b], &ws, b, o, L, Tx, src->xlen[b])) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory in sampling");
    if (rc)
        for (int b = 0; b < S; b++) beam_sent_free(&out[b]);
    draw_ws_free(&ws);
    return rc;
}
