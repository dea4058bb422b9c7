/* plot.h: attention matrices drawn as grey-scale heat maps like Figure 3 of Bahdanau et al. 2014
 * (weight 0 black, 1 white; one cell per target word x source word, source words along the top
 * turned to read upwards, target words down the left), written as SVG, PNG or PDF.
 *
 * One layout (cell size, label size, margins), measured with the fonts the labels are drawn in,
 * is drawn once through cairo onto the surface of the file's format, so the three files agree in
 * geometry. A word too long for the margin is shortened with an ellipsis, and cells are never
 * smaller than a label's line height, so labels never overlap. Nothing is printed; files are
 * written whole or removed. */
#ifndef NMT_PLOT_H
#define NMT_PLOT_H

#include <stddef.h>
#include <stdint.h>

#include "viz/draw.h"
#include "nmt.h"

/* Bounds of plot_spec.cell (pixels). A label's line is at most 0.75 of a cell, so at 8 pixels
 * a cell still holds its label. */
#define PLOT_MIN_CELL 8
#define PLOT_MAX_CELL 200

typedef struct plot_spec {
    int rows, cols;                /* target words (y axis), source words (x axis); both >= 1 */
    const char *const *row_words;  /* rows UTF-8 labels */
    const char *const *col_words;  /* cols UTF-8 labels */
    const float *weight;           /* weight of (row r, column c) at weight[r * stride + c], in [0, 1] */
    int stride;                    /* >= cols */
    const char *title;             /* a line above the plot; NULL or "" for none */
    int cell;                      /* cell side in pixels; 0 = chosen from the matrix size */
} plot_spec;

typedef struct plot_layout {
    int rows, cols;                /* as in the spec */
    int width, height;             /* the image, pixels */
    int cell;                      /* side of a cell */
    int x0, y0;                    /* top-left pixel of cell (0, 0); cell (r, c) starts at
                                    * (x0 + c * cell, y0 + r * cell) */
    int margin, gap;               /* around the image; between the matrix and its labels */
    double font_px, title_px;      /* label and title sizes, pixels per em */
    double ascent, descent;        /* of the label font at font_px */
    double title_ascent;
    char **row_text, **col_text;   /* the labels as drawn (shortened when too long) */
    char *title_text;              /* NULL when there is no title */
    double *row_w, *col_w;         /* their widths in pixels */
} plot_layout;

/* Checks s and computes its layout with the fonts' measures. */
int plot_layout_make(plot_layout *out, const plot_spec *s, const draw_fonts *fonts, nmt_err *err);
void plot_layout_free(plot_layout *l);

/* The grey level of a weight: 0 -> 0 (black), 1 -> 255 (white), clamped into [0, 1]. */
uint8_t plot_grey(float w);

/* Writes the plot to path as SVG, PNG (8-bit RGB) or PDF, by the name's extension (draw.h),
 * replacing it whole: on any error an existing path is left as it was. */
int plot_write(const plot_spec *s, const draw_fonts *fonts, const char *path, nmt_err *err);

/* Splits a tokenized sentence into its words as the model reads them (separated by spaces, tabs,
 * CR or LF). *words (free it) points into *buf (free it too), a copy of s. Returns the number of
 * words, or -1 for lack of memory. */
int plot_split_words(const char *s, char **buf, char ***words);

#endif
