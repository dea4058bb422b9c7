/* chart.c: line charts as SVG and PNG (chart.h): one layout, printed as SVG elements or
 * rasterised into an RGB canvas (area-coverage rectangles, distance-based anti-aliased lines,
 * supersampled marker polygons, text through font.h as a coverage mask) for libpng. */
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/chart.h"
#include "base/err.h"
#include "text/unicode.h"

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
static double text_width(const font_set *fonts, const char *s, double px)
{
    if (fonts) return font_text_width(fonts, s, px);
    /* no font: 0.6 em a character is a little wider than DejaVu Sans' average, so an SVG
     * viewer's own font fits in the room left for it */
    size_t n = strlen(s), cps = 0;
    for (size_t i = 0; i < n; i++) cps += ((unsigned char)s[i] & 0xc0) != 0x80;
    return (double)cps * 0.6 * px;
}

static void vmetrics(const font_set *fonts, double px, double *asc, double *desc)
{
    if (fonts) {
        font_vmetrics(fonts, px, asc, desc);
    } else { /* DejaVu Sans' proportions */
        *asc = 0.93 * px;
        *desc = 0.24 * px;
    }
}

/* s cut (at a code point boundary) and ended with an ellipsis so that it is at most max_w
 * pixels wide; a malloc'ed copy, NULL for lack of memory. */
static char *fit_text(const font_set *fonts, const char *s, double px, double max_w)
{
    size_t n = strlen(s);
    char *out = malloc(n + sizeof ELLIPSIS);
    if (!out) return NULL;
    memcpy(out, s, n + 1);
    if (text_width(fonts, out, px) <= max_w) return out;
    size_t keep = n;
    while (keep > 0) {
        /* step back one code point */
        do keep--; while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80);
        memcpy(out + keep, ELLIPSIS, sizeof ELLIPSIS);
        if (text_width(fonts, out, px) <= max_w) break;
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
                    int rotate, uint32_t rgb)
{
    if (!s) return -1;
    if (l->ntext == *cap) {
        int nc = *cap ? 2 * *cap : 32;
        chart_text *nt = realloc(l->text, sizeof *nt * (size_t)nc);
        if (!nt) { free(s); return -1; }
        l->text = nt;
        *cap = nc;
    }
    l->text[l->ntext++] = (chart_text){s, x, y, px, anchor, rotate, rgb};
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

int chart_layout_make(chart_layout *out, const chart_spec *s, const font_set *fonts, nmt_err *err)
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
    int ydec = step_decimals(l->y_step);

    /* x ticks: the caller's, or round numbers over the range */
    int nx = s->n_xticks;
    double xstep = 0;
    if (nx == 0) {
        xstep = nice_step(s->x_max - s->x_min, 10);
        double first = ceil(s->x_min / xstep - 1e-9) * xstep;
        nx = (int)floor((s->x_max - first) / xstep + 1e-9) + 1;
        if (nx < 0) nx = 0;
        l->xtick = malloc(sizeof *l->xtick * (size_t)(nx ? nx : 1));
        if (!l->xtick) goto oom;
        for (int k = 0; k < nx; k++) l->xtick[k] = first + k * xstep;
    } else {
        l->xtick = malloc(sizeof *l->xtick * (size_t)nx);
        if (!l->xtick) goto oom;
        memcpy(l->xtick, s->xtick, sizeof *l->xtick * (size_t)nx);
    }
    l->n_xticks = nx;

    double t_asc, t_desc, l_asc, l_desc, k_asc, k_desc, s_asc, s_desc, g_asc, g_desc;
    vmetrics(fonts, TITLE_PX, &t_asc, &t_desc);
    vmetrics(fonts, LABEL_PX, &l_asc, &l_desc);
    vmetrics(fonts, TICK_PX, &k_asc, &k_desc);
    vmetrics(fonts, SUB_PX, &s_asc, &s_desc);
    vmetrics(fonts, LEGEND_PX, &g_asc, &g_desc);
    int has_title = s->title && *s->title, has_sub = 0;
    for (int k = 0; s->xtick_sub && k < s->n_xticks; k++) has_sub |= s->xtick_sub[k] && *s->xtick_sub[k];

    /* vertical: title, plot area, tick labels (one or two lines), x-axis label */
    double top = MARGIN + (has_title ? t_asc + t_desc + 10 : k_asc / 2 + 4);
    double xlab_h = s->x_label && *s->x_label ? l_asc + l_desc + 8 : 0;
    double ticks_h = TICK_LEN + 4 + k_asc + k_desc + (has_sub ? 2 + s_asc + s_desc : 0);
    l->py0 = (int)ceil(top);
    /* the legend runs down from the plot's top: a default-sized image grows to hold it */
    l->legend_row = (int)ceil(fmax(g_asc + g_desc, 2 * MARKER_R + 4) + 6);
    l->legend_h = 2 * (LEGEND_PAD - 3) + s->nseries * l->legend_row;
    if (!s->height && l->py0 + l->legend_h + MARGIN > l->height) l->height = l->py0 + l->legend_h + MARGIN;
    if (l->height > CHART_MAX_SIDE) {
        chart_layout_free(l);
        return nmt_fail(err, NMT_ERR_ARG, "chart: %d series make the legend too tall", s->nseries);
    }
    l->py1 = (int)floor(l->height - MARGIN - xlab_h - ticks_h);

    /* horizontal: y-axis label, y tick labels, plot area, legend */
    double ytick_w = 0;
    for (int k = 0; k < l->n_yticks; k++) {
        char *t = format_number(l->y_min + k * l->y_step, ydec);
        if (!t) goto oom;
        double w = text_width(fonts, t, TICK_PX);
        if (w > ytick_w) ytick_w = w;
        free(t);
    }
    double ylab_w = s->y_label && *s->y_label ? l_asc + l_desc + 8 : 0;
    l->px0 = (int)ceil(MARGIN + ylab_w + ytick_w + 4 + TICK_LEN);
    double max_label = l->width * 0.28, label_w = 0;
    char **legend = calloc((size_t)s->nseries, sizeof *legend);
    if (!legend) goto oom;
    for (int k = 0; k < s->nseries; k++) {
        legend[k] = fit_text(fonts, s->series[k].label ? s->series[k].label : "", LEGEND_PX, max_label);
        if (!legend[k]) {
            for (int j = 0; j < k; j++) free(legend[j]);
            free(legend);
            goto oom;
        }
        double w = text_width(fonts, legend[k], LEGEND_PX);
        if (w > label_w) label_w = w;
    }
    l->legend_w = (int)ceil(2 * LEGEND_PAD + LEGEND_SAMPLE + 8 + label_w);
    /* the gap to the legend also holds half of the last x tick label, which may sit at the
     * plot's right edge and below the legend's top */
    double gap = 14;
    if (s->n_xticks > 0) {
        int k = s->n_xticks - 1;
        double w = text_width(fonts, s->xtick_label[k] ? s->xtick_label[k] : "", TICK_PX);
        if (s->xtick_sub && s->xtick_sub[k]) w = fmax(w, text_width(fonts, s->xtick_sub[k], SUB_PX));
        gap = fmax(gap, w / 2 + 8);
    }
    l->px1 = (int)floor(l->width - MARGIN - l->legend_w - gap);
    l->legend_x = (int)ceil(l->px1 + gap);
    l->legend_y = l->py0;
    if (l->px1 - l->px0 < 80 || l->py1 - l->py0 < 60) {
        for (int k = 0; k < s->nseries; k++) free(legend[k]);
        free(legend);
        chart_layout_free(l);
        return nmt_fail(err, NMT_ERR_ARG, "chart: %dx%d is too small for its labels and legend",
                        l->width, l->height);
    }

    /* text items: legend labels first (they own the fitted strings) */
    for (int k = 0; k < s->nseries; k++) {
        double cy = l->legend_y + (LEGEND_PAD - 3) + (k + 0.5) * l->legend_row;
        double x = l->legend_x + LEGEND_PAD + LEGEND_SAMPLE + 8;
        if (add_text(l, &cap, legend[k], x, cy + (g_asc - g_desc) / 2, LEGEND_PX, CHART_LEFT, 0, INK)) {
            for (int j = k + 1; j < s->nseries; j++) free(legend[j]);
            free(legend);
            goto oom;
        }
    }
    free(legend);
    if (has_title) {
        double w = text_width(fonts, s->title, TITLE_PX), cx = (l->px0 + l->px1) / 2.0;
        if (cx - w / 2 < MARGIN) cx = MARGIN + w / 2;
        if (add_text(l, &cap, strdup(s->title), cx, MARGIN + t_asc, TITLE_PX, CHART_CENTER, 0, INK)) goto oom;
    }
    if (s->x_label && *s->x_label &&
        add_text(l, &cap, strdup(s->x_label), (l->px0 + l->px1) / 2.0, l->height - MARGIN - l_desc, LABEL_PX,
                 CHART_CENTER, 0, INK))
        goto oom;
    if (s->y_label && *s->y_label &&
        add_text(l, &cap, strdup(s->y_label), MARGIN + l_asc, (l->py0 + l->py1) / 2.0, LABEL_PX, CHART_CENTER, 1,
                 INK))
        goto oom;
    for (int k = 0; k < l->n_yticks; k++) {
        double y = chart_map_y(l, l->y_min + k * l->y_step);
        if (add_text(l, &cap, format_number(l->y_min + k * l->y_step, ydec), l->px0 - TICK_LEN - 4,
                     y + (k_asc - k_desc) / 2, TICK_PX, CHART_RIGHT, 0, INK))
            goto oom;
    }
    /* x tick labels: every `every`-th one, the smallest step at which neighbours keep 8 pixels
     * apart (a label's width is the wider of its two lines) */
    if (nx > 0) {
        double *w = malloc(sizeof *w * (size_t)nx);
        char **lab = calloc((size_t)nx, sizeof *lab);
        int xdec = step_decimals(xstep > 0 ? xstep : 1), bad = !w || !lab;
        for (int k = 0; !bad && k < nx; k++) {
            lab[k] = s->n_xticks ? strdup(s->xtick_label[k] ? s->xtick_label[k] : "")
                                 : format_number(l->xtick[k], xdec);
            if (!lab[k]) { bad = 1; break; }
            w[k] = text_width(fonts, lab[k], TICK_PX);
            const char *sub = s->n_xticks && s->xtick_sub ? s->xtick_sub[k] : NULL;
            if (sub && text_width(fonts, sub, SUB_PX) > w[k]) w[k] = text_width(fonts, sub, SUB_PX);
        }
        int every = 1;
        for (; !bad && every < nx; every++) {
            int fits = 1;
            for (int k = every; k < nx && fits; k += every)
                fits = chart_map_x(l, l->xtick[k]) - w[k] / 2 >=
                       chart_map_x(l, l->xtick[k - every]) + w[k - every] / 2 + 8;
            if (fits) break;
        }
        double base = l->py1 + TICK_LEN + 4 + k_asc;
        for (int k = 0; !bad && k < nx; k++) {
            if (k % every) continue;
            double x = chart_map_x(l, l->xtick[k]);
            if (add_text(l, &cap, lab[k], x, base, TICK_PX, CHART_CENTER, 0, INK)) { lab[k] = NULL; bad = 1; break; }
            lab[k] = NULL;
            const char *sub = s->n_xticks && s->xtick_sub ? s->xtick_sub[k] : NULL;
            if (sub && *sub &&
                add_text(l, &cap, strdup(sub), x, base + k_desc + 2 + s_asc, SUB_PX, CHART_CENTER, 0, SUB_INK))
                bad = 1;
        }
        for (int k = 0; lab && k < nx; k++) free(lab[k]);
        free(lab);
        free(w);
        if (bad) goto oom;
    }
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

/* ------------------------------------------------------------------ SVG */
/* XML character data: the five special characters as entities; controls other than tab, and
 * invalid UTF-8, as U+FFFD, which XML 1.0 cannot carry otherwise. */
static void xml_put(FILE *f, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = utf8_decode(s + i, n - i, &cp);
        if (k < 0) { fputs("\xEF\xBF\xBD", f); i++; continue; }
        switch (cp) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if ((cp < 0x20 && cp != '\t') || cp == 0x7f || cp == 0xfffe || cp == 0xffff) fputs("\xEF\xBF\xBD", f);
            else fwrite(s + i, 1, (size_t)k, f);
        }
        i += (size_t)k;
    }
}

static void svg_marker(FILE *f, int shape, double cx, double cy, double r, const char *cls)
{
    if (shape == CHART_CIRCLE) {
        fprintf(f, "<circle class=\"%s\" cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\"/>\n", cls, cx, cy, r);
        return;
    }
    double vx[32], vy[32];
    int n = marker_polygon(shape, cx, cy, r, vx, vy);
    fprintf(f, "<polygon class=\"%s\" points=\"", cls);
    for (int i = 0; i < n; i++) fprintf(f, "%s%.2f,%.2f", i ? " " : "", vx[i], vy[i]);
    fputs("\"/>\n", f);
}

int chart_svg_write(const chart_spec *s, const font_set *fonts, const char *path, nmt_err *err)
{
    chart_layout l;
    int rc = chart_layout_make(&l, s, fonts, err);
    if (rc) return rc;
    FILE *f = fopen(path, "wb");
    if (!f) {
        rc = nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
        chart_layout_free(&l);
        return rc;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\">\n",
            l.width, l.height, l.width, l.height);
    if (s->title && *s->title) {
        fputs("<title>", f);
        xml_put(f, s->title);
        fputs("</title>\n", f);
    }
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", l.width, l.height);
    /* grid, frame and ticks; half-pixel offsets put 1-pixel lines on whole pixels */
    fprintf(f, "<g class=\"grid\" stroke=\"#%06x\" stroke-width=\"1\">\n", GRID);
    for (int k = 0; k < l.n_yticks; k++) {
        double y = floor(chart_map_y(&l, l.y_min + k * l.y_step)) + 0.5;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", l.px0, y, l.px1, y);
    }
    for (int k = 0; k < l.n_xticks; k++) {
        double x = floor(chart_map_x(&l, l.xtick[k])) + 0.5;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", x, l.py0, x, l.py1);
    }
    fputs("</g>\n", f);
    fprintf(f, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"none\" "
               "stroke=\"#%06x\" stroke-width=\"1\"/>\n",
            l.px0 - 0.5, l.py0 - 0.5, l.px1 - l.px0 + 1, l.py1 - l.py0 + 1, FRAME);
    fprintf(f, "<g class=\"ticks\" stroke=\"#%06x\" stroke-width=\"1\">\n", FRAME);
    for (int k = 0; k < l.n_yticks; k++) {
        double y = floor(chart_map_y(&l, l.y_min + k * l.y_step)) + 0.5;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", l.px0 - TICK_LEN, y, l.px0, y);
    }
    for (int k = 0; k < l.n_xticks; k++) {
        double x = floor(chart_map_x(&l, l.xtick[k])) + 0.5;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", x, l.py1 + 1, x, l.py1 + 1 + TICK_LEN);
    }
    fputs("</g>\n", f);
    /* series: every line first, then every marker, so that no line hides a marker */
    for (int k = 0; k < s->nseries; k++) {
        const chart_series *c = &s->series[k];
        fprintf(f, "<g class=\"series\" fill=\"none\" stroke=\"#%06x\" stroke-width=\"%.2f\" "
                   "stroke-linejoin=\"round\" stroke-linecap=\"round\">\n",
                chart_color(k), LINE_WIDTH);
        for (int i = 0; i < c->n; i++) {
            int first = i == 0 || breaks_before(s, c, i);
            if (first) fprintf(f, "%s<polyline class=\"line\" points=\"", i ? "\"/>\n" : "");
            fprintf(f, "%s%.2f,%.2f", first ? "" : " ", chart_map_x(&l, c->x[i]), chart_map_y(&l, c->y[i]));
        }
        fputs(c->n ? "\"/>\n</g>\n" : "</g>\n", f);
    }
    for (int k = 0; k < s->nseries; k++) {
        const chart_series *c = &s->series[k];
        fprintf(f, "<g class=\"markers\" fill=\"#%06x\" stroke=\"#ffffff\" stroke-width=\"1.2\">\n", chart_color(k));
        for (int i = 0; i < c->n; i++)
            svg_marker(f, chart_marker(k), chart_map_x(&l, c->x[i]), chart_map_y(&l, c->y[i]), MARKER_R, "marker");
        fputs("</g>\n", f);
    }
    /* legend box and samples */
    fprintf(f, "<g class=\"legend\">\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#ffffff\" "
               "stroke=\"#bbbbbb\" stroke-width=\"1\"/>\n",
            l.legend_x + 0.5, l.legend_y + 0.5, l.legend_w, l.legend_h);
    for (int k = 0; k < s->nseries; k++) {
        double cy = l.legend_y + (LEGEND_PAD - 3) + (k + 0.5) * l.legend_row, x0 = l.legend_x + LEGEND_PAD;
        fprintf(f, "<line class=\"legend-line\" x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" stroke=\"#%06x\" "
                   "stroke-width=\"%.2f\" stroke-linecap=\"round\"/>\n",
                x0, cy, x0 + LEGEND_SAMPLE, cy, chart_color(k), LINE_WIDTH);
        fprintf(f, "<g fill=\"#%06x\" stroke=\"#ffffff\" stroke-width=\"1.2\">\n", chart_color(k));
        svg_marker(f, chart_marker(k), x0 + LEGEND_SAMPLE / 2.0, cy, MARKER_R, "legend-marker");
        fputs("</g>\n", f);
    }
    fputs("</g>\n", f);
    /* text */
    for (int i = 0; i < l.ntext; i++) {
        const chart_text *t = &l.text[i];
        static const char *anchors[] = {"start", "middle", "end"};
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" fill=\"#%06x\" text-anchor=\"%s\"", t->x, t->y,
                t->px, t->rgb, anchors[t->anchor]);
        if (t->rotate) fprintf(f, " transform=\"rotate(-90 %.2f %.2f)\"", t->x, t->y);
        fputc('>', f);
        xml_put(f, t->s);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad) {
        rc = nmt_fail(err, NMT_ERR_IO, "%s: write error", path);
        remove(path);
    }
    chart_layout_free(&l);
    return rc;
}

/* ------------------------------------------------------------------ PNG rasteriser */
typedef struct canvas {
    uint8_t *p;
    int w, h;
} canvas;

/* Paints colour rgb over pixel (x, y) with opacity a in [0, 1]. */
static void blend(canvas *c, int x, int y, uint32_t rgb, double a)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h || !(a > 0)) return;
    if (a > 1) a = 1;
    uint8_t *q = c->p + 3 * ((size_t)y * (size_t)c->w + (size_t)x);
    uint8_t col[3] = {(uint8_t)(rgb >> 16), (uint8_t)(rgb >> 8), (uint8_t)rgb};
    for (int i = 0; i < 3; i++) q[i] = (uint8_t)lrint(q[i] + (col[i] - q[i]) * a);
}

/* An axis-aligned rectangle, each pixel covered by the share of its area inside it. */
static void fill_rect(canvas *c, double x0, double y0, double x1, double y1, uint32_t rgb)
{
    int ix0 = (int)floor(x0), ix1 = (int)ceil(x1), iy0 = (int)floor(y0), iy1 = (int)ceil(y1);
    for (int y = iy0; y < iy1; y++) {
        double cy = fmin(y + 1, y1) - fmax(y, y0);
        for (int x = ix0; x < ix1; x++) blend(c, x, y, rgb, cy * (fmin(x + 1, x1) - fmax(x, x0)));
    }
}

static double seg_dist(double px, double py, double ax, double ay, double bx, double by)
{
    double dx = bx - ax, dy = by - ay, len2 = dx * dx + dy * dy, t = 0;
    if (len2 > 0) t = fmax(0, fmin(1, ((px - ax) * dx + (py - ay) * dy) / len2));
    double ex = ax + t * dx - px, ey = ay + t * dy - py;
    return sqrt(ex * ex + ey * ey);
}

/* A polyline of width 2*hw with round joins and caps: each pixel's coverage comes from its
 * centre's distance to the nearest segment, taken over the whole line at once so that joins are
 * not painted twice. */
static void draw_polyline(canvas *c, const double *xs, const double *ys, int n, double hw, uint32_t rgb)
{
    if (n < 2) return;
    double x0 = xs[0], x1 = xs[0], y0 = ys[0], y1 = ys[0];
    for (int i = 1; i < n; i++) {
        x0 = fmin(x0, xs[i]); x1 = fmax(x1, xs[i]);
        y0 = fmin(y0, ys[i]); y1 = fmax(y1, ys[i]);
    }
    int bx0 = (int)floor(x0 - hw - 1), bx1 = (int)ceil(x1 + hw + 1);
    int by0 = (int)floor(y0 - hw - 1), by1 = (int)ceil(y1 + hw + 1);
    if (bx0 < 0) bx0 = 0;
    if (by0 < 0) by0 = 0;
    if (bx1 > c->w) bx1 = c->w;
    if (by1 > c->h) by1 = c->h;
    for (int y = by0; y < by1; y++)
        for (int x = bx0; x < bx1; x++) {
            double d = INFINITY;
            for (int i = 0; i + 1 < n; i++) {
                /* skip segments whose box is out of reach */
                double lx = fmin(xs[i], xs[i + 1]) - hw - 1, hx = fmax(xs[i], xs[i + 1]) + hw + 1;
                double ly = fmin(ys[i], ys[i + 1]) - hw - 1, hy = fmax(ys[i], ys[i + 1]) + hw + 1;
                if (x + 0.5 < lx || x + 0.5 > hx || y + 0.5 < ly || y + 0.5 > hy) continue;
                d = fmin(d, seg_dist(x + 0.5, y + 0.5, xs[i], ys[i], xs[i + 1], ys[i + 1]));
            }
            blend(c, x, y, rgb, hw + 0.5 - d);
        }
}

/* A filled polygon (even-odd rule), coverage from 4x4 samples per pixel. */
static void fill_polygon(canvas *c, const double *vx, const double *vy, int n, uint32_t rgb)
{
    double x0 = vx[0], x1 = vx[0], y0 = vy[0], y1 = vy[0];
    for (int i = 1; i < n; i++) {
        x0 = fmin(x0, vx[i]); x1 = fmax(x1, vx[i]);
        y0 = fmin(y0, vy[i]); y1 = fmax(y1, vy[i]);
    }
    for (int y = (int)floor(y0); y < (int)ceil(y1); y++)
        for (int x = (int)floor(x0); x < (int)ceil(x1); x++) {
            int inside = 0;
            for (int sy = 0; sy < 4; sy++)
                for (int sx = 0; sx < 4; sx++) {
                    double px = x + (sx + 0.5) / 4, py = y + (sy + 0.5) / 4;
                    int in = 0;
                    for (int i = 0, j = n - 1; i < n; j = i++)
                        if ((vy[i] > py) != (vy[j] > py) &&
                            px < vx[j] + (py - vy[j]) * (vx[i] - vx[j]) / (vy[i] - vy[j]))
                            in = !in;
                    inside += in;
                }
            blend(c, x, y, rgb, inside / 16.0);
        }
}

/* A marker in its colour over a slightly larger white one, which keeps it apart from lines. */
static void draw_marker(canvas *c, int shape, double cx, double cy, double r, uint32_t rgb)
{
    double vx[32], vy[32];
    int n = marker_polygon(shape, cx, cy, r + 1.2, vx, vy);
    fill_polygon(c, vx, vy, n, 0xffffff);
    n = marker_polygon(shape, cx, cy, r, vx, vy);
    fill_polygon(c, vx, vy, n, rgb);
}

/* Text: drawn as coverage into a grey mask (0 everywhere else), then painted in its colour
 * through that mask over a box that surely holds it, and the box cleared for the next item. */
static int draw_text(canvas *c, uint8_t *mask, const font_set *fonts, const chart_text *t, nmt_err *err)
{
    double w = font_text_width(fonts, t->s, t->px);
    double shift = t->anchor == CHART_CENTER ? w / 2 : t->anchor == CHART_RIGHT ? w : 0;
    double x = t->x, y = t->y;
    if (t->rotate) y += shift;
    else x -= shift;
    int rc = font_draw_text(fonts, mask, c->w, c->h, x, y, t->s, t->px, t->rotate, 255, err);
    if (rc) return rc;
    /* the box: the advance along the baseline, 1.5 em above it and 0.6 em below (accents,
     * descenders and overhangs all fit), plus two pixels all round */
    double a0, a1, b0, b1;
    if (t->rotate) { a0 = x - 1.5 * t->px; a1 = x + 0.6 * t->px; b0 = y - w; b1 = y; }
    else { a0 = x; a1 = x + w; b0 = y - 1.5 * t->px; b1 = y + 0.6 * t->px; }
    int x0 = (int)floor(a0) - 2, x1 = (int)ceil(a1) + 2, y0 = (int)floor(b0) - 2, y1 = (int)ceil(b1) + 2;
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > c->w) x1 = c->w;
    if (y1 > c->h) y1 = c->h;
    for (int yy = y0; yy < y1; yy++)
        for (int xx = x0; xx < x1; xx++) {
            uint8_t *m = mask + (size_t)yy * (size_t)c->w + (size_t)xx;
            if (*m) blend(c, xx, yy, t->rgb, *m / 255.0);
            *m = 0;
        }
    return NMT_OK;
}

int chart_render(const chart_spec *s, const font_set *fonts, uint8_t **rgb, chart_layout *layout, nmt_err *err)
{
    *rgb = NULL;
    int rc = chart_layout_make(layout, s, fonts, err);
    if (rc) return rc;
    const chart_layout *l = layout;
    size_t npix = (size_t)l->width * (size_t)l->height;
    canvas c = {malloc(3 * npix), l->width, l->height};
    uint8_t *mask = fonts ? calloc(npix, 1) : NULL;
    double *xs = NULL, *ys = NULL;
    int maxn = 0;
    for (int k = 0; k < s->nseries; k++) if (s->series[k].n > maxn) maxn = s->series[k].n;
    xs = malloc(sizeof *xs * (size_t)(maxn ? maxn : 1));
    ys = malloc(sizeof *ys * (size_t)(maxn ? maxn : 1));
    if (!c.p || (fonts && !mask) || !xs || !ys) {
        rc = nmt_fail(err, NMT_ERR_NOMEM, "chart: out of memory for a %dx%d image", l->width, l->height);
        goto done;
    }
    memset(c.p, 255, 3 * npix);
    for (int k = 0; k < l->n_yticks; k++) {
        double y = floor(chart_map_y(l, l->y_min + k * l->y_step));
        fill_rect(&c, l->px0, y, l->px1, y + 1, GRID);
    }
    for (int k = 0; k < l->n_xticks; k++) {
        double x = floor(chart_map_x(l, l->xtick[k]));
        fill_rect(&c, x, l->py0, x + 1, l->py1, GRID);
    }
    /* frame: one pixel just outside the plot area on every side */
    fill_rect(&c, l->px0 - 1, l->py0 - 1, l->px1 + 1, l->py0, FRAME);
    fill_rect(&c, l->px0 - 1, l->py1, l->px1 + 1, l->py1 + 1, FRAME);
    fill_rect(&c, l->px0 - 1, l->py0 - 1, l->px0, l->py1 + 1, FRAME);
    fill_rect(&c, l->px1, l->py0 - 1, l->px1 + 1, l->py1 + 1, FRAME);
    for (int k = 0; k < l->n_yticks; k++) {
        double y = floor(chart_map_y(l, l->y_min + k * l->y_step));
        fill_rect(&c, l->px0 - 1 - TICK_LEN, y, l->px0 - 1, y + 1, FRAME);
    }
    for (int k = 0; k < l->n_xticks; k++) {
        double x = floor(chart_map_x(l, l->xtick[k]));
        fill_rect(&c, x, l->py1 + 1, x + 1, l->py1 + 1 + TICK_LEN, FRAME);
    }
    for (int k = 0; k < s->nseries; k++) {
        const chart_series *cs = &s->series[k];
        for (int i = 0; i < cs->n; i++) {
            xs[i] = chart_map_x(l, cs->x[i]);
            ys[i] = chart_map_y(l, cs->y[i]);
        }
        /* one polyline per run between breaks */
        for (int i0 = 0, i = 1; i <= cs->n && cs->n > 0; i++)
            if (i == cs->n || breaks_before(s, cs, i)) {
                draw_polyline(&c, xs + i0, ys + i0, i - i0, LINE_WIDTH / 2, chart_color(k));
                i0 = i;
            }
    }
    for (int k = 0; k < s->nseries; k++) {
        const chart_series *cs = &s->series[k];
        for (int i = 0; i < cs->n; i++)
            draw_marker(&c, chart_marker(k), chart_map_x(l, cs->x[i]), chart_map_y(l, cs->y[i]), MARKER_R,
                        chart_color(k));
    }
    /* legend: a white box with a grey border, then each series' sample line and marker */
    fill_rect(&c, l->legend_x, l->legend_y, l->legend_x + l->legend_w + 1, l->legend_y + l->legend_h + 1, 0xbbbbbb);
    fill_rect(&c, l->legend_x + 1, l->legend_y + 1, l->legend_x + l->legend_w, l->legend_y + l->legend_h, 0xffffff);
    for (int k = 0; k < s->nseries; k++) {
        double cy = l->legend_y + (LEGEND_PAD - 3) + (k + 0.5) * l->legend_row + 0.5, x0 = l->legend_x + LEGEND_PAD + 0.5;
        double lx[2] = {x0, x0 + LEGEND_SAMPLE}, ly[2] = {cy, cy};
        draw_polyline(&c, lx, ly, 2, LINE_WIDTH / 2, chart_color(k));
        draw_marker(&c, chart_marker(k), x0 + LEGEND_SAMPLE / 2.0, cy, MARKER_R, chart_color(k));
    }
    for (int i = 0; fonts && i < l->ntext; i++)
        if ((rc = draw_text(&c, mask, fonts, &l->text[i], err))) goto done;
done:
    free(mask);
    free(xs);
    free(ys);
    if (rc) {
        free(c.p);
        chart_layout_free(layout);
        return rc;
    }
    *rgb = c.p;
    return NMT_OK;
}

int chart_png_write(const chart_spec *s, const font_set *fonts, const char *path, nmt_err *err)
{
    if (!fonts) return nmt_fail(err, NMT_ERR_ARG, "%s: a PNG chart needs a font for its text", path);
    uint8_t *p;
    chart_layout l;
    int rc = chart_render(s, fonts, &p, &l, err);
    if (rc) return rc;
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)l.width;
    img.height = (png_uint_32)l.height;
    img.format = PNG_FORMAT_RGB;
    if (!png_image_write_to_file(&img, path, 0, p, 3 * l.width, NULL)) {
        rc = nmt_fail(err, NMT_ERR_IO, "%s: %s", path, img.message[0] ? img.message : "cannot write the PNG");
        remove(path);
    }
    png_image_free(&img);
    free(p);
    chart_layout_free(&l);
    return rc;
}
