/* cmd_report.c: `nmt report`, Table 1 (BLEU on all sentences and on those without unknown words)
 * and Figure 2 (BLEU against source length, as TSV, SVG and PNG) of Bahdanau et al. 2014 for
 * several systems' outputs on one test set. Reads the files, prints Markdown tables. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/paths.h"
#include "eval/bleu.h"
#include "viz/chart.h"
#include "cmd.h"
#include "data/corpus.h"
#include "viz/draw.h"
#include "nmt.h"
#include "opt.h"
#include "eval/report.h"
#include "text/unicode.h"
#include "data/vocab.h"

#define MAX_SYSTEMS 64
#define MAX_SYSTEMS_STR "64"

static const char report_usage[] =
    "Usage: nmt report --src FILE --ref FILE --hyp FILE [--hyp FILE ...] [options]\n"
    "\n"
    "Table 1 and Figure 2 of Bahdanau et al. (2014) for one or more systems on one test set:\n"
    "corpus BLEU on all sentences and on the sentences with no unknown word in the source and\n"
    "the reference (\"No UNK\"), and BLEU by source-sentence length in buckets of 10 words\n"
    "(0-9, 10-19, ...: both bounds inclusive; empty buckets are left out). BLEU is sacreBLEU's,\n"
    "the same number `nmt bleu REF < HYP` prints. Line k of every file is sentence k.\n"
    "\n";

static const char report_after[] =
    "\n"
    "Prints both tables as Markdown with the sentence count of every subset.\n"
    "Exit status: 0 success, 1 unreadable or mismatched input, 2 bad usage.\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "nmt report: error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (nmt report --help shows the usage)\n");
    va_end(ap);
    return CMD_USAGE;
}

static int runtime_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int runtime_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "nmt report: error: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return CMD_ERR;
}

/* ------------------------------------------------------------------ options */
struct args {
    const char *src, *ref, *unk_vocab, *src_vocab, *tgt_vocab, *out, *title, *font, *labels;
    const char *hyp[MAX_SYSTEMS], *nounk[MAX_SYSTEMS];
    int nhyp, nnounk;
    bleu_opts bleu;
};

/* --hyp and --hyp-nounk: each use adds a file to its list */
struct file_list {
    const char **v;
    int *n;
};

static const char *add_file(void *dst, const char *val, int nth)
{
    (void)nth;
    struct file_list *l = dst;
    if (*l->n == MAX_SYSTEMS) return "more than " MAX_SYSTEMS_STR " files";
    l->v[(*l->n)++] = val;
    return NULL;
}

/* Returns OPT_GO, or the exit status after --help or a usage error. */
static int parse_args(struct args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    struct file_list hyps = {a->hyp, &a->nhyp}, nounks = {a->nounk, &a->nnounk};
    opt table[] = {
        OPT_STR("--src", &a->src, "FILE", "source sentences, tokenized as the model reads them (the\n"
                "lengths are their blank-separated words)"),
        OPT_STR("--ref", &a->ref, "FILE", "reference translations"),
        OPT_FN("--hyp", &hyps, add_file, "FILE", "one system's translations; repeat for each system"),
        OPT_FN("--hyp-nounk", &nounks, add_file, "FILE", "the same system decoded with `nmt translate --no-unk`, used for\n"
               "the No-UNK column; give none or one per --hyp, in the same order\n"
               "(without them the No-UNK column scores the --hyp files, and says so)"),
        OPT_STR("--labels", &a->labels, "A,B,...", "system names, one per --hyp (default: the file names)"),
        OPT_STR("--unk-vocab", &a->unk_vocab, "MODEL", "unknown = outside the model's source/target shortlist vocabularies"),
        OPT_STR("--src-vocab-file", &a->src_vocab, "FILE", "the same from vocabulary files: one word per line, or `nmt vocab`\n"
                "output (id<TAB>word<TAB>count); without a vocabulary there is no\n"
                "No-UNK column"),
        OPT_STR("--tgt-vocab-file", &a->tgt_vocab, "FILE", "the target side's, with --src-vocab-file"),
        OPT_FN("--tokenize", &a->bleu.tokenize, cmd_parse_bleu_tok, "13a|intl|none", "BLEU tokenizer (default 13a)"),
        OPT_STR("--out", &a->out, "PREFIX", "write Figure 2 as PREFIX.tsv (bucket, sentences, one BLEU column\n"
                "per system), PREFIX.svg and PREFIX.png"),
        OPT_STR("--title", &a->title, "TEXT", "the figure's title (default \"BLEU by source sentence length\")"),
        OPT_STR("--font", &a->font, "FILE", "TrueType font for the PNG text (default: $NMT_FONT, else DejaVu Sans)"),
        OPT_OLD("--src-vocab", "--src-vocab-file"), /* nmt train's --src-vocab is a size */
        OPT_OLD("--tgt-vocab", "--tgt-vocab-file"),
        OPT_END,
    };
    opt_cmd c = {"report", report_usage, report_after, table, 0, NULL};
    int nargs, rc = opt_parse(&c, argc, argv, NULL, &nargs);
    if (rc != OPT_GO) return rc;
    if (!a->src || !a->ref) return usage_error("--src and --ref are required");
    if (a->nhyp == 0) return usage_error("no --hyp file: give one per system");
    if (a->nnounk && a->nnounk != a->nhyp)
        return usage_error("%d --hyp-nounk file%s for %d --hyp file%s: give one per --hyp, in the same order",
                           a->nnounk, a->nnounk == 1 ? "" : "s", a->nhyp, a->nhyp == 1 ? "" : "s");
    if (a->unk_vocab && (a->src_vocab || a->tgt_vocab))
        return usage_error("give either --unk-vocab or --src-vocab-file with --tgt-vocab-file, not both");
    if (!a->src_vocab != !a->tgt_vocab) return usage_error("--src-vocab-file and --tgt-vocab-file go together");
    if (a->nnounk && !a->unk_vocab && !a->src_vocab)
        return usage_error("--hyp-nounk needs a vocabulary to find the No-UNK sentences "
                           "(--unk-vocab MODEL or --src-vocab-file/--tgt-vocab-file)");
    if (a->out && !*a->out) return usage_error("--out needs a non-empty prefix");
    return OPT_GO;
}

/* Splits --labels at commas into labels[0..nhyp); each must be non-empty, valid UTF-8 and free
 * of control characters (they go into a TSV header, a Markdown table and the figure). */
static int split_labels(char *list, const char **labels, int nhyp)
{
    int n = 0;
    for (char *p = list;; n++) {
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        if (n < nhyp) labels[n] = p;
        if (!comma) { n++; break; }
        p = comma + 1;
    }
    if (n != nhyp)
        return usage_error("--labels gives %d label%s for %d system%s (--hyp)", n, n == 1 ? "" : "s", nhyp,
                           nhyp == 1 ? "" : "s");
    for (int k = 0; k < n; k++) {
        if (!*labels[k]) return usage_error("--labels: label %d is empty", k + 1);
        if (utf8_find_invalid(labels[k], strlen(labels[k])) >= 0)
            return usage_error("--labels: label %d is not valid UTF-8", k + 1);
        for (const char *c = labels[k]; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                return usage_error("--labels: label %d holds a control character", k + 1);
    }
    return CMD_OK;
}

/* The last path component, for default labels. */
static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

/* ------------------------------------------------------------------ output */
/* A Markdown table cell: '|' escaped so that a label cannot split the row. */
static void md_cell(const char *s)
{
    for (; *s; s++) {
        if (*s == '|') putchar('\\');
        putchar(*s);
    }
}

static void print_table1(const report *r, const struct args *a, const char *const *labels, const vocab *sv,
                         const vocab *tv)
{
    printf("## Table 1: BLEU (sacreBLEU, tok:%s, one reference)\n\n", bleu_tokenize_name(a->bleu.tokenize));
    if (r->has_nounk) {
        printf("| System | All (%ld sentence%s) | No UNK (%ld sentence%s) |\n|:--|--:|--:|\n", r->n,
               r->n == 1 ? "" : "s", r->n_known, r->n_known == 1 ? "" : "s");
    } else {
        printf("| System | All (%ld sentence%s) |\n|:--|--:|\n", r->n, r->n == 1 ? "" : "s");
    }
    for (int s = 0; s < r->nsys; s++) {
        printf("| ");
        md_cell(labels[s]);
        printf(" | %.2f |", r->bleu_all[s]);
        if (r->has_nounk) {
            if (r->n_known) printf(" %.2f |", r->bleu_nounk[s]);
            else printf(" n/a |");
        }
        putchar('\n');
    }
    putchar('\n');
    if (!r->has_nounk) {
        printf("No UNK: not computed; it needs the model's vocabularies (--unk-vocab MODEL, or\n"
               "--src-vocab-file FILE --tgt-vocab-file FILE) to tell which words are unknown.\n\n");
        return;
    }
    printf("No UNK: the %ld of %ld sentences with no unknown word in the source or the reference;\n", r->n_known,
           r->n);
    if (a->unk_vocab)
        printf("unknown = outside the vocabularies of the model %s (%d source, %d target entries).\n", a->unk_vocab,
               sv->n, tv->n);
    else
        printf("unknown = outside the vocabularies %s (%d source entries) and %s (%d target entries).\n",
               a->src_vocab, sv->n, a->tgt_vocab, tv->n);
    printf("%ld sentences have an unknown source word, %ld an unknown reference word.\n", r->n_unk_src, r->n_unk_ref);
    if (!r->n_known) printf("No sentence is free of unknown words: the No-UNK column is n/a.\n");
    if (a->nnounk) {
        printf("No-UNK hypotheses: the --hyp-nounk files, decoded with UNK disallowed, as in the paper.\n\n");
    } else {
        printf("No-UNK hypotheses: the normal --hyp files (no --hyp-nounk given); the paper scores this\n"
               "column on translations decoded with UNK disallowed (`nmt translate --no-unk`).\n\n");
    }
}

static void print_figure2(const report *r, const char *const *labels)
{
    printf("## Figure 2: BLEU by source sentence length\n\n"
           "Buckets of %d source words, both bounds inclusive (10-19: 10 to 19 words); longest source: %d words.\n",
           REPORT_BUCKET_WORDS, r->max_words);
    int empty = 0;
    for (int b = 0; b < r->nbuckets; b++) empty += r->bucket_n[b] == 0;
    if (empty) {
        printf("Empty buckets, left out of this table, the TSV and the plot:");
        for (int b = 0, k = 0; b < r->nbuckets; b++) {
            if (r->bucket_n[b]) continue;
            char lab[32];
            report_bucket_label(lab, sizeof lab, b);
            printf("%s %s", k++ ? "," : "", lab);
        }
        printf(".\n");
    }
    printf("\n| Source words | Sentences |");
    for (int s = 0; s < r->nsys; s++) {
        putchar(' ');
        md_cell(labels[s]);
        printf(" |");
    }
    printf("\n|:--|--:|");
    for (int s = 0; s < r->nsys; s++) printf("--:|");
    putchar('\n');
    for (int b = 0; b < r->nbuckets; b++) {
        if (!r->bucket_n[b]) continue;
        char lab[32];
        report_bucket_label(lab, sizeof lab, b);
        printf("| %s | %ld |", lab, r->bucket_n[b]);
        for (int s = 0; s < r->nsys; s++) printf(" %.2f |", r->bucket_bleu[(size_t)b * r->nsys + s]);
        putchar('\n');
    }
    putchar('\n');
}

/* The files --out PREFIX names, in the order they are written: PREFIX.tsv, .svg, .png. 0, or
 * -1 for lack of memory; free the three either way. */
static int figure_paths(const char *prefix, char *path[3])
{
    static const char *const ext[3] = {"tsv", "svg", "png"};
    size_t n = strlen(prefix) + 5;
    int rc = 0;
    for (int k = 0; k < 3; k++) {
        if (!(path[k] = malloc(n))) rc = -1;
        else snprintf(path[k], n, "%s.%s", prefix, ext[k]);
    }
    return rc;
}

/* PREFIX.tsv, PREFIX.svg and PREFIX.png. fonts NULL (none found): the TSV is written all the
 * same, and the drawings refused after it with font_msg. */
static int write_figure(const report *r, const struct args *a, const char *const *labels, const draw_fonts *fonts,
                        const char *font_msg)
{
    nmt_err err;
    char *path[3]; /* tsv, svg, png */
    report_figure fig;
    int rc = CMD_OK, have_fig = 0;
    if (figure_paths(a->out, path)) { rc = runtime_error("out of memory"); goto done; }
    if (report_write_tsv(r, labels, path[0], &err)) { rc = runtime_error("%s", err.msg); goto done; }
    if (!fonts) {
        printf("Figure 2: %s\n", path[0]);
        rc = runtime_error("%s, %s: not written: %s (--font FILE names a font file)", path[1], path[2], font_msg);
        goto done;
    }
    if (report_figure_make(&fig, r, labels, a->title, &err)) { rc = runtime_error("%s", err.msg); goto done; }
    have_fig = 1;
    if (chart_write(&fig.spec, fonts, path[1], &err)) {
        printf("Figure 2: %s\n", path[0]);
        rc = runtime_error("%s", err.msg);
        goto done;
    }
    if (chart_write(&fig.spec, fonts, path[2], &err)) {
        printf("Figure 2: %s, %s\n", path[0], path[1]);
        rc = runtime_error("%s", err.msg);
        goto done;
    }
    printf("Figure 2: %s, %s, %s\n", path[0], path[1], path[2]);
done:
    if (have_fig) report_figure_free(&fig);
    for (int k = 0; k < 3; k++) free(path[k]);
    return rc;
}

/* No output may be an input: --out PREFIX.tsv over a --hyp file would destroy a system's
 * output. Checked before anything is read or written. */
static int check_outputs(const struct args *a)
{
    path_role in[8 + 2 * MAX_SYSTEMS], out[3];
    int nin = 0;
    in[nin++] = (path_role){a->src, "the source sentences"};
    in[nin++] = (path_role){a->ref, "the reference"};
    in[nin++] = (path_role){a->unk_vocab, "the --unk-vocab model"};
    in[nin++] = (path_role){a->src_vocab, "the source vocabulary"};
    in[nin++] = (path_role){a->tgt_vocab, "the target vocabulary"};
    in[nin++] = (path_role){a->font ? a->font : getenv("NMT_FONT"), "the font"};
    for (int s = 0; s < a->nhyp; s++) in[nin++] = (path_role){a->hyp[s], "a --hyp file"};
    for (int s = 0; s < a->nnounk; s++) in[nin++] = (path_role){a->nounk[s], "a --hyp-nounk file"};
    char *path[3];
    nmt_err err;
    int rc = figure_paths(a->out, path) ? runtime_error("out of memory") : CMD_OK;
    static const char *const role[3] = {"the figure's TSV", "the figure's SVG", "the figure's PNG"};
    for (int k = 0; k < 3; k++) out[k] = (path_role){path[k], role[k]};
    if (!rc && path_check_outputs(in, nin, out, 3, &err)) rc = runtime_error("%s", err.msg);
    for (int k = 0; k < 3; k++) free(path[k]);
    return rc;
}

/* ------------------------------------------------------------------ the command */
/* Reads path; on failure prints the error (file:line for bad UTF-8) and returns CMD_ERR. */
static int read_text(textfile *t, const char *path)
{
    nmt_err err;
    if (textfile_read(t, path, &err)) return runtime_error("%s", err.msg);
    return CMD_OK;
}

/* Line counts must agree: names both files and both counts. */
static int same_lines(const textfile *t, const char *what, const textfile *src)
{
    if (t->nlines == src->nlines) return CMD_OK;
    return runtime_error("%s (%s) has %ld line%s but %s (--src) has %ld", t->path, what, t->nlines,
                         t->nlines == 1 ? "" : "s", src->path, src->nlines);
}

/* The vocabulary of m's side as a lookup table, built from its entries as a list file's are. */
static int model_vocab(vocab **out, const nmt_model *m, int side)
{
    int n = nmt_model_vocab_size(m, side);
    const char **words = malloc(sizeof *words * (size_t)(n ? n : 1));
    if (!words) return runtime_error("out of memory");
    for (int id = 0; id < n; id++) words[id] = nmt_model_vocab_entry(m, side, id);
    nmt_err err;
    int rc = vocab_from_words(out, words, n, &err) ? runtime_error("--unk-vocab: %s", err.msg) : CMD_OK;
    free(words);
    return rc;
}

/* --unk-vocab MODEL: its two vocabularies into *sv and *tv (the caller frees them). A model with
 * text stages of its own is refused: the report's files are tokenized text, and it reads raw text. */
static int unk_vocab(vocab **sv, vocab **tv, const char *path)
{
    nmt_model *m = NULL;
    nmt_err err;
    int rc, sw;
    if (nmt_model_load(&m, path, &err)) return runtime_error("--unk-vocab: %s", err.msg);
    sw = nmt_model_has_subwords(m);
    if (nmt_model_has_text_stages(m))
        rc = runtime_error("--unk-vocab: %s reads raw text through its own text stages%s, and the report's files are "
                           "tokenized text: %s", path, sw ? " and subword units" : "",
                           sw ? "a subword model has no unknown word"
                              : "give its vocabularies as lists (nmt vocab --model MODEL --side src | cut -f2, "
                                "and --side tgt) with --src-vocab-file and --tgt-vocab-file");
    else if (!(rc = model_vocab(sv, m, NMT_SOURCE)))
        rc = model_vocab(tv, m, NMT_TARGET);
    nmt_model_free(m);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    struct args a;
    int rc = parse_args(&a, argc, argv);
    if (rc != OPT_GO) return rc;
    const char *labels[MAX_SYSTEMS];
    char *label_buf = NULL;
    if (a.labels) {
        if (!(label_buf = strdup(a.labels))) return runtime_error("out of memory");
        if ((rc = split_labels(label_buf, labels, a.nhyp))) { free(label_buf); return rc; }
    } else {
        /* file names; the whole paths where two systems' names would be the same
         * (sysA/test.out, sysB/test.out) */
        for (int s = 0; s < a.nhyp; s++) labels[s] = base_name(a.hyp[s]);
        for (int s = 0; s < a.nhyp; s++)
            for (int t = 0; t < a.nhyp; t++)
                if (t != s && !strcmp(base_name(a.hyp[s]), base_name(a.hyp[t]))) labels[s] = a.hyp[s];
    }

    textfile src = {0}, ref = {0}, hyp[MAX_SYSTEMS] = {{0}}, nounk[MAX_SYSTEMS] = {{0}};
    vocab *sv = NULL, *tv = NULL; /* --unk-vocab's or the vocabulary files' */
    report r = {0};
    report_system sys[MAX_SYSTEMS];
    draw_fonts *fonts = NULL;
    nmt_err err;

    rc = a.out ? check_outputs(&a) : CMD_OK;
    if (!rc) rc = read_text(&src, a.src);
    if (!rc) rc = read_text(&ref, a.ref);
    if (!rc && src.nlines == 0) rc = runtime_error("%s (--src) has no lines", a.src);
    if (!rc) rc = same_lines(&ref, "--ref", &src);
    for (int s = 0; !rc && s < a.nhyp; s++) {
        rc = read_text(&hyp[s], a.hyp[s]);
        if (!rc) rc = same_lines(&hyp[s], "--hyp", &src);
    }
    for (int s = 0; !rc && s < a.nnounk; s++) {
        rc = read_text(&nounk[s], a.nounk[s]);
        if (!rc) rc = same_lines(&nounk[s], "--hyp-nounk", &src);
    }
    if (!rc && a.unk_vocab) rc = unk_vocab(&sv, &tv, a.unk_vocab);
    if (!rc && a.src_vocab && (report_vocab_read(&sv, a.src_vocab, &err) || report_vocab_read(&tv, a.tgt_vocab, &err)))
        rc = runtime_error("%s", err.msg);
    /* a font the user names (--font, $NMT_FONT) must load before anything is printed; when none
     * is named and none is found, only the PNG is given up, at the end */
    nmt_err font_err = {0};
    if (!rc && a.out) {
        const char *font = a.font ? a.font : getenv("NMT_FONT");
        if (font && !*font) font = NULL;
        if (draw_fonts_open(&fonts, font, &font_err) && font)
            rc = runtime_error("%s: %s", a.font ? "--font" : "$NMT_FONT", font_err.msg);
    }
    if (rc) goto done;

    for (int s = 0; s < a.nhyp; s++)
        sys[s] = (report_system){labels[s], a.hyp[s], (const char *const *)hyp[s].line,
                                 a.nnounk ? a.nounk[s] : NULL,
                                 a.nnounk ? (const char *const *)nounk[s].line : NULL};
    report_input in = {src.nlines, (const char *const *)src.line, (const char *const *)ref.line, a.ref,
                       a.nhyp, sys, sv, tv, a.bleu};
    if (report_compute(&r, &in, &err)) {
        rc = runtime_error("%s", err.msg);
        goto done;
    }
    print_table1(&r, &a, labels, sv, tv);
    print_figure2(&r, labels);
    if (a.out) rc = write_figure(&r, &a, labels, fonts, font_err.msg);
    else printf("(--out PREFIX writes Figure 2 as PREFIX.tsv, PREFIX.svg and PREFIX.png)\n");

done:
    report_free(&r);
    draw_fonts_free(fonts);
    vocab_free(sv);
    vocab_free(tv);
    textfile_free(&src);
    textfile_free(&ref);
    for (int s = 0; s < MAX_SYSTEMS; s++) {
        textfile_free(&hyp[s]);
        textfile_free(&nounk[s]);
    }
    free(label_buf);
    return rc;
}
