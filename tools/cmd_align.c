/* cmd_align.c: `nmt align`, forced alignments: the model reads each source sentence, is made to
 * produce its target, and its attention is written as hard Pharaoh links, as the soft matrices
 * `nmt aer --soft` reads, or as JSON lines. Every input line is checked before anything is
 * written, so that an error never leaves a partial, misaligned output behind. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "nmt.h"
#include "viz/plot.h"
#include "text/unicode.h"

enum { FMT_PHARAOH, FMT_SOFT, FMT_JSON };

/* Pairs handed to the library at a time: bounds the attention matrices held at once. */
#define CHUNK 512

static void usage(FILE *f)
{
    nmt_translate_opts d = nmt_translate_default_opts();
    fprintf(f,
        "Usage: nmt align --model FILE --src FILE --tgt FILE [options] > output\n"
        "Forced alignment: the model reads each source sentence and is made to produce its target; its\n"
        "attention gives the alignment (RNNsearch-style models only). One record per line pair, in order.\n"
        "\n"
        "  --model FILE        the model (required)\n"
        "  --src FILE          source sentences, tokenized, one per line\n"
        "  --tgt FILE          target sentences (the same number of lines)\n"
        "  --format pharaoh    (default) hard links 's-t', 0-based source and target word, sorted by\n"
        "                      target then source: each target word to its most-attended source word\n"
        "                      (ties to the lower index; never the source EOS; no link for the EOS row)\n"
        "  --format json       one object per line: {\"src\": [...], \"tgt\": [...], \"attention\":\n"
        "                      [[...], ...] (target x source words, no EOS), \"links\": [[s, t], ...],\n"
        "                      \"logprob\": log p(target + EOS | source)}\n"
        "  --soft              the attention matrices instead of links, as `nmt aer --soft` reads them:\n"
        "                      per pair one line per target word with the weights of its source words,\n"
        "                      then an empty line (no EOS row or column); weights have 9 digits\n"
        "  --threshold T       also every link whose weight is >= T, T in [0, 1] (pharaoh and json)\n"
        "  --batch N           sentences decoded together (default %d); the weights depend on it, and\n"
        "                      on --threads, only in their last bits (float rounding)\n"
        "  --threads N         threads (default: all cores)\n"
        "\n"
        "A pair with an empty side gives an empty line (pharaoh) or a record without links (json);\n"
        "--soft refuses it, as the matrix format cannot hold an empty sentence. Source lines over %d\n"
        "words are read up to that length (warned): later words get no links and weight 0.\n"
        "A target line over %d words is an error.\n",
        d.batch, NMT_MAX_SRC_WORDS, NMT_MAX_TGT_WORDS);
}

typedef struct corpus {
    char **line;
    long n;
} corpus;

static void corpus_free(corpus *c)
{
    for (long k = 0; k < c->n; k++) free(c->line[k]);
    free(c->line);
}

/* Every line of path, without newlines (nor a CR before one), checked for UTF-8. Prints the
 * error and returns -1 when it cannot. */
static int read_corpus(const char *path, corpus *c)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "nmt align: error: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t lcap = 0;
    long cap = 0;
    ssize_t n;
    int rc = 0;
    while ((n = getline(&line, &lcap, f)) >= 0) {
        if (n > 0 && line[n - 1] == '\n') line[--n] = 0;
        if (n > 0 && line[n - 1] == '\r') line[--n] = 0;
        long at = c->n + 1;
        if ((size_t)n != strlen(line)) {
            fprintf(stderr, "nmt align: error: %s:%ld: NUL byte in the line\n", path, at);
            rc = -1;
            break;
        }
        if (utf8_find_invalid(line, (size_t)n) >= 0) {
            fprintf(stderr, "nmt align: error: %s:%ld: invalid UTF-8\n", path, at);
            rc = -1;
            break;
        }
        if (c->n == cap) {
            cap = cap ? 2 * cap : 1024;
            char **nl = realloc(c->line, sizeof *nl * (size_t)cap);
            if (!nl) { rc = -1; fprintf(stderr, "nmt align: error: out of memory\n"); break; }
            c->line = nl;
        }
        if (!(c->line[c->n] = strdup(line))) { rc = -1; fprintf(stderr, "nmt align: error: out of memory\n"); break; }
        c->n++;
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "nmt align: error: %s: read error\n", path);
        rc = -1;
    }
    fclose(f);
    free(line);
    if (rc) corpus_free(c);
    return rc;
}

static int count_words(const char *s)
{
    char *buf, **w;
    int n = plot_split_words(s, &buf, &w);
    free(buf);
    free(w);
    return n;
}

/* Is (s, t) a link: the arg-max of row t (ties to the lower s, never the EOS column), or at
 * least the threshold (thr < 0: none)? */
static int is_link(const float *row, int s, int best, double thr)
{
    return s == best || (thr >= 0 && row[s] >= thr);
}

static int argmax(const float *row, int ns)
{
    int best = 0;
    for (int s = 1; s < ns; s++)
        if (row[s] > row[best]) best = s;
    return best;
}

/* Weights are written with 9 significant digits, which tell any two floats apart: an arg-max
 * recomputed from the output finds the same words as the hard links. For JSON the double is
 * rounded so, or cJSON would print the float's 17-digit double expansion. */
static double round9(double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.9g", v);
    return strtod(b, NULL);
}

static cJSON *word_array(const char *s)
{
    char *buf, **w;
    int n = plot_split_words(s, &buf, &w);
    cJSON *a = n < 0 ? NULL : cJSON_CreateArray();
    for (int k = 0; a && k < n; k++) {
        cJSON *x = cJSON_CreateString(w[k]);
        if (!x) { cJSON_Delete(a); a = NULL; break; }
        cJSON_AddItemToArray(a, x);
    }
    free(buf);
    free(w);
    return a;
}

/* One record; returns -1 for lack of memory. nsw, ntw: the words of the lines (the model may
 * have read fewer source words: the others get weight 0). */
static int print_record(const nmt_alignment *a, const char *src, const char *tgt, int nsw, int ntw, int fmt,
                        double thr)
{
    int ns = a->n_src, nt = a->n_tgt < ntw ? a->n_tgt : ntw, cols = a->n_src + 1;
    if (fmt == FMT_SOFT) {
        for (int t = 0; t < ntw; t++) {
            for (int s = 0; s < nsw; s++) {
                double v = t < nt && s < ns ? a->attention[(size_t)t * cols + s] : 0.0;
                printf(s ? " %.9g" : "%.9g", v);
            }
            putchar('\n');
        }
        putchar('\n');
        return 0;
    }
    if (fmt == FMT_PHARAOH) {
        int first = 1;
        for (int t = 0; t < nt && ns > 0; t++) {
            const float *row = a->attention + (size_t)t * cols;
            int best = argmax(row, ns);
            for (int s = 0; s < ns; s++)
                if (is_link(row, s, best, thr)) {
                    printf(first ? "%d-%d" : " %d-%d", s, t);
                    first = 0;
                }
        }
        putchar('\n');
        return 0;
    }
    cJSON *o = cJSON_CreateObject(), *att = cJSON_CreateArray(), *links = cJSON_CreateArray();
    cJSON *sw = word_array(src), *tw = word_array(tgt);
    int rc = -1;
    if (!o || !att || !links || !sw || !tw) {
        cJSON_Delete(o); cJSON_Delete(att); cJSON_Delete(links); cJSON_Delete(sw); cJSON_Delete(tw);
        return -1;
    }
    cJSON_AddItemToObject(o, "src", sw);
    cJSON_AddItemToObject(o, "tgt", tw);
    cJSON_AddItemToObject(o, "attention", att);
    cJSON_AddItemToObject(o, "links", links);
    for (int t = 0; t < ntw; t++) {
        cJSON *row = cJSON_CreateArray();
        if (!row) goto out;
        cJSON_AddItemToArray(att, row);
        for (int s = 0; s < nsw; s++) {
            double v = t < nt && s < ns ? a->attention[(size_t)t * cols + s] : 0.0;
            cJSON *x = cJSON_CreateNumber(round9(v));
            if (!x) goto out;
            cJSON_AddItemToArray(row, x);
        }
    }
    for (int t = 0; t < nt && ns > 0; t++) {
        const float *row = a->attention + (size_t)t * cols;
        int best = argmax(row, ns);
        for (int s = 0; s < ns; s++)
            if (is_link(row, s, best, thr)) {
                int st[2] = {s, t};
                cJSON *l = cJSON_CreateIntArray(st, 2);
                if (!l) goto out;
                cJSON_AddItemToArray(links, l);
            }
    }
    if (!cJSON_AddNumberToObject(o, "logprob", a->logprob)) goto out;
    char *text = cJSON_PrintUnformatted(o);
    if (text) {
        puts(text);
        free(text);
        rc = 0;
    }
out:
    cJSON_Delete(o);
    return rc;
}

int cmd_align(int argc, char **argv)
{
    const char *model = NULL, *src = NULL, *tgt = NULL;
    int fmt = FMT_PHARAOH, soft = 0, json = 0;
    double thr = -1;
    long v;
    nmt_translate_opts o = nmt_translate_default_opts();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return CMD_OK; }
        if (!strcmp(a, "--soft")) { soft = 1; continue; }
        if (strncmp(a, "--", 2)) { fprintf(stderr, "nmt align: unexpected argument '%s' (nmt align --help)\n", a); return CMD_USAGE; }
        if (i + 1 >= argc) { fprintf(stderr, "nmt align: %s needs a value\n", a); return CMD_USAGE; }
        const char *val = argv[++i];
        if (!strcmp(a, "--model")) model = val;
        else if (!strcmp(a, "--src")) src = val;
        else if (!strcmp(a, "--tgt")) tgt = val;
        else if (!strcmp(a, "--threshold")) { if (cmd_parse_double("align", a, val, 0, 1, &thr)) return CMD_USAGE; }
        else if (!strcmp(a, "--batch")) { if (cmd_parse_long("align", a, val, 1, 10000, &v)) return CMD_USAGE; o.batch = (int)v; }
        else if (!strcmp(a, "--threads")) { if (cmd_parse_long("align", a, val, 1, 1024, &v)) return CMD_USAGE; nmt_set_threads((int)v); }
        else if (!strcmp(a, "--format")) {
            if (!strcmp(val, "pharaoh")) json = 0;
            else if (!strcmp(val, "json")) json = 1;
            else { fprintf(stderr, "nmt align: --format '%s': expected pharaoh or json\n", val); return CMD_USAGE; }
        } else { fprintf(stderr, "nmt align: unknown option '%s' (nmt align --help)\n", a); return CMD_USAGE; }
    }
    if (!model) { fprintf(stderr, "nmt align: --model is required (nmt align --help)\n"); return CMD_USAGE; }
    if (!src || !tgt) { fprintf(stderr, "nmt align: --src and --tgt are required (nmt align --help)\n"); return CMD_USAGE; }
    if (soft && json) { fprintf(stderr, "nmt align: --soft and --format json exclude each other (json holds the matrices)\n"); return CMD_USAGE; }
    if (soft && thr >= 0) { fprintf(stderr, "nmt align: --threshold selects links: it has no meaning with --soft\n"); return CMD_USAGE; }
    fmt = soft ? FMT_SOFT : json ? FMT_JSON : FMT_PHARAOH;

    corpus S, T;
    if (read_corpus(src, &S)) return CMD_ERR;
    if (read_corpus(tgt, &T)) { corpus_free(&S); return CMD_ERR; }
    int rc = CMD_ERR;
    nmt_model *m = NULL;
    nmt_decoder *d = NULL;
    nmt_alignment *al = NULL;
    int *nsw = NULL, *ntw = NULL;
    nmt_err err;
    if (S.n != T.n) {
        fprintf(stderr, "nmt align: error: %s has %ld lines but %s has %ld\n", src, S.n, tgt, T.n);
        goto out;
    }
    nsw = malloc(sizeof *nsw * (size_t)(S.n ? S.n : 1));
    ntw = malloc(sizeof *ntw * (size_t)(S.n ? S.n : 1));
    al = calloc(CHUNK, sizeof *al);
    if (!nsw || !ntw || !al) { fprintf(stderr, "nmt align: error: out of memory\n"); goto out; }
    for (long k = 0; k < S.n; k++) {
        nsw[k] = count_words(S.line[k]);
        ntw[k] = count_words(T.line[k]);
        if (nsw[k] < 0 || ntw[k] < 0) { fprintf(stderr, "nmt align: error: out of memory\n"); goto out; }
        if (fmt == FMT_SOFT && (nsw[k] == 0 || ntw[k] == 0)) {
            fprintf(stderr, "nmt align: error: %s:%ld: empty sentence: the soft-matrix format cannot hold it "
                    "(remove the pair, or use the pharaoh or json output)\n", nsw[k] ? tgt : src, k + 1);
            goto out;
        }
        if (nsw[k] > NMT_MAX_SRC_WORDS)
            fprintf(stderr, "[W::align] %s:%ld: %d words, aligning the first %d\n", src, k + 1, nsw[k], NMT_MAX_SRC_WORDS);
    }
    if (nmt_model_load(&m, model, &err) || nmt_decoder_init(&d, m, &o, &err)) {
        fprintf(stderr, "nmt align: error: %s\n", err.msg);
        goto out;
    }
    if (nmt_model_config(m)->arch == NMT_ARCH_RNNENC) { /* known before decoding anything */
        fprintf(stderr, "nmt align: error: %s is an %s model: it has no attention to align with\n", model,
                nmt_arch_name(NMT_ARCH_RNNENC));
        goto out;
    }
    for (long k0 = 0; k0 < S.n; k0 += CHUNK) {
        int n = S.n - k0 < CHUNK ? (int)(S.n - k0) : CHUNK;
        if (nmt_force_align(d, (const char *const *)S.line + k0, (const char *const *)T.line + k0, n, al, &err)) {
            fprintf(stderr, "nmt align: error: %s (lines %ld-%ld)\n", err.msg, k0 + 1, k0 + n);
            goto out;
        }
        if (!al[0].attention) {
            fprintf(stderr, "nmt align: error: %s is an %s model: it has no attention to align with\n", model,
                    nmt_arch_name(nmt_model_config(m)->arch));
            nmt_alignment_free(al, n);
            goto out;
        }
        for (int i = 0; i < n; i++) {
            const nmt_alignment *a = &al[i];
            size_t cells = (size_t)(a->n_tgt + 1) * (a->n_src + 1);
            for (size_t c = 0; c < cells; c++)
                if (!isfinite(a->attention[c]) || a->attention[c] < 0 || a->attention[c] > 1) {
                    fprintf(stderr, "nmt align: error: line %ld: the attention holds %g, not a weight in [0, 1]\n",
                            k0 + i + 1, (double)a->attention[c]);
                    nmt_alignment_free(al, n);
                    goto out;
                }
            if (print_record(a, S.line[k0 + i], T.line[k0 + i], nsw[k0 + i], ntw[k0 + i], fmt, thr)) {
                fprintf(stderr, "nmt align: error: out of memory\n");
                nmt_alignment_free(al, n);
                goto out;
            }
        }
        nmt_alignment_free(al, n);
    }
    rc = CMD_OK;
out:
    free(al);
    free(nsw);
    free(ntw);
    nmt_decoder_free(d);
    nmt_model_free(m);
    corpus_free(&S);
    corpus_free(&T);
    return rc;
}
