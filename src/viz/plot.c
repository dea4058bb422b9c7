/* plot.c: attention heat maps (plot.h). The layout is computed once with the fonts' measures and
 * drawn through a canvas (canvas.h): grey cells, a frame, then the labels, onto the SVG, PNG or
 * PDF surface the file's name asks for. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "viz/canvas.h"
#include "viz/plot.h"
#include "text/unicode.h"

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

/* ------------------------------------------------------------------ words */
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
static char *fit_label(const draw_fonts *fonts, const char *s, double px, double max_w, double *width)
{
    size_t n = strlen(s), ends[MAX_LABEL_CP];
    size_t m = cp_prefix(s, n, MAX_LABEL_CP, ends);
    double w = m == 0 || ends[m - 1] == n ? draw_text_width(fonts, s, px) : INFINITY;
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
        w = draw_text_width(fonts, buf, px);
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

int plot_layout_make(plot_layout *l, const plot_spec *s, const draw_fonts *fonts, nmt_err *err)
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
    double d;
    draw_vmetrics(fonts, l->font_px, &l->ascent, &l->descent);
    draw_vmetrics(fonts, l->title_px, &l->title_ascent, &d);
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
        title_w = draw_text_width(fonts, s->title, l->title_px);
    }
    int title_h = l->title_text ? (int)ceil(1.5 * l->title_px) : 0;
    l->x0 = l->margin + (int)ceil(row_max) + l->gap;
    l->y0 = l->margin + title_h + (int)ceil(col_max) + l->gap;
    double w = (double)l->x0 + (double)s->cols * cell + l->margin, h = (double)l->y0 + (double)s->rows * cell + l->margin;
    if (w < 2 * l->margin + ceil(title_w)) w = 2 * l->margin + ceil(title_w);
    if (w * h > (double)CANVAS_MAX_PIXELS || w > CANVAS_MAX_SIDE || h > CANVAS_MAX_SIDE) {
        rc = nmt_fail(err, NMT_ERR_ARG, "plot: %.0f x %.0f pixels is too large an image (at most %zu pixels, "
                      "%d a side): use a smaller cell", w, h, CANVAS_MAX_PIXELS, CANVAS_MAX_SIDE);
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

/* ------------------------------------------------------------------ drawing */
/* The matrix: a mid-grey frame just outside it (black cells at its edge stay visible), then one
 * square per weight on whole pixels, so that a PNG's cells are flat and seamless. */
static void draw_cells(cairo_t *cr, const plot_spec *s, const plot_layout *l)
{
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, l->x0 - 0.5, l->y0 - 0.5, s->cols * l->cell + 1, s->rows * l->cell + 1);
    canvas_rgb(cr, 0x808080);
    cairo_stroke(cr);
    for (int r = 0; r < s->rows; r++)
        for (int c = 0; c < s->cols; c++) {
            uint32_t g = plot_grey(s->weight[(size_t)r * s->stride + c]);
            cairo_rectangle(cr, l->x0 + c * l->cell, l->y0 + r * l->cell, l->cell, l->cell);
            canvas_rgb(cr, g << 16 | g << 8 | g);
            cairo_fill(cr);
        }
}

int plot_write(const plot_spec *s, const draw_fonts *fonts, const char *path, nmt_err *err)
{
    plot_layout l;
    int rc = plot_layout_make(&l, s, fonts, err);
    if (rc) return rc;
    canvas *cv;
    if ((rc = canvas_open(&cv, path, l.width, l.height, fonts, l.title_text ? l.title_text : "attention", err))) {
        plot_layout_free(&l);
        return rc;
    }
    draw_cells(canvas_cairo(cv), s, &l);
    if (l.title_text)
        canvas_text(cv, l.title_text, l.margin, l.margin + l.title_ascent, l.title_px, DRAW_LEFT, 0, 0, "title");
    for (int r = 0; r < s->rows; r++)
        canvas_text(cv, l.row_text[r], l.x0 - l.gap, row_baseline(&l, r), l.font_px, DRAW_RIGHT, 0, 0, "row");
    for (int c = 0; c < s->cols; c++)
        canvas_text(cv, l.col_text[c], col_baseline(&l, c), l.y0 - l.gap, l.font_px, DRAW_LEFT, 1, 0, "col");
    plot_layout_free(&l);
    return canvas_close(cv, err);
}
