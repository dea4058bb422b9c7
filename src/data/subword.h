/* subword.h: a model's subword units: its SentencePiece model(s) (one per side, or one joint
 * model), the vocabulary each gives, the maps between SentencePiece's ids and the vocabulary's,
 * and the text stages that run before segmentation. The text pipeline segments and joins with
 * it; the model file stores it (io/subwordmeta.c). docs/SUBWORDS.md has the design. */
#ifndef NMT_SUBWORD_H
#define NMT_SUBWORD_H

#include "nmt.h"
#include "text/spm.h"

typedef struct subwords {
    int joint;               /* one SentencePiece model for both sides: sp[1] == sp[0] */
    spm *sp[2];              /* [enum nmt_side] */
    int *to_vocab[2];        /* SentencePiece id -> vocabulary id (-1: never a token of the model) */
    int *to_spm[2];          /* vocabulary id -> SentencePiece id (-1 for EOS) */
    int n_vocab[2];
    nmt_text_opts text[2];   /* stages before segmentation: lang, tokenize, lowercase, normalize_punct */
    /* 0: each vocabulary is its SentencePiece model's (subword_vocab_words); 1: a vocabulary of
     * its own (a converted Marian model's), mapped to the pieces by their strings
     * (subwords_use_vocab) */
    int by_vocab;
} subwords;

/* The vocabulary a SentencePiece model gives: "</s>", "<unk>", then every piece that is neither
 * a control, the unknown nor an unused symbol, in SentencePiece's id order. *words (malloc'ed)
 * points into s's pieces. */
int subword_vocab_words(const spm *s, const char ***words, int *n, nmt_err *err);

/* Takes src and tgt (tgt NULL or equal to src: a joint model) and the text stages of each side;
 * on failure they are freed too. */
int subwords_init(subwords **out, spm *src, spm *tgt, const nmt_text_opts text[2], nmt_err *err);
void subwords_free(subwords *sw);

/* The vocabulary words[0..n) must be exactly the one side's model gives (a model file whose
 * metadata disagree with its embedded SentencePiece model is refused). */
int subwords_check_vocab(const subwords *sw, int side, const char *const *words, int n, const char *file, nmt_err *err);

typedef struct vocab vocab;
/* Side's maps rebuilt through the strings of v, a vocabulary of its own (by_vocab set): a piece
 * that is not one of v's words becomes UNK, as in Marian, and v's words that are no piece (EOS)
 * have none. */
int subwords_use_vocab(subwords *sw, int side, const vocab *v, nmt_err *err);

/* The word of each token: spans [begin[k], end[k]) of n tokens over text[0..len), whose words are
 * separated by blanks; a token belongs to the word holding the last byte of its span (a span of
 * nothing: the byte before it), a blank to the word after it (the last word if none follows).
 * word_of[k] is -1 when the text has no word. Returns the number of words. */
int subword_word_of(const char *text, size_t len, const int *begin, const int *end, int n, int *word_of);

#endif
