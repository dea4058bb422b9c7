/* base64.c: RFC 4648 base64, three bytes to four characters of a 64-letter alphabet; the last
 * group is padded with '=' (one '=' when it holds two bytes, two when it holds one). */
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base64_encode(const void *in, size_t n)
{
    const unsigned char *p = in;
    char *s = malloc((n + 2) / 3 * 4 + 1), *q = s;
    if (!s) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < n) v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        *q++ = alphabet[v >> 18 & 63];
        *q++ = alphabet[v >> 12 & 63];
        *q++ = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
        *q++ = i + 2 < n ? alphabet[v & 63] : '=';
    }
    *q = 0;
    return s;
}

/* The 6-bit value of c, or -1 outside the alphabet. */
static int value_of(char c)
{
    const char *k = c ? strchr(alphabet, c) : NULL;
    return k ? (int)(k - alphabet) : -1;
}

int base64_decode(const char *s, unsigned char **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t len = strlen(s);
    if (len % 4) return -1;
    size_t pad = len && s[len - 1] == '=' ? 1 + (s[len - 2] == '=') : 0;
    unsigned char *b = malloc(len / 4 * 3 + 1);
    if (!b) return -1;
    size_t k = 0;
    for (size_t i = 0; i < len; i += 4) {
        int last = i + 4 == len;
        unsigned v = 0;
        for (int j = 0; j < 4; j++) {
            int x = last && j >= 4 - (int)pad ? 0 : value_of(s[i + j]);
            if (x < 0) { free(b); return -1; }
            v = v << 6 | (unsigned)x;
        }
        b[k++] = (unsigned char)(v >> 16);
        if (!last || pad < 2) b[k++] = (unsigned char)(v >> 8);
        if (!last || pad < 1) b[k++] = (unsigned char)v;
    }
    *out = b;
    *n = k;
    return 0;
}
