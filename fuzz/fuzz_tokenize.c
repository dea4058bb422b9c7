/* fuzz_tokenize.c: one line through the Moses tokenizer with the options of `nmt tokenize`
 * (the first byte picks language, -a, escaping, lowercasing, punctuation normalisation), and
 * the lowercasing and normalising passes on their own. */
#include "fuzz.h"
#include "text/tokenize.h"

int fuzz_tokenize(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    tok_opts o = tok_opts_default();
    o.lang = data[0] % 3;
    o.aggressive = data[0] >> 2 & 1;
    o.escape = data[0] >> 3 & 1;
    o.lowercase = data[0] >> 4 & 1;
    o.normalize = data[0] >> 5 & 1;
    const char *in = (const char *)data + 1;
    tok_buf b;
    tok_buf_init(&b);
    nmt_err err;
    tok_line(&o, in, size - 1, &b, &err);
    tok_lowercase_line(in, size - 1, &b, &err);
    tok_normalize_line(o.lang, in, size - 1, &b, &err);
    tok_buf_free(&b);
    return 0;
}
