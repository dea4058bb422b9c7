/* sentsplit.c: sentence splitting (sentsplit.h). The paragraph is cut into words at blanks and each
 * gap between two words is judged on the two words alone, as split-sentences.perl's rules look
 * only at the end of one word and the start of the next (its rules 1-4 on ? ! and dots, then the
 * per-word period rule with the non-breaking prefixes). */
#include <string.h>

#include "text/sentsplit.h"
#include "text/tokenize.h"
#include "text/unicode.h"

typedef struct word { const char *s; size_t n; } word;

/* The code point at s[i] and its length (an invalid byte: itself, 1 byte). */
static uint32_t cp_at(const char *s, size_t n, size_t i, int *len)
{
    uint32_t cp;
    int k = utf8_decode(s + i, n - i, &cp);
    *len = k > 0 ? k : 1;
    return k > 0 ? cp : (unsigned char)s[i];
}

/* The code point that ends s[0..n), and where it starts. */
static uint32_t last_cp(const char *s, size_t n, size_t *at)
{
    size_t i = n - 1;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80 && n - i < 4) i--;
    int len;
    uint32_t cp = cp_at(s, n, i, &len);
    if ((size_t)len != n - i) { i = n - 1; cp = (unsigned char)s[i]; }
    *at = i;
    return cp;
}

/* What may open a sentence before its first letter: ' " ( [ ¿ ¡ and initial quotes (Pi). */
static int opener(uint32_t c) { return c == '\'' || c == '"' || c == '(' || c == '[' || c == 0xBF || c == 0xA1 || uni_category(c) == UNI_Pi; }
/* What may close one after its last punctuation: ' " ) ] and final quotes (Pf). */
static int closer(uint32_t c) { return c == '\'' || c == '"' || c == ')' || c == ']' || uni_category(c) == UNI_Pf; }
static int upper(uint32_t c) { return uni_category(c) == UNI_Lu; }
static int ender(uint32_t c) { return c == '.' || c == '?' || c == '!'; }
/* Perl's \w, and the . and - of the period rule's prefix */
static int prefix_char(uint32_t c) { return uni_is_alnum(c) || uni_is_mark(c) || uni_category(c) == UNI_Pc || c == '.' || c == '-'; }

static int cap_or_hyphen(uint32_t c) { return upper(c) || c == '-'; }
static int closer_or_percent(uint32_t c) { return closer(c) || c == '%'; }

/* Where the run of characters of class `in` that ends s[0..end) starts; *count gets its length. */
static size_t run_back(const char *s, size_t end, int (*in)(uint32_t), int *count)
{
    size_t at;
    *count = 0;
    while (end > 0 && in(last_cp(s, end, &at))) { end = at; ++*count; }
    return end;
}

/* Does w start with at least min_open openers and then a capital (or, with digit, a digit)? */
static int starts_sentence(word w, int min_open, int digit)
{
    size_t i = 0;
    int opens = 0, len;
    uint32_t c = 0;
    while (i < w.n && opener(c = cp_at(w.s, w.n, i, &len))) { i += (size_t)len; opens++; }
    if (i >= w.n || opens < min_open) return 0;
    return upper(c) || (digit && c >= '0' && c <= '9');
}

/* Rules 1-4: ? or !, a run of dots, or any of . ? ! behind closers, before a capital; any of . ? !
 * before openers and a capital. */
static int punct_break(word w, word nx)
{
    size_t at;
    uint32_t c = last_cp(w.s, w.n, &at);
    if ((c == '?' || c == '!') && starts_sentence(nx, 0, 0)) return 1;
    if (c == '.' && w.n >= 2 && w.s[w.n - 2] == '.' && starts_sentence(nx, 0, 0)) return 1;
    if (ender(c) && starts_sentence(nx, 1, 0)) return 1;
    int closers;
    size_t end = run_back(w.s, w.n, closer, &closers);
    return closers && end > 0 && ender(last_cp(w.s, end, &at)) && starts_sentence(nx, 0, 0);
}

/* An acronym's end: a period, capitals or hyphens, then the final periods (U.S., A.-B.). */
static int acronym(word w, size_t dots_at)
{
    int caps;
    size_t i = run_back(w.s, dots_at, cap_or_hyphen, &caps);
    return caps && i > 0 && w.s[i - 1] == '.';
}

/* The period rule: w ends with a [\w.-]* prefix, closers, periods. */
static int period_break(int lang, word w, word nx)
{
    size_t end = w.n;
    while (end > 0 && w.s[end - 1] == '.') end--;
    if (end == w.n) return 0;
    int closers, chars;
    size_t dots_at = end, pre_end = run_back(w.s, end, closer_or_percent, &closers);
    size_t pre = run_back(w.s, pre_end, prefix_char, &chars); /* the rule's pattern is not anchored */
    char prefix[64];
    int type = 0;
    if (pre < pre_end && pre_end - pre < sizeof prefix) {
        memcpy(prefix, w.s + pre, pre_end - pre);
        prefix[pre_end - pre] = 0;
        type = tok_prefix_type(lang, prefix);
    }
    if (type == 1 && !closers) return 0;
    if (acronym(w, dots_at)) return 0;
    if (!starts_sentence(nx, 0, 1)) return 0;
    return !(type == 2 && !closers && nx.s[0] >= '0' && nx.s[0] <= '9');
}

/* The next word of text[*i..len), or n == 0 at the end. */
static word next_word(const char *text, size_t len, size_t *i)
{
    int l;
    while (*i < len && uni_is_space(cp_at(text, len, *i, &l))) *i += (size_t)l;
    word w = {text + *i, 0};
    while (*i < len && !uni_is_space(cp_at(text, len, *i, &l))) { *i += (size_t)l; w.n += (size_t)l; }
    return w;
}

int sent_split(int lang, const char *text, size_t len, sent_span *out, int cap)
{
    size_t i = 0;
    int n = 0;
    word w = next_word(text, len, &i);
    if (!w.n) return 0;
    size_t start = (size_t)(w.s - text);
    for (;;) {
        word nx = next_word(text, len, &i);
        if (nx.n && !punct_break(w, nx) && !period_break(lang, w, nx)) { w = nx; continue; }
        if (n < cap) out[n] = (sent_span){start, (size_t)(w.s - text) + w.n};
        n++;
        if (!nx.n) return n;
        start = (size_t)(nx.s - text);
        w = nx;
    }
}
