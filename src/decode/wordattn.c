/* wordattn.c: attention over a subword model's pieces merged into attention over words, so that
 * alignments, heat maps and AER stay in the words a user reads (docs/SUBWORDS.md). Within a row a
 * source word gets the sum of its pieces' weights: the attention mass that went to the word, so
 * that each piece's row stays a distribution over words and a word cut into many pieces is not
 * penalised (a mean would split its mass among its pieces). A target word's row is the sum of
 * its pieces' rows, divided by their number: the hard link (an arg-max) is the sum's, and the
 * row stays a distribution, as the soft-matrix format, SAER and the heat map's grey scale need.
 * Word models pass the identity maps, which copies. */
#include <string.h>

#include "base/err.h"
#include "nmt.h"

/* Checks a token -> word map: sizes not negative, every entry -1 or a word index. */
static int check_map(const nmt_word_map *m, const char *side, nmt_err *err)
{
    if (m->n_tokens < 0 || m->n_words < 0 || (m->n_tokens && !m->word_of))
        return nmt_fail(err, NMT_ERR_ARG, "attention merge: %s map of %d tokens and %d words", side, m->n_tokens, m->n_words);
    for (int k = 0; k < m->n_tokens; k++)
        if (m->word_of[k] < -1 || m->word_of[k] >= m->n_words)
            return nmt_fail(err, NMT_ERR_ARG, "attention merge: %s token %d belongs to word %d of %d", side, k, m->word_of[k], m->n_words);
    return NMT_OK;
}

int nmt_attention_to_words(float *out, const float *att, int eos_row, const nmt_word_map *tgt, const nmt_word_map *src,
                           nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_attention_to_words", out, att, tgt, src);
    if (bad) return bad;
    int rc = check_map(tgt, "target", err);
    if (!rc) rc = check_map(src, "source", err);
    if (rc) return rc;
    eos_row = eos_row != 0;
    int cols = src->n_tokens + 1, ocols = src->n_words + 1;
    memset(out, 0, sizeof *out * (size_t)(tgt->n_words + eos_row) * ocols);
    for (int i = 0; i < tgt->n_tokens + eos_row; i++) {
        int wi = i == tgt->n_tokens ? tgt->n_words : tgt->word_of[i]; /* the EOS row is its own */
        if (wi < 0) continue;
        float *o = out + (size_t)wi * ocols;
        const float *a = att + (size_t)i * cols;
        for (int j = 0; j < src->n_tokens; j++)
            if (src->word_of[j] >= 0) o[src->word_of[j]] += a[j];
        o[src->n_words] += a[src->n_tokens];
    }
    /* the sums over a target word's pieces into means (one scan per word: sentences are short) */
    for (int w = 0; w < tgt->n_words; w++) {
        int k = 0;
        for (int i = 0; i < tgt->n_tokens; i++) k += tgt->word_of[i] == w;
        for (int j = 0; k > 1 && j < ocols; j++) out[(size_t)w * ocols + j] /= (float)k;
    }
    return NMT_OK;
}
