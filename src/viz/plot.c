/* plot.c: attention heat maps as SVG and PNG (plot.h). The layout is computed once; the SVG
 * writer prints it as rectangles and text elements, the PNG writer fills a grey canvas (cells,
 * then labels through font.h) and hands it to libpng's simplified writer. */
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "viz/plot.h"
#include "text/unicode.h"

/* Larger images are refused: 268 million pixels of canvas is already 256 MiB. */
#define MAX_PIXELS ((size_t)1 << 28)
/* Automatic cells: the matrix side aims at this many pixels, with cells in [AUTO_MIN, AUTO_MAX]. */
#define AUTO_SIDE 600
#define AUTO_MIN 16
#define AUTO_MAX 36
/* The label font never exceeds this size, and long words are cut at this many ems. */
#define MAX_FONT_PX 14.0
#define MAX_LABEL_EM 18.0
/* A label keeps at most this many code points before it is measured for shortening. */
#define MAX_LABEL_CP 256
#define ELLIPSIS "\xE2\x80\xA6"

uint8_t plot_grey(float w)
{
    if (!(w > 0)) return 0; /* also NaN, which the writers refuse before drawing */
    if (w >= 1) return 255;
    return (uint8_t)lrintf(255.0f * w);
}

/* ------------------------------------------------------------------ XML text */
static void put(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
    if (*len < cap) {
        size_t room = cap - 1 - *len; /* cap >= 1 here: keep one byte for the NUL */
        memcpy(out + *len, s, n < room ? n : room);
    }
    *len += n;
}

size_t plot_xml_escape(char *out, size_t cap, const char *s)
{
    size_t len = 0, n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = utf8_decode(s + i, n - i, &cp);
        if (k < 0) { put(out, cap, &len, "\xEF\xBF\xBD", 3); i++; continue; }
        switch (cp) {
        case '&': put(out, cap, &len, "&amp;", 5); break;
        case '<': put(out, cap, &len, "&lt;", 4); break;
        case '>': put(out, cap, &len, "&gt;", 4); break;
        case '"': put(out, cap, &len, "&quot;", 6); break;
        case '\'': put(out, cap, &len, "&apos;", 6); break;
        default:
            /* XML 1.0 allows tab, newline and carriage return among the controls, and no
             * U+FFFE / U+FFFF (surrogates cannot come out of the decoder) */
            if ((cp < 0x20 && cp != 0x9 && cp != 0xA && cp != 0xD) || cp == 0xFFFE || cp == 0xFFFF)
                put(out, cap, &len, "\xEF\xBF\xBD", 3);
            else put(out, cap, &len, s + i, (size_t)k);
        }
        i += (size_t)k;
    }
    if (cap) out[len < cap ? len : cap - 1] = 0;
    return len;
}

int plot_split_words(const char *s, char **buf, char ***words)
{
    *words = NULL;
    if (!(*buf = strdup(s))) return -1;
    size_t n = 0, cap = 0;
    for (char *p = *buf;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
        if (!*p) break;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nw = realloc(*words, sizeof *nw * cap);
            if (!nw) { free(*words); free(*buf); *words = NULL; *buf = NULL; return -1; }
            *words = nw;
        }
        (*words)[n++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') p++;
        if (*p) *p++ = 0;
    }
    if (n > (size_t)1 << 30) { free(*words); free(*buf); *words = NULL; *buf = NULL; return -1; }
    return (int)n;
}

/* ------------------------------------------------------------------ layout */
static int is_wide(uint32_t cp)
{
    return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) || (cp >= 0xAC00 && cp <= 0xD7A3) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
           (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x20000 && cp <= 0x3FFFD);
}

/* Without fonts: a generous guess (an average Latin advance is about 0.6 em, CJK 1 em). */
static double estimate_width(const char *s, double px)
{
    size_t n = strlen(s);
    double w = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = utf8_decode(s + i, n - i, &cp);
        if (k < 0) { cp = 0xFFFD; k = 1; }
        i += (size_t)k;
        w += uni_is_mark(cp) ? 0 : is_wide(cp) ? 1.0 : 0.65;
    }
    return w * px;
}

static double text_width(const font_set *fonts, const char *s, double px)
{
    return fonts ? font_text_width(fonts, s, px) : estimate_width(s, px);
}

/* Byte offsets just past each of the first `max` code points of s (invalid bytes count one). */
static size_t cp_prefix(const char *s, size_t n, size_t max, size_t *ends)
{
    size_t i = 0, m = 0;
    while (i < n && m < max) {
        uint32_t cp;
        int k = utf8_decode(s + i, n - i, &cp);
        i += k < 0 ? 1 : (size_t)k;
        ends[m++] = i;
    }
    return m;
}

/* The label as drawn: s itself when it fits in max_w pixels, else its longest prefix (whole code
 * points) that fits with an ellipsis after it. */
static char *fit_label(const font_set *fonts, const char *s, double px, double max_w, double *width)
{
    size_t n = strlen(s), ends[MAX_LABEL_CP];
    size_t m = cp_prefix(s, n, MAX_LABEL_CP, ends);
    double w = m == 0 || ends[m - 1] == n ? text_width(fonts, s, px) : INFINITY;
    if (w <= max_w) {
        *width = w;
        return strdup(s);
    }
    char *buf = malloc(ends[m - 1] + sizeof ELLIPSIS);
    if (!buf) return NULL;
    for (size_t keep = ends[m - 1] == n ? m - 1 : m;; keep--) { /* from the longest prefix down */
        size_t b = keep ? ends[keep - 1] : 0;
        memcpy(buf, s, b);
        memcpy(buf + b, ELLIPSIS, sizeof ELLIPSIS);
        w = text_width(fonts, buf, px);
        if (w <= max_w || keep == 0) break;
    }
    *width = w;
    return buf;
}

void plot_layout_free(plot_layout *l)
{
    if (!l) return;
    for (int k = 0; l->row_text && k < l->rows; k++) free(l->row_text[k]);
    for (int k = 0; l->col_text && k < l->cols; k++) free(l->col_text[k]);
    free(l->row_text);
    free(l->col_text);
    free(l->title_text);
    free(l->row_w);
    free(l->col_w);
    memset(l, 0, sizeof *l);
}

static int check_spec(const plot_spec *s, nmt_err *err)
{
    if (s->rows < 1 || s->cols < 1)
        return nmt_fail(err, NMT_ERR_ARG, "nothing to plot: %d target and %d source words", s->rows, s->cols);
    if (!s->row_words || !s->col_words || !s->weight || s->stride < s->cols)
        return nmt_fail(err, NMT_ERR_ARG, "plot: missing words or weights, or stride %d < %d columns", s->stride,
                        s->cols);
    if (s->cell && (s->cell < PLOT_MIN_CELL || s->cell > PLOT_MAX_CELL))
        return nmt_fail(err, NMT_ERR_ARG, "plot: cell size %d outside [%d, %d]", s->cell, PLOT_MIN_CELL,
                        PLOT_MAX_CELL);
    for (int r = 0; r < s->rows; r++)
        for (int c = 0; c < s->cols; c++)
            if (!isfinite(s->weight[(size_t)r * s->stride + c]))
                return nmt_fail(err, NMT_ERR_NUMERIC, "plot: weight (%d, %d) is not finite", r, c);
    return NMT_OK;
}

int plot_layout_make(plot_layout *l, const plot_spec *s, const font_set *fonts, nmt_err *err)
{
    memset(l, 0, sizeof *l);
    int rc = check_spec(s, err);
    if (rc) return rc;
    l->rows = s->rows;
    l->cols = s->cols;
    int n = s->rows > s->cols ? s->rows : s->cols;
    int cell = s->cell;
    if (!cell) {
        cell = (int)lrint((double)AUTO_SIDE / n);
        cell = cell < AUTO_MIN ? AUTO_MIN : cell > AUTO_MAX ? AUTO_MAX : cell;
    }
    l->cell = cell;
    /* A line of DejaVu Sans is 1.17 em: at 0.68 of the cell (6 pixels at least) it fits in it. */
    l->font_px = floor(0.68 * cell);
    if (l->font_px < 6) l->font_px = 6;
    if (l->font_px > MAX_FONT_PX) l->font_px = MAX_FONT_PX;
    l->title_px = l->font_px + 3 < 11 ? 11 : l->font_px + 3;
    if (fonts) {
        font_vmetrics(fonts, l->font_px, &l->ascent, &l->descent);
        double d;
        font_vmetrics(fonts, l->title_px, &l->title_ascent, &d);
    } else { /* DejaVu Sans' */
        l->ascent = 0.928 * l->font_px;
        l->descent = 0.236 * l->font_px;
        l->title_ascent = 0.928 * l->title_px;
    }
    l->margin = 8;
    l->gap = cell / 5 < 3 ? 3 : cell / 5;
    l->row_text = calloc((size_t)s->rows, sizeof *l->row_text);
    l->col_text = calloc((size_t)s->cols, sizeof *l->col_text);
    l->row_w = calloc((size_t)s->rows, sizeof *l->row_w);
    l->col_w = calloc((size_t)s->cols, sizeof *l->col_w);
    if (!l->row_text || !l->col_text || !l->row_w || !l->col_w) goto nomem;
    double max_w = MAX_LABEL_EM * l->font_px, row_max = 0, col_max = 0, title_w = 0;
    for (int r = 0; r < s->rows; r++) {
        if (!(l->row_text[r] = fit_label(fonts, s->row_words[r] ? s->row_words[r] : "", l->font_px, max_w, &l->row_w[r])))
            goto nomem;
        if (l->row_w[r] > row_max) row_max = l->row_w[r];
    }
    for (int c = 0; c < s->cols; c++) {
        if (!(l->col_text[c] = fit_label(fonts, s->col_words[c] ? s->col_words[c] : "", l->font_px, max_w, &l->col_w[c])))
            goto nomem;
        if (l->col_w[c] > col_max) col_max = l->col_w[c];
    }
    if (s->title && *s->title) {
        if (!(l->title_text = strdup(s->title))) goto nomem;
        title_w = text_width(fonts, s->title, l->title_px);
    }
    int title_h = l->title_text ? (int)ceil(1.5 * l->title_px) : 0;
    l->x0 = l->margin + (int)ceil(row_max) + l->gap;
    l->y0 = l->margin + title_h + (int)ceil(col_max) + l->gap;
    double w = (double)l->x0 + (double)s->cols * cell + l->margin, h = (double)l->y0 + (double)s->rows * cell + l->margin;
    if (w < 2 * l->margin + ceil(title_w)) w = 2 * l->margin + ceil(title_w);
    if (w * h > (double)MAX_PIXELS) {
        rc = nmt_fail(err, NMT_ERR_ARG, "plot: %.0f x %.0f pixels is too large an image (at most %zu pixels): "
                      "use a smaller cell", w, h, MAX_PIXELS);
        plot_layout_free(l);
        return rc;
    }
    l->width = (int)w;
    l->height = (int)h;
    return NMT_OK;
nomem:
    plot_layout_free(l);
    return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
}

/* Baselines: a row label is centred on its row, a column label (turned) on its column. */
static double row_baseline(const plot_layout *l, int r)
{
    return l->y0 + (r + 0.5) * l->cell + (l->ascent - l->descent) / 2;
}
static double col_baseline(const plot_layout *l, int c)
{
    return l->x0 + (c + 0.5) * l->cell + (l->ascent - l->descent) / 2;
}

/* ------------------------------------------------------------------ SVG */
static void fput_xml(FILE *f, const char *s)
{
    char small[512];
    size_t n = plot_xml_escape(small, sizeof small, s);
    if (n < sizeof small) { fputs(small, f); return; }
    char *big = malloc(n + 1);
    if (!big) { fputs("\xEF\xBF\xBD", f); return; } /* the file still parses */
    plot_xml_escape(big, n + 1, s);
    fputs(big, f);
    free(big);
}

int plot_svg_write(const plot_spec *s, const font_set *fonts, const char *path, nmt_err *err)
{
    plot_layout l;
    int rc = plot_layout_make(&l, s, fonts, err);
    if (rc) return rc;
    FILE *f = fopen(path, "w");
    if (!f) {
        rc = nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
        plot_layout_free(&l);
        return rc;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
            l.width, l.height, l.width, l.height);
    fputs("<title>", f);
    fput_xml(f, l.title_text ? l.title_text : "attention");
    fputs("</title>\n", f);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", l.width, l.height);
    /* the fonts the PNG is drawn with, so that both look alike where they are installed */
    fprintf(f, "<g font-family=\"DejaVu Sans, Droid Sans Fallback, sans-serif\" font-size=\"%g\" fill=\"#000000\">\n",
            l.font_px);
    if (l.title_text) {
        fprintf(f, "<text class=\"title\" x=\"%d\" y=\"%.2f\" font-size=\"%g\">", l.margin,
                l.margin + l.title_ascent, l.title_px);
        fput_xml(f, l.title_text);
        fputs("</text>\n", f);
    }
    /* classes name the parts for style sheets and for programs that read the plot back */
    fputs("<g class=\"rows\" text-anchor=\"end\">\n", f);
    for (int r = 0; r < s->rows; r++) {
        fprintf(f, "<text x=\"%d\" y=\"%.2f\">", l.x0 - l.gap, row_baseline(&l, r));
        fput_xml(f, l.row_text[r]);
        fputs("</text>\n", f);
    }
    fputs("</g>\n<g class=\"cols\">\n", f);
    for (int c = 0; c < s->cols; c++) {
        double x = col_baseline(&l, c);
        int y = l.y0 - l.gap;
        fprintf(f, "<text x=\"%.2f\" y=\"%d\" transform=\"rotate(-90 %.2f %d)\">", x, y, x, y);
        fput_xml(f, l.col_text[c]);
        fputs("</text>\n", f);
    }
    fputs("</g>\n</g>\n<g class=\"cells\" shape-rendering=\"crispEdges\">\n", f);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#808080\"/>\n",
            l.x0 - 0.5, l.y0 - 0.5, s->cols * l.cell + 1, s->rows * l.cell + 1);
    for (int r = 0; r < s->rows; r++)
        for (int c = 0; c < s->cols; c++) {
            unsigned g = plot_grey(s->weight[(size_t)r * s->stride + c]);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#%02x%02x%02x\"/>\n",
                    l.x0 + c * l.cell, l.y0 + r * l.cell, l.cell, l.cell, g, g, g);
        }
    fputs("</g>\n</svg>\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        rc = nmt_fail(err, NMT_ERR_IO, "%s: write error: %s", path, strerror(errno));
        remove(path);
    }
    plot_layout_free(&l);
    return rc;
}

/* ------------------------------------------------------------------ PNG */
int plot_render(const plot_spec *s, const font_set *fonts, uint8_t **canvas, plot_layout *l, nmt_err *err)
{
    *canvas = NULL;
    if (!fonts || font_set_count(fonts) == 0) {
        memset(l, 0, sizeof *l);
        return nmt_fail(err, NMT_ERR_ARG, "plot: a PNG needs a font for its labels");
    }
    int rc = plot_layout_make(l, s, fonts, err);
    if (rc) return rc;
    size_t W = (size_t)l->width, H = (size_t)l->height;
    uint8_t *p = malloc(W * H);
    if (!p) {
        plot_layout_free(l);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for a %zu x %zu image", W, H);
    }
    memset(p, 255, W * H);
    /* a mid-grey frame just outside the matrix, so that black cells at its edge stay visible */
    int fx0 = l->x0 - 1, fy0 = l->y0 - 1, fx1 = l->x0 + s->cols * l->cell, fy1 = l->y0 + s->rows * l->cell;
    for (int x = fx0; x <= fx1; x++) p[(size_t)fy0 * W + x] = p[(size_t)fy1 * W + x] = 128;
    for (int y = fy0; y <= fy1; y++) p[(size_t)y * W + fx0] = p[(size_t)y * W + fx1] = 128;
    for (int r = 0; r < s->rows; r++)
        for (int c = 0; c < s->cols; c++) {
            uint8_t g = plot_grey(s->weight[(size_t)r * s->stride + c]);
            for (int y = 0; y < l->cell; y++)
                memset(p + (size_t)(l->y0 + r * l->cell + y) * W + l->x0 + c * l->cell, g, (size_t)l->cell);
        }
    int w = l->width, h = l->height;
    if (l->title_text)
        rc = font_draw_text(fonts, p, w, h, l->margin, l->margin + l->title_ascent, l->title_text, l->title_px, 0, 0, err);
    for (int r = 0; r < s->rows && !rc; r++)
        rc = font_draw_text(fonts, p, w, h, l->x0 - l->gap - l->row_w[r], row_baseline(l, r), l->row_text[r],
                            l->font_px, 0, 0, err);
    for (int c = 0; c < s->cols && !rc; c++)
        rc = font_draw_text(fonts, p, w, h, col_baseline(l, c), l->y0 - l->gap, l->col_text[c], l->font_px, 1, 0, err);
    if (rc) {
        free(p);
        plot_layout_free(l);
        return rc;
    }
    *canvas = p;
    return NMT_OK;
}

int plot_png_write(const plot_spec *s, const font_set *fonts, const char *path, nmt_err *err)
{
    uint8_t *p;
    plot_layout l;
    int rc = plot_render(s, fonts, &p, &l, err);
    if (rc) return rc;
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)l.width;
    img.height = (png_uint_32)l.height;
    img.format = PNG_FORMAT_GRAY;
    if (!png_image_write_to_file(&img, path, 0, p, l.width, NULL)) {
        rc = nmt_fail(err, NMT_ERR_IO, "%s: %s", path, img.message[0] ? img.message : "cannot write the PNG");
        remove(path);
    }
    png_image_free(&img);
    free(p);
    plot_layout_free(&l);
    return rc;
}
