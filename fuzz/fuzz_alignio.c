/* fuzz_alignio.c: the alignment readers of `nmt aer`: gold files in each format (the first
 * byte picks format, index base and reversal), test alignments, the sure/possible pair, soft
 * matrices with their arg-max and lengths; what reads is then scored, as nmt aer does. Inputs
 * with a form feed give two files (gold, test or sure, possible). */
#include "eval/aer.h"
#include "fuzz.h"

static void score(const aer_align *gold, const char *test_path)
{
    aer_align test = {0};
    nmt_err err;
    if (aer_test_read(&test, test_path, 0, &err) == 0) {
        aer_stats st = {0};
        if (aer_eval(&st, gold, &test, &err) == 0) { aer_rate(&st); aer_precision(&st); aer_recall(&st); }
    }
    aer_align_free(&test);
}

static void soft(const char *path, const aer_align *gold)
{
    aer_soft s = {0};
    aer_align hard = {0};
    aer_lengths len = {0};
    nmt_err err;
    if (aer_soft_read(&s, path, &err) == 0) {
        aer_soft_argmax(&hard, &s, &err);
        if (aer_lengths_from_soft(&len, &s, &err) == 0) aer_check_range(gold, &len, &err);
        aer_stats st = {0};
        if (aer_eval_soft(&st, gold, &s, &err) == 0) aer_soft_rate(&st);
    }
    aer_lengths_free(&len);
    aer_align_free(&hard);
    aer_soft_free(&s);
}

int fuzz_alignio(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    aer_gold_opts o = aer_gold_opts_default();
    o.format = data[0] % 4;
    o.base = (int)(data[0] >> 2) % 3 - 1;
    o.reverse = data[0] >> 4 & 1;
    size_t n1, n2;
    const uint8_t *p2;
    fuzz_split(data + 1, size - 1, '\f', &n1, &p2, &n2);
    const char *a = fuzz_file(0, data + 1, n1), *b = fuzz_file(1, p2, n2);
    if (!a || !b) return 0;
    aer_align gold = {0};
    nmt_err err;
    int rc = data[0] & 0x20 ? aer_gold_read_pair(&gold, a, b, &o, &err) : aer_gold_read(&gold, a, &o, &err);
    if (rc == 0) {
        score(&gold, b);
        soft(b, &gold);
    } else if (data[0] & 0x40) {
        soft(a, &gold); /* the soft reader with no gold at all */
    }
    aer_align_free(&gold);
    return 0;
}
