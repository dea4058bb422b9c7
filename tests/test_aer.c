/* test_aer.c: AER / SAER (src/eval/aer.c) and the alignment readers (src/eval/alignio.c): cases computed
 * by hand, every row of data/alignment/aer_vectors/expected.tsv (an independent implementation),
 * each original gold format read back to the converted files link for link, and malformed
 * input, which must fail with the right code and a file:line message. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/aer.h"
#include "helpers.h"
#include "test.h"

static const char *shared_dir;
static char tmp_dir[] = "/tmp/test_aer.XXXXXX";

/* Path of a file under the shared data folder (one of a few rotating buffers). */
static const char *data_path(const char *rel)
{
    static char buf[8][1024];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/data/alignment/%s", shared_dir, rel);
    return buf[k];
}

/* Writes content to tmp_dir/name and returns the path. */
static const char *tmp_file(const char *name, const char *content)
{
    static char buf[8][1024];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmp_dir, name);
    if (test_write(buf[k], content)) exit(1);
    return buf[k];
}

#define CHECK_ERR(rc, err, want_code, sub) \
    CHECKF((rc) == (want_code) && strstr((err).msg, (sub)), "rc %d (want %d), message '%s' " \
           "(want '%s')", (rc), (want_code), (err).msg, (sub))

/* Link lists for the hand cases: {i, j, sure, line}. */
#define L(i, j) {i, j, 1, 0}
#define LP(i, j) {i, j, 0, 0}

static int same_links(const aer_align *a, const aer_align *b, const char *what)
{
    if (a->n_sent != b->n_sent) {
        fprintf(stderr, "%s: %zu sentences vs %zu\n", what, a->n_sent, b->n_sent);
        return 0;
    }
    for (size_t k = 0; k < a->n_sent; k++) {
        size_t na = a->off[k + 1] - a->off[k], nb = b->off[k + 1] - b->off[k];
        if (na != nb) {
            fprintf(stderr, "%s: sentence %zu: %zu links vs %zu\n", what, k + 1, na, nb);
            return 0;
        }
        for (size_t q = 0; q < na; q++) {
            const aer_link *x = &a->links[a->off[k] + q], *y = &b->links[b->off[k] + q];
            if (x->i != y->i || x->j != y->j || x->sure != y->sure) {
                fprintf(stderr, "%s: sentence %zu: link %d-%d/%d vs %d-%d/%d\n", what, k + 1,
                        x->i, x->j, x->sure, y->i, y->j, y->sure);
                return 0;
            }
        }
    }
    return 1;
}

/* ---- hand-computed cases ---------------------------------------------------------------- */

static void test_hand(void)
{
    nmt_err err = {0};
    /* S = {0-0, 1-1}, P = S + {1-2}; A = {0-0, 1-2, 2-2}.
     * |A| = 3, |S| = 2, |P| = 3, A n S = {0-0} = 1, A n P = {0-0, 1-2} = 2.
     * precision 2/3, recall 1/2, AER = 1 - (1 + 2) / (3 + 2) = 2/5. */
    aer_link g1[] = {L(0, 0), L(1, 1), LP(1, 2)}, t1[] = {L(0, 0), L(1, 2), L(2, 2)};
    aer_stats st = {0};
    CHECK(aer_add_sentence(&st, g1, 3, t1, 3, &err) == 0);
    CHECK(st.n_sent == 1 && st.a == 3 && st.s == 2 && st.p == 3 && st.a_s == 1 && st.a_p == 2);
    CHECK_NEAR(aer_precision(&st), 2.0 / 3, 1e-15);
    CHECK_NEAR(aer_recall(&st), 0.5, 1e-15);
    CHECK_NEAR(aer_rate(&st), 0.4, 1e-15);

    /* Empty A against S = {0-0}, P = S + {0-1}: |A| = 0, so precision is 0/0 (NaN), recall
     * 0/1 = 0, AER = 1 - 0 / (0 + 1) = 1. */
    aer_link g2[] = {L(0, 0), LP(0, 1)};
    aer_stats e = {0};
    CHECK(aer_add_sentence(&e, g2, 2, NULL, 0, &err) == 0);
    CHECK(isnan(aer_precision(&e)));
    CHECK_NEAR(aer_recall(&e), 0.0, 1e-15);
    CHECK_NEAR(aer_rate(&e), 1.0, 1e-15);

    /* The corpus sums first: case 1 + case 2 give |A| = 3, |S| = 3, |P| = 5, A n S = 1,
     * A n P = 2, AER = 1 - 3/6 = 0.5 (the mean of the sentences' AERs would be 0.7). */
    CHECK(aer_add_sentence(&st, g2, 2, NULL, 0, &err) == 0);
    CHECK(st.n_sent == 2 && st.a == 3 && st.s == 3 && st.p == 5 && st.a_s == 1 && st.a_p == 2);
    CHECK_NEAR(aer_rate(&st), 0.5, 1e-15);
    CHECK_NEAR(aer_precision(&st), 2.0 / 3, 1e-15);
    CHECK_NEAR(aer_recall(&st), 1.0 / 3, 1e-15);

    /* S = P = {0-0, 1-1, 2-1}; A = {0-0, 1-1, 2-2}: A n S = A n P = 2, |A| = |S| = 3:
     * precision = recall = 2/3, AER = 1 - 4/6 = 1/3 (= 1 - F1 when S = P). */
    aer_link g3[] = {L(0, 0), L(1, 1), L(2, 1)}, t3[] = {L(0, 0), L(1, 1), L(2, 2)};
    aer_stats sp = {0};
    CHECK(aer_add_sentence(&sp, g3, 3, t3, 3, &err) == 0);
    CHECK_NEAR(aer_precision(&sp), 2.0 / 3, 1e-15);
    CHECK_NEAR(aer_recall(&sp), 2.0 / 3, 1e-15);
    CHECK_NEAR(aer_rate(&sp), 1.0 / 3, 1e-15);

    /* A = P with possible links: S = {0-0}, P = {0-0, 0-1, 1-1}, A = P: A n S = 1, A n P = 3,
     * |A| = 3, |S| = 1: precision 1, recall 1, AER = 1 - 4/4 = 0. */
    aer_link g4[] = {L(0, 0), LP(0, 1), LP(1, 1)}, t4[] = {L(0, 0), L(0, 1), L(1, 1)};
    aer_stats ap = {0};
    CHECK(aer_add_sentence(&ap, g4, 3, t4, 3, &err) == 0);
    CHECK_NEAR(aer_rate(&ap), 0.0, 1e-15);
    CHECK_NEAR(aer_precision(&ap), 1.0, 1e-15);

    /* A not inside P: same gold, A = {0-0, 5-5}: A n S = 1, A n P = 1, |A| = 2, |S| = 1:
     * precision 1/2, recall 1, AER = 1 - 2/3 = 1/3. */
    aer_link t5[] = {L(0, 0), L(5, 5)};
    aer_stats out = {0};
    CHECK(aer_add_sentence(&out, g4, 3, t5, 2, &err) == 0);
    CHECK_NEAR(aer_precision(&out), 0.5, 1e-15);
    CHECK_NEAR(aer_recall(&out), 1.0, 1e-15);
    CHECK_NEAR(aer_rate(&out), 1.0 / 3, 1e-15);

    /* Nothing at all: every ratio is 0/0. */
    aer_stats none = {0};
    CHECK(aer_add_sentence(&none, NULL, 0, NULL, 0, &err) == 0);
    CHECK(isnan(aer_rate(&none)) && isnan(aer_precision(&none)) && isnan(aer_recall(&none)));
    CHECK(isnan(aer_soft_rate(&none)));

    /* Unsorted or repeated links would be miscounted: refused. */
    aer_link bad[] = {L(1, 0), L(0, 0)}, twice[] = {L(0, 0), L(0, 0)};
    CHECK_ERR(aer_add_sentence(&none, g1, 3, bad, 2, &err), err, NMT_ERR_ARG, "not sorted");
    CHECK_ERR(aer_add_sentence(&none, twice, 2, t1, 3, &err), err, NMT_ERR_ARG, "twice");
}

static void test_soft_hand(void)
{
    nmt_err err = {0};
    /* Tx = 3 source words, Ty = 2 target words; row j holds target word j's weights.
     *     M_A = [0.7 0.2 0.1]      S = {0-0} (i-j), possible {1-1, 2-1}
     *           [0.1 0.3 0.6]
     * |M_A| = 2, |M_S| = 1, |M_A . M_S| = M[0][0] = 0.7,
     * |M_A . M_P| = 0.7 + M[1][1] + M[1][2] = 0.7 + 0.3 + 0.6 = 1.6,
     * SAER = 1 - (0.7 + 1.6) / (2 + 1) = 1 - 2.3/3 = 0.7/3. */
    double m[] = {0.7, 0.2, 0.1, 0.1, 0.3, 0.6};
    aer_link g[] = {L(0, 0), LP(1, 1), LP(2, 1)};
    aer_stats st = {0};
    CHECK(aer_add_soft(&st, g, 3, m, 2, 3, &err) == 0);
    CHECK(st.soft_sent == 1);
    CHECK_NEAR(st.m_a, 2.0, 1e-15);
    CHECK_NEAR(st.m_s, 1.0, 1e-15);
    CHECK_NEAR(st.m_as, 0.7, 1e-15);
    CHECK_NEAR(st.m_ap, 1.6, 1e-15);
    CHECK_NEAR(aer_soft_rate(&st), 0.7 / 3, 1e-15);

    /* A 0/1 matrix gives SAER = AER: hand case 1 of test_hand (AER 0.4) as a 3x3 one-hot
     * matrix of A = {0-0, 1-2, 2-2} (rows j, columns i). */
    double h[] = {1, 0, 0, 0, 0, 0, 0, 1, 1};
    aer_link g1[] = {L(0, 0), L(1, 1), LP(1, 2)};
    aer_stats hs = {0};
    CHECK(aer_add_soft(&hs, g1, 3, h, 3, 3, &err) == 0);
    CHECK_NEAR(aer_soft_rate(&hs), 0.4, 1e-15);

    /* The same first matrix through the file format, two sentences, CRLF on the second, no
     * blank line after the last; the second sentence is Tx 1, Ty 1 with weight 0.5 on a sure
     * link: totals |M_A| = 2.5, |M_S| = 2, |M_A . M_S| = 1.2, |M_A . M_P| = 2.1,
     * SAER = 1 - 3.3/4.5. */
    const char *soft = tmp_file("m.soft", "0.7 0.2 0.1\n0.1 0.3 0.6\n\n0.5\r\n");
    const char *gold = tmp_file("m.talp", "0-0 1?1 2?1\n0-0\n");
    aer_soft s;
    aer_align ga, am;
    CHECK(aer_soft_read(&s, soft, &err) == 0);
    CHECK(s.n_sent == 2 && s.rows[0] == 2 && s.cols[0] == 3 && s.rows[1] == 1 && s.cols[1] == 1);
    CHECK(s.line[0] == 1 && s.line[1] == 4);
    CHECK(aer_gold_read(&ga, gold, NULL, &err) == 0);
    aer_stats fs = {0};
    CHECK(aer_eval_soft(&fs, &ga, &s, &err) == 0);
    CHECK_NEAR(aer_soft_rate(&fs), 1 - 3.3 / 4.5, 1e-12);
    /* Arg-max: target 0 -> source 0, target 1 -> source 2, and 0-0 in sentence 2:
     * A = {0-0, 2-1} + {0-0}: |A| = 3, |S| = 2, A n S = 2, A n P = 3, AER = 1 - 5/5 = 0. */
    CHECK(aer_soft_argmax(&am, &s, &err) == 0);
    CHECK(am.n_sent == 2 && am.off[1] == 2 && am.off[2] == 3);
    CHECK(am.links[0].i == 0 && am.links[0].j == 0 && am.links[1].i == 2 && am.links[1].j == 1);
    CHECK(aer_eval(&fs, &ga, &am, &err) == 0);
    CHECK(fs.a == 3 && fs.s == 2 && fs.a_s == 2 && fs.a_p == 3);
    CHECK_NEAR(aer_rate(&fs), 0.0, 1e-15);
    aer_align_free(&am);

    /* Ties go to the lowest source index; an all-zero row has no link. */
    const char *tie = tmp_file("tie.soft", "0.4 0.4 0.2\n0 0 0\n");
    aer_soft ts;
    CHECK(aer_soft_read(&ts, tie, &err) == 0);
    CHECK(aer_soft_argmax(&am, &ts, &err) == 0);
    CHECK(am.n_sent == 1 && am.off[1] == 1 && am.links[0].i == 0 && am.links[0].j == 0);
    aer_align_free(&am);
    aer_soft_free(&ts);

    /* Shapes against sentence lengths: 3 source and 2 target words, then 1 and 1. */
    aer_lengths len, from;
    CHECK(aer_lengths_read(&len, tmp_file("m.src", "a b c\nx\n"), tmp_file("m.tgt", "d e\ny\n"),
                           &err) == 0);
    CHECK(aer_soft_check_shape(&s, &len, &err) == 0);
    CHECK(aer_lengths_from_soft(&from, &s, &err) == 0);
    CHECK(from.n_sent == 2 && from.src[0] == 3 && from.tgt[0] == 2 && from.src[1] == 1);
    CHECK(aer_check_range(&ga, &from, &err) == 0);
    aer_lengths_free(&from);
    aer_lengths_free(&len);
    CHECK(aer_lengths_read(&len, tmp_file("m2.src", "a b\nx\n"), tmp_file("m2.tgt", "d e\ny\n"),
                           &err) == 0);
    CHECK_ERR(aer_soft_check_shape(&s, &len, &err), err, NMT_ERR_MISMATCH,
              "m.soft:1: sentence 1's matrix has 2 rows of 3 values, but the sentence has 2 "
              "target words");
    CHECK_ERR(aer_check_range(&ga, &len, &err), err, NMT_ERR_MISMATCH,
              "m.talp:1: link 2?1: source position 2 is past the end of sentence 1, which has 2 "
              "source words");
    aer_lengths_free(&len);

    /* A gold link outside the matrix points at the gold line. */
    aer_align g2;
    CHECK(aer_gold_read(&g2, tmp_file("out.talp", "0-0 3-1\n0-0\n"), NULL, &err) == 0);
    aer_stats x = {0};
    CHECK_ERR(aer_eval_soft(&x, &g2, &s, &err), err, NMT_ERR_MISMATCH,
              "out.talp:1: link 3-1 lies outside sentence 1's soft matrix");
    aer_align_free(&g2);
    /* Sentence counts. */
    CHECK(aer_gold_read(&g2, tmp_file("three.talp", "0-0\n0-0\n0-0\n"), NULL, &err) == 0);
    CHECK_ERR(aer_eval_soft(&x, &g2, &s, &err), err, NMT_ERR_MISMATCH,
              "m.soft:4: ends after 2 sentences; ");
    aer_align_free(&g2);
    CHECK(aer_gold_read(&g2, tmp_file("one.talp", "0-0\n"), NULL, &err) == 0);
    CHECK_ERR(aer_eval_soft(&x, &g2, &s, &err), err, NMT_ERR_MISMATCH,
              "m.soft:4: sentence 2 has no counterpart: ");
    aer_align_free(&g2);

    /* Values the library refuses directly. */
    double nan_m[] = {0.5, NAN}, big[] = {0.5, 1.5};
    CHECK_ERR(aer_add_soft(&x, g, 0, nan_m, 1, 2, &err), err, NMT_ERR_NUMERIC, "weight (0,1)");
    CHECK_ERR(aer_add_soft(&x, g, 0, big, 1, 2, &err), err, NMT_ERR_ARG, "not in [0, 1]");
    CHECK_ERR(aer_add_soft(&x, g, 3, m, 1, 3, &err), err, NMT_ERR_MISMATCH, "outside the 1x3");

    aer_align_free(&ga);
    aer_soft_free(&s);
}

/* ---- reference vectors ------------------------------------------------------------------ */

static void test_vectors(void)
{
    const char *tsv = data_path("aer_vectors/expected.tsv");
    FILE *f = fopen(tsv, "r");
    CHECKF(f != NULL, "%s: %s (set NMT_SHARED)", tsv, strerror(errno));
    if (!f) return;
    char line[4096];
    int rows = 0;
    CHECK(fgets(line, sizeof line, f) != NULL); /* header */
    while (fgets(line, sizeof line, f)) {
        char name[64], hyp[256], sure[256], poss[256], prec_s[64], rec_s[64], aer_s[64];
        size_t n_sent, a, s, p, a_s, a_p;
        if (sscanf(line, "%63[^\t]\t%255[^\t]\t%255[^\t]\t%255[^\t]\t%zu\t%zu\t%zu\t%zu\t%zu\t%zu\t"
                   "%63[^\t]\t%63[^\t]\t%63[^\t]", name, hyp, sure, poss, &n_sent, &a, &s, &p, &a_s,
                   &a_p, prec_s, rec_s, aer_s) != 13) {
            CHECKF(0, "%s: cannot parse row '%s'", tsv, line);
            continue;
        }
        rows++;
        nmt_err err = {0};
        char hyp_rel[300];
        snprintf(hyp_rel, sizeof hyp_rel, "aer_vectors/%s", hyp);
        aer_align gold, talp, test;
        int rc = aer_gold_read_pair(&gold, data_path(sure), data_path(poss), NULL, &err);
        CHECKF(rc == 0, "%s: %s", name, err.msg);
        if (rc) continue;
        rc = aer_test_read(&test, data_path(hyp_rel), 0, &err);
        CHECKF(rc == 0, "%s: %s", name, err.msg);
        if (rc) { aer_align_free(&gold); continue; }
        aer_stats st = {0};
        CHECKF(aer_eval(&st, &gold, &test, &err) == 0, "%s: %s", name, err.msg);
        CHECKF(st.n_sent == n_sent && st.a == a && st.s == s && st.p == p && st.a_s == a_s &&
               st.a_p == a_p, "%s: counts %zu %zu %zu %zu %zu %zu, expected %zu %zu %zu %zu %zu %zu",
               name, st.n_sent, st.a, st.s, st.p, st.a_s, st.a_p, n_sent, a, s, p, a_s, a_p);
        /* The file prints each value as the shortest string that reads back as its double:
         * reproducing it to its printed precision means the very same double. */
        double ep = strtod(prec_s, NULL), er = strtod(rec_s, NULL), ea = strtod(aer_s, NULL);
        CHECKF(aer_precision(&st) == ep, "%s: precision %.17g, expected %s", name,
               aer_precision(&st), prec_s);
        CHECKF(aer_recall(&st) == er, "%s: recall %.17g, expected %s", name, aer_recall(&st),
               rec_s);
        CHECKF(aer_rate(&st) == ea, "%s: AER %.17g, expected %s", name, aer_rate(&st), aer_s);

        /* The one-file gold (.talp, "i?j" for possible) is the same set as the pair. */
        char talp_rel[300];
        snprintf(talp_rel, sizeof talp_rel, "%.*s.talp", (int)(strrchr(sure, '.') - sure), sure);
        rc = aer_gold_read(&talp, data_path(talp_rel), NULL, &err);
        CHECKF(rc == 0, "%s: %s", talp_rel, err.msg);
        if (rc == 0) {
            CHECK(same_links(&talp, &gold, talp_rel));
            aer_align_free(&talp);
        }
        aer_align_free(&gold);
        aer_align_free(&test);
    }
    fclose(f);
    CHECKF(rows == 10, "%d rows in expected.tsv", rows);
}

/* ---- every gold format against the converted files -------------------------------------- */

/* Reads rel in `format` (base -1 = its own) and compares it with talp_rel (a .talp file). */
static void check_format(const char *rel, int format, int base, const char *talp_rel)
{
    nmt_err err = {0};
    aer_gold_opts o = aer_gold_opts_default();
    o.format = format;
    o.base = base;
    aer_align a, t;
    int ra = aer_gold_read(&a, data_path(rel), &o, &err);
    CHECKF(ra == 0, "%s: %s", rel, err.msg);
    int rt = aer_gold_read(&t, data_path(talp_rel), NULL, &err);
    CHECKF(rt == 0, "%s: %s", talp_rel, err.msg);
    if (ra == 0 && rt == 0) CHECK(same_links(&a, &t, rel));
    aer_align_free(&a);
    aer_align_free(&t);
}

/* Every converted gold set fits its token files, and equals its .sure/.possible pair. */
static void check_set(const char *dir, const char *split, const char *src, const char *tgt)
{
    char p[5][256];
    const char *ext[5] = {"talp", "sure", "possible", src, tgt};
    for (int k = 0; k < 5; k++) snprintf(p[k], sizeof p[k], "%s/%s.%s", dir, split, ext[k]);
    nmt_err err = {0};
    aer_align t, pair;
    aer_lengths len;
    int rt = aer_gold_read(&t, data_path(p[0]), NULL, &err);
    CHECKF(rt == 0, "%s: %s", p[0], err.msg);
    int rp = aer_gold_read_pair(&pair, data_path(p[1]), data_path(p[2]), NULL, &err);
    CHECKF(rp == 0, "%s: %s", p[1], err.msg);
    int rl = aer_lengths_read(&len, data_path(p[3]), data_path(p[4]), &err);
    CHECKF(rl == 0, "%s: %s", p[3], err.msg);
    if (rt == 0 && rp == 0) CHECK(same_links(&t, &pair, p[0]));
    if (rt == 0 && rl == 0) CHECKF(aer_check_range(&t, &len, &err) == 0, "%s", err.msg);
    aer_align_free(&t);
    aer_align_free(&pair);
    aer_lengths_free(&len);
}

static void test_formats(void)
{
    /* NAACL originals (1-based, English first, S/P flags) and awesome-align (1-based, 'p'). */
    check_format("en-fr/hansards_naacl2003/orig/NSavov_NLP2-Projects/test.wa.nonullalign",
                 AER_GOLD_NAACL, -1, "en-fr/hansards_naacl2003/test.talp");
    check_format("en-fr/hansards_naacl2003/orig/NSavov_NLP2-Projects/trial.wa.nonullalign",
                 AER_GOLD_NAACL, -1, "en-fr/hansards_naacl2003/trial.talp");
    check_format("en-fr/hansards_naacl2003/orig/awesome-align/enfr.gold", AER_GOLD_AWESOME, -1,
                 "en-fr/hansards_naacl2003/test.talp");
    check_format("ro-en/naacl2003_wpt/orig/awesome-align/roen.gold", AER_GOLD_AWESOME, -1,
                 "ro-en/naacl2003_wpt/test.talp");
    check_format("ja-en/kftt/orig/awesome-align/jaen.gold", AER_GOLD_AWESOME, -1,
                 "ja-en/kftt/test.talp");
    check_format("zh-en/tsinghua/orig/awesome-align/zhen.gold", AER_GOLD_AWESOME, -1,
                 "zh-en/tsinghua/test.talp");
    /* Bicici's AER file: NAACL layout with 0-based positions, German (the source) first; the
     * same links as its Pharaoh file (both still hold the link that test.talp dropped). */
    check_format("de-en/bicici_europarl/orig/de-en.ref.wa", AER_GOLD_NAACL, 0,
                 "de-en/bicici_europarl/orig/de-en.wa");

    /* ALIBI: five French-first files, which test.talp concatenates in this order. */
    static const char *const stories[] = {"ChatBotte_MasterCat", "LAuberge_TheInn",
                                          "LaBarbeBleue_BlueBeard",
                                          "LaDerniereClasse_TheLastLesson", "LaVision_TheVision"};
    nmt_err err = {0};
    aer_align all;
    aer_gold_opts alibi = aer_gold_opts_default();
    alibi.format = AER_GOLD_ALIBI;
    int rc = aer_gold_read(&all, data_path("en-fr/alibi_literary/test.talp"), NULL, &err);
    CHECKF(rc == 0, "%s", err.msg);
    size_t at = 0;
    for (int k = 0; k < 5 && rc == 0; k++) {
        char rel[256];
        snprintf(rel, sizeof rel, "en-fr/alibi_literary/orig/ali/%s/ali_w2w_%s.txt", stories[k],
                 stories[k]);
        aer_align a;
        int ra = aer_gold_read(&a, data_path(rel), &alibi, &err);
        CHECKF(ra == 0, "%s: %s", rel, err.msg);
        if (ra) continue;
        /* Compare with the slice [at, at + n) of the whole. */
        int same = at + a.n_sent <= all.n_sent;
        for (size_t s = 0; same && s < a.n_sent; s++) {
            size_t n = a.off[s + 1] - a.off[s], base = all.off[at + s];
            same = n == all.off[at + s + 1] - base;
            for (size_t q = 0; same && q < n; q++) {
                const aer_link *x = &a.links[a.off[s] + q], *y = &all.links[base + q];
                same = x->i == y->i && x->j == y->j && x->sure == y->sure;
            }
        }
        CHECKF(same, "%s differs from its part of test.talp", rel);
        at += a.n_sent;
        aer_align_free(&a);
    }
    CHECKF(rc || at == all.n_sent, "ALIBI files have %zu sentences, test.talp %zu", at,
           all.n_sent);
    aer_align_free(&all);

    check_set("en-fr/hansards_naacl2003", "test", "en", "fr");
    check_set("en-fr/hansards_naacl2003", "trial", "en", "fr");
    check_set("en-fr/alibi_literary", "test", "en", "fr");
    check_set("ro-en/naacl2003_wpt", "test", "ro", "en");
    check_set("ja-en/kftt", "test", "ja", "en");
    check_set("zh-en/tsinghua", "test", "zh", "en");
    check_set("de-en/bicici_europarl", "test", "de", "en");

    /* Bicici's original Pharaoh file still has the link the README says was dropped:
     * sentence 63, 12-16 on a 13 x 13 pair. The range check must find it. */
    aer_align bw;
    aer_lengths len;
    rc = aer_gold_read(&bw, data_path("de-en/bicici_europarl/orig/de-en.wa"), NULL, &err);
    CHECKF(rc == 0, "%s", err.msg);
    int rl = aer_lengths_read(&len, data_path("de-en/bicici_europarl/test.de"),
                              data_path("de-en/bicici_europarl/test.en"), &err);
    CHECKF(rl == 0, "%s", err.msg);
    if (rc == 0 && rl == 0)
        CHECK_ERR(aer_check_range(&bw, &len, &err), err, NMT_ERR_MISMATCH,
                  "de-en.wa:63: link 12-16: target position 16 is past the end of sentence 63, "
                  "which has 13 target words");
    aer_align_free(&bw);
    aer_gold_opts naacl0 = {AER_GOLD_NAACL, 0, 0};
    rc = aer_gold_read(&bw, data_path("de-en/bicici_europarl/orig/de-en.ref.wa"), &naacl0, &err);
    CHECKF(rc == 0, "%s", err.msg);
    if (rc == 0 && rl == 0)
        CHECK_ERR(aer_check_range(&bw, &len, &err), err, NMT_ERR_MISMATCH,
                  "de-en.ref.wa:776: link '12 16': target position 16 is past the end of "
                  "sentence 63");
    aer_align_free(&bw);
    aer_lengths_free(&len);

    /* The Hansards hypotheses fit the sentence lengths too. */
    aer_align h;
    rc = aer_test_read(&h, data_path("aer_vectors/hyps/giza.enfr.talp"), 0, &err);
    rl = aer_lengths_read(&len, data_path("en-fr/hansards_naacl2003/test.en"),
                          data_path("en-fr/hansards_naacl2003/test.fr"), &err);
    CHECK(rc == 0 && rl == 0);
    if (rc == 0 && rl == 0) CHECKF(aer_check_range(&h, &len, &err) == 0, "%s", err.msg);
    aer_align_free(&h);
    aer_lengths_free(&len);
}

/* ---- readers, small and malformed ------------------------------------------------------- */

static void test_readers(void)
{
    nmt_err err = {0};
    aer_align a, b;
    aer_gold_opts o = aer_gold_opts_default();

    /* talp: sorted on reading; blank line = sentence with no link; trailing blanks, CRLF and a
     * missing final newline are fine. */
    CHECK(aer_gold_read(&a, tmp_file("ok.talp", "2-1 0?0 0-1 \n\n1-1\r\n3-3"), NULL, &err) == 0);
    CHECK(a.n_sent == 4 && a.n_lines == 4);
    CHECK(a.off[1] == 3 && a.off[2] == 3 && a.off[3] == 4 && a.off[4] == 5);
    CHECK(a.links[0].i == 0 && a.links[0].j == 0 && a.links[0].sure == 0);
    CHECK(a.links[1].i == 0 && a.links[1].j == 1 && a.links[1].sure == 1);
    CHECK(a.links[2].i == 2 && a.links[2].j == 1 && a.links[2].line == 1);
    CHECK(a.links[3].line == 3 && a.line[1] == 2);
    aer_align_free(&a);

    /* Test alignments, and their direction. */
    CHECK(aer_test_read(&a, tmp_file("t.txt", "1-0 0-2\n"), 1, &err) == 0);
    CHECK(a.n_sent == 1 && a.links[0].i == 0 && a.links[0].j == 1 && a.links[1].i == 2 &&
          a.links[1].j == 0);
    aer_align_free(&a);
    CHECK(aer_test_read(&a, tmp_file("empty.txt", ""), 0, &err) == 0);
    CHECK(a.n_sent == 0);
    aer_align_free(&a);

    /* awesome: 1-based; alibi: "id<TAB>", French first; naacl: flags, NULL, confidence. */
    o.format = AER_GOLD_AWESOME;
    CHECK(aer_gold_read(&a, tmp_file("a.gold", "1-2 3p1\n"), &o, &err) == 0);
    CHECK(a.links[0].i == 0 && a.links[0].j == 1 && a.links[0].sure == 1);
    CHECK(a.links[1].i == 2 && a.links[1].j == 0 && a.links[1].sure == 0);
    aer_align_free(&a);
    o.format = AER_GOLD_ALIBI;
    CHECK(aer_gold_read(&a, tmp_file("w.txt", "0\t0-1 2p3 \n1\t\n"), &o, &err) == 0);
    CHECK(a.n_sent == 2 && a.off[1] == 2 && a.off[2] == 2);
    CHECK(a.links[0].i == 1 && a.links[0].j == 0 && a.links[1].i == 3 && a.links[1].j == 2 &&
          a.links[1].sure == 0);
    aer_align_free(&a);
    o.format = AER_GOLD_NAACL;
    CHECK(aer_gold_read(&a, tmp_file("n.wa", "2 1 1 P\n1 2 3\n3 0 4 S\n2 3 3 S 0.5\n"), &o,
                        &err) == 0);
    /* Sentences 1..3 (3 only NULL), so 1: {1-2 S}, 2: {0-0 P, 2-2 S}, 3: {}. */
    CHECK(a.n_sent == 3 && a.off[1] == 1 && a.off[2] == 3 && a.off[3] == 3);
    CHECK(a.links[0].i == 1 && a.links[0].j == 2 && a.links[0].sure == 1);
    CHECK(a.links[1].i == 0 && a.links[1].sure == 0 && a.links[2].i == 2 && a.links[2].sure);
    CHECK(a.line[0] == 2 && a.line[1] == 1 && a.line[2] == 0);
    aer_align_free(&a);

    /* Malformed gold and test lines: code and file:line message. */
    o = aer_gold_opts_default();
    int rc = aer_gold_read(&a, tmp_file("bad1.talp", "0-0\n0-0 1x2\n"), NULL, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "bad1.talp:2: '1x2': not a link (expected i-j or i?j)");
    CHECK(a.links == NULL && a.path == NULL); /* nothing left to free on failure */
    rc = aer_gold_read(&a, tmp_file("bad2.talp", "0-0 1-\n"), NULL, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "bad2.talp:1: '1-': not a link");
    rc = aer_gold_read(&a, tmp_file("bad3.talp", "-1-2\n"), NULL, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "bad3.talp:1: '-1-2': not a link");
    rc = aer_gold_read(&a, tmp_file("bad4.talp", "0p1\n"), NULL, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "bad4.talp:1: '0p1': not a link");
    rc = aer_gold_read(&a, tmp_file("bad5.talp", "0-0\n1-1 99999999999-1\n"), NULL, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "bad5.talp:2: '99999999999-1': index too large");
    rc = aer_gold_read(&a, tmp_file("dup.talp", "0-0 1-1 0?0\n"), NULL, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "dup.talp:1: link 0?0 listed twice");
    rc = aer_test_read(&a, tmp_file("p.txt", "0-0\n1?1\n"), 0, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "p.txt:2: '1?1': not a link (expected i-j)");
    rc = aer_test_read(&a, tmp_file("tdup.txt", "0-0\n1-1 1-1\n"), 0, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "tdup.txt:2: link 1-1 listed twice");
    { /* a NUL byte inside a line (fputs would stop at it) */
        const char *path = tmp_file("nul2.txt", "");
        FILE *f = fopen(path, "wb");
        CHECK(f && fwrite("0-0\n1-1\0 2-2\n", 1, 13, f) == 13 && fclose(f) == 0);
        rc = aer_test_read(&a, path, 0, &err);
        CHECK_ERR(rc, err, NMT_ERR_FORMAT, "nul2.txt:2: NUL byte");
    }
    rc = aer_test_read(&a, tmp_dir, 0, &err);
    CHECK_ERR(rc, err, NMT_ERR_IO, "cannot read");
    rc = aer_gold_read(&a, "/nonexistent/gold.talp", NULL, &err);
    CHECK_ERR(rc, err, NMT_ERR_IO, "/nonexistent/gold.talp: No such file");

    o.format = AER_GOLD_AWESOME;
    rc = aer_gold_read(&a, tmp_file("zero.gold", "1-1\n0-2\n"), &o, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "zero.gold:2: '0-2': position 0 in a file that counts from 1");
    rc = aer_gold_read(&a, tmp_file("q.gold", "1?2\n"), &o, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "q.gold:1: '1?2': not a link (expected i-j or ipj)");
    o.format = AER_GOLD_ALIBI;
    rc = aer_gold_read(&a, tmp_file("id.txt", "0\t0-0\n2\t1-1\n"), &o, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "id.txt:2: sentence id 2, expected 1");
    rc = aer_gold_read(&a, tmp_file("tab.txt", "0 0-0\n"), &o, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "tab.txt:1: expected 'id<TAB>links'");
    o.format = AER_GOLD_NAACL;
    rc = aer_gold_read(&a, tmp_file("n1.wa", "1 1 1 S\n1 2\n"), &o, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "n1.wa:2: too few fields");
    rc = aer_gold_read(&a, tmp_file("n2.wa", "1 1 1 S 0.5 x\n"), &o, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "n2.wa:1: too many fields");
    rc = aer_gold_read(&a, tmp_file("n3.wa", "1 1 1 X\n"), &o, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "n3.wa:1: 'X': expected S or P");
    rc = aer_gold_read(&a, tmp_file("n4.wa", "0 1 1 S\n"), &o, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "n4.wa:1: sentence number 0");
    rc = aer_gold_read(&a, tmp_file("n5.wa", "1 1 1 S abc\n"), &o, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "n5.wa:1: 'abc': not a confidence value");
    rc = aer_gold_read(&a, tmp_file("n6.wa", "1 1 1 S\n2 1 1 S\n1 1 1 P\n"), &o, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "n6.wa:3: link '1 1' of sentence 1 listed twice (also on "
              "line 1)");
    rc = aer_gold_read(&a, tmp_file("n7.wa", "1 1 1 S\n\n"), &o, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "n7.wa:2: too few fields");
    rc = aer_gold_read(&a, tmp_file("n8.wa", "1 x 1\n"), &o, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "n8.wa:1: 'x': not a number");
    o.format = 7;
    CHECK_ERR(aer_gold_read(&a, "x", &o, &err), err, NMT_ERR_ARG, "unknown gold format");
    o = aer_gold_opts_default();
    o.base = 2;
    CHECK_ERR(aer_gold_read(&a, "x", &o, &err), err, NMT_ERR_ARG, "index base 2");

    CHECK(aer_gold_format_parse("naacl") == AER_GOLD_NAACL);
    CHECK(aer_gold_format_parse("alibi") == AER_GOLD_ALIBI);
    CHECK(aer_gold_format_parse("Talp") == -1 && aer_gold_format_parse(NULL) == -1);
    CHECK(!strcmp(aer_gold_format_name(AER_GOLD_AWESOME), "awesome"));

    /* Sure/possible pairs. */
    const char *sure = tmp_file("p.sure", "0-0\n1-1\n");
    rc = aer_gold_read_pair(&a, sure, tmp_file("p.possible", "0-0 0-1\n1-1 2-2\n"), NULL, &err);
    CHECK(rc == 0 && a.n_sent == 2 && a.links[0].sure && !a.links[1].sure && a.links[2].sure &&
          !a.links[3].sure);
    aer_align_free(&a);
    rc = aer_gold_read_pair(&a, sure, tmp_file("p2.possible", "0-0 0-1\n2-2\n"), NULL, &err);
    CHECK_ERR(rc, err, NMT_ERR_MISMATCH, "p.sure:2: sure link 1-1 is not in ");
    rc = aer_gold_read_pair(&a, sure, tmp_file("p3.possible", "0-0 0-1\n"), NULL, &err);
    CHECK_ERR(rc, err, NMT_ERR_MISMATCH, "p3.possible:1: ends after 1 sentences; ");
    rc = aer_gold_read_pair(&a, tmp_file("q.sure", "0?0\n"), tmp_file("q.possible", "0-0\n"),
                            NULL, &err);
    CHECK_ERR(rc, err, NMT_ERR_FORMAT, "q.sure:1: possible link 0?0 in the file of sure links");

    /* Gold and test must have the same sentences. */
    CHECK(aer_gold_read(&a, tmp_file("g3.talp", "0-0\n0-0\n0-0\n"), NULL, &err) == 0);
    CHECK(aer_test_read(&b, tmp_file("t2.txt", "0-0\n0-0\n"), 0, &err) == 0);
    aer_stats st = {0};
    CHECK_ERR(aer_eval(&st, &a, &b, &err), err, NMT_ERR_MISMATCH,
              "t2.txt:2: ends after 2 sentences; ");
    CHECK(strstr(err.msg, "g3.talp has 3") != NULL);
    aer_align_free(&b);
    CHECK(aer_test_read(&b, tmp_file("t4.txt", "0-0\n0-0\n0-0\n\n"), 0, &err) == 0);
    CHECK_ERR(aer_eval(&st, &a, &b, &err), err, NMT_ERR_MISMATCH,
              "t4.txt:4: sentence 4 has no counterpart: ");
    aer_align_free(&b);
    CHECK(aer_test_read(&b, tmp_file("t0.txt", ""), 0, &err) == 0);
    CHECK_ERR(aer_eval(&st, &a, &b, &err), err, NMT_ERR_MISMATCH, "t0.txt: empty, but ");
    aer_align_free(&b);
    aer_align_free(&a);

    /* Soft matrices. */
    aer_soft s;
    CHECK_ERR(aer_soft_read(&s, tmp_file("s1.soft", "0.5 0.5\n0.5\n"), &err), err,
              NMT_ERR_FORMAT, "s1.soft:2: row has 1 values, the matrix's first row (line 1) has 2");
    CHECK(s.val == NULL && s.path == NULL);
    CHECK_ERR(aer_soft_read(&s, tmp_file("s2.soft", "0.5 abc\n"), &err), err, NMT_ERR_FORMAT,
              "s2.soft:1: 'abc': not a number");
    CHECK_ERR(aer_soft_read(&s, tmp_file("s3.soft", "1\n\nnan\n"), &err), err, NMT_ERR_NUMERIC,
              "s3.soft:3: 'nan': not finite");
    CHECK_ERR(aer_soft_read(&s, tmp_file("s4.soft", "1\n\n1.5\n"), &err), err, NMT_ERR_FORMAT,
              "s4.soft:3: '1.5': an attention weight must be in [0, 1]");
    CHECK_ERR(aer_soft_read(&s, tmp_file("s5.soft", "1\n\n\n1\n"), &err), err, NMT_ERR_FORMAT,
              "s5.soft:3: blank line where a matrix should start");
    CHECK_ERR(aer_soft_read(&s, tmp_file("s6.soft", "-0.1\n"), &err), err, NMT_ERR_FORMAT,
              "s6.soft:1: '-0.1': an attention weight");
    CHECK_ERR(aer_soft_read(&s, tmp_file("s7.soft", "0.5,0.5\n"), &err), err, NMT_ERR_FORMAT,
              "s7.soft:1: '0.5,0.5': not a number");
    CHECK(aer_soft_read(&s, tmp_file("s8.soft", "1e-3 0\t1\n\n0.25\n\n"), &err) == 0);
    CHECK(s.n_sent == 2 && s.cols[0] == 3 && s.val[0] == 1e-3 && s.val[3] == 0.25 &&
          s.n_lines == 4);
    aer_soft_free(&s);
    CHECK(aer_soft_read(&s, tmp_file("s9.soft", ""), &err) == 0 && s.n_sent == 0);
    aer_soft_free(&s);

    /* Token files: words at runs of ASCII blanks, as nmt align splits them (a tab separates, two
     * spaces are one gap, U+3000 is a word: words.h); they once split at single spaces alone. */
    aer_lengths len;
    CHECK(aer_lengths_read(&len, tmp_file("l.src", "a b\tc \xe3\x80\x80 d\n\n"),
                           tmp_file("l.tgt", "x\ny z\n"), &err) == 0);
    CHECK(len.n_sent == 2 && len.src[0] == 5 && len.src[1] == 0 && len.tgt[1] == 2);
    aer_lengths_free(&len);
    CHECK(aer_lengths_read(&len, tmp_file("l2.src", " a  b \r\n\t\n"), tmp_file("l2.tgt", "x\n\n"), &err) == 0);
    CHECK(len.n_sent == 2 && len.src[0] == 2 && len.src[1] == 0 && len.tgt[0] == 1);
    aer_lengths_free(&len);
    CHECK_ERR(aer_lengths_read(&len, tmp_file("l3.src", "a\nb\n"), tmp_file("l3.tgt", "x\n"),
                               &err), err, NMT_ERR_MISMATCH, "l3.tgt:1: ends after 1 lines; ");
    CHECK_ERR(aer_lengths_read(&len, tmp_file("l4.src", "a\n"), tmp_file("l4.tgt", "x\ny\n"),
                               &err), err, NMT_ERR_MISMATCH, "l4.src:1: ends after 1 lines; ");

    /* Range checks in the file's own notation (1-based, target first). */
    CHECK(aer_lengths_read(&len, tmp_file("r.src", "a b\nc\n"), tmp_file("r.tgt", "x y z\nw\n"),
                           &err) == 0);
    o = aer_gold_opts_default();
    o.format = AER_GOLD_AWESOME;
    o.reverse = 1;
    CHECK(aer_gold_read(&a, tmp_file("r.gold", "3-2\n1p2\n"), &o, &err) == 0);
    CHECK_ERR(aer_check_range(&a, &len, &err), err, NMT_ERR_MISMATCH,
              "r.gold:2: link 1p2: source position 2 is past the end of sentence 2, which has 1 "
              "source words (");
    aer_align_free(&a);
    CHECK(aer_test_read(&a, tmp_file("r3.txt", "0-0\n0-0\n0-0\n"), 0, &err) == 0);
    CHECK_ERR(aer_check_range(&a, &len, &err), err, NMT_ERR_MISMATCH,
              "r3.txt:3: sentence 3 has no counterpart: ");
    aer_align_free(&a);
    aer_lengths_free(&len);
    aer_align_free(NULL);
    aer_soft_free(NULL);
    aer_lengths_free(NULL);
}

/* Removes what tmp_file wrote. */
static void clean_tmp(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp_dir);
}

int main(int argc, char **argv)
{
    (void)argc; /* --quick changes nothing: every check here takes milliseconds */
    (void)argv;
    shared_dir = getenv("NMT_SHARED") ? getenv("NMT_SHARED") : "../shared";
    if (!mkdtemp(tmp_dir)) {
        fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    test_hand();
    test_soft_hand();
    test_vectors();
    test_formats();
    test_readers();
    clean_tmp();
    return test_done("test_aer");
}
