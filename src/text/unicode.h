/* unicode.h: UTF-8 decoding/encoding and Unicode general categories and case mapping, from
 * tables generated once (scripts/gen_unicode.py) and compiled in, so nothing is read at run time.
 * Used by the tokenizer, BLEU's intl tokenizer, chrF and the corpus reader. */
#ifndef NMT_UNICODE_H
#define NMT_UNICODE_H

#include <stddef.h>
#include <stdint.h>

/* Decodes one code point from s[0..n). Returns the number of bytes used (1..4), or -1 for an
 * invalid, overlong, surrogate or truncated sequence. */
int utf8_decode(const char *s, size_t n, uint32_t *cp);

/* Encodes cp into out (at least 4 bytes); returns the byte count (1..4), or 0 if cp is invalid. */
int utf8_encode(uint32_t cp, char *out);

/* Byte offset of the first invalid sequence in s[0..n), or -1 when all of it is valid UTF-8. */
long utf8_find_invalid(const char *s, size_t n);

/* Unicode general categories. */
enum uni_cat {
    UNI_Cn = 0, UNI_Lu, UNI_Ll, UNI_Lt, UNI_Lm, UNI_Lo, UNI_Mn, UNI_Mc, UNI_Me,
    UNI_Nd, UNI_Nl, UNI_No, UNI_Pc, UNI_Pd, UNI_Ps, UNI_Pe, UNI_Pi, UNI_Pf, UNI_Po,
    UNI_Sm, UNI_Sc, UNI_Sk, UNI_So, UNI_Zs, UNI_Zl, UNI_Zp, UNI_Cc, UNI_Cf, UNI_Cs, UNI_Co
};
int uni_category(uint32_t cp);

/* Simple (one-to-one) case mappings; cp itself when it has none. */
uint32_t uni_tolower(uint32_t cp);
uint32_t uni_toupper(uint32_t cp);

/* Binary properties that Perl regexes use and that the categories do not give exactly (Moses'
 * tokenizer.perl is written with them): Alphabetic = \p{Alpha} (letters, Nl and Other_Alphabetic
 * marks), Lowercase = \p{Lower} (Ll and Other_Lowercase), White_Space = \s on character strings
 * (includes U+00A0, U+2000..U+200A, U+3000; not U+001C..U+001F). */
int uni_is_alphabetic(uint32_t cp);
int uni_is_lowercase(uint32_t cp);
int uni_is_space(uint32_t cp);
/* Perl \p{Alnum}: Alphabetic or Nd. */
static inline int uni_is_alnum(uint32_t cp) { return uni_is_alphabetic(cp) || uni_category(cp) == UNI_Nd; }

/* The Unicode version the compiled-in tables were generated from ("14.0.0"). */
const char *uni_version(void);

/* Convenience classes built on the categories (as Perl's \p{L}, \p{N}, \p{P}, \p{S}, ...). */
static inline int uni_is_letter(uint32_t cp) { int c = uni_category(cp); return c >= UNI_Lu && c <= UNI_Lo; }
static inline int uni_is_mark(uint32_t cp) { int c = uni_category(cp); return c >= UNI_Mn && c <= UNI_Me; }
static inline int uni_is_number(uint32_t cp) { int c = uni_category(cp); return c >= UNI_Nd && c <= UNI_No; }
static inline int uni_is_punct(uint32_t cp) { int c = uni_category(cp); return c >= UNI_Pc && c <= UNI_Po; }
static inline int uni_is_symbol(uint32_t cp) { int c = uni_category(cp); return c >= UNI_Sm && c <= UNI_So; }

#endif
