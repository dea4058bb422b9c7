/* base64.h: RFC 4648 base64 (the standard alphabet, '=' padding), so that binary blobs can
 * travel inside JSON strings: a model file's embedded SentencePiece models live in its
 * metadata this way. */
#ifndef NMT_BASE64_H
#define NMT_BASE64_H

#include <stddef.h>

/* The encoding of in[0..n) as a NUL-terminated string (malloc'ed); NULL without memory. */
char *base64_encode(const void *in, size_t n);
/* Decodes the NUL-terminated s into *out (malloc'ed, *n bytes). Returns 0, or -1 when s is not
 * canonical base64 (a character outside the alphabet, a length not a multiple of 4, padding
 * anywhere but at the end) or memory is short: a damaged blob is never half-read. */
int base64_decode(const char *s, unsigned char **out, size_t *n);

#endif
