/* test_ibm.c: the word aligner of src/eval/ibm.c against values worked out by hand: two EM iterations
 * of IBM Model 1 on the classic three-pair corpus, one iteration of the diagonal prior on a
 * two-word pair, Viterbi links of a corpus whose alignment is unambiguous, rising log-likelihood,
 * thread independence, and every symmetrisation mode on a hand-made pair of alignments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/ibm.h"
#include "test.h"

/* t(f | e) by the words; e == NULL for the NULL word. reverse: e is a target word. */
static double t_of(const ibm_model *m, const ibm_corpus *c, int reverse, const char *e, const char *f)
{
    int ei = e ? ibm_corpus_word(c, reverse ? 1 : 0, e) : -1, fi = ibm_corpus_word(c, reverse ? 0 : 1, f);
    if ((e && ei < 0) || fi < 0) return -1;
    return ibm_model_t(m, ei, fi);
}

/* ---- Model 1 by hand ---------------------------------------------------------------------
 * the house / la maison, the book / le livre, a book / un livre. Five target types: t starts at
 * 1/5. Iteration 1: every t equal, so each target word's posterior is 1/3 over {NULL, e1, e2}
 * (Brown et al.'s uniform alignment): counts are co-occurrences / 3, e.g. the: la, maison, le,
 * livre 1/3 each -> 1/4 each; book: le 1/3, livre 2/3, un 1/3 -> 1/4, 1/2, 1/4; NULL: every
 * target token 1/3, 6 tokens -> 1/6 each, livre (twice) 1/3. Every p(f_i) = 1/3 * 3/5 = 1/5.
 * Iteration 2, e.g. "la" in pair 1: t = 1/6 (NULL), 1/4 (the), 1/2 (house), sum 11/12, so
 * posteriors 2/11, 3/11, 6/11 and p(la) = 11/36. Collecting all six words:
 *   the:   la 3/11, maison 3/11, le 3/8, livre 3/13  -> t(la|the) = 104/439, t(le|the) = 143/439,
 *          t(livre|the) = 88/439
 *   book:  le 3/8, livre 6/13 + 3/8, un 3/11         -> 143/566, 319/566, 104/566
 *   a:     un 6/11, livre 3/8                        -> 16/27, 11/27
 *   NULL:  la 2/11, maison 2/11, le 1/4, livre 4/13 + 1/4, un 2/11
 *                                                    -> 52/387, 52/387, 143/774, 319/774, 52/387
 * and the likelihood of iteration 2 is p(la) p(maison) p(le) p(livre) p(un) p(livre)
 * = (11/36)(11/36)(2/9)(13/36)(11/36)(4/9). */
static const char *hs[] = {"the house", "the book", "a book"};
static const char *ht[] = {"la maison", "le livre", "un livre"};

static void test_model1_by_hand(void)
{
    ibm_corpus c;
    nmt_err err;
    CHECK(ibm_corpus_init(&c, hs, ht, 3, &err) == 0);
    CHECK(c.n == 3 && c.max_len[0] == 2 && c.max_len[1] == 2);
    CHECK(ibm_corpus_word(&c, 0, "book") >= 0 && ibm_corpus_word(&c, 0, "livre") < 0);
    ibm_opts o = ibm_opts_default();
    o.favor_diagonal = 0;
    o.threads = 1;
    ibm_model *m;
    CHECK(ibm_model_init(&m, &c, 0, &o, &err) == 0);
    CHECK_NEAR(t_of(m, &c, 0, "the", "la"), 0.2, 1e-15);
    CHECK(t_of(m, &c, 0, "house", "livre") == 0); /* never co-occur: not stored */

    ibm_iter_stats st;
    CHECK(ibm_model_em(m, &st, &err) == 0);
    CHECK(st.iteration == 1 && st.diagonal == 0 && st.words == 6);
    /* stored pairs: NULL 5, the 4, house 2, book 3, a 2 */
    CHECK(st.pairs == 16);
    CHECK_NEAR(st.loglik, 6 * log(0.2), 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "the", "la"), 0.25, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "the", "livre"), 0.25, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "house", "maison"), 0.5, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "book", "le"), 0.25, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "book", "livre"), 0.5, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "book", "un"), 0.25, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "a", "un"), 0.5, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, NULL, "la"), 1.0 / 6, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, NULL, "livre"), 1.0 / 3, 1e-12);

    CHECK(ibm_model_em(m, &st, &err) == 0);
    double lik2 = (11.0 / 36) * (11.0 / 36) * (2.0 / 9) * (13.0 / 36) * (11.0 / 36) * (4.0 / 9);
    CHECK_NEAR(st.loglik, log(lik2), 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "the", "la"), 104.0 / 439, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "the", "maison"), 104.0 / 439, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "the", "le"), 143.0 / 439, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "the", "livre"), 88.0 / 439, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "house", "la"), 0.5, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "book", "le"), 143.0 / 566, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "book", "livre"), 319.0 / 566, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "book", "un"), 104.0 / 566, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "a", "un"), 16.0 / 27, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "a", "livre"), 11.0 / 27, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, NULL, "la"), 52.0 / 387, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, NULL, "le"), 143.0 / 774, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, NULL, "livre"), 319.0 / 774, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, NULL, "un"), 52.0 / 387, 1e-12);

    /* Viterbi after two iterations: la, maison -> house (1/2 > 104/439 and NULL's 52/387);
     * le -> the (143/439 > 143/566 > 143/774); livre -> book in pair 2 (319/566), and in pair 3
     * book 319/566 = 0.564 beats a 11/27 = 0.407; un -> a (16/27). */
    int a[6];
    CHECK(ibm_model_viterbi(m, 0, 3, a, &err) == 0);
    int want[6] = {1, 1, 0, 1, 0, 1};
    CHECK(memcmp(a, want, sizeof want) == 0);
    CHECK(ibm_model_viterbi(m, 1, 3, a, &err) == NMT_ERR_ARG); /* past the corpus */
    ibm_model_free(m);

    /* The reverse model, t(source | target), after one iteration: the counts of "book" given
     * "livre" are 1/3 from each of pairs 2 and 3, of 4/3 -> 1/2; NULL saw the 2/3, house 1/3,
     * book 2/3, a 1/3 -> t(the|NULL) = 1/3. */
    o.iterations = 1;
    CHECK(ibm_model_init(&m, &c, 1, &o, &err) == 0);
    CHECK(ibm_model_em(m, &st, &err) == 0);
    CHECK(st.words == 6);
    CHECK_NEAR(st.loglik, 6 * log(0.25), 1e-12); /* four source types */
    CHECK_NEAR(t_of(m, &c, 1, "livre", "book"), 0.5, 1e-12);
    CHECK_NEAR(t_of(m, &c, 1, "livre", "the"), 0.25, 1e-12);
    CHECK_NEAR(t_of(m, &c, 1, NULL, "the"), 1.0 / 3, 1e-12);
    CHECK_NEAR(t_of(m, &c, 1, NULL, "house"), 1.0 / 6, 1e-12);
    ibm_model_free(m);
    ibm_corpus_free(&c);
}

/* ---- the diagonal prior by hand ----------------------------------------------------------
 * One pair "a b" / "x y", lambda 4, p0 0.08, the prior from the first iteration. t starts at
 * 1/2, so the first posteriors are the prior itself (Dyer et al. 2013, eq. 2-3): for x (i = 1,
 * m = 2) |1/2 - 1/2| = 0 and |1/2 - 2/2| = 1/2, weights 1 and e^-2 over Z = 1 + e^-2; for y the
 * other way round. So t(x|a) = t(y|b) = 1/(1 + e^-2), t(y|a) = t(x|b) = e^-2/(1 + e^-2), NULL
 * 1/2 each, and each p(f_i) = p0/2 + (1-p0)/2 = 1/2. In iteration 2,
 * p(x) = p0/2 + (1-p0)/Z (1 * t(x|a) + e^-2 t(x|b)) = p0/2 + (1-p0)(1 + e^-4)/Z^2, p(y) the same. */
static void test_diagonal_by_hand(void)
{
    const char *s[] = {"a b"}, *t[] = {"x y"};
    ibm_corpus c;
    nmt_err err;
    CHECK(ibm_corpus_init(&c, s, t, 1, &err) == 0);
    ibm_opts o = ibm_opts_default();
    o.model1_iterations = 0;
    o.threads = 1;
    ibm_model *m;
    ibm_iter_stats st;
    CHECK(ibm_model_init(&m, &c, 0, &o, &err) == 0);
    CHECK(ibm_model_em(m, &st, &err) == 0);
    double e2 = exp(-2.0), z = 1 + e2, p0 = 0.08;
    CHECK(st.diagonal == 1);
    CHECK_NEAR(st.loglik, 2 * log(0.5), 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "a", "x"), 1 / z, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "a", "y"), e2 / z, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, "b", "y"), 1 / z, 1e-12);
    CHECK_NEAR(t_of(m, &c, 0, NULL, "x"), 0.5, 1e-12);
    CHECK(ibm_model_em(m, &st, &err) == 0);
    double p = p0 / 2 + (1 - p0) * (1 + exp(-4.0)) / (z * z);
    CHECK_NEAR(st.loglik, 2 * log(p), 1e-12);
    int a[2];
    CHECK(ibm_model_viterbi(m, 0, 1, a, &err) == 0);
    CHECK(a[0] == 0 && a[1] == 1);
    ibm_model_free(m);

    /* With p0 = 0.9 NULL's term p0 t(x|NULL) = 0.45 beats the best word's (1-p0) t w / Z < 0.1:
     * both words stay unaligned. */
    o.p0 = 0.9;
    CHECK(ibm_model_init(&m, &c, 0, &o, &err) == 0);
    CHECK(ibm_model_em(m, &st, &err) == 0);
    CHECK(ibm_model_viterbi(m, 0, 1, a, &err) == 0);
    CHECK(a[0] == -1 && a[1] == -1);
    ibm_model_free(m);
    ibm_corpus_free(&c);
}

/* ---- an unambiguous corpus ---------------------------------------------------------------
 * Ten source words s0..s9 translate one to one into t0..t9. Each pair takes 3-7 distinct words
 * (a fixed LCG) and writes the target with some neighbours swapped, so the alignment is not the
 * diagonal but follows from the dictionary: target word tW is linked to the position of sW. */
#define NPAIRS 300
static char syn_s[NPAIRS][64], syn_t[NPAIRS][64];
static int syn_a[NPAIRS][8], syn_len[NPAIRS]; /* expected forward links: a[j] = source position */

static void make_synthetic(void)
{
    unsigned long long r = 12345;
    for (int k = 0; k < NPAIRS; k++) {
        int words[10], L, used = 0, order[8];
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        L = 3 + (int)((r >> 33) % 5);
        while (used < L) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            int w = (int)((r >> 33) % 10), dup = 0;
            for (int q = 0; q < used; q++) dup |= words[q] == w;
            if (!dup) words[used++] = w;
        }
        for (int q = 0; q < L; q++) order[q] = q;
        for (int q = 0; q + 1 < L; q++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            if ((r >> 33) % 3 == 0) { int x = order[q]; order[q] = order[q + 1]; order[q + 1] = x; q++; }
        }
        char *ps = syn_s[k], *pt = syn_t[k];
        for (int q = 0; q < L; q++) {
            ps += sprintf(ps, q ? " s%d" : "s%d", words[q]);
            pt += sprintf(pt, q ? " t%d" : "t%d", words[order[q]]);
            syn_a[k][q] = order[q];
        }
        syn_len[k] = L;
    }
}

static void test_unambiguous(void)
{
    make_synthetic();
    const char *s[NPAIRS + 1], *t[NPAIRS + 1];
    for (int k = 0; k < NPAIRS; k++) { s[k] = syn_s[k]; t[k] = syn_t[k]; }
    s[NPAIRS] = "s1 s2"; /* a pair with an empty side: not trained on, no links */
    t[NPAIRS] = "";
    ibm_corpus c;
    nmt_err err;
    CHECK(ibm_corpus_init(&c, s, t, NPAIRS + 1, &err) == 0);
    ibm_opts o = ibm_opts_default();
    o.threads = 1;
    int *af = malloc(sizeof(int) * (size_t)c.off[1][c.n]), *ar = malloc(sizeof(int) * (size_t)c.off[0][c.n]);
    int *af2 = malloc(sizeof(int) * (size_t)c.off[1][c.n]);
    ibm_model *m, *m2;
    ibm_iter_stats st;
    CHECK(ibm_model_init(&m, &c, 0, &o, &err) == 0);
    for (int it = 0; it < o.iterations; it++) CHECK(ibm_model_em(m, &st, &err) == 0);
    long words = 0;
    for (int k = 0; k < NPAIRS; k++) words += syn_len[k];
    CHECK(st.words == words);
    CHECK(ibm_model_viterbi(m, 0, c.n, af, &err) == 0);
    CHECK(ibm_model_init(&m2, &c, 1, &o, &err) == 0);
    for (int it = 0; it < o.iterations; it++) CHECK(ibm_model_em(m2, &st, &err) == 0);
    CHECK(ibm_model_viterbi(m2, 0, c.n, ar, &err) == 0);
    int bad_f = 0, bad_r = 0, bad_sym = 0;
    int lf[16], lr[16], out[32];
    void *scratch = malloc(ibm_links_scratch(8, 8));
    for (int k = 0; k < NPAIRS; k++) {
        const int *fa = af + c.off[1][k], *ra = ar + c.off[0][k];
        int L = syn_len[k];
        for (int j = 0; j < L; j++) {
            bad_f += fa[j] != syn_a[k][j];
            bad_r += ra[syn_a[k][j]] != j; /* the inverse permutation */
        }
        /* the two directions agree, so every mode gives the same links */
        int nf = ibm_viterbi_links(fa, L, 0, lf), nr = ibm_viterbi_links(ra, L, 1, lr);
        for (int mode = IBM_SYM_FORWARD; mode <= IBM_SYM_GROW_DIAG_FINAL_AND; mode++) {
            int nl = ibm_links(mode, L, L, lf, nf, lr, nr, scratch, out);
            bad_sym += nl != L;
            for (int l = 0; l < nl && l < L; l++) bad_sym += out[2 * l] != l || syn_a[k][out[2 * l + 1]] != l;
        }
    }
    CHECKF(bad_f == 0, "%d forward links differ from the dictionary's", bad_f);
    CHECKF(bad_r == 0, "%d reverse links differ from the dictionary's", bad_r);
    CHECKF(bad_sym == 0, "%d symmetrised links differ", bad_sym);
    /* the empty pair: reverse model aligns its two source words to nothing */
    CHECK(ar[c.off[0][NPAIRS]] == -1 && ar[c.off[0][NPAIRS] + 1] == -1);
    CHECK(t_of(m, &c, 0, "s3", "t3") > 0.9);

    /* Two threads give the same t, bit for bit (the counts are added in sentence order). */
    o.threads = 2;
    ibm_model *m3;
    CHECK(ibm_model_init(&m3, &c, 0, &o, &err) == 0);
    for (int it = 0; it < o.iterations; it++) CHECK(ibm_model_em(m3, &st, &err) == 0);
    int diff = 0;
    for (int e = -1; e < c.voc[0]->n; e++)
        for (int f = 0; f < c.voc[1]->n; f++) diff += ibm_model_t(m, e, f) != ibm_model_t(m3, e, f);
    CHECKF(diff == 0, "%d t entries differ between 1 and 2 threads", diff);
    CHECK(ibm_model_viterbi(m3, 0, c.n, af2, &err) == 0);
    CHECK(memcmp(af, af2, sizeof(int) * (size_t)c.off[1][c.n]) == 0);
    ibm_model_free(m3);

    /* Every row of t sums to 1. */
    double worst = 0;
    for (int e = -1; e < c.voc[0]->n; e++) {
        double sum = 0;
        for (int f = 0; f < c.voc[1]->n; f++) sum += ibm_model_t(m, e, f);
        if (sum > 0 && fabs(sum - 1) > worst) worst = fabs(sum - 1);
    }
    CHECKF(worst < 1e-12, "a row of t sums to 1 %+g", worst);
    ibm_model_free(m);
    ibm_model_free(m2);
    free(af);
    free(af2);
    free(ar);
    free(scratch);
    ibm_corpus_free(&c);
}

/* ---- EM never lowers the likelihood --------------------------------------------------------
 * With the prior fixed (plain Model 1 throughout, or the diagonal prior throughout) only t is
 * re-estimated, so each iteration's log-likelihood is at least the previous one's. A noisy
 * corpus: the synthetic pairs with a random extra word on either side. */
static void test_loglik_rises(void)
{
    static char ns[NPAIRS][80], nt[NPAIRS][80];
    const char *s[NPAIRS], *t[NPAIRS];
    unsigned long long r = 99;
    for (int k = 0; k < NPAIRS; k++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        snprintf(ns[k], sizeof ns[k], "%s x%d", syn_s[k], (int)((r >> 33) % 7));
        snprintf(nt[k], sizeof nt[k], "y%d %s", (int)((r >> 40) % 5), syn_t[k]);
        s[k] = ns[k];
        t[k] = nt[k];
    }
    ibm_corpus c;
    nmt_err err;
    CHECK(ibm_corpus_init(&c, s, t, NPAIRS, &err) == 0);
    for (int variant = 0; variant < 3; variant++) {
        ibm_opts o = ibm_opts_default();
        o.threads = 1;
        if (variant == 0) o.favor_diagonal = 0;
        else o.model1_iterations = 0;
        if (variant == 2) { o.lambda = 10; o.p0 = 0.2; }
        ibm_model *m;
        CHECK(ibm_model_init(&m, &c, variant == 1, &o, &err) == 0);
        double prev = -INFINITY;
        int drops = 0;
        ibm_iter_stats st;
        for (int it = 0; it < 12; it++) {
            CHECK(ibm_model_em(m, &st, &err) == 0);
            if (st.loglik < prev - 1e-9 * fabs(prev)) drops++;
            if (it == 1) CHECK(st.loglik > prev + 1); /* and it does move */
            prev = st.loglik;
        }
        CHECKF(drops == 0, "variant %d: the log-likelihood fell %d times", variant, drops);
        ibm_model_free(m);
    }
    ibm_corpus_free(&c);
}

/* ---- symmetrisation by hand --------------------------------------------------------------
 * Six source words i and six target words j. Forward (each target word's link):
 * j0->0 j1->1 j2->1 j3->4 j4->NULL j5->2, i.e. F = {0-0 1-1 1-2 4-3 2-5}; reverse (each source
 * word's): i0->0 i1->1 i2->2 i3->NULL i4->0 i5->5, R = {0-0 1-1 2-2 4-0 5-5}.
 *   intersect  0-0 1-1
 *   union      0-0 1-1 1-2 2-2 2-5 4-0 4-3 5-5
 *   grow-diag  from 0-0 1-1: 0-0's neighbours hold no union link but 1-1; at 1-1, (0,+1) is 1-2
 *              (target 2 unaligned: added), then (+1,+1) is 2-2 (source 2 unaligned: added);
 *              1-2 and 2-2 add nothing (2-1, 1-3, 2-3 ... are not in the union), a second pass
 *              neither: 0-0 1-1 1-2 2-2
 *   gd-final   forward first: 2-5 (target 5 free), 4-3 (both free); then reverse: 4-0 (source 4
 *              now aligned, target 0 aligned: no), 5-5 (source 5 free): 0-0 1-1 1-2 2-2 2-5 4-3 5-5
 *   gd-final-and  2-5 no (source 2 aligned), 4-3 yes, 4-0 no, 5-5 yes (target 5 still free):
 *              0-0 1-1 1-2 2-2 4-3 5-5
 * grow-diag-final differs from the union only by 4-0, which the reverse pass would have added
 * had it come first: the test also pins the order of the two FINAL passes. */
static int links_are(const int *got, int n, const char *want)
{
    char buf[256] = "", *p = buf;
    for (int k = 0; k < n; k++) p += sprintf(p, k ? " %d-%d" : "%d-%d", got[2 * k], got[2 * k + 1]);
    if (strcmp(buf, want)) {
        fprintf(stderr, "links '%s', expected '%s'\n", buf, want);
        return 0;
    }
    return 1;
}

static void test_symmetrise_by_hand(void)
{
    int fwd[6] = {0, 1, 1, 4, -1, 2}, rev[6] = {0, 1, 2, -1, 0, 5};
    int lf[12], lr[12], out[24];
    void *scratch = malloc(ibm_links_scratch(6, 6));
    int nf = ibm_viterbi_links(fwd, 6, 0, lf), nr = ibm_viterbi_links(rev, 6, 1, lr);
    CHECK(nf == 5 && nr == 5);
    CHECK(links_are(lf, nf, "0-0 1-1 1-2 4-3 2-5")); /* in target order, not yet sorted */
    static const struct { int mode; const char *want; } cases[] = {
        {IBM_SYM_FORWARD, "0-0 1-1 1-2 2-5 4-3"},
        {IBM_SYM_REVERSE, "0-0 1-1 2-2 4-0 5-5"},
        {IBM_SYM_INTERSECT, "0-0 1-1"},
        {IBM_SYM_UNION, "0-0 1-1 1-2 2-2 2-5 4-0 4-3 5-5"},
        {IBM_SYM_GROW_DIAG, "0-0 1-1 1-2 2-2"},
        {IBM_SYM_GROW_DIAG_FINAL, "0-0 1-1 1-2 2-2 2-5 4-3 5-5"},
        {IBM_SYM_GROW_DIAG_FINAL_AND, "0-0 1-1 1-2 2-2 4-3 5-5"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        int nl = ibm_links(cases[k].mode, 6, 6, lf, nf, lr, nr, scratch, out);
        CHECKF(nl >= 0 && links_are(out, nl, cases[k].want), "mode %s", ibm_sym_name(cases[k].mode));
    }
    /* a mode reads only what it needs; out-of-range links and empty sides */
    CHECK(ibm_links(IBM_SYM_FORWARD, 6, 6, lf, nf, NULL, 0, scratch, out) == 5);
    int far[2] = {6, 0};
    CHECK(ibm_links(IBM_SYM_UNION, 6, 6, lf, nf, far, 1, scratch, out) == -1);
    CHECK(ibm_links(IBM_SYM_INTERSECT, 0, 3, NULL, 0, NULL, 0, scratch, out) == 0);
    CHECK(ibm_links(IBM_SYM_INTERSECT, 0, 3, lf, 1, NULL, 0, scratch, out) == -1);
    /* growth reaches along a diagonal chain link by link: F = 0-0 1-1 2-2 3-3, R = 0-0 only */
    int f2[4] = {0, 1, 2, 3}, r2[4] = {0, -1, -1, -1};
    nf = ibm_viterbi_links(f2, 4, 0, lf);
    nr = ibm_viterbi_links(r2, 4, 1, lr);
    int nl = ibm_links(IBM_SYM_GROW_DIAG, 4, 4, lf, nf, lr, nr, scratch, out);
    CHECK(links_are(out, nl, "0-0 1-1 2-2 3-3"));
    nl = ibm_links(IBM_SYM_INTERSECT, 4, 4, lf, nf, lr, nr, scratch, out);
    CHECK(links_are(out, nl, "0-0"));
    free(scratch);

    CHECK(ibm_sym_parse("grow-diag-final-and") == IBM_SYM_GROW_DIAG_FINAL_AND);
    CHECK(ibm_sym_parse("gdfa") == IBM_SYM_GROW_DIAG_FINAL_AND);
    CHECK(ibm_sym_parse("intersect") == IBM_SYM_INTERSECT);
    CHECK(ibm_sym_parse("forward") == -1 && ibm_sym_parse("") == -1);
    CHECK(!strcmp(ibm_sym_name(IBM_SYM_GROW_DIAG_FINAL), "grow-diag-final"));
}

static void test_errors(void)
{
    ibm_corpus c;
    nmt_err err;
    CHECK(ibm_corpus_init(&c, hs, ht, 3, &err) == 0);
    ibm_opts o = ibm_opts_default();
    ibm_model *m = (ibm_model *)&o;
    o.p0 = 1;
    CHECK(ibm_model_init(&m, &c, 0, &o, &err) == NMT_ERR_ARG && m == NULL && strstr(err.msg, "p0"));
    o = ibm_opts_default();
    o.lambda = -1;
    CHECK(ibm_model_init(&m, &c, 0, &o, &err) == NMT_ERR_ARG && strstr(err.msg, "lambda"));
    o = ibm_opts_default();
    o.lambda = NAN;
    CHECK(ibm_opts_check(&o, &err) == NMT_ERR_ARG);
    ibm_corpus_free(&c);
    CHECK(ibm_corpus_init(&c, hs, ht, -1, &err) == NMT_ERR_ARG);
    ibm_corpus_free(NULL);
    ibm_model_free(NULL);
    /* an empty corpus trains on nothing and fails nowhere */
    CHECK(ibm_corpus_init(&c, hs, ht, 0, &err) == 0);
    o = ibm_opts_default();
    ibm_iter_stats st;
    CHECK(ibm_model_init(&m, &c, 0, &o, &err) == 0);
    CHECK(ibm_model_em(m, &st, &err) == 0 && st.words == 0 && st.loglik == 0);
    ibm_model_free(m);
    ibm_corpus_free(&c);
}

int main(int argc, char **argv)
{
    (void)argc; /* --quick changes nothing: every check here takes milliseconds */
    (void)argv;
    test_model1_by_hand();
    test_diagonal_by_hand();
    test_unambiguous();
    test_loglik_rises();
    test_symmetrise_by_hand();
    test_errors();
    return test_done("test_ibm");
}
