/* test_beam.c: beam search checked against independent results: the reference's beam-3 and
 * greedy outputs in the golden file; exhaustive search over every sequence of a tiny model
 * (scored by forced decoding through the training forward pass); an explicit greedy loop for
 * beam 1; n-best order and distinctness; and independence from batching. */
/* kernel sets: all: the search against exhaustive search and forced decoding (tests/cli/kernels.sh) */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "decode/beam.h"
#include "base/err.h"
#include "nn/net.h"
#include "io/safetensors.h"
#include "helpers.h"
#include "test.h"
#include "tiny_model.h"
#include "data/vocab.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

static rng R;

/* Beam search by the one model m over its workspace w: an ensemble of m alone, whose arithmetic
 * is the model's own (decode/ensemble.h). */
static int search_one(beam_sent *out, infer_ws *w, const nmt_model *m, const batch *src, const beam_opts *o)
{
    infer_ens e = ens_one(&m, w);
    return beam_search_ens(out, &e, src, o, NULL);
}

/* ---------------------------------------------------------------- golden */
static void test_golden(const char *shared)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/golden/golden_rnnsearch.json", shared);
    char *js = test_slurp(path, NULL);
    CHECKF(js != NULL, "%s missing", path);
    if (!js) return;
    cJSON *J = cJSON_Parse(js), *cf = cJSON_GetObjectItem(J, "config");
    nmt_config c = {NMT_ARCH_RNNSEARCH, cJSON_GetObjectItem(cf, "Vs")->valueint, cJSON_GetObjectItem(cf, "Vt")->valueint,
                    cJSON_GetObjectItem(cf, "m")->valueint, cJSON_GetObjectItem(cf, "n")->valueint,
                    cJSON_GetObjectItem(cf, "na")->valueint, cJSON_GetObjectItem(cf, "l")->valueint, 2, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    nmt_model *m = tiny_model(c, 0);
    snprintf(path, sizeof path, "%s/golden/golden_rnnsearch.safetensors", shared);
    st_file *sf;
    NMT_ASSERT(st_load(&sf, path, NULL) == 0);
    for (int i = 0; i < m->pt.n; i++) {
        char name[128];
        snprintf(name, sizeof name, "param.%s", m->pt.t[i].name);
        size_t cnt = (size_t)m->pt.t[i].rows * m->pt.t[i].cols;
        double *d = malloc(sizeof(double) * cnt);
        NMT_ASSERT(st_read_f64(sf, name, d, cnt, NULL) == 0);
        for (size_t k = 0; k < cnt; k++) m->P[m->pt.t[i].offset + k] = (real)d[k];
        free(d);
    }
    st_free(sf);
    cJSON *res = cJSON_GetObjectItem(cJSON_GetObjectItem(J, "beam_search"), "results");
    infer_ws w = {0};
    int idx = 0;
    for (cJSON *it = res->child; it; it = it->next, idx++) {
        cJSON *srcj = cJSON_GetObjectItem(it, "src");
        int sl = cJSON_GetArraySize(srcj), src[64];
        for (int i = 0; i < sl; i++) src[i] = cJSON_GetArrayItem(srcj, i)->valueint;
        int *sp = src;
        batch b;
        tiny_batch(&b, &sp, &sl, 1);
        for (int K = 3; K >= 1; K -= 2) {
            beam_opts o = {K, 1, 3.0, 0, 1, 0, 1.0, 0, 1.0, NULL, 1.0, NULL, 0};
            beam_sent out;
            NMT_ASSERT(search_one(&out, &w, m, &b, &o) == 0);
            cJSON *tj = cJSON_GetObjectItem(it, K == 3 ? "beam3_tokens" : "greedy_tokens");
            double want = cJSON_GetObjectItem(it, K == 3 ? "beam3_logprob" : "greedy_logprob")->valuedouble;
            beam_hyp *h = &out.hyp[0];
            int len = h->len - h->finished; /* the reference lists words without EOS */
            int same = len == cJSON_GetArraySize(tj);
            for (int i = 0; same && i < len; i++) same = h->tok[i] == cJSON_GetArrayItem(tj, i)->valueint;
            CHECKF(same, "golden sentence %d, beam %d: tokens differ from the reference", idx, K);
            CHECKF(fabs(h->logprob - want) <= 1e-5 * fabs(want), "golden sentence %d, beam %d: logprob %.8f, reference %.8f",
                   idx, K, h->logprob, want);
            printf("golden sentence %d beam %d: %d words, logprob %.6f (reference %.6f)\n", idx, K, len, h->logprob, want);
            beam_sent_free(&out);
        }
        free(b.x); free(b.xlen);
    }
    infer_free(&w);
    nmt_model_free(m);
    cJSON_Delete(J);
    free(js);
}

/* ---------------------------------------------------------------- exhaustive */
/* a small Transformer of Kx, Ky words: 2 + 2 layers, d 8, 2 heads, untied */
static nmt_config tf_small(int Kx, int Ky, int post)
{
    nmt_config c = nmt_config_transformer();
    c.src_vocab = Kx, c.tgt_vocab = Ky;
    c.emb = c.hid = c.att = c.maxout = 8;
    c.heads = 2, c.ffn = 12, c.enc_depth = c.dec_depth = 2, c.tied_emb = 0, c.post_norm = post;
    return c;
}

static void test_exhaustive(nmt_config c)
{
    int arch = c.arch;
    nmt_model *m = tiny_random_model(c, &R, 0.8);
    int src[3] = {3, 4, 0}, sl = 3, *sp = src;
    double ratio = 1.0; /* max length 3 */
    int L = beam_max_len(ratio, sl), V = c.tgt_vocab;
    /* every finished sequence (ends in EOS, length <= L) and every cut one (length L, no EOS) */
    double best = -INFINITY, best_raw = -INFINITY, best_a = -INFINITY; /* best_a: length^0.6, Marian's usual */
    int seq[8], total = 0, len = 0;
    long code = 0;
    while (next_sequence(seq, &len, &code, V, L)) {
        double lp = forced_logp(m, src, sl, seq, len);
        total++;
        if (lp / len > best) best = lp / len;
        if (lp > best_raw) best_raw = lp;
        if (lp / pow(len, 0.6) > best_a) best_a = lp / pow(len, 0.6);
    }
    infer_ws w = {0};
    batch b;
    tiny_batch(&b, &sp, &sl, 1);
    for (int mode = 0; mode < 3; mode++) { /* raw; / length; / length^0.6 */
        int norm = mode > 0;
        double alpha = mode == 2 ? 0.6 : 1.0;
        beam_opts o = {V * V * V, norm, ratio, 0, 3, 0, alpha, 0, 1.0, NULL, 1.0, NULL, 0};
        beam_sent out;
        NMT_ASSERT(search_one(&out, &w, m, &b, &o) == 0);
        double want = mode == 2 ? best_a : norm ? best : best_raw;
        CHECKF(fabs(out.hyp[0].score - want) <= 1e-5 * fabs(want), "%s: wide beam %.8f, exhaustive best %.8f (mode %d)",
               nmt_arch_name(arch), out.hyp[0].score, want, mode);
        /* n-best: sorted and distinct */
        for (int i = 1; i < out.n; i++) {
            CHECK(out.hyp[i].score <= out.hyp[i - 1].score);
            CHECK(out.hyp[i].len != out.hyp[i - 1].len ||
                  memcmp(out.hyp[i].tok, out.hyp[i - 1].tok, sizeof(int) * out.hyp[i].len) != 0);
        }
        /* every beam's answer is a real sequence's score, and never better than the optimum */
        for (int K = 1; K <= 4; K++) {
            beam_opts o2 = {K, norm, ratio, 0, 1, 0, alpha, 0, 1.0, NULL, 1.0, NULL, 0};
            beam_sent o2out;
            NMT_ASSERT(search_one(&o2out, &w, m, &b, &o2) == 0);
            beam_hyp *h = &o2out.hyp[0];
            double lp = forced_logp(m, src, sl, h->tok, h->len);
            CHECKF(fabs(lp - h->logprob) <= 1e-5 * fabs(lp), "beam %d: logprob %.8f, forced decoding %.8f", K, h->logprob, lp);
            CHECK(h->score <= want + 1e-6 * fabs(want));
            beam_sent_free(&o2out);
        }
        beam_sent_free(&out);
    }
    printf("%s: exhaustive search over %d sequences agrees with a wide beam\n", nmt_arch_name(arch), total);
    free(b.x); free(b.xlen);
    infer_free(&w);
    nmt_model_free(m);
}

/* ---------------------------------------------------------------- greedy, batching */
static void test_greedy_and_batching(nmt_config c)
{
    int arch = c.arch;
    nmt_model *m = tiny_random_model(c, &R, 0.5);
    enum { S = 5 };
    int lens[S] = {4, 7, 1, 9, 3}, *src[S];
    tiny_sources(&R, src, lens, S, 18);
    batch all;
    tiny_batch(&all, src, lens, S);
    infer_ws w = {0};
    beam_opts o1 = {1, 1, 2.0, 0, 1, 1, 1.0, 0, 1.0, NULL, 1.0, NULL, 0};
    beam_sent g[S];
    NMT_ASSERT(search_one(g, &w, m, &all, &o1) == 0);
    /* explicit greedy: argmax at every step, one sentence at a time */
    int same = 1;
    for (int s = 0; s < S; s++) {
        batch one;
        tiny_batch(&one, &src[s], &lens[s], 1);
        NMT_ASSERT(infer_reserve(TX, &w, &m->cfg, 1, one.Tx, 1, 64, NULL) == 0);
        infer_encode(&w, m, &one);
        real st[2][64];
        int dim = infer_state_dim(&m->cfg, one.Tx);
        infer_init_states(TX, &w, &m->cfg, st[0], dim, 1, one.Tx);
        int y = -1, out[64], nout = 0, maxl = beam_max_len(2.0, lens[s]), src0 = 0;
        for (int t = 0; t < maxl; t++) {
            infer_step(&w, m, &one, 1, &src0, &y, st[t & 1], st[(t + 1) & 1], dim);
            int best = 0;
            for (int v = 1; v < c.tgt_vocab; v++) if (w.logits[v] > w.logits[best]) best = v;
            out[nout++] = best;
            if (best == 0) break;
            y = best;
        }
        same &= nout == g[s].hyp[0].len && !memcmp(out, g[s].hyp[0].tok, sizeof(int) * nout);
        free(one.x); free(one.xlen);
    }
    CHECKF(same, "%s: beam 1 differs from step-by-step greedy decoding", nmt_arch_name(arch));
    /* beam 5 in one batch = each sentence alone, and the attention rows sum to 1 */
    beam_opts o5 = {5, 1, 2.0, 1, 5, 1, 1.0, 0, 1.0, NULL, 1.0, NULL, 0};
    beam_sent b5[S];
    NMT_ASSERT(search_one(b5, &w, m, &all, &o5) == 0);
    int indep = 1, no_unk = 1;
    double rowsum_err = 0;
    for (int s = 0; s < S; s++) {
        batch one;
        tiny_batch(&one, &src[s], &lens[s], 1);
        beam_sent a;
        NMT_ASSERT(search_one(&a, &w, m, &one, &o5) == 0);
        indep &= a.n == b5[s].n;
        for (int i = 0; indep && i < a.n; i++)
            indep &= a.hyp[i].len == b5[s].hyp[i].len && !memcmp(a.hyp[i].tok, b5[s].hyp[i].tok, sizeof(int) * a.hyp[i].len) &&
                     fabs(a.hyp[i].score - b5[s].hyp[i].score) <= 1e-5 * fabs(a.hyp[i].score);
        for (int i = 0; i < b5[s].n; i++)
            for (int d = 0; d < b5[s].hyp[i].len; d++) {
                no_unk &= b5[s].hyp[i].tok[d] != VOCAB_UNK;
                if (arch != NMT_ARCH_RNNENC) {
                    double sum = 0;
                    for (int j = 0; j < lens[s]; j++) sum += b5[s].hyp[i].attn[(size_t)d * lens[s] + j];
                    rowsum_err = fmax(rowsum_err, fabs(sum - 1));
                }
            }
        beam_sent_free(&a);
        free(one.x); free(one.xlen);
    }
    CHECKF(indep, "%s: a sentence decodes differently alone and in a batch", nmt_arch_name(arch));
    CHECKF(no_unk, "%s: --no-unk emitted UNK", nmt_arch_name(arch));
    CHECKF(rowsum_err < 1e-5, "attention rows sum to 1 +- %.2g", rowsum_err);
    for (int s = 0; s < S; s++) { beam_sent_free(&g[s]); beam_sent_free(&b5[s]); free(src[s]); }
    free(all.x); free(all.xlen);
    infer_free(&w);
    nmt_model_free(m);
}

/* ---------------------------------------------------------------- ties */
/* W_o = 0 and a bias of 1 on words 20..39: twenty words tie for the best log-probability at every
 * step, more than a row's candidate list holds at beam 3 (its scan of the whole row takes over)
 * and fewer than it holds at beam 5; ties go to the lower (row, word) index either way. */
static void test_ties(int arch)
{
    nmt_config c = {arch, 6, 40, 4, 5, 4, 3, 1, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    nmt_model *m = tiny_random_model(c, &R, 0.5);
    memset(m->p.out_W, 0, sizeof(real) * c.maxout * c.tgt_vocab);
    for (int v = 0; v < c.tgt_vocab; v++) m->p.out_bias[v] = v >= 20 ? 1 : 0;
    int src[4] = {3, 4, 2, 0}, sl = 4, *sp = src;
    infer_ws w = {0};
    batch b;
    tiny_batch(&b, &sp, &sl, 1);
    double lp1 = 1 - log(20 * exp(1.0) + 20); /* each step's log p of a tied word */
    for (int K = 3; K <= 5; K += 2) {
        beam_opts o = {K, 0, 0.75, 0, K, 0, 1.0, 0, 1.0, NULL, 1.0, NULL, 0}; /* max length 3 */
        beam_sent out;
        NMT_ASSERT(search_one(&out, &w, m, &b, &o) == 0);
        CHECKF(out.n == K, "beam %d: %d hypotheses", K, out.n);
        const beam_hyp *h = &out.hyp[0];
        CHECKF(h->len == 3 && h->tok[0] == 20 && h->tok[1] == 20 && h->tok[2] == 20 && !h->finished,
               "beam %d: best is not the lowest-index tie 20 20 20 (length %d, first word %d)", K, h->len, h->tok[0]);
        CHECKF(fabs(h->logprob - 3 * lp1) <= 1e-5, "beam %d: logprob %.8f, want %.8f", K, h->logprob, 3 * lp1);
        for (int i = 1; i < out.n; i++) /* the runners-up differ in the last word only, in order */
            CHECKF(out.hyp[i].len == 3 && out.hyp[i].tok[1] == 20 && out.hyp[i].tok[2] == 20 + i,
                   "beam %d: hypothesis %d is not 20 20 %d", K, i, 20 + i);
        beam_sent_free(&out);
    }
    free(b.x); free(b.xlen);
    infer_free(&w);
    nmt_model_free(m);
}

/* The length limit is floor(ratio x source length), also where the product is not exact in
 * doubles (1.16 x 25 = 28.999...: the limit once came out one token short). */
static void test_max_len(void)
{
    CHECK(beam_max_len(1.16, 25) == 29);
    CHECK(beam_max_len(1.12, 25) == 28);
    CHECK(beam_max_len(3.0, 7) == 21);
    CHECK(beam_max_len(0.01, 5) == 1); /* at least one token */
    int wrong = 0, first_r = 0, first_len = 0;
    for (int len = 1; len <= 400; len++)
        for (int r100 = 1; r100 <= 500; r100++) {
            int want = r100 * len / 100; /* exact in integers */
            if (want < 1) want = 1;
            if (beam_max_len(r100 / 100.0, len) != want && !wrong++) first_r = r100, first_len = len;
        }
    CHECKF(!wrong, "%d ratio/length pairs off, the first ratio %d/100 at length %d", wrong, first_r, first_len);
}

int main(void)
{
    const char *shared = getenv("NMT_SHARED");
    rng_seed(&R, 4242);
    test_max_len();
    test_golden(shared ? shared : "../shared");
    for (int arch = 0; arch < NMT_ARCH_RNN_COUNT; arch++) {
        test_exhaustive((nmt_config){arch, 6, 5, 4, 5, 4, 3, 1, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
        test_greedy_and_batching((nmt_config){arch, 20, 15, 6, 8, 7, 5, 2, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
        test_ties(arch);
    }
    /* the Transformer through the same search: its key/value cache reordered at every step */
    for (int post = 0; post < 2; post++) {
        test_exhaustive(tf_small(6, 5, post));
        test_greedy_and_batching(tf_small(20, 15, post));
    }
    return test_done("test_beam");
}
