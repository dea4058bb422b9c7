/* font.c: a TrueType ('glyf') reader and anti-aliased rasteriser for the labels of PNG attention
 * plots (font.h). Every read of the font file goes through bounds-checked accessors that return 0
 * past the end, so a damaged font draws wrong shapes but never reads outside its buffer. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "viz/font.h"
#include "text/unicode.h"

/* Samples per pixel row: coverage is exact across a row and sampled this many times down it. */
#define SUBROWS 8
/* Composite glyphs nest at most this deep (deeper is a loop in a damaged font). */
#define MAX_DEPTH 8
/* Bounds on the work one glyph may ask for: only a damaged font comes near them. */
#define MAX_COMPONENTS 1024
#define MAX_EDGES 65536
/* Larger files are not fonts we want to read whole into memory. */
#define MAX_FONT_BYTES ((size_t)256 << 20)

typedef struct face {
    char *path;
    uint8_t *data;
    size_t size;
    size_t glyf, glyf_len, loca, loca_len, hmtx, hmtx_len, cmap; /* cmap: the chosen subtable */
    int cmap_format;                                            /* 4 or 12 */
    int upem, loca_long, num_glyphs, num_hmetrics;
    int ascender, descender; /* hhea, font units (descender negative) */
} face;

struct font_set {
    face *f;
    int n, cap;
};

/* ------------------------------------------------------------------ bounds-checked reads */
static uint32_t rd8(const face *f, size_t o) { return o < f->size ? f->data[o] : 0; }
static uint32_t rd16(const face *f, size_t o)
{
    return o + 2 <= f->size ? (uint32_t)f->data[o] << 8 | f->data[o + 1] : 0;
}
static int32_t rds16(const face *f, size_t o) { return (int16_t)rd16(f, o); }
static uint32_t rd32(const face *f, size_t o) { return rd16(f, o) << 16 | rd16(f, o + 2); }
static double rdf2dot14(const face *f, size_t o) { return rds16(f, o) / 16384.0; }

#define TAG(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

/* Offset and length of table `tag` of the font whose directory starts at `base`; 0 if absent or
 * not inside the file. */
static int find_table(const face *f, size_t base, uint32_t tag, size_t *off, size_t *len)
{
    uint32_t n = rd16(f, base + 4);
    for (uint32_t k = 0; k < n; k++) {
        size_t r = base + 12 + 16 * (size_t)k;
        if (rd32(f, r) != tag) continue;
        size_t o = rd32(f, r + 8), l = rd32(f, r + 12);
        if (o > f->size || l > f->size - o) return 0;
        *off = o;
        *len = l;
        return 1;
    }
    return 0;
}

/* Picks the Unicode cmap subtable: full repertoire (format 12) first, then the BMP (format 4). */
static int pick_cmap(face *f, size_t cmap)
{
    uint32_t n = rd16(f, cmap + 2);
    int best = 0;
    for (uint32_t k = 0; k < n; k++) {
        size_t r = cmap + 4 + 8 * (size_t)k;
        uint32_t plat = rd16(f, r), enc = rd16(f, r + 2);
        size_t sub = cmap + rd32(f, r + 4);
        uint32_t fmt = rd16(f, sub);
        int unicode = plat == 0 || (plat == 3 && (enc == 1 || enc == 10));
        int score = !unicode ? 0 : fmt == 12 ? 2 : fmt == 4 ? 1 : 0;
        if (score > best && sub < f->size) {
            best = score;
            f->cmap = sub;
            f->cmap_format = (int)fmt;
        }
    }
    return best > 0;
}

static int glyph_index(const face *f, uint32_t cp)
{
    uint32_t g = 0;
    size_t s = f->cmap;
    if (f->cmap_format == 4) {
        if (cp > 0xFFFF) return 0;
        uint32_t segx2 = rd16(f, s + 6), segs = segx2 / 2, lo = 0, hi = segs;
        size_t ends = s + 14, starts = ends + segx2 + 2, deltas = starts + segx2, ranges = deltas + segx2;
        while (lo < hi) { /* the first segment whose end is >= cp */
            uint32_t mid = (lo + hi) / 2;
            if (rd16(f, ends + 2 * (size_t)mid) < cp) lo = mid + 1;
            else hi = mid;
        }
        if (lo >= segs) return 0;
        uint32_t start = rd16(f, starts + 2 * (size_t)lo), delta = rd16(f, deltas + 2 * (size_t)lo);
        size_t ro_at = ranges + 2 * (size_t)lo;
        uint32_t ro = rd16(f, ro_at);
        if (cp < start) return 0;
        if (ro == 0) g = (cp + delta) & 0xFFFF;
        else {
            g = rd16(f, ro_at + ro + 2 * (size_t)(cp - start));
            if (g) g = (g + delta) & 0xFFFF;
        }
    } else {
        uint32_t n = rd32(f, s + 12), lo = 0, hi = n;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            size_t gr = s + 16 + 12 * (size_t)mid;
            if (rd32(f, gr + 4) < cp) lo = mid + 1;
            else hi = mid;
        }
        if (lo >= n) return 0;
        size_t gr = s + 16 + 12 * (size_t)lo;
        uint32_t start = rd32(f, gr);
        if (cp < start) return 0;
        g = rd32(f, gr + 8) + (cp - start);
    }
    return g < (uint32_t)f->num_glyphs ? (int)g : 0;
}

static int advance_units(const face *f, int g)
{
    int k = g < f->num_hmetrics ? g : f->num_hmetrics - 1;
    return (int)rd16(f, f->hmtx + 4 * (size_t)k);
}

/* The glyph's bytes within 'glyf'; len 0 for an empty glyph (a space) or a bad loca entry. */
static void glyph_range(const face *f, int g, size_t *off, size_t *len)
{
    size_t a, b;
    if (f->loca_long) {
        a = rd32(f, f->loca + 4 * (size_t)g);
        b = rd32(f, f->loca + 4 * (size_t)g + 4);
    } else {
        a = 2 * (size_t)rd16(f, f->loca + 2 * (size_t)g);
        b = 2 * (size_t)rd16(f, f->loca + 2 * (size_t)g + 2);
    }
    *off = f->glyf + a;
    *len = (a < b && b <= f->glyf_len) ? b - a : 0;
}

/* ------------------------------------------------------------------ loading */
static void face_free(face *f)
{
    free(f->path);
    free(f->data);
    memset(f, 0, sizeof *f);
}

static int face_load(face *f, const char *path, nmt_err *err)
{
    memset(f, 0, sizeof *f);
    FILE *fp = fopen(path, "rb");
    if (!fp) return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
    int rc = NMT_OK;
    long n = -1;
    if (fseek(fp, 0, SEEK_END) == 0) n = ftell(fp);
    if (n < 0 || fseek(fp, 0, SEEK_SET) != 0) rc = nmt_fail(err, NMT_ERR_IO, "%s: cannot read", path);
    else if ((size_t)n < 12 || (size_t)n > MAX_FONT_BYTES)
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: %ld bytes: not a font we can read", path, n);
    else if (!(f->data = malloc((size_t)n)) || !(f->path = strdup(path)))
        rc = nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory", path);
    else if (fread(f->data, 1, (size_t)n, fp) != (size_t)n)
        rc = nmt_fail(err, NMT_ERR_IO, "%s: read error", path);
    fclose(fp);
    if (rc) { face_free(f); return rc; }
    f->size = (size_t)n;

    size_t base = 0, head, hhea, maxp, cmap, len;
    uint32_t tag = rd32(f, 0);
    if (tag == TAG('t', 't', 'c', 'f')) base = rd32(f, 12); /* a collection: its first font */
    else if (tag == TAG('O', 'T', 'T', 'O'))
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: PostScript (CFF) outlines are not supported: give a TrueType font", path);
    else if (tag != 0x00010000 && tag != TAG('t', 'r', 'u', 'e'))
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: not a TrueType font", path);
    if (rc == 0 && (!find_table(f, base, TAG('h', 'e', 'a', 'd'), &head, &len) || len < 54 ||
                    !find_table(f, base, TAG('h', 'h', 'e', 'a'), &hhea, &len) || len < 36 ||
                    !find_table(f, base, TAG('m', 'a', 'x', 'p'), &maxp, &len) || len < 6 ||
                    !find_table(f, base, TAG('c', 'm', 'a', 'p'), &cmap, &len) ||
                    !find_table(f, base, TAG('h', 'm', 't', 'x'), &f->hmtx, &f->hmtx_len) ||
                    !find_table(f, base, TAG('l', 'o', 'c', 'a'), &f->loca, &f->loca_len) ||
                    !find_table(f, base, TAG('g', 'l', 'y', 'f'), &f->glyf, &f->glyf_len)))
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: not a TrueType font with glyf outlines (a table is missing)", path);
    if (rc == 0) {
        f->upem = (int)rd16(f, head + 18);
        f->loca_long = rds16(f, head + 50) != 0;
        f->num_glyphs = (int)rd16(f, maxp + 4);
        f->ascender = rds16(f, hhea + 4);
        f->descender = rds16(f, hhea + 6);
        f->num_hmetrics = (int)rd16(f, hhea + 34);
        size_t need_loca = ((size_t)f->num_glyphs + 1) * (f->loca_long ? 4 : 2);
        if (f->upem < 16 || f->upem > 16384 || f->num_glyphs < 1 || f->num_hmetrics < 1 ||
            f->num_hmetrics > f->num_glyphs || 4 * (size_t)f->num_hmetrics > f->hmtx_len || need_loca > f->loca_len)
            rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: damaged font header", path);
        else if (!pick_cmap(f, cmap))
            rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: no Unicode character map (cmap format 4 or 12)", path);
    }
    if (rc) face_free(f);
    return rc;
}

int font_set_new(font_set **out, nmt_err *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? NMT_OK : nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
}

int font_set_add(font_set *fs, const char *path, nmt_err *err)
{
    if (fs->n == fs->cap) {
        int nc = fs->cap ? 2 * fs->cap : 4;
        face *nf = realloc(fs->f, sizeof *nf * (size_t)nc);
        if (!nf) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        fs->f = nf;
        fs->cap = nc;
    }
    int rc = face_load(&fs->f[fs->n], path, err);
    if (rc == 0) fs->n++;
    return rc;
}

void font_set_free(font_set *fs)
{
    if (!fs) return;
    for (int k = 0; k < fs->n; k++) face_free(&fs->f[k]);
    free(fs->f);
    free(fs);
}

int font_set_count(const font_set *fs) { return fs ? fs->n : 0; }
const char *font_set_path(const font_set *fs, int k) { return fs && k >= 0 && k < fs->n ? fs->f[k].path : NULL; }

/* Where Debian (fonts-dejavu-core, fonts-droid-fallback, ...), Fedora and Arch put fonts. Each
 * group is one font under its usual paths: the first that loads is taken, and the groups are
 * searched in this order per character. The first group is the primary face. */
static const char *const font_groups[][6] = {
    {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
     "/usr/share/fonts/dejavu/DejaVuSans.ttf", "/usr/share/fonts/TTF/DejaVuSans.ttf",
     "/usr/local/share/fonts/DejaVuSans.ttf", NULL},
    {"/usr/share/fonts/truetype/freefont/FreeSans.ttf", "/usr/share/fonts/gnu-free/FreeSans.ttf", NULL},
    {"/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
     "/usr/share/fonts-droid-fallback/truetype/DroidSansFallback.ttf",
     "/usr/share/fonts/google-droid-sans-fonts/DroidSansFallbackFull.ttf",
     "/usr/share/fonts/TTF/DroidSansFallbackFull.ttf", NULL},
    {"/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
     "/usr/share/fonts/wqy-microhei/wqy-microhei.ttc", NULL},
    {"/usr/share/fonts/truetype/nanum/NanumGothic.ttf", "/usr/share/fonts/nanum/NanumGothic.ttf", NULL},
};

int font_set_open(font_set **out, const char *path, nmt_err *err)
{
    int rc = font_set_new(out, err);
    if (rc) return rc;
    if (path && (rc = font_set_add(*out, path, err))) {
        font_set_free(*out);
        *out = NULL;
        return rc;
    }
    /* The caller's font first, the known ones after it as fallbacks. */
    size_t ng = sizeof font_groups / sizeof font_groups[0];
    for (size_t g = 0; g < ng; g++)
        for (int k = 0; font_groups[g][k]; k++) {
            nmt_err ignored;
            if (font_set_add(*out, font_groups[g][k], &ignored) == 0) break;
            if (ignored.code == NMT_ERR_NOMEM) {
                font_set_free(*out);
                *out = NULL;
                return nmt_fail(err, NMT_ERR_NOMEM, "out of memory loading fonts");
            }
        }
    if ((*out)->n == 0) {
        font_set_free(*out);
        *out = NULL;
        return nmt_fail(err, NMT_ERR_IO, "no TrueType font found (looked for DejaVu Sans in /usr/share/fonts/"
                        "truetype/dejavu, /usr/share/fonts/dejavu-sans-fonts, /usr/share/fonts/dejavu, "
                        "/usr/share/fonts/TTF): install fonts-dejavu-core or name a .ttf file");
    }
    return NMT_OK;
}

/* ------------------------------------------------------------------ text to glyphs */
typedef struct item {
    int face;      /* -1: no face has it (drawn as a box) */
    int glyph;
    double adv;    /* pixels */
} item;

static int is_rtl(uint32_t cp)
{
    return (cp >= 0x0590 && cp <= 0x08FF) || (cp >= 0xFB1D && cp <= 0xFDFF) || (cp >= 0xFE70 && cp <= 0xFEFF) ||
           (cp >= 0x10800 && cp <= 0x10FFF) || (cp >= 0x1E800 && cp <= 0x1EFFF);
}

/* Arabic joining (Unicode ArabicShaping.txt) for the letters that have presentation forms:
 * first form (isolated; then final, initial, medial) and how many forms: 1 (does not join),
 * 2 (joins on its right only: isolated, final), 4 (joins on both sides). */
typedef struct arabic_form { uint32_t cp, first; int n; } arabic_form;
static const arabic_form arabic_forms[] = {
    {0x0621, 0xFE80, 1}, {0x0622, 0xFE81, 2}, {0x0623, 0xFE83, 2}, {0x0624, 0xFE85, 2}, {0x0625, 0xFE87, 2},
    {0x0626, 0xFE89, 4}, {0x0627, 0xFE8D, 2}, {0x0628, 0xFE8F, 4}, {0x0629, 0xFE93, 2}, {0x062A, 0xFE95, 4},
    {0x062B, 0xFE99, 4}, {0x062C, 0xFE9D, 4}, {0x062D, 0xFEA1, 4}, {0x062E, 0xFEA5, 4}, {0x062F, 0xFEA9, 2},
    {0x0630, 0xFEAB, 2}, {0x0631, 0xFEAD, 2}, {0x0632, 0xFEAF, 2}, {0x0633, 0xFEB1, 4}, {0x0634, 0xFEB5, 4},
    {0x0635, 0xFEB9, 4}, {0x0636, 0xFEBD, 4}, {0x0637, 0xFEC1, 4}, {0x0638, 0xFEC5, 4}, {0x0639, 0xFEC9, 4},
    {0x063A, 0xFECD, 4}, {0x0641, 0xFED1, 4}, {0x0642, 0xFED5, 4}, {0x0643, 0xFED9, 4}, {0x0644, 0xFEDD, 4},
    {0x0645, 0xFEE1, 4}, {0x0646, 0xFEE5, 4}, {0x0647, 0xFEE9, 4}, {0x0648, 0xFEED, 2}, {0x0649, 0xFEEF, 2},
    {0x064A, 0xFEF1, 4}, {0x067E, 0xFB56, 4}, {0x0686, 0xFB7A, 4}, {0x0698, 0xFB8A, 2}, {0x06A9, 0xFB8E, 4},
    {0x06AF, 0xFB92, 4}, {0x06CC, 0xFBFC, 4},
};

static const arabic_form *arabic_lookup(uint32_t cp)
{
    size_t lo = 0, hi = sizeof arabic_forms / sizeof *arabic_forms;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (arabic_forms[mid].cp < cp) lo = mid + 1;
        else hi = mid;
    }
    return lo < sizeof arabic_forms / sizeof *arabic_forms && arabic_forms[lo].cp == cp ? &arabic_forms[lo] : NULL;
}

/* How a character joins: 'D' both sides, 'R' right side only, 'C' the tatweel (joins, no forms),
 * 'T' transparent (marks), 'U' not at all. */
static int joining(uint32_t cp)
{
    if (cp == 0x0640) return 'C';
    const arabic_form *a = arabic_lookup(cp);
    if (a) return a->n == 4 ? 'D' : a->n == 2 ? 'R' : 'U';
    return uni_is_mark(cp) ? 'T' : 'U';
}

/* Replaces Arabic letters by their contextual presentation forms, and lam + alef by the
 * mandatory ligature, where some face has the form (else the letter stays as it is). Works in
 * logical order, in place; an alef joined into a ligature becomes 0. jt: n bytes of scratch for
 * the joining types, taken before any letter is replaced. */
static void arabic_shape(const font_set *fs, uint32_t *cp, uint8_t *jt, size_t n)
{
    for (size_t i = 0; i < n; i++) jt[i] = (uint8_t)joining(cp[i]);
    for (size_t i = 0; i < n; i++) {
        int t = jt[i];
        if (cp[i] == 0 || (t != 'D' && t != 'R')) continue;
        long p = (long)i - 1;
        size_t q = i + 1;
        while (p >= 0 && jt[p] == 'T') p--;
        while (q < n && jt[q] == 'T') q++;
        int tp = p >= 0 ? jt[p] : 'U', tq = q < n ? jt[q] : 'U';
        int jp = tp == 'D' || tp == 'C';                  /* the letter before reaches us */
        int jn = t == 'D' && (tq == 'D' || tq == 'R' || tq == 'C');
        const arabic_form *a = arabic_lookup(cp[i]);
        if (cp[i] == 0x0644 && q < n) { /* lam-alef: isolated or final ligature */
            static const uint32_t alefs[] = {0x0622, 0x0623, 0x0625, 0x0627}, lig[] = {0xFEF5, 0xFEF7, 0xFEF9, 0xFEFB};
            int k = 0;
            while (k < 4 && alefs[k] != cp[q]) k++;
            if (k < 4 && font_has_glyph(fs, lig[k] + (uint32_t)jp)) {
                cp[i] = lig[k] + (uint32_t)jp;
                cp[q] = 0;
                continue;
            }
        }
        int form = jp && jn ? 3 : jp ? 1 : jn ? 2 : 0; /* medial, final, initial, isolated */
        if (font_has_glyph(fs, a->first + (uint32_t)form)) cp[i] = a->first + (uint32_t)form;
    }
}

/* Decodes s into glyph items in visual order. Arabic takes its joined forms; a word whose first
 * letter is right-to-left is reversed, so Hebrew and Arabic words read correctly; no further
 * bidi or shaping. Returns the count, -1
 * for lack of memory. */
static long text_items(const font_set *fs, const char *s, double px, item **out)
{
    size_t n = strlen(s), m = 0;
    item *it = malloc(sizeof *it * (n ? n : 1));
    uint32_t *cp = malloc(sizeof *cp * (n ? n : 1));
    uint8_t *jt = malloc(n ? n : 1); /* scratch for arabic_shape */
    if (!it || !cp || !jt) { free(it); free(cp); free(jt); return -1; }
    int rtl = -1, arabic = 0;
    for (size_t i = 0; i < n;) {
        int k = utf8_decode(s + i, n - i, &cp[m]);
        if (k < 0) { cp[m] = 0xFFFD; k = 1; }
        i += (size_t)k;
        if (rtl < 0 && uni_is_letter(cp[m])) rtl = is_rtl(cp[m]);
        arabic |= cp[m] >= 0x0600 && cp[m] <= 0x06FF;
        m++;
    }
    if (arabic) arabic_shape(fs, cp, jt, m);
    long nit = 0;
    for (size_t i = 0; i < m; i++) {
        if (cp[i] == 0) continue; /* joined into a ligature */
        item *t = &it[nit];
        t->face = -1;
        t->glyph = 0;
        for (int f = 0; f < fs->n && t->face < 0; f++) {
            int g = glyph_index(&fs->f[f], cp[i]);
            if (g) { t->face = f; t->glyph = g; }
        }
        t->adv = t->face < 0 ? 0.6 * px : advance_units(&fs->f[t->face], t->glyph) * px / fs->f[t->face].upem;
        nit++;
    }
    /* Right to left: the reversed order puts each letter's marks before it, at the pen position
     * where the letter starts; fonts draw such marks to the right of their origin (for a pen
     * that moves leftwards), so they land on their letter. */
    if (rtl == 1)
        for (long a = 0, b = nit - 1; a < b; a++, b--) {
            item t = it[a];
            it[a] = it[b];
            it[b] = t;
        }
    free(jt);
    free(cp);
    *out = it;
    return nit;
}

double font_text_width(const font_set *fs, const char *s, double px)
{
    item *it;
    long m = text_items(fs, s, px, &it);
    double w = 0;
    for (long k = 0; k < m; k++) w += it[k].adv;
    if (m >= 0) free(it);
    return w;
}

void font_vmetrics(const font_set *fs, double px, double *ascent, double *descent)
{
    const face *f = &fs->f[0];
    *ascent = f->ascender * px / f->upem;
    *descent = -f->descender * px / f->upem;
}

int font_has_glyph(const font_set *fs, uint32_t cp)
{
    for (int f = 0; f < fs->n; f++)
        if (glyph_index(&fs->f[f], cp)) return 1;
    return 0;
}

/* ------------------------------------------------------------------ outlines to edges */
typedef struct edge { float x0, y0, x1, y1; } edge;
typedef struct xform { double a, b, c, d, e, f; } xform; /* X = a x + b y + e, Y = c x + d y + f */
typedef struct cross { float x; int wind; } cross;

/* Scratch space for one text: grown as needed, reused for every glyph of it. */
typedef struct raster {
    edge *e;
    size_t ne, cap_e;
    int32_t *px, *py;
    uint8_t *on;
    size_t cap_pt;
    cross *cr;
    size_t cap_cr;
    float *cov;
    size_t cap_cov;
    int components; /* glyphs read for the current character (composites nest) */
    int oom;
} raster;

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    void *np = realloc(*p, nc * size);
    if (!np) return -1;
    *p = np;
    *cap = nc;
    return 0;
}

static void add_edge(raster *r, double x0, double y0, double x1, double y1)
{
    if (r->ne >= MAX_EDGES) return;
    if (r->oom || grow((void **)&r->e, &r->cap_e, r->ne + 1, sizeof *r->e)) { r->oom = 1; return; }
    r->e[r->ne++] = (edge){(float)x0, (float)y0, (float)x1, (float)y1};
}

/* A quadratic Bezier as line segments, enough of them that none strays 0.1 pixel from the curve
 * (the deviation of n equal steps is |p0 - 2 p1 + p2| / (8 n^2)). */
static void add_quad(raster *r, double x0, double y0, double x1, double y1, double x2, double y2)
{
    double dx = x0 - 2 * x1 + x2, dy = y0 - 2 * y1 + y2, dev = sqrt(dx * dx + dy * dy);
    int n = (int)ceil(sqrt(dev / 0.8));
    if (n < 1) n = 1;
    if (n > 64) n = 64;
    double px = x0, py = y0;
    for (int k = 1; k <= n; k++) {
        double t = (double)k / n, u = 1 - t;
        double qx = u * u * x0 + 2 * u * t * x1 + t * t * x2, qy = u * u * y0 + 2 * u * t * y1 + t * t * y2;
        add_edge(r, px, py, qx, qy);
        px = qx;
        py = qy;
    }
}

/* One closed contour of points [a, b] (TrueType: off-curve points are quadratic controls, with an
 * on-curve point implied halfway between two consecutive controls). */
static void add_contour(raster *r, int a, int b, const xform *t)
{
    int m = b - a + 1;
    if (m < 2) return;
#define TX(k) (t->a * r->px[k] + t->b * r->py[k] + t->e)
#define TY(k) (t->c * r->px[k] + t->d * r->py[k] + t->f)
    int s = -1;
    for (int k = a; k <= b; k++) if (r->on[k]) { s = k; break; }
    /* Start at the first on-curve point (then the m points after it end on it again), or, when
     * every point is a control, at the implied point between the last and the first. */
    double sx, sy;
    int first; /* the point visited first, counted from a */
    if (s >= 0) { sx = TX(s); sy = TY(s); first = s - a + 1; }
    else { sx = (TX(b) + TX(a)) / 2; sy = (TY(b) + TY(a)) / 2; first = 0; }
    double cx = sx, cy = sy, qx = 0, qy = 0;
    int ctrl = 0;
    for (int v = 0; v < m; v++) {
        int k = a + (first + v) % m;
        double x = TX(k), y = TY(k);
        if (r->on[k]) {
            if (ctrl) add_quad(r, cx, cy, qx, qy, x, y);
            else add_edge(r, cx, cy, x, y);
            cx = x; cy = y; ctrl = 0;
        } else {
            if (ctrl) {
                double mx = (qx + x) / 2, my = (qy + y) / 2;
                add_quad(r, cx, cy, qx, qy, mx, my);
                cx = mx; cy = my;
            }
            qx = x; qy = y; ctrl = 1;
        }
    }
    if (ctrl) add_quad(r, cx, cy, qx, qy, sx, sy);
    else if (cx != sx || cy != sy) add_edge(r, cx, cy, sx, sy);
#undef TX
#undef TY
}

/* Room for n points in the three point arrays, which share one capacity. */
static int points_reserve(raster *r, size_t n)
{
    if (n <= r->cap_pt) return 0;
    size_t nc = r->cap_pt ? r->cap_pt : 64;
    while (nc < n) nc *= 2;
    int32_t *x = realloc(r->px, sizeof *x * nc);
    if (x) r->px = x;
    int32_t *y = x ? realloc(r->py, sizeof *y * nc) : NULL;
    if (y) r->py = y;
    uint8_t *on = y ? realloc(r->on, nc) : NULL;
    if (!on) { r->oom = 1; return -1; }
    r->on = on;
    r->cap_pt = nc;
    return 0;
}

/* Appends the edges of glyph g of f under transform t (font units to pixels). */
static void add_glyph(raster *r, const face *f, int g, const xform *t, int depth)
{
    size_t off, len;
    if (g < 0 || g >= f->num_glyphs || depth > MAX_DEPTH || ++r->components > MAX_COMPONENTS) return;
    glyph_range(f, g, &off, &len);
    if (len < 10) return;
    int nc = rds16(f, off);
    if (nc >= 0) {
        size_t p = off + 10;
        int npt = nc > 0 ? (int)rd16(f, p + 2 * (size_t)(nc - 1)) + 1 : 0;
        for (int c = 1; c < nc; c++)
            if (rd16(f, p + 2 * (size_t)c) <= rd16(f, p + 2 * (size_t)(c - 1))) return; /* damaged */
        if (npt == 0) return;
        if (points_reserve(r, (size_t)npt)) return;
        size_t q = p + 2 * (size_t)nc;
        q += 2 + rd16(f, q); /* skip the hinting instructions */
        for (int k = 0; k < npt;) { /* flags, with repeats; r->on holds them for now */
            uint8_t fl = (uint8_t)rd8(f, q++);
            r->on[k++] = fl;
            if (fl & 8)
                for (uint32_t rep = rd8(f, q++); rep > 0 && k < npt; rep--) r->on[k++] = fl;
        }
        int32_t v = 0;
        for (int k = 0; k < npt; k++) {
            uint8_t fl = r->on[k];
            if (fl & 2) { int32_t dv = (int32_t)rd8(f, q++); v += (fl & 16) ? dv : -dv; }
            else if (!(fl & 16)) { v += rds16(f, q); q += 2; }
            r->px[k] = v;
        }
        v = 0;
        for (int k = 0; k < npt; k++) {
            uint8_t fl = r->on[k];
            if (fl & 4) { int32_t dv = (int32_t)rd8(f, q++); v += (fl & 32) ? dv : -dv; }
            else if (!(fl & 32)) { v += rds16(f, q); q += 2; }
            r->py[k] = v;
        }
        for (int k = 0; k < npt; k++) r->on[k] &= 1;
        int a = 0;
        for (int c = 0; c < nc; c++) {
            int b = (int)rd16(f, p + 2 * (size_t)c);
            add_contour(r, a, b, t);
            a = b + 1;
        }
        return;
    }
    /* A composite: components placed by offsets and an optional 2x2 matrix. */
    size_t p = off + 10;
    uint32_t flags;
    int guard = 0;
    do {
        flags = rd16(f, p);
        int sub = (int)rd16(f, p + 2);
        double dx, dy;
        p += 4;
        if (flags & 1) { dx = rds16(f, p); dy = rds16(f, p + 2); p += 4; }
        else { dx = (int8_t)rd8(f, p); dy = (int8_t)rd8(f, p + 1); p += 2; }
        if (!(flags & 2)) dx = dy = 0; /* point matching: rare; placed at the origin */
        double ma = 1, mb = 0, mc = 0, md = 1;
        if (flags & 8) { ma = md = rdf2dot14(f, p); p += 2; }
        else if (flags & 0x40) { ma = rdf2dot14(f, p); md = rdf2dot14(f, p + 2); p += 4; }
        else if (flags & 0x80) {
            ma = rdf2dot14(f, p); mb = rdf2dot14(f, p + 2); mc = rdf2dot14(f, p + 4); md = rdf2dot14(f, p + 6);
            p += 8;
        }
        /* component point (x, y) -> (ma x + mc y + dx, mb x + md y + dy), then t */
        xform u = {t->a * ma + t->b * mb, t->a * mc + t->b * md, t->c * ma + t->d * mb, t->c * mc + t->d * md,
                   t->a * dx + t->b * dy + t->e, t->c * dx + t->d * dy + t->f};
        add_glyph(r, f, sub, &u, depth + 1);
    } while ((flags & 0x20) && ++guard < 256 && !r->oom);
}

/* The missing-glyph box, 0.6 em wide: a hollow rectangle (outer and inner contours wound in
 * opposite directions), in em units under t. */
static void add_box(raster *r, const xform *t, double px)
{
    double sw = 0.07 < 1.0 / px ? 1.0 / px : 0.07; /* at least one pixel thick */
    double x0 = 0.1, x1 = 0.5, y0 = 0, y1 = 0.7;
    double P[2][4][2] = {{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}},
                         {{x0 + sw, y0 + sw}, {x0 + sw, y1 - sw}, {x1 - sw, y1 - sw}, {x1 - sw, y0 + sw}}};
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 4; k++) {
            const double *a = P[c][k], *b = P[c][(k + 1) % 4];
            add_edge(r, t->a * a[0] + t->b * a[1] + t->e, t->c * a[0] + t->d * a[1] + t->f,
                     t->a * b[0] + t->b * b[1] + t->e, t->c * b[0] + t->d * b[1] + t->f);
        }
}

/* ------------------------------------------------------------------ filling */
/* Fills r's edges (non-zero winding) into the canvas: for each of SUBROWS sample lines per pixel
 * row, the spans between crossings where the winding number is not zero add their exact length
 * within each pixel, so a pixel gets the share of its area that is inside the outline. */
static void fill(raster *r, uint8_t *canvas, int w, int h, uint8_t ink)
{
    if (r->ne == 0 || r->oom) return;
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    for (size_t k = 0; k < r->ne; k++) {
        const edge *e = &r->e[k];
        xmin = fmin(xmin, fmin(e->x0, e->x1)); xmax = fmax(xmax, fmax(e->x0, e->x1));
        ymin = fmin(ymin, fmin(e->y0, e->y1)); ymax = fmax(ymax, fmax(e->y0, e->y1));
    }
    if (!(xmax > 0 && ymax > 0 && xmin < w && ymin < h)) return; /* outside (or NaN) */
    int bx0 = xmin < 0 ? 0 : (int)floor(xmin), bx1 = xmax > w ? w : (int)ceil(xmax);
    int by0 = ymin < 0 ? 0 : (int)floor(ymin), by1 = ymax > h ? h : (int)ceil(ymax);
    int bw = bx1 - bx0;
    if (bw <= 0 || by1 <= by0) return;
    if (grow((void **)&r->cov, &r->cap_cov, (size_t)bw, sizeof *r->cov) ||
        grow((void **)&r->cr, &r->cap_cr, r->ne, sizeof *r->cr)) { r->oom = 1; return; }
    for (int row = by0; row < by1; row++) {
        memset(r->cov, 0, sizeof *r->cov * (size_t)bw);
        int any = 0;
        for (int sub = 0; sub < SUBROWS; sub++) {
            double sy = row + (sub + 0.5) / SUBROWS;
            size_t nc = 0;
            for (size_t k = 0; k < r->ne; k++) {
                const edge *e = &r->e[k];
                double lo = e->y0 < e->y1 ? e->y0 : e->y1, hi = e->y0 < e->y1 ? e->y1 : e->y0;
                if (!(sy >= lo && sy < hi)) continue; /* half-open: a shared vertex counts once */
                double x = e->x0 + (sy - e->y0) * (e->x1 - e->x0) / (e->y1 - e->y0);
                cross c = {(float)x, e->y1 > e->y0 ? 1 : -1};
                size_t j = nc++; /* insertion sort: a glyph has few crossings per line */
                while (j > 0 && r->cr[j - 1].x > c.x) { r->cr[j] = r->cr[j - 1]; j--; }
                r->cr[j] = c;
            }
            int wind = 0;
            double xa = 0;
            for (size_t k = 0; k < nc; k++) {
                int before = wind;
                wind += r->cr[k].wind;
                if (before == 0 && wind != 0) xa = r->cr[k].x;
                else if (before != 0 && wind == 0) {
                    double a = xa < bx0 ? bx0 : xa, b = r->cr[k].x > bx1 ? bx1 : r->cr[k].x;
                    if (b <= a) continue;
                    int pa = (int)floor(a), pb = (int)floor(b);
                    const float s = 1.0f / SUBROWS;
                    if (pa == pb) r->cov[pa - bx0] += (float)(b - a) * s;
                    else {
                        r->cov[pa - bx0] += (float)(pa + 1 - a) * s;
                        for (int q = pa + 1; q < pb; q++) r->cov[q - bx0] += s;
                        if (pb < bx1) r->cov[pb - bx0] += (float)(b - pb) * s;
                    }
                    any = 1;
                }
            }
        }
        if (!any) continue;
        uint8_t *dst = canvas + (size_t)row * w + bx0;
        for (int q = 0; q < bw; q++) {
            float a = r->cov[q] > 1 ? 1 : r->cov[q];
            if (a <= 0) continue;
            dst[q] = (uint8_t)lrintf(dst[q] + (ink - dst[q]) * a);
        }
    }
}

static void raster_free(raster *r)
{
    free(r->e); free(r->px); free(r->py); free(r->on); free(r->cr); free(r->cov);
}

/* Calls fn for each glyph of s laid out from (x, y): the edges of each glyph, one at a time. */
static int for_each_glyph(const font_set *fs, raster *r, double x, double y, const char *s, double px, int rotate,
                          void (*fn)(raster *, void *), void *user)
{
    item *it;
    long m = text_items(fs, s, px, &it);
    if (m < 0) return -1;
    double pen = 0;
    for (long k = 0; k < m && !r->oom; k++) {
        r->ne = 0;
        r->components = 0;
        double ox = rotate ? x : x + pen, oy = rotate ? y - pen : y;
        double sc = it[k].face < 0 ? px : px / fs->f[it[k].face].upem; /* boxes are in em units */
        /* font y points up; the canvas' down. Turned: the baseline runs up, the glyph's up left. */
        xform t = rotate ? (xform){0, -sc, -sc, 0, ox, oy} : (xform){sc, 0, 0, -sc, ox, oy};
        if (it[k].face < 0) add_box(r, &t, px);
        else add_glyph(r, &fs->f[it[k].face], it[k].glyph, &t, 0);
        fn(r, user);
        pen += it[k].adv;
    }
    free(it);
    return r->oom ? -1 : 0;
}

typedef struct draw_args { uint8_t *canvas; int w, h; uint8_t ink; } draw_args;

static void draw_cb(raster *r, void *user)
{
    draw_args *a = user;
    fill(r, a->canvas, a->w, a->h, a->ink);
}

int font_draw_text(const font_set *fs, uint8_t *canvas, int w, int h, double x, double y,
                   const char *s, double px, int rotate, uint8_t ink, nmt_err *err)
{
    raster r = {0};
    draw_args a = {canvas, w, h, ink};
    int rc = for_each_glyph(fs, &r, x, y, s, px, rotate, draw_cb, &a);
    raster_free(&r);
    return rc ? nmt_fail(err, NMT_ERR_NOMEM, "out of memory drawing text") : NMT_OK;
}

static void area_cb(raster *r, void *user)
{
    double a = 0;
    for (size_t k = 0; k < r->ne; k++) a += (double)r->e[k].x0 * r->e[k].y1 - (double)r->e[k].x1 * r->e[k].y0;
    *(double *)user += fabs(a) / 2;
}

double font_text_area(const font_set *fs, const char *s, double px)
{
    raster r = {0};
    double area = 0;
    int rc = for_each_glyph(fs, &r, 0, 0, s, px, 0, area_cb, &area);
    raster_free(&r);
    return rc ? NAN : area;
}
