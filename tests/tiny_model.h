/* tiny_model.h: what the decoding tests share (test_beam.c, test_ensemble.c, test_decode_lowp.c):
 * a small model whose words are "w2", "w3", ..., the log-probability of a target by forced
 * decoding through the training forward pass (a path that shares nothing with the search), the
 * sequences an exhaustive search enumerates, and a bit-for-bit comparison of translations. */
#ifndef NMT_TINY_MODEL_H
#define NMT_TINY_MODEL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "backend/backend.h"
#include "nn/net.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

/* A model of c (seed 1) with the vocabularies "</s>", "<unk>", "w2", ...; the target's words from
 * id rename on are "x<id>" instead when rename >= 2 (a model with other words). */
static inline nmt_model *tiny_model(nmt_config c, int rename)
{
    char **w[2];
    int nv[2] = {c.src_vocab, c.tgt_vocab};
    for (int s = 0; s < 2; s++) {
        w[s] = malloc(sizeof(char *) * nv[s]);
        for (int i = 0; i < nv[s]; i++) {
            w[s][i] = malloc(16);
            snprintf(w[s][i], 16, i == 0 ? "</s>" : i == 1 ? "<unk>" : s && rename >= 2 && i >= rename ? "x%d" : "w%d", i);
        }
    }
    nmt_model *m = NULL;
    NMT_ASSERT(nmt_model_create(&m, &c, (const char *const *)w[0], (const char *const *)w[1], 1, NULL) == 0);
    for (int s = 0; s < 2; s++) { for (int i = 0; i < nv[s]; i++) free(w[s][i]); free(w[s]); }
    return m;
}

/* tiny_model(c, 0) with every parameter drawn from N(0, sd^2) by r. */
static inline nmt_model *tiny_random_model(nmt_config c, rng *r, double sd)
{
    nmt_model *m = tiny_model(c, 0);
    for (size_t i = 0; i < m->pt.total; i++) m->P[i] = (real)(sd * rng_normal(r));
    return m;
}

/* The batch of the S sources src[s][0..len[s]) (b->x and b->xlen to free). */
static inline void tiny_batch(batch *b, int *const *src, const int *len, int S)
{
    b->B = S; b->Tx = 0; b->Ty = 0; b->y = NULL; b->ylen = NULL;
    for (int s = 0; s < S; s++) if (len[s] > b->Tx) b->Tx = len[s];
    b->x = calloc((size_t)b->Tx * S, sizeof(int));
    b->xlen = malloc(sizeof(int) * S);
    for (int s = 0; s < S; s++) {
        b->xlen[s] = len[s];
        for (int t = 0; t < len[s]; t++) b->x[t * S + s] = src[s][t];
    }
}

/* S random sources of lens[s] tokens into src[s] (to free): words 2 .. 2 + words - 1, then EOS. */
static inline void tiny_sources(rng *r, int **src, const int *lens, int S, int words)
{
    for (int s = 0; s < S; s++) {
        src[s] = malloc(sizeof(int) * lens[s]);
        for (int t = 0; t < lens[s]; t++) src[s][t] = t == lens[s] - 1 ? 0 : 2 + (int)rng_below(r, (uint64_t)words);
    }
}

/* log p of tgt[0..tl) given src[0..sl) by forced decoding through net_forward */
static inline double forced_logp(const nmt_model *m, const int *src, int sl, const int *tgt, int tl)
{
    batch b = {.B = 1, .Tx = sl, .Ty = tl, .x = (int *)src, .y = (int *)tgt, .xlen = &sl, .ylen = &tl};
    net_ws ws = {0};
    /* the products as nmt score makes them (each row alone), so that the kernel set's rounding
     * of a batch of Ty rows does not stand between this and the search */
    bk_ctx x = m->cx;
    x.rows = 1;
    NMT_ASSERT(net_ws_reserve(&x, &ws, &m->cfg, 1, sl, tl, NULL) == 0);
    real lp[64];
    net_forward(&x, &ws, &m->cfg, &m->p, &b, lp);
    double s = 0;
    for (int i = 0; i < tl; i++) s += lp[i];
    net_ws_free(&ws);
    return s;
}

/* The space a beam searches with length limit L over V words: every sequence that ends in EOS
 * (id 0), L words at most, and every one of L words without EOS. Start with *len = 0; each call
 * puts the next one into seq[0..*len) and returns 1, or returns 0 after the last. */
static inline int next_sequence(int *seq, int *len, long *code, int V, int L)
{
    for (;;) {
        long count = 1;
        for (int i = 0; i < *len; i++) count *= V;
        if (*len == 0 || ++*code >= count) {
            if (++*len > L) return 0;
            *code = 0;
        }
        long x = *code;
        int eos_inside = 0;
        for (int i = 0; i < *len; i++) { seq[i] = (int)(x % V); x /= V; }
        for (int i = 0; i < *len - 1; i++) eos_inside |= seq[i] == 0;
        if (!eos_inside && (seq[*len - 1] == 0 || *len == L)) return 1;
    }
}

/* a and b the same translations bit for bit: words, log-probabilities, scores, attention */
static inline int same_translations(const nmt_translation *a, const nmt_translation *b, int n)
{
    for (int i = 0; i < n; i++) {
        if (a[i].n_hyps != b[i].n_hyps) return 0;
        for (int h = 0; h < a[i].n_hyps; h++) {
            const nmt_hypothesis *x = &a[i].hyps[h], *y = &b[i].hyps[h];
            if (x->n_words != y->n_words || x->finished != y->finished || x->logprob != y->logprob ||
                x->score != y->score || memcmp(x->ids, y->ids, sizeof(int) * x->n_words) || !x->attention != !y->attention)
                return 0;
            if (x->attention && memcmp(x->attention, y->attention, sizeof(float) * x->attn_rows * x->attn_cols)) return 0;
        }
    }
    return 1;
}

#endif
