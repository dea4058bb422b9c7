/* font.h: TrueType outlines drawn as anti-aliased grey pixels, for the word labels of the PNG
 * attention plots (plot.c).
 *
 * It reads fonts with 'glyf' outlines (cmap formats 4 and 12, composite glyphs, .ttc collections)
 * and fills them with its own scan-line rasteriser. No hinting and no general shaping: Arabic
 * letters take their joined forms (presentation forms, lam-alef ligatures) and a word whose first
 * letter is right-to-left (Hebrew, Arabic) is drawn reversed, which is enough for single words.
 *
 * A font_set is a primary face followed by fallbacks: each character is drawn from the first face
 * that has it, and as an empty box when none has. Fonts are looked for at run time (the caller's
 * file, then the usual Debian, Fedora and Arch places of DejaVu Sans, then CJK fallbacks such as
 * Droid Sans Fallback); the library never reads the environment. Everything is reentrant. */
#ifndef NMT_FONT_H
#define NMT_FONT_H

#include <stddef.h>
#include <stdint.h>

#include "nmt.h"

typedef struct font_set font_set;

/* Opens `path` (if not NULL: it must load) and the known fonts found on this machine: the first
 * DejaVu Sans found as primary when no path is given, and every known fallback found. Fails with
 * NMT_ERR_IO and a message naming the places looked at when no font at all could be opened. */
int font_set_open(font_set **out, const char *path, nmt_err *err);
/* An empty set, then faces added one by one (the first added is the primary). */
int font_set_new(font_set **out, nmt_err *err);
int font_set_add(font_set *fs, const char *path, nmt_err *err);
void font_set_free(font_set *fs);
int font_set_count(const font_set *fs);
const char *font_set_path(const font_set *fs, int k); /* the file of face k */

/* Does some face of the set have a glyph for code point cp? */
int font_has_glyph(const font_set *fs, uint32_t cp);

/* Vertical metrics of the primary face at size px (pixels per em): ascent and descent, both
 * positive, in pixels. */
void font_vmetrics(const font_set *fs, double px, double *ascent, double *descent);

/* Advance width in pixels of UTF-8 text at size px (invalid bytes count as U+FFFD). */
double font_text_width(const font_set *fs, const char *s, double px);

/* Draws UTF-8 text into an 8-bit grey canvas of w x h pixels (row-major, stride w) in grey level
 * `ink`, blended by coverage, clipped to the canvas. (x, y) is the start of the baseline.
 * rotate 0: left to right; 1: turned 90 degrees counter-clockwise (reads upwards from (x, y)).
 * Fails only for lack of memory. */
int font_draw_text(const font_set *fs, uint8_t *canvas, int w, int h, double x, double y,
                   const char *s, double px, int rotate, uint8_t ink, nmt_err *err);

/* The area in square pixels enclosed by the outlines of s at size px, by the shoelace formula
 * over the same flattened outlines the rasteriser fills (tests compare it with the ink drawn). */
double font_text_area(const font_set *fs, const char *s, double px);

#endif
