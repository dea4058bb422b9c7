/* test_sentsplit.c: the sentence splitter (src/text/sentsplit.h) against human segmentation:
 * Multi30k's test_2016_flickr in en, fr and de holds one sentence per line, so three lines joined
 * by blanks must be cut back into those lines (no cut inside a line; every cut after a line that
 * ends with . ? or ! before a capital, the lines without final punctuation being where Moses'
 * rules rightly see no end); then cases of each rule of split-sentences.perl, its non-breaking
 * prefixes (always, and before numbers only) and acronyms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "test.h"
#include "text/sentsplit.h"
#include "text/tokenize.h"

/* The sentences of text as "a|b|c". */
static const char *split_str(int lang, const char *text)
{
    static char out[1024];
    sent_span sp[16];
    int n = sent_split(lang, text, strlen(text), sp, 16);
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; i < n && i < 16; i++)
        k += (size_t)snprintf(out + k, sizeof out - k, "%s%.*s", i ? "|" : "", (int)(sp[i].end - sp[i].start), text + sp[i].start);
    return out;
}

#define SPLITS(lang, text, want) CHECKF(!strcmp(split_str(lang, text), want), "%s -> %s, expected %s", text, split_str(lang, text), want)

static void test_rules(void)
{
    SPLITS(TOK_LANG_EN, "", "");
    SPLITS(TOK_LANG_EN, "  \t ", "");
    SPLITS(TOK_LANG_EN, "  One sentence.  ", "One sentence.");
    SPLITS(TOK_LANG_EN, "Is it? Yes! Go.", "Is it?|Yes!|Go.");                          /* rule 1 */
    SPLITS(TOK_LANG_EN, "Wait... What now?", "Wait...|What now?");                      /* rule 2 */
    SPLITS(TOK_LANG_EN, "He said \"Stop.\" Then he left.", "He said \"Stop.\"|Then he left."); /* rule 3 */
    SPLITS(TOK_LANG_EN, "(It ended.) Then", "(It ended.)|Then");
    SPLITS(TOK_LANG_EN, "It ended. \"Then", "It ended.|\"Then");                         /* rule 4 */
    SPLITS(TOK_LANG_EN, "It ended. \xE2\x80\x9CThen", "It ended.|\xE2\x80\x9CThen");     /* an initial quote (Pi) */
    SPLITS(TOK_LANG_EN, "a dog runs. the cat sleeps.", "a dog runs. the cat sleeps."); /* no capital, no end */
    SPLITS(TOK_LANG_EN, "Mr. Smith came. He sat.", "Mr. Smith came.|He sat.");          /* a prefix */
    SPLITS(TOK_LANG_EN, "The U.S. Army came.", "The U.S. Army came.");                  /* an acronym */
    SPLITS(TOK_LANG_EN, "See No. 5 there.", "See No. 5 there.");                        /* numeric only */
    SPLITS(TOK_LANG_EN, "It is No. He left.", "It is No.|He left.");
    SPLITS(TOK_LANG_EN, "It cost 5. 6 more came.", "It cost 5.|6 more came.");          /* a digit starts one */
    SPLITS(TOK_LANG_EN, "Look at l'igloo. Un", "Look at l'igloo.|Un");                  /* the prefix after an apostrophe */
    SPLITS(TOK_LANG_FR, "Voir M. Dupont. Il part.", "Voir M. Dupont.|Il part.");
    SPLITS(TOK_LANG_DE, "Das ist z.B. Berlin. Es regnet.", "Das ist z.B. Berlin.|Es regnet.");
    SPLITS(TOK_LANG_EN, "Ein Mann \xC3\x9C" "ber. \xC3\x84pfel", "Ein Mann \xC3\x9C" "ber.|\xC3\x84pfel"); /* a capital beyond ASCII */
    SPLITS(TOK_LANG_EN, "bad \xFF. Byte", "bad \xFF.|Byte");                            /* invalid UTF-8: no crash */
    sent_span one[1];
    CHECK(sent_split(TOK_LANG_EN, "Go. Run. Eat. Sit.", 18, one, 1) == 4 && one[0].end == 3); /* more than cap: counted */
}


/* Must the cut between line and next be found? When line ends with . ? or ! (maybe behind a
 * quote), next starts as a sentence does (a capital, a digit, a quote: not "# 8"), and line's
 * last word is not one of the language's non-breaking prefixes (German's "10." of dates). */
static int ends_sentence(int lang, const char *line, const char *next)
{
    size_t n = strlen(line);
    while (n && (line[n - 1] == '"' || line[n - 1] == '\'' || line[n - 1] == ')')) n--;
    if (!n || !strchr(".?!", line[n - 1])) return 0;
    unsigned char c = (unsigned char)next[0];
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '"' || c >= 0xC0)) return 0;
    const char *w = line + n - 1;
    while (w > line && w[-1] != ' ') w--;
    char word[64];
    snprintf(word, sizeof word, "%.*s", (int)(line + n - 1 - w), w);
    return tok_prefix_type(lang, word) != 1;
}

/* Three lines at a time joined by a blank: the cuts must be the line ends. */
static void test_corpus(const char *shared, const char *lang_name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/data/multi30k/test_2016_flickr.%s", shared, lang_name);
    size_t nl = 0;
    char **line = test_read_lines(path, &nl);
    int n = line ? (int)nl : 0, lang = tok_lang_parse(lang_name), extra = 0, missed = 0, expected = 0;
    CHECKF(n >= 999, "cannot read %s (set NMT_SHARED)", path);
    for (int g = 0; g + 3 <= n; g += 3) {
        char para[3 * 4096 + 3];
        size_t end[3], len = 0;
        if (strlen(line[g]) >= 4096 || strlen(line[g + 1]) >= 4096 || strlen(line[g + 2]) >= 4096) continue;
        for (int k = 0; k < 3; k++) {
            len += (size_t)sprintf(para + len, "%s%s", k ? " " : "", line[g + k]);
            end[k] = len;
        }
        sent_span sp[16];
        int m = sent_split(lang, para, len, sp, 16), found = 0;
        for (int k = 0; k < 2; k++) {
            int cut = 0, want = ends_sentence(lang, line[g + k], line[g + k + 1]);
            for (int j = 0; j < m && j < 16; j++) cut |= sp[j].end == end[k];
            found += cut;
            expected += want;
            missed += want && !cut;
        }
        extra += m - 1 - found;
    }
    CHECKF(extra == 0, "%s: %d cuts inside lines", lang_name, extra);
    CHECKF(missed == 0 && expected > 600, "%s: %d of %d sentence ends missed", lang_name, missed, expected);
    test_free_lines(line, nl);
}

int main(void)
{
    const char *shared = getenv("NMT_SHARED");
    if (!shared || !*shared) shared = "../shared";
    test_rules();
    test_corpus(shared, "en");
    test_corpus(shared, "fr");
    test_corpus(shared, "de");
    return test_done("sentsplit");
}
