/* test_tokenize.c: the Moses tokenizer, detokenizer and lc+normalize front end against every
 * reference vector in $NMT_SHARED/data/tokenizer (one CHECK per expected file, reporting the
 * mismatching lines), plus hand-made edge cases whose expected values follow the rules of
 * tokenizer.perl / detokenizer.perl (reasoned out step by step in the comments). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "helpers.h"
#include "test.h"
#include "text/tokenize.h"

static int quick;

/* ---------------------------------------------------------------- edge cases */

static tok_buf buf;

static const char *tok(const char *lang, int aggressive, int escape, const char *s)
{
    tok_opts o = tok_opts_default();
    o.lang = tok_lang_parse(lang);
    o.aggressive = aggressive;
    o.escape = escape;
    nmt_err e;
    if (tok_line(&o, s, strlen(s), &buf, &e) != NMT_OK) return "<error>";
    return buf.s;
}

static const char *tok_lcnorm(const char *lang, const char *s)
{
    tok_opts o = tok_opts_default();
    o.lang = tok_lang_parse(lang);
    o.lowercase = o.normalize = 1;
    nmt_err e;
    if (tok_line(&o, s, strlen(s), &buf, &e) != NMT_OK) return "<error>";
    return buf.s;
}

static const char *detok(const char *lang, const char *s)
{
    nmt_err e;
    if (detok_line(tok_lang_parse(lang), s, strlen(s), &buf, &e) != NMT_OK) return "<error>";
    return buf.s;
}

#define EQ(got, want) do { const char *g_ = (got), *w_ = (want); \
    CHECKF(strcmp(g_, w_) == 0, "got \"%s\", expected \"%s\"", g_, w_); } while (0)

static void test_edge_tokenize(void)
{
    /* empty and whitespace-only lines are printed unchanged (/^\s*$/) */
    EQ(tok("en", 0, 1, ""), "");
    EQ(tok("en", 0, 1, "   "), "   ");
    EQ(tok("en", 0, 1, "\t \xC2\xA0"), "\t \xC2\xA0");
    /* the newline is chomped; whitespace squeezed, ends trimmed; C0 controls dropped */
    EQ(tok("en", 0, 1, "  Hello   world  \n"), "Hello world");
    EQ(tok("en", 0, 1, "a\x01" "b\tc\xC2\xA0" "d"), "ab c d");
    /* numbers: commas and periods inside numbers stay, a final period splits */
    EQ(tok("en", 0, 1, "It costs $1,000.50 today."), "It costs $ 1,000.50 today .");
    EQ(tok("en", 0, 1, "A,B,C and 5,300 and 5,"), "A , B , C and 5,300 and 5 ,");
    EQ(tok("en", 0, 1, "75% of 3/4"), "75 % of 3 / 4");
    /* a URL falls apart at every symbol but keeps its dotted host */
    EQ(tok("en", 0, 1, "See http://www.example.com/a-b?x=1&y=2."),
       "See http : / / www.example.com / a-b ? x = 1 &amp; y = 2 .");
    EQ(tok("en", 1, 0, "See http://www.example.com/a-b?x=1&y=2."),
       "See http : / / www.example.com / a @-@ b ? x = 1 & y = 2 .");
    /* escaping of & | < > ' " [ ] (-no-escape keeps them) */
    EQ(tok("en", 0, 1, "a&b<c|d>e [f] \"g\""),
       "a &amp; b &lt; c &#124; d &gt; e &#91; f &#93; &quot; g &quot;");
    EQ(tok("en", 0, 0, "a&b<c|d>e [f] \"g\""), "a & b < c | d > e [ f ] \" g \"");
    /* English contractions split to the right, French elisions to the left, German both */
    EQ(tok("en", 0, 0, "I'm sure they don't like the 1990's"), "I 'm sure they don 't like the 1990 's");
    EQ(tok("en", 0, 0, "'Tis rock 'n' roll"), "'Tis rock ' n ' roll");
    EQ(tok("fr", 0, 0, "l'homme d'aujourd'hui"), "l' homme d' aujourd' hui");
    EQ(tok("fr", 1, 1, "Qu'est-ce que c'est ?"), "Qu&apos; est @-@ ce que c&apos; est ?");
    EQ(tok("de", 0, 0, "Wie geht's?"), "Wie geht ' s ?");
    /* ".'" at the end of the line becomes " . ' " (with the script's trailing space) */
    EQ(tok("en", 0, 1, "He said 'hello.'"), "He said &apos; hello . &apos; ");
    /* non-breaking prefixes */
    EQ(tok("en", 0, 0, "Mr. Smith met Dr. Who in the U.S. today."), "Mr. Smith met Dr. Who in the U.S. today .");
    EQ(tok("en", 0, 0, "No. 5 is not No. Way"), "No. 5 is not No . Way");
    EQ(tok("en", 0, 0, "the end. and more"), "the end. and more"); /* lowercase next word */
    EQ(tok("fr", 0, 0, "Voir p.ex. la fig. 3 et M. Dupont."), "Voir p.ex. la fig. 3 et M. Dupont .");
    EQ(tok("de", 0, 0, "Das ist der 1. Platz, z.B. hier."), "Das ist der 1. Platz , z.B. hier .");
    /* multi-dots stay together */
    EQ(tok("en", 0, 0, "Wait... a..b ...."), "Wait ... a .. b ....");
    /* aggressive hyphen splitting only between letters/digits */
    EQ(tok("en", 1, 0, "dirt-bikes -5 a--b x-ray 3-4"), "dirt @-@ bikes -5 a--b x @-@ ray 3 @-@ 4");
    /* non-Latin scripts: letters stay, script punctuation splits */
    EQ(tok("en", 0, 0, "Привет, мир!"), "Привет , мир !");
    EQ(tok("en", 0, 0, "我爱你。"), "我爱你 。");
    EQ(tok("en", 0, 0, "مرحبا، عالم"), "مرحبا ، عالم");
    EQ(tok("en", 0, 0, "Καλημέρα κόσμε;"), "Καλημέρα κόσμε ;");
    /* Devanagari vowel signs are \p{Alpha} but the virama (U+094D) is not, so Moses splits
     * it off as a "special character" (checked with Perl's own \p{IsAlnum}) */
    EQ(tok("en", 0, 0, "दुनिया नमस्ते।"), "दुनिया नमस ् ते ।");
    /* invalid UTF-8 is replaced by U+FFFD (a symbol, so it becomes a token) and counted */
    EQ(tok("en", 0, 0, "caf\xC3 ok"), "caf \xEF\xBF\xBD ok");
    CHECK(buf.n_invalid == 1);
    EQ(tok("en", 0, 0, "\xED\xA0\x80x\xC0\xAF"), "\xEF\xBF\xBD x \xEF\xBF\xBD");
    CHECK(buf.n_invalid == 2);
    EQ(tok("en", 0, 0, "fine"), "fine");
    CHECK(buf.n_invalid == 0);

    /* lowercase.perl | normalize-punctuation.perl | tokenizer.perl */
    EQ(tok_lcnorm("en", "He said \xE2\x80\x9CYes\xE2\x80\x9D, OK\xE2\x80\xA6"),
       "he said &quot; yes , &quot; ok ...");
    EQ(tok_lcnorm("fr", "\xC2\xAB\xC2\xA0" "Bonjour\xC2\xA0\xC2\xBB, dit-il : 1\xC2\xA0" "000 \xE2\x82\xAC."),
       "&quot; bonjour &quot; , dit-il : 1,000 € .");
    /* Perl's lc maps U+0130 to "i" + U+0307, and the combining dot is not \p{Alnum} */
    EQ(tok_lcnorm("en", "1\xC2\xA0" "000 don\xE2\x80\x99t \xC4\xB0" "stanbul"),
       "1.000 don &apos;t i \xCC\x87 stanbul");
    /* fr/de move a period after the closing quote, even at the end of the line */
    EQ(tok_lcnorm("de", "Er sagte: \xE2\x80\x9E" "Ja.\xE2\x80\x9C"), "er sagte : &quot; ja &quot; .");

    /* bad arguments are errors, not crashes */
    tok_opts o = tok_opts_default();
    o.lang = 7;
    nmt_err e;
    CHECK(tok_line(&o, "x", 1, &buf, &e) == NMT_ERR_ARG);
    CHECK(tok_lang_parse("xx") == -1 && tok_lang_parse("fr") == TOK_LANG_FR);
}

/* Text that itself contains "DOTMULTI" makes the script's dot rules match the user's letters;
 * the expected values are Perl's for those rules (the multi-dot loop, then the restore loop, run
 * in perl on the same lines), and the last one shows the first rule eating its neighbour's "D".
 * Then the cost: a word and a long run of dots, and "DOTMULTI" and one, must stay linear (the
 * script's loops scan the line once per dot: at 20,000 dots, seconds; at 300 KB, an hour). */
static double cpu_seconds(void) { return (double)clock() / CLOCKS_PER_SEC; }

static void test_multidot(void)
{
    EQ(tok("en", 0, 0, "word DOTMULTI.... end"), "word . .... end");
    EQ(tok("en", 0, 0, "DOTDOTMULTI a DOTMULTI"), ".. a .");
    EQ(tok("en", 0, 0, "DOTMULTI..DOTMULTI.MULTI x"), ". .. ..MULTI x");
    EQ(tok("en", 0, 0, "x..DOTMULTI.DOTMULTI.y"), "x .. .... y");
    const size_t n = 300000;
    char *line = malloc(n + 9);
    CHECK(line != NULL);
    if (!line) return;
    for (int form = 0; form < 2; form++) {
        const char *head = form ? "DOTMULTI" : "word";
        size_t h = strlen(head), dots = form ? 20000 : n;
        memcpy(line, head, h);
        memset(line + h, '.', dots);
        line[h + dots] = 0;
        double t0 = cpu_seconds();
        const char *got = tok("en", 0, 0, line);
        double t = cpu_seconds() - t0;
        CHECKF(t < 1.0, "\"%s\" and %zu dots took %.1f s of CPU", head, dots, t);
        /* "word" + dots: "word" and the dots; "DOTMULTI" + dots: its first rule reads
         * " DOTMULTI" + dots, so one dot, a space and the dots */
        CHECKF(strlen(got) == (form ? 1 + 1 + dots : h + 1 + dots), "length %zu", strlen(got));
    }
    free(line);
}

static void test_edge_detokenize(void)
{
    EQ(detok("en", ""), "");
    EQ(detok("en", "  "), "  ");
    EQ(detok("en", "<p>"), "<p>"); /* a tag line is left alone */
    EQ(detok("en", "Hello , world !"), "Hello, world!");
    EQ(detok("en", "&quot; Hello &quot; , he said ."), "\"Hello\", he said.");
    EQ(detok("en", "\" a \" \" b \""), "\"a\" \"b\"");
    EQ(detok("en", "It costs $ 5 ( or € 4 ) ."), "It costs $5 (or €4).");
    EQ(detok("en", "don &apos;t do it , it &apos;s the Jones &apos; house"),
       "don't do it, it's the Jones' house");
    EQ(detok("en", "dirt @-@ bikes &amp; a &lt; b &#124; c &#91; d &#93;"), "dirt-bikes & a < b | c [d]");
    EQ(detok("fr", "l&apos; homme , aujourd&apos; hui ?"), "l'homme, aujourd'hui ?");
    EQ(detok("fr", "Il dit : 50 % !"), "Il dit : 50 % !");
    EQ(detok("en", "Il dit : 50 % !"), "Il dit: 50%!");
    EQ(detok("de", "Er sagte : &quot; Ja . &quot;"), "Er sagte: \"Ja.\"");
    EQ(detok("en", "我 爱 你 。 ok"), "我爱你。 ok");
    EQ(detok("en", "a  b"), "a b");
}

/* ---------------------------------------------------------------- reference vectors */

/* A file's lines (test_read_lines) and their lengths. */
struct lines {
    char **line;
    size_t *len;
    size_t n;
};

static int read_lines(const char *path, struct lines *l)
{
    memset(l, 0, sizeof *l);
    if (!(l->line = test_read_lines(path, &l->n))) return -1;
    if (!(l->len = malloc((l->n + 1) * sizeof *l->len))) return -1;
    for (size_t i = 0; i < l->n; i++) l->len[i] = strlen(l->line[i]);
    return 0;
}

static void free_lines(struct lines *l)
{
    if (l->line) test_free_lines(l->line, l->n);
    free(l->len);
}

enum kind { K_TOK, K_DETOK };

/* Runs one vector: every line of in (through tok_line with o, or detok_line) against exp. */
static void check_vector(const char *dir, const char *name, const char *in_path, enum kind kind,
                         const tok_opts *o, int *lines_ok, int *lines_total)
{
    char exp_path[1024];
    snprintf(exp_path, sizeof exp_path, "%s/expected/%s", dir, name);
    struct lines in, exp;
    if (read_lines(in_path, &in) || read_lines(exp_path, &exp)) {
        CHECKF(0, "cannot read %s or %s", in_path, exp_path);
        free_lines(&in);
        free_lines(&exp);
        return;
    }
    size_t n = in.n, bad = 0, shown = 0;
    if (exp.n != in.n) {
        CHECKF(0, "%s: %zu lines, input has %zu", name, exp.n, in.n);
        if (exp.n < n) n = exp.n;
    }
    if (quick && n > 150) n = 150; /* sanitizer pass: a sample of each file */
    for (size_t i = 0; i < n; i++) {
        nmt_err e = {0};
        int rc = kind == K_TOK ? tok_line(o, in.line[i], in.len[i], &buf, &e)
                               : detok_line(o->lang, in.line[i], in.len[i], &buf, &e);
        if (rc == NMT_OK && buf.len == exp.len[i] && !memcmp(buf.s, exp.line[i], buf.len)) continue;
        bad++;
        if (shown++ < 3)
            fprintf(stderr, "  %s:%zu\n    input:    %.*s\n    expected: %.*s\n    got:      %.*s\n", name, i + 1,
                    (int)in.len[i], in.line[i], (int)exp.len[i], exp.line[i], rc ? 0 : (int)buf.len, rc ? "" : buf.s);
    }
    CHECKF(bad == 0, "%s: %zu of %zu lines differ", name, bad, n);
    printf("  %-40s %zu/%zu lines match\n", name, n - bad, n);
    *lines_ok += (int)(n - bad);
    *lines_total += (int)n;
    free_lines(&in);
    free_lines(&exp);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void test_vectors(void)
{
    const char *shared = getenv("NMT_SHARED");
    if (!shared || !*shared) shared = "../shared";
    char dir[512], indir[600];
    snprintf(dir, sizeof dir, "%s/data/tokenizer", shared);
    snprintf(indir, sizeof indir, "%s/input", dir);
    DIR *d = opendir(indir);
    CHECKF(d != NULL, "cannot open %s (set NMT_SHARED)", indir);
    if (!d) return;
    char *names[64];
    int nn = 0;
    struct dirent *de;
    while ((de = readdir(d)) && nn < 64)
        if (de->d_name[0] != '.') names[nn++] = strdup(de->d_name);
    closedir(d);
    qsort(names, (size_t)nn, sizeof *names, cmp_str);
    CHECKF(nn >= 8, "only %d input files in %s", nn, indir);

    int ok = 0, total = 0, files = 0;
    for (int i = 0; i < nn; i++) {
        const char *dot = strrchr(names[i], '.');
        int lang = dot ? tok_lang_parse(dot + 1) : -1;
        if (lang < 0) continue;
        char in_path[1024], name[512], tok_in[1024];
        snprintf(in_path, sizeof in_path, "%s/%s", indir, names[i]);
        tok_opts o = tok_opts_default();
        o.lang = lang;
        /* the commands of the README table */
        static const struct { const char *suffix; int aggressive, escape, lcnorm; } runs[] = {
            {"tok.a.noesc", 1, 0, 0}, {"tok.a.esc", 1, 1, 0}, {"tok.default", 0, 1, 0},
            {"lc.norm.tok", 0, 1, 1},
        };
        for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
            o.aggressive = runs[r].aggressive;
            o.escape = runs[r].escape;
            o.lowercase = o.normalize = runs[r].lcnorm;
            snprintf(name, sizeof name, "%s.%s", names[i], runs[r].suffix);
            check_vector(dir, name, in_path, K_TOK, &o, &ok, &total);
            files++;
        }
        o = tok_opts_default();
        o.lang = lang;
        static const char *const detok_src[] = {"tok.a.noesc", "tok.a.esc"};
        for (size_t r = 0; r < 2; r++) {
            snprintf(tok_in, sizeof tok_in, "%s/expected/%s.%s", dir, names[i], detok_src[r]);
            snprintf(name, sizeof name, "%s.%s.detok", names[i], detok_src[r]);
            check_vector(dir, name, tok_in, K_DETOK, &o, &ok, &total);
            files++;
        }
    }
    for (int i = 0; i < nn; i++) free(names[i]);
    printf("  vectors: %d files, %d/%d lines match\n", files, ok, total);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--quick")) quick = 1;
    tok_buf_init(&buf);
    test_edge_tokenize();
    test_multidot();
    test_edge_detokenize();
    test_vectors();
    tok_buf_free(&buf);
    return test_done("test_tokenize");
}
