/* test_unicode.c: checks src/text/unicode.c: categories and simple case mappings of code points from
 * many scripts against python3 unicodedata values written here as literals, the Perl-regex
 * properties (Alphabetic, Lowercase, White_Space), and strict UTF-8 decoding/encoding. */
#include <string.h>

#include "test.h"
#include "text/unicode.h"

/* {code point, category, simple lowercase, simple uppercase}, from python3 (Unicode 14.0):
 * unicodedata.category(c), c.lower(), c.upper(); where the full mapping expands (U+0130, U+00DF,
 * U+1F80) the simple mapping of UnicodeData.txt is written instead. */
static const struct { uint32_t cp; int cat; uint32_t lower, upper; } cases[] = {
    {0x41, UNI_Lu, 0x61, 0x41},       /* LATIN CAPITAL LETTER A */
    {0x61, UNI_Ll, 0x61, 0x41},       /* LATIN SMALL LETTER A */
    {0x30, UNI_Nd, 0x30, 0x30},       /* DIGIT ZERO */
    {0x20, UNI_Zs, 0x20, 0x20},       /* SPACE */
    {0x09, UNI_Cc, 0x09, 0x09},       /* TAB */
    {0x2C, UNI_Po, 0x2C, 0x2C},       /* COMMA */
    {0x24, UNI_Sc, 0x24, 0x24},       /* DOLLAR SIGN */
    {0x5F, UNI_Pc, 0x5F, 0x5F},       /* LOW LINE */
    {0x2D, UNI_Pd, 0x2D, 0x2D},       /* HYPHEN-MINUS */
    {0x28, UNI_Ps, 0x28, 0x28},       /* LEFT PARENTHESIS */
    {0x29, UNI_Pe, 0x29, 0x29},       /* RIGHT PARENTHESIS */
    {0x2B, UNI_Sm, 0x2B, 0x2B},       /* PLUS SIGN */
    {0x5E, UNI_Sk, 0x5E, 0x5E},       /* CIRCUMFLEX ACCENT */
    {0xA0, UNI_Zs, 0xA0, 0xA0},       /* NO-BREAK SPACE */
    {0xA6, UNI_So, 0xA6, 0xA6},       /* BROKEN BAR */
    {0xAB, UNI_Pi, 0xAB, 0xAB},       /* LEFT-POINTING DOUBLE ANGLE QUOTATION MARK */
    {0xAD, UNI_Cf, 0xAD, 0xAD},       /* SOFT HYPHEN */
    {0xBB, UNI_Pf, 0xBB, 0xBB},       /* RIGHT-POINTING DOUBLE ANGLE QUOTATION MARK */
    {0xB2, UNI_No, 0xB2, 0xB2},       /* SUPERSCRIPT TWO */
    {0xC9, UNI_Lu, 0xE9, 0xC9},       /* LATIN CAPITAL LETTER E WITH ACUTE */
    {0xDF, UNI_Ll, 0xDF, 0xDF},       /* LATIN SMALL LETTER SHARP S (full upper "SS") */
    {0xE9, UNI_Ll, 0xE9, 0xC9},       /* LATIN SMALL LETTER E WITH ACUTE */
    {0xFF, UNI_Ll, 0xFF, 0x178},      /* LATIN SMALL LETTER Y WITH DIAERESIS */
    {0x100, UNI_Lu, 0x101, 0x100},    /* LATIN CAPITAL LETTER A WITH MACRON */
    {0x101, UNI_Ll, 0x101, 0x100},    /* LATIN SMALL LETTER A WITH MACRON */
    {0x130, UNI_Lu, 0x69, 0x130},     /* LATIN CAPITAL LETTER I WITH DOT ABOVE (full lower "i\u0307") */
    {0x131, UNI_Ll, 0x131, 0x49},     /* LATIN SMALL LETTER DOTLESS I */
    {0x178, UNI_Lu, 0xFF, 0x178},     /* LATIN CAPITAL LETTER Y WITH DIAERESIS */
    {0x1C4, UNI_Lu, 0x1C6, 0x1C4},    /* LATIN CAPITAL LETTER DZ WITH CARON */
    {0x1C5, UNI_Lt, 0x1C6, 0x1C4},    /* LATIN CAPITAL LETTER D WITH SMALL LETTER Z WITH CARON */
    {0x2B0, UNI_Lm, 0x2B0, 0x2B0},    /* MODIFIER LETTER SMALL H */
    {0x300, UNI_Mn, 0x300, 0x300},    /* COMBINING GRAVE ACCENT */
    {0x345, UNI_Mn, 0x345, 0x399},    /* COMBINING GREEK YPOGEGRAMMENI */
    {0x378, UNI_Cn, 0x378, 0x378},    /* unassigned */
    {0x391, UNI_Lu, 0x3B1, 0x391},    /* GREEK CAPITAL LETTER ALPHA */
    {0x3A3, UNI_Lu, 0x3C3, 0x3A3},    /* GREEK CAPITAL LETTER SIGMA */
    {0x3C2, UNI_Ll, 0x3C2, 0x3A3},    /* GREEK SMALL LETTER FINAL SIGMA */
    {0x3C3, UNI_Ll, 0x3C3, 0x3A3},    /* GREEK SMALL LETTER SIGMA */
    {0x401, UNI_Lu, 0x451, 0x401},    /* CYRILLIC CAPITAL LETTER IO */
    {0x416, UNI_Lu, 0x436, 0x416},    /* CYRILLIC CAPITAL LETTER ZHE */
    {0x436, UNI_Ll, 0x436, 0x416},    /* CYRILLIC SMALL LETTER ZHE */
    {0x531, UNI_Lu, 0x561, 0x531},    /* ARMENIAN CAPITAL LETTER AYB */
    {0x5D0, UNI_Lo, 0x5D0, 0x5D0},    /* HEBREW LETTER ALEF */
    {0x627, UNI_Lo, 0x627, 0x627},    /* ARABIC LETTER ALEF */
    {0x660, UNI_Nd, 0x660, 0x660},    /* ARABIC-INDIC DIGIT ZERO */
    {0x64B, UNI_Mn, 0x64B, 0x64B},    /* ARABIC FATHATAN */
    {0x903, UNI_Mc, 0x903, 0x903},    /* DEVANAGARI SIGN VISARGA */
    {0x915, UNI_Lo, 0x915, 0x915},    /* DEVANAGARI LETTER KA */
    {0x93F, UNI_Mc, 0x93F, 0x93F},    /* DEVANAGARI VOWEL SIGN I */
    {0x966, UNI_Nd, 0x966, 0x966},    /* DEVANAGARI DIGIT ZERO */
    {0xE01, UNI_Lo, 0xE01, 0xE01},    /* THAI CHARACTER KO KAI */
    {0x10A0, UNI_Lu, 0x2D00, 0x10A0}, /* GEORGIAN CAPITAL LETTER AN */
    {0x13A0, UNI_Lu, 0xAB70, 0x13A0}, /* CHEROKEE LETTER A */
    {0x1E9E, UNI_Lu, 0xDF, 0x1E9E},   /* LATIN CAPITAL LETTER SHARP S */
    {0x1F80, UNI_Ll, 0x1F80, 0x1F88}, /* GREEK SMALL LETTER ALPHA WITH PSILI AND YPOGEGRAMMENI */
    {0x2013, UNI_Pd, 0x2013, 0x2013}, /* EN DASH */
    {0x2014, UNI_Pd, 0x2014, 0x2014}, /* EM DASH */
    {0x2018, UNI_Pi, 0x2018, 0x2018}, /* LEFT SINGLE QUOTATION MARK */
    {0x2019, UNI_Pf, 0x2019, 0x2019}, /* RIGHT SINGLE QUOTATION MARK */
    {0x201C, UNI_Pi, 0x201C, 0x201C}, /* LEFT DOUBLE QUOTATION MARK */
    {0x201D, UNI_Pf, 0x201D, 0x201D}, /* RIGHT DOUBLE QUOTATION MARK */
    {0x2028, UNI_Zl, 0x2028, 0x2028}, /* LINE SEPARATOR */
    {0x2029, UNI_Zp, 0x2029, 0x2029}, /* PARAGRAPH SEPARATOR */
    {0x20AC, UNI_Sc, 0x20AC, 0x20AC}, /* EURO SIGN */
    {0x20DD, UNI_Me, 0x20DD, 0x20DD}, /* COMBINING ENCLOSING CIRCLE */
    {0x2160, UNI_Nl, 0x2170, 0x2160}, /* ROMAN NUMERAL ONE */
    {0x2170, UNI_Nl, 0x2170, 0x2160}, /* SMALL ROMAN NUMERAL ONE */
    {0x2212, UNI_Sm, 0x2212, 0x2212}, /* MINUS SIGN */
    {0x24B6, UNI_So, 0x24D0, 0x24B6}, /* CIRCLED LATIN CAPITAL LETTER A */
    {0x3000, UNI_Zs, 0x3000, 0x3000}, /* IDEOGRAPHIC SPACE */
    {0x3042, UNI_Lo, 0x3042, 0x3042}, /* HIRAGANA LETTER A */
    {0x4E2D, UNI_Lo, 0x4E2D, 0x4E2D}, /* CJK UNIFIED IDEOGRAPH-4E2D */
    {0xAB70, UNI_Ll, 0xAB70, 0x13A0}, /* CHEROKEE SMALL LETTER A */
    {0xAC00, UNI_Lo, 0xAC00, 0xAC00}, /* HANGUL SYLLABLE GA */
    {0xD800, UNI_Cs, 0xD800, 0xD800}, /* a surrogate */
    {0xE000, UNI_Co, 0xE000, 0xE000}, /* private use */
    {0xFEFF, UNI_Cf, 0xFEFF, 0xFEFF}, /* ZERO WIDTH NO-BREAK SPACE */
    {0xFF21, UNI_Lu, 0xFF41, 0xFF21}, /* FULLWIDTH LATIN CAPITAL LETTER A */
    {0xFF41, UNI_Ll, 0xFF41, 0xFF21}, /* FULLWIDTH LATIN SMALL LETTER A */
    {0xFFFD, UNI_So, 0xFFFD, 0xFFFD}, /* REPLACEMENT CHARACTER */
    {0x10400, UNI_Lu, 0x10428, 0x10400}, /* DESERET CAPITAL LETTER LONG I */
    {0x10428, UNI_Ll, 0x10428, 0x10400}, /* DESERET SMALL LETTER LONG I */
    {0x1D400, UNI_Lu, 0x1D400, 0x1D400}, /* MATHEMATICAL BOLD CAPITAL A */
    {0x1E900, UNI_Lu, 0x1E922, 0x1E900}, /* ADLAM CAPITAL LETTER ALIF */
    {0x1F600, UNI_So, 0x1F600, 0x1F600}, /* GRINNING FACE */
    {0x20000, UNI_Lo, 0x20000, 0x20000}, /* CJK UNIFIED IDEOGRAPH-20000 */
    {0xE0001, UNI_Cf, 0xE0001, 0xE0001}, /* LANGUAGE TAG */
    {0xF0000, UNI_Co, 0xF0000, 0xF0000}, /* plane 15 private use */
    {0x10FFFF, UNI_Cn, 0x10FFFF, 0x10FFFF}, /* noncharacter, unassigned */
};

static void test_tables(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t cp = cases[i].cp;
        CHECKF(uni_category(cp) == cases[i].cat, "U+%04X category %d, expected %d", cp,
               uni_category(cp), cases[i].cat);
        CHECKF(uni_tolower(cp) == cases[i].lower, "U+%04X tolower U+%04X, expected U+%04X", cp,
               uni_tolower(cp), cases[i].lower);
        CHECKF(uni_toupper(cp) == cases[i].upper, "U+%04X toupper U+%04X, expected U+%04X", cp,
               uni_toupper(cp), cases[i].upper);
    }
    CHECK(uni_category(0x110000) == UNI_Cn);
    CHECK(uni_tolower(0x110000) == 0x110000);
    /* every ASCII letter round-trips */
    for (uint32_t c = 'A'; c <= 'Z'; c++) CHECK(uni_tolower(c) == c + 32 && uni_toupper(c + 32) == c);

    /* Alphabetic: letters, Nl, and Other_Alphabetic marks (Perl's \p{Alpha}), not plain marks. */
    CHECK(uni_is_alphabetic('a') && uni_is_alphabetic(0xE9) && uni_is_alphabetic(0x4E2D));
    CHECK(uni_is_alphabetic(0x345) && uni_is_alphabetic(0x93F) && uni_is_alphabetic(0x64B));
    CHECK(uni_is_alphabetic(0x2160) && uni_is_alphabetic(0x24B6));
    CHECK(!uni_is_alphabetic(0x300) && !uni_is_alphabetic('1') && !uni_is_alphabetic('\'')
          && !uni_is_alphabetic(0x660) && !uni_is_alphabetic(0xB2));
    CHECK(uni_is_alnum('7') && uni_is_alnum(0x966) && !uni_is_alnum(0xB2) && !uni_is_alnum('-'));
    /* Lowercase: Ll plus Other_Lowercase (ª, ʰ, ⅰ, ⓐ) */
    CHECK(uni_is_lowercase('z') && uni_is_lowercase(0xDF) && uni_is_lowercase(0xAA)
          && uni_is_lowercase(0x2B0) && uni_is_lowercase(0x2170) && uni_is_lowercase(0x24D0));
    CHECK(!uni_is_lowercase('Z') && !uni_is_lowercase(0x1C5) && !uni_is_lowercase(0x3042)
          && !uni_is_lowercase('0'));
    /* White_Space */
    CHECK(uni_is_space(' ') && uni_is_space('\t') && uni_is_space('\n') && uni_is_space(0x0B)
          && uni_is_space(0x85) && uni_is_space(0xA0) && uni_is_space(0x2009)
          && uni_is_space(0x202F) && uni_is_space(0x3000) && uni_is_space(0x2028));
    CHECK(!uni_is_space(0x1C) && !uni_is_space(0x200B) && !uni_is_space(0xFEFF) && !uni_is_space('x'));
    CHECK(uni_is_letter(0x2B0) && !uni_is_letter(0x2160) && uni_is_number(0x2160)
          && uni_is_punct(0xAB) && uni_is_symbol(0x20AC) && uni_is_mark(0x903));
    CHECK(strcmp(uni_version(), "14.0.0") == 0);
}

static int dec(const char *s, size_t n, uint32_t *cp) { return utf8_decode(s, n, cp); }

static void test_utf8(void)
{
    uint32_t cp = 0;
    CHECK(dec("A", 1, &cp) == 1 && cp == 0x41);
    CHECK(dec("\xC3\xA9", 2, &cp) == 2 && cp == 0xE9);
    CHECK(dec("\xE2\x82\xAC", 3, &cp) == 3 && cp == 0x20AC);
    CHECK(dec("\xF0\x9F\x98\x80", 4, &cp) == 4 && cp == 0x1F600);
    CHECK(dec("\xF4\x8F\xBF\xBF", 4, &cp) == 4 && cp == 0x10FFFF);
    CHECK(dec("\xEF\xBF\xBD", 3, &cp) == 3 && cp == 0xFFFD);
    CHECK(dec("\0", 1, &cp) == 1 && cp == 0);
    /* overlongs */
    CHECK(dec("\xC0\x80", 2, &cp) == -1);
    CHECK(dec("\xC1\xBF", 2, &cp) == -1);
    CHECK(dec("\xE0\x80\xAF", 3, &cp) == -1);
    CHECK(dec("\xE0\x9F\xBF", 3, &cp) == -1);
    CHECK(dec("\xF0\x8F\xBF\xBF", 4, &cp) == -1);
    /* surrogates and beyond U+10FFFF */
    CHECK(dec("\xED\xA0\x80", 3, &cp) == -1);
    CHECK(dec("\xED\xBF\xBF", 3, &cp) == -1);
    CHECK(dec("\xED\x9F\xBF", 3, &cp) == 3 && cp == 0xD7FF);
    CHECK(dec("\xF4\x90\x80\x80", 4, &cp) == -1);
    CHECK(dec("\xF5\x80\x80\x80", 4, &cp) == -1);
    CHECK(dec("\xFF", 1, &cp) == -1);
    /* truncations, stray and missing continuation bytes */
    CHECK(dec("\xC3", 1, &cp) == -1);
    CHECK(dec("\xE2\x82", 2, &cp) == -1);
    CHECK(dec("\xF0\x9F\x98", 3, &cp) == -1);
    CHECK(dec("\xE2\x82\xAC", 2, &cp) == -1); /* n cuts a valid sequence */
    CHECK(dec("\x80", 1, &cp) == -1);
    CHECK(dec("\xC3\x41", 2, &cp) == -1);
    CHECK(dec("\xE2\x41\xAC", 3, &cp) == -1);
    CHECK(dec("", 0, &cp) == -1);

    char b[4];
    CHECK(utf8_encode(0x41, b) == 1 && b[0] == 'A');
    CHECK(utf8_encode(0xE9, b) == 2 && !memcmp(b, "\xC3\xA9", 2));
    CHECK(utf8_encode(0x20AC, b) == 3 && !memcmp(b, "\xE2\x82\xAC", 3));
    CHECK(utf8_encode(0x1F600, b) == 4 && !memcmp(b, "\xF0\x9F\x98\x80", 4));
    CHECK(utf8_encode(0xD800, b) == 0);
    CHECK(utf8_encode(0x110000, b) == 0);
    /* encode/decode round trip over every scalar value */
    int bad = 0;
    for (uint32_t c = 0; c <= 0x10FFFF; c++) {
        if (c >= 0xD800 && c <= 0xDFFF) continue;
        int k = utf8_encode(c, b);
        uint32_t d;
        if (k < 1 || dec(b, (size_t)k, &d) != k || d != c) bad++;
    }
    CHECKF(bad == 0, "%d code points do not round-trip", bad);

    const char *s = "ok \xC3\xA9 \xE2\x82 x";
    CHECK(utf8_find_invalid(s, strlen(s)) == 6);
    CHECK(utf8_find_invalid("caf\xC3\xA9", 5) == -1);
    CHECK(utf8_find_invalid("", 0) == -1);
    CHECK(utf8_find_invalid("\xC3\xA9\xC3", 3) == 2);
}

int main(void)
{
    test_tables();
    test_utf8();
    return test_done("test_unicode");
}
