/* cmd_align.c: `nmt align`, forced alignments: the model reads each source sentence, is made to
 * produce its target, and its attention is written as hard Pharaoh links, as the soft matrices
 * `nmt aer --soft` reads, or as JSON lines. Every input line is checked before anything is
 * written, so that an error never leaves a partial, misaligned output behind. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "data/corpus.h"
#include "nmt.h"
#include "opt.h"

enum { FMT_PHARAOH, FMT_SOFT, FMT_JSON };

/* Pairs handed to the library at a time: bounds the attention matrices held at once. */
#define CHUNK 512

#define STR_(x) #x
#define STR(x) STR_(x)

static const char align_usage[] =
    "Usage: nmt align --model FILE --src FILE --tgt FILE [options] > output\n"
    "Forced alignment: the model reads each source sentence and is made to produce its target; its\n"
    "attention gives the alignment (RNNsearch-style models only). One record per line pair, in order.\n\n";

static const char align_after[] =
    "\nA pair with an empty side gives an empty line (pharaoh) or a record without links (json);\n"
    "--soft refuses it, as the matrix format cannot hold an empty sentence. Source lines over " STR(NMT_MAX_SRC_WORDS) "\n"
    "words are read up to that length (warned): later words get no links and weight 0.\n"
    "A target line over " STR(NMT_MAX_TGT_WORDS) " words is an error.\n";

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

/* The words of a line as the model reads them (the text pipeline's); -1 for lack of memory. */
static int count_words(nmt_text *tp, const char *s)
{
    nmt_text_line l;
    return nmt_text_encode(tp, s, strlen(s), &l, NULL) ? -1 : l.n_words;
}

/* The same words as a JSON array; NULL for lack of memory. */
static cJSON *word_array(nmt_text *tp, const char *s)
{
    nmt_text_line l;
    if (nmt_text_encode(tp, s, strlen(s), &l, NULL)) return NULL;
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; a && k < l.n_words; k++) {
        cJSON *x = cJSON_CreateString(l.words[k]);
        if (!x) { cJSON_Delete(a); a = NULL; break; }
        cJSON_AddItemToArray(a, x);
    }
    return a;
}

/* One record; returns -1 for lack of memory. nsw, ntw: the words of the lines (the model may
 * have read fewer source words: the others get weight 0). */
static int print_record(nmt_text *tp, const nmt_alignment *a, const char *src, const char *tgt, int nsw, int ntw,
                        int fmt, double thr)
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
    cJSON *sw = word_array(tp, src), *tw = word_array(tp, tgt);
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

/* What align's options set. */
struct align_args {
    const char *model, *src, *tgt;
    int soft, json;
    double thr; /* < 0: no threshold */
    nmt_translate_opts o;
};

/* Parses align's options into a and checks them together; OPT_GO, or the exit status. */
static int align_options(int argc, char **argv, struct align_args *a)
{
    *a = (struct align_args){NULL, NULL, NULL, 0, 0, -1, nmt_translate_default_opts()};
    int threads = 0;
    opt table[] = {
        OPT_STR("--model", &a->model, "FILE", "the model (required)"),
        OPT_STR("--src", &a->src, "FILE", "source sentences, tokenized, one per line"),
        OPT_STR("--tgt", &a->tgt, "FILE", "target sentences (the same number of lines)"),
        OPT_CHOICE("--format", &a->json, "pharaoh|json",
                   "pharaoh (default): hard links 's-t', 0-based source and target word,\n"
                   "sorted by target then source: each target word to its most-attended\n"
                   "source word (ties to the lower index; never the source EOS; no link for\n"
                   "the EOS row)\n"
                   "json: one object per line: {\"src\": [...], \"tgt\": [...], \"attention\":\n"
                   "[[...], ...] (target x source words, no EOS), \"links\": [[s, t], ...],\n"
                   "\"logprob\": log p(target + EOS | source)}"),
        OPT_FLAG("--soft", &a->soft, 1, "the attention matrices instead of links, as `nmt aer --soft` reads\n"
                 "them: per pair one line per target word with the weights of its source\n"
                 "words, then an empty line (no EOS row or column); weights have 9 digits"),
        OPT_DBL("--threshold", &a->thr, 0, 1, "T", "also every link whose weight is >= T, T in [0, 1] (pharaoh and json)"),
        OPT_INT("--batch", &a->o.batch, 1, 10000, "N", "sentences decoded together (default {}); the weights depend on it,\n"
                "and on --threads, only in their last bits (float rounding)"),
        OPT_INT("--threads", &threads, 1, 1024, "N", "threads (default: all cores)"),
        OPT_END,
    };
    opt_cmd cmd = {"align", align_usage, align_after, table, 0, NULL};
    int nargs, rc = opt_parse(&cmd, argc, argv, NULL, &nargs);
    if (rc != OPT_GO) return rc;
    if (threads) nmt_set_threads(threads);
    if (!a->model) { fprintf(stderr, "nmt align: --model is required (nmt align --help)\n"); return CMD_USAGE; }
    if (!a->src || !a->tgt) { fprintf(stderr, "nmt align: --src and --tgt are required (nmt align --help)\n"); return CMD_USAGE; }
    if (a->soft && a->json) { fprintf(stderr, "nmt align: --soft and --format json exclude each other (json holds the matrices)\n"); return CMD_USAGE; }
    if (a->soft && a->thr >= 0) { fprintf(stderr, "nmt align: --threshold selects links: it has no meaning with --soft\n"); return CMD_USAGE; }
    return OPT_GO;
}

int cmd_align(int argc, char **argv)
{
    struct align_args args;
    int prc = align_options(argc, argv, &args);
    if (prc != OPT_GO) return prc;
    const char *model = args.model, *src = args.src, *tgt = args.tgt;
    int fmt = args.soft ? FMT_SOFT : args.json ? FMT_JSON : FMT_PHARAOH;
    double thr = args.thr;
    nmt_translate_opts o = args.o;

    textfile S = {0}, T = {0};
    nmt_err err;
    int rc = CMD_ERR;
    nmt_model *m = NULL;
    nmt_decoder *d = NULL;
    nmt_alignment *al = NULL;
    nmt_text *tp = NULL; /* tokenized lines to words, as the model reads them */
    nmt_text_opts to = nmt_text_default_opts();
    int *nsw = NULL, *ntw = NULL;
    if (textfile_read(&S, src, &err) || textfile_read(&T, tgt, &err) || nmt_text_init(&tp, &to, NULL, 0, &err)) {
        fprintf(stderr, "nmt align: error: %s\n", err.msg);
        goto out;
    }
    long n_lines = S.nlines;
    if (n_lines != T.nlines) {
        fprintf(stderr, "nmt align: error: %s has %ld lines but %s has %ld\n", src, n_lines, tgt, T.nlines);
        goto out;
    }
    nsw = malloc(sizeof *nsw * (size_t)(n_lines ? n_lines : 1));
    ntw = malloc(sizeof *ntw * (size_t)(n_lines ? n_lines : 1));
    al = calloc(CHUNK, sizeof *al);
    if (!nsw || !ntw || !al) { fprintf(stderr, "nmt align: error: out of memory\n"); goto out; }
    for (long k = 0; k < n_lines; k++) {
        nsw[k] = count_words(tp, S.line[k]);
        ntw[k] = count_words(tp, T.line[k]);
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
    for (long k0 = 0; k0 < n_lines; k0 += CHUNK) {
        int n = n_lines - k0 < CHUNK ? (int)(n_lines - k0) : CHUNK;
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
            if (print_record(tp, a, S.line[k0 + i], T.line[k0 + i], nsw[k0 + i], ntw[k0 + i], fmt, thr)) {
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
    nmt_text_free(tp);
    textfile_free(&S);
    textfile_free(&T);
    return rc;
}
