/* subword.c: a model's subword units (subword.h): the vocabulary of a SentencePiece model, the
 * id maps between the two, and which word each piece belongs to, from the spans SentencePiece
 * reports. The vocabulary keeps nmt's layout (EOS 0, UNK 1) whatever ids the SentencePiece
 * model uses, so a model trained elsewhere works as well as one trained by `nmt train`. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "data/vocab.h"
#include "data/subword.h"
#include "text/words.h"

/* Pieces that become vocabulary entries of their own (EOS and UNK come first, always). */
static int is_token(const spm *s, int id)
{
    int k = spm_kind(s, id);
    return k == SPM_NORMAL || k == SPM_BYTE;
}

int subword_vocab_words(const spm *s, const char ***words, int *n, nmt_err *err)
{
    int size = spm_size(s), k = 2;
    const char **w = malloc(sizeof *w * ((size_t)size + 2));
    if (!w) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    w[0] = VOCAB_EOS_STR;
    w[1] = VOCAB_UNK_STR;
    for (int id = 0; id < size; id++)
        if (is_token(s, id)) w[k++] = spm_piece(s, id);
    *words = w;
    *n = k;
    return NMT_OK;
}

/* The two id maps of one side. */
static int build_maps(subwords *sw, int side, nmt_err *err)
{
    const spm *s = sw->sp[side];
    int size = spm_size(s), k = 2;
    sw->to_vocab[side] = malloc(sizeof(int) * (size_t)size);
    sw->to_spm[side] = malloc(sizeof(int) * ((size_t)size + 2));
    if (!sw->to_vocab[side] || !sw->to_spm[side]) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    sw->to_spm[side][0] = -1;
    sw->to_spm[side][1] = spm_unk_id(s);
    for (int id = 0; id < size; id++) {
        sw->to_vocab[side][id] = spm_kind(s, id) == SPM_UNKNOWN ? VOCAB_UNK : -1;
        if (!is_token(s, id)) continue;
        sw->to_vocab[side][id] = k;
        sw->to_spm[side][k++] = id;
    }
    sw->n_vocab[side] = k;
    return NMT_OK;
}

void subwords_free(subwords *sw)
{
    if (!sw) return;
    for (int side = 0; side < 2; side++) {
        free(sw->to_vocab[side]);
        free(sw->to_spm[side]);
    }
    if (sw->sp[1] != sw->sp[0]) spm_free(sw->sp[1]);
    spm_free(sw->sp[0]);
    free(sw);
}

int subwords_init(subwords **out, spm *src, spm *tgt, const nmt_text_opts text[2], nmt_err *err)
{
    *out = NULL;
    if (!tgt) tgt = src;
    subwords *sw = calloc(1, sizeof *sw);
    if (!sw) {
        if (tgt != src) spm_free(tgt);
        spm_free(src);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    sw->joint = tgt == src;
    sw->sp[0] = src;
    sw->sp[1] = tgt;
    sw->text[0] = text[0];
    sw->text[1] = text[1];
    int rc = build_maps(sw, NMT_SOURCE, err);
    if (!rc) rc = build_maps(sw, NMT_TARGET, err);
    if (rc) { subwords_free(sw); return rc; }
    *out = sw;
    return NMT_OK;
}

int subwords_check_vocab(const subwords *sw, int side, const char *const *words, int n, const char *file, nmt_err *err)
{
    const char *name = side == NMT_SOURCE ? "source" : "target";
    const spm *s = sw->sp[side];
    if (n != sw->n_vocab[side])
        return nmt_fail(err, NMT_ERR_FORMAT, "%s: the %s vocabulary has %d entries but its SentencePiece model gives %d",
                        file, name, n, sw->n_vocab[side]);
    for (int k = 2; k < n; k++)
        if (strcmp(words[k], spm_piece(s, sw->to_spm[side][k])))
            return nmt_fail(err, NMT_ERR_FORMAT, "%s: %s vocabulary entry %d is '%.100s' but its SentencePiece model has '%.100s'",
                            file, name, k, words[k], spm_piece(s, sw->to_spm[side][k]));
    return NMT_OK;
}

int subwords_use_vocab(subwords *sw, int side, const vocab *v, nmt_err *err)
{
    const spm *s = sw->sp[side];
    int size = spm_size(s);
    int *to_spm = malloc(sizeof(int) * (size_t)v->n);
    if (!to_spm) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    for (int k = 0; k < v->n; k++) to_spm[k] = spm_unk_id(s); /* a word no piece spells */
    to_spm[VOCAB_EOS] = -1;
    for (int id = 0; id < size; id++) {
        const char *p = spm_piece(s, id);
        int k = is_token(s, id) ? vocab_find(v, p, strlen(p)) : -1;
        sw->to_vocab[side][id] = k >= 0 ? k : is_token(s, id) || spm_kind(s, id) == SPM_UNKNOWN ? VOCAB_UNK : -1;
        if (k > VOCAB_UNK) to_spm[k] = id;
    }
    free(sw->to_spm[side]);
    sw->to_spm[side] = to_spm;
    sw->n_vocab[side] = v->n;
    sw->by_vocab = 1;
    return NMT_OK;
}

/* ------------------------------------------------------------------ pieces to words */

int subword_word_of(const char *text, size_t len, const int *begin, const int *end, int n, int *word_of)
{
    int words = text_count_words(text);
    /* one scan over the text, word starts counted as it goes; spans come in text order, and
     * one that does not (a model of unusual settings) restarts the scan */
    size_t i = 0;
    int starts = 0, in_word = 0;
    for (int k = 0; k < n; k++) {
        long x = end[k] > begin[k] ? end[k] - 1 : begin[k] - 1;
        if (x >= (long)len) x = (long)len - 1;
        if (x < 0) x = 0;
        if ((size_t)x + 1 < i) i = 0, starts = 0, in_word = 0;
        for (; i <= (size_t)x && i < len; i++) {
            int blank = text_is_blank(text[i]);
            starts += !blank && !in_word;
            in_word = !blank;
        }
        int w = in_word ? starts - 1 : starts;     /* a blank: the word after it */
        word_of[k] = words ? (w < words ? w : words - 1) : -1;
    }
    return words;
}
