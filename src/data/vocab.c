/* vocab.c: vocabulary storage and lookup. Words live in one pool; the hash table maps a word's
 * FNV-1a hash to its id with linear probing. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "data/vocab.h"
#include "text/unicode.h"
#include "text/words.h"

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 1099511628211ULL; }
    return h;
}

int vocab_find(const vocab *v, const char *s, size_t len)
{
    size_t mask = v->tsize - 1;
    for (size_t i = fnv1a(s, len) & mask;; i = (i + 1) & mask) {
        int id = v->table[i] - 1;
        if (id < 0) return -1;
        const char *w = v->words[id];
        if (strncmp(w, s, len) == 0 && w[len] == 0) return id;
    }
}

int vocab_id(const vocab *v, const char *s, size_t len)
{
    int id = vocab_find(v, s, len);
    return id < 0 ? VOCAB_UNK : id;
}

void vocab_free(vocab *v)
{
    if (!v) return;
    free(v->words);
    free(v->pool);
    free(v->table);
    free(v);
}

int vocab_from_words(vocab **out, const char *const *words, int n, nmt_err *err)
{
    *out = NULL;
    if (n < 2 || strcmp(words[0], VOCAB_EOS_STR) || strcmp(words[1], VOCAB_UNK_STR))
        return nmt_fail(err, NMT_ERR_FORMAT, "vocabulary must start with \"%s\" and \"%s\"", VOCAB_EOS_STR, VOCAB_UNK_STR);
    size_t bytes = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(words[i]);
        if (len == 0) return nmt_fail(err, NMT_ERR_FORMAT, "vocabulary entry %d is empty", i);
        if (strpbrk(words[i], TEXT_BLANKS)) /* a blank would split the word when read back */
            return nmt_fail(err, NMT_ERR_FORMAT, "vocabulary entry %d (\"%s\") contains whitespace", i, words[i]);
        long bad = utf8_find_invalid(words[i], len); /* text is UTF-8 (its bytes could not be saved, nor met) */
        if (bad >= 0) return nmt_fail(err, NMT_ERR_FORMAT, "vocabulary entry %d is not UTF-8 (byte %ld of it)", i, bad + 1);
        bytes += len + 1;
    }
    vocab *v = calloc(1, sizeof *v);
    if (!v) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for a vocabulary of %d words", n);
    v->n = n;
    v->tsize = 16;
    while (v->tsize < (size_t)n * 2) v->tsize <<= 1;
    v->words = malloc(sizeof(char *) * n);
    v->pool = malloc(bytes);
    v->table = calloc(v->tsize, sizeof(int));
    if (!v->words || !v->pool || !v->table) {
        vocab_free(v);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for a vocabulary of %d words", n);
    }
    char *p = v->pool;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(words[i]);
        memcpy(p, words[i], len + 1);
        v->words[i] = p;
        p += len + 1;
        if (vocab_find(v, words[i], len) >= 0) {
            nmt_fail(err, NMT_ERR_FORMAT, "vocabulary entry %d (\"%s\") appears twice", i, words[i]);
            vocab_free(v);
            return NMT_ERR_FORMAT;
        }
        size_t mask = v->tsize - 1, s = fnv1a(words[i], len) & mask;
        while (v->table[s]) s = (s + 1) & mask;
        v->table[s] = i + 1;
    }
    *out = v;
    return NMT_OK;
}
