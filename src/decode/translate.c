/* translate.c: the public translation API: text in, beam search (beam.c) by one model or an
 * ensemble (ensemble.c), words, scores and attention out, each sentence with its hints (a prefix,
 * phrases that must appear) if it has any; and forced-decoding scores through the training
 * forward pass. */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "decode/beam.h"
#include "base/err.h"
#include "base/rng.h"
#include "decode/lexicon.h"
#include "decode/sample.h"
#include "nn/net.h"
#include "data/vocab.h"
#include "data/pipeline.h"
#include "text/words.h"

struct nmt_decoder {
    const nmt_model *m;  /* the first model: the vocabularies every model shares */
    nmt_translate_opts o;
    infer_ens e;         /* the models, their weights and decoding workspaces */
    net_ws *ws;          /* [e.n] forced decoding */
};

nmt_translate_opts nmt_translate_default_opts(void)
{
    nmt_translate_opts o = {12, 1, 3.0, 0, 1, 0, 64, 0, NULL, NMT_PREC_FP32, NULL, 1.0, 0, 0, 1.0, 1, 1.0, 0, NULL, NULL, 1};
    return o;
}

/* enum nmt_precision as the backend's enum bk_prec */
static int bk_prec_of(int p) { return p == NMT_PREC_INT8 ? BK_PREC_INT8 : p == NMT_PREC_BF16 ? BK_PREC_BF16 : BK_PREC_F32; }

int nmt_precision_supported(int p)
{
    if (p == NMT_PREC_FP32) return 1;
    /* the device new models get; NULL: its backend has no other precision */
    const backend_lowp_ops *lp = bk_ctx_default()->b->lowp;
    return p > NMT_PREC_FP32 && p <= NMT_PREC_BF16 && lp && lp->supported(bk_prec_of(p));
}

void nmt_set_threads(int n) { bk_ctx_default()->b->set_threads(n > NMT_MAX_THREADS ? NMT_MAX_THREADS : n); }

/* The options a decoder can run with on the models of e: 0 or NMT_ERR_ARG with a message. */
static int check_opts(const infer_ens *e, const nmt_translate_opts *o, nmt_err *err)
{
    if (o->beam < 1 || o->beam > 1000) return nmt_fail(err, NMT_ERR_ARG, "beam size %d out of range [1, 1000]", o->beam);
    if (o->sample && (o->n_best < 1 || o->n_best > 1000)) return nmt_fail(err, NMT_ERR_ARG, "samples per sentence (n-best) %d out of range [1, 1000]", o->n_best);
    if (!o->sample && (o->n_best < 1 || o->n_best > o->beam)) return nmt_fail(err, NMT_ERR_ARG, "n-best %d out of range [1, beam %d]", o->n_best, o->beam);
    if (o->sample && o->sample_topk < 0) return nmt_fail(err, NMT_ERR_ARG, "sampling among the top %d words: not a count", o->sample_topk);
    if (o->sample && !(o->temperature >= 0.001 && o->temperature <= 100)) /* 1/T finite, exp(z/T) sane */
        return nmt_fail(err, NMT_ERR_ARG, "temperature %g out of range [0.001, 100]", o->temperature);
    if (o->sample && !(o->sample_topp > 0 && o->sample_topp <= 1))
        return nmt_fail(err, NMT_ERR_ARG, "nucleus mass (top-p) %g out of range (0, 1]", o->sample_topp);
    if (!(o->max_ratio > 0 && o->max_ratio <= 100)) return nmt_fail(err, NMT_ERR_ARG, "maximum length ratio %g out of range (0, 100]", o->max_ratio);
    if (o->max_len < 0 || o->max_len > 100000) return nmt_fail(err, NMT_ERR_ARG, "maximum length %d out of range [0, 100000]", o->max_len);
    if (o->batch < 1 || o->batch > 10000) return nmt_fail(err, NMT_ERR_ARG, "batch %d out of range [1, 10000]", o->batch);
    if (!(o->length_alpha >= 0 && o->length_alpha <= 10))
        return nmt_fail(err, NMT_ERR_ARG, "length penalty %g out of range [0, 10]", o->length_alpha);
    if (o->precision < NMT_PREC_FP32 || o->precision > NMT_PREC_BF16)
        return nmt_fail(err, NMT_ERR_ARG, "precision %d is not one of enum nmt_precision", o->precision);
    if (o->unk_replace && !e->n_att)
        return nmt_fail(err, NMT_ERR_ARG, "UNK replacement needs the attention, which %s", e->n == 1 ?
                        "an RNNencdec model does not have" : "no model of the ensemble (all RNNencdec) has");
    return NMT_OK;
}

int nmt_decoder_init_ensemble(nmt_decoder **out, const nmt_model *const *models, const double *weights, int n,
                              const nmt_translate_opts *o, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_decoder_init_ensemble", out, models, o);
    for (int k = 0; !bad && k < n; k++)
        if (!models[k]) bad = nmt_fail(err, NMT_ERR_ARG, "nmt_decoder_init_ensemble: models[%d] is NULL", k);
    if (bad) return bad;
    *out = NULL;
    int rc = n < 1 || !models ? nmt_fail(err, NMT_ERR_ARG, "an ensemble needs at least one model") : NMT_OK;
    for (int k = 1; k < n && !rc; k++) {
        char name[32];
        snprintf(name, sizeof name, "model %d", k + 1);
        rc = nmt_model_check_vocab(models[0], "model 1", models[k], name, err);
    }
    nmt_decoder *d = rc ? NULL : calloc(1, sizeof *d);
    if (!rc && !d) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if (!rc) rc = ens_init(&d->e, models, weights, n, err);
    if (!rc) rc = check_opts(&d->e, o, err);
    if (!rc && !(d->ws = calloc(n, sizeof *d->ws))) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if (!rc) rc = ens_output(&d->e, bk_prec_of(o->precision), o->shortlist, err);
    if (!rc) ens_rows(&d->e, o->batch_invariant);
    if (rc) {
        nmt_decoder_free(d);
        return rc;
    }
    if (o->attention && !d->e.n_att) /* not an error: the translations are still there */
        nmt_log('W', "%s: alignments will be empty", n == 1 ? "an RNNencdec model has no attention" :
                "no model of the ensemble has attention");
    d->m = models[0];
    d->o = *o;
    *out = d;
    return NMT_OK;
}

int nmt_decoder_init(nmt_decoder **out, const nmt_model *m, const nmt_translate_opts *o, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_decoder_init", out, m);
    if (bad) return bad;
    return nmt_decoder_init_ensemble(out, &m, NULL, 1, o, err);
}

int nmt_decoder_set_opts(nmt_decoder *d, const nmt_translate_opts *o, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_decoder_set_opts", d, o);
    if (bad) return bad;
    int rc = check_opts(&d->e, o, err);
    /* the output layers are made again only when their precision or shortlist changes */
    if (!rc && (o->precision != d->o.precision || o->shortlist != d->o.shortlist) &&
        (rc = ens_output(&d->e, bk_prec_of(o->precision), o->shortlist, err))) {
        ens_output(&d->e, bk_prec_of(d->o.precision), d->o.shortlist, NULL); /* as it was */
        return rc;
    }
    if (!rc) ens_rows(&d->e, o->batch_invariant);
    if (!rc) d->o = *o; /* the workspace depends on sizes only: it is kept */
    return rc;
}

void nmt_decoder_free(nmt_decoder *d)
{
    if (!d) return;
    for (int k = 0; d->ws && k < d->e.n; k++) net_ws_free(&d->ws[k]);
    free(d->ws);
    ens_free(&d->e);
    free(d);
}

void nmt_translation_free(nmt_translation *t, int n)
{
    for (int i = 0; t && i < n; i++) {
        for (int h = 0; h < t[i].n_hyps; h++) {
            free(t[i].hyps[h].words);
            free(t[i].hyps[h].ids);
            free(t[i].hyps[h].attention);
            free(t[i].hyps[h].pool);
        }
        free(t[i].hyps);
        memset(&t[i], 0, sizeof t[i]);
    }
}

int nmt_hard_link(const nmt_hypothesis *h, int i)
{
    if (!h) return -1;
    int cols = h->attn_cols;
    if (!h->attention || cols < 2 || i < 0 || i >= h->n_words) return -1;
    const float *row = h->attention + (size_t)i * cols;
    int best = 0;
    for (int j = 1; j < cols - 1; j++) if (row[j] > row[best]) best = j;
    return best;
}

/* The j-th word of s (0-based) and its length; NULL past the end. */
static const char *nth_word(const char *s, int j, size_t *len)
{
    const char *w;
    while ((w = text_next_word(&s, len)) && j-- > 0) {}
    return w;
}

/* The source's token j (0-based) for UNK replacement: from x->tokens, or the vocabulary's word */
static const char *source_token(const nmt_decoder *d, const nmt_source *x, int j, size_t *len)
{
    if (x->tokens) return nth_word(x->tokens, j, len);
    const char *w = vocab_word(d->m->src, x->ids[j]);
    *len = strlen(w);
    return w;
}

/* UNK replacement (MODEL.md section 6): each output UNK becomes the lexicon's translation of
 * the source word with the highest attention at that position (the source EOS never chosen),
 * or that source word itself. Replacements are copied into the hypothesis's own pool. */
static int replace_unks(const nmt_decoder *d, nmt_hypothesis *y, const beam_hyp *bh, int xlen, const nmt_source *src,
                        const nmt_lexicon *lx)
{
    size_t need = 0;
    int nw = y->n_words;
    const char **rep = malloc(sizeof(char *) * (nw ? nw : 1));
    size_t *rlen = malloc(sizeof(size_t) * (nw ? nw : 1));
    if (!rep || !rlen) { free(rep); free(rlen); return -1; }
    for (int k = 0; k < nw; k++) {
        rep[k] = NULL;
        if (y->ids[k] != VOCAB_UNK || xlen < 2) continue;
        const real *row = bh->attn + (size_t)k * xlen;
        int best = 0;
        for (int j = 1; j < xlen - 1; j++) if (row[j] > row[best]) best = j;
        size_t sl;
        const char *sw = source_token(d, src, best, &sl);
        if (!sw) continue;
        const char *tr = nmt_lexicon_lookup(lx, sw, sl);
        rep[k] = tr ? tr : sw;
        rlen[k] = tr ? strlen(tr) : sl;
        need += rlen[k] + 1;
    }
    char *p = need ? (y->pool = malloc(need)) : NULL;
    if (need && !p) { free(rep); free(rlen); return -1; }
    for (int k = 0; k < nw; k++) {
        if (!rep[k]) continue;
        memcpy(p, rep[k], rlen[k]);
        p[rlen[k]] = 0;
        y->words[k] = p;
        p += rlen[k] + 1;
        y->n_replaced++;
    }
    free(rep);
    free(rlen);
    return 0;
}

/* A sentence's sampling seed: the run's seed and its source ids (EOS included) hashed together
 * (FNV-1a, then splitmix64's finalizer), so that its draws do not depend on its batch. */
static uint64_t sentence_seed(uint64_t seed, const int *ids, int n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (int i = 0; i < n; i++) {
        uint32_t x = (uint32_t)ids[i];
        for (int k = 0; k < 4; k++) h = (h ^ ((x >> (8 * k)) & 0xff)) * 0x100000001b3ull;
    }
    return rng_mix64(h);
}

/* Scores that are not numbers (weights so large that the products overflow) must not pass as a
 * translation: a search whose every candidate is NaN ends with no hypothesis, or with NaN scores.
 * NMT_ERR_NUMERIC naming sentence i (0-based) of n, or 0. */
static int check_finite(const beam_sent *r, int i, int n, nmt_err *err)
{
    int ok = r->n > 0;
    for (int h = 0; h < r->n && ok; h++) ok = isfinite(r->hyp[h].logprob) && isfinite(r->hyp[h].score);
    if (ok) return 0;
    return nmt_fail(err, NMT_ERR_NUMERIC, "sentence %d (of %d): the model's scores are not finite (NaN or Inf): its "
                    "weights overflow the products", i + 1, n);
}

/* ------------------------------------------------------------------ hints */

_Static_assert(NMT_MAX_PHRASES <= CONS_MAX, "a hypothesis keeps its completed phrases in one uint64_t");

/* 1 when h asks for something: a prefix token or a phrase */
static int hint_asks(const nmt_hint_ids *h) { return h && (h->n_prefix > 0 || h->n_phrases > 0); }

/* One token of sentence i's hints: a word of the target vocabulary other than </s> and <unk>. */
static int hint_id_ok(const nmt_decoder *d, int id, int i, const char *what, nmt_err *err)
{
    if (id >= 2 && id < d->m->cfg.tgt_vocab) return NMT_OK;
    if (id == VOCAB_EOS || id == VOCAB_UNK)
        return nmt_fail(err, NMT_ERR_ARG, "sentence %d: %s: '%s' cannot be asked for", i + 1, what, vocab_word(d->m->tgt, id));
    return nmt_fail(err, NMT_ERR_ARG, "sentence %d: %s: token id %d is outside the target vocabulary (%d)", i + 1, what, id,
                    d->m->cfg.tgt_vocab);
}

/* Sentence i's hints h checked for a source of len tokens (EOS included): their tokens, the
 * phrases' count and offsets, and that they fit the length limit. 0 or NMT_ERR_ARG. */
static int hint_check(const nmt_decoder *d, const nmt_hint_ids *h, int i, int len, nmt_err *err)
{
    if (h->n_phrases < 0 || h->n_phrases > NMT_MAX_PHRASES)
        return nmt_fail(err, NMT_ERR_ARG, "sentence %d: %d constraints, out of range [0, %d]", i + 1, h->n_phrases,
                        NMT_MAX_PHRASES);
    if ((h->n_prefix > 0 && !h->prefix) || h->n_prefix < 0 || (h->n_phrases && (!h->offsets || !h->tokens)))
        return nmt_fail(err, NMT_ERR_ARG, "sentence %d: its hints have a NULL array or a negative count", i + 1);
    int rc = NMT_OK;
    for (int k = 0; k < h->n_prefix && !rc; k++) rc = hint_id_ok(d, h->prefix[k], i, "the prefix", err);
    char what[48];
    if (h->n_phrases && h->offsets[0] != 0) return nmt_fail(err, NMT_ERR_ARG, "sentence %d: constraint 1 does not start at 0", i + 1);
    for (int c = 0; c < h->n_phrases && !rc; c++) {
        snprintf(what, sizeof what, "constraint %d", c + 1);
        if (h->offsets[c + 1] <= h->offsets[c]) return nmt_fail(err, NMT_ERR_ARG, "sentence %d: %s is empty", i + 1, what);
        for (int k = h->offsets[c]; k < h->offsets[c + 1] && !rc; k++) rc = hint_id_ok(d, h->tokens[k], i, what, err);
    }
    if (rc) return rc;
    int total = h->n_prefix + (h->n_phrases ? h->offsets[h->n_phrases] : 0);
    int maxlen = beam_len_limit(d->o.max_ratio, d->o.max_len, len);
    if (total + 1 > maxlen)
        return nmt_fail(err, NMT_ERR_ARG, "sentence %d: its prefix and constraints take %d tokens, and with the EOS pass the "
                        "length limit of %d tokens (the maximum length ratio times the source's tokens, EOS included, or the "
                        "maximum length when smaller)",
                        i + 1, total, maxlen);
    return NMT_OK;
}

/* longest first: each batch's rows then stay sorted by length, and the encoder steps on the
 * sentences still running alone */
static int by_len(const void *a, const void *b)
{
    const int *x = a, *y = b; /* pairs (length, index) */
    return x[0] != y[0] ? y[0] - x[0] : x[1] - y[1];
}

/* Sentence i's source ids into ids (EOS appended, at most NMT_MAX_SRC_WORDS kept) and what its
 * translation reports of them; NMT_ERR_ARG for an id outside the vocabulary. Its length with EOS. */
static int source_ids(const nmt_decoder *d, const nmt_source *x, int i, int *ids, nmt_translation *t, nmt_err *err)
{
    int kept = x->n_ids < NMT_MAX_SRC_WORDS ? x->n_ids : NMT_MAX_SRC_WORDS, V = d->m->cfg.src_vocab;
    if (x->n_ids < 0 || (x->n_ids > 0 && !x->ids))
        return nmt_fail(err, NMT_ERR_ARG, "sentence %d: a negative token count or NULL ids", i + 1), -1;
    t->n_src = kept;
    t->truncated = x->n_ids > kept;
    for (int k = 0; k < kept; k++) {
        if (x->ids[k] < 0 || x->ids[k] >= V)
            return nmt_fail(err, NMT_ERR_ARG, "sentence %d: source id %d is outside the vocabulary (%d)", i + 1, x->ids[k], V), -1;
        ids[k] = x->ids[k];
        t->n_unk += ids[k] == VOCAB_UNK;
    }
    ids[kept] = VOCAB_EOS;
    return kept + 1;
}

/* One search result as the API's hypothesis, its attention over bl source tokens. */
static int hypothesis_of(const nmt_decoder *d, const beam_hyp *bh, const nmt_source *x, int bl, nmt_hypothesis *y)
{
    const nmt_translate_opts *o = &d->o;
    y->finished = bh->finished;
    y->n_words = bh->len - bh->finished;
    y->logprob = bh->logprob;
    y->score = bh->score;
    y->words = malloc(sizeof(char *) * (y->n_words ? y->n_words : 1));
    y->ids = malloc(sizeof(int) * (y->n_words ? y->n_words : 1));
    if (!y->words || !y->ids) return -1;
    for (int k = 0; k < y->n_words; k++) {
        y->ids[k] = bh->tok[k];
        y->words[k] = vocab_word(d->m->tgt, bh->tok[k]);
    }
    if (o->unk_replace && bh->attn && replace_unks(d, y, bh, bl, x, o->lexicon)) return -1;
    if (bh->attn && o->attention) {
        y->attn_rows = bh->len;
        y->attn_cols = bl;
        y->attention = malloc(sizeof(float) * (size_t)(bh->len ? bh->len : 1) * bl);
        if (!y->attention) return -1;
        for (size_t k = 0; k < (size_t)bh->len * bl; k++) y->attention[k] = (float)bh->attn[k];
    }
    return 0;
}

/* The results of one batch's sentences which[0..S) into out. */
static int batch_results(const nmt_decoder *d, beam_sent *res, const int *which, const int *bl, int S,
                         const nmt_source *src, int n, nmt_translation *out, nmt_err *err)
{
    int rc = NMT_OK;
    for (int s = 0; s < S && !rc; s++) rc = check_finite(&res[s], which[s], n, err);
    for (int s = 0; s < S && !rc; s++) {
        nmt_translation *t = &out[which[s]];
        t->hyps = calloc(res[s].n, sizeof(nmt_hypothesis));
        if (!t->hyps) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        t->n_hyps = res[s].n;
        for (int h = 0; h < res[s].n && !rc; h++)
            if (hypothesis_of(d, &res[s].hyp[h], &src[which[s]], bl[s], &t->hyps[h]))
                rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    return rc;
}

/* The search's work: sources and hints as ids (hints NULL: none), fn naming the entry called */
static int translate(nmt_decoder *d, const nmt_source *src, const nmt_hint_ids *hints, int n, nmt_translation *out,
                     const char *fn, nmt_err *err)
{
    const nmt_model *m = d->m;
    const nmt_translate_opts *o = &d->o;
    if (n < 0) return nmt_fail(err, NMT_ERR_ARG, "%s: negative sentence count %d", fn, n);
    memset(out, 0, sizeof(nmt_translation) * n);
    if (n == 0) return NMT_OK;
    if (hints && o->sample) return nmt_fail(err, NMT_ERR_ARG, "prefixes and constraints go with beam search, not with sampling");
    int cap = NMT_MAX_SRC_WORDS + 1, B = o->batch, rc = NMT_OK;
    /* the step's logits, hypotheses x vocabulary, are the largest buffer (one per model, and an
     * ensemble's combined scores): keep them within a budget */
    size_t rows_v = (size_t)d->e.n + (d->e.n > 1), budget = (size_t)64 << 20;
    size_t per_sent = rows_v * (o->sample ? o->n_best : o->beam) * m->cfg.tgt_vocab * sizeof(real);
    if ((size_t)B * per_sent > budget) B = budget / per_sent > 0 ? (int)(budget / per_sent) : 1;
    int *ids = malloc(sizeof(int) * (size_t)n * cap), *lens = malloc(sizeof(int) * n), *order = malloc(sizeof(int) * 2 * n);
    int *bx = malloc(sizeof(int) * (size_t)B * cap), *bl = malloc(sizeof(int) * B), *which = malloc(sizeof(int) * B);
    beam_sent *res = calloc(B, sizeof(beam_sent));
    uint64_t *seeds = malloc(sizeof(uint64_t) * B);
    const beam_hint **bhint = calloc(B, sizeof *bhint); /* a batch's hints */
    beam_hint *hid = hints ? calloc(n, sizeof *hid) : NULL;
    if (!ids || !lens || !order || !bx || !bl || !which || !res || !seeds || !bhint || (hints && !hid)) { rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); goto done; }
    int nw = 0;
    for (int i = 0; i < n && !rc; i++) {
        if ((lens[i] = source_ids(d, &src[i], i, ids + (size_t)i * cap, &out[i], err)) < 0) rc = err->code;
        else if (lens[i] > 1) { order[2 * nw] = lens[i]; order[2 * nw + 1] = i; nw++; }
    }
    for (int i = 0; hints && i < n && !rc; i++) /* an empty sentence is never searched: its hints are not read */
        if (lens[i] > 1 && hint_asks(&hints[i]) && !(rc = hint_check(d, &hints[i], i, lens[i], err)))
            hid[i] = (beam_hint){hints[i].n_prefix, hints[i].prefix, hints[i].n_phrases, hints[i].offsets, hints[i].tokens};
    if (rc) goto done;
    /* similar lengths together: less padding; the results do not depend on the grouping */
    qsort(order, nw, 2 * sizeof(int), by_len);
    beam_opts bo = {o->beam, o->normalize, o->max_ratio, o->no_unk, o->n_best,
                    (o->attention || o->unk_replace) && d->e.n_att > 0, o->length_alpha, o->sample_topk, o->temperature, seeds,
                    o->sample_topp, hid ? bhint : NULL, o->max_len};
    for (int s0 = 0; s0 < nw && !rc; s0 += B) {
        if (o->stop && o->stop(o->stop_user)) { rc = nmt_fail(err, NMT_ERR_INTERRUPTED, "%s: interrupted", fn); break; }
        int S = nw - s0 < B ? nw - s0 : B, Tx = 0;
        for (int s = 0; s < S; s++) {
            which[s] = order[2 * (s0 + s) + 1];
            bl[s] = lens[which[s]];
            bhint[s] = hid && hint_asks(&hints[which[s]]) ? &hid[which[s]] : NULL;
            if (bl[s] > Tx) Tx = bl[s];
        }
        memset(bx, 0, sizeof(int) * (size_t)S * Tx);
        for (int s = 0; s < S; s++)
            for (int t = 0; t < bl[s]; t++) bx[t * S + s] = ids[(size_t)which[s] * cap + t];
        batch b = {.B = S, .Tx = Tx, .x = bx, .xlen = bl};
        for (int s = 0; s < S && o->sample; s++) seeds[s] = sentence_seed(o->seed, ids + (size_t)which[s] * cap, bl[s]);
        if ((rc = (o->sample ? sample_search_ens : beam_search_ens)(res, &d->e, &b, &bo, err))) break;
        rc = batch_results(d, res, which, bl, S, src, n, out, err);
        for (int s = 0; s < S; s++) beam_sent_free(&res[s]);
    }
done:
    if (rc) nmt_translation_free(out, n);
    free(ids); free(lens); free(order); free(bx); free(bl); free(which); free(res); free(seeds); free(bhint); free(hid);
    return rc;
}

int nmt_translate_ids(nmt_decoder *d, const nmt_source *src, const nmt_hint_ids *hints, int n, nmt_translation *out,
                      nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_translate_ids", d, src, out);
    return bad ? bad : translate(d, src, hints, n, out, "nmt_translate_ids", err);
}

/* ------------------------------------------------------------------ the string entry points */

/* The ids of the tokens of s into ids (NULL: only counted), each a token of the target vocabulary
 * other than </s> and <unk> (else NMT_ERR_ARG naming sentence i and what): their count. */
static int hint_tokens(const vocab *v, const char *s, int *ids, int i, const char *what, nmt_err *err)
{
    size_t len;
    const char *w;
    int k = 0;
    while ((w = text_next_word(&s, &len))) {
        int id = vocab_find(v, w, len);
        if (id < 0)
            return nmt_fail(err, NMT_ERR_ARG, "sentence %d: %s: '%.*s' is not in the model's target vocabulary", i + 1,
                            what, (int)len, w);
        if (id == VOCAB_EOS || id == VOCAB_UNK)
            return nmt_fail(err, NMT_ERR_ARG, "sentence %d: %s: '%.*s' cannot be asked for", i + 1, what, (int)len, w);
        if (ids) ids[k] = id;
        k++;
    }
    return k;
}

/* Counts (ids NULL) or writes h's prefix, then its phrases' offsets and tokens, into ids: the
 * tokens in all, or NMT_ERR_ARG for a phrase that is NULL, empty or has unknown tokens. */
static int hint_fill(const vocab *v, const nmt_hint *h, int i, int *ids, nmt_hint_ids *hi, nmt_err *err)
{
    char what[48];
    int np = hint_tokens(v, h->prefix ? h->prefix : "", ids, i, "the prefix", err), total = np;
    if (np < 0) return np;
    int *off = ids ? ids + np : NULL, *tok = ids ? off + h->n_phrases + 1 : NULL;
    for (int c = 0; c < h->n_phrases; c++) {
        snprintf(what, sizeof what, "constraint %d", c + 1);
        if (!h->phrases[c]) return nmt_fail(err, NMT_ERR_ARG, "sentence %d: %s is NULL", i + 1, what);
        if (off) off[c] = total - np;
        int k = hint_tokens(v, h->phrases[c], tok ? tok + (total - np) : NULL, i, what, err);
        if (k < 0) return k;
        if (k == 0) return nmt_fail(err, NMT_ERR_ARG, "sentence %d: %s is empty", i + 1, what);
        total += k;
    }
    if (off) {
        off[h->n_phrases] = total - np;
        *hi = (nmt_hint_ids){ids, np, tok, off, h->n_phrases};
    }
    return total;
}

/* Sentence i's hints h as ids into *out, their arrays in *mem (to free): 0 or NMT_ERR_ARG. */
static int hint_encode(const vocab *v, const nmt_hint *h, int i, nmt_hint_ids *out, int **mem, nmt_err *err)
{
    if (h->n_phrases < 0 || h->n_phrases > NMT_MAX_PHRASES)
        return nmt_fail(err, NMT_ERR_ARG, "sentence %d: %d constraints, out of range [0, %d]", i + 1, h->n_phrases,
                        NMT_MAX_PHRASES);
    if (h->n_phrases && !h->phrases) return nmt_fail(err, NMT_ERR_ARG, "sentence %d: phrases is NULL", i + 1);
    int total = hint_fill(v, h, i, NULL, NULL, err);
    if (total < 0) return total;
    if (!(*mem = malloc(sizeof(int) * ((size_t)total + h->n_phrases + 1)))) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    hint_fill(v, h, i, *mem, out, err);
    return NMT_OK;
}

/* Each sentence's words looked up in the source vocabulary, as nmt_translate_ids reads them;
 * with hints, each (of a sentence with words) looked up in the target's and checked, in the
 * order the library always has: sentence by sentence. */
static int strings_to_ids(nmt_decoder *d, const char *const *sentences, const nmt_hint *hints, int n, nmt_source *src,
                          int *ids, nmt_hint_ids *hid, int **mem, nmt_err *err)
{
    int cap = NMT_MAX_SRC_WORDS, rc = NMT_OK;
    for (int i = 0; i < n; i++) {
        const char *s = sentences[i] ? sentences[i] : "";
        long unk = 0;
        int kept, found = text_pipe_ids(d->m->src, s, ids + (size_t)i * cap, cap, &kept, &unk);
        /* past the cap the words are counted, not kept: the count makes the translation say so */
        src[i] = (nmt_source){ids + (size_t)i * cap, found > kept ? kept + 1 : kept, s};
    }
    for (int i = 0; hints && i < n && !rc; i++) {
        int kept = src[i].n_ids < cap ? src[i].n_ids : cap;
        if (!kept || !((hints[i].prefix && hints[i].prefix[0]) || hints[i].n_phrases)) continue;
        if (!(rc = hint_encode(d->m->tgt, &hints[i], i, &hid[i], &mem[i], err)))
            rc = hint_check(d, &hid[i], i, kept + 1, err);
    }
    return rc;
}

/* nmt_translate and nmt_translate_hints (hints NULL: none), fn naming the one called */
static int translate_strings(nmt_decoder *d, const char *const *sentences, const nmt_hint *hints, int n,
                             nmt_translation *out, const char *fn, nmt_err *err)
{
    int bad = NMT_ARGS(err, fn, d, sentences, out);
    if (bad || (bad = nmt_strs_null(err, fn, "sentences", sentences, n))) return bad;
    if (n < 0) return nmt_fail(err, NMT_ERR_ARG, "%s: negative sentence count %d", fn, n);
    if (n == 0) return NMT_OK;
    if (hints && d->o.sample) {
        memset(out, 0, sizeof(nmt_translation) * n);
        return nmt_fail(err, NMT_ERR_ARG, "prefixes and constraints go with beam search, not with sampling");
    }
    nmt_source *src = malloc(sizeof *src * n);
    int *ids = malloc(sizeof(int) * (size_t)n * NMT_MAX_SRC_WORDS), **mem = hints ? calloc(n, sizeof *mem) : NULL;
    nmt_hint_ids *hid = hints ? calloc(n, sizeof *hid) : NULL;
    int rc = src && ids && (!hints || (mem && hid)) ? NMT_OK : nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if (!rc) rc = strings_to_ids(d, sentences, hints, n, src, ids, hid, mem, err);
    if (!rc) rc = translate(d, src, hid, n, out, fn, err);
    else memset(out, 0, sizeof(nmt_translation) * n);
    for (int i = 0; mem && i < n; i++) free(mem[i]);
    free(mem); free(hid); free(src); free(ids);
    return rc;
}

int nmt_translate(nmt_decoder *d, const char *const *sentences, int n, nmt_translation *out, nmt_err *err)
{
    return translate_strings(d, sentences, NULL, n, out, "nmt_translate", err);
}

int nmt_translate_hints(nmt_decoder *d, const char *const *sentences, const nmt_hint *hints, int n,
                        nmt_translation *out, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_translate_hints", hints);
    return bad ? bad : translate_strings(d, sentences, hints, n, out, "nmt_translate_hints", err);
}

/* Pair s of a batch of S (alpha [Ty, S, Tx]) adds one model's attention to a's mean over n_att
 * models, allocated at the first: one model's rows are copied as they are. -1 without memory. */
static int add_attention(nmt_alignment *a, const real *alpha, int S, int s, int Tx, int xl, int yl, int n_att)
{
    int first = !a->attention;
    if (first && !(a->attention = malloc(sizeof(float) * (size_t)yl * xl))) return -1;
    float scale = 1.0f / (float)n_att;
    for (int i = 0; i < yl; i++)
        for (int j = 0; j < xl; j++) {
            float *out = &a->attention[(size_t)i * xl + j], v = scale * (float)alpha[((size_t)i * S + s) * Tx + j];
            *out = first ? v : *out + v;
        }
    return 0;
}

/* Pair s of a batch of S (lp [Ty, S]) adds model k's log-probabilities, weighted by wk, to a's
 * per-token ones (model 0 allocates them). -1 without memory. */
static int add_token_logprob(nmt_alignment *a, const real *lp, int S, int s, int yl, double wk, int k)
{
    if (!k && !(a->token_logprob = malloc(sizeof(double) * (size_t)yl))) return -1;
    for (int t = 0; t < yl; t++) a->token_logprob[t] = (k ? a->token_logprob[t] : 0) + wk * lp[t * S + s];
    return 0;
}

/* Model k of d force-decodes batch b: sum[s] (model 0 sets it) gets its weighted log p of
 * target s (the ensemble's log-probability is Σ_k w_k log p_k, as in the search), and al[s],
 * if al is not NULL, its share of the mean attention. */
static int forced_model(nmt_decoder *d, int k, const batch *b, real *lp, double *sum, nmt_alignment *al,
                        nmt_err *err)
{
    const nmt_model *m = d->e.m[k];
    bk_ctx x = m->cx;
    x.rows = d->o.batch_invariant; /* scores as the search computes them */
    int S = b->B, rc = net_ws_reserve(&x, &d->ws[k], &m->cfg, S, b->Tx, b->Ty, err);
    if (rc) return rc;
    net_forward(&x, &d->ws[k], &m->cfg, &m->p, b, lp);
    double wk = d->e.n == 1 ? 1.0 : d->e.wt[k];
    /* the batch's attention [Ty, S, Tx], read back once */
    size_t na = al && has_attention(&m->cfg) ? (size_t)b->Ty * S * b->Tx : 0;
    real *alpha = na ? malloc(sizeof(real) * na) : NULL;
    if (na && !alpha) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if (na && net_attention_host(&x, &d->ws[k], &m->cfg, b, alpha)) {
        free(alpha);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    for (int s = 0; s < S && !rc; s++) {
        double one = 0;
        for (int t = 0; t < b->ylen[s]; t++) one += lp[t * S + s];
        sum[s] = k ? sum[s] + wk * one : wk * one;
        if (al && add_token_logprob(&al[s], lp, S, s, b->ylen[s], wk, k))
            rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        else if (na && add_attention(&al[s], alpha, S, s, b->Tx, b->xlen[s], b->ylen[s], d->e.n_att))
            rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    free(alpha);
    return rc;
}

/* Words of s mapped to ids through the text pipeline's last stage, EOS appended; at most cap
 * words kept (forced decoding). Returns the word count found. */
static int encode(const vocab *v, const char *s, int *ids, int cap, int *kept, int *unk)
{
    long u = 0;
    int n = text_pipe_ids(v, s, ids, cap, kept, &u);
    ids[*kept] = VOCAB_EOS;
    *unk = (int)u;
    return n;
}

/* Forced decoding of n pairs in batches, by every model of d: log-probabilities, lengths and
 * (if al) attention. */
static int forced(nmt_decoder *d, const char *const *src, const char *const *tgt, int n, double *logprob,
                  int *n_tokens, nmt_alignment *al, nmt_err *err)
{
    const char *fn = al ? "nmt_force_align" : "nmt_score";
    int bad = NMT_ARGS(err, fn, d, src, tgt);
    if (bad || (bad = nmt_strs_null(err, fn, "src", src, n)) || (bad = nmt_strs_null(err, fn, "tgt", tgt, n))) return bad;
    const nmt_model *m = d->m;
    int cap = NMT_MAX_SRC_WORDS + 1, B = d->o.batch, rc = NMT_OK;
    /* a target cut short would get the log-probability of another sentence: refused instead */
    int tcap = NMT_MAX_TGT_WORDS + 1;
    if (n < 0) return nmt_fail(err, NMT_ERR_ARG, "negative sentence count %d", n);
    int *bx = malloc(sizeof(int) * (size_t)B * cap), *by = malloc(sizeof(int) * (size_t)B * tcap);
    int *sx = malloc(sizeof(int) * (size_t)B * cap), *sy = malloc(sizeof(int) * (size_t)B * tcap);
    int *xl = malloc(sizeof(int) * B), *yl = malloc(sizeof(int) * B);
    real *lp = malloc(sizeof(real) * (size_t)B * tcap);
    double *sum = malloc(sizeof(double) * B);
    if (!bx || !by || !sx || !sy || !xl || !yl || !lp || !sum) { rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); goto done; }
    for (int s0 = 0; s0 < n && !rc; s0 += B) {
        if (d->o.stop && d->o.stop(d->o.stop_user)) { rc = nmt_fail(err, NMT_ERR_INTERRUPTED, "nmt_force_align: interrupted"); break; }
        int S = n - s0 < B ? n - s0 : B, Tx = 0, Ty = 0, kept, unk;
        for (int s = 0; s < S; s++) {
            encode(m->src, src[s0 + s] ? src[s0 + s] : "", sx + (size_t)s * cap, NMT_MAX_SRC_WORDS, &kept, &unk);
            xl[s] = kept + 1;
            int words = encode(m->tgt, tgt[s0 + s] ? tgt[s0 + s] : "", sy + (size_t)s * tcap, tcap - 1, &kept, &unk);
            if (words > kept) {
                rc = nmt_fail(err, NMT_ERR_ARG, "target %d (of %d) has %d words, more than the limit of %d", s0 + s + 1, n, words,
                              NMT_MAX_TGT_WORDS);
                goto done;
            }
            yl[s] = kept + 1;
            if (xl[s] > Tx) Tx = xl[s];
            if (yl[s] > Ty) Ty = yl[s];
        }
        memset(bx, 0, sizeof(int) * (size_t)S * Tx);
        memset(by, 0, sizeof(int) * (size_t)S * Ty);
        for (int s = 0; s < S; s++) {
            for (int t = 0; t < xl[s]; t++) bx[t * S + s] = sx[(size_t)s * cap + t];
            for (int t = 0; t < yl[s]; t++) by[t * S + s] = sy[(size_t)s * tcap + t];
        }
        batch b = {.B = S, .Tx = Tx, .Ty = Ty, .x = bx, .y = by, .xlen = xl, .ylen = yl};
        for (int k = 0; k < d->e.n && !rc; k++) rc = forced_model(d, k, &b, lp, sum, al ? al + s0 : NULL, err);
        for (int s = 0; s < S && !rc; s++)
            if (!isfinite(sum[s]))
                rc = nmt_fail(err, NMT_ERR_NUMERIC, "pair %d (of %d): the model's log-probability is not finite (NaN or "
                              "Inf): its weights overflow the products", s0 + s + 1, n);
        for (int s = 0; s < S && !rc; s++) {
            if (logprob) logprob[s0 + s] = sum[s];
            if (n_tokens) n_tokens[s0 + s] = yl[s];
            if (!al) continue;
            nmt_alignment *a = &al[s0 + s];
            a->n_src = xl[s] - 1;
            a->n_tgt = yl[s] - 1;
            a->logprob = sum[s];
        }
    }
done:
    free(bx); free(by); free(sx); free(sy); free(xl); free(yl); free(lp); free(sum);
    return rc;
}

int nmt_score(nmt_decoder *d, const char *const *src, const char *const *tgt, int n, double *logprob,
              int *n_tokens, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_score", logprob); /* n_tokens may be NULL */
    if (bad) return bad;
    return forced(d, src, tgt, n, logprob, n_tokens, NULL, err);
}

int nmt_force_align(nmt_decoder *d, const char *const *src, const char *const *tgt, int n, nmt_alignment *out,
                    nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_force_align", out);
    if (bad) return bad;
    if (n < 0) return nmt_fail(err, NMT_ERR_ARG, "nmt_force_align: negative sentence count %d", n);
    memset(out, 0, sizeof(nmt_alignment) * n);
    int rc = forced(d, src, tgt, n, NULL, NULL, out, err);
    if (rc) nmt_alignment_free(out, n);
    return rc;
}

void nmt_alignment_free(nmt_alignment *a, int n)
{
    for (int i = 0; a && i < n; i++) {
        free(a[i].attention);
        free(a[i].token_logprob);
        a[i].attention = NULL;
        a[i].token_logprob = NULL;
    }
}
