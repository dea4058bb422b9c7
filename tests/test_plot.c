/* test_plot.c: the heat-map writers and the font rasteriser. PNGs are decoded back with libpng
 * (size, the grey of cells of known weight at the pixels the layout gives, ink where labels go);
 * SVGs are checked for XML escaping and their cells; the rasteriser's ink is compared with the
 * area of the outlines (shoelace formula); damaged fonts must fail cleanly or draw harmlessly. */
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "viz/font.h"
#include "viz/plot.h"
#include "test.h"

static char tmpdir[256];

static char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) { free(b); b = NULL; }
    if (b) b[len] = 0;
    fclose(f);
    if (n) *n = (size_t)len;
    return b;
}

static void test_escape(void)
{
    char out[256];
    size_t n = plot_xml_escape(out, sizeof out, "a<b>&\"c\"'d'");
    CHECKF(!strcmp(out, "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;"), "got %s", out);
    CHECK(n == strlen(out));
    plot_xml_escape(out, sizeof out, "l&apos;homme");
    CHECKF(!strcmp(out, "l&amp;apos;homme"), "got %s", out); /* the token as written, not an entity */
    const char *intl = "Москва Ελλάδα 東京 مرحبا שלום";
    plot_xml_escape(out, sizeof out, intl);
    CHECK(!strcmp(out, intl));
    plot_xml_escape(out, sizeof out, "x\xFFy\x01z\xEF\xBF\xBF");
    CHECKF(!strcmp(out, "x\xEF\xBF\xBDy\xEF\xBF\xBDz\xEF\xBF\xBD"), "invalid bytes, controls, U+FFFF: %s", out);
    /* snprintf semantics: the whole length returned, the output cut and terminated */
    char small[6];
    n = plot_xml_escape(small, sizeof small, "<<");
    CHECK(n == 8 && !strcmp(small, "&lt;&"));
    CHECK(plot_xml_escape(NULL, 0, "&") == 5);
}

static void test_helpers(void)
{
    CHECK(plot_grey(0) == 0);
    CHECK(plot_grey(1) == 255);
    CHECK(plot_grey(0.5f) == 128);
    CHECK(plot_grey(-0.1f) == 0 && plot_grey(1.5f) == 255);
    char *buf, **w;
    int n = plot_split_words("  a  b\tc\r\n", &buf, &w);
    CHECK(n == 3 && !strcmp(w[0], "a") && !strcmp(w[1], "b") && !strcmp(w[2], "c"));
    free(buf);
    free(w);
    n = plot_split_words("   ", &buf, &w);
    CHECK(n == 0);
    free(buf);
    free(w);
}

/* 2 x 3 weights whose cells have known greys: 0 black, 1 white, 0.5 -> 128, 0.25 -> 64. */
static const float W23[6] = {0, 1, 0.5f, 1, 0, 0.25f};
static const uint8_t G23[6] = {0, 255, 128, 255, 0, 64};
static const char *ROWS2[2] = {"le", "chat"};
static const char *COLS3[3] = {"the", "cat", "<&>"};

static void test_png(const font_set *fs)
{
    plot_spec s = {2, 3, ROWS2, COLS3, W23, 3, "a title", 20};
    const char *path = tmp_path("p.png");
    nmt_err err;
    CHECKF(plot_png_write(&s, fs, path, &err) == 0, "%s", err.msg);
    plot_layout l;
    CHECK(plot_layout_make(&l, &s, fs, &err) == 0);
    CHECK(l.cell == 20);
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&im, path)) {
        CHECKF(0, "libpng cannot read %s: %s", path, im.message);
        plot_layout_free(&l);
        return;
    }
    CHECK(im.format == PNG_FORMAT_GRAY); /* 8-bit grey, no alpha, as written */
    CHECKF((int)im.width == l.width && (int)im.height == l.height, "%ux%u vs layout %dx%d", im.width, im.height,
           l.width, l.height);
    uint8_t *px = malloc(PNG_IMAGE_SIZE(im));
    CHECK(png_image_finish_read(&im, NULL, px, 0, NULL));
    int w = (int)im.width;
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++) {
            int bad = 0; /* every pixel of the cell, not just its centre */
            for (int y = 0; y < l.cell; y++)
                for (int x = 0; x < l.cell; x++)
                    bad += px[(size_t)(l.y0 + r * l.cell + y) * w + l.x0 + c * l.cell + x] != G23[r * 3 + c];
            CHECKF(bad == 0, "cell (%d,%d): %d pixels differ from %d (centre %d)", r, c, bad, G23[r * 3 + c],
                   px[(size_t)(l.y0 + r * l.cell + l.cell / 2) * w + l.x0 + c * l.cell + l.cell / 2]);
        }
    /* labels: ink left of each row, above each column; the corner beyond the margin stays white */
    for (int r = 0; r < 2; r++) {
        int ink = 0;
        for (int y = l.y0 + r * l.cell; y < l.y0 + (r + 1) * l.cell; y++)
            for (int x = 0; x < l.x0 - 1; x++) ink += px[(size_t)y * w + x] < 128;
        CHECKF(ink > 10, "row label %d: %d dark pixels", r, ink);
    }
    for (int c = 0; c < 3; c++) {
        int ink = 0;
        for (int y = 0; y < l.y0 - 1; y++)
            for (int x = l.x0 + c * l.cell; x < l.x0 + (c + 1) * l.cell; x++) ink += px[(size_t)y * w + x] < 128;
        CHECKF(ink > 10, "column label %d: %d dark pixels", c, ink);
    }
    CHECK(px[0] == 255 && px[(size_t)l.height * w - 1] == 255);
    free(px);
    plot_layout_free(&l);
    /* an unwritable place: an I/O error, no crash */
    CHECK(plot_png_write(&s, fs, "/nonexistent-dir/x.png", &err) == NMT_ERR_IO);
}

static void test_svg(const font_set *fs)
{
    const char *rows[3] = {"l&apos;homme", "\"quoted\"", "it's"};
    const char *cols[4] = {"<b>", "a&b", "Москва", "東京"};
    float w[12] = {0, 1, 0.5f, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    plot_spec s = {3, 4, rows, cols, w, 4, "x < y & \"z\"", 24};
    nmt_err err;
    const char *path = tmp_path("p.svg");
    CHECKF(plot_svg_write(&s, fs, path, &err) == 0, "%s", err.msg);
    char *t = slurp(path, NULL);
    CHECK(t != NULL);
    if (!t) return;
    CHECK(strstr(t, ">l&amp;apos;homme</text>") != NULL);
    CHECK(strstr(t, ">&quot;quoted&quot;</text>") != NULL);
    CHECK(strstr(t, ">it&apos;s</text>") != NULL);
    CHECK(strstr(t, ">&lt;b&gt;</text>") != NULL);
    CHECK(strstr(t, ">a&amp;b</text>") != NULL);
    CHECK(strstr(t, ">Москва</text>") != NULL && strstr(t, ">東京</text>") != NULL);
    CHECK(strstr(t, ">x &lt; y &amp; &quot;z&quot;</text>") != NULL);
    /* every '<' opens a tag and every '&' an entity */
    int bad = 0;
    for (const char *p = t; *p; p++) {
        if (*p == '<') bad += !(p[1] == '/' || p[1] == '?' || (p[1] >= 'a' && p[1] <= 'z'));
        if (*p == '&') bad += strncmp(p, "&lt;", 4) && strncmp(p, "&gt;", 4) && strncmp(p, "&amp;", 5) &&
                              strncmp(p, "&quot;", 6) && strncmp(p, "&apos;", 6);
    }
    CHECKF(bad == 0, "%d stray < or &", bad);
    /* the cells, where the layout puts them */
    plot_layout l;
    CHECK(plot_layout_make(&l, &s, fs, &err) == 0);
    char want[160];
    snprintf(want, sizeof want, "<rect x=\"%d\" y=\"%d\" width=\"24\" height=\"24\" fill=\"#000000\"/>", l.x0, l.y0);
    CHECKF(strstr(t, want) != NULL, "no %s", want);
    snprintf(want, sizeof want, "<rect x=\"%d\" y=\"%d\" width=\"24\" height=\"24\" fill=\"#ffffff\"/>",
             l.x0 + 24, l.y0);
    CHECKF(strstr(t, want) != NULL, "no %s", want);
    snprintf(want, sizeof want, "<rect x=\"%d\" y=\"%d\" width=\"24\" height=\"24\" fill=\"#808080\"/>",
             l.x0 + 48, l.y0);
    CHECKF(strstr(t, want) != NULL, "no %s", want);
    int cells = 0;
    for (const char *p = t; (p = strstr(p, "height=\"24\" fill=\"#")); p++) cells++;
    CHECK(cells == 12);
    snprintf(want, sizeof want, "width=\"%d\" height=\"%d\"", l.width, l.height);
    CHECK(strstr(t, want) != NULL);
    plot_layout_free(&l);
    free(t);
    /* without fonts the SVG is still written (labels measured by estimate) */
    CHECK(plot_svg_write(&s, NULL, path, &err) == 0);
}

static void test_layout(const font_set *fs)
{
    enum { N = 80 };
    const char *words[N];
    static float w[N * N];
    char longword[200];
    memset(longword, 'w', sizeof longword - 1);
    longword[sizeof longword - 1] = 0;
    for (int k = 0; k < N; k++) words[k] = k == 7 ? longword : "word";
    plot_spec s = {N, N, words, words, w, N, NULL, 0};
    plot_layout l;
    nmt_err err;
    CHECK(plot_layout_make(&l, &s, fs, &err) == 0);
    CHECKF(l.cell >= 16, "cell %d", l.cell);
    CHECKF(l.ascent + l.descent <= l.cell, "a label line of %.1f px in a %d px cell", l.ascent + l.descent, l.cell);
    CHECKF(l.font_px >= 9, "font %.1f px", l.font_px);
    const char *t = l.row_text[7];
    size_t n = strlen(t);
    CHECKF(n > 3 && !strcmp(t + n - 3, "\xE2\x80\xA6"), "long word not shortened: %s", t);
    CHECK(l.row_w[7] <= 18 * l.font_px + 1e-9 && l.row_w[7] > 10 * l.font_px);
    CHECK(!strcmp(l.row_text[0], "word"));
    plot_layout_free(&l);
    /* a small forced cell still holds its labels */
    s.cell = PLOT_MIN_CELL;
    CHECK(plot_layout_make(&l, &s, fs, &err) == 0);
    CHECK(l.ascent + l.descent <= l.cell);
    plot_layout_free(&l);
    /* errors */
    s.cell = PLOT_MIN_CELL - 1;
    CHECK(plot_layout_make(&l, &s, fs, &err) == NMT_ERR_ARG);
    s.cell = 0;
    s.rows = 0;
    CHECK(plot_layout_make(&l, &s, fs, &err) == NMT_ERR_ARG);
    s.rows = N;
    w[5] = NAN;
    CHECK(plot_layout_make(&l, &s, fs, &err) == NMT_ERR_NUMERIC);
    w[5] = 0;
    uint8_t *canvas;
    CHECK(plot_render(&s, NULL, &canvas, &l, &err) == NMT_ERR_ARG); /* a PNG needs a font */
}

/* Ink drawn (sum of darkness, in pixels) by text on a white canvas, and its bounding box. */
static double ink(const font_set *fs, const char *s, double px, int rotate, int *bw, int *bh)
{
    enum { W = 400, H = 400 };
    static uint8_t c[W * H];
    memset(c, 255, sizeof c);
    nmt_err err;
    font_draw_text(fs, c, W, H, rotate ? 200 : 40, rotate ? 360 : 200, s, px, rotate, 0, &err);
    double sum = 0;
    int x0 = W, x1 = -1, y0 = H, y1 = -1;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (c[y * W + x] < 255) {
                sum += (255 - c[y * W + x]) / 255.0;
                if (x < x0) x0 = x;
                if (x > x1) x1 = x;
                if (y < y0) y0 = y;
                if (y > y1) y1 = y;
            }
    if (bw) *bw = x1 - x0 + 1;
    if (bh) *bh = y1 - y0 + 1;
    return sum;
}

static void test_font(const font_set *fs)
{
    /* the filled area equals the outline's (glyphs whose contours do not overlap) */
    const char *glyphs[] = {"o", "H", "8", "A", "g", "\xD0\x96" /* Ж */};
    for (size_t k = 0; k < sizeof glyphs / sizeof *glyphs; k++) {
        double a = font_text_area(fs, glyphs[k], 64), d = ink(fs, glyphs[k], 64, 0, NULL, NULL);
        CHECKF(a > 50 && fabs(d - a) <= 0.02 * a, "'%s': ink %.1f, outline area %.1f", glyphs[k], d, a);
    }
    /* turned text: the same ink, the box turned */
    int bw, bh, rw, rh;
    double d0 = ink(fs, "HHHH", 40, 0, &bw, &bh), d1 = ink(fs, "HHHH", 40, 1, &rw, &rh);
    CHECKF(fabs(d0 - d1) <= 0.02 * d0, "ink %.1f upright, %.1f turned", d0, d1);
    CHECKF(bw > 2 * bh && rh > 2 * rw && abs(bw - rh) <= 2 && abs(bh - rw) <= 2, "boxes %dx%d and %dx%d", bw, bh, rw, rh);
    /* advances add up (no kerning) and scale with the size */
    double wa = font_text_width(fs, "a", 20), wb = font_text_width(fs, "b", 20);
    CHECK(wa > 5 && fabs(font_text_width(fs, "ab", 20) - (wa + wb)) < 1e-9);
    CHECK(fabs(font_text_width(fs, "ab", 40) - 2 * (wa + wb)) < 1e-9);
    /* a character no font has is a box: it has width and ink */
    CHECK(!font_has_glyph(fs, 0xE000));
    CHECK(font_text_width(fs, "\xEE\x80\x80", 20) > 5);
    CHECK(ink(fs, "\xEE\x80\x80", 40, 0, NULL, NULL) > 20);
    CHECK(font_has_glyph(fs, 0x0416) && font_has_glyph(fs, 0x03B1) && font_has_glyph(fs, 0x05D0));
    /* Arabic letters take their joined forms: a word is narrower than its isolated letters */
    double joined = font_text_width(fs, "\xD8\xB3\xD9\x84\xD8\xA7\xD9\x85", 40); /* سلام */
    double apart = font_text_width(fs, "\xD8\xB3", 40) + font_text_width(fs, "\xD9\x84", 40) +
                   font_text_width(fs, "\xD8\xA7", 40) + font_text_width(fs, "\xD9\x85", 40);
    CHECKF(joined < apart, "joined %.1f, isolated %.1f", joined, apart);
    /* Hebrew reads right to left: "אב" is drawn as bet, then alef to its right */
    {
        enum { W = 200, H = 80 };
        static uint8_t a[W * H], b[W * H];
        nmt_err err;
        memset(a, 255, sizeof a);
        memset(b, 255, sizeof b);
        const char *alef = "\xD7\x90", *bet = "\xD7\x91";
        font_draw_text(fs, a, W, H, 10, 60, "\xD7\x90\xD7\x91", 40, 0, 0, &err);
        font_draw_text(fs, b, W, H, 10, 60, bet, 40, 0, 0, &err);
        font_draw_text(fs, b, W, H, 10 + font_text_width(fs, bet, 40), 60, alef, 40, 0, 0, &err);
        CHECK(!memcmp(a, b, sizeof a));
    }
    double asc, desc;
    font_vmetrics(fs, 100, &asc, &desc);
    CHECK(asc > 60 && asc < 110 && desc > 10 && desc < 40);
}

static void test_bad_fonts(void)
{
    nmt_err err;
    font_set *fs;
    CHECK(font_set_new(&fs, &err) == 0);
    const char *junk = tmp_path("junk.ttf");
    FILE *f = fopen(junk, "wb");
    fputs("this is not a font, not at all, not even close", f);
    fclose(f);
    CHECK(font_set_add(fs, junk, &err) == NMT_ERR_FORMAT && strstr(err.msg, "junk.ttf"));
    CHECK(font_set_add(fs, tmp_path("missing.ttf"), &err) == NMT_ERR_IO);
    CHECK(font_set_count(fs) == 0);
    font_set_free(fs);
    CHECK(font_set_open(&fs, junk, &err) != 0); /* a font the user names must load */
    /* damaged copies of a real font: they load and draw something, or fail; never crash */
    font_set *good;
    if (font_set_open(&good, NULL, &err)) return;
    size_t n;
    char *data = slurp(font_set_path(good, 0), &n);
    font_set_free(good);
    if (!data) return;
    uint64_t x = 88172645463325252ull;
    int loaded = 0;
    for (int round = 0; round < 24; round++) {
        char *copy = malloc(n);
        memcpy(copy, data, n);
        size_t keep = round % 4 == 3 ? n / 3 : n; /* some cut short */
        for (int k = 0; k < 400; k++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            copy[(x >> 8) % keep] = (char)x;
        }
        const char *p = tmp_path("bad.ttf");
        f = fopen(p, "wb");
        fwrite(copy, 1, keep, f);
        fclose(f);
        free(copy);
        if (font_set_new(&fs, &err) == 0 && font_set_add(fs, p, &err) == 0) {
            static uint8_t canvas[200 * 100];
            font_draw_text(fs, canvas, 200, 100, 10, 60, "Hamburgefonstiv \xC3\xA9\xC3\xA5 \xD0\x96", 30, round & 1, 0, &err);
            font_text_width(fs, "x\xC3\xA9", 12);
            loaded++;
        }
        font_set_free(fs);
    }
    CHECKF(loaded > 0, "no damaged copy loaded: the drawing code was not exercised");
    free(data);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/nmt-test-plot.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    test_escape();
    test_helpers();
    nmt_err err;
    font_set *fs = NULL;
    int rc = font_set_open(&fs, NULL, &err);
    CHECKF(rc == 0, "%s (scripts/install-deps.sh installs fonts-dejavu-core)", err.msg);
    test_svg(fs);
    if (fs) {
        test_png(fs);
        test_layout(fs);
        test_font(fs);
    }
    test_bad_fonts();
    font_set_free(fs);
    const char *names[] = {"p.png", "p.svg", "junk.ttf", "bad.ttf"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) remove(tmp_path(names[k]));
    rmdir(tmpdir);
    return test_done("test_plot");
}
