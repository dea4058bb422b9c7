/* tokenize.c: a hand-written re-implementation of Moses' tokenizer.perl (version 1.1, as in
 * moses-smt/mosesdecoder 3a0631a) for en, fr and de (the buffer helpers it shares with the
 * detokenizer and the normalizer are in tokbuf.c).
 *
 * tokenizer.perl is a pipeline of global regex substitutions over a Perl character string. We
 * keep that shape: the line is decoded into code points and every substitution is one pass that
 * reads one buffer and writes the other, scanning left to right and resuming after each match
 * exactly as Perl's s///g does (so "A,B,C" style overlaps behave the same). Perl's classes map to
 * unicode.h: \s = uni_is_space (White_Space), \p{IsAlnum} = uni_is_alnum, \p{IsAlpha} =
 * uni_is_alphabetic, \p{IsN} = uni_is_number, \p{IsLower} = uni_is_lowercase. Even the
 * DOTMULTI markers that the script uses to protect "..." are reproduced literally, because the
 * rules in between see them as letters. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "text/nonbreaking_prefixes.h"
#include "text/tokenize.h"
#include "text/unicode.h"

/* ================================================================ options */

int tok_lang_parse(const char *s)
{
    if (!s) return -1;
    if (!strcmp(s, "en")) return TOK_LANG_EN;
    if (!strcmp(s, "fr")) return TOK_LANG_FR;
    if (!strcmp(s, "de")) return TOK_LANG_DE;
    return -1;
}

const char *tok_lang_name(int lang)
{
    switch (lang) {
    case TOK_LANG_EN: return "en";
    case TOK_LANG_FR: return "fr";
    case TOK_LANG_DE: return "de";
    default: return "?";
    }
}

tok_opts tok_opts_default(void)
{
    tok_opts o = {TOK_LANG_EN, 0, 1, 0, 0};
    return o;
}

/* ================================================================ character classes */

static int is_space(uint32_t c) { return uni_is_space(c); }
static int is_alnum(uint32_t c) { return uni_is_alnum(c); }
static int is_alpha(uint32_t c) { return uni_is_alphabetic(c); }
static int is_num(uint32_t c) { return uni_is_number(c); }

/* ================================================================ the passes */

/* Each pass reads src and rewrites dst from scratch. */
#define EMIT(x) tok_cv_push(dst, (x))

/* "$text = " $text "; s/\s+/ /g; s/[\000-\037]//g;" then "s/ +/ /g; s/^ //g; s/ $//g;":
 * whitespace runs become one space, other C0 controls vanish (which can join two runs), and
 * the ends are trimmed. */
static void pass_space(const tok_cpvec *src, tok_cpvec *dst)
{
    dst->n = 0;
    int pending = 0; /* a space is owed before the next kept character */
    for (size_t i = 0; i < src->n; i++) {
        uint32_t c = src->v[i];
        if (is_space(c)) { pending = 1; continue; }
        if (c < 0x20) continue;
        if (pending && dst->n > 0) EMIT(' ');
        pending = 0;
        EMIT(c);
    }
}

/* s/([^\p{IsAlnum}\s\.\'\`\,\-])/ $1 /g: every other character becomes its own token. */
static void pass_special(const tok_cpvec *src, tok_cpvec *dst)
{
    dst->n = 0;
    for (size_t i = 0; i < src->n; i++) {
        uint32_t c = src->v[i];
        if (is_alnum(c) || is_space(c) || c == '.' || c == '\'' || c == '`' || c == ',' || c == '-') {
            EMIT(c);
        } else {
            EMIT(' ');
            EMIT(c);
            EMIT(' ');
        }
    }
}

/* -a: s/([\p{IsAlnum}])\-(?=[\p{IsAlnum}])/$1 \@-\@ /g. The look-ahead does not consume, so
 * "a-b-c" gives "a @-@ b @-@ c". */
static void pass_aggressive(const tok_cpvec *src, tok_cpvec *dst)
{
    dst->n = 0;
    const uint32_t *v = src->v;
    size_t n = src->n, i = 0;
    while (i < n) {
        if (i + 2 < n && v[i + 1] == '-' && is_alnum(v[i]) && is_alnum(v[i + 2])) {
            EMIT(v[i]);
            tok_cv_push_str(dst, " @-@ ");
            i += 2;
        } else {
            EMIT(v[i++]);
        }
    }
}

static int contains(const tok_cpvec *v, const char *lit)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->v[i] == (unsigned char)lit[0] && tok_cv_match(v, i, lit)) return 1;
    return 0;
}

/* The end state of the script's loop while /DOTMULTI\./ {...} (pass_multidot), in one scan.
 * Only a "site", "DOTMULTI" followed by r >= 1 dots, ever changes: each round moves one of its
 * dots into a "DOT" before it, so it ends as "DOT" x r + "DOTMULTI". A space follows when, in
 * its last round, the first rule matched it, i.e. a non-dot X follows and X's match was not
 * eaten: the first rule consumes its X, so when a site with one dot is followed at once by
 * another site with one dot, the first rule skips the second, and the second rule ends it
 * without the space (then the third is matched again). That can happen in the first round
 * only: by the second, the next site has grown a "DOT" before its own first letter. */
static void multidot_settle(const tok_cpvec *src, tok_cpvec *dst)
{
    dst->n = 0;
    const uint32_t *v = src->v;
    size_t n = src->n, i = 0;
    size_t eaten = (size_t)-1; /* where the first rule's last X was consumed in round one */
    while (i < n) {
        if (v[i] == 'D' && i + 8 < n && v[i + 8] == '.' && tok_cv_match(src, i, "DOTMULTI")) {
            size_t j = i + 8;
            while (j < n && v[j] == '.') j++;
            size_t r = j - (i + 8);
            int spaced = j < n && !(r == 1 && eaten == i);
            eaten = (r == 1 && spaced) ? j : (size_t)-1;
            for (size_t k = 0; k < r; k++) tok_cv_push_str(dst, "DOT");
            tok_cv_push_str(dst, spaced ? "DOTMULTI " : "DOTMULTI");
            i = j;
        } else {
            EMIT(v[i++]);
        }
    }
}

/* "multi-dots stay together": s/\.([\.]+)/ DOTMULTI$1/g, then while /DOTMULTI\./ {
 * s/DOTMULTI\.([^\.])/DOTDOTMULTI $1/g; s/DOTMULTI\./DOTDOTMULTI/g; }. Each loop turns one more
 * dot of every run into a "DOT", so a run of k >= 2 dots ends up as " " + "DOT" x (k-1) +
 * "DOTMULTI", plus a space when anything follows. The rules in between see that marker (as
 * letters), so we produce it too. When the text itself has no "DOTMULTI" (the normal case) we
 * write the final marker at once; otherwise the first substitution is written as the script
 * does and multidot_settle gives the loop's end state in one more scan (running the loop
 * itself costs one scan of the line per dot: quadratic). Returns the buffer with the result. */
static tok_cpvec *pass_multidot(tok_cpvec *src, tok_cpvec *dst, int literal)
{
    dst->n = 0;
    const uint32_t *v = src->v;
    size_t n = src->n, i = 0;
    while (i < n) {
        if (v[i] == '.' && i + 1 < n && v[i + 1] == '.') {
            size_t j = i + 1;
            while (j < n && v[j] == '.') j++;
            if (literal) {
                tok_cv_push_str(dst, " DOTMULTI");
                for (size_t k = i + 1; k < j; k++) EMIT('.');
            } else {
                EMIT(' ');
                for (size_t k = i + 1; k < j; k++) tok_cv_push_str(dst, "DOT");
                tok_cv_push_str(dst, j < n ? "DOTMULTI " : "DOTMULTI");
            }
            i = j;
        } else {
            EMIT(v[i++]);
        }
    }
    if (!literal) return dst;
    multidot_settle(dst, src);
    return src;
}

/* "restore multi-dots": while /DOTDOTMULTI/ { s/DOTDOTMULTI/DOTMULTI./g } s/DOTMULTI/./g. Each
 * round takes the "DOT" just before every "DOTMULTI" and puts a dot after it, so each maximal
 * chain "DOT" x m + "DOTMULTI" becomes m+1 dots, and one scan gives that for any text, the
 * user's own "DOTMULTI" included (running the rounds costs a scan per dot: quadratic). A
 * "DOTMULTI" can only start at a chain's last "DOT": the next three letters are "MUL". */
static tok_cpvec *pass_restore_dots(tok_cpvec *cur, tok_cpvec *nxt)
{
    if (!contains(cur, "DOTMULTI")) return cur;
    nxt->n = 0;
    for (size_t i = 0; i < cur->n;) {
        size_t m = 0;
        while (tok_cv_match(cur, i + 3 * m, "DOT")) m++;
        if (m > 0 && tok_cv_match(cur, i + 3 * (m - 1), "DOTMULTI")) {
            for (size_t k = 0; k < m; k++) tok_cv_push(nxt, '.');
            i += 3 * (m - 1) + 8;
        } else if (m > 0) {
            for (size_t k = 0; k < 3 * m; k++) tok_cv_push(nxt, cur->v[i++]);
        } else {
            tok_cv_push(nxt, cur->v[i++]);
        }
    }
    return nxt;
}

/* The comma rules, in the script's two steps (a single rule would skip "B" in "A,B,C"):
 * s/([^\p{IsN}])[,]/$1 , /g, s/[,]([^\p{IsN}])/ , $1/g, and s/([\p{IsN}])[,]$/$1 ,/g. */
static void pass_comma1(const tok_cpvec *src, tok_cpvec *dst)
{
    dst->n = 0;
    const uint32_t *v = src->v;
    size_t n = src->n, i = 0;
    while (i < n) {
        if (i + 1 < n && v[i + 1] == ',' && !is_num(v[i])) {
            EMIT(v[i]);
            tok_cv_push_str(dst, " , ");
            i += 2;
        } else {
            EMIT(v[i++]);
        }
    }
}

static void pass_comma2(const tok_cpvec *src, tok_cpvec *dst)
{
    dst->n = 0;
    const uint32_t *v = src->v;
    size_t n = src->n, i = 0;
    while (i < n) {
        if (v[i] == ',' && i + 1 < n && !is_num(v[i + 1])) {
            tok_cv_push_str(dst, " , ");
            EMIT(v[i + 1]);
            i += 2;
        } else {
            EMIT(v[i++]);
        }
    }
    /* s/([\p{IsN}])[,]$/$1 ,/ : only at the very end */
    if (dst->n >= 2 && !dst->oom && dst->v[dst->n - 1] == ',' && is_num(dst->v[dst->n - 2])) {
        dst->v[dst->n - 1] = ' ';
        EMIT(',');
    }
}

/* One apostrophe rule: s/(A)[']([B])/REPL/g where A and B are a class or its complement
 * (cls_a, cls_b: 1 = Alpha, 0 = not Alpha, 2 = not Alpha and not N, 3 = N; b_s: B is [s]),
 * and REPL puts spaces as `sp` says: 0 "$1 ' $2", 1 "$1 '$2", 2 "$1' $2". */
enum { AP_NOT_ALPHA = 0, AP_ALPHA = 1, AP_NOT_ALPHA_NUM = 2, AP_NUM = 3, AP_LETTER_S = 4 };
enum { AP_BOTH = 0, AP_LEFT = 1, AP_RIGHT = 2 };

static int ap_class(int cls, uint32_t c)
{
    switch (cls) {
    case AP_NOT_ALPHA: return !is_alpha(c);
    case AP_ALPHA: return is_alpha(c);
    case AP_NOT_ALPHA_NUM: return !is_alpha(c) && !is_num(c);
    case AP_NUM: return is_num(c);
    default: return c == 's';
    }
}

static void pass_apos(const tok_cpvec *src, tok_cpvec *dst, int cls_a, int cls_b, int sp)
{
    dst->n = 0;
    const uint32_t *v = src->v;
    size_t n = src->n, i = 0;
    while (i < n) {
        if (i + 2 < n && v[i + 1] == '\'' && ap_class(cls_a, v[i]) && ap_class(cls_b, v[i + 2])) {
            EMIT(v[i]);
            if (sp == AP_BOTH) tok_cv_push_str(dst, " ' ");
            else if (sp == AP_LEFT) tok_cv_push_str(dst, " '");
            else tok_cv_push_str(dst, "' ");
            EMIT(v[i + 2]);
            i += 3;
        } else {
            EMIT(v[i++]);
        }
    }
}

/* Other languages (German here): s/\'/ \' /g */
static void pass_apos_all(const tok_cpvec *src, tok_cpvec *dst)
{
    dst->n = 0;
    for (size_t i = 0; i < src->n; i++) {
        if (src->v[i] == '\'') tok_cv_push_str(dst, " ' ");
        else EMIT(src->v[i]);
    }
}

/* Escaping (unless -no-escape), one character at a time; equivalent to the script's sequence
 * of substitutions because "&" is replaced first. */
static void pass_escape(const tok_cpvec *src, tok_cpvec *dst)
{
    dst->n = 0;
    for (size_t i = 0; i < src->n; i++) {
        switch (src->v[i]) {
        case '&': tok_cv_push_str(dst, "&amp;"); break;
        case '|': tok_cv_push_str(dst, "&#124;"); break;
        case '<': tok_cv_push_str(dst, "&lt;"); break;
        case '>': tok_cv_push_str(dst, "&gt;"); break;
        case '\'': tok_cv_push_str(dst, "&apos;"); break;
        case '"': tok_cv_push_str(dst, "&quot;"); break;
        case '[': tok_cv_push_str(dst, "&#91;"); break;
        case ']': tok_cv_push_str(dst, "&#93;"); break;
        default: EMIT(src->v[i]);
        }
    }
}

/* ================================================================ non-breaking prefixes */

static int prefix_cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const struct tok_prefix *)elem)->word);
}

int tok_prefix_type(int lang, const char *word)
{
    const struct tok_prefix *tab;
    size_t cnt;
    switch (lang) {
    case TOK_LANG_FR: tab = tok_prefixes_fr; cnt = sizeof tok_prefixes_fr / sizeof *tab; break;
    case TOK_LANG_DE: tab = tok_prefixes_de; cnt = sizeof tok_prefixes_de / sizeof *tab; break;
    default: tab = tok_prefixes_en; cnt = sizeof tok_prefixes_en / sizeof *tab; break;
    }
    const struct tok_prefix *p = bsearch(word, tab, cnt, sizeof *tab, prefix_cmp);
    return p ? p->type : 0;
}

/* Type of the prefix v[0..n) in the language's list: 0 none, 1 always, 2 before digits. */
static int prefix_type(int lang, const uint32_t *v, size_t n)
{
    if (n > 32) return 0; /* longer than any entry */
    char key[32 * 4 + 1];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int m = utf8_encode(v[i], key + k);
        if (m == 0) return 0;
        k += (size_t)m;
    }
    key[k] = '\0';
    return tok_prefix_type(lang, key);
}

/* ================================================================ the word pass */

/* "word token method": split(/\s/) (leading empty fields kept, trailing ones dropped); a word
 * "PRE." keeps its period when PRE contains a period and a letter (U.S.), is a non-breaking
 * prefix, or the next word starts with a lowercase letter; a numeric-only prefix keeps it when
 * the next word starts with a digit; otherwise the period is split off. The words are joined
 * with spaces, runs of spaces squeezed and the ends trimmed. */
static int pass_words(int lang, const tok_cpvec *src, tok_cpvec *dst, tok_cpvec *w)
{
    const uint32_t *v = src->v;
    size_t n = src->n;
    w->n = 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || v[i] == ' ') {
            tok_cv_push(w, (uint32_t)start);
            tok_cv_push(w, (uint32_t)(i - start));
            start = i + 1;
        }
    }
    if (w->oom) return -1;
    size_t nw = w->n / 2;
    while (nw > 0 && w->v[2 * (nw - 1) + 1] == 0) nw--; /* split drops trailing empty fields */

    dst->n = 0;
    for (size_t i = 0; i < nw; i++) {
        const uint32_t *word = v + w->v[2 * i];
        size_t len = w->v[2 * i + 1];
        int split = 0;
        if (len >= 2 && word[len - 1] == '.') {
            const uint32_t *pre = word;
            size_t plen = len - 1;
            int has_dot = 0, has_alpha = 0;
            for (size_t k = 0; k < plen; k++) {
                if (pre[k] == '.') has_dot = 1;
                else if (is_alpha(pre[k])) has_alpha = 1;
            }
            int type = prefix_type(lang, pre, plen);
            const uint32_t *next = NULL;
            size_t nlen = 0;
            if (i + 1 < nw) {
                next = v + w->v[2 * (i + 1)];
                nlen = w->v[2 * (i + 1) + 1];
            }
            if ((has_dot && has_alpha) || type == 1 || (nlen > 0 && uni_is_lowercase(next[0]))) {
                /* keep */
            } else if (type == 2 && nlen > 0 && next[0] >= '0' && next[0] <= '9') {
                /* keep */
            } else {
                split = 1;
            }
        }
        for (size_t k = 0; k + (size_t)split < len; k++) tok_cv_push(dst, word[k]);
        if (split) tok_cv_push_str(dst, " .");
        /* the separating space; squeezed with the one before, and none at the very start */
        if (dst->n > 0 && dst->v[dst->n - 1] != ' ') tok_cv_push(dst, ' ');
    }
    if (dst->n > 0 && dst->v[dst->n - 1] == ' ') dst->n--;
    return dst->oom ? -1 : 0;
}

/* ".' at end of sentence is missed": s/\.\' ?$/ . ' / (once; it leaves a trailing space). */
static void fix_final_quote(tok_cpvec *v)
{
    size_t n = v->n;
    if (n >= 2 && v->v[n - 2] == '.' && v->v[n - 1] == '\'') {
        v->n = n - 2;
        tok_cv_push_str(v, " . ' ");
    }
}

/* ================================================================ driver */

static int only_space(const uint32_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_space(v[i])) return 0;
    return 1;
}

#define SWAP() do { tok_cpvec *t_ = cur; cur = nxt; nxt = t_; } while (0)

int tok_line(const tok_opts *o, const char *in, size_t n, tok_buf *out, nmt_err *err)
{
    if (!o || (!in && n) || !out) return nmt_fail(err, NMT_ERR_ARG, "tok_line: NULL argument");
    if (o->lang < TOK_LANG_EN || o->lang > TOK_LANG_DE)
        return nmt_fail(err, NMT_ERR_ARG, "tok_line: unknown language %d", o->lang);
    if (n > 0 && in[n - 1] == '\n') n--; /* chomp */
    if (n > TOK_MAX_LINE)
        return nmt_fail(err, NMT_ERR_ARG, "tokenize: line of %zu bytes is too long (max %d)", n, TOK_MAX_LINE);
    out->n_invalid = 0;
    tok_cpvec *cur = &out->a, *nxt = &out->b;
    cur->oom = nxt->oom = out->words.oom = 0;

    if (o->lowercase || o->normalize) {
        /* The Multi30k front end: lowercase.perl | normalize-punctuation.perl, then tokenize
         * what they print. Each stage leaves its line in out->s (the next one copies it into
         * its scratch before writing out->s again). */
        int rc;
        size_t bad = 0;
        const char *s = in;
        size_t len = n;
        if (o->lowercase) {
            if ((rc = tok_lowercase_line(s, len, out, err)) != NMT_OK) return rc;
            bad = out->n_invalid;
            s = out->s;
            len = out->len;
        }
        if (o->normalize) {
            if ((rc = tok_normalize_line(o->lang, s, len, out, err)) != NMT_OK) return rc;
            s = out->s;
            len = out->len;
        }
        out->n_invalid = 0;
        tok_decode(cur, s, len, &out->n_invalid);
        out->n_invalid += bad;
    } else {
        tok_decode(cur, in, n, &out->n_invalid);
    }
    if (cur->oom) return nmt_fail(err, NMT_ERR_NOMEM, "tokenize: out of memory");

    /* tokenizer.perl prints lines that are empty or all whitespace unchanged (/^\s*$/) */
    if (only_space(cur->v, cur->n)) return tok_encode(out, cur->v, cur->n, err);

    pass_space(cur, nxt); SWAP();
    pass_special(cur, nxt); SWAP();
    if (o->aggressive) { pass_aggressive(cur, nxt); SWAP(); }
    int literal_dots = contains(cur, "DOTMULTI");
    {
        tok_cpvec *r = pass_multidot(cur, nxt, literal_dots);
        if (r != cur) SWAP();
    }
    pass_comma1(cur, nxt); SWAP();
    pass_comma2(cur, nxt); SWAP();
    if (o->lang == TOK_LANG_EN) {
        /* "split contractions right": don't -> don 't, 1990's -> 1990 's */
        pass_apos(cur, nxt, AP_NOT_ALPHA, AP_NOT_ALPHA, AP_BOTH); SWAP();
        pass_apos(cur, nxt, AP_NOT_ALPHA_NUM, AP_ALPHA, AP_BOTH); SWAP();
        pass_apos(cur, nxt, AP_ALPHA, AP_NOT_ALPHA, AP_BOTH); SWAP();
        pass_apos(cur, nxt, AP_ALPHA, AP_ALPHA, AP_LEFT); SWAP();
        pass_apos(cur, nxt, AP_NUM, AP_LETTER_S, AP_LEFT); SWAP();
    } else if (o->lang == TOK_LANG_FR) {
        /* "split contractions left": l'homme -> l' homme */
        pass_apos(cur, nxt, AP_NOT_ALPHA, AP_NOT_ALPHA, AP_BOTH); SWAP();
        pass_apos(cur, nxt, AP_NOT_ALPHA, AP_ALPHA, AP_BOTH); SWAP();
        pass_apos(cur, nxt, AP_ALPHA, AP_NOT_ALPHA, AP_BOTH); SWAP();
        pass_apos(cur, nxt, AP_ALPHA, AP_ALPHA, AP_RIGHT); SWAP();
    } else {
        pass_apos_all(cur, nxt); SWAP();
    }
    if (pass_words(o->lang, cur, nxt, &out->words)) return nmt_fail(err, NMT_ERR_NOMEM, "tokenize: out of memory");
    SWAP();
    fix_final_quote(cur);
    {
        tok_cpvec *r = pass_restore_dots(cur, nxt);
        if (r != cur) SWAP();
    }
    if (o->escape) { pass_escape(cur, nxt); SWAP(); }
    if (cur->oom || nxt->oom) return nmt_fail(err, NMT_ERR_NOMEM, "tokenize: out of memory");
    return tok_encode(out, cur->v, cur->n, err);
}
