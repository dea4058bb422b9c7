/* unicode.c: strict UTF-8 decoding/encoding and lookups in the compiled-in Unicode tables
 * (general category, simple case mapping, the Alphabetic/Lowercase/White_Space properties).
 * The tables in unicode_tables.h are runs and inversion lists searched by bisection. */
#include "text/unicode.h"

/* {first, count, stride, delta}: first + k*stride for k < count maps to itself + delta. */
struct uni_case_run {
    uint32_t first;
    uint16_t count;
    uint16_t stride;
    int32_t delta;
};

#include "text/unicode_tables.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- UTF-8 */

int utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0) return -1;
    unsigned b0 = u[0];
    if (b0 < 0x80) { *cp = b0; return 1; }
    int len;
    uint32_t c, min;
    /* 0x80..0xC1 are continuation bytes or would start 2-byte overlongs; 0xF5.. exceed U+10FFFF */
    if (b0 >= 0xC2 && b0 <= 0xDF) { len = 2; c = b0 & 0x1F; min = 0x80; }
    else if (b0 >= 0xE0 && b0 <= 0xEF) { len = 3; c = b0 & 0x0F; min = 0x800; }
    else if (b0 >= 0xF0 && b0 <= 0xF4) { len = 4; c = b0 & 0x07; min = 0x10000; }
    else return -1;
    if (n < (size_t)len) return -1;
    for (int i = 1; i < len; i++) {
        if ((u[i] & 0xC0) != 0x80) return -1;
        c = (c << 6) | (u[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return -1;
    *cp = c;
    return len;
}

int utf8_encode(uint32_t cp, char *out)
{
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    if (cp <= 0x10FFFF) {
        o[0] = (unsigned char)(0xF0 | (cp >> 18));
        o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[3] = (unsigned char)(0x80 | (cp & 0x3F));
        return 4;
    }
    return 0;
}

long utf8_find_invalid(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if ((unsigned char)s[i] < 0x80) { i++; continue; }
        uint32_t cp;
        int k = utf8_decode(s + i, n - i, &cp);
        if (k < 0) return (long)i;
        i += (size_t)k;
    }
    return -1;
}

/* ---------------------------------------------------------------- tables */

/* Index of the last entry of the sorted list a[0..n) that is <= key, or -1. */
static long last_le(const uint32_t *a, size_t n, uint32_t key)
{
    size_t lo = 0, hi = n; /* answer in [lo-1, hi-1] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] <= key) lo = mid + 1;
        else hi = mid;
    }
    return (long)lo - 1;
}

static int in_invlist(const uint32_t *a, size_t n, uint32_t cp)
{
    return (last_le(a, n, cp) & 1) == 0; /* even index: inside a range */
}

int uni_category(uint32_t cp)
{
    if (cp > 0x10FFFF) return UNI_Cn;
    /* Runs are packed as (first << 5) | cat, so comparing with (cp << 5) | 31 finds the run
     * whose first code point is the largest one <= cp. */
    long i = last_le(uni_cat_runs, COUNT(uni_cat_runs), (cp << 5) | 31u);
    return i < 0 ? UNI_Cn : (int)(uni_cat_runs[i] & 31u);
}

static uint32_t case_map(const struct uni_case_run *r, size_t n, uint32_t cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].first <= cp) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return cp;
    const struct uni_case_run *x = &r[lo - 1];
    uint32_t off = cp - x->first;
    if (off % x->stride == 0 && off / x->stride < x->count) return (uint32_t)((int32_t)cp + x->delta);
    return cp;
}

uint32_t uni_tolower(uint32_t cp) { return case_map(uni_lower_runs, COUNT(uni_lower_runs), cp); }
uint32_t uni_toupper(uint32_t cp) { return case_map(uni_upper_runs, COUNT(uni_upper_runs), cp); }

int uni_is_alphabetic(uint32_t cp)
{
    if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
    return in_invlist(uni_alpha_inv, COUNT(uni_alpha_inv), cp);
}

int uni_is_lowercase(uint32_t cp)
{
    if (cp < 0x80) return cp >= 'a' && cp <= 'z';
    return in_invlist(uni_lowercase_inv, COUNT(uni_lowercase_inv), cp);
}

int uni_is_space(uint32_t cp)
{
    if (cp < 0x80) return cp == ' ' || (cp >= 9 && cp <= 13);
    return in_invlist(uni_space_inv, COUNT(uni_space_inv), cp);
}

const char *uni_version(void) { return UNI_TABLES_VERSION; }
