/* test_text.c: the text layer below the model. The word splitter's blank set; the line reader on
 * files, descriptors and pipes (a trailing CR, NUL bytes, invalid UTF-8, a directory, a closed
 * descriptor, a line longer than its buffer, streaming readiness, gzip input); textfile_read on the same
 * hostile input; and the text pipeline (nmt_text) against independent references: every Moses
 * reference vector in $NMT_SHARED/data/tokenizer (tokenizer.perl with and without -a and
 * escaping, the lowercase + normalize-punctuation front end, detokenizer.perl), the dataset's
 * own tokenized Multi30k files, and raw -> ids -> text round trips through vocabularies. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "helpers.h"
#include "test.h"
#include "data/corpus.h"
#include "text/linereader.h"
#include "text/words.h"

static int quick;
static char tmpdir[256];
static const char *shared;

#define HAS(msg, sub) CHECKF(strstr((msg), (sub)) != NULL, "message \"%s\" lacks \"%s\"", (msg), (sub))

static const char *write_tmp(const char *name, const char *data, size_t n)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    CHECKF(test_write_n(path, data, n) == 0, "cannot write %s", path);
    return path;
}

/* ---------------------------------------------------------------- words */

static void test_words(void)
{
    char s[] = "  a\tb\nc\vd\fe\rf  g\xC2\xA0h ";
    CHECK(text_count_words(s) == 7); /* the no-break space (C2 A0) is not a blank */
    char *w[8];
    CHECK(text_split_words(s, w, 8) == 7);
    CHECK(!strcmp(w[0], "a") && !strcmp(w[5], "f") && !strcmp(w[6], "g\xC2\xA0h"));
    char t[] = "x y z";
    CHECK(text_split_words(t, w, 2) == 3 && !strcmp(w[1], "y")); /* counts past max */
    CHECK(text_count_words("") == 0 && text_count_words(" \t\r\n") == 0);
    for (int c = 1; c < 256; c++) /* the blank set is exactly TEXT_BLANKS */
        CHECKF(text_is_blank((char)c) == (strchr(TEXT_BLANKS, c) != NULL), "byte %d", c);
}

/* ---------------------------------------------------------------- line reader */

/* All lines of path joined by '|' (at most cap bytes), or the reader's error message. */
static int read_all(const char *path, int flags, char *out, size_t cap, nmt_err *e)
{
    linereader r;
    int rc = linereader_init(&r, path, flags, e);
    char *s;
    size_t n, used = 0;
    out[0] = 0;
    while (rc == NMT_OK) {
        if ((rc = linereader_next(&r, &s, &n, e)) != 1) break;
        rc = NMT_OK;
        used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? "|" : "", s);
    }
    linereader_free(&r);
    return rc;
}

static void test_reader_files(void)
{
    char out[256];
    nmt_err e;
    const char *p = write_tmp("crlf.txt", "a\r\nb\n\nc d\r", 10);
    CHECK(read_all(p, 0, out, sizeof out, &e) == 0 && !strcmp(out, "a|b||c d"));
    p = write_tmp("nul.txt", "one\ntw\0o\nthree\n", 15);
    CHECK(read_all(p, 0, out, sizeof out, &e) == NMT_ERR_FORMAT);
    HAS(e.msg, "nul.txt:2: NUL byte in line");
    p = write_tmp("utf8.txt", "ok\nab\xC3(\n", 8);
    CHECK(read_all(p, 0, out, sizeof out, &e) == 0); /* no check asked */
    CHECK(read_all(p, LINEREADER_UTF8, out, sizeof out, &e) == NMT_ERR_FORMAT);
    HAS(e.msg, "utf8.txt:2: invalid UTF-8 at byte 3 of the line");
    CHECK(read_all(tmpdir, 0, out, sizeof out, &e) == NMT_ERR_IO); /* a directory opens, then fails */
    HAS(e.msg, "cannot read: Is a directory");
    CHECK(read_all("/nonexistent/x", 0, out, sizeof out, &e) == NMT_ERR_IO);
    HAS(e.msg, "No such file");
    p = write_tmp("empty.txt", "", 0);
    CHECK(read_all(p, 0, out, sizeof out, &e) == 0 && !out[0]);
    /* a UTF-8 byte-order mark starts the input, not its first word (Unicode 15, section 23.8:
     * U+FEFF at the start of a UTF-8 stream is a signature, not text); elsewhere it stays */
    p = write_tmp("bom.txt", "\xEF\xBB\xBFtwo words\n\xEF\xBB\xBFkept\n", 21);
    CHECKF(read_all(p, LINEREADER_UTF8, out, sizeof out, &e) == 0 && !strcmp(out, "two words|\xEF\xBB\xBFkept"), "'%s'", out);
    p = write_tmp("bomonly.txt", "\xEF\xBB\xBF", 3);
    CHECKF(read_all(p, 0, out, sizeof out, &e) == 0 && !strcmp(out, ""), "'%s'", out);

    /* a line four times the first buffer, then a short one */
    size_t big = 4 * 131072;
    char *data = malloc(big + 4);
    if (!data) { CHECK(0); return; }
    memset(data, 'x', big);
    memcpy(data + big, "\nyz", 3);
    p = write_tmp("long.txt", data, big + 3);
    linereader r;
    char *s;
    size_t n;
    CHECK(linereader_init(&r, p, 0, &e) == 0);
    CHECK(linereader_next(&r, &s, &n, &e) == 1 && n == big && s[0] == 'x' && s[big - 1] == 'x' && s[big] == 0);
    CHECK(linereader_next(&r, &s, &n, &e) == 1 && !strcmp(s, "yz") && r.lineno == 2);
    CHECK(linereader_next(&r, &s, &n, &e) == 0);
    linereader_free(&r);
    free(data);
}

/* gzip data written by zlib's own gz writer (the decompressor under test is inflate, reading
 * through linereader): path gets the lines joined by '\n', as `members` concatenated members. */
static const char *write_gz(const char *name, const char *text, int members)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *out = fopen(path, "wb");
    size_t len = strlen(text), per = (len + members - 1) / members;
    for (int m = 0; out && m < members; m++) {
        char part[600];
        snprintf(part, sizeof part, "%s/part%d.gz", tmpdir, m);
        gzFile g = gzopen(part, "wb");
        size_t from = (size_t)m * per, k = from < len ? (len - from < per ? len - from : per) : 0;
        if (!g || (k && gzwrite(g, text + from, (unsigned)k) != (int)k) || gzclose(g) != Z_OK) { CHECK(0); break; }
        FILE *in = fopen(part, "rb");
        char buf[4096];
        size_t got;
        while (in && (got = fread(buf, 1, sizeof buf, in)) > 0) CHECK(fwrite(buf, 1, got, out) == got);
        if (in) fclose(in);
    }
    if (out) fclose(out);
    return path;
}

static void test_reader_gzip(void)
{
    char out[256];
    nmt_err e;
    const char *p = write_gz("one.gz", "a\r\nb\n\nc d", 1);
    CHECK(read_all(p, LINEREADER_UTF8, out, sizeof out, &e) == 0 && !strcmp(out, "a|b||c d"));
    p = write_gz("three.gz", "first line\nsecond line\nthird line\n", 3); /* members cut mid-line */
    CHECK(read_all(p, 0, out, sizeof out, &e) == 0 && !strcmp(out, "first line|second line|third line"));
    p = write_gz("nul.gz", "x\ny\001\n", 1);
    CHECK(read_all(p, 0, out, sizeof out, &e) == 0 && !strcmp(out, "x|y\001"));

    /* damaged data: cut short, and bytes after a member that are not another member */
    FILE *f = fopen(write_gz("whole.gz", "some text that compresses\nand more\n", 1), "rb");
    char raw[512];
    size_t n = f ? fread(raw, 1, sizeof raw, f) : 0;
    if (f) fclose(f);
    CHECK(n > 20);
    p = write_tmp("cut.gz", raw, n - 12);
    CHECK(read_all(p, 0, out, sizeof out, &e) == NMT_ERR_FORMAT);
    HAS(e.msg, "cut.gz: gzip data ends in the middle");
    memcpy(raw + n, "junk\n", 5);
    p = write_tmp("junk.gz", raw, n + 5);
    CHECK(read_all(p, 0, out, sizeof out, &e) == NMT_ERR_FORMAT);
    HAS(e.msg, "junk.gz: damaged gzip data");
    p = write_tmp("notgz.txt", "\x1f\x8a\n", 3); /* the first magic byte alone is text */
    CHECK(read_all(p, 0, out, sizeof out, &e) == 0 && !strcmp(out, "\x1f\x8a"));

    /* gzip -c of the dataset's own files: the same lines as the plain copy */
    char gz[512], plain[512];
    snprintf(gz, sizeof gz, "data/multi30k/val.en.gz");
    snprintf(plain, sizeof plain, "%s/data/multi30k/tok/val.en", shared);
    textfile a, b;
    if (textfile_read(&a, gz, &e)) { CHECKF(0, "%s", e.msg); return; }
    if (textfile_read(&b, plain, &e)) { CHECKF(0, "%s", e.msg); textfile_free(&a); return; }
    int same = a.nlines == b.nlines && a.nlines > 1000;
    for (long i = 0; same && i < a.nlines; i++) same = !strcmp(a.line[i], b.line[i]);
    CHECKF(same, "%s: %ld lines, %s: %ld, or a line differs", gz, a.nlines, plain, b.nlines);
    textfile_free(&a);
    textfile_free(&b);

    /* through a pipe that gives the magic bytes one at a time */
    f = fopen(write_gz("pipe.gz", "over\nthe pipe\n", 1), "rb");
    n = f ? fread(raw, 1, sizeof raw, f) : 0;
    if (f) fclose(f);
    int fd[2];
    if (pipe(fd)) { CHECK(0); return; }
    linereader r;
    char *s;
    size_t len;
    CHECK(linereader_init_fd(&r, fd[0], "pipe", 0, &e) == 0);
    CHECK(write(fd[1], raw, 1) == 1);
    CHECK(linereader_ready(&r) == 1); /* the byte is there to read */
    CHECK(write(fd[1], raw + 1, n - 1) == (ssize_t)(n - 1));
    close(fd[1]);
    CHECK(linereader_next(&r, &s, &len, &e) == 1 && !strcmp(s, "over"));
    CHECK(linereader_next(&r, &s, &len, &e) == 1 && !strcmp(s, "the pipe"));
    CHECK(linereader_next(&r, &s, &len, &e) == 0);
    linereader_free(&r);
    close(fd[0]);
}

static void test_reader_fds(void)
{
    linereader r;
    nmt_err e;
    char *s;
    size_t n;
    int fd[2];
    if (pipe(fd)) { CHECK(0); return; }
    /* a descriptor that is not open is refused at once */
    int dead = dup(fd[0]);
    close(dead);
    CHECK(linereader_init_fd(&r, dead, "stdin", 0, &e) == NMT_ERR_IO);
    HAS(e.msg, "stdin: cannot read: Bad file descriptor");
    linereader_free(&r);
    /* streaming: a line is returned as soon as it is complete; ready tells a waiting line apart */
    CHECK(linereader_init_fd(&r, fd[0], "pipe", 0, &e) == 0);
    CHECK(linereader_ready(&r) == 0);
    CHECK(write(fd[1], "first\nsec", 9) == 9);
    CHECK(linereader_ready(&r) == 1);
    CHECK(linereader_next(&r, &s, &n, &e) == 1 && !strcmp(s, "first"));
    CHECK(linereader_ready(&r) == 0); /* "sec" has no newline yet */
    CHECK(write(fd[1], "ond\n", 4) == 4);
    CHECK(linereader_ready(&r) == 1);
    CHECK(linereader_next(&r, &s, &n, &e) == 1 && !strcmp(s, "second"));
    close(fd[1]);
    CHECK(linereader_ready(&r) == 1);
    CHECK(linereader_next(&r, &s, &n, &e) == 0);
    linereader_free(&r);
    CHECK(fcntl(fd[0], F_GETFD) == 0); /* a descriptor given is not closed by the reader */
    /* a descriptor closed under the reader: an error naming it, not the end of the input */
    CHECK(linereader_init_fd(&r, fd[0], "pipe", 0, &e) == 0);
    close(fd[0]);
    CHECK(linereader_next(&r, &s, &n, &e) == NMT_ERR_IO);
    HAS(e.msg, "pipe: cannot read: Bad file descriptor");
    linereader_free(&r);
    linereader_free(NULL);
}

/* textfile_read, which every corpus, dev set, vocabulary, lexicon and report input goes through:
 * a NUL byte once emptied every later line silently. */
static void test_textfile(void)
{
    textfile t;
    nmt_err e;
    const char *p = write_tmp("c.txt", "a b\r\n\nc\n", 8);
    CHECK(textfile_read(&t, p, &e) == 0 && t.nlines == 3 && !strcmp(t.line[0], "a b") && !*t.line[1] && !strcmp(t.line[2], "c"));
    textfile_free(&t);
    p = write_tmp("c_nul.txt", "a\nb\0c\nd\ne\n", 10);
    CHECK(textfile_read(&t, p, &e) == NMT_ERR_FORMAT && t.nlines == 0 && !t.line);
    HAS(e.msg, "c_nul.txt:2: NUL byte in line");
    CHECK(textfile_read(&t, tmpdir, &e) == NMT_ERR_IO);
    HAS(e.msg, "cannot read");
    p = write_tmp("c_bad.txt", "ok\n\xFF\n", 5);
    CHECK(textfile_read(&t, p, &e) == NMT_ERR_FORMAT);
    HAS(e.msg, "c_bad.txt:2: invalid UTF-8 at byte 1 of the line");
}

/* ---------------------------------------------------------------- pipeline: API */

static void test_pipeline_api(void)
{
    nmt_text *t = NULL;
    nmt_err e;
    nmt_text_opts o = nmt_text_default_opts();
    o.tokenize = 1; /* no language */
    CHECK(nmt_text_init(&t, &o, NULL, 0, &e) == NMT_ERR_ARG && !t);
    o = nmt_text_default_opts();
    o.lowercase = 1; /* without tokenizing */
    CHECK(nmt_text_init(&t, &o, NULL, 0, &e) == NMT_ERR_ARG);
    o = nmt_text_default_opts();
    o.lang = 9;
    CHECK(nmt_text_init(&t, &o, NULL, 0, &e) == NMT_ERR_ARG);
    o = nmt_text_default_opts();
    const char *bad[] = {"</s>", "<unk>", "a b"};
    CHECK(nmt_text_init(&t, &o, bad, 3, &e) == NMT_ERR_FORMAT && !t);
    CHECK(nmt_text_init_model(&t, &o, NULL, NMT_SOURCE, &e) == NMT_ERR_ARG);

    /* tokenized text: words between blanks; invalid UTF-8 bytes replaced one by one */
    const char *words[] = {"</s>", "<unk>", "a", "dog", "\xEF\xBF\xBD"};
    CHECK(nmt_text_init(&t, &o, words, 5, &e) == 0);
    nmt_text_line l;
    const char *in = " a\tcat\xFF\xFE dog\n";
    CHECK(nmt_text_encode(t, in, strlen(in), &l, &e) == 0);
    CHECK(l.n_words == 3 && l.n_invalid == 2 && l.n_unk == 1);
    CHECK(!strcmp(l.text, " a\tcat\xEF\xBF\xBD\xEF\xBF\xBD dog"));
    CHECK(!strcmp(l.words[1], "cat\xEF\xBF\xBD\xEF\xBF\xBD") && l.ids[0] == 2 && l.ids[1] == 1 && l.ids[2] == 3);
    CHECK(nmt_text_encode(t, "", 0, &l, &e) == 0 && l.n_words == 0 && !*l.text);
    const int ids[] = {3, 1, 4};
    const char *txt;
    size_t len;
    CHECK(nmt_text_decode(t, ids, 3, &txt, &len, &e) == 0 && !strcmp(txt, "dog <unk> \xEF\xBF\xBD") && len == strlen(txt));
    const int out_of_range[] = {2, 5};
    CHECK(nmt_text_decode(t, out_of_range, 2, &txt, &len, &e) == NMT_ERR_ARG);
    CHECK(nmt_text_decode(t, ids, 0, &txt, &len, &e) == 0 && len == 0 && !*txt);
    nmt_text_free(t);
    CHECK(nmt_text_init(&t, &o, NULL, 0, &e) == 0);
    CHECK(nmt_text_encode(t, "x y", 3, &l, &e) == 0 && l.n_words == 2 && l.ids == NULL);
    CHECK(nmt_text_decode(t, ids, 1, &txt, &len, &e) == NMT_ERR_ARG); /* no vocabulary */
    nmt_text_free(t);
    nmt_text_free(NULL);
}

/* A model's vocabularies: the pipeline over its source side gives the ids it was built with. */
static void test_pipeline_model(void)
{
    nmt_config c = nmt_config_default();
    c.src_vocab = 4;
    c.tgt_vocab = 3;
    c.emb = c.hid = c.att = 4;
    c.maxout = 2;
    const char *sw[] = {"</s>", "<unk>", "le", "chat"}, *tw[] = {"</s>", "<unk>", "cat"};
    nmt_model *m;
    nmt_err e;
    CHECK(nmt_model_create(&m, &c, sw, tw, 1, &e) == 0);
    if (!m) return;
    nmt_text_opts o = nmt_text_default_opts();
    o.lang = NMT_LANG_FR;
    o.tokenize = o.lowercase = 1;
    nmt_text *src, *tgt;
    CHECK(nmt_text_init_model(&src, &o, m, NMT_SOURCE, &e) == 0);
    CHECK(nmt_text_init_model(&tgt, &o, m, 7, &e) == NMT_ERR_ARG);
    o.lowercase = 0;
    o.tokenize = 0;
    o.lang = NMT_LANG_EN;
    o.detokenize = 1;
    CHECK(nmt_text_init_model(&tgt, &o, m, NMT_TARGET, &e) == 0);
    nmt_text_line l;
    CHECK(nmt_text_encode(src, "Le chat, le chien.", 18, &l, &e) == 0);
    CHECK(l.n_words == 6 && l.ids[0] == 2 && l.ids[1] == 3 && l.ids[2] == 1 && l.ids[3] == 2 && l.n_unk == 3);
    const int ids[] = {2, 1};
    const char *txt;
    size_t len;
    CHECK(nmt_text_decode(tgt, ids, 2, &txt, &len, &e) == 0 && !strcmp(txt, "cat <unk>"));
    nmt_text_free(src);
    nmt_text_free(tgt);
    nmt_model_free(m);
}

/* ---------------------------------------------------------------- pipeline: references */

static int read_ref(textfile *t, const char *fmt, const char *a, const char *b)
{
    char path[1024];
    snprintf(path, sizeof path, fmt, shared, a, b);
    nmt_err e;
    int rc = textfile_read(t, path, &e);
    CHECKF(rc == 0, "%s", e.msg);
    return rc;
}

/* Every line of in through nmt_text_encode (o), compared with exp: the text and its words. */
static void check_encode(const char *name, const textfile *in, const textfile *exp, const nmt_text_opts *o)
{
    nmt_text *t;
    nmt_err e;
    if (nmt_text_init(&t, o, NULL, 0, &e)) { CHECKF(0, "%s", e.msg); return; }
    long n = in->nlines < exp->nlines ? in->nlines : exp->nlines, bad = 0;
    CHECKF(in->nlines == exp->nlines, "%s: %ld lines, input %ld", name, exp->nlines, in->nlines);
    if (quick && n > 150) n = 150;
    for (long i = 0; i < n; i++) {
        nmt_text_line l;
        int ok = nmt_text_encode(t, in->line[i], strlen(in->line[i]), &l, &e) == 0 && !strcmp(l.text, exp->line[i]) &&
                 l.n_words == text_count_words(exp->line[i]);
        if (!ok && bad++ < 3) fprintf(stderr, "  %s:%ld: expected \"%s\"\n", name, i + 1, exp->line[i]);
    }
    CHECKF(bad == 0, "%s: %ld of %ld lines differ", name, bad, n);
    nmt_text_free(t);
}

/* The expected tokenization's words, detokenized through nmt_text_decode_words. */
static void check_decode(const char *name, int lang, const textfile *tok, const textfile *exp)
{
    nmt_text_opts o = nmt_text_default_opts();
    o.lang = lang;
    o.detokenize = 1;
    nmt_text *t;
    nmt_err e;
    if (nmt_text_init(&t, &o, NULL, 0, &e)) { CHECKF(0, "%s", e.msg); return; }
    long n = tok->nlines < exp->nlines ? tok->nlines : exp->nlines, bad = 0;
    if (quick && n > 150) n = 150;
    char *w[512];
    for (long i = 0; i < n; i++) {
        char *copy = strdup(tok->line[i]);
        int nw = copy ? text_split_words(copy, w, 512) : -1;
        const char *txt;
        size_t len;
        int ok = nw >= 0 && nw <= 512 && nmt_text_decode_words(t, (const char *const *)w, nw, &txt, &len, &e) == 0 &&
                 !strcmp(txt, exp->line[i]);
        if (!ok && bad++ < 3) fprintf(stderr, "  %s:%ld: expected \"%s\"\n", name, i + 1, exp->line[i]);
        free(copy);
    }
    CHECKF(bad == 0, "%s: %ld of %ld lines differ", name, bad, n);
    nmt_text_free(t);
}

static void test_moses_vectors(void)
{
    static const char *const files[] = {"val", "test_2016_flickr", "newstest2012"};
    static const char *const langs[] = {"en", "fr", "de"};
    static const struct { const char *suffix; int aggressive, escape, lcnorm; } runs[] = {
        {"tok.a.noesc", 1, 0, 0}, {"tok.a.esc", 1, 1, 0}, {"tok.default", 0, 1, 0}, {"lc.norm.tok", 0, 1, 1},
    };
    int checked = 0;
    for (int f = 0; f < 3; f++)
        for (int g = 0; g < 3; g++) {
            if (f == 2 && g == 2) continue; /* no German newstest */
            textfile in;
            if (read_ref(&in, "%s/data/tokenizer/input/%s.%s", files[f], langs[g])) continue;
            char name[256];
            for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
                textfile exp;
                snprintf(name, sizeof name, "%s.%s.%s", files[f], langs[g], runs[r].suffix);
                if (read_ref(&exp, "%s/data/tokenizer/expected/%s%s", name, "")) continue;
                nmt_text_opts o = nmt_text_default_opts();
                o.lang = g;
                o.tokenize = 1;
                o.aggressive = runs[r].aggressive;
                o.escape = runs[r].escape;
                o.lowercase = o.normalize_punct = runs[r].lcnorm;
                check_encode(name, &in, &exp, &o);
                if (runs[r].aggressive) { /* tok.a.*.detok: detokenizer.perl of that tokenization */
                    textfile detok;
                    char dname[300];
                    snprintf(dname, sizeof dname, "%s.detok", name);
                    if (!read_ref(&detok, "%s/data/tokenizer/expected/%s%s", dname, "")) {
                        check_decode(dname, g, &exp, &detok);
                        textfile_free(&detok);
                        checked++;
                    }
                }
                textfile_free(&exp);
                checked++;
            }
            textfile_free(&in);
        }
    CHECKF(checked == 48, "%d reference files checked, expected 48", checked);
}

/* Raw -> ids -> text through one pipeline that tokenizes and detokenizes. With every word of the
 * text in the vocabulary the result is detokenizer.perl(tokenizer.perl(raw)) exactly; with a
 * shortlist, the words out of it come back as <unk> and the others as they were. */
static void round_trip(const char *lang_name, int lang)
{
    textfile raw, tok, detok, train;
    if (read_ref(&raw, "%s/data/multi30k/test_2016_flickr.%s%s", lang_name, "") ||
        read_ref(&tok, "%s/data/tokenizer/expected/test_2016_flickr.%s.tok.a.esc%s", lang_name, "") ||
        read_ref(&detok, "%s/data/tokenizer/expected/test_2016_flickr.%s.tok.a.esc.detok%s", lang_name, "") ||
        read_ref(&train, "%s/data/multi30k/train.%s%s", lang_name, ""))
        return;
    nmt_text_opts o = nmt_text_default_opts();
    o.lang = lang;
    o.tokenize = o.aggressive = o.detokenize = 1;
    nmt_err e;
    for (int shortlist = 0; shortlist < 2; shortlist++) {
        /* full: every word of the test text; shortlist: the training text's 2000 most frequent
         * words after the same tokenization */
        textfile *src = shortlist ? &train : &tok;
        nmt_text *t = NULL;
        wordcount wc;
        vocab *v = NULL;
        if (shortlist) {
            nmt_text_opts to = o;
            to.detokenize = 0;
            if (nmt_text_init(&t, &to, NULL, 0, &e) || textfile_encode(src, t, &e)) { CHECKF(0, "%s", e.msg); nmt_text_free(t); break; }
            nmt_text_free(t);
        }
        if (wordcount_build(&wc, src, &e) || vocab_from_counts(&v, &wc, shortlist ? 2002 : (int)wc.ntypes + 2, &e) ||
            nmt_text_init(&t, &o, (const char *const *)v->words, v->n, &e)) {
            CHECKF(0, "%s", e.msg);
            wordcount_free(&wc);
            vocab_free(v);
            break;
        }
        long n = quick ? 150 : raw.nlines, bad = 0, unk_lines = 0;
        for (long i = 0; i < n; i++) {
            nmt_text_line l;
            const char *txt;
            size_t len;
            char *want = strdup(tok.line[i]), *w[512];
            int nw = want ? text_split_words(want, w, 512) : -1, ok = nmt_text_encode(t, raw.line[i], strlen(raw.line[i]), &l, &e) == 0 && l.n_words == nw;
            int unk = 0;
            for (int k = 0; ok && k < nw; k++) { /* ids say the expected words, or UNK for words out of the list */
                int id = vocab_find(v, w[k], strlen(w[k]));
                ok = l.ids[k] == (id < 0 ? 1 : id);
                unk += id < 0;
            }
            ok = ok && l.n_unk == unk && nmt_text_decode(t, l.ids, l.n_words, &txt, &len, &e) == 0;
            if (ok && unk == 0) ok = !strcmp(txt, detok.line[i]);
            if (ok && unk) ok = strstr(txt, "<unk>") != NULL;
            unk_lines += unk > 0;
            if (!ok && bad++ < 3) fprintf(stderr, "  round trip %s (shortlist %d) line %ld: \"%s\"\n", lang_name, shortlist, i + 1, raw.line[i]);
            free(want);
        }
        CHECKF(bad == 0, "round trip %s (shortlist %d): %ld of %ld lines wrong", lang_name, shortlist, bad, n);
        CHECKF(shortlist ? unk_lines > 0 : unk_lines == 0, "%s: %ld lines with UNK (shortlist %d)", lang_name, unk_lines, shortlist);
        printf("  round trip %s, %s vocabulary: %ld lines, %ld with UNK\n", lang_name, shortlist ? "2000-word" : "full", n, unk_lines);
        nmt_text_free(t);
        wordcount_free(&wc);
        vocab_free(v);
    }
    textfile_free(&raw);
    textfile_free(&tok);
    textfile_free(&detok);
    textfile_free(&train);
}

/* Raw Multi30k through --lowercase --normalize-punct tokenizing gives the dataset's own tokenized
 * files (tok/), the data the models are trained on. */
static void test_multi30k_tok(void)
{
    static const char *const langs[] = {"en", "fr", "de"};
    for (int g = 0; g < 3; g++) {
        textfile raw, tok;
        if (read_ref(&raw, "%s/data/multi30k/val.%s%s", langs[g], "")) continue;
        if (!read_ref(&tok, "%s/data/multi30k/tok/val.%s%s", langs[g], "")) {
            nmt_text_opts o = nmt_text_default_opts();
            o.lang = g;
            o.tokenize = o.lowercase = o.normalize_punct = 1;
            char name[64];
            snprintf(name, sizeof name, "multi30k val.%s", langs[g]);
            check_encode(name, &raw, &tok, &o);
            textfile_free(&tok);
        }
        textfile_free(&raw);
    }
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--quick")) quick = 1;
    shared = getenv("NMT_SHARED");
    if (!shared || !*shared) shared = "../shared";
    snprintf(tmpdir, sizeof tmpdir, "%s/nmt-text-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    test_words();
    test_reader_files();
    test_reader_fds();
    test_reader_gzip();
    test_textfile();
    test_pipeline_api();
    test_pipeline_model();
    test_moses_vectors();
    test_multi30k_tok();
    round_trip("en", NMT_LANG_EN);
    round_trip("fr", NMT_LANG_FR);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
    return test_done("test_text");
}
