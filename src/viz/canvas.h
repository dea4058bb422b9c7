/* canvas.h: one drawing code, three files. A canvas is a cairo context over an SVG, image (PNG)
 * or PDF surface, chosen by the file's extension; text is drawn through pango. Cairo's SVG draws
 * text as glyph outlines (it looks the same everywhere), so the SVG also gets a <title> and a
 * transparent layer of <text> elements over the glyphs, which keeps the words searchable,
 * selectable and readable by programs. Only the viz library's drawing code includes this header:
 * it brings in cairo and pango. */
#ifndef NMT_CANVAS_H
#define NMT_CANVAS_H

#include <cairo.h>
#include <pango/pangocairo.h>
#include <stddef.h>
#include <stdint.h>

#include "nmt.h"
#include "viz/draw.h"

/* Image surfaces are refused past cairo's side limit or this many pixels (1 GiB of canvas). */
#define CANVAS_MAX_SIDE 32767
#define CANVAS_MAX_PIXELS ((size_t)1 << 28)

typedef struct canvas canvas;

/* Creates the temporary that will become path (base/atomic.h; any error there is reported now,
 * as NMT_ERR_IO naming path) and a width x height drawing for it, painted white, in the format
 * of its extension (NMT_ERR_ARG for another one). title (may be NULL) becomes the SVG's <title>
 * and the PDF's title. fonts must outlive the canvas. */
int canvas_open(canvas **out, const char *path, int width, int height, const draw_fonts *fonts, const char *title,
                nmt_err *err);
cairo_t *canvas_cairo(canvas *c);
/* Ends the drawing, writes the temporary and renames it over path: NMT_OK, or an error with the
 * temporary removed and an existing path left as it was. Frees c. */
int canvas_close(canvas *c, nmt_err *err);
/* Gives up: frees c and removes its temporary (path is not touched). NULL is allowed. */
void canvas_discard(canvas *c);

/* Sets the source colour from 0xRRGGBB. */
void canvas_rgb(cairo_t *cr, uint32_t rgb);

/* Draws UTF-8 text whose baseline passes through (x, y); anchor (enum draw_anchor) says which
 * point of the text that is. rotate 1 turns it 90 degrees counter-clockwise (it reads upwards and
 * the anchor runs along it). cls names the text's part in the SVG text layer ("row", "title").
 * Errors (lack of memory) are kept, as cairo keeps its own, and reported by canvas_close. */
void canvas_text(canvas *c, const char *s, double x, double y, double px, int anchor, int rotate, uint32_t rgb,
                 const char *cls);

/* s as XML character data: & < > " ' become entities; invalid UTF-8 and the characters XML 1.0
 * forbids (controls, U+FFFE, U+FFFF) become U+FFFD. Writes at most cap bytes with the NUL into
 * out (cap may be 0) and returns the length of the whole result, as snprintf does. */
size_t canvas_xml_escape(char *out, size_t cap, const char *s);

/* From draw.c, so that text is measured and drawn by one layout builder: a context on the fonts'
 * own font map with the shared font options, and a layout of s at px pixels per em in it. */
PangoContext *draw_context_new(const draw_fonts *f);
PangoLayout *draw_layout_new(PangoContext *ctx, const draw_fonts *f, const char *s, double px);

#endif
