/* chart.h: line charts (one polyline with markers per series, axes with ticks and labels, a
 * legend, a title) written as SVG, PNG or PDF, for Figure 2 of Bahdanau et al. (BLEU against
 * sentence length) and any other small x/y comparison of a few systems. */
#ifndef NMT_CHART_H
#define NMT_CHART_H

/* One layout (plot area, ticks, every text item with its position), measured with the fonts the
 * text is drawn in, is drawn once through cairo onto the surface of the file's format, so the
 * formats agree in geometry. Series k has colour chart_color(k)
 * and marker shape chart_marker(k): eight colours (Okabe-Ito, minus the pale yellow) and seven
 * shapes, so two series differ in colour or in shape up to 56 series. Nothing is printed; a file
 * that cannot be written whole is removed. */

#include <stddef.h>
#include <stdint.h>

#include "viz/draw.h"
#include "nmt.h"

#define CHART_DEFAULT_WIDTH 880
#define CHART_DEFAULT_HEIGHT 540
#define CHART_MAX_SIDE 8000

typedef struct chart_series {
    const char *label;            /* legend text (UTF-8) */
    int n;                        /* points, >= 0; a series with one point shows only its marker */
    const double *x, *y;          /* [n], finite, drawn joined in this order */
} chart_series;

typedef struct chart_spec {
    const char *title;            /* NULL or "": none */
    const char *x_label, *y_label;
    int nseries;                  /* >= 1 */
    const chart_series *series;
    double x_min, x_max;          /* the x range drawn; x_min < x_max */
    /* x ticks: positions in data units and their labels; n_xticks 0 = numbers chosen from the
     * range. xtick_sub (optional, may be NULL or hold NULLs) is a second, smaller grey line under
     * a label (e.g. a sample count). Labels that would collide are thinned to every k-th one. */
    int n_xticks;
    const double *xtick;
    const char *const *xtick_label;
    const char *const *xtick_sub;
    double y_min, y_max;          /* y_max <= y_min: from 0 (or below, for negative data) up to a
                                   * round number above the largest value */
    double max_gap;               /* > 0: a series' line breaks between points further apart in x
                                   * than this (no line drawn across missing data); 0: never */
    int width, height;            /* pixels; 0 = CHART_DEFAULT_* (a default height grows to hold
                                   * a long legend) */
} chart_spec;

/* One text item of the layout. (x, y) is the baseline point that `anchor` refers to; a rotated
 * item reads upwards and is centred on (x, y) along its baseline when anchor is DRAW_CENTER. */
typedef struct chart_text {
    char *s;
    double x, y, px;              /* px: font size, pixels per em */
    int anchor;                   /* enum draw_anchor */
    int rotate;                   /* 1: turned 90 degrees counter-clockwise */
    uint32_t rgb;                 /* 0xRRGGBB */
    const char *cls;              /* its part ("legend", "x-tick"), a class in the SVG */
} chart_text;

typedef struct chart_layout {
    int width, height;
    int px0, py0, px1, py1;       /* plot area: left, top, right, bottom pixel edges */
    double x_min, x_max, y_min, y_max;
    int n_yticks;                 /* y ticks at y_min + k * y_step, k < n_yticks */
    double y_step;
    int n_xticks;                 /* x ticks (all drawn; only some labelled) */
    double *xtick;                /* [n_xticks] data units */
    int legend_x, legend_y, legend_w, legend_h, legend_row; /* box and row height */
    int ntext;
    chart_text *text;             /* every text item: title, axis labels, tick labels, legend */
} chart_layout;

enum chart_marker_shape { CHART_CIRCLE, CHART_SQUARE, CHART_TRIANGLE, CHART_DIAMOND,
                          CHART_TRIANGLE_DOWN, CHART_PENTAGON, CHART_STAR, CHART_NSHAPES };

uint32_t chart_color(int k);      /* 0xRRGGBB of series k */
int chart_marker(int k);          /* enum chart_marker_shape of series k */

/* Checks the spec (NMT_ERR_ARG naming the problem) and computes the layout. */
int chart_layout_make(chart_layout *out, const chart_spec *s, const draw_fonts *fonts, nmt_err *err);
void chart_layout_free(chart_layout *l);
/* Data coordinates to pixel coordinates (y grows downwards). */
double chart_map_x(const chart_layout *l, double x);
double chart_map_y(const chart_layout *l, double y);

/* The pieces a series' line falls into: 1 + the number of gaps wider than max_gap (0 for no
 * point); each piece is drawn as one stroke. */
int chart_series_runs(const chart_spec *s, int k);

/* Writes the chart to path as SVG, PNG (8-bit RGB) or PDF, by the name's extension (draw.h):
 * grid, frame and ticks, each series' line runs, then every marker (no line hides a marker),
 * the legend, the text. path is replaced whole: on any error an existing one is left as it was. */
int chart_write(const chart_spec *s, const draw_fonts *fonts, const char *path, nmt_err *err);

#endif
