/* chart.c: line charts (chart.h): one layout, measured with the fonts the text is drawn in, then
 * drawn through a canvas (canvas.h) onto the SVG, PNG or PDF surface the file's name asks for:
 * grid, frame, ticks, series lines and markers, legend, text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "viz/canvas.h"
#include "viz/chart.h"

#define ELLIPSIS "\xE2\x80\xA6"
#define MARGIN 14
#define TICK_LEN 5
#define TITLE_PX 18.0
#define LABEL_PX 14.0
#define TICK_PX 12.0
#define SUB_PX 11.0
#define LEGEND_PX 13.0
#define LEGEND_PAD 10
#define LEGEND_SAMPLE 32   /* length of the line drawn in front of a legend label */
#define LINE_WIDTH 2.25
#define MARKER_R 4.5
#define INK 0x222222u
#define SUB_INK 0x707070u
#define GRID 0xe4e4e4u
#define FRAME 0x444444u

/* ------------------------------------------------------------------ styles */
uint32_t chart_color(int k)
{
    /* Okabe & Ito's colour-blind-safe palette without its yellow (too pale on white), then a
     * dark wine red so that eight series have eight colours */
    static const uint32_t pal[] = {0x0072b2, 0xd55e00, 0x009e73, 0xcc79a7,
                                   0xe69f00, 0x56b4e9, 0x000000, 0x882255};
    int n = (int)(sizeof pal / sizeof pal[0]);
    return pal[((k % n) + n) % n];
}

int chart_marker(int k)
{
    return ((k % CHART_NSHAPES) + CHART_NSHAPES) % CHART_NSHAPES;
}

/* The outline of a marker centred on (cx, cy) with nominal radius r, at most 32 vertices; the
 * sizes are chosen so that the shapes look about equally heavy. Returns the vertex count. */
static int marker_polygon(int shape, double cx, double cy, double r, double *vx, double *vy)
{
    const double pi = 3.14159265358979323846;
    int n = 0;
    switch (shape) {
    case CHART_SQUARE: {
        double h = r * 0.88;
        vx[0] = cx - h; vy[0] = cy - h; vx[1] = cx + h; vy[1] = cy - h;
        vx[2] = cx + h; vy[2] = cy + h; vx[3] = cx - h; vy[3] = cy + h;
        return 4;
    }
    case CHART_TRIANGLE:
    case CHART_TRIANGLE_DOWN: {
        /* centroid on the point; the apex up (or down: mirrored) */
        double R = r * 1.35, s = shape == CHART_TRIANGLE ? 1 : -1;
        for (int i = 0; i < 3; i++) {
            double a = -pi / 2 + i * 2 * pi / 3;
            vx[i] = cx + R * cos(a);
            vy[i] = cy + s * R * sin(a);
        }
        return 3;
    }
    case CHART_DIAMOND: {
        double R = r * 1.3;
        vx[0] = cx; vy[0] = cy - R; vx[1] = cx + R * 0.8; vy[1] = cy;
        vx[2] = cx; vy[2] = cy + R; vx[3] = cx - R * 0.8; vy[3] = cy;
        return 4;
    }
    case CHART_PENTAGON:
        for (int i = 0; i < 5; i++) {
            double a = -pi / 2 + i * 2 * pi / 5;
            vx[n] = cx + r * 1.12 * cos(a);
            vy[n] = cy + r * 1.12 * sin(a);
            n++;
        }
        return n;
    case CHART_STAR:
        for (int i = 0; i < 10; i++) {
            double a = -pi / 2 + i * pi / 5, R = (i % 2 ? 0.5 : 1.0) * r * 1.5;
            vx[n] = cx + R * cos(a);
            vy[n] = cy + R * sin(a);
            n++;
        }
        return n;
    default: /* CHART_CIRCLE */
        for (int i = 0; i < 32; i++) {
            double a = i * 2 * pi / 32;
            vx[n] = cx + r * cos(a);
            vy[n] = cy + r * sin(a);
            n++;
        }
        return n;
    }
}

/* ------------------------------------------------------------------ text measures */
/* s cut (at a code point boundary) and ended with an ellipsis so that it is at most max_w
 * pixels wide; a malloc'ed copy, NULL for lack of memory. */
static char *fit_text(const draw_fonts *fonts, const char *s, double px, double max_w)
{
    size_t n = strlen(s);
    char *out = malloc(n + sizeof ELLIPSIS);
    if (!out) return NULL;
    memcpy(out, s, n + 1);
    if (draw_text_width(fonts, out, px) <= max_w) return out;
    size_t keep = n;
    while (keep > 0) {
        /* step back one code point */
        do keep--; while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80);
        memcpy(out + keep, ELLIPSIS, sizeof ELLIPSIS);
        if (draw_text_width(fonts, out, px) <= max_w) break;
    }
    return out;
}

/* ------------------------------------------------------------------ numbers */
/* The smallest step of 1, 2, 2.5 or 5 times a power of ten that cuts range into at most
 * max_parts intervals (0..63 with 7: steps of 10, not 20). */
static double nice_step(double range, int max_parts)
{
    if (!(range > 0)) return 1;
    static const double f[] = {1, 2, 2.5, 5};
    double mag = pow(10, floor(log10(range / (4.0 * max_parts))));
    for (int e = 0; e < 4; e++, mag *= 10)
        for (int k = 0; k < 4; k++)
            if (ceil(range / (f[k] * mag) - 1e-9) <= max_parts) return f[k] * mag;
    return mag;
}

/* Decimals that print every multiple of step exactly (0 for whole steps, at most 6). */
static int step_decimals(double step)
{
    int d = 0;
    while (d < 6) {
        double v = step * pow(10, d);
        if (fabs(v - round(v)) < 1e-6 * v) break;
        d++;
    }
    return d;
}

static char *format_number(double v, int decimals)
{
    char buf[64];
    if (fabs(v) < 0.5 * pow(10, -decimals)) v = 0; /* no "-0" */
    snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return strdup(buf);
}

/* ------------------------------------------------------------------ layout */
static int add_text(chart_layout *l, int *cap, char *s, double x, double y, double px, int anchor,
                    int rotate, uint32_t rgb, const char *cls)
{
    if (!s) return -1;
    if (l->ntext == *cap) {
        int nc = *cap ? 2 * *cap : 32;
        chart_text *nt = realloc(l->text, sizeof *nt * (size_t)nc);
        if (!nt) { free(s); return -1; }
        l->text = nt;
        *cap = nc;
    }
    l->text[l->ntext++] = (chart_text){s, x, y, px, anchor, rotate, rgb, cls};
    return 0;
}

void chart_layout_free(chart_layout *l)
{
    if (!l) return;
    for (int i = 0; i < l->ntext; i++) free(l->text[i].s);
    free(l->text);
    free(l->xtick);
    memset(l, 0, sizeof *l);
}

double chart_map_x(const chart_layout *l, double x)
{
    return l->px0 + (x - l->x_min) / (l->x_max - l->x_min) * (l->px1 - l->px0);
}

double chart_map_y(const chart_layout *l, double y)
{
    return l->py1 - (y - l->y_min) / (l->y_max - l->y_min) * (l->py1 - l->py0);
}

static int check_spec(const chart_spec *s, nmt_err *err)
{
    if (s->nseries < 1 || !s->series) return nmt_fail(err, NMT_ERR_ARG, "chart: no series to draw");
    if (!isfinite(s->x_min) || !isfinite(s->x_max) || !(s->x_min < s->x_max))
        return nmt_fail(err, NMT_ERR_ARG, "chart: x range [%g, %g] is empty", s->x_min, s->x_max);
    if (s->y_max > s->y_min && (!isfinite(s->y_min) || !isfinite(s->y_max)))
        return nmt_fail(err, NMT_ERR_ARG, "chart: y range is not finite");
    int w = s->width ? s->width : CHART_DEFAULT_WIDTH, h = s->height ? s->height : CHART_DEFAULT_HEIGHT;
    if (w < 200 || h < 150 || w > CHART_MAX_SIDE || h > CHART_MAX_SIDE)
        return nmt_fail(err, NMT_ERR_ARG, "chart: size %dx%d outside 200x150 .. %dx%d", w, h,
                        CHART_MAX_SIDE, CHART_MAX_SIDE);
    if (s->n_xticks < 0 || (s->n_xticks > 0 && (!s->xtick || !s->xtick_label)))
        return nmt_fail(err, NMT_ERR_ARG, "chart: x ticks given without positions or labels");
    for (int k = 0; k < s->n_xticks; k++)
        if (!isfinite(s->xtick[k])) return nmt_fail(err, NMT_ERR_ARG, "chart: x tick %d is not finite", k);
    for (int k = 0; k < s->nseries; k++) {
        const chart_series *c = &s->series[k];
        if (c->n < 0 || (c->n > 0 && (!c->x || !c->y)))
            return nmt_fail(err, NMT_ERR_ARG, "chart: series %d has no points array", k + 1);
        for (int i = 0; i < c->n; i++)
            if (!isfinite(c->x[i]) || !isfinite(c->y[i]))
                return nmt_fail(err, NMT_ERR_ARG, "chart: series %d, point %d is not finite", k + 1, i + 1);
    }
    return NMT_OK;
}

/* The y range: the spec's, or from 0 (lower for negative data) to the first tick at or above
 * the largest value, at most seven intervals. */
static void y_axis(chart_layout *l, const chart_spec *s)
{
    double lo = 0, hi = 0;
    int any = 0;
    for (int k = 0; k < s->nseries; k++)
        for (int i = 0; i < s->series[k].n; i++) {
            double v = s->series[k].y[i];
            if (!any || v < lo) lo = v;
            if (!any || v > hi) hi = v;
            any = 1;
        }
    double y0, y1, step;
    if (s->y_max > s->y_min) {
        y0 = s->y_min;
        y1 = s->y_max;
        step = nice_step(y1 - y0, 7);
    } else {
        if (!any || lo > 0) lo = 0;
        if (!any || hi < lo) hi = lo;
        step = nice_step(hi - lo, 7);
        y0 = floor(lo / step) * step;
        y1 = ceil(hi / step - 1e-9) * step;
        if (y1 <= y0) y1 = y0 + step; /* all values equal (all zero, say) */
    }
    l->y_min = y0;
    l->y_max = y1;
    l->y_step = step;
    /* ticks at y_min + k * step inside the range (a given range need not be a multiple) */
    l->n_yticks = (int)floor((y1 - y0) / step + 1e-9) + 1;
}

/* x ticks: the caller's, or round numbers over the range (*xstep their step, else 0). */
static int x_ticks(chart_layout *l, const chart_spec *s, double *xstep)
{
    int nx = s->n_xticks;
    *xstep = 0;
    if (nx == 0) {
        *xstep = nice_step(s->x_max - s->x_min, 10);
        double first = ceil(s->x_min / *xstep - 1e-9) * *xstep;
        nx = (int)floor((s->x_max - first) / *xstep + 1e-9) + 1;
        if (nx < 0) nx = 0;
        if (!(l->xtick = malloc(sizeof *l->xtick * (size_t)(nx ? nx : 1)))) return -1;
        for (int k = 0; k < nx; k++) l->xtick[k] = first + k * *xstep;
    } else {
        if (!(l->xtick = malloc(sizeof *l->xtick * (size_t)nx))) return -1;
        memcpy(l->xtick, s->xtick, sizeof *l->xtick * (size_t)nx);
    }
    l->n_xticks = nx;
    return 0;
}

/* The series' legend labels, each cut to max_w pixels (free each and the array); *widest gets the
 * widest one's width. NULL for lack of memory. */
static char **fit_legend(const chart_spec *s, const draw_fonts *fonts, double max_w, double *widest)
{
    char **legend = calloc((size_t)s->nseries, sizeof *legend);
    *widest = 0;
    for (int k = 0; legend && k < s->nseries; k++) {
        legend[k] = fit_text(fonts, s->series[k].label ? s->series[k].label : "", LEGEND_PX, max_w);
        if (!legend[k]) {
            for (int j = 0; j < k; j++) free(legend[j]);
            free(legend);
            return NULL;
        }
        *widest = fmax(*widest, draw_text_width(fonts, legend[k], LEGEND_PX));
    }
    return legend;
}

/* The legend's labels as text items; takes the strings (and frees the array) in any case. */
static int legend_texts(chart_layout *l, int *cap, char **legend, int n, const draw_fonts *fonts)
{
    double asc, desc;
    draw_vmetrics(fonts, LEGEND_PX, &asc, &desc);
    int bad = 0;
    for (int k = 0; k < n; k++) {
        double cy = l->legend_y + (LEGEND_PAD - 3) + (k + 0.5) * l->legend_row;
        double x = l->legend_x + LEGEND_PAD + LEGEND_SAMPLE + 8;
        if (bad) free(legend[k]);
        else bad = add_text(l, cap, legend[k], x, cy + (asc - desc) / 2, LEGEND_PX, DRAW_LEFT, 0, INK, "legend");
    }
    free(legend);
    return bad ? -1 : 0;
}

/* Title, axis labels and y tick labels as text items. */
static int axis_texts(chart_layout *l, int *cap, const chart_spec *s, const draw_fonts *fonts)
{
    double t_asc, t_desc, l_asc, l_desc, k_asc, k_desc;
    draw_vmetrics(fonts, TITLE_PX, &t_asc, &t_desc);
    draw_vmetrics(fonts, LABEL_PX, &l_asc, &l_desc);
    draw_vmetrics(fonts, TICK_PX, &k_asc, &k_desc);
    if (s->title && *s->title) {
        double w = draw_text_width(fonts, s->title, TITLE_PX), cx = (l->px0 + l->px1) / 2.0;
        if (cx - w / 2 < MARGIN) cx = MARGIN + w / 2;
        if (add_text(l, cap, strdup(s->title), cx, MARGIN + t_asc, TITLE_PX, DRAW_CENTER, 0, INK, "title")) return -1;
    }
    if (s->x_label && *s->x_label &&
        add_text(l, cap, strdup(s->x_label), (l->px0 + l->px1) / 2.0, l->height - MARGIN - l_desc, LABEL_PX,
                 DRAW_CENTER, 0, INK, "x-label"))
        return -1;
    if (s->y_label && *s->y_label &&
        add_text(l, cap, strdup(s->y_label), MARGIN + l_asc, (l->py0 + l->py1) / 2.0, LABEL_PX, DRAW_CENTER, 1,
                 INK, "y-label"))
        return -1;
    int ydec = step_decimals(l->y_step);
    for (int k = 0; k < l->n_yticks; k++) {
        double y = chart_map_y(l, l->y_min + k * l->y_step);
        if (add_text(l, cap, format_number(l->y_min + k * l->y_step, ydec), l->px0 - TICK_LEN - 4,
                     y + (k_asc - k_desc) / 2, TICK_PX, DRAW_RIGHT, 0, INK, "y-tick"))
            return -1;
    }
    return 0;
}

/* The smallest k such that every k-th x tick label (widths w, centred on its tick) keeps 8
 * pixels from the next one labelled. */
static int label_every(const chart_layout *l, const double *w, int nx)
{
    int every = 1;
    for (; every < nx; every++) {
        int fits = 1;
        for (int k = every; k < nx && fits; k += every)
            fits = chart_map_x(l, l->xtick[k]) - w[k] / 2 >= chart_map_x(l, l->xtick[k - every]) + w[k - every] / 2 + 8;
        if (fits) break;
    }
    return every;
}

/* x tick labels (and the grey second lines under them) as text items: every `every`-th one, a
 * label's width being the wider of its two lines. */
static int xtick_texts(chart_layout *l, int *cap, const chart_spec *s, const draw_fonts *fonts, double xstep)
{
    int nx = l->n_xticks;
    if (nx == 0) return 0;
    double k_asc, k_desc, s_asc, s_desc;
    draw_vmetrics(fonts, TICK_PX, &k_asc, &k_desc);
    draw_vmetrics(fonts, SUB_PX, &s_asc, &s_desc);
    double *w = malloc(sizeof *w * (size_t)nx);
    char **lab = calloc((size_t)nx, sizeof *lab);
    int xdec = step_decimals(xstep > 0 ? xstep : 1), bad = !w || !lab;
    for (int k = 0; !bad && k < nx; k++) {
        lab[k] = s->n_xticks ? strdup(s->xtick_label[k] ? s->xtick_label[k] : "") : format_number(l->xtick[k], xdec);
        if (!lab[k]) { bad = 1; break; }
        w[k] = draw_text_width(fonts, lab[k], TICK_PX);
        const char *sub = s->n_xticks && s->xtick_sub ? s->xtick_sub[k] : NULL;
        if (sub) w[k] = fmax(w[k], draw_text_width(fonts, sub, SUB_PX));
    }
    int every = bad ? 1 : label_every(l, w, nx);
    double base = l->py1 + TICK_LEN + 4 + k_asc;
    for (int k = 0; !bad && k < nx; k += every) {
        double x = chart_map_x(l, l->xtick[k]);
        bad = add_text(l, cap, lab[k], x, base, TICK_PX, DRAW_CENTER, 0, INK, "x-tick");
        lab[k] = NULL; /* taken, or freed by add_text */
        const char *sub = s->n_xticks && s->xtick_sub ? s->xtick_sub[k] : NULL;
        if (!bad && sub && *sub)
            bad = add_text(l, cap, strdup(sub), x, base + k_desc + 2 + s_asc, SUB_PX, DRAW_CENTER, 0, SUB_INK,
                           "x-tick-sub");
    }
    for (int k = 0; lab && k < nx; k++) free(lab[k]);
    free(lab);
    free(w);
    return bad ? -1 : 0;
}

/* The plot area's edges: room above for the title, below for the tick labels (one or two lines)
 * and the x-axis label, left for the y-axis label and tick labels; the legend right of it, label_w
 * its widest label. */
static int place_frame(chart_layout *l, const chart_spec *s, const draw_fonts *fonts, double label_w, nmt_err *err)
{
    double t_asc, t_desc, l_asc, l_desc, k_asc, k_desc, s_asc, s_desc, g_asc, g_desc;
    draw_vmetrics(fonts, TITLE_PX, &t_asc, &t_desc);
    draw_vmetrics(fonts, LABEL_PX, &l_asc, &l_desc);
    draw_vmetrics(fonts, TICK_PX, &k_asc, &k_desc);
    draw_vmetrics(fonts, SUB_PX, &s_asc, &s_desc);
    draw_vmetrics(fonts, LEGEND_PX, &g_asc, &g_desc);
    int has_sub = 0;
    for (int k = 0; s->xtick_sub && k < s->n_xticks; k++) has_sub |= s->xtick_sub[k] && *s->xtick_sub[k];
    /* vertical: title, plot area, tick labels (one or two lines), x-axis label */
    double top = MARGIN + (s->title && *s->title ? t_asc + t_desc + 10 : k_asc / 2 + 4);
    double xlab_h = s->x_label && *s->x_label ? l_asc + l_desc + 8 : 0;
    double ticks_h = TICK_LEN + 4 + k_asc + k_desc + (has_sub ? 2 + s_asc + s_desc : 0);
    l->py0 = (int)ceil(top);
    /* the legend runs down from the plot's top: a default-sized image grows to hold it */
    l->legend_row = (int)ceil(fmax(g_asc + g_desc, 2 * MARKER_R + 4) + 6);
    l->legend_h = 2 * (LEGEND_PAD - 3) + s->nseries * l->legend_row;
    if (!s->height && l->py0 + l->legend_h + MARGIN > l->height) l->height = l->py0 + l->legend_h + MARGIN;
    if (l->height > CHART_MAX_SIDE)
        return nmt_fail(err, NMT_ERR_ARG, "chart: %d series make the legend too tall", s->nseries);
    l->py1 = (int)floor(l->height - MARGIN - xlab_h - ticks_h);
    /* horizontal: y-axis label, y tick labels, plot area, legend */
    double ytick_w = 0;
    int ydec = step_decimals(l->y_step);
    for (int k = 0; k < l->n_yticks; k++) {
        char *t = format_number(l->y_min + k * l->y_step, ydec);
        if (!t) return nmt_fail(err, NMT_ERR_NOMEM, "chart: out of memory");
        ytick_w = fmax(ytick_w, draw_text_width(fonts, t, TICK_PX));
        free(t);
    }
    double ylab_w = s->y_label && *s->y_label ? l_asc + l_desc + 8 : 0;
    l->px0 = (int)ceil(MARGIN + ylab_w + ytick_w + 4 + TICK_LEN);
    l->legend_w = (int)ceil(2 * LEGEND_PAD + LEGEND_SAMPLE + 8 + label_w);
    /* the gap to the legend also holds half of the last x tick label, which may sit at the
     * plot's right edge and below the legend's top */
    double gap = 14;
    if (s->n_xticks > 0) {
        int k = s->n_xticks - 1;
        double w = draw_text_width(fonts, s->xtick_label[k] ? s->xtick_label[k] : "", TICK_PX);
        if (s->xtick_sub && s->xtick_sub[k]) w = fmax(w, draw_text_width(fonts, s->xtick_sub[k], SUB_PX));
        gap = fmax(gap, w / 2 + 8);
    }
    l->px1 = (int)floor(l->width - MARGIN - l->legend_w - gap);
    l->legend_x = (int)ceil(l->px1 + gap);
    l->legend_y = l->py0;
    if (l->px1 - l->px0 < 80 || l->py1 - l->py0 < 60)
        return nmt_fail(err, NMT_ERR_ARG, "chart: %dx%d is too small for its labels and legend", l->width, l->height);
    return NMT_OK;
}

int chart_layout_make(chart_layout *out, const chart_spec *s, const draw_fonts *fonts, nmt_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_spec(s, err);
    if (rc) return rc;
    chart_layout *l = out;
    int cap = 0;
    l->width = s->width ? s->width : CHART_DEFAULT_WIDTH;
    l->height = s->height ? s->height : CHART_DEFAULT_HEIGHT;
    l->x_min = s->x_min;
    l->x_max = s->x_max;
    y_axis(l, s);
    double xstep, label_w;
    if (x_ticks(l, s, &xstep)) goto oom;
    char **legend = fit_legend(s, fonts, l->width * 0.28, &label_w);
    if (!legend) goto oom;
    if ((rc = place_frame(l, s, fonts, label_w, err))) {
        for (int k = 0; k < s->nseries; k++) free(legend[k]);
        free(legend);
        chart_layout_free(l);
        return rc;
    }
    /* text items: legend labels first (they take the fitted strings) */
    if (legend_texts(l, &cap, legend, s->nseries, fonts) || axis_texts(l, &cap, s, fonts) ||
        xtick_texts(l, &cap, s, fonts, xstep))
        goto oom;
    return NMT_OK;
oom:
    chart_layout_free(l);
    return nmt_fail(err, NMT_ERR_NOMEM, "chart: out of memory");
}


/* Does the line of series c break between points i-1 and i? */
static int breaks_before(const chart_spec *s, const chart_series *c, int i)
{
    return s->max_gap > 0 && fabs(c->x[i] - c->x[i - 1]) > s->max_gap;
}

int chart_series_runs(const chart_spec *s, int k)
{
    const chart_series *c = &s->series[k];
    int runs = c->n > 0;
    for (int i = 1; i < c->n; i++) runs += breaks_before(s, c, i);
    return runs;
}

/* ------------------------------------------------------------------ drawing */
/* A marker: its shape filled in the series' colour, outlined in white so that it stands apart
 * from the lines it sits on. */
static void draw_marker(cairo_t *cr, int shape, double cx, double cy, double r, uint32_t rgb)
{
    cairo_new_path(cr);
    if (shape == CHART_CIRCLE) {
        cairo_arc(cr, cx, cy, r, 0, 2 * M_PI);
    } else {
        double vx[32], vy[32];
        int n = marker_polygon(shape, cx, cy, r, vx, vy);
        for (int i = 0; i < n; i++) cairo_line_to(cr, vx[i], vy[i]);
        cairo_close_path(cr);
    }
    canvas_rgb(cr, rgb);
    cairo_fill_preserve(cr);
    canvas_rgb(cr, 0xffffff);
    cairo_set_line_width(cr, 1.2);
    cairo_stroke(cr);
}

/* A 1-pixel line between pixel centres: half-pixel offsets put it on whole pixels. */
static void hairline(cairo_t *cr, double x0, double y0, double x1, double y1, uint32_t rgb)
{
    cairo_move_to(cr, x0, y0);
    cairo_line_to(cr, x1, y1);
    canvas_rgb(cr, rgb);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
}

/* Grid lines at the ticks, the frame just outside the plot area, the ticks outside it. */
static void draw_axes(cairo_t *cr, const chart_layout *l)
{
    for (int k = 0; k < l->n_yticks; k++) {
        double y = floor(chart_map_y(l, l->y_min + k * l->y_step)) + 0.5;
        hairline(cr, l->px0, y, l->px1, y, GRID);
        hairline(cr, l->px0 - 1 - TICK_LEN, y, l->px0 - 1, y, FRAME);
    }
    for (int k = 0; k < l->n_xticks; k++) {
        double x = floor(chart_map_x(l, l->xtick[k])) + 0.5;
        hairline(cr, x, l->py0, x, l->py1, GRID);
        hairline(cr, x, l->py1 + 1, x, l->py1 + 1 + TICK_LEN, FRAME);
    }
    cairo_rectangle(cr, l->px0 - 0.5, l->py0 - 0.5, l->px1 - l->px0 + 1, l->py1 - l->py0 + 1);
    canvas_rgb(cr, FRAME);
    cairo_stroke(cr);
}

/* Every series' line, one stroke per run between breaks; then every marker on top. */
static void draw_series(cairo_t *cr, const chart_spec *s, const chart_layout *l)
{
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    for (int k = 0; k < s->nseries; k++) {
        const chart_series *c = &s->series[k];
        for (int i = 0; i < c->n; i++) {
            if (i > 0 && breaks_before(s, c, i)) cairo_new_sub_path(cr);
            cairo_line_to(cr, chart_map_x(l, c->x[i]), chart_map_y(l, c->y[i]));
        }
        canvas_rgb(cr, chart_color(k));
        cairo_set_line_width(cr, LINE_WIDTH);
        cairo_stroke(cr);
    }
    for (int k = 0; k < s->nseries; k++)
        for (int i = 0; i < s->series[k].n; i++)
            draw_marker(cr, chart_marker(k), chart_map_x(l, s->series[k].x[i]), chart_map_y(l, s->series[k].y[i]),
                        MARKER_R, chart_color(k));
}

/* The legend's box and, per series, a sample of its line with its marker (the labels are text
 * items of the layout). */
static void draw_legend(cairo_t *cr, const chart_spec *s, const chart_layout *l)
{
    cairo_rectangle(cr, l->legend_x + 0.5, l->legend_y + 0.5, l->legend_w, l->legend_h);
    canvas_rgb(cr, 0xffffff);
    cairo_fill_preserve(cr);
    canvas_rgb(cr, 0xbbbbbb);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    for (int k = 0; k < s->nseries; k++) {
        double cy = l->legend_y + (LEGEND_PAD - 3) + (k + 0.5) * l->legend_row, x0 = l->legend_x + LEGEND_PAD;
        cairo_move_to(cr, x0, cy);
        cairo_line_to(cr, x0 + LEGEND_SAMPLE, cy);
        canvas_rgb(cr, chart_color(k));
        cairo_set_line_width(cr, LINE_WIDTH);
        cairo_stroke(cr);
        draw_marker(cr, chart_marker(k), x0 + LEGEND_SAMPLE / 2.0, cy, MARKER_R, chart_color(k));
    }
}

int chart_write(const chart_spec *s, const draw_fonts *fonts, const char *path, nmt_err *err)
{
    chart_layout l;
    int rc = chart_layout_make(&l, s, fonts, err);
    if (rc) return rc;
    canvas *cv;
    if ((rc = canvas_open(&cv, path, l.width, l.height, fonts, s->title && *s->title ? s->title : NULL, err))) {
        chart_layout_free(&l);
        return rc;
    }
    cairo_t *cr = canvas_cairo(cv);
    draw_axes(cr, &l);
    draw_series(cr, s, &l);
    draw_legend(cr, s, &l);
    for (int i = 0; i < l.ntext; i++) {
        const chart_text *t = &l.text[i];
        canvas_text(cv, t->s, t->x, t->y, t->px, t->anchor, t->rotate, t->rgb, t->cls);
    }
    chart_layout_free(&l);
    return canvas_close(cv, err);
}
