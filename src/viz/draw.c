/* draw.c: fonts and text measures through pango (draw.h), and the pango helpers canvas.c draws
 * with (canvas.h), so that text is measured and drawn from one layout builder and the widths a
 * layout reserves are the widths drawn. Metrics are unhinted: they do not depend on the surface
 * or the size of the image, so SVG, PNG and PDF agree in geometry. */
#include <errno.h>
#include <fontconfig/fontconfig.h>
#include <pango/pangocairo.h>
#include <pango/pangofc-fontmap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/err.h"
#include "base/paths.h"
#include "text/unicode.h"
#include "viz/canvas.h"
#include "viz/draw.h"

struct draw_fonts {
    PangoFontMap *map;      /* owns the fontconfig configuration it was given */
    PangoContext *ctx;      /* measures; drawing makes a context per canvas */
    char *family;           /* comma-separated family list */
};

/* ------------------------------------------------------------------ opening */
/* The fonts fontconfig knows (its usual configuration, read anew: nothing global is changed),
 * plus `path` when given; *family gets that file's family name (malloc'd) or NULL. */
static int load_config(FcConfig **out, const char *path, char **family, nmt_err *err)
{
    *out = NULL;
    *family = NULL;
    if (path) { /* fontconfig says only "no": find out why first, without opening (a FIFO would wait) */
        int rc = path_check_regular(path, err);
        if (rc) return rc;
        if (access(path, R_OK) != 0) return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
    }
    FcConfig *cfg = FcInitLoadConfigAndFonts();
    if (!cfg) return nmt_fail(err, NMT_ERR_IO, "fontconfig: cannot load its configuration");
    if (path) {
        FcFontSet *app = FcConfigAppFontAddFile(cfg, (const FcChar8 *)path) ? FcConfigGetFonts(cfg, FcSetApplication)
                                                                            : NULL;
        FcChar8 *name = NULL;
        if (!app || app->nfont < 1 || FcPatternGetString(app->fonts[0], FC_FAMILY, 0, &name) != FcResultMatch) {
            FcConfigDestroy(cfg);
            return nmt_fail(err, NMT_ERR_FORMAT, "%s: not a font file (TrueType, OpenType) fontconfig can read", path);
        }
        if (!(*family = strdup((const char *)name))) {
            FcConfigDestroy(cfg);
            return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        }
    } else {
        FcFontSet *sys = FcConfigGetFonts(cfg, FcSetSystem);
        if (!sys || sys->nfont < 1) {
            FcConfigDestroy(cfg);
            return nmt_fail(err, NMT_ERR_IO, "no font is installed (fontconfig finds none): install fonts-dejavu-core, "
                            "or name a font file");
        }
    }
    *out = cfg;
    return NMT_OK;
}

/* Font options for measuring and drawing alike: unhinted advances (the same on every surface),
 * slight hinting of outlines for crisp small text in PNGs, grey anti-aliasing. */
static void set_font_options(PangoContext *ctx)
{
    cairo_font_options_t *o = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(o, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(o, CAIRO_HINT_STYLE_SLIGHT);
    cairo_font_options_set_antialias(o, CAIRO_ANTIALIAS_GRAY);
    pango_cairo_context_set_font_options(ctx, o);
    cairo_font_options_destroy(o);
}

int draw_fonts_open(draw_fonts **out, const char *path, nmt_err *err)
{
    *out = NULL;
    FcConfig *cfg;
    char *name;
    int rc = load_config(&cfg, path, &name, err);
    if (rc) return rc;
    draw_fonts *f = calloc(1, sizeof *f);
    size_t n = (name ? strlen(name) + 1 : 0) + sizeof DRAW_FAMILY;
    if (!f || !(f->family = malloc(n))) {
        free(f);
        free(name);
        FcConfigDestroy(cfg);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    snprintf(f->family, n, "%s%s%s", name ? name : "", name ? "," : "", DRAW_FAMILY);
    free(name);
    f->map = pango_cairo_font_map_new();
    if (!PANGO_IS_FC_FONT_MAP(f->map)) { /* a pango built without fontconfig */
        FcConfigDestroy(cfg);
        draw_fonts_free(f);
        return nmt_fail(err, NMT_ERR_IO, "pango: the font map does not use fontconfig");
    }
    pango_fc_font_map_set_config(PANGO_FC_FONT_MAP(f->map), cfg);
    FcConfigDestroy(cfg); /* the map keeps its own reference */
    f->ctx = draw_context_new(f);
    *out = f;
    return NMT_OK;
}

void draw_fonts_free(draw_fonts *f)
{
    if (!f) return;
    if (f->ctx) g_object_unref(f->ctx);
    if (f->map) {
        /* pango 1.50 keeps a reference to the configuration past the map's end: drop it here */
        if (PANGO_IS_FC_FONT_MAP(f->map)) pango_fc_font_map_set_config(PANGO_FC_FONT_MAP(f->map), NULL);
        g_object_unref(f->map);
    }
    free(f->family);
    free(f);
}

const char *draw_fonts_family(const draw_fonts *f) { return f->family; }

/* ------------------------------------------------------------------ pango helpers (canvas.h) */
PangoContext *draw_context_new(const draw_fonts *f)
{
    PangoContext *ctx = pango_font_map_create_context(f->map);
    set_font_options(ctx);
    return ctx;
}

static PangoFontDescription *font_desc(const draw_fonts *f, double px)
{
    PangoFontDescription *d = pango_font_description_from_string(f->family);
    pango_font_description_set_absolute_size(d, px * PANGO_SCALE);
    return d;
}

/* Pango wants valid UTF-8 (it warns on stderr otherwise): invalid bytes become U+FFFD. */
static char *valid_utf8(const char *s)
{
    size_t n = strlen(s), m = 0;
    char *out = malloc(3 * n + 1); /* a byte becomes at most three */
    if (!out) return NULL;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = utf8_decode(s + i, n - i, &cp);
        if (k < 0) {
            memcpy(out + m, "\xEF\xBF\xBD", 3);
            m += 3;
            i++;
        } else {
            memcpy(out + m, s + i, (size_t)k);
            m += (size_t)k;
            i += (size_t)k;
        }
    }
    out[m] = 0;
    return out;
}

PangoLayout *draw_layout_new(PangoContext *ctx, const draw_fonts *f, const char *s, double px)
{
    PangoLayout *l = pango_layout_new(ctx);
    PangoFontDescription *d = font_desc(f, px);
    pango_layout_set_font_description(l, d);
    pango_font_description_free(d);
    if (utf8_find_invalid(s, strlen(s)) < 0) {
        pango_layout_set_text(l, s, -1);
    } else {
        char *v = valid_utf8(s);
        pango_layout_set_text(l, v ? v : "\xEF\xBF\xBD", -1);
        free(v);
    }
    return l;
}

/* ------------------------------------------------------------------ measures */
double draw_text_width(const draw_fonts *f, const char *s, double px)
{
    PangoLayout *l = draw_layout_new(f->ctx, f, s, px);
    PangoRectangle logical;
    pango_layout_get_extents(l, NULL, &logical);
    g_object_unref(l);
    return (double)logical.width / PANGO_SCALE;
}

void draw_vmetrics(const draw_fonts *f, double px, double *ascent, double *descent)
{
    PangoFontDescription *d = font_desc(f, px);
    PangoFont *font = pango_font_map_load_font(f->map, f->ctx, d);
    pango_font_description_free(d);
    *ascent = 0.93 * px; /* DejaVu Sans' proportions, should no font load */
    *descent = 0.24 * px;
    if (!font) return;
    PangoFontMetrics *m = pango_font_get_metrics(font, NULL);
    *ascent = (double)pango_font_metrics_get_ascent(m) / PANGO_SCALE;
    *descent = (double)pango_font_metrics_get_descent(m) / PANGO_SCALE;
    pango_font_metrics_unref(m);
    g_object_unref(font);
}

int draw_missing_glyphs(const draw_fonts *f, const char *s)
{
    PangoLayout *l = draw_layout_new(f->ctx, f, s, 12);
    int n = pango_layout_get_unknown_glyphs_count(l);
    g_object_unref(l);
    return n;
}

/* ------------------------------------------------------------------ formats */
int draw_format_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/')) return 0;
    if (!strcasecmp(dot, ".svg")) return DRAW_SVG;
    if (!strcasecmp(dot, ".png")) return DRAW_PNG;
    if (!strcasecmp(dot, ".pdf")) return DRAW_PDF;
    return 0;
}

const char *draw_format_name(int format)
{
    return format == DRAW_SVG ? "svg" : format == DRAW_PNG ? "png" : format == DRAW_PDF ? "pdf" : NULL;
}
