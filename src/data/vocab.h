/* vocab.h: a shortlist vocabulary (MODEL.md section 4): id 0 = EOS "</s>", id 1 = UNK "<unk>",
 * then words by falling frequency (ties alphabetical); any other word maps to UNK. Lookup is an
 * open-addressing hash table over one string pool. */
#ifndef NMT_VOCAB_H
#define NMT_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "nmt.h"

#define VOCAB_EOS 0
#define VOCAB_UNK 1
#define VOCAB_EOS_STR "</s>"
#define VOCAB_UNK_STR "<unk>"

typedef struct vocab {
    int n;              /* ids 0..n-1 */
    char **words;       /* into pool */
    char *pool;
    int *table;         /* hash slots holding id+1, 0 = empty */
    size_t tsize;       /* power of two, >= 2n */
} vocab;

/* From a list whose first two entries must be "</s>" and "<unk>" and whose entries are
 * distinct, non-empty and free of whitespace (they come from a model file: check everything). */
int vocab_from_words(vocab **out, const char *const *words, int n, nmt_err *err);
void vocab_free(vocab *v);
/* The id of the word s[0..len), VOCAB_UNK if absent. */
int vocab_id(const vocab *v, const char *s, size_t len);
/* -1 instead of UNK when absent. */
int vocab_find(const vocab *v, const char *s, size_t len);
static inline const char *vocab_word(const vocab *v, int id) { return v->words[id]; }

#endif
