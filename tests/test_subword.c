/* test_subword.c: subword units. The merge of piece attention into word attention against sums
 * worked out by hand for a known segmentation; the piece -> word map of SentencePiece spans on
 * hand-made spans; base64 against RFC 4648's test vectors; and a model file with an embedded
 * SentencePiece model saved and loaded again: the same pieces (which the public API gives as its
 * vocabulary, saying it has subwords), the same segmentation, and raw text that comes back
 * unchanged through encode and decode. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base64.h"
#include "nn/model.h"
#include "test.h"
#include "data/subword.h"
#include "text/unicode.h"

/* ------------------------------------------------------------------ the merge */

/* "un chat noir" -> "a black cat" in pieces: ▁un | ▁ch at | ▁noir and ▁a | ▁bla ck | ▁cat. */
static void test_merge(void)
{
    static const float att[5 * 5] = {
        .70f, .10f, .05f, .10f, .05f, /* ▁a */
        .05f, .10f, .10f, .70f, .05f, /* ▁bla */
        .05f, .20f, .10f, .60f, .05f, /* ck */
        .00f, .30f, .30f, .35f, .05f, /* ▁cat */
        .05f, .05f, .05f, .05f, .80f, /* EOS */
    };
    static const int src_of[4] = {0, 1, 1, 2}, tgt_of[4] = {0, 1, 1, 2};
    /* by hand: columns ▁ch + at for "chat"; rows (▁bla + ck) / 2 for "black" */
    static const float want[4 * 4] = {
        .70f, .15f, .10f, .05f,
        .05f, .25f, .65f, .05f,
        .00f, .60f, .35f, .05f,
        .05f, .10f, .05f, .80f,
    };
    nmt_word_map src = {4, src_of, 3}, tgt = {4, tgt_of, 3};
    float out[16];
    nmt_err err;
    CHECK(nmt_attention_to_words(out, att, 1, &tgt, &src, &err) == NMT_OK);
    for (int k = 0; k < 16; k++) CHECK_NEAR(out[k], want[k], 1e-6);
    for (int r = 0; r < 4; r++) CHECK_NEAR(out[4 * r] + out[4 * r + 1] + out[4 * r + 2] + out[4 * r + 3], 1.0, 1e-6);
    /* "cat" links to "chat" because its two pieces' weights are summed (.60 > .35); a mean over
     * them (.30) would link it to "noir" */
    CHECK(out[2 * 4 + 1] > out[2 * 4 + 2]);

    /* no EOS row (an unfinished hypothesis), and a token of no word (-1) dropped */
    static const int tgt_of2[4] = {0, 0, -1, 1};
    nmt_word_map tgt2 = {4, tgt_of2, 2};
    float out2[2 * 4];
    CHECK(nmt_attention_to_words(out2, att, 0, &tgt2, &src, &err) == NMT_OK);
    CHECK_NEAR(out2[0], .375, 1e-6);           /* (▁a + ▁bla) / 2 over "un" */
    CHECK_NEAR(out2[1], .175, 1e-6);           /* over "chat": ((.10 + .05) + (.10 + .10)) / 2 */
    CHECK_NEAR(out2[4 + 1], .60, 1e-6);        /* ▁cat over "chat" */
    CHECK_NEAR(out2[4 + 3], .05, 1e-6);        /* ▁cat over EOS */

    /* a map pointing past its words is refused */
    static const int bad_of[4] = {0, 1, 3, 2};
    nmt_word_map bad = {4, bad_of, 3};
    CHECK(nmt_attention_to_words(out, att, 1, &tgt, &bad, &err) == NMT_ERR_ARG);
}

/* ------------------------------------------------------------------ spans to words */
static void test_word_of(void)
{
    /* "un chat noir": ▁un [0,2) ▁ch [2,5) at [5,7) a lone ▁ [7,8) noir [8,12), and a byte piece
     * with an empty span at 5 (the middle of a character spelt in bytes) */
    const char *text = "un chat noir";
    int begin[6] = {0, 2, 5, 5, 7, 8}, end[6] = {2, 5, 5, 7, 8, 12}, w[6];
    CHECK(subword_word_of(text, strlen(text), begin, end, 6, w) == 3);
    int want[6] = {0, 1, 1, 1, 2, 2};
    for (int k = 0; k < 6; k++) CHECKF(w[k] == want[k], "piece %d: word %d, expected %d", k, w[k], want[k]);
    /* blanks around: a leading blank belongs to the first word, a trailing one to the last */
    const char *t2 = "  a b ";
    int b2[3] = {0, 2, 5}, e2[3] = {2, 3, 6}, w2[3];
    CHECK(subword_word_of(t2, strlen(t2), b2, e2, 3, w2) == 2);
    CHECK(w2[0] == 0 && w2[1] == 0 && w2[2] == 1);
    /* no words at all */
    CHECK(subword_word_of("", 0, b2, b2, 1, w2) == 0 && w2[0] == -1);
}

/* ------------------------------------------------------------------ base64 */
static void test_base64(void)
{
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (int k = 0; k < 7; k++) {
        char *e = base64_encode(plain[k], strlen(plain[k]));
        CHECKF(e && !strcmp(e, coded[k]), "'%s' -> '%s', expected '%s'", plain[k], e ? e : "(null)", coded[k]);
        unsigned char *d;
        size_t n;
        CHECK(base64_decode(coded[k], &d, &n) == 0 && n == strlen(plain[k]) && !memcmp(d, plain[k], n));
        free(e);
        free(d);
    }
    unsigned char *d;
    size_t n;
    static const char *const bad[] = {"Zm9", "Zm9v!A==", "Zg==Zm9v", "=Zm9"};
    for (int k = 0; k < 4; k++) CHECKF(base64_decode(bad[k], &d, &n) == -1, "'%s' accepted", bad[k]);
}

/* ------------------------------------------------------------------ a model file round trip */

static const char *const corpus[] = {
    "a man is riding a bike", "two dogs are playing in the snow", "a woman is reading a book in the park",
    "children are playing football on the beach", "a man in a red shirt is cooking", "the dog runs after a ball",
    "a girl is singing on a stage", "people are walking in the street", "a boy jumps into the water",
    "an old man sits on a bench", "a cat sleeps on the sofa", "the women are dancing at a wedding",
};
#define NCORPUS (int)(sizeof corpus / sizeof *corpus)

/* A tiny word-model config with vocabularies of n entries. */
static nmt_config tiny(int n)
{
    nmt_config c = nmt_config_default();
    c.src_vocab = c.tgt_vocab = n;
    c.emb = c.hid = c.att = 4;
    c.maxout = 2;
    return c;
}

/* The segmentation of s by m's source side, into buf. */
static int segment(const nmt_model *m, const char *s, char *buf, size_t cap)
{
    nmt_text_opts o = nmt_text_default_opts();
    nmt_text *t;
    nmt_text_line l;
    nmt_err err;
    if (nmt_text_init_model(&t, &o, m, NMT_SOURCE, &err)) return -1;
    int rc = nmt_text_encode(t, s, strlen(s), &l, &err);
    if (!rc) snprintf(buf, cap, "%s", l.text);
    nmt_text_free(t);
    return rc;
}

static void test_roundtrip(void)
{
    char *bytes;
    size_t len;
    nmt_err err;
    spm *sp;
    subwords *sw = NULL;
    CHECK(spm_train(corpus, NCORPUS, SPM_UNIGRAM, 320, 1, 7, &bytes, &len, &err) == NMT_OK);
    CHECK(spm_load(&sp, bytes, len, "test", &err) == NMT_OK);
    free(bytes);
    nmt_text_opts text[2] = {nmt_text_default_opts(), nmt_text_default_opts()};
    CHECK(subwords_init(&sw, sp, NULL, text, &err) == NMT_OK);
    const char **words;
    int n;
    CHECK(subword_vocab_words(sw->sp[0], &words, &n, &err) == NMT_OK);
    CHECK(n > 256 && !strcmp(words[0], "</s>") && !strcmp(words[1], "<unk>"));
    nmt_model *m, *m2 = NULL;
    nmt_config c = tiny(n);
    CHECK(nmt_model_create(&m, &c, words, words, 1, &err) == NMT_OK);
    free(words);
    m->sw = sw;
    char path[] = "/tmp/test_subword_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECKF(nmt_model_save(m, path, &err) == NMT_OK, "%s", err.msg);
    CHECKF(nmt_model_load(&m2, path, &err) == NMT_OK, "%s", err.msg);
    unlink(path);
    if (!m2) { nmt_model_free(m); return; }
    CHECK(m2->sw && m2->sw->joint);
    /* the public API says so: subwords, the model's own text stages, its pieces as entries */
    CHECK(nmt_model_has_subwords(m2) == 1 && nmt_model_has_text_stages(m2) == 1);
    CHECK(nmt_model_vocab_size(m2, NMT_SOURCE) == n && nmt_model_vocab_size(m2, NMT_TARGET) == n);
    if (!m2->sw) { nmt_model_free(m); nmt_model_free(m2); return; }
    CHECK(spm_size(m2->sw->sp[0]) == spm_size(sp));
    for (int id = 0; id < spm_size(sp); id++)
        CHECKF(!strcmp(spm_piece(sp, id), spm_piece(m2->sw->sp[0], id)), "piece %d", id);
    const char **pieces;
    int np;
    CHECK(subword_vocab_words(sp, &pieces, &np, &err) == NMT_OK && np == n);
    for (int id = 0; id < np && id < n; id++)
        CHECKF(!strcmp(nmt_model_vocab_entry(m2, NMT_TARGET, id), pieces[id]), "entry %d: '%s', piece '%s'", id,
               nmt_model_vocab_entry(m2, NMT_TARGET, id), pieces[id]);
    free(pieces);
    /* the same segmentation, words never seen included (byte fallback spells them) */
    static const char *const probe[] = {"a man is riding a bike", "zebras graze near Zürich", "東京 の 猫", "x"};
    for (int k = 0; k < 4; k++) {
        char a[2048], b[2048];
        CHECK(segment(m, probe[k], a, sizeof a) == 0 && segment(m2, probe[k], b, sizeof b) == 0);
        CHECKF(!strcmp(a, b), "'%s': '%s' before saving, '%s' after", probe[k], a, b);
        CHECKF(!strstr(a, "<unk>"), "'%s' has an <unk>: '%s'", probe[k], a);
    }
    /* raw text out: decoding the pieces gives the sentence back, its words mapped one by one */
    nmt_text_opts o = nmt_text_default_opts();
    nmt_text *ts, *tt;
    nmt_text_line l, d;
    CHECK(nmt_text_init_model(&ts, &o, m2, NMT_SOURCE, &err) == NMT_OK);
    CHECK(nmt_text_init_model(&tt, &o, m2, NMT_TARGET, &err) == NMT_OK);
    const char *s = "zebras graze near Zürich";
    CHECK(nmt_text_encode(ts, s, strlen(s), &l, &err) == NMT_OK);
    CHECK(l.n_text_words == 4 && l.n_words >= 4 && l.word_of[0] == 0 && l.word_of[l.n_words - 1] == 3);
    CHECK(nmt_text_decode_line(tt, l.words, l.n_words, &d, &err) == NMT_OK);
    CHECKF(d.len == strlen(s) && !memcmp(d.text, s, d.len), "decoded '%.*s'", (int)d.len, d.text);
    CHECK(d.n_text_words == 4);
    for (int k = 0; k < l.n_words; k++) CHECK(d.word_of[k] == l.word_of[k]);
    /* byte pieces of control characters (a model may emit them) decode to no byte the line readers
     * refuse or split at (NUL, LF, CR) nor any other control character: one output line per input
     * line; and bytes that are not UTF-8 to U+FFFD */
    static const char *const bytes_in[] = {"<0x0A>", "<0x00>", "<0x0D>", "<0x09>", "<0x01>", "<0x1F>", "<0x7F>", "<0xFF>", "<0x0B>"};
    for (int k = 0; k < 9; k++) {
        const char *w[3] = {l.words[0], bytes_in[k], l.words[1]};
        CHECK(nmt_text_decode_line(tt, w, 3, &d, &err) == NMT_OK);
        int clean = strlen(d.text) == d.len && utf8_find_invalid(d.text, d.len) < 0;
        for (size_t i = 0; i < d.len; i++) clean &= (unsigned char)d.text[i] >= 0x20 && d.text[i] != 0x7F;
        CHECKF(clean, "%s decoded to %zu bytes with a control byte or invalid UTF-8: %s", bytes_in[k], d.len, d.text);
    }
    nmt_text_free(ts);
    nmt_text_free(tt);
    /* metadata whose vocabulary disagrees with the embedded model (two pieces swapped, the file's
     * checksums intact): refused, naming the entry */
    size_t blen;
    const void *b = spm_bytes(m2->sw->sp[0], &blen);
    spm *sp3;
    subwords *sw3;
    nmt_model *m3, *m4 = NULL;
    CHECK(spm_load(&sp3, b, blen, "test", &err) == NMT_OK && subwords_init(&sw3, sp3, NULL, text, &err) == NMT_OK);
    CHECK(subword_vocab_words(sw3->sp[0], &words, &n, &err) == NMT_OK);
    const char *w2 = words[2];
    words[2] = words[3];
    words[3] = w2;
    CHECK(nmt_model_create(&m3, &c, words, words, 1, &err) == NMT_OK);
    free(words);
    m3->sw = sw3;
    CHECK(nmt_model_save(m3, path, &err) == NMT_OK);
    CHECKF(nmt_model_load(&m4, path, &err) == NMT_ERR_FORMAT && strstr(err.msg, "vocabulary entry 2"), "%s", err.msg);
    unlink(path);
    nmt_model_free(m3);
    nmt_model_free(m4);
    nmt_model_free(m);
    nmt_model_free(m2);
}

int main(void)
{
    test_merge();
    test_word_of();
    test_base64();
    test_roundtrip();
    return test_done("test_subword");
}
