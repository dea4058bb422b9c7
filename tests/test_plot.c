/* test_plot.c: the heat-map writer and the drawing layer under it (draw.h, canvas.h). PNGs are
 * read back with cairo (size, the grey at cells of known weight, ink where labels go); SVGs are
 * checked as XML and for the labels and title in their text layer; PDFs for header, one page and
 * size; labels in Arabic, Hebrew and CJK for shaping, right-to-left order and font fallback; a
 * font file given by name for being the one used. */
#include <cairo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "test.h"
#include "viz/canvas.h"
#include "viz/draw.h"
#include "viz/plot.h"

/* fontconfig loses a few hundred bytes, once a process, as it loads its default configuration
 * (pango has it loaded on a thread of its own): not a leak of ours, so LeakSanitizer lets leaks
 * from inside libfontconfig be. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libfontconfig.so\n"; }

static char tmpdir[256];

static char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static size_t count(const char *s, const char *sub)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, sub)); p += strlen(sub)) n++;
    return n;
}

/* ------------------------------------------------------------------ reading files back */
/* A PNG decoded by cairo, or NULL (and a failed check) when it cannot be read. */
static cairo_surface_t *png_load(const char *path)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    cairo_status_t st = cairo_surface_status(s);
    CHECKF(st == CAIRO_STATUS_SUCCESS, "%s: %s", path, cairo_status_to_string(st));
    if (st == CAIRO_STATUS_SUCCESS) return s;
    cairo_surface_destroy(s);
    return NULL;
}

/* Pixel (x, y) as 0xRRGGBB (the images are opaque: no alpha to undo). */
static uint32_t px_at(cairo_surface_t *s, int x, int y)
{
    const uint8_t *row = cairo_image_surface_get_data(s) + (size_t)y * cairo_image_surface_get_stride(s);
    return ((const uint32_t *)row)[x] & 0xffffff;
}

/* Pixels darker than mid-grey in the box [x0, x1) x [y0, y1). */
static int ink_in(cairo_surface_t *s, int x0, int y0, int x1, int y1)
{
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) n += (px_at(s, x, y) & 0xff) < 128;
    return n;
}

static int count_quotes(const char *p, const char *end)
{
    int n = 0;
    for (; p < end; p++) n += *p == '"';
    return n;
}

/* A small XML well-formedness check: declarations, comments, balanced and properly nested
 * tags with quoted attributes, and character data free of '<' and of '&' outside entities. */
static int xml_ok(const char *t)
{
    char stack[64][32];
    int depth = 0;
    for (const char *p = t; *p; p++) {
        if (*p == '&') {
            if (strncmp(p, "&lt;", 4) && strncmp(p, "&gt;", 4) && strncmp(p, "&amp;", 5) && strncmp(p, "&quot;", 6) &&
                strncmp(p, "&apos;", 6) && strncmp(p, "&#", 2))
                return 0;
            continue;
        }
        if (*p != '<') continue;
        const char *end = strchr(p, '>');
        if (!end) return 0;
        if (p[1] == '?' || p[1] == '!') { p = end; continue; }
        int closing = p[1] == '/', empty = end[-1] == '/';
        const char *name = p + 1 + closing;
        size_t n = strcspn(name, " \t\n/>");
        if (n == 0 || n >= sizeof stack[0]) return 0;
        if (count_quotes(p, end) % 2) return 0;
        if (closing) {
            if (depth == 0 || strncmp(stack[depth - 1], name, n) || stack[depth - 1][n]) return 0;
            depth--;
        } else if (!empty) {
            if (depth == 64) return 0;
            memcpy(stack[depth], name, n);
            stack[depth++][n] = 0;
        }
        p = end;
    }
    return depth == 0;
}

/* ------------------------------------------------------------------ small pieces */
static void test_escape(void)
{
    char out[256];
    size_t n = canvas_xml_escape(out, sizeof out, "a<b>&\"c\"'d'");
    CHECKF(!strcmp(out, "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;"), "got %s", out);
    CHECK(n == strlen(out));
    canvas_xml_escape(out, sizeof out, "l&apos;homme");
    CHECKF(!strcmp(out, "l&amp;apos;homme"), "got %s", out); /* the token as written, not an entity */
    const char *intl = "Москва Ελλάδα 東京 مرحبا שלום";
    canvas_xml_escape(out, sizeof out, intl);
    CHECK(!strcmp(out, intl));
    canvas_xml_escape(out, sizeof out, "x\xFFy\x01z\xEF\xBF\xBF");
    CHECKF(!strcmp(out, "x\xEF\xBF\xBDy\xEF\xBF\xBDz\xEF\xBF\xBD"), "invalid bytes, controls, U+FFFF: %s", out);
    /* snprintf semantics: the whole length returned, the output cut and terminated */
    char small[6];
    n = canvas_xml_escape(small, sizeof small, "<<");
    CHECK(n == 8 && !strcmp(small, "&lt;&"));
    CHECK(canvas_xml_escape(NULL, 0, "&") == 5);
    /* the checker used below tells good XML from bad */
    CHECK(xml_ok("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/><c>t &amp; u</c></a>"));
    CHECK(!xml_ok("<a><b></a></b>") && !xml_ok("<a>x & y</a>") && !xml_ok("<a>") && !xml_ok("<a x=\"1></a>"));
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
    CHECK(draw_format_of("a/b.svg") == DRAW_SVG && draw_format_of("x.PNG") == DRAW_PNG);
    CHECK(draw_format_of("x.pdf") == DRAW_PDF && draw_format_of("x.svg.gz") == 0);
    CHECK(draw_format_of("dir.png/x") == 0 && draw_format_of("x") == 0);
    CHECK(!strcmp(draw_format_name(DRAW_PDF), "pdf") && draw_format_name(3) == NULL);
}

/* ------------------------------------------------------------------ the three formats */
/* 2 x 3 weights whose cells have known greys: 0 black, 1 white, 0.5 -> 128, 0.25 -> 64. */
static const float W23[6] = {0, 1, 0.5f, 1, 0, 0.25f};
static const uint8_t G23[6] = {0, 255, 128, 255, 0, 64};
static const char *ROWS2[2] = {"le", "chat"};
static const char *COLS3[3] = {"the", "cat", "<&>"};

static void test_png(const draw_fonts *fs)
{
    plot_spec s = {2, 3, ROWS2, COLS3, W23, 3, "a title", 20};
    const char *path = tmp_path("p.png");
    nmt_err err;
    CHECKF(plot_write(&s, fs, path, &err) == 0, "%s", err.msg);
    plot_layout l;
    CHECK(plot_layout_make(&l, &s, fs, &err) == 0);
    cairo_surface_t *im = png_load(path);
    if (!im) { plot_layout_free(&l); return; }
    CHECKF(cairo_image_surface_get_width(im) == l.width && cairo_image_surface_get_height(im) == l.height,
           "%dx%d vs layout %dx%d", cairo_image_surface_get_width(im), cairo_image_surface_get_height(im), l.width,
           l.height);
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++) {
            int x = l.x0 + c * l.cell, y = l.y0 + r * l.cell, bad = 0;
            uint32_t g = G23[r * 3 + c], want = g << 16 | g << 8 | g;
            uint32_t centre = px_at(im, x + l.cell / 2, y + l.cell / 2);
            CHECKF(centre == want, "cell (%d,%d): centre %06x, want %06x", r, c, centre, want);
            /* and the whole cell: cells lie on whole pixels, so they are flat */
            for (int dy = 0; dy < l.cell; dy++)
                for (int dx = 0; dx < l.cell; dx++) bad += px_at(im, x + dx, y + dy) != want;
            CHECKF(bad == 0, "cell (%d,%d): %d pixels differ from %06x", r, c, bad, want);
        }
    /* labels: ink left of each row and above each column, none in the corner left of the
     * column labels and above the row labels; the image's corners stay white */
    for (int r = 0; r < 2; r++)
        CHECKF(ink_in(im, 0, l.y0 + r * l.cell, l.x0 - 1, l.y0 + (r + 1) * l.cell) > 10, "row label %d", r);
    int title_h = (int)ceil(1.5 * l.title_px);
    for (int c = 0; c < 3; c++)
        CHECKF(ink_in(im, l.x0 + c * l.cell, l.margin + title_h, l.x0 + (c + 1) * l.cell, l.y0 - 1) > 10,
               "column label %d", c);
    CHECK(ink_in(im, 0, l.margin + title_h, l.x0 - 1, l.y0 - 1) == 0);
    CHECK(ink_in(im, 0, 0, l.width, l.margin + title_h) > 20); /* the title */
    CHECK(px_at(im, 0, 0) == 0xffffff && px_at(im, l.width - 1, l.height - 1) == 0xffffff);
    cairo_surface_destroy(im);
    plot_layout_free(&l);
    /* an unwritable place: an I/O error naming it, no crash, no file */
    CHECK(plot_write(&s, fs, "/nonexistent-dir/x.png", &err) == NMT_ERR_IO && strstr(err.msg, "/nonexistent-dir"));
    CHECK(plot_write(&s, fs, tmp_path("p.gif"), &err) == NMT_ERR_ARG && access(tmp_path("p.gif"), F_OK) != 0);
}

static void test_svg(const draw_fonts *fs)
{
    const char *rows[3] = {"l&apos;homme", "\"quoted\"", "it's"};
    const char *cols[4] = {"<b>", "a&b", "Москва", "東京"};
    float w[12] = {0, 1, 0.5f, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    plot_spec s = {3, 4, rows, cols, w, 4, "x < y & \"z\"", 24};
    nmt_err err;
    const char *path = tmp_path("p.svg");
    CHECKF(plot_write(&s, fs, path, &err) == 0, "%s", err.msg);
    char *t = test_slurp(path, NULL);
    CHECK(t != NULL);
    if (!t) return;
    CHECK(!strncmp(t, "<?xml", 5) && xml_ok(t));
    plot_layout l;
    CHECK(plot_layout_make(&l, &s, fs, &err) == 0);
    char want[160];
    snprintf(want, sizeof want, "width=\"%dpx\" height=\"%dpx\" viewBox=\"0 0 %d %d\"", l.width, l.height, l.width,
             l.height);
    CHECKF(strstr(t, want) != NULL, "no %s", want);
    plot_layout_free(&l);
    /* the words, escaped, in the text layer; the title in <title> and as text */
    CHECK(strstr(t, ">l&amp;apos;homme</text>") != NULL);
    CHECK(strstr(t, ">&quot;quoted&quot;</text>") != NULL);
    CHECK(strstr(t, ">it&apos;s</text>") != NULL);
    CHECK(strstr(t, ">&lt;b&gt;</text>") != NULL);
    CHECK(strstr(t, ">a&amp;b</text>") != NULL);
    CHECK(strstr(t, ">Москва</text>") != NULL && strstr(t, ">東京</text>") != NULL);
    CHECK(strstr(t, "<title>x &lt; y &amp; &quot;z&quot;</title>") != NULL);
    CHECK(count(t, "<text class=\"row\"") == 3 && count(t, "<text class=\"col\"") == 4);
    CHECK(count(t, "<text class=\"title\"") == 1);
    /* the glyphs themselves are drawn (cairo writes them as outlines, used by reference) */
    CHECKF(count(t, "<use") >= 20, "%zu glyphs", count(t, "<use"));
    free(t);
}

static void test_pdf(const draw_fonts *fs)
{
    plot_spec s = {2, 3, ROWS2, COLS3, W23, 3, "a title", 20};
    nmt_err err;
    const char *path = tmp_path("p.pdf");
    CHECKF(plot_write(&s, fs, path, &err) == 0, "%s", err.msg);
    size_t n;
    char *t = test_slurp(path, &n);
    CHECK(t != NULL);
    if (!t) return;
    plot_layout l;
    CHECK(plot_layout_make(&l, &s, fs, &err) == 0);
    CHECK(n > 100 && !strncmp(t, "%PDF-", 5));
    CHECK(memmem(t + n - 32, 32, "%%EOF", 5) != NULL);
    /* one page (a "/Type /Page" that is not "/Type /Pages"), of the layout's size in points */
    size_t pages = 0;
    for (const char *p = t; (p = memmem(p, n - (size_t)(p - t), "/Type /Page", 11)); p += 11) pages += p[11] != 's';
    CHECKF(pages == 1, "%zu pages", pages);
    char box[64];
    snprintf(box, sizeof box, "/MediaBox [ 0 0 %d %d ]", l.width, l.height);
    CHECKF(memmem(t, n, box, strlen(box)) != NULL, "no %s", box);
    plot_layout_free(&l);
    free(t);
}

/* ------------------------------------------------------------------ scripts and fonts */
/* Draws s alone, large, into a PNG and returns the image (NULL on failure). */
static cairo_surface_t *text_image(const draw_fonts *fs, const char *s, const char *name)
{
    canvas *cv;
    nmt_err err;
    const char *path = tmp_path(name);
    if (canvas_open(&cv, path, 300, 80, fs, NULL, &err)) { CHECKF(0, "%s", err.msg); return NULL; }
    canvas_text(cv, s, 20, 60, 40, DRAW_LEFT, 0, 0, "t");
    if (canvas_close(cv, &err)) { CHECKF(0, "%s", err.msg); return NULL; }
    return png_load(path);
}

static int same_pixels(cairo_surface_t *a, cairo_surface_t *b)
{
    for (int y = 0; y < 80; y++)
        for (int x = 0; x < 300; x++)
            if (px_at(a, x, y) != px_at(b, x, y)) return 0;
    return 1;
}

static void test_scripts(const draw_fonts *fs)
{
    /* Arabic letters join: the word is narrower than its letters set apart */
    double joined = draw_text_width(fs, "\xD8\xB3\xD9\x84\xD8\xA7\xD9\x85", 40); /* سلام */
    double apart = draw_text_width(fs, "\xD8\xB3", 40) + draw_text_width(fs, "\xD9\x84", 40) +
                   draw_text_width(fs, "\xD8\xA7", 40) + draw_text_width(fs, "\xD9\x85", 40);
    CHECKF(joined < apart - 5, "joined %.1f, isolated %.1f", joined, apart);
    /* Hebrew reads right to left: alef then four bets is drawn as the four bets, then the alef at
     * the right; the same letters forced left to right (U+202D) in that visual order look the same,
     * in logical order they do not */
    cairo_surface_t *rtl = text_image(fs, "\xD7\x90\xD7\x91\xD7\x91\xD7\x91\xD7\x91", "rtl.png");
    cairo_surface_t *vis = text_image(fs, "\xE2\x80\xAD\xD7\x91\xD7\x91\xD7\x91\xD7\x91\xD7\x90", "vis.png");
    cairo_surface_t *log = text_image(fs, "\xE2\x80\xAD\xD7\x90\xD7\x91\xD7\x91\xD7\x91\xD7\x91", "log.png");
    if (rtl && vis && log) {
        CHECK(ink_in(rtl, 0, 0, 300, 80) > 200);
        CHECK(same_pixels(rtl, vis));
        CHECK(!same_pixels(rtl, log));
    }
    cairo_surface_destroy(rtl);
    cairo_surface_destroy(vis);
    cairo_surface_destroy(log);
    /* every script of the labels has a font (CJK from a fallback font); a private-use character
     * has none and is counted */
    CHECK(draw_missing_glyphs(fs, "Москва Ελλάδα שלום سلام") == 0);
    CHECKF(draw_missing_glyphs(fs, "東京 北京") == 0, "no CJK font (fonts-droid-fallback)");
    CHECK(draw_missing_glyphs(fs, "a\xEE\x80\x80") == 1);
    /* a plot labelled in those scripts is drawn, each label with ink */
    const char *rows[3] = {"\xD8\xB3\xD9\x84\xD8\xA7\xD9\x85", "\xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D", "東京"};
    const char *cols[2] = {"北京", "\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7"};
    float w[6] = {1, 0, 0, 1, 0.5f, 0.5f};
    plot_spec s = {3, 2, rows, cols, w, 2, "\xD8\xA7\xD9\x84\xD8\xB9\xD8\xB1\xD8\xA8\xD9\x8A\xD8\xA9", 24};
    nmt_err err;
    const char *path = tmp_path("scripts.png");
    CHECKF(plot_write(&s, fs, path, &err) == 0, "%s", err.msg);
    plot_layout l;
    cairo_surface_t *im = png_load(path);
    if (im && plot_layout_make(&l, &s, fs, &err) == 0) {
        for (int r = 0; r < 3; r++)
            CHECKF(ink_in(im, 0, l.y0 + r * l.cell, l.x0 - 1, l.y0 + (r + 1) * l.cell) > 10, "row label %d", r);
        plot_layout_free(&l);
    }
    cairo_surface_destroy(im);
    CHECKF(plot_write(&s, fs, tmp_path("scripts.pdf"), &err) == 0, "%s", err.msg);
}

static void test_font_files(void)
{
    nmt_err err;
    draw_fonts *f;
    const char *junk = tmp_path("junk.ttf");
    FILE *fp = fopen(junk, "wb");
    fputs("this is not a font, not at all, not even close", fp);
    fclose(fp);
    CHECK(draw_fonts_open(&f, junk, &err) == NMT_ERR_FORMAT && strstr(err.msg, "junk.ttf"));
    CHECK(draw_fonts_open(&f, tmp_path("missing.ttf"), &err) == NMT_ERR_IO && strstr(err.msg, "missing.ttf"));
    /* a font file named is the one drawn with: in a monospaced font i and m are equally wide */
    const char *mono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
    if (access(mono, R_OK)) {
        fprintf(stderr, "test_plot: %s not installed: --font not checked\n", mono);
        return;
    }
    CHECK(draw_fonts_open(&f, mono, &err) == 0);
    CHECK(!strncmp(draw_fonts_family(f), "DejaVu Sans Mono,", 17));
    CHECK(fabs(draw_text_width(f, "iiii", 20) - draw_text_width(f, "mmmm", 20)) < 0.01);
    draw_fonts_free(f);
}

static void test_layout(const draw_fonts *fs)
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
    CHECK(fabs(l.row_w[0] - draw_text_width(fs, "word", l.font_px)) < 1e-9);
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
    CHECK(plot_write(&s, fs, tmp_path("nan.png"), &err) == NMT_ERR_NUMERIC && access(tmp_path("nan.png"), F_OK));
    w[5] = 0;
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/nmt-test-plot.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    test_escape();
    test_helpers();
    nmt_err err;
    draw_fonts *fs = NULL;
    int rc = draw_fonts_open(&fs, NULL, &err);
    CHECKF(rc == 0, "%s (scripts/install-deps.sh installs fonts-dejavu-core)", err.msg);
    if (fs) {
        test_png(fs);
        test_svg(fs);
        test_pdf(fs);
        test_scripts(fs);
        test_layout(fs);
    }
    test_font_files();
    draw_fonts_free(fs);
    const char *names[] = {"p.png", "p.svg", "p.pdf", "junk.ttf", "rtl.png", "vis.png", "log.png", "scripts.png",
                           "scripts.pdf"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) remove(tmp_path(names[k]));
    rmdir(tmpdir);
    return test_done("test_plot");
}
