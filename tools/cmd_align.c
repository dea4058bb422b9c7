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
    "attention gives the alignment (a model with attention: RNNsearch's and its variants', or a\n"
    "Transformer's encoder-decoder attention of the layer and head its file names, by default the last\n"
    "layer's heads' mean). One record per line pair, in order.\n"
    "A subword model reads raw text and aligns words: its pieces' attention is summed per word. A\n"
    "word model trained on raw text reads raw text too, and its indices are those of its (Moses) tokens.\n\n";

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

/* The words of a line (the text pipeline's, which a subword model cuts further into pieces) in
 * *words and the tokens the model reads in *tokens; -1 when the pipeline fails. */
static int count_words(nmt_text *tp, const char *s, int *words, int *tokens)
{
    nmt_text_line l;
    if (nmt_text_encode(tp, s, strlen(s), &l, NULL)) return -1;
    *words = l.n_text_words;
    *tokens = l.n_words;
    return 0;
}

/* The words as a JSON array; NULL for lack of memory. */
static cJSON *word_array(nmt_text *tp, const char *s)
{
    nmt_text_line l;
    if (nmt_text_encode(tp, s, strlen(s), &l, NULL)) return NULL;
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; a && k < l.n_text_words; k++) {
        cJSON *x = cJSON_CreateString(l.text_words[k]);
        if (!x) { cJSON_Delete(a); a = NULL; break; }
        cJSON_AddItemToArray(a, x);
    }
    return a;
}

/* One record; returns -1 for lack of memory. nsw, ntw: the words of the lines (the model may
 * have read fewer source words: the others get weight 0). */
static int print_record(nmt_text *const tp[2], const nmt_alignment *a, const char *src, const char *tgt, int nsw, int ntw,
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
    cJSON *sw = word_array(tp[0], src), *tw = word_array(tp[1], tgt);
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

/* ------------------------------------------------------------------ tokens and words */

/* One chunk of pairs as the model reads them (a subword model's pieces) with each side's token
 * -> word maps, and the attention merged into words. */
typedef struct chunk {
    char *src[CHUNK], *tgt[CHUNK];
    nmt_word_map sm[CHUNK], tm[CHUNK];
    float *att;
    size_t att_cap;
} chunk;

static void chunk_clear(chunk *c, int n)
{
    for (int i = 0; i < n; i++) {
        free(c->src[i]);
        free(c->tgt[i]);
        free((int *)c->sm[i].word_of);
        free((int *)c->tm[i].word_of);
        c->src[i] = c->tgt[i] = NULL;
        c->sm[i].word_of = c->tm[i].word_of = NULL;
    }
}

static int chunk_encode(chunk *c, nmt_text *const tp[2], char *const *S, char *const *T, int n, nmt_err *err)
{
    for (int i = 0; i < n; i++)
        if (cmd_encode_line(tp[0], S[i], &c->src[i], &c->sm[i], NULL, err) ||
            cmd_encode_line(tp[1], T[i], &c->tgt[i], &c->tm[i], NULL, err))
            return -1;
    return 0;
}

/* What align's options set. */
struct align_args {
    const char *model, *src, *tgt, *output;
    int soft, json, progress;
    double thr; /* < 0: no threshold */
    nmt_translate_opts o;
};

/* Parses align's options into a and checks them together; OPT_GO, or the exit status. */
static int align_options(int argc, char **argv, struct align_args *a)
{
    *a = (struct align_args){.thr = -1, .o = nmt_translate_default_opts()};
    int threads = 0;
    opt table[] = {
        OPT_STR("--model", &a->model, "FILE", "the model (required)"),
        OPT_STR("--src", &a->src, "FILE", "source sentences, tokenized (raw for a model trained on raw text or\n"
                "with subword units), one per line"),
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
        OPT_INT("--batch", &a->o.batch, 1, 10000, "N", "sentences decoded together (default {}); with --batch-invariant\n"
                "off the weights depend on it, and on --threads, in their last bits"),
        CMD_BATCH_INVARIANT_OPT(&a->o.batch_invariant),
        OPT_INT("--threads", &threads, 1, 1024, "N", "threads (default: all cores)"),
        CMD_DEVICE_OPT,
        CMD_OUTPUT_OPT(&a->output),
        CMD_PROGRESS_OPT(&a->progress),
        OPT_END,
    };
    opt_cmd cmd = {"align", align_usage, align_after, table, 0, NULL};
    int nargs, rc = opt_parse(&cmd, argc, argv, NULL, &nargs);
    if (rc != OPT_GO) return rc;
    if ((rc = cmd_one_model("align", opt_given(&cmd, "--model")))) return rc;
    if (threads) nmt_set_threads(threads);
    if (!a->model) { fprintf(stderr, "nmt align: error: --model is required (nmt align --help)\n"); return CMD_USAGE; }
    if (!a->src || !a->tgt) { fprintf(stderr, "nmt align: error: --src and --tgt are required (nmt align --help)\n"); return CMD_USAGE; }
    if (a->soft && a->json) { fprintf(stderr, "nmt align: error: --soft and --format json exclude each other (json holds the matrices)\n"); return CMD_USAGE; }
    if (a->soft && a->thr >= 0) { fprintf(stderr, "nmt align: error: --threshold selects links: it has no meaning with --soft\n"); return CMD_USAGE; }
    return OPT_GO;
}

/* Every pair's word counts, checked before anything is written; 0, or -1 after saying why. */
static int check_lines(nmt_text *const tp[2], const textfile *S, const textfile *T, int fmt, int *nsw, int *ntw)
{
    for (long k = 0; k < S->nlines; k++) {
        int ns_tok, nt_tok;
        if (count_words(tp[0], S->line[k], &nsw[k], &ns_tok) || count_words(tp[1], T->line[k], &ntw[k], &nt_tok)) {
            fprintf(stderr, "nmt align: error: line %ld: the text pipeline failed (out of memory?)\n", k + 1);
            return -1;
        }
        if (fmt == FMT_SOFT && (nsw[k] == 0 || ntw[k] == 0)) {
            fprintf(stderr, "nmt align: error: %s:%ld: empty sentence: the soft-matrix format cannot hold it "
                    "(remove the pair, or use the pharaoh or json output)\n", nsw[k] ? T->path : S->path, k + 1);
            return -1;
        }
        if (ns_tok > NMT_MAX_SRC_WORDS)
            fprintf(stderr, "[W::align] %s:%ld: %d %s, aligning the first %d\n", S->path, k + 1, ns_tok,
                    ns_tok == nsw[k] ? "words" : "pieces", NMT_MAX_SRC_WORDS);
    }
    return 0;
}

/* The attention of a[0..n) checked to be weights; 0, or -1 after saying which line is wrong. */
static int check_weights(const nmt_alignment *al, int n, long first)
{
    for (int i = 0; i < n; i++) {
        const nmt_alignment *a = &al[i];
        size_t cells = (size_t)(a->n_tgt + 1) * (a->n_src + 1);
        for (size_t c = 0; c < cells; c++)
            if (!isfinite(a->attention[c]) || a->attention[c] < 0 || a->attention[c] > 1) {
                fprintf(stderr, "nmt align: error: line %ld: the attention holds %g, not a weight in [0, 1]\n",
                        first + i + 1, (double)a->attention[c]);
                return -1;
            }
    }
    return 0;
}

/* Aligns and prints every pair, CHUNK at a time; 0, or -1 after an error message. */
static int align_all(nmt_decoder *d, nmt_text *const tp[2], const textfile *S, const textfile *T, const int *nsw,
                     const int *ntw, int fmt, double thr, const char *model, int arch, cmd_progress *prog)
{
    static chunk c; /* large: kept off the stack */
    nmt_alignment al[CHUNK], w;
    nmt_err err;
    int bad = 0;
    for (long k0 = 0; k0 < S->nlines && !bad; k0 += CHUNK) {
        int n = S->nlines - k0 < CHUNK ? (int)(S->nlines - k0) : CHUNK;
        if (chunk_encode(&c, tp, S->line + k0, T->line + k0, n, &err) ||
            nmt_force_align(d, (const char *const *)c.src, (const char *const *)c.tgt, n, al, &err)) {
            fprintf(stderr, "nmt align: error: %s (lines %ld-%ld)\n", err.msg, k0 + 1, k0 + n);
            chunk_clear(&c, n);
            bad = -1;
            break;
        }
        if (!al[0].attention) {
            fprintf(stderr, "nmt align: error: %s is an %s model: it has no attention to align with\n", model, nmt_arch_name(arch));
            bad = -1;
        }
        if (!bad) bad = check_weights(al, n, k0);
        for (int i = 0; i < n && !bad; i++) {
            if (cmd_alignment_words(&al[i], &c.sm[i], &c.tm[i], &w, &c.att, &c.att_cap, &err)) {
                fprintf(stderr, "nmt align: error: line %ld: %s\n", k0 + i + 1, err.msg);
                bad = -1;
            } else if (print_record(tp, &w, S->line[k0 + i], T->line[k0 + i], nsw[k0 + i], ntw[k0 + i], fmt, thr)) {
                fprintf(stderr, "nmt align: error: out of memory\n");
                bad = -1;
            }
        }
        nmt_alignment_free(al, n);
        chunk_clear(&c, n);
        cmd_progress_add(prog, n);
    }
    free(c.att);
    c.att = NULL;
    c.att_cap = 0;
    return bad;
}

int cmd_align(int argc, char **argv)
{
    struct align_args args;
    int prc = align_options(argc, argv, &args);
    if (prc != OPT_GO) return prc;
    int fmt = args.soft ? FMT_SOFT : args.json ? FMT_JSON : FMT_PHARAOH;
    textfile S = {0}, T = {0};
    nmt_err err;
    int rc = CMD_ERR;
    nmt_model *m = NULL;
    nmt_decoder *d = NULL;
    nmt_text *tp[2] = {NULL, NULL}; /* lines to the model's tokens and the user's words */
    nmt_text_opts to = nmt_text_default_opts();
    int *nsw = NULL, *ntw = NULL;
    if (textfile_read(&S, args.src, &err) || textfile_read(&T, args.tgt, &err) || nmt_model_load(&m, args.model, &err) ||
        nmt_text_init_model(&tp[0], &to, m, NMT_SOURCE, &err) || nmt_text_init_model(&tp[1], &to, m, NMT_TARGET, &err)) {
        fprintf(stderr, "nmt align: error: %s\n", err.msg);
        goto out;
    }
    if (S.nlines != T.nlines) {
        fprintf(stderr, "nmt align: error: %s has %ld lines but %s has %ld\n", args.src, S.nlines, args.tgt, T.nlines);
        goto out;
    }
    nsw = malloc(sizeof *nsw * (size_t)(S.nlines ? S.nlines : 1));
    ntw = malloc(sizeof *ntw * (size_t)(S.nlines ? S.nlines : 1));
    if (!nsw || !ntw) { fprintf(stderr, "nmt align: error: out of memory\n"); goto out; }
    if (check_lines(tp, &S, &T, fmt, nsw, ntw)) goto out;
    if (nmt_model_config(m)->arch == NMT_ARCH_RNNENC) { /* known before decoding anything */
        fprintf(stderr, "nmt align: error: %s is an %s model: it has no attention to align with\n", args.model,
                nmt_arch_name(NMT_ARCH_RNNENC));
        goto out;
    }
    if (nmt_decoder_init(&d, m, &args.o, &err)) {
        fprintf(stderr, "nmt align: error: %s\n", err.msg);
        goto out;
    }
    path_role in[3] = {{args.model, "the model"}, {args.src, "the --src file"}, {args.tgt, "the --tgt file"}};
    int orc = args.output ? cmd_output_to("align", args.output, in, 3) : CMD_OK;
    if (orc) {
        rc = orc;
        goto out;
    }
    cmd_progress prog;
    cmd_progress_start(&prog, "align", args.progress);
    if (!align_all(d, tp, &S, &T, nsw, ntw, fmt, args.thr, args.model, nmt_model_config(m)->arch, &prog)) rc = CMD_OK;
    cmd_progress_end(&prog);
out:
    free(nsw);
    free(ntw);
    nmt_decoder_free(d);
    nmt_model_free(m);
    nmt_text_free(tp[0]);
    nmt_text_free(tp[1]);
    textfile_free(&S);
    textfile_free(&T);
    return rc;
}
