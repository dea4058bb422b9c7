/* canvas.c: cairo surfaces for SVG, PNG and PDF behind one drawing interface (canvas.h). PDF goes
 * straight to the file; PNG is drawn into an RGB image and encoded by cairo at the end; SVG is
 * held in a memory stream until the end, when it is copied to the file with the <title> and the
 * text layer (kept in a second memory stream) put into it. "The file" is a temporary beside the
 * target (base/atomic.h), renamed over it only when everything was written. */
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"
#include "base/err.h"
#include "text/unicode.h"
#include "viz/canvas.h"

/* A growing buffer behind a FILE (open_memstream): text is added with stdio; p and n are valid
 * once f is closed. */
typedef struct memfile {
    FILE *f;
    char *p;
    size_t n;
} memfile;

struct canvas {
    int format;               /* enum draw_format */
    int width, height;
    char *path, *title;
    atomic_file out;          /* the temporary: a failed or abandoned drawing never touches path */
    int write_errno;          /* the first failed write's errno, 0 if none */
    int oom;                  /* memory ran out: the drawing is incomplete */
    cairo_surface_t *surface;
    cairo_t *cr;
    PangoContext *ctx;
    const draw_fonts *fonts;
    memfile svg;              /* SVG: cairo's output */
    memfile layer;            /* SVG: the text layer's <text> elements */
};

/* Closes m's stream (once); 0, or -1 when the stream ran out of memory. */
static int memfile_close(memfile *m)
{
    if (!m->f) return 0;
    int bad = ferror(m->f);
    if (fclose(m->f) != 0) bad = 1;
    m->f = NULL;
    return bad ? -1 : 0;
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

size_t canvas_xml_escape(char *out, size_t cap, const char *s)
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

/* s escaped into f; -1 for lack of memory. */
static int put_xml(FILE *f, const char *s)
{
    size_t n = canvas_xml_escape(NULL, 0, s);
    char *e = malloc(n + 1);
    if (!e) return -1;
    canvas_xml_escape(e, n + 1, s);
    fwrite(e, 1, n, f);
    free(e);
    return 0;
}

/* ------------------------------------------------------------------ streams */
static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int n)
{
    canvas *c = closure;
    if (c->write_errno) return CAIRO_STATUS_WRITE_ERROR;
    if (fwrite(data, 1, n, c->out.fp) != n) {
        c->write_errno = errno ? errno : EIO;
        return CAIRO_STATUS_WRITE_ERROR;
    }
    return CAIRO_STATUS_SUCCESS;
}

static cairo_status_t to_memory(void *closure, const unsigned char *data, unsigned int n)
{
    canvas *c = closure;
    return fwrite(data, 1, n, c->svg.f) == n ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_NO_MEMORY;
}

/* ------------------------------------------------------------------ open, close */
static cairo_surface_t *make_surface(canvas *c)
{
    cairo_surface_t *s;
    if (c->format == DRAW_PNG) return cairo_image_surface_create(CAIRO_FORMAT_RGB24, c->width, c->height);
    if (c->format == DRAW_PDF) {
        s = cairo_pdf_surface_create_for_stream(to_file, c, c->width, c->height); /* 1 pixel = 1 pt */
        if (c->title) cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, c->title);
        cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "nmt");
        return s;
    }
    s = cairo_svg_surface_create_for_stream(to_memory, c, c->width, c->height);
    cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PX); /* cairo's default is points */
    return s;
}

int canvas_open(canvas **out, const char *path, int width, int height, const draw_fonts *fonts, const char *title,
                nmt_err *err)
{
    *out = NULL;
    int format = draw_format_of(path);
    if (!format) return nmt_fail(err, NMT_ERR_ARG, "%s: the name ends in none of .svg, .png, .pdf", path);
    if (width < 1 || height < 1 || width > CANVAS_MAX_SIDE || height > CANVAS_MAX_SIDE ||
        (size_t)width * (size_t)height > CANVAS_MAX_PIXELS)
        return nmt_fail(err, NMT_ERR_ARG, "%s: %d x %d pixels is too large an image", path, width, height);
    canvas *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(path)) || (title && *title && !(c->title = strdup(title)))) {
        canvas_discard(c);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    c->format = format;
    c->width = width;
    c->height = height;
    c->fonts = fonts;
    int rc = atomic_open(&c->out, path, err);
    if (rc) {
        canvas_discard(c);
        return rc;
    }
    if (format == DRAW_SVG &&
        (!(c->svg.f = open_memstream(&c->svg.p, &c->svg.n)) || !(c->layer.f = open_memstream(&c->layer.p, &c->layer.n)))) {
        canvas_discard(c);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    c->surface = make_surface(c);
    c->cr = cairo_create(c->surface);
    if (cairo_status(c->cr) != CAIRO_STATUS_SUCCESS) {
        rc = nmt_fail(err, NMT_ERR_NOMEM, "%s: cairo: %s", path, cairo_status_to_string(cairo_status(c->cr)));
        canvas_discard(c);
        return rc;
    }
    c->ctx = draw_context_new(fonts);
    canvas_rgb(c->cr, 0xffffff);
    cairo_paint(c->cr);
    *out = c;
    return NMT_OK;
}

cairo_t *canvas_cairo(canvas *c) { return c->cr; }

void canvas_rgb(cairo_t *cr, uint32_t rgb)
{
    cairo_set_source_rgb(cr, (rgb >> 16 & 255) / 255.0, (rgb >> 8 & 255) / 255.0, (rgb & 255) / 255.0);
}

void canvas_discard(canvas *c)
{
    if (!c) return;
    if (c->cr) cairo_destroy(c->cr);
    if (c->surface) cairo_surface_destroy(c->surface);
    if (c->ctx) g_object_unref(c->ctx);
    memfile_close(&c->svg);
    memfile_close(&c->layer);
    atomic_abort(&c->out); /* the temporary goes; the target, if any, is as it was */
    free(c->path);
    free(c->title);
    free(c->svg.p);
    free(c->layer.p);
    free(c);
}

/* The SVG as cairo wrote it, copied to the file with <title> first inside <svg> and the text
 * layer last; write errors show in the file's error flag. */
static void write_svg(canvas *c)
{
    FILE *f = c->out.fp;
    if (memfile_close(&c->svg) || memfile_close(&c->layer)) { c->oom = 1; return; }
    const char *d = c->svg.p, *open = strstr(d, "<svg"); /* a memory stream's text ends in a NUL */
    const char *start = open ? strchr(open, '>') : NULL, *end = NULL;
    for (const char *p = start; p && (p = strstr(p, "</svg>")); p++) end = p;
    if (!start || !end) { /* not what cairo writes: leave it as it is */
        fwrite(d, 1, c->svg.n, f);
        return;
    }
    fwrite(d, 1, (size_t)(start + 1 - d), f);
    if (c->title) {
        fputs("\n<title>", f);
        c->oom |= put_xml(f, c->title);
        fputs("</title>", f);
    }
    fwrite(start + 1, 1, (size_t)(end - start - 1), f);
    fputs("<g class=\"text-layer\" fill=\"#000000\" fill-opacity=\"0\" font-family=\"", f);
    c->oom |= put_xml(f, draw_fonts_family(c->fonts));
    fputs("\">\n", f);
    fwrite(c->layer.p, 1, c->layer.n, f);
    fputs("</g>\n", f);
    fwrite(end, 1, c->svg.n - (size_t)(end - d), f);
}

int canvas_close(canvas *c, nmt_err *err)
{
    cairo_status_t st = cairo_status(c->cr);
    cairo_destroy(c->cr);
    c->cr = NULL;
    if (st == CAIRO_STATUS_SUCCESS) {
        if (c->format == DRAW_PNG) {
            st = cairo_surface_write_to_png_stream(c->surface, to_file, c);
        } else {
            cairo_surface_finish(c->surface);
            st = cairo_surface_status(c->surface);
        }
    }
    if (st == CAIRO_STATUS_SUCCESS && c->format == DRAW_SVG && !c->oom) write_svg(c);
    int rc = NMT_OK;
    if (c->oom || st == CAIRO_STATUS_NO_MEMORY) rc = nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory", c->path);
    else if (c->write_errno) rc = nmt_fail(err, NMT_ERR_IO, "%s: write error: %s", c->path, strerror(c->write_errno));
    else if (st != CAIRO_STATUS_SUCCESS) rc = nmt_fail(err, NMT_ERR_IO, "%s: cairo: %s", c->path, cairo_status_to_string(st));
    /* the commit checks the stream's own writes (the SVG copy) and renames the temporary over
     * the target; after an error above, the discard below removes the temporary instead */
    if (!rc) rc = atomic_commit(&c->out, err);
    canvas_discard(c);
    return rc;
}

/* ------------------------------------------------------------------ text */
void canvas_text(canvas *c, const char *s, double x, double y, double px, int anchor, int rotate, uint32_t rgb,
                 const char *cls)
{
    cairo_t *cr = c->cr;
    cairo_save(cr);
    cairo_translate(cr, x, y);
    if (rotate) cairo_rotate(cr, -M_PI / 2);
    pango_cairo_update_context(cr, c->ctx); /* the turn, before the layout is made */
    PangoLayout *l = draw_layout_new(c->ctx, c->fonts, s, px);
    PangoRectangle logical;
    pango_layout_get_extents(l, NULL, &logical);
    double w = (double)logical.width / PANGO_SCALE, base = (double)pango_layout_get_baseline(l) / PANGO_SCALE;
    double shift = anchor == DRAW_CENTER ? w / 2 : anchor == DRAW_RIGHT ? w : 0;
    cairo_move_to(cr, -shift - (double)logical.x / PANGO_SCALE, -base);
    canvas_rgb(cr, rgb);
    pango_cairo_show_layout(cr, l);
    g_object_unref(l);
    cairo_restore(cr);
    if (c->format != DRAW_SVG) return;
    static const char *anchors[] = {"start", "middle", "end"};
    fprintf(c->layer.f, "<text class=\"%s\" x=\"%.2f\" y=\"%.2f\" font-size=\"%g\" text-anchor=\"%s\"", cls, x, y, px,
            anchors[anchor]);
    if (rotate) fprintf(c->layer.f, " transform=\"rotate(-90 %.2f %.2f)\"", x, y);
    fputc('>', c->layer.f);
    c->oom |= put_xml(c->layer.f, s);
    fputs("</text>\n", c->layer.f);
}
