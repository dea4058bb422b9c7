/* test_sample.c: translation by sampling checked against the distribution it should draw from,
 * computed independently: every sequence of a tiny model enumerated, each word's probability
 * given its prefix taken from forced decoding through the training forward pass, then tempered,
 * cut to the top k and to the nucleus (by sorting) and stripped of UNK as the options say; the
 * nucleus's quickselect against sorting. Also: each draw's log-probability
 * against forced decoding, independence from batching, seeds, and the options' limits. */
/* kernel sets: all: identical lines sampled in one batch and in several (tests/cli/kernels.sh) */
#include <stdlib.h>
#include <string.h>

#include "decode/sample.h"
#include "base/err.h"
#include "data/vocab.h"
#include "nn/net.h"
#include "test.h"
#include "tiny_model.h"

static rng R;
enum { V = 5, L = 3, NSEQ = 1 + V + V * V + V * V * V };
static long cut_by_topp; /* words of positive weight the nucleus left out, over all steps */

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The nucleus floor by sorting: the weights' distinct values from the largest down, each
 * taking all its equals, until they hold p of the mass. */
static double floor_by_sorting(const double *w, int n, double p)
{
    double *s = malloc(sizeof(double) * (n ? n : 1)), total = 0, cum = 0, t = 0;
    NMT_ASSERT(s);
    for (int i = 0; i < n; i++) total += w[i], s[i] = w[i];
    qsort(s, n, sizeof(double), cmp_desc);
    for (int i = 0; i < n; i++) {
        cum += s[i];
        if (i + 1 < n && s[i + 1] == s[i]) continue;
        t = s[i];
        if (cum >= p * total) break;
    }
    free(s);
    return t;
}

/* sample_nucleus_floor against sorting: weights with many ties (small integers, whose sums are
 * exact) and without (uniform), sorted either way or not, at masses from tiny to all. */
static void test_nucleus_floor(void)
{
    int sizes[] = {1, 2, 3, 7, 64, 1000, 30000}, bad = 0, checks = 0;
    double *w = malloc(sizeof(double) * 30000), *copy = malloc(sizeof(double) * 30000);
    NMT_ASSERT(w && copy);
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
        for (int rep = 0; rep < 60; rep++) {
            int n = sizes[k], kind = rep % 6; /* ties; none; descending; ascending; organ pipe; all equal */
            for (int i = 0; i < n; i++)
                w[i] = kind == 0 ? (double)(1 + rng_below(&R, 4)) : kind == 1 ? 1 + rng_uniform(&R) : kind == 2 ? n - i
                     : kind == 3 ? i + 1 : kind == 4 ? (i < n / 2 ? i + 1 : n - i) : 2;
            /* halves and quarters of integer weights: masses that sums meet exactly */
            double ps[] = {1e-9, 0.999999, 0.5, 0.25, rng_uniform(&R)}, p = ps[rep % 5];
            memcpy(copy, w, sizeof(double) * n);
            double want = floor_by_sorting(w, n, p), got = sample_nucleus_floor(copy, n, p);
            if (got != want && !bad++)
                printf("nucleus floor of %d weights (kind %d) at p %.17g: %.17g, sorting says %.17g\n", n, kind, p, got, want);
            checks++;
        }
    memcpy(copy, w, sizeof(double) * 7);
    CHECKF(sample_nucleus_floor(copy, 7, 1) == 0, "the nucleus of all the mass cuts a word");
    /* 4, eight 3s and four 1s at 0.875: the 4 and the 3s hold 28 of 32 exactly, so wherever a 3 is
     * the pivot, it and its equals complete the mass with words below them left */
    double base[13] = {4, 3, 3, 3, 3, 3, 3, 3, 3, 1, 1, 1, 1}, tie[13];
    int tie_bad = 0;
    for (int r = 0; r < 13; r++) {
        for (int i = 0; i < 13; i++) tie[i] = base[(i + r) % 13];
        tie_bad += sample_nucleus_floor(tie, 13, 0.875) != 3;
    }
    CHECKF(!tie_bad, "%d of 13 orders of 4, eight 3s and four 1s at 0.875: the nucleus is not the 4 and the 3s", tie_bad);
    CHECKF(!bad, "%d of %d nucleus floors differ from sorting's", bad, checks);
    free(w); free(copy);
}

/* a sequence of at most L words over V as one number (length first) */
static int seq_code(const int *seq, int len)
{
    int c = 0, base = 0;
    for (int l = 0, n = 1; l < len; l++, n *= V) base += n;
    for (int i = len - 1; i >= 0; i--) c = c * V + seq[i];
    return base + c;
}

/* q(v | prefix) for v in 0..V: the model's p from forced decoding, to the power 1/T, among the
 * topk most probable (all when 0), UNK left out with no_unk, normalised, then cut to the
 * nucleus of mass topp and normalised again */
static void step_dist(const nmt_model *m, const int *src, int sl, const int *prefix, int plen, double T, int topk,
                      double topp, int no_unk, double *q)
{
    int seq[L + 1];
    memcpy(seq, prefix, sizeof(int) * plen);
    double base = plen ? forced_logp(m, src, sl, prefix, plen) : 0, p[V], total = 0;
    for (int v = 0; v < V; v++) {
        seq[plen] = v;
        p[v] = exp(forced_logp(m, src, sl, seq, plen + 1) - base);
    }
    for (int v = 0; v < V; v++) {
        int better = 0; /* words ranked above v (ties to the lower id, as the sampler's top k) */
        for (int u = 0; u < V; u++)
            if (!(no_unk && u == VOCAB_UNK) && (p[u] > p[v] || (p[u] == p[v] && u < v))) better++;
        int in = !(no_unk && v == VOCAB_UNK) && (topk == 0 || better < topk);
        q[v] = in ? pow(p[v], 1 / T) : 0;
        total += q[v];
    }
    for (int v = 0; v < V; v++) q[v] /= total;
    if (topp >= 1) return;
    double s[V], cum = 0;
    int n = 0;
    for (int v = 0; v < V; v++)
        if (q[v] > 0) s[n++] = q[v];
    qsort(s, n, sizeof(double), cmp_desc);
    double t = s[n - 1];
    for (int i = 0; i < n; i++)
        if ((cum += s[i]) >= topp && (i + 1 == n || s[i + 1] < s[i])) { t = s[i]; break; }
    total = 0;
    for (int v = 0; v < V; v++) {
        if (q[v] > 0 && q[v] < t) q[v] = 0, cut_by_topp++;
        total += q[v];
    }
    for (int v = 0; v < V; v++) q[v] /= total;
}

/* The probability of every sequence the sampler can produce (ends in EOS, or has L words) that
 * extends seq[0..len) (of probability pr), by code: one step's distribution per prefix. */
static void exact(const nmt_model *m, const int *src, int sl, double T, int topk, double topp, int no_unk, int *seq,
                  int len, double pr, double *P)
{
    double q[V];
    step_dist(m, src, sl, seq, len, T, topk, topp, no_unk, q);
    for (int v = 0; v < V; v++) {
        seq[len] = v;
        if (v == VOCAB_EOS || len + 1 == L) P[seq_code(seq, len + 1)] = pr * q[v];
        else exact(m, src, sl, T, topk, topp, no_unk, seq, len + 1, pr * q[v], P);
    }
}

/* N draws of one sentence (K per call, a new seed per call) against the exact distribution:
 * every sequence's frequency within 5 standard deviations of its probability, none drawn that
 * cannot be, each draw's logprob that of forced decoding, each sentence's draws best first. */
static void test_distribution(int arch, double T, int topk, double topp, int no_unk, int norm, double alpha)
{
    nmt_config c = {arch, 6, V, 4, 5, 4, 3, 1, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    nmt_model *m = tiny_random_model(c, &R, 0.7);
    if (no_unk) m->p.out_bias[VOCAB_UNK] += 3; /* UNK among the most probable: left out before the top k is taken */
    int src[3] = {3, 4, 0}, sl = 3, *sp = src;
    static double P[NSEQ];
    static long count[NSEQ];
    int seq[L];
    memset(P, 0, sizeof P);
    cut_by_topp = 0;
    exact(m, src, sl, T, topk, topp, no_unk, seq, 0, 1, P);
    CHECKF(topp >= 1 || cut_by_topp > 0, "top-p %g cut no word: the case checks nothing", topp);
    memset(count, 0, sizeof count);
    batch b;
    tiny_batch(&b, &sp, &sl, 1);
    infer_ws w = {0};
    infer_ens e = ens_one((const nmt_model **)&m, &w);
    enum { K = 500, CALLS = 40 };
    long N = (long)K * CALLS;
    double lp_err = 0, lp_of[NSEQ];
    for (int s = 0; s < NSEQ; s++) lp_of[s] = NAN; /* forced decoding's, once per sequence */
    int order_ok = 1;
    for (int call = 0; call < CALLS; call++) {
        uint64_t seed = 1000 + (uint64_t)call;
        beam_opts o = {1, norm, 1.0, no_unk, K, 0, alpha, topk, T, &seed, topp, NULL, 0};
        beam_sent out;
        NMT_ASSERT(sample_search_ens(&out, &e, &b, &o, NULL) == 0);
        for (int i = 0; i < out.n; i++) {
            const beam_hyp *h = &out.hyp[i];
            int code = seq_code(h->tok, h->len);
            count[code]++;
            if (isnan(lp_of[code])) lp_of[code] = forced_logp(m, src, sl, h->tok, h->len);
            lp_err = fmax(lp_err, fabs(h->logprob - lp_of[code]));
            if (i) order_ok &= h->score <= out.hyp[i - 1].score;
            order_ok &= h->score == (!norm ? h->logprob : alpha == 1 ? h->logprob / h->len : h->logprob / pow(h->len, alpha));
        }
        beam_sent_free(&out);
    }
    int off = 0, impossible = 0, worst = -1;
    double tv = 0;
    for (int s = 0; s < NSEQ; s++) {
        double f = (double)count[s] / N, sd = sqrt(P[s] * (1 - P[s]) / N);
        tv += fabs(f - P[s]) / 2;
        if (P[s] == 0 && count[s]) impossible++;
        if (fabs(f - P[s]) > 5 * sd + 0.5 / N) { off++; if (worst < 0) worst = s; }
    }
    CHECKF(!impossible, "%s T %g top %d top-p %g no-unk %d: %d sequences drawn that have probability 0", nmt_arch_name(arch), T,
           topk, topp, no_unk, impossible);
    CHECKF(!off, "%s T %g top %d top-p %g no-unk %d: %d sequences off by more than 5 sd (the first: code %d, drawn %.4f, p %.4f)",
           nmt_arch_name(arch), T, topk, topp, no_unk, off, worst, worst < 0 ? 0 : (double)count[worst] / N,
           worst < 0 ? 0 : P[worst]);
    CHECKF(lp_err <= 1e-5, "%s: a draw's logprob is %.3g from forced decoding's", nmt_arch_name(arch), lp_err);
    CHECKF(order_ok, "%s: draws not ranked by %s", nmt_arch_name(arch), !norm ? "logprob" : "logprob / length^alpha");
    printf("%s T %.2f top %d top-p %.2f (%ld cut) no-unk %d: %ld draws, total variation %.4f from the exact distribution\n",
           nmt_arch_name(arch), T, topk, topp, cut_by_topp, no_unk, N, tv);
    free(b.x); free(b.xlen);
    infer_free(&w);
    nmt_model_free(m);
}

/* What a sentence draws does not depend on its batch; another seed draws otherwise; an ensemble
 * of a model with itself draws what the model draws. */
static void test_batching(int arch, double topp)
{
    nmt_config c = {arch, 20, 15, 6, 8, 7, 5, 2, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    nmt_model *m = tiny_random_model(c, &R, 0.5);
    enum { S = 5, K = 3 };
    int lens[S] = {4, 7, 1, 9, 3}, *src[S];
    uint64_t seeds[S] = {11, 22, 33, 44, 55}, other[S] = {12, 23, 34, 45, 56};
    tiny_sources(&R, src, lens, S, 18);
    batch all;
    tiny_batch(&all, src, lens, S);
    infer_ws w = {0};
    infer_ens e1 = ens_one((const nmt_model **)&m, &w), e2;
    const nmt_model *two[2] = {m, m};
    NMT_ASSERT(ens_init(&e2, two, NULL, 2, NULL) == 0);
    beam_opts o = {1, 1, 2.0, 0, K, 1, 1.0, 0, 0.8, seeds, topp, NULL, 0};
    beam_sent a[S], x[S], y[S];
    NMT_ASSERT(sample_search_ens(a, &e1, &all, &o, NULL) == 0);
    NMT_ASSERT(sample_search_ens(y, &e2, &all, &o, NULL) == 0);
    o.seeds = other;
    NMT_ASSERT(sample_search_ens(x, &e1, &all, &o, NULL) == 0);
    int indep = 1, differ = 0, ens_same = 1;
    for (int s = 0; s < S; s++) {
        batch one;
        tiny_batch(&one, &src[s], &lens[s], 1);
        beam_opts o1 = o;
        o1.seeds = &seeds[s];
        beam_sent b1;
        NMT_ASSERT(sample_search_ens(&b1, &e1, &one, &o1, NULL) == 0);
        for (int i = 0; i < K; i++) {
            const beam_hyp *p = &a[s].hyp[i], *q = &b1.hyp[i], *r = &x[s].hyp[i], *t = &y[s].hyp[i];
            indep &= p->len == q->len && !memcmp(p->tok, q->tok, sizeof(int) * p->len) && fabs(p->logprob - q->logprob) <= 1e-5;
            for (int k = 0; indep && k < p->len * lens[s]; k++) indep &= fabs(p->attn[k] - q->attn[k]) <= 1e-5;
            differ |= p->len != r->len || memcmp(p->tok, r->tok, sizeof(int) * p->len);
            ens_same &= p->len == t->len && !memcmp(p->tok, t->tok, sizeof(int) * p->len) && fabs(p->logprob - t->logprob) <= 1e-5;
        }
        beam_sent_free(&b1);
        free(one.x); free(one.xlen);
    }
    CHECKF(indep, "%s: a sentence draws otherwise alone than in a batch", nmt_arch_name(arch));
    CHECKF(differ, "%s: other seeds drew the same %d x %d translations", nmt_arch_name(arch), S, K);
    CHECKF(ens_same, "%s: an ensemble of a model with itself draws otherwise than the model", nmt_arch_name(arch));
    for (int s = 0; s < S; s++) { beam_sent_free(&a[s]); beam_sent_free(&x[s]); beam_sent_free(&y[s]); free(src[s]); }
    free(all.x); free(all.xlen);
    ens_free(&e2);
    infer_free(&w);
    nmt_model_free(m);
}

/* Temperature 0.001 with UNK far the most probable and left out: every draw is greedy search's
 * without UNK (weights are taken against the best drawable word, so that none underflows). */
static void test_cold(void)
{
    nmt_config c = {NMT_ARCH_RNNSEARCH, 20, 15, 6, 8, 7, 5, 2, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    nmt_model *m = tiny_random_model(c, &R, 0.5);
    m->p.out_bias[VOCAB_UNK] += 30;
    enum { S = 4 };
    int lens[S] = {3, 6, 2, 8}, *src[S];
    uint64_t seeds[S] = {1, 2, 3, 4};
    tiny_sources(&R, src, lens, S, 18);
    batch all;
    tiny_batch(&all, src, lens, S);
    infer_ws w = {0};
    infer_ens e = ens_one((const nmt_model **)&m, &w);
    beam_opts g = {1, 1, 2.0, 1, 1, 0, 1.0, 0, 1.0, NULL, 1.0, NULL, 0}, o = {1, 1, 2.0, 1, 5, 0, 1.0, 0, 0.001, seeds, 1.0, NULL, 0};
    beam_sent a[S], b[S];
    NMT_ASSERT(beam_search_ens(a, &e, &all, &g, NULL) == 0);
    NMT_ASSERT(sample_search_ens(b, &e, &all, &o, NULL) == 0);
    int same = 1;
    for (int s = 0; s < S; s++)
        for (int i = 0; i < b[s].n; i++)
            same &= b[s].hyp[i].len == a[s].hyp[0].len && !memcmp(b[s].hyp[i].tok, a[s].hyp[0].tok, sizeof(int) * a[s].hyp[0].len);
    CHECKF(same, "temperature 0.001 without UNK did not draw greedy search's translations");
    for (int s = 0; s < S; s++) { beam_sent_free(&a[s]); beam_sent_free(&b[s]); free(src[s]); }
    free(all.x); free(all.xlen);
    infer_free(&w);
    nmt_model_free(m);
}

/* Every draw of x whose words some draw of y has carries that draw's log-probability up to
 * rounding, and at least one does: the promise for a line in another batch (nmt.h). */
static int same_up_to_rounding(const nmt_translation *x, const nmt_translation *y)
{
    int shared = 0;
    for (int i = 0; i < x->n_hyps; i++)
        for (int j = 0; j < y->n_hyps; j++) {
            const nmt_hypothesis *a = &x->hyps[i], *b = &y->hyps[j];
            if (a->n_words != b->n_words || memcmp(a->ids, b->ids, sizeof(int) * a->n_words)) continue;
            if (fabs(a->logprob - b->logprob) > 1e-4 * (1 + fabs(b->logprob))) return 0;
            shared++;
            break;
        }
    return shared > 0;
}

/* Through the public API: the same lines in the same batches draw the same; a line's draws are
 * keyed by its words, so identical lines each in a batch of its own draw identically wherever
 * they stand in the input; in one batch, OpenBLAS's AVX2 kernels may round their rows apart
 * (tests/cli/kernels.sh runs this under them), so there they agree up to rounding only; the
 * options' limits are refused. */
static void test_api(void)
{
    nmt_config c = {NMT_ARCH_RNNSEARCH, 20, 15, 6, 8, 7, 5, 2, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    nmt_model *m = tiny_random_model(c, &R, 0.5);
    const char *lines[] = {"w3 w4 w5", "w7 w2", "w3 w4 w5", "w9 w9 w9 w9 w9 w9"};
    nmt_translate_opts o = nmt_translate_default_opts();
    o.sample = 1;
    o.n_best = 20; /* more than the beam: the beam is not used */
    o.batch = 4;
    nmt_decoder *d;
    NMT_ASSERT(nmt_decoder_init(&d, m, &o, NULL) == 0);
    nmt_translation a[4], b[4], one[1], alone[4];
    NMT_ASSERT(nmt_translate(d, lines, 4, a, NULL) == 0);
    NMT_ASSERT(nmt_translate(d, lines, 4, b, NULL) == 0);
    CHECK(same_translations(a, b, 4));
    nmt_translation_free(b, 4);
    CHECK(a[0].n_hyps == 20);
    o.batch = 1;
    NMT_ASSERT(nmt_decoder_set_opts(d, &o, NULL) == 0);
    NMT_ASSERT(nmt_translate(d, lines, 4, alone, NULL) == 0);
    CHECKF(same_translations(&alone[0], &alone[2], 1), "identical lines, each a batch of its own, drew otherwise");
    CHECKF(same_up_to_rounding(&a[0], &alone[0]) && same_up_to_rounding(&a[2], &alone[2]),
           "a line in a batch of 4 drew otherwise than alone beyond rounding");
    NMT_ASSERT(nmt_translate(d, &lines[1], 1, one, NULL) == 0);
    CHECKF(same_translations(&one[0], &alone[1], 1), "a line alone drew otherwise than the same line second in the input");
    nmt_translation_free(one, 1);
    nmt_translation_free(alone, 4);
    o.seed = 2;
    NMT_ASSERT(nmt_decoder_set_opts(d, &o, NULL) == 0);
    NMT_ASSERT(nmt_translate(d, lines, 4, b, NULL) == 0);
    CHECKF(!same_translations(a, b, 4), "seed 2 drew what seed 1 drew");
    nmt_translation_free(a, 4);
    nmt_translation_free(b, 4);
    nmt_translate_opts bad = o;
    bad.temperature = 0;
    CHECK(nmt_decoder_set_opts(d, &bad, NULL) == NMT_ERR_ARG);
    bad = o, bad.sample_topk = -1;
    CHECK(nmt_decoder_set_opts(d, &bad, NULL) == NMT_ERR_ARG);
    double topp_bad[] = {0, -0.5, 1.0000001, NAN};
    for (int i = 0; i < 4; i++) {
        bad = o, bad.sample_topp = topp_bad[i];
        CHECKF(nmt_decoder_set_opts(d, &bad, NULL) == NMT_ERR_ARG, "top-p %g accepted", topp_bad[i]);
    }
    bad = o, bad.n_best = 1001;
    CHECK(nmt_decoder_set_opts(d, &bad, NULL) == NMT_ERR_ARG);
    bad = o, bad.sample = 0; /* n-best 20 over beam 12: search refuses it */
    CHECK(nmt_decoder_set_opts(d, &bad, NULL) == NMT_ERR_ARG);
    nmt_decoder_free(d);
    nmt_model_free(m);
}

/* A model whose weights are finite but so large that its products overflow (the loader takes
 * it): translating (search and sampling), scoring and aligning are NMT_ERR_NUMERIC naming the
 * sentence, never a translation or a score that is not a number; the same model at a sane scale
 * translates. */
static void test_nonfinite(void)
{
    nmt_config c = {NMT_ARCH_RNNSEARCH, 20, 15, 6, 8, 7, 5, 2, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const char *src[] = {"w3 w4 w5", "w7 w2"}, *tgt[] = {"w3 w4", "w5"};
    for (int huge = 0; huge < 2; huge++) {
        nmt_model *m = tiny_random_model(c, &R, huge ? 1e30 : 0.5);
        int want = huge ? NMT_ERR_NUMERIC : NMT_OK;
        for (int sample = 0; sample < 2; sample++) {
            nmt_translate_opts o = nmt_translate_default_opts();
            o.sample = sample;
            o.n_best = 2;
            nmt_decoder *d;
            nmt_err err = {0, ""};
            NMT_ASSERT(nmt_decoder_init(&d, m, &o, NULL) == 0);
            nmt_translation t[2];
            int rc = nmt_translate(d, src, 2, t, &err);
            CHECKF(rc == want && (!huge || strstr(err.msg, "sentence 1 (of 2)")), "scale %s, sample %d: rc %d '%s'",
                   huge ? "1e30" : "0.5", sample, rc, err.msg);
            if (!rc) nmt_translation_free(t, 2);
            double lp[2];
            rc = nmt_score(d, src, tgt, 2, lp, NULL, &err);
            CHECKF(rc == want && (!huge || strstr(err.msg, "pair 1 (of 2)")), "score: rc %d '%s'", rc, err.msg);
            nmt_alignment al[2];
            rc = nmt_force_align(d, src, tgt, 2, al, &err);
            CHECKF(rc == want, "force_align: rc %d '%s'", rc, err.msg);
            if (!rc) nmt_alignment_free(al, 2);
            nmt_decoder_free(d);
        }
        nmt_model_free(m);
    }
}

int main(void)
{
    rng_seed(&R, 777);
    test_nucleus_floor();
    for (int arch = 0; arch < NMT_ARCH_RNN_COUNT; arch++) {
        test_distribution(arch, 1.0, 0, 1.0, 0, 1, 1.0);
        test_batching(arch, 1.0);
    }
    test_batching(NMT_ARCH_RNNSEARCH, 0.7);
    test_batching(NMT_ARCH_RNNENC, 0.5);
    test_distribution(NMT_ARCH_RNNSEARCH, 0.5, 0, 1.0, 0, 1, 1.0);
    test_distribution(NMT_ARCH_RNNSEARCH, 2.0, 3, 1.0, 0, 1, 1.0);
    test_distribution(NMT_ARCH_RNNSEARCH, 1.0, 2, 1.0, 1, 1, 1.0);
    test_distribution(NMT_ARCH_RNNSEARCH, 1.0, 0, 1.0, 1, 0, 1.0); /* no UNK among all words; ranked by logprob */
    test_distribution(NMT_ARCH_RNNSEARCH, 1.0, V - 1, 1.0, 0, 1, 0.6); /* the one word left out; length^0.6 */
    test_distribution(NMT_ARCH_RNNSEARCH, 1.0, 0, 0.7, 0, 1, 1.0); /* the nucleus */
    test_distribution(NMT_ARCH_RNNSEARCH, 0.8, 4, 0.85, 1, 1, 1.0); /* top-k, then the nucleus, without UNK */
    test_distribution(NMT_ARCH_RNNSEARCH, 1.0, 3, 0.8, 0, 1, 1.0); /* the top 3, then the nucleus; untempered weights */
    test_distribution(NMT_ARCH_RNNSEARCH, 1.0, 0, 0.8, 1, 1, 1.0); /* the nucleus of all words but UNK */
    test_distribution(NMT_ARCH_FERTDEC, 1.5, 0, 0.9, 0, 1, 1.0);
    test_cold();
    test_api();
    test_nonfinite();
    return test_done("test_sample");
}
