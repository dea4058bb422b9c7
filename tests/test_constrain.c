/* test_constrain.c: prefix-constrained and lexically constrained decoding (nmt_translate_hints),
 * checked against what does not come from the search: the phrase bookkeeping against states
 * worked out by hand; the hypotheses of many random sentences (beams 1, 5 and 12, n-best)
 * counted to hold every phrase (every finished one, and each sentence's best) and to begin with
 * their prefix; each one's log-probability against
 * forced decoding through the training forward pass; sentences without hints bit for bit as
 * nmt_translate gives them; and the refusals of bad hints. */
/* kernel sets: all: hinted sentences beside plain ones in a batch (tests/cli/kernels.sh) */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "decode/constrain.h"
#include "nn/net.h"
#include "test.h"
#include "tiny_model.h"

static rng R;

/* ---------------------------------------------------------------- the bookkeeping, by hand */

static void test_states(void)
{
    /* phrases [5 6] and [7]: 3 constraint tokens, banks 0..3 */
    int off[3] = {0, 2, 3}, tok[3] = {5, 6, 7};
    beam_hint h = {0, NULL, 2, off, tok};
    CHECK(cons_tokens(&h) == 3);
    cons_state s = cons_next(&h, cons_start(), 5);
    CHECK(s.cur == 0 && s.pos == 1 && s.nmet == 1 && s.met == 0);
    int want[4], n = cons_wanted(&h, &s, want);
    CHECKF(n == 3 && want[0] == 6 && want[1] == 5 && want[2] == 7, "wanted %d: %d %d %d", n, want[0], want[1], want[2]);
    cons_state a = cons_next(&h, s, 6); /* completes [5 6] */
    CHECK(a.cur == -1 && a.met == 1 && a.nmet == 2 && !cons_done(&h, &a));
    cons_state b = cons_next(&h, s, 7); /* abandons [5 6], completes [7] */
    CHECK(b.cur == -1 && b.met == 2 && b.nmet == 1);
    cons_state c = cons_next(&h, s, 9); /* abandons [5 6] */
    CHECK(c.cur == -1 && c.met == 0 && c.nmet == 0);
    cons_state d = cons_next(&h, cons_next(&h, a, 3), 7);
    CHECK(d.met == 3 && d.nmet == 3 && cons_done(&h, &d));
    CHECK(cons_wanted(&h, &d, want) == 0);
    cons_state e = cons_next(&h, cons_next(&h, b, 5), 5); /* 5 again restarts the phrase */
    CHECK(e.cur == 0 && e.pos == 1 && e.nmet == 2);
}

static void test_banks(void)
{
    /* 4 slots over banks 0..3 (1 each): bank 0 offers 4, bank 1 none, bank 2 one, bank 3 two;
     * bank 1's slot goes to the top bank that has one left (3) */
    topk_item c[7] = {{-1, 0}, {-2, 1}, {-3, 2}, {-4, 3}, {-5, 4}, {-6, 5}, {-7, 6}};
    int bank[7] = {0, 0, 3, 0, 2, 3, 0}, cnt[8];
    int n = cons_choose(c, bank, 7, 4, 4, cnt);
    CHECKF(n == 4 && c[0].idx == 0 && c[1].idx == 2 && c[2].idx == 4 && c[3].idx == 5, "kept %d: %ld %ld %ld %ld", n,
           c[0].idx, c[1].idx, c[2].idx, c[3].idx);
    /* beam 1 over 3 banks: the one slot is the top bank's, else the next one down that has any */
    topk_item g[3] = {{-1, 0}, {-2, 1}, {-3, 2}};
    int gb[3] = {0, 1, 0};
    CHECK(cons_choose(g, gb, 3, 1, 3, cnt) == 1 && g[0].idx == 1);
}

/* ---------------------------------------------------------------- searches */

#define NS 24  /* sentences */
#define KY 14  /* target words w2 .. w13 */

static nmt_config config(int arch) { return (nmt_config){arch, 12, KY, 6, 7, 5, 4, 1, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}; }

typedef struct sent {
    char src[128], prefix[64], ph[3][64];
    const char *phr[3];
    int sid[16], sl, pid[8], pl, cid[3][4], cl[3], nc;
} sent;

/* words w2.. of ids into buf, ids kept in out */
static int words_of(char *buf, size_t cap, int *out, int n, int lo, int span)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        out[i] = lo + (int)rng_below(&R, (uint64_t)span);
        k += (size_t)snprintf(buf + k, cap - k, "%sw%d", i ? " " : "", out[i]);
    }
    return n;
}

/* random sources; by i % 4: phrases (1 to 3), prefix and phrases, neither, a prefix (1 to 3 words) */
static void make_sentences(sent *s, int n, int with_prefix, int with_phrases)
{
    for (int i = 0; i < n; i++) {
        memset(&s[i], 0, sizeof s[i]);
        s[i].sl = words_of(s[i].src, sizeof s[i].src, s[i].sid, 4 + (int)rng_below(&R, 6), 2, 10) + 1;
        s[i].sid[s[i].sl - 1] = 0;
        if (with_prefix && i % 2) s[i].pl = words_of(s[i].prefix, sizeof s[i].prefix, s[i].pid, 1 + (int)rng_below(&R, 3), 2, KY - 2);
        s[i].nc = with_phrases && i % 4 < 2 ? 1 + (int)rng_below(&R, 3) : 0;
        for (int c = 0; c < s[i].nc; c++) {
            s[i].cl[c] = words_of(s[i].ph[c], sizeof s[i].ph[c], s[i].cid[c], 1 + (int)rng_below(&R, 3), 2, KY - 2);
            s[i].phr[c] = s[i].ph[c];
        }
    }
}

/* how often phrase p[0..pl) occurs in ids[0..n) (counted from the output) */
static int occurrences(const int *ids, int n, const int *p, int pl)
{
    int k = 0;
    for (int i = 0; i + pl <= n; i++) k += !memcmp(ids + i, p, sizeof(int) * pl);
    return k;
}

/* every hypothesis begins with its prefix, and its logprob is forced decoding's; every finished one
 * (those cut at the length limit rank after them) and every sentence's best holds every phrase */
static void check_hyps(const nmt_model *m, const sent *s, const nmt_translation *t, int K, const char *what)
{
    int bad_prefix = 0, missing = 0, unfinished = 0, hyps = 0;
    double worst = 0;
    for (int i = 0; i < NS; i++)
        for (int h = 0; h < t[i].n_hyps; h++, hyps++) {
            const nmt_hypothesis *y = &t[i].hyps[h];
            bad_prefix += y->n_words < s[i].pl || memcmp(y->ids, s[i].pid, sizeof(int) * s[i].pl);
            for (int c = 0; c < s[i].nc; c++) /* the EOS is refused without them; the best holds them */
                if (!occurrences(y->ids, y->n_words, s[i].cid[c], s[i].cl[c])) missing += y->finished || h == 0;
            unfinished += !y->finished;
            int tgt[64];
            memcpy(tgt, y->ids, sizeof(int) * y->n_words);
            tgt[y->n_words] = 0;
            double lp = forced_logp(m, s[i].sid, s[i].sl, tgt, y->n_words + y->finished), d = fabs(lp - y->logprob);
            if (d / (fabs(lp) > 1 ? fabs(lp) : 1) > worst) worst = d / (fabs(lp) > 1 ? fabs(lp) : 1);
        }
    CHECKF(hyps >= NS, "%s beam %d: %d hypotheses", what, K, hyps);
    CHECKF(!bad_prefix, "%s beam %d: %d hypotheses do not begin with their prefix", what, K, bad_prefix);
    CHECKF(!missing, "%s beam %d: %d phrases missing", what, K, missing);
    CHECKF(worst < 1e-5, "%s beam %d: log-probabilities differ from forced decoding by %.3g (relative)", what, K, worst);
    printf("%s beam %d: %d hypotheses (%d cut at the length limit), %d without their prefix, %d phrases missing, logprob vs "
           "forced decoding %.2g\n", what, K, hyps, unfinished, bad_prefix, missing, worst);
}

static void translate_both(nmt_decoder *d, const sent *s, nmt_translation *plain, nmt_translation *hinted)
{
    const char *src[NS];
    nmt_hint h[NS];
    for (int i = 0; i < NS; i++) {
        src[i] = s[i].src;
        h[i] = (nmt_hint){s[i].pl ? s[i].prefix : NULL, s[i].phr, s[i].nc};
    }
    nmt_err err;
    int rc = nmt_translate(d, src, NS, plain, &err);
    CHECKF(rc == 0, "%s", err.msg);
    rc = nmt_translate_hints(d, src, h, NS, hinted, &err);
    CHECKF(rc == 0, "%s", err.msg);
}

static void test_search(int arch)
{
    nmt_model *m = tiny_random_model(config(arch), &R, 0.6);
    m->p.out_bias[0] += 5; /* EOS likely, as in a trained model: a random one runs to the length limit */
    sent s[NS];
    make_sentences(s, NS, 1, 1);
    static const int beams[] = {1, 5, 12};
    for (int b = 0; b < 3; b++) {
        nmt_translate_opts o = nmt_translate_default_opts();
        o.beam = beams[b];
        o.n_best = beams[b] > 1 ? 3 : 1;
        o.batch = 7; /* several batches, each of sentences with and without hints */
        nmt_decoder *d;
        NMT_ASSERT(nmt_decoder_init(&d, m, &o, NULL) == 0);
        nmt_translation plain[NS], hinted[NS];
        translate_both(d, s, plain, hinted);
        char what[64];
        snprintf(what, sizeof what, "%s", nmt_arch_name(arch));
        check_hyps(m, s, hinted, beams[b], what);
        int same = 1, compared = 0; /* sentences with no hint: as nmt_translate gives them */
        for (int i = 0; i < NS; i++)
            if (!s[i].pl && !s[i].nc) {
                same &= same_translations(&plain[i], &hinted[i], 1);
                compared++;
            }
        CHECKF(same && compared >= NS / 4, "%s beam %d: a sentence without hints translated otherwise beside hinted ones "
               "(%d compared)", what, beams[b], compared);
        nmt_translation_free(plain, NS);
        nmt_translation_free(hinted, NS);
        nmt_decoder_free(d);
    }
    nmt_model_free(m);
}

/* hints with no prefix and no phrase: nmt_translate's translations bit for bit */
static void test_empty_hints(void)
{
    nmt_model *m = tiny_random_model(config(NMT_ARCH_RNNSEARCH), &R, 0.6);
    sent s[NS];
    make_sentences(s, NS, 0, 0);
    nmt_translate_opts o = nmt_translate_default_opts();
    o.beam = 5;
    o.n_best = 5;
    o.attention = 1;
    nmt_decoder *d;
    NMT_ASSERT(nmt_decoder_init(&d, m, &o, NULL) == 0);
    nmt_translation plain[NS], hinted[NS];
    translate_both(d, s, plain, hinted);
    CHECK(same_translations(plain, hinted, NS));
    nmt_translation_free(plain, NS);
    nmt_translation_free(hinted, NS);
    nmt_decoder_free(d);
    nmt_model_free(m);
}

/* hint h for "w2 w3 w4" refused with NMT_ERR_ARG and a message holding want */
static void refused(nmt_decoder *d, nmt_hint h, const char *want)
{
    const char *src[1] = {"w2 w3 w4"};
    nmt_translation t[1];
    nmt_err err = {0, ""};
    int rc = nmt_translate_hints(d, src, &h, 1, t, &err);
    CHECKF(rc == NMT_ERR_ARG && strstr(err.msg, want), "rc %d, message '%s', expected '%s'", rc, err.msg, want);
}

static void test_refusals(void)
{
    nmt_model *m = tiny_random_model(config(NMT_ARCH_RNNSEARCH), &R, 0.6);
    nmt_translate_opts o = nmt_translate_default_opts();
    nmt_decoder *d;
    NMT_ASSERT(nmt_decoder_init(&d, m, &o, NULL) == 0);
    const char *unknown[1] = {"w3 house"}, *empty[1] = {"  "}, *eos[1] = {"</s>"}, *ok[1] = {"w3"};
    refused(d, (nmt_hint){NULL, unknown, 1}, "constraint 1: 'house' is not in the model's target vocabulary");
    refused(d, (nmt_hint){"w2 nope", NULL, 0}, "the prefix: 'nope' is not in the model's target vocabulary");
    refused(d, (nmt_hint){NULL, empty, 1}, "constraint 1 is empty");
    refused(d, (nmt_hint){NULL, eos, 1}, "'</s>' cannot be asked for");
    refused(d, (nmt_hint){"w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w2 w3 w4", NULL, 0}, "pass the length limit of 12");
    refused(d, (nmt_hint){NULL, ok, NMT_MAX_PHRASES + 1}, "constraints, out of range");
    o.sample = 1;
    NMT_ASSERT(nmt_decoder_set_opts(d, &o, NULL) == 0);
    refused(d, (nmt_hint){NULL, ok, 1}, "not with sampling");
    nmt_decoder_free(d);
    nmt_model_free(m);
}

int main(void)
{
    rng_seed(&R, 38);
    test_states();
    test_banks();
    test_search(NMT_ARCH_RNNSEARCH);
    test_search(NMT_ARCH_RECATT_FERTDEC);
    test_empty_hints();
    test_refusals();
    return test_done("test_constrain");
}
