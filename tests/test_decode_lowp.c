/* test_decode_lowp.c: decoding in lower precision and with a lexical shortlist (decode/outlayer.c,
 * decode/shortlist.c), through the public API, against independent results, for RNNsearch and
 * for a Transformer (whose converted decoder weights are checked one by one):
 *   - int8 and bf16 against FP32 on a small model: the same 1-best on most sentences, and every
 *     n-best hypothesis's search log-probability within a stated tolerance of FP32 forced decoding
 *     of the same tokens through the training forward pass;
 *   - a shortlist holding the whole vocabulary changes no bit (words, scores, attention), with
 *     untied and tied output weights, in FP32 and int8;
 *   - a small shortlist: every output word lies in the set worked out here from the table, and
 *     each hypothesis's log-probability is the training forward pass's distribution renormalised
 *     over that set (Marian's softmax over the shortlist);
 *   - refusals: a malformed table names file:line; a bad count, K < 0, an unknown precision, a
 *     shortlist of another model's vocabularies.
 * The lower precisions are checked only where the CPU has them (nmt_precision_supported), int8
 * in the form this CPU runs (under ONEDNN_MAX_CPU_ISA=AVX2 the AVX2 one: tests/cli/kernels.sh). */
/* kernel sets: all: low-precision decoding against FP32 (tests/cli/kernels.sh) */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cpu/dnnl_cpu.h"
#include "base/err.h"
#include "base/rng.h"
#include "nn/net.h"
#include "nn/transformer.h"
#include "nn/weights.h"
#include "helpers.h"
#include "test.h"
#include "tiny_model.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

static rng R;
static char dir[] = "/tmp/test_decode_lowp.XXXXXX";

enum { NS = 24, KX = 30, KY = 26 };
static char *SRC[NS];

/* Writes text to dir/name; the path in a static buffer of its own per call site's slot k. */
static const char *write_file(int k, const char *name, const char *text)
{
    static char path[4][512];
    NMT_ASSERT(test_write_in(dir, name, text, path[k], sizeof path[k]) == 0);
    return path[k];
}

/* the family the tests below run on: the recurrent one first, then the Transformer's */
static int TF;

static nmt_model *model_of(int tied, double sd)
{
    nmt_config c = {NMT_ARCH_RNNSEARCH, KX, KY, 16, 24, 16, 16, 1, 1.0, 1.0, tied, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    if (TF) { /* d 16, 2 + 2 layers, 2 heads, feed-forward 24, pre-norm, sinusoids */
        c = nmt_config_transformer();
        c.src_vocab = KX, c.tgt_vocab = KY, c.emb = c.hid = c.att = c.maxout = 16, c.tied_emb = tied;
        c.enc_depth = c.dec_depth = 2, c.heads = 2, c.ffn = 24;
    }
    nmt_model *m = tiny_random_model(c, &R, sd);
    if (TF) /* the layer norms' gains about 1, as trained ones are, so that sd sets the logits' scale */
        for (int i = 0; i < m->pt.n; i++)
            if (m->pt.t[i].init == INIT_ONE)
                for (size_t k = 0; k < (size_t)m->pt.t[i].rows * m->pt.t[i].cols; k++) m->P[m->pt.t[i].offset + k] += 1;
    return m;
}

/* n-best translations of SRC by m with the given precision and shortlist */
static void translate(nmt_translation *out, const nmt_model *m, int prec, const nmt_shortlist *sl, int per_batch)
{
    nmt_translate_opts o = nmt_translate_default_opts();
    o.beam = 5;
    o.n_best = 5;
    o.attention = 1;
    o.batch = per_batch;
    o.precision = prec;
    o.shortlist = sl;
    nmt_decoder *d;
    nmt_err err;
    if (nmt_decoder_init(&d, m, &o, &err) || nmt_translate(d, (const char *const *)SRC, NS, out, &err)) {
        fprintf(stderr, "FAIL: %s\n", err.msg);
        exit(1);
    }
    nmt_decoder_free(d);
}

/* ---------------------------------------------------------------- int8, bf16 against FP32 */

/* log p of a hypothesis's words, and of its EOS when it has one, by FP32 forced decoding through
 * the training forward pass (src: the sentence's ids, EOS last) */
static double forced_words(const nmt_model *m, int *src, int sl, const nmt_hypothesis *y)
{
    int tgt[64], tl = y->n_words + 1;
    real lp[64];
    NMT_ASSERT(tl <= 64);
    memcpy(tgt, y->ids, sizeof(int) * y->n_words);
    tgt[y->n_words] = 0;
    batch b = {.B = 1, .Tx = sl, .Ty = tl, .x = src, .y = tgt, .xlen = &sl, .ylen = &tl};
    net_ws ws = {0};
    NMT_ASSERT(net_ws_reserve(TX, &ws, &m->cfg, 1, sl, tl, NULL) == 0);
    net_forward(TX, &ws, &m->cfg, &m->p, &b, lp);
    net_ws_free(&ws);
    double s = 0;
    for (int t = 0; t < y->n_words + y->finished; t++) s += lp[t];
    return s;
}

/* sentence i's ids with EOS into src; its length returned */
static int src_ids(int *src, int i)
{
    char copy[256], *save, *w;
    int n = 0;
    snprintf(copy, sizeof copy, "%s", SRC[i]);
    for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) src[n++] = atoi(w + 1);
    src[n] = 0;
    return n + 1;
}

/* The search's log p of every n-best hypothesis of prec against FP32 forced decoding of the same
 * tokens: |difference| <= tol_tok per token. Returns the largest. */
static double scores_against_fp32(const nmt_model *m, const nmt_translation *t, double tol_tok, const char *name)
{
    double worst = 0;
    for (int i = 0; i < NS; i++) {
        int src[64], sl = src_ids(src, i);
        for (int h = 0; h < t[i].n_hyps; h++) {
            const nmt_hypothesis *y = &t[i].hyps[h];
            double lp = forced_words(m, src, sl, y), diff = fabs(y->logprob - lp) / (y->n_words + y->finished);
            if (diff > worst) worst = diff;
            CHECKF(diff <= tol_tok, "%s: sentence %d hypothesis %d: log p %.6f, FP32 forced decoding %.6f (%d tokens)", name,
                   i, h, y->logprob, lp, y->n_words + y->finished);
        }
    }
    return worst;
}

static void test_precision(int prec, const char *name, double tol_tok)
{
    if (!nmt_precision_supported(prec)) {
        printf("%s: not on this CPU, not checked\n", name);
        return;
    }
    nmt_model *m = model_of(0, 0.3);
    nmt_translation f[NS], q[NS];
    translate(f, m, NMT_PREC_FP32, NULL, 64);
    translate(q, m, prec, NULL, 64);
    int same = 0;
    for (int i = 0; i < NS; i++)
        same += f[i].n_hyps == q[i].n_hyps && f[i].hyps[0].n_words == q[i].hyps[0].n_words &&
                !memcmp(f[i].hyps[0].ids, q[i].hyps[0].ids, sizeof(int) * f[i].hyps[0].n_words);
    CHECKF(same >= NS * 3 / 4, "%s: the same 1-best as FP32 on %d of %d sentences", name, same, NS);
    double worst = scores_against_fp32(m, q, tol_tok, name);
    printf("%s: 1-best as FP32 on %d of %d sentences; n-best log p within %.2g per token of FP32 forced decoding "
           "(allowed %.2g)\n", name, same, NS, worst, tol_tok);
    nmt_translation_free(f, NS);
    nmt_translation_free(q, NS);
    nmt_model_free(m);
}

/* ---------------------------------------------------------------- the whole vocabulary */

static void test_full_shortlist(int tied, int prec)
{
    if (!nmt_precision_supported(prec)) {
        printf("whole-vocabulary shortlist, precision %d: not on this CPU, not checked\n", prec);
        return;
    }
    nmt_model *m = model_of(tied, 0.5);
    /* a table with entries, and F past the vocabulary: every word is in every batch's set */
    const char *path = write_file(0, "all.tsv", "w3\tw5\t4\t9\nw3\tw7\t5\t9\nw4\tw2\nw9\tzzz\t2\t2\n");
    nmt_shortlist *sl;
    nmt_err err;
    NMT_ASSERT(nmt_shortlist_load(&sl, path, m, 2, 1000, &err) == 0);
    nmt_translation a[NS], b[NS];
    translate(a, m, prec, NULL, 7);
    translate(b, m, prec, sl, 7);
    CHECKF(same_translations(a, b, NS), "tied %d, precision %d: the whole vocabulary as a shortlist changed the output",
           tied, prec);
    nmt_translation_free(b, NS);
    nmt_shortlist_free(sl);
    /* any F past the vocabulary is the whole of it, INT_MAX too (F + 2 once overflowed there) */
    NMT_ASSERT(nmt_shortlist_load(&sl, path, m, 2, INT_MAX, &err) == 0);
    translate(b, m, prec, sl, 7);
    CHECKF(same_translations(a, b, NS), "tied %d, precision %d: F = INT_MAX changed the output", tied, prec);
    nmt_translation_free(a, NS);
    nmt_translation_free(b, NS);
    nmt_shortlist_free(sl);
    nmt_model_free(m);
}

/* ---------------------------------------------------------------- a small shortlist */

/* The table of the test: source word, target, count (ranked by count per source word). */
static const struct { int s, t, count; } TABLE[] = {
    {3, 9, 4}, {3, 12, 7}, {3, 20, 1}, {5, 21, 3}, {7, 14, 2}, {7, 22, 2}, {7, 25, 9}, {11, 17, 1}, {2, 23, 5},
};
enum { NT = sizeof TABLE / sizeof *TABLE, K = 2, F = 3 };
/* the file lists TABLE's entry (5 l) mod NT on line l, so entry e on line LINE(e) (5 · 2 = 1 mod 9) */
#define LINE(e) ((2 * (e)) % NT)

/* in[v] = 1 for the set of sentence src (ids, n words): EOS, UNK, ids 2 .. F+1, and each word's
 * K best targets by count (ties to the earlier line), worked out from TABLE directly */
static void set_of(unsigned char *in, const int *src, int n)
{
    memset(in, 0, KY);
    for (int v = 0; v < F + 2; v++) in[v] = 1;
    for (int i = 0; i < n; i++)
        for (int e = 0; e < NT; e++) {
            if (TABLE[e].s != src[i]) continue;
            int better = 0; /* entries of the same source word ranked above e: more counts, or as many on an earlier line */
            for (int o = 0; o < NT; o++)
                better += TABLE[o].s == src[i] &&
                          (TABLE[o].count > TABLE[e].count || (TABLE[o].count == TABLE[e].count && LINE(o) < LINE(e)));
            if (better < K) in[TABLE[e].t] = 1;
        }
}

/* log p of tgt[0..tl) over the set in[]: the training forward pass's softmax over the whole
 * vocabulary (out.logits, a Transformer's tf.logits: e^{z - max z} per position), renormalised
 * over the set */
static double set_logp(const nmt_model *m, int *src, int sl, int *tgt, int tl, const unsigned char *in)
{
    batch b = {.B = 1, .Tx = sl, .Ty = tl, .x = src, .y = tgt, .xlen = &sl, .ylen = &tl};
    net_ws ws = {0};
    NMT_ASSERT(net_ws_reserve(TX, &ws, &m->cfg, 1, sl, tl, NULL) == 0);
    net_forward(TX, &ws, &m->cfg, &m->p, &b, NULL);
    double lp = 0;
    for (int t = 0; t < tl; t++) {
        const real *e = (TF ? ws.tf.logits : ws.out.logits) + (size_t)t * KY; /* one sentence: row t is position t */
        double z = 0;
        for (int v = 0; v < KY; v++) z += in[v] ? e[v] : 0;
        lp += log(e[tgt[t]] / z);
    }
    net_ws_free(&ws);
    return lp;
}

static void test_small_shortlist(int tied)
{
    nmt_model *m = model_of(tied, 0.5);
    char text[1024];
    size_t k = 0;
    for (int l = 0; l < NT; l++) { /* in another order than TABLE's: the ranking comes from the counts */
        int e = (l * 5) % NT;
        k += (size_t)snprintf(text + k, sizeof text - k, "w%d\tw%d\t%d\t%d\n", TABLE[e].s, TABLE[e].t, TABLE[e].count, 99);
    }
    nmt_shortlist *sl;
    NMT_ASSERT(nmt_shortlist_load(&sl, write_file(1, "small.tsv", text), m, K, F, NULL) == 0);
    nmt_translation t[NS];
    translate(t, m, NMT_PREC_FP32, sl, 1); /* one sentence per batch: each its own set */
    double worst = 0;
    int checked = 0, outside = 0;
    for (int i = 0; i < NS; i++) {
        int src[64], n = src_ids(src, i) - 1, tgt[64];
        unsigned char in[KY];
        set_of(in, src, n);
        for (int h = 0; h < t[i].n_hyps; h++) {
            const nmt_hypothesis *y = &t[i].hyps[h];
            for (int j = 0; j < y->n_words; j++) {
                outside += !in[y->ids[j]];
                tgt[j] = y->ids[j];
            }
            if (!y->finished) continue;
            tgt[y->n_words] = 0;
            double want = set_logp(m, src, n + 1, tgt, y->n_words + 1, in), d = fabs(y->logprob - want);
            if (d > worst) worst = d;
            checked++;
            CHECKF(d <= 1e-4 * (1 + fabs(want)), "tied %d: sentence %d hypothesis %d: log p %.7f, over the set %.7f", tied, i,
                   h, y->logprob, want);
        }
    }
    CHECKF(outside == 0, "tied %d: %d output words outside the shortlist", tied, outside);
    printf("small shortlist (tied %d): %d hypotheses, log p within %.2g of the forward pass renormalised over the set\n",
           tied, checked, worst);
    nmt_translation_free(t, NS);
    nmt_shortlist_free(sl);
    nmt_model_free(m);
}

/* ---------------------------------------------------------------- a Transformer's converted weights */

/* Every weight a Transformer's search step multiplies by has its converted form, of its own
 * shape, and nothing else does: the encoder's, and the decoder's encoder-decoder keys and values
 * (projected from the FP32 encoder once per sentence), stay FP32. (A tolerance on the scores
 * alone would pass a decoder left in FP32.) */
static void test_tf_converted(int prec, int bkp, const char *name)
{
    if (!nmt_precision_supported(prec)) return;
    nmt_model *m = model_of(0, 0.3);
    const model_lowp *lw;
    NMT_ASSERT(model_lowp_get(m, bkp, &lw, NULL) == 0);
    static const int step[] = {TF_SELF_WQKV, TF_SELF_WO, TF_CTX_WQ, TF_CTX_WO, TF_FFN_W1, TF_FFN_W2};
    int d = m->cfg.emb, f = m->cfg.ffn, shape[][2] = {{d, 3 * d}, {d, d}, {d, d}, {d, d}, {d, f}, {f, d}};
    params pv = m->p;
    pv.tw = lw->tw;
    for (int l = 0; l < m->cfg.dec_depth; l++)
        for (int k = 0; k < 6; k++) {
            bk_weight w = tf_weight(&pv, TF_DEC, l, step[k]);
            CHECKF(w.q && w.dtype == bkp && w.K == shape[k][0] && w.N == shape[k][1],
                   "%s: decoder layer %d weight %d: converted %d, %dx%d", name, l, step[k], w.q != NULL, w.K, w.N);
        }
    for (int l = 0; l < m->cfg.enc_depth; l++)
        CHECKF(!tf_weight(&pv, TF_ENC, l, TF_SELF_WQKV).q && !tf_weight(&pv, TF_ENC, l, TF_FFN_W1).q,
               "%s: encoder layer %d converted", name, l);
    CHECKF(!tf_weight(&pv, TF_DEC, 0, TF_CTX_WKV).q, "%s: the encoder-decoder keys and values converted", name);
    CHECKF(lw->out.q && lw->out.K == d && lw->out.N == KY, "%s: the output layer: %dx%d", name, lw->out.K, lw->out.N);
    CHECKF(lw->maxK >= f && lw->maxN >= KY, "%s: the scratch's widest product %dx%d", name, lw->maxK, lw->maxN);
    nmt_model_free(m);
}

/* ---------------------------------------------------------------- refusals */

static void test_refusals(void)
{
    nmt_model *m = model_of(0, 0.5);
    nmt_shortlist *sl = NULL;
    nmt_err err = {0};
    const char *bad = write_file(2, "bad.tsv", "w3\tw4\t1\t1\n\nw5 w6\n");
    CHECK(nmt_shortlist_load(&sl, bad, m, 5, 5, &err) == NMT_ERR_FORMAT && !sl);
    CHECKF(strstr(err.msg, "bad.tsv:3: expected 'source<TAB>target"), "message: %s", err.msg);
    const char *badc = write_file(3, "badc.tsv", "w3\tw4\tmany\t1\n");
    CHECK(nmt_shortlist_load(&sl, badc, m, 5, 5, &err) == NMT_ERR_FORMAT);
    CHECKF(strstr(err.msg, "badc.tsv:1: count 'many' is not a positive integer"), "message: %s", err.msg);
    CHECK(nmt_shortlist_load(&sl, badc, m, -1, 5, &err) == NMT_ERR_ARG);
    CHECK(nmt_shortlist_load(&sl, "/nonexistent/x.tsv", m, 5, 5, &err) == NMT_ERR_IO);
    nmt_translate_opts o = nmt_translate_default_opts();
    nmt_decoder *d = NULL;
    o.precision = 7;
    CHECK(nmt_decoder_init(&d, m, &o, &err) == NMT_ERR_ARG && !d);
    CHECKF(strstr(err.msg, "precision 7"), "message: %s", err.msg);
    /* a shortlist of other vocabularies */
    nmt_config c = m->cfg;
    c.tgt_vocab = KY + 3;
    nmt_model *other = tiny_model(c, 0);
    NMT_ASSERT(nmt_shortlist_load(&sl, write_file(2, "ok.tsv", "w3\tw4\n"), other, 5, 5, NULL) == 0);
    o = nmt_translate_default_opts();
    o.shortlist = sl;
    CHECK(nmt_decoder_init(&d, m, &o, &err) == NMT_ERR_ARG && !d);
    CHECKF(strstr(err.msg, "other vocabularies"), "message: %s", err.msg);
    nmt_shortlist_free(sl);
    nmt_model_free(other);
    nmt_model_free(m);
}

int main(int argc, char **argv)
{
    (void)argc; (void)argv;
    NMT_ASSERT(mkdtemp(dir));
    rng_seed(&R, 23);
    for (int i = 0; i < NS; i++) {
        char buf[256];
        size_t k = 0;
        int n = 1 + (int)rng_below(&R, 9);
        for (int j = 0; j < n; j++) k += (size_t)snprintf(buf + k, sizeof buf - k, "%sw%d", j ? " " : "", 2 + (int)rng_below(&R, KX - 2));
        SRC[i] = strdup(buf);
    }
    nmt_set_threads(1);
    /* tolerance per target token: the recurrent model gives at most 0.008 (int8) and 0.006
     * (bf16); 0.02 leaves a margin of 2.5, and int8 with its scales 2% off goes past it (0.07).
     * int8's AVX2 form, whose weights keep 31 levels, gives 0.033: the tolerance grows with the
     * step. The Transformer's decoder makes 13 products in a row where the recurrent one makes 4:
     * int8 0.017, its AVX2 form 0.107; its tolerance is twice as wide */
    for (TF = 0; TF < 2; TF++) {
        printf("%s:\n", TF ? "a Transformer" : "RNNsearch");
        test_precision(NMT_PREC_INT8, "int8", (TF ? 0.04 : 0.02) * 127 / dnnl_cpu_int8_wlevels());
        test_precision(NMT_PREC_BF16, "bf16", 0.02);
        for (int tied = 0; tied < 2; tied++) {
            test_full_shortlist(tied, NMT_PREC_FP32);
            test_full_shortlist(tied, NMT_PREC_INT8);
            test_small_shortlist(tied);
        }
        test_refusals();
    }
    TF = 1;
    test_tf_converted(NMT_PREC_INT8, BK_PREC_INT8, "int8");
    test_tf_converted(NMT_PREC_BF16, BK_PREC_BF16, "bf16");
    for (int i = 0; i < NS; i++) free(SRC[i]);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    NMT_ASSERT(system(cmd) == 0);
    return test_done("test_decode_lowp");
}
