/* fuzz_corpus.c: a parallel corpus as training reads it: both sides through the text file
 * reader, word counts, shortlist vocabularies and id pairs with a length filter, then guided
 * alignment's links checked against it and attached to the pairs. The input is the source file,
 * a form feed, the target file, a form feed, the links file (a part without its form feed is the
 * bytes after the previous one again); its first byte picks the shortlist size and the length
 * limit. */
#include <string.h>

#include "data/corpus.h"
#include "data/links.h"
#include "text/words.h"
#include "fuzz.h"

static void build(const textfile *s, const textfile *t, const char *links, int K, int max_len)
{
    nmt_err err;
    wordcount ws, wt;
    if (wordcount_build(&ws, s, &err)) return;
    if (wordcount_build(&wt, t, &err)) { wordcount_free(&ws); return; }
    vocab *sv = NULL, *tv = NULL;
    if (!vocab_from_counts(&sv, &ws, K, &err) && !vocab_from_counts(&tv, &wt, K, &err)) {
        wordcount_coverage(&ws, K);
        pairs p;
        if (pairs_build(&p, s, t, sv, tv, max_len, &err) == 0) {
            if (links) links_attach(&p, links, s, t, &err);
            pairs_free(&p);
        }
    }
    vocab_free(sv);
    vocab_free(tv);
    wordcount_free(&ws);
    wordcount_free(&wt);
}

int fuzz_corpus(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int K = 3 + data[0] % 40, max_len = data[0] / 40;
    size_t n1, n2, n3;
    const uint8_t *p2, *p3;
    fuzz_split(data + 1, size - 1, '\f', &n1, &p2, &n2);
    fuzz_split(p2, n2, '\f', &n2, &p3, &n3);
    const char *a = fuzz_file(0, data + 1, n1), *b = fuzz_file(1, p2, n2), *l = fuzz_file(2, p3, n3);
    textfile s, t;
    nmt_err err;
    if (!a || !b || textfile_read(&s, a, &err)) return 0;
    if (textfile_read(&t, b, &err) == 0) {
        for (long i = 0; i < s.nlines; i++) count_tokens(s.line[i]);
        if (s.nlines == t.nlines) build(&s, &t, l, K, max_len);
        char *tok[8];
        for (long i = 0; i < t.nlines; i++) text_split_words(t.line[i], tok, 8);
        textfile_free(&t);
    }
    textfile_free(&s);
    return 0;
}
