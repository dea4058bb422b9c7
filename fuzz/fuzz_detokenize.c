/* fuzz_detokenize.c: one line through the Moses detokenizer (the first byte picks the
 * language), and one word through the HTML unescaping it applies. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "text/tokenize.h"

int fuzz_detokenize(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    tok_buf b;
    tok_buf_init(&b);
    nmt_err err;
    detok_line(data[0] % 3, (const char *)data + 1, size - 1, &b, &err);
    tok_buf_free(&b);
    char *w = malloc(size);
    if (w) {
        memcpy(w, data + 1, size - 1);
        w[size - 1] = 0;
        detok_unescape_word(w);
        free(w);
    }
    return 0;
}
