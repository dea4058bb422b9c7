/* test_ensemble.c: ensembles of models (decode/ensemble.c) against independent results: one model
 * as an ensemble and two copies of one model give that model's output bit for bit (n-best,
 * scores, attention, forced scores); two different models (every architecture, in pairs of
 * different ones) searched with a beam wider than the space agree with an exhaustive search
 * whose scores are the weighted sums of each model's own forced-decoding log-probabilities; the
 * ensemble's attention is the mean of its attention models' forced-alignment rows; models with
 * other vocabularies and bad weights are refused with messages that say why. */
/* kernel sets: all: an ensemble against its models, alone and in batches (tests/cli/kernels.sh) */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "decode/beam.h"
#include "nn/net.h"
#include "test.h"
#include "tiny_model.h"

static rng R;

/* tiny_model(c, rename) with its parameters drawn with spread sd */
static nmt_model *model_of(nmt_config c, double sd, int rename)
{
    nmt_model *m = tiny_model(c, rename);
    for (size_t i = 0; i < m->pt.total; i++) m->P[i] = (real)(sd * rng_normal(&R));
    return m;
}

static nmt_config config(int arch, int Kx, int Ky)
{
    return (nmt_config){arch, Kx, Ky, 4, 5, 4, 3, 1, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
}

static const char *const SRC[] = {"w2 w3 w4", "w5", "w3 w3 w2 w6 w4", "w4 w2"};
enum { NS = 4 };

static void translate_with(nmt_translation *out, const nmt_model *const *m, const double *wt, int n)
{
    nmt_translate_opts o = nmt_translate_default_opts();
    o.beam = 5;
    o.n_best = 5;
    o.attention = 1;
    nmt_decoder *d;
    nmt_err err;
    NMT_ASSERT(nmt_decoder_init_ensemble(&d, m, wt, n, &o, &err) == 0);
    NMT_ASSERT(nmt_translate(d, SRC, NS, out, &err) == 0);
    nmt_decoder_free(d);
}

static void scores_with(double *lp, nmt_alignment *al, const nmt_model *const *m, const double *wt, int n,
                        const char *const *tgt)
{
    nmt_translate_opts o = nmt_translate_default_opts();
    nmt_decoder *d;
    nmt_err err;
    NMT_ASSERT(nmt_decoder_init_ensemble(&d, m, wt, n, &o, &err) == 0);
    NMT_ASSERT(nmt_score(d, SRC, tgt, NS, lp, NULL, &err) == 0);
    if (al) NMT_ASSERT(nmt_force_align(d, SRC, tgt, NS, al, &err) == 0);
    nmt_decoder_free(d);
}

/* ---------------------------------------------------------------- one model, two copies */
static void test_copies(int arch)
{
    nmt_model *m = model_of(config(arch, 8, 9), 0.6, 0);
    const nmt_model *one[1] = {m}, *two[2] = {m, m};
    double w1 = 0.3;
    nmt_translation alone[NS], as_one[NS], copies[NS];
    nmt_decoder *d;
    nmt_translate_opts o = nmt_translate_default_opts();
    o.beam = 5;
    o.n_best = 5;
    o.attention = 1;
    NMT_ASSERT(nmt_decoder_init(&d, m, &o, NULL) == 0 && nmt_translate(d, SRC, NS, alone, NULL) == 0);
    nmt_decoder_free(d);
    translate_with(as_one, one, &w1, 1);
    translate_with(copies, two, NULL, 2);
    CHECKF(same_translations(alone, as_one, NS), "%s: an ensemble of one model (weight 0.3) differs from the model",
           nmt_arch_name(arch));
    CHECKF(same_translations(alone, copies, NS), "%s: an ensemble of two copies differs from the model", nmt_arch_name(arch));
    /* forced decoding: the same log-probabilities and attention */
    const char *tgt[NS];
    for (int i = 0; i < NS; i++) tgt[i] = alone[i].n_hyps && alone[i].hyps[0].n_words ? alone[i].hyps[0].words[0] : "w2";
    double l1[NS], l2[NS];
    nmt_alignment a1[NS], a2[NS];
    scores_with(l1, a1, one, NULL, 1, tgt);
    scores_with(l2, a2, two, NULL, 2, tgt);
    int same = 1;
    for (int i = 0; i < NS; i++) {
        same &= l1[i] == l2[i] && !a1[i].attention == !a2[i].attention;
        if (a1[i].attention)
            same &= !memcmp(a1[i].attention, a2[i].attention, sizeof(float) * (a1[i].n_tgt + 1) * (a1[i].n_src + 1));
    }
    CHECKF(same, "%s: nmt_score / nmt_force_align of two copies differ from the model's", nmt_arch_name(arch));
    nmt_alignment_free(a1, NS);
    nmt_alignment_free(a2, NS);
    nmt_translation_free(alone, NS);
    nmt_translation_free(as_one, NS);
    nmt_translation_free(copies, NS);
    nmt_model_free(m);
}

/* ---------------------------------------------------------------- two different models */

/* The best ensemble score over every finished sequence (length <= L, EOS last) and every cut one
 * (length L, no EOS), scores Σ_k w_k log p_k from each model's own forced decoding. */
static double exhaustive_best(const nmt_model *const *m, const double *w, const int *src, int sl, int L, int norm)
{
    int V = m[0]->cfg.tgt_vocab, seq[8], len = 0;
    long code = 0;
    double best = -INFINITY;
    while (next_sequence(seq, &len, &code, V, L)) {
        double lp = w[0] * forced_logp(m[0], src, sl, seq, len) + w[1] * forced_logp(m[1], src, sl, seq, len);
        if (norm) lp /= len;
        if (lp > best) best = lp;
    }
    return best;
}

static void test_pair(int arch_a, int arch_b, double wa, double wb)
{
    nmt_model *ma = model_of(config(arch_a, 6, 5), 0.8, 0), *mb = model_of(config(arch_b, 6, 5), 0.8, 0);
    const nmt_model *m[2] = {ma, mb};
    double given[2] = {wa, wb}, w[2] = {(real)(wa / (wa + wb)), (real)(wb / (wa + wb))};
    infer_ens e;
    NMT_ASSERT(ens_init(&e, m, given, 2, NULL) == 0);
    int src[3] = {3, 4, 0}, sl = 3, *sp = src, L = beam_max_len(1.0, sl), xlen = sl;
    batch b = {.B = 1, .Tx = sl, .x = sp, .xlen = &xlen};
    const char *pair = nmt_arch_name(arch_b);
    for (int norm = 0; norm < 2; norm++) {
        double want = exhaustive_best(m, w, src, sl, L, norm);
        beam_opts wide = {125, norm, 1.0, 0, 3, 0, 1.0, 0, 1.0, NULL, 1.0, NULL, 0};
        beam_sent out;
        NMT_ASSERT(beam_search_ens(&out, &e, &b, &wide, NULL) == 0);
        CHECKF(fabs(out.hyp[0].score - want) <= 1e-5 * fabs(want), "%s + %s: wide beam %.8f, exhaustive best %.8f (normalize %d)",
               nmt_arch_name(arch_a), pair, out.hyp[0].score, want, norm);
        beam_sent_free(&out);
        for (int K = 1; K <= 4; K++) { /* each beam's best: its log-probability is the weighted sum of the models' */
            beam_opts o = {K, norm, 1.0, 0, 1, 0, 1.0, 0, 1.0, NULL, 1.0, NULL, 0};
            NMT_ASSERT(beam_search_ens(&out, &e, &b, &o, NULL) == 0);
            const beam_hyp *h = &out.hyp[0];
            double lp = w[0] * forced_logp(ma, src, sl, h->tok, h->len) + w[1] * forced_logp(mb, src, sl, h->tok, h->len);
            CHECKF(fabs(lp - h->logprob) <= 1e-5 * fabs(lp), "%s + %s, beam %d: logprob %.8f, the models' forced %.8f",
                   nmt_arch_name(arch_a), pair, K, h->logprob, lp);
            CHECK(h->score <= want + 1e-6 * fabs(want));
            beam_sent_free(&out);
        }
    }
    ens_free(&e);
    nmt_model_free(ma);
    nmt_model_free(mb);
}

/* The public API: nmt_score of the ensemble is the weighted sum of the models' nmt_score, and
 * its translations' attention the mean of the attention models' forced alignments. */
static void test_pair_api(int arch_a, int arch_b)
{
    nmt_model *ma = model_of(config(arch_a, 8, 9), 0.6, 0), *mb = model_of(config(arch_b, 8, 9), 0.6, 0);
    const nmt_model *two[2] = {ma, mb}, *a1[1] = {ma}, *b1[1] = {mb};
    double wt[2] = {3, 1};
    nmt_translation tr[NS];
    translate_with(tr, two, wt, 2);
    const char *tgt[NS];
    char buf[NS][256];
    for (int i = 0; i < NS; i++) { /* the best hypothesis as text (an unfinished one is forced with an EOS) */
        const nmt_hypothesis *h = &tr[i].hyps[0];
        size_t k = 0;
        buf[i][0] = 0;
        for (int j = 0; j < h->n_words; j++) k += (size_t)snprintf(buf[i] + k, sizeof buf[i] - k, j ? " %s" : "%s", h->words[j]);
        tgt[i] = buf[i];
    }
    double le[NS], la[NS], lb[NS];
    nmt_alignment aa[NS], ab[NS];
    scores_with(le, NULL, two, wt, 2, tgt);
    scores_with(la, aa, a1, NULL, 1, tgt);
    scores_with(lb, ab, b1, NULL, 1, tgt);
    int natt = has_attention(&ma->cfg) + has_attention(&mb->cfg);
    for (int i = 0; i < NS; i++) {
        const nmt_hypothesis *h = &tr[i].hyps[0];
        CHECK_NEAR(le[i], 0.75 * la[i] + 0.25 * lb[i], 1e-12);
        if (h->finished) CHECK_NEAR(h->logprob, le[i], 1e-5);
        CHECKF(!h->attention == !natt, "attention %s for %d attention models", h->attention ? "given" : "missing", natt);
        if (!h->attention) continue; /* forced decoding adds an EOS row to an unfinished output: not compared */
        double worst = 0;
        for (int r = 0; r < h->attn_rows; r++)
            for (int c = 0; c < h->attn_cols; c++) {
                size_t at = (size_t)r * h->attn_cols + c;
                double mean = ((aa[i].attention ? aa[i].attention[at] : 0) + (ab[i].attention ? ab[i].attention[at] : 0)) / natt;
                worst = fmax(worst, fabs(h->attention[at] - mean));
            }
        CHECKF(worst < 1e-5, "%s + %s: attention differs from the mean of the models' by %.3g", nmt_arch_name(arch_a),
               nmt_arch_name(arch_b), worst);
    }
    nmt_alignment_free(aa, NS);
    nmt_alignment_free(ab, NS);
    nmt_translation_free(tr, NS);
    nmt_model_free(ma);
    nmt_model_free(mb);
}

/* ---------------------------------------------------------------- refusals */
static void expect_refused(const nmt_model *a, const nmt_model *b, const double *wt, const char *want)
{
    const nmt_model *two[2] = {a, b};
    nmt_translate_opts o = nmt_translate_default_opts();
    nmt_decoder *d = (nmt_decoder *)&o; /* anything but NULL: a failed init must set NULL */
    nmt_err err = {0};
    int rc = nmt_decoder_init_ensemble(&d, two, wt, 2, &o, &err);
    CHECKF(rc == NMT_ERR_ARG && !d && strstr(err.msg, want), "want NMT_ERR_ARG and '%s', got %d: %s", want, rc, err.msg);
}

static void test_refusals(void)
{
    nmt_model *a = model_of(config(NMT_ARCH_RNNSEARCH, 8, 9), 0.5, 0);
    nmt_model *big = model_of(config(NMT_ARCH_RNNSEARCH, 8, 10), 0.5, 0);
    nmt_model *src = model_of(config(NMT_ARCH_RNNSEARCH, 7, 9), 0.5, 0);
    nmt_model *other = model_of(config(NMT_ARCH_RECATT, 8, 9), 0.5, 6); /* target ids 6.. renamed */
    expect_refused(a, big, NULL, "model 2 has 10 target words, model 1 9");
    expect_refused(a, src, NULL, "model 2 has 7 source words, model 1 8");
    expect_refused(a, other, NULL, "model 2: target vocabulary differs from model 1's at id 6 ('x6', model 1 has 'w6')");
    double zero[2] = {1, 0}, neg[2] = {-1, 2}, nan_[2] = {1, NAN};
    expect_refused(a, a, zero, "weight 2 (0)");
    expect_refused(a, a, neg, "weight 1 (-1)");
    expect_refused(a, a, nan_, "not a positive number");
    nmt_err err;
    CHECK(nmt_model_check_vocab(a, "a.nmt", other, "b.nmt", &err) == NMT_ERR_ARG &&
          strstr(err.msg, "b.nmt: target vocabulary differs from a.nmt's at id 6"));
    CHECK(nmt_model_check_vocab(a, "a.nmt", a, "b.nmt", &err) == NMT_OK);
    nmt_decoder *d;
    nmt_translate_opts o = nmt_translate_default_opts();
    CHECK(nmt_decoder_init_ensemble(&d, NULL, NULL, 0, &o, &err) == NMT_ERR_ARG);
    /* UNK replacement needs attention from at least one model */
    nmt_model *e1 = model_of(config(NMT_ARCH_RNNENC, 8, 9), 0.5, 0);
    const nmt_model *two_enc[2] = {e1, e1}, *mixed[2] = {e1, a};
    o.unk_replace = 1;
    CHECK(nmt_decoder_init_ensemble(&d, two_enc, NULL, 2, &o, &err) == NMT_ERR_ARG && strstr(err.msg, "no model of the ensemble"));
    CHECK(nmt_decoder_init_ensemble(&d, mixed, NULL, 2, &o, &err) == NMT_OK);
    nmt_decoder_free(d);
    nmt_model_free(e1);
    nmt_model_free(a);
    nmt_model_free(big);
    nmt_model_free(src);
    nmt_model_free(other);
}

int main(void)
{
    rng_seed(&R, 77);
    for (int arch = 0; arch < NMT_ARCH_RNN_COUNT; arch++) test_copies(arch);
    /* every architecture in an ensemble with another one */
    for (int arch = 0; arch < NMT_ARCH_RNN_COUNT; arch++) {
        int other = (arch + 1) % NMT_ARCH_RNN_COUNT;
        test_pair(arch, other, arch % 2 ? 3.0 : 1.0, 1.0);
        test_pair_api(arch, other);
    }
    test_pair_api(NMT_ARCH_RNNENC, NMT_ARCH_RNNENC);
    test_refusals();
    return test_done("test_ensemble");
}
