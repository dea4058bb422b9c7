/* draw.h: fonts and text measures for the drawings of the viz library (heat maps, charts), and
 * the output formats a drawing can be written in. Text goes through pango (fontconfig finds the
 * fonts; HarfBuzz shapes, so Arabic joins, right-to-left words read right to left, and a
 * character the first font lacks is taken from another installed font). No cairo type shows here:
 * the commands that use it need no cairo headers. */
#ifndef NMT_DRAW_H
#define NMT_DRAW_H

#include "nmt.h"

/* The family asked for first; fontconfig's fallbacks follow it (Droid Sans Fallback for CJK when
 * fonts-droid-fallback is installed). */
#define DRAW_FAMILY "DejaVu Sans"

/* A font map of its own (a fontconfig configuration that no other caller sees) and a context to
 * measure text with. Not safe to share between threads: give each thread its own. */
typedef struct draw_fonts draw_fonts;

/* The installed fonts, and the font file `path` first when it is not NULL (it must load: a
 * missing file is NMT_ERR_IO, one that is no font NMT_ERR_FORMAT). Fails with NMT_ERR_IO when no
 * font at all is installed. */
int draw_fonts_open(draw_fonts **out, const char *path, nmt_err *err);
void draw_fonts_free(draw_fonts *f);
/* The family list text is drawn in ("DejaVu Sans", or the font file's family first). */
const char *draw_fonts_family(const draw_fonts *f);

/* Measures of UTF-8 text at px pixels per em, as it will be drawn (shaped, unhinted). */
double draw_text_width(const draw_fonts *f, const char *s, double px);
/* Ascent and descent (both positive, pixels) of the first font of the family list. */
void draw_vmetrics(const draw_fonts *f, double px, double *ascent, double *descent);
/* Characters of s that no installed font has (they are drawn as boxes); -1 for lack of memory. */
int draw_missing_glyphs(const draw_fonts *f, const char *s);

/* Which point of a text item its position names, along the text. */
enum draw_anchor { DRAW_LEFT, DRAW_CENTER, DRAW_RIGHT };

enum draw_format { DRAW_SVG = 1, DRAW_PNG = 2, DRAW_PDF = 4 };
/* The format named by the file's extension (.svg, .png, .pdf, any case); 0 for none of them. */
int draw_format_of(const char *path);
/* "svg", "png" or "pdf"; NULL for anything else. */
const char *draw_format_name(int format);

#endif
