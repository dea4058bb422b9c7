/* cmd_plot.c: `nmt plot`, the attention of one sentence pair as a grey-scale heat map (SVG, PNG
 * and/or PDF, like Figure 3 of Bahdanau et al.), from a model by forced decoding or from a
 * soft-matrix file written by `nmt align --soft`. It reads only the one line it plots from each
 * file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/paths.h"
#include "eval/aer.h"
#include "cmd.h"
#include "viz/draw.h"
#include "nmt.h"
#include "opt.h"
#include "viz/plot.h"
#include "text/tokenize.h"
#include "text/unicode.h"

static const char plot_usage[] =
    "Usage: nmt plot (--model FILE | --matrix FILE) --src FILE --tgt FILE --out PREFIX [options]\n"
    "Draws the attention of one sentence pair as a grey-scale heat map (weight 0 black, 1 white):\n"
    "source words along the top, target words down the left, one cell per (target, source) word.\n\n";

/* Line `want` (1-based) of path, without its newline (and a CR before it), checked for UTF-8.
 * Prints the error and returns -1 when it cannot. */
static int read_line(const char *path, long want, char **out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "nmt plot: error: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = 0;
    long k = 0;
    while (k < want && (n = getline(&line, &cap, f)) >= 0) k++;
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "nmt plot: error: %s: read error\n", path);
        free(line);
        return -1;
    }
    if (k < want) {
        fprintf(stderr, "nmt plot: error: --line %ld: %s has only %ld line%s\n", want, path, k, k == 1 ? "" : "s");
        free(line);
        return -1;
    }
    if (n > 0 && line[n - 1] == '\n') line[--n] = 0;
    if (n > 0 && line[n - 1] == '\r') line[--n] = 0;
    if ((size_t)n != strlen(line)) {
        fprintf(stderr, "nmt plot: error: %s:%ld: NUL byte in the line\n", path, want);
        free(line);
        return -1;
    }
    if (utf8_find_invalid(line, (size_t)n) >= 0) {
        fprintf(stderr, "nmt plot: error: %s:%ld: invalid UTF-8\n", path, want);
        free(line);
        return -1;
    }
    *out = line;
    return 0;
}

/* The words of line `want` of path; prints the error and returns -1 when there are none. */
static int line_words(const char *path, long want, char **buf, char ***words)
{
    char *line;
    *buf = NULL;
    *words = NULL;
    if (read_line(path, want, &line)) return -1;
    int n = plot_split_words(line, buf, words);
    free(line);
    if (n < 0) fprintf(stderr, "nmt plot: error: out of memory\n");
    else if (n == 0) fprintf(stderr, "nmt plot: error: %s:%ld: empty sentence: nothing to plot\n", path, want);
    return n > 0 ? n : -1;
}

/* The pair through the model's pipelines and force-decoded; its attention merged into the
 * words a user reads (a subword model's pieces summed, docs/SUBWORDS.md) into a. words[0..1]
 * get the words (space-separated, to free), which the labels are then made of. */
static int model_align(nmt_model *m, const char *src, const char *tgt, nmt_alignment *a, char *words[2], nmt_err *err)
{
    nmt_text_opts to = nmt_text_default_opts();
    nmt_text *tp[2] = {NULL, NULL};
    char *line[2] = {NULL, NULL};
    nmt_word_map map[2] = {{0, NULL, 0}, {0, NULL, 0}};
    nmt_decoder *d = NULL;
    nmt_alignment t = {0};
    nmt_translate_opts o = nmt_translate_default_opts();
    o.batch = 1;
    size_t cap = 0;
    float *buf = NULL;
    int rc = nmt_text_init_model(&tp[0], &to, m, NMT_SOURCE, err);
    if (!rc) rc = nmt_text_init_model(&tp[1], &to, m, NMT_TARGET, err);
    if (!rc) rc = cmd_encode_line(tp[0], src, &line[0], &map[0], &words[0], err);
    if (!rc) rc = cmd_encode_line(tp[1], tgt, &line[1], &map[1], &words[1], err);
    if (!rc) rc = nmt_decoder_init(&d, m, &o, err);
    if (!rc) rc = nmt_force_align(d, (const char *const *)&line[0], (const char *const *)&line[1], 1, &t, err);
    if (!rc && t.attention) rc = cmd_alignment_words(&t, &map[0], &map[1], a, &buf, &cap, err);
    if (rc || !t.attention) { free(buf); a->attention = NULL; }
    nmt_alignment_free(&t, 1);
    nmt_decoder_free(d);
    for (int k = 0; k < 2; k++) {
        nmt_text_free(tp[k]);
        free(line[k]);
        free((int *)map[k].word_of);
    }
    return rc;
}

/* The attention of the pair from the model: weights [rows x stride] and the shape to draw; the
 * words as the model's pipeline gives them replace *sw, *ns (and tw, nt) with their buffers. */
static int from_model(const char *model, char **words[2], int n[2], char *bufs[2], int eos, float **w, int *rows,
                      int *cols, int *stride)
{
    nmt_err err;
    nmt_model *m = NULL;
    if (nmt_model_load(&m, model, &err)) {
        fprintf(stderr, "nmt plot: error: %s\n", err.msg);
        return -1;
    }
    /* the sentence as the model will read it: words joined by single spaces */
    char *text[2] = {NULL, NULL}, *seen[2] = {NULL, NULL};
    nmt_alignment a = {0};
    int rc = -1, ns = n[0];
    for (int k = 0; k < 2; k++) {
        size_t len = 1;
        for (int i = 0; i < n[k]; i++) len += strlen(words[k][i]) + 1;
        if (!(text[k] = calloc(1, len))) goto out;
        for (int i = 0; i < n[k]; i++) { if (i) strcat(text[k], " "); strcat(text[k], words[k][i]); }
    }
    if (model_align(m, text[0], text[1], &a, seen, &err)) {
        fprintf(stderr, "nmt plot: error: %s\n", err.msg);
        goto out;
    }
    if (!a.attention) {
        fprintf(stderr, "nmt plot: error: %s is an %s model: it has no attention to plot\n", model,
                nmt_arch_name(nmt_model_config(m)->arch));
        goto out;
    }
    for (int k = 0; k < 2; k++) { /* the labels: the words as the model's pipeline gives them */
        free(bufs[k]);
        free(words[k]);
        n[k] = plot_split_words(seen[k], &bufs[k], &words[k]);
        if (n[k] < 0) { fprintf(stderr, "nmt plot: error: out of memory\n"); goto out; }
    }
    ns = n[0];
    if (a.n_src < ns)
        fprintf(stderr, "[W::plot] the model reads only the first %d of the %d source words\n", a.n_src, ns);
    *stride = a.n_src + 1;
    *cols = eos ? a.n_src + 1 : a.n_src;
    *rows = eos ? a.n_tgt + 1 : (a.n_tgt < n[1] ? a.n_tgt : n[1]);
    *w = a.attention;
    a.attention = NULL;
    rc = 0;
out:
    if (rc < 0 && !text[1]) fprintf(stderr, "nmt plot: error: out of memory\n");
    free(a.attention);
    nmt_model_free(m);
    for (int k = 0; k < 2; k++) { free(text[k]); free(seen[k]); }
    return rc;
}

/* Sentence `want` of a soft-matrix file, which must have one row per target word and one column
 * per source word. */
static int from_matrix(const char *path, long want, const char *src, int ns, const char *tgt, int nt, float **w)
{
    aer_soft s;
    nmt_err err;
    if (aer_soft_read(&s, path, &err)) {
        fprintf(stderr, "nmt plot: error: %s\n", err.msg);
        return -1;
    }
    int rc = -1;
    if ((size_t)want > s.n_sent)
        fprintf(stderr, "nmt plot: error: --line %ld: %s has only %zu sentence%s\n", want, path, s.n_sent,
                s.n_sent == 1 ? "" : "s");
    else if (s.cols[want - 1] != ns || s.rows[want - 1] != nt)
        fprintf(stderr, "nmt plot: error: %s:%ld: sentence %ld is %d x %d (target x source words), but %s:%ld has %d "
                "words and %s:%ld has %d\n", path, s.line[want - 1], want, s.rows[want - 1], s.cols[want - 1], tgt,
                want, nt, src, want, ns);
    else if (!(*w = malloc(sizeof **w * (size_t)ns * nt)))
        fprintf(stderr, "nmt plot: error: out of memory\n");
    else {
        for (size_t k = 0; k < (size_t)ns * nt; k++) (*w)[k] = (float)s.val[s.off[want - 1] + k];
        rc = 0;
    }
    aer_soft_free(&s);
    return rc;
}

/* --format: svg, png, pdf or a comma list of them; both = svg,png; all = the three. Returns the
 * set of enum draw_format bits, or 0 for anything else. */
static int parse_format(const char *v)
{
    if (!strcmp(v, "both")) return DRAW_SVG | DRAW_PNG;
    if (!strcmp(v, "all")) return DRAW_SVG | DRAW_PNG | DRAW_PDF;
    int set = 0;
    for (const char *p = v;;) {
        size_t n = strcspn(p, ",");
        int f = n == 3 && !strncmp(p, "svg", 3) ? DRAW_SVG : n == 3 && !strncmp(p, "png", 3) ? DRAW_PNG
              : n == 3 && !strncmp(p, "pdf", 3) ? DRAW_PDF : 0;
        if (!f) return 0;
        set |= f;
        if (!p[n]) return set;
        p += n + 1;
    }
}

static const char *format_opt(void *dst, const char *val, int nth)
{
    (void)nth;
    int f = parse_format(val);
    if (!f) return "expected svg, png, pdf, a comma list of them, both or all";
    *(int *)dst = f;
    return NULL;
}

/* Labels with characters no installed font has are drawn with boxes: say so once. */
static void warn_missing(const draw_fonts *fonts, const plot_spec *spec)
{
    int n = 0;
    for (int r = 0; r < spec->rows; r++) n += draw_missing_glyphs(fonts, spec->row_words[r]) > 0;
    for (int c = 0; c < spec->cols; c++) n += draw_missing_glyphs(fonts, spec->col_words[c]) > 0;
    if (n)
        fprintf(stderr, "[W::plot] %d label%s hold%s characters that no installed font has (drawn as boxes)\n", n,
                n == 1 ? "" : "s", n == 1 ? "s" : "");
}

/* The files --out names: PREFIX.svg, .png and/or .pdf as format asks, or out itself when it
 * names its format (format 0). Returns how many (up to 3), or -1 for lack of memory; free
 * path[0..3) either way (unused entries are NULL). */
static int output_paths(const char *out, int format, char *path[3])
{
    size_t n = strlen(out) + 5;
    int k = 0;
    path[0] = path[1] = path[2] = NULL;
    for (int f = DRAW_SVG; f <= DRAW_PDF; f <<= 1) {
        if (format ? !(format & f) : f != draw_format_of(out)) continue;
        if (!(path[k] = malloc(n))) return -1;
        if (format) snprintf(path[k], n, "%s.%s", out, draw_format_name(f));
        else snprintf(path[k], n, "%s", out);
        k++;
    }
    return k;
}

/* No output may be an input (a --out that names the model or a corpus would destroy it):
 * checked before anything is read. */
static int check_outputs(const char *const in_path[5], char *const path[3], int n)
{
    static const char *const in_role[5] = {"the model", "the soft matrices", "the source sentences",
                                           "the target sentences", "the font"};
    path_role in[5], out[3];
    for (int k = 0; k < 5; k++) in[k] = (path_role){in_path[k], in_role[k]};
    for (int k = 0; k < n; k++) out[k] = (path_role){path[k], "the plot"};
    nmt_err err;
    if (!path_check_outputs(in, 5, out, n, &err)) return CMD_OK;
    fprintf(stderr, "nmt plot: error: %s\n", err.msg);
    return CMD_ERR;
}

/* Draws spec into each of path[0..n), printing each name once written. */
static int write_outputs(const plot_spec *spec, char *const path[3], int n, const char *font)
{
    nmt_err err;
    draw_fonts *fonts = NULL;
    if (draw_fonts_open(&fonts, font, &err)) {
        fprintf(stderr, "nmt plot: error: %s\n", err.msg);
        return CMD_ERR;
    }
    warn_missing(fonts, spec);
    int rc = CMD_OK;
    for (int k = 0; !rc && k < n; k++) {
        if (plot_write(spec, fonts, path[k], &err)) { fprintf(stderr, "nmt plot: error: %s\n", err.msg); rc = CMD_ERR; }
        else printf("%s\n", path[k]);
    }
    draw_fonts_free(fonts);
    return rc;
}

int cmd_plot(int argc, char **argv)
{
    const char *model = NULL, *matrix = NULL, *src = NULL, *tgt = NULL, *out = NULL, *title = NULL, *font = NULL;
    long line = 1, cell = 0;
    int format = 0, eos = 0, raw = 0;
    opt table[] = {
        OPT_STR("--model", &model, "FILE", "an RNNsearch model: force-decode the pair and plot its attention"),
        OPT_STR("--matrix", &matrix, "FILE", "soft matrices as `nmt align --soft` writes them: plot sentence N of\n"
                "them (no model needed; --src/--tgt give the words)"),
        OPT_STR("--src", &src, "FILE", "source sentences, tokenized (raw for a --model trained on raw text or\n"
                "with subword units), one per line"),
        OPT_STR("--tgt", &tgt, "FILE", "target sentences, as --src"),
        OPT_LONG("--line", &line, 1, 1L << 40, "N", "the pair to plot, 1-based (default {})"),
        OPT_STR("--out", &out, "PREFIX|FILE", "writes PREFIX.svg, PREFIX.png and/or PREFIX.pdf (see --format); a\n"
                "name ending in .svg, .png or .pdf is written alone, in that format"),
        OPT_FN("--format", &format, format_opt, "FMT", "svg, png, pdf, a comma list of them (svg,pdf), both (svg,png) or\n"
               "all (default both)"),
        OPT_LONG("--cell", &cell, PLOT_MIN_CELL, PLOT_MAX_CELL, "PX", "side of a cell in pixels, {lo}..{hi} (default: from the sentence\n"
                 "lengths, 16..36); labels are sized to fit their cells"),
        OPT_FLAG("--eos", &eos, 1, "add the EOS row and column (--model only)"),
        OPT_FLAG("--raw-labels", &raw, 1, "label with the tokens as given; by default Moses' escapes are\n"
                 "undone for display (l&apos; shows as l')"),
        OPT_STR("--title", &title, "TEXT", "a title line above the plot"),
        OPT_STR("--font", &font, "FILE", "a font file (TrueType, OpenType) for the labels (default: $NMT_FONT,\n"
                "else DejaVu Sans from fonts-dejavu-core); characters it lacks come\n"
                "from the other installed fonts (CJK from fonts-droid-fallback), and\n"
                "characters no font has are drawn as boxes"),
        OPT_END,
    };
    opt_cmd cmd = {"plot", plot_usage, "\nWords longer than 18 ems are shortened with an ellipsis. Prints the files written.\n",
                 table, 0, NULL};
    int nargs, prc = opt_parse(&cmd, argc, argv, NULL, &nargs);
    if (prc != OPT_GO) return prc;
    if ((prc = cmd_one_model("plot", opt_given(&cmd, "--model")))) return prc;
    if (!model == !matrix) {
        fprintf(stderr, "nmt plot: error: give either --model or --matrix (nmt plot --help)\n");
        return CMD_USAGE;
    }
    if (!src || !tgt || !out) { fprintf(stderr, "nmt plot: error: --src, --tgt and --out are required (nmt plot --help)\n"); return CMD_USAGE; }
    /* --out FILE.png: that file alone (a --format with it must say the same) */
    int named = draw_format_of(out);
    if (named && format && format != named) {
        fprintf(stderr, "nmt plot: error: --out %s names its format, but --format asks for another: give a prefix\n", out);
        return CMD_USAGE;
    }
    format = named ? 0 : format ? format : DRAW_SVG | DRAW_PNG;
    if (eos && matrix) { fprintf(stderr, "nmt plot: error: --eos needs --model: soft matrices have no EOS row or column\n"); return CMD_USAGE; }

    if (!font) font = getenv("NMT_FONT");
    if (font && !*font) font = NULL;
    char *path[3], *sbuf = NULL, *tbuf = NULL, **sw = NULL, **tw = NULL;
    float *w = NULL;
    int rc = CMD_ERR, npath = output_paths(out, format, path), ns = -1, nt = -1;
    if (npath < 0) fprintf(stderr, "nmt plot: error: out of memory\n");
    else if (check_outputs((const char *const[5]){model, matrix, src, tgt, font}, path, npath) == CMD_OK)
        ns = line_words(src, line, &sbuf, &sw);
    if (ns > 0) nt = line_words(tgt, line, &tbuf, &tw);
    int rows = nt, cols = ns, stride = ns;
    if (nt < 0) goto done;
    char **wl[2] = {sw, tw}, *bl[2] = {sbuf, tbuf};
    int nl[2] = {ns, nt};
    rc = model ? from_model(model, wl, nl, bl, eos, &w, &rows, &cols, &stride) : from_matrix(matrix, line, src, ns, tgt, nt, &w);
    sw = wl[0], tw = wl[1], sbuf = bl[0], tbuf = bl[1], ns = nl[0], nt = nl[1];
    if (rc) { rc = CMD_ERR; goto done; }
    rc = CMD_ERR;
    /* labels: the words as text (the model has read them as tokens), then "</s>" for EOS */
    for (int k = 0; !raw && k < nt; k++) detok_unescape_word(tw[k]);
    for (int k = 0; !raw && k < ns; k++) detok_unescape_word(sw[k]);
    const char **rl = malloc(sizeof *rl * (size_t)rows), **cl = malloc(sizeof *cl * (size_t)cols);
    if (!rl || !cl) fprintf(stderr, "nmt plot: error: out of memory\n");
    else {
        for (int r = 0; r < rows; r++) rl[r] = r < nt && !(eos && r == rows - 1) ? tw[r] : "</s>";
        for (int c = 0; c < cols; c++) cl[c] = c < ns && !(eos && c == cols - 1) ? sw[c] : "</s>";
        plot_spec spec = {rows, cols, rl, cl, w, stride, title, (int)cell};
        rc = write_outputs(&spec, path, npath, font);
    }
    free(rl);
    free(cl);
done:
    for (int k = 0; k < 3; k++) free(path[k]);
    free(w);
    free(sbuf);
    free(tbuf);
    free(sw);
    free(tw);
    return rc;
}
