/* cmd_plot.c: `nmt plot`, the attention of one sentence pair as a grey-scale heat map (SVG and/or
 * PNG, like Figure 3 of Bahdanau et al.), from a model by forced decoding or from a soft-matrix
 * file written by `nmt align --soft`. It reads only the one line it plots from each file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/aer.h"
#include "cmd.h"
#include "viz/font.h"
#include "nmt.h"
#include "opt.h"
#include "viz/plot.h"
#include "text/tokenize.h"
#include "text/unicode.h"

enum { OUT_SVG = 1, OUT_PNG = 2 };

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

/* The attention of the pair from the model: weights [rows x stride] and the shape to draw. */
static int from_model(const char *model, char **sw, int ns, char **tw, int nt, int eos, float **w, int *rows,
                      int *cols, int *stride)
{
    nmt_err err;
    nmt_model *m = NULL;
    if (nmt_model_load(&m, model, &err)) {
        fprintf(stderr, "nmt plot: error: %s\n", err.msg);
        return -1;
    }
    /* the sentence as the model will read it: words joined by single spaces */
    size_t ls = 1, lt = 1;
    for (int k = 0; k < ns; k++) ls += strlen(sw[k]) + 1;
    for (int k = 0; k < nt; k++) lt += strlen(tw[k]) + 1;
    char *src = calloc(1, ls), *tgt = calloc(1, lt);
    nmt_decoder *d = NULL;
    nmt_alignment a = {0};
    int rc = -1;
    if (!src || !tgt) {
        fprintf(stderr, "nmt plot: error: out of memory\n");
        goto out;
    }
    for (int k = 0; k < ns; k++) { if (k) strcat(src, " "); strcat(src, sw[k]); }
    for (int k = 0; k < nt; k++) { if (k) strcat(tgt, " "); strcat(tgt, tw[k]); }
    nmt_translate_opts o = nmt_translate_default_opts();
    o.batch = 1;
    const char *sp[1] = {src}, *tp[1] = {tgt};
    if (nmt_decoder_init(&d, m, &o, &err) || nmt_force_align(d, sp, tp, 1, &a, &err)) {
        fprintf(stderr, "nmt plot: error: %s\n", err.msg);
        goto out;
    }
    if (!a.attention) {
        fprintf(stderr, "nmt plot: error: %s is an %s model: it has no attention to plot\n", model,
                nmt_arch_name(nmt_model_config(m)->arch));
        goto out;
    }
    if (a.n_src < ns)
        fprintf(stderr, "[W::plot] the model reads only the first %d of the %d source words\n", a.n_src, ns);
    *stride = a.n_src + 1;
    *cols = eos ? a.n_src + 1 : a.n_src;
    *rows = eos ? a.n_tgt + 1 : (a.n_tgt < nt ? a.n_tgt : nt);
    *w = a.attention;
    a.attention = NULL;
    rc = 0;
out:
    nmt_alignment_free(&a, 1);
    nmt_decoder_free(d);
    nmt_model_free(m);
    free(src);
    free(tgt);
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

/* The file of the sans-serif TrueType font that fontconfig's fc-match names (malloc'd), or NULL
 * when fc-match is not installed or names none. */
static char *fc_match(void)
{
    FILE *p = popen("fc-match --format='%{file}' 'sans-serif:fontformat=TrueType' 2>/dev/null", "r");
    if (!p) return NULL;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    int st = pclose(p);
    buf[n] = 0;
    return st == 0 && n > 0 ? strdup(buf) : NULL;
}

static int write_outputs(const plot_spec *spec, const char *prefix, int format, const char *font)
{
    nmt_err err;
    font_set *fonts = NULL;
    if (!font) font = getenv("NMT_FONT");
    if (font && !*font) font = NULL;
    /* the PNG cannot do without a font; the SVG only measures its labels with one */
    int frc = font_set_open(&fonts, font, &err);
    char *fc;
    if (frc && !font && (fc = fc_match())) { /* none where Debian puts them: ask fontconfig */
        frc = font_set_open(&fonts, fc, &err);
        free(fc);
    }
    if (frc && (format & OUT_PNG)) {
        fprintf(stderr, "nmt plot: error: %s (--format svg needs no font)\n", err.msg);
        return CMD_ERR;
    }
    if (frc && font) fprintf(stderr, "[W::plot] %s: label widths are estimated\n", err.msg);
    size_t n = strlen(prefix) + 5;
    char *path = malloc(n);
    int rc = CMD_OK;
    if (!path) { fprintf(stderr, "nmt plot: error: out of memory\n"); rc = CMD_ERR; }
    if (!rc && (format & OUT_SVG)) {
        snprintf(path, n, "%s.svg", prefix);
        if (plot_svg_write(spec, fonts, path, &err)) { fprintf(stderr, "nmt plot: error: %s\n", err.msg); rc = CMD_ERR; }
        else printf("%s\n", path);
    }
    if (!rc && (format & OUT_PNG)) {
        snprintf(path, n, "%s.png", prefix);
        if (plot_png_write(spec, fonts, path, &err)) { fprintf(stderr, "nmt plot: error: %s\n", err.msg); rc = CMD_ERR; }
        else printf("%s\n", path);
    }
    free(path);
    font_set_free(fonts);
    return rc;
}

int cmd_plot(int argc, char **argv)
{
    const char *model = NULL, *matrix = NULL, *src = NULL, *tgt = NULL, *out = NULL, *title = NULL, *font = NULL;
    long line = 1, cell = 0;
    int format = OUT_SVG | OUT_PNG, eos = 0, raw = 0, fmt_idx = 2;
    opt table[] = {
        OPT_STR("--model", &model, "FILE", "an RNNsearch model: force-decode the pair and plot its attention"),
        OPT_STR("--matrix", &matrix, "FILE", "soft matrices as `nmt align --soft` writes them: plot sentence N of\n"
                "them (no model needed; --src/--tgt give the words)"),
        OPT_STR("--src", &src, "FILE", "source sentences, tokenized, one per line"),
        OPT_STR("--tgt", &tgt, "FILE", "target sentences, tokenized, one per line"),
        OPT_LONG("--line", &line, 1, 1L << 40, "N", "the pair to plot, 1-based (default {})"),
        OPT_STR("--out", &out, "PREFIX", "writes PREFIX.svg and/or PREFIX.png"),
        OPT_CHOICE("--format", &fmt_idx, "svg|png|both", "svg, png or both (default {})"),
        OPT_LONG("--cell", &cell, PLOT_MIN_CELL, PLOT_MAX_CELL, "PX", "side of a cell in pixels, {lo}..{hi} (default: from the sentence\n"
                 "lengths, 16..36); labels are sized to fit their cells"),
        OPT_FLAG("--eos", &eos, 1, "add the EOS row and column (--model only)"),
        OPT_FLAG("--raw-labels", &raw, 1, "label with the tokens as given; by default Moses' escapes are\n"
                 "undone for display (l&apos; shows as l')"),
        OPT_STR("--title", &title, "TEXT", "a title line above the plot"),
        OPT_STR("--font", &font, "FILE", "TrueType font for the PNG labels (default: $NMT_FONT, else DejaVu\n"
                "Sans from fonts-dejavu-core, else the one fc-match names; CJK from\n"
                "fonts-droid-fallback when installed); characters no font has are\n"
                "drawn as boxes"),
        OPT_END,
    };
    opt_cmd cmd = {"plot", plot_usage, "\nWords longer than 18 ems are shortened with an ellipsis. Prints the files written.\n",
                 table, 0, NULL};
    int nargs, prc = opt_parse(&cmd, argc, argv, NULL, &nargs);
    if (prc != OPT_GO) return prc;
    format = fmt_idx == 0 ? OUT_SVG : fmt_idx == 1 ? OUT_PNG : OUT_SVG | OUT_PNG;
    if (!model == !matrix) {
        fprintf(stderr, "nmt plot: give either --model or --matrix (nmt plot --help)\n");
        return CMD_USAGE;
    }
    if (!src || !tgt || !out) { fprintf(stderr, "nmt plot: --src, --tgt and --out are required (nmt plot --help)\n"); return CMD_USAGE; }
    if (eos && matrix) { fprintf(stderr, "nmt plot: --eos needs --model: soft matrices have no EOS row or column\n"); return CMD_USAGE; }

    char *sbuf = NULL, *tbuf = NULL, **sw = NULL, **tw = NULL;
    float *w = NULL;
    int rc = CMD_ERR, ns = line_words(src, line, &sbuf, &sw), nt = ns < 0 ? -1 : line_words(tgt, line, &tbuf, &tw);
    int rows = nt, cols = ns, stride = ns;
    if (nt < 0) goto done;
    if (model ? from_model(model, sw, ns, tw, nt, eos, &w, &rows, &cols, &stride)
              : from_matrix(matrix, line, src, ns, tgt, nt, &w))
        goto done;
    /* labels: the words as text (the model has read them as tokens), then "</s>" for EOS */
    for (int k = 0; !raw && k < nt; k++) detok_unescape_word(tw[k]);
    for (int k = 0; !raw && k < ns; k++) detok_unescape_word(sw[k]);
    const char **rl = malloc(sizeof *rl * (size_t)rows), **cl = malloc(sizeof *cl * (size_t)cols);
    if (!rl || !cl) fprintf(stderr, "nmt plot: error: out of memory\n");
    else {
        for (int r = 0; r < rows; r++) rl[r] = r < nt && !(eos && r == rows - 1) ? tw[r] : "</s>";
        for (int c = 0; c < cols; c++) cl[c] = c < ns && !(eos && c == cols - 1) ? sw[c] : "</s>";
        plot_spec spec = {rows, cols, rl, cl, w, stride, title, (int)cell};
        rc = write_outputs(&spec, out, format, font);
    }
    free(rl);
    free(cl);
done:
    free(w);
    free(sbuf);
    free(tbuf);
    free(sw);
    free(tw);
    return rc;
}
