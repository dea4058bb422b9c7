/* cmd_lex.c: `nmt lex`: the lexical table for UNK replacement, from hard alignments of a parallel
 * corpus: the model's own forced alignments (each target word to its most-attended source word,
 * MODEL.md section 6) or a Pharaoh "s-t" file from any external aligner. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/paths.h"
#include "cmd.h"
#include "data/corpus.h"
#include "decode/lexicon.h"
#include "nmt.h"
#include "text/words.h"
#include "opt.h"

#define LEX_MAX_WORDS 4096 /* words per line: the split buffers' size */

/* split_tokens counts past its buffer: a longer line is refused rather than read out of bounds */
static int too_long(int ns, int nt, const char *src, const char *tgt, long line)
{
    if (ns <= LEX_MAX_WORDS && nt <= LEX_MAX_WORDS) return 0;
    fprintf(stderr, "nmt lex: error: %s:%ld: %d words, more than the limit of %d per line\n", ns > LEX_MAX_WORDS ? src : tgt, line,
            ns > LEX_MAX_WORDS ? ns : nt, LEX_MAX_WORDS);
    return 1;
}

/* The pairs of an external aligner's Pharaoh file into lc; 0, or 1 after printing why. */
static int count_links(lex_counter *lc, textfile *S, textfile *T, textfile *A, const char *src, const char *tgt,
                       const char *align, char **sw, char **tw)
{
    nmt_err err;
    if (textfile_read(A, align, &err)) { fprintf(stderr, "nmt lex: error: %s\n", err.msg); return 1; }
    if (A->nlines != S->nlines) {
        fprintf(stderr, "nmt lex: error: %s has %ld lines but %s has %ld\n", align, A->nlines, src, S->nlines);
        return 1;
    }
    for (long l = 0; l < S->nlines; l++) {
        int ns = text_split_words(S->line[l], sw, LEX_MAX_WORDS), nt = text_split_words(T->line[l], tw, LEX_MAX_WORDS);
        if (too_long(ns, nt, src, tgt, l + 1)) return 1;
        if (lex_counter_add_links(lc, sw, ns, tw, nt, A->line[l], align, l + 1, &err)) {
            fprintf(stderr, "nmt lex: error: %s\n", err.msg);
            return 1;
        }
    }
    return 0;
}

/* The pairs of the model's forced alignments into lc, batch sentences at a time (al holds
 * batch results); 0, or 1 after printing why. */
static int count_attention(lex_counter *lc, textfile *S, textfile *T, const char *model, long batch, const char *src,
                           const char *tgt, char **sw, char **tw, nmt_alignment *al)
{
    nmt_err err;
    nmt_model *m = NULL;
    nmt_decoder *d = NULL;
    nmt_translate_opts o = nmt_translate_default_opts();
    o.batch = 80;
    int bad = nmt_model_load(&m, model, &err) || nmt_decoder_init(&d, m, &o, &err);
    if (bad) fprintf(stderr, "nmt lex: error: %s\n", err.msg);
    else if (nmt_model_has_subwords(m)) { /* its attention is over pieces, and the corpus lines are words: a table of neither */
        fprintf(stderr, "nmt lex: error: %s is a subword model: --model reads word models' attention over the "
                "corpus's words; a subword model's table must be of pieces (use --align on text segmented with "
                "nmt segment)\n", model);
        bad = 1;
    } else if (nmt_model_has_text_stages(m) && cmd_model_lines(m, S, T, &err)) { /* its table is keyed by the words it reads */
        fprintf(stderr, "nmt lex: error: %s\n", err.msg);
        bad = 1;
    }
    for (long l0 = 0; !bad && l0 < S->nlines; l0 += batch) {
        int n = (int)(S->nlines - l0 < batch ? S->nlines - l0 : batch);
        if (nmt_force_align(d, (const char *const *)S->line + l0, (const char *const *)T->line + l0, n, al, &err)) {
            fprintf(stderr, "nmt lex: error: %s (lines %ld-%ld)\n", err.msg, l0 + 1, l0 + n);
            bad = 1;
            break;
        }
        if (!al[0].attention && n > 0) {
            fprintf(stderr, "nmt lex: error: %s has no attention (an RNNencdec model): use --align\n", model);
            bad = 1;
        }
        for (int k = 0; k < n && !bad; k++) {
            /* split after aligning: splitting writes NULs into the lines */
            int ns = text_split_words(S->line[l0 + k], sw, LEX_MAX_WORDS), nt = text_split_words(T->line[l0 + k], tw, LEX_MAX_WORDS);
            bad = too_long(ns, nt, src, tgt, l0 + k + 1);
            if (!bad && lex_counter_add_attention(lc, &al[k], sw, ns, tw, nt, &err)) {
                fprintf(stderr, "nmt lex: error: %s\n", err.msg);
                bad = 1;
            }
        }
        nmt_alignment_free(al, n);
    }
    nmt_decoder_free(d);
    nmt_model_free(m);
    return bad;
}

int cmd_lex(int argc, char **argv)
{
    const char *src = NULL, *tgt = NULL, *model = NULL, *align = NULL, *out = NULL;
    long min_count = 1, batch = 200;
    int threads = 0, top = 1;
    opt table[] = {
        OPT_STR("--src", &src, "FILE", "source sentences, tokenized (raw for a --model trained on raw text),\n"
                "one per line"),
        OPT_STR("--tgt", &tgt, "FILE", "target sentences (the same number of lines)"),
        OPT_STR("--model", &model, "MODEL", "align with the model's attention (forced decoding; each target word to\n"
                "its most-attended source word; RNNsearch-family models)"),
        OPT_STR("--align", &align, "FILE", "or read the alignments: one line per pair, Pharaoh 's-t' links, 0-based"),
        OPT_STR("--out", &out, "TABLE", "where the table is written"),
        OPT_LONG("--min-count", &min_count, 1, 1L << 40, "N", "leave out pairs seen fewer than N times (default {})"),
        OPT_INT("--top", &top, 1, 1000000, "K", "write each source word's K most frequent targets, one line each, most\n"
                "frequent first (default {}; a table for 'nmt translate --shortlist'; --unk-replace\n"
                "reads tables of one target per source word)"),
        OPT_LONG("--batch", &batch, 1, 100000, "N", "forced decoding batch size (default {})"),
        OPT_INT("--threads", &threads, 1, 1024, "N", "threads (default: all cores)"),
        CMD_DEVICE_OPT,
        OPT_END,
    };
    opt_cmd c = {"lex", "Usage: nmt lex --src FILE --tgt FILE (--model MODEL | --align FILE) --out TABLE [--min-count N] [--top K]\n"
                 "Builds the lexical table used by 'nmt translate --unk-replace TABLE': each source word's most\n"
                 "frequently aligned target word, as TSV 'source<TAB>target<TAB>count<TAB>source count'; with\n"
                 "--top K its K most frequent ones, the table of 'nmt translate --shortlist TABLE'.\n\n",
                 "\nLimits: at most 4096 words per line (longer lines are an error); --out may not be an input.\n",
                 table, 0, NULL};
    int nargs, prc = opt_parse(&c, argc, argv, NULL, &nargs);
    if (prc != OPT_GO) return prc;
    if ((prc = cmd_one_model("lex", opt_given(&c, "--model")))) return prc;
    if (threads) nmt_set_threads(threads);
    if (!src || !tgt || !out || !model == !align) {
        fprintf(stderr, "nmt lex: error: --src, --tgt, --out and one of --model or --align are required\n");
        return CMD_USAGE;
    }
    nmt_err err;
    path_role in[4] = {{src, "the source corpus"}, {tgt, "the target corpus"}, {model, "the model"}, {align, "the alignments"}};
    path_role outp[1] = {{out, "the table (--out)"}};
    if (path_check_outputs(in, 4, outp, 1, &err)) { fprintf(stderr, "nmt lex: error: %s\n", err.msg); return CMD_ERR; }
    textfile S, T, A;
    memset(&A, 0, sizeof A);
    int rc = CMD_ERR;
    if (textfile_read(&S, src, &err)) { fprintf(stderr, "nmt lex: error: %s\n", err.msg); return CMD_ERR; }
    if (textfile_read(&T, tgt, &err)) { fprintf(stderr, "nmt lex: error: %s\n", err.msg); textfile_free(&S); return CMD_ERR; }
    lex_counter *lc = lex_counter_init();
    char **sw = malloc(sizeof(char *) * LEX_MAX_WORDS), **tw = malloc(sizeof(char *) * LEX_MAX_WORDS);
    nmt_alignment *al = malloc(sizeof(nmt_alignment) * batch);
    if (!lc || !sw || !tw || !al) { fprintf(stderr, "nmt lex: error: out of memory\n"); goto out; }
    if (S.nlines != T.nlines) { fprintf(stderr, "nmt lex: error: %s has %ld lines but %s has %ld\n", src, S.nlines, tgt, T.nlines); goto out; }
    if (align ? count_links(lc, &S, &T, &A, src, tgt, align, sw, tw)
              : count_attention(lc, &S, &T, model, batch, src, tgt, sw, tw, al))
        goto out;
    long entries;
    if (lex_counter_write(lc, out, min_count, top, &entries, &err)) { fprintf(stderr, "nmt lex: error: %s\n", err.msg); goto out; }
    fprintf(stderr, "nmt lex: %ld %s in %s\n", entries, top > 1 ? "pairs" : "source words", out);
    rc = CMD_OK;
out:
    free(sw); free(tw); free(al);
    lex_counter_free(lc);
    textfile_free(&S); textfile_free(&T); textfile_free(&A);
    return rc;
}
