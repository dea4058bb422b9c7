/* cmd_translate.c: `nmt translate` and `nmt score`. Input is read in batches for throughput,
 * but a batch is decoded as soon as no more input is waiting, so that a user or a program
 * driving the command line by line gets each answer at once. One output line per input line,
 * in order; an empty line gives an empty line. */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "data/corpus.h"
#include "nmt.h"
#include "text/linereader.h"
#include "text/tokenize.h"

/* ------------------------------------------------------------------ output */
enum { ALIGN_NONE, ALIGN_HARD, ALIGN_SOFT };

/* Prints the words through the target side's text pipeline (joined, detokenized if asked). */
static int print_words(nmt_text *tgt, const nmt_hypothesis *h, nmt_err *err)
{
    const char *s;
    size_t n;
    int rc = nmt_text_decode_words(tgt, h->words, h->n_words, &s, &n, err);
    if (!rc) fwrite(s, 1, n, stdout);
    return rc;
}

/* Hard: each target word to its most-attended source word (the source EOS never chosen; ties
 * to the lower index), Pharaoh "src-tgt", 0-based. Soft: one row per target word, weights over
 * the source words and EOS, rows separated by " ; ". EOS rows are left out of both. */
static void print_alignment(const nmt_hypothesis *h, int mode)
{
    fputs(" |||", stdout);
    if (!h->attention) return;
    int cols = h->attn_cols;
    for (int i = 0; i < h->n_words; i++) {
        const float *row = h->attention + (size_t)i * cols;
        if (mode == ALIGN_HARD) {
            if (nmt_hard_link(h, i) >= 0) printf(" %d-%d", nmt_hard_link(h, i), i);
        } else {
            fputs(i ? " ;" : "", stdout);
            for (int j = 0; j < cols; j++) printf(" %.4f", row[j]);
        }
    }
}

/* ------------------------------------------------------------------ the input stream */

/* What one run of `nmt translate` reads, decodes and writes with. */
typedef struct stream {
    linereader in;
    nmt_text *src;   /* input line -> the tokenized text the model reads */
    nmt_text *tgt;   /* output words -> text */
    nmt_decoder *d;
    int cap;         /* lines gathered at most before decoding */
    int align, scores, nbest;
} stream;

/* The source side reads raw text through the Moses pipeline the model's data went through (with
 * --tokenize); the target side detokenizes the output (with --detokenize). */
static int text_sides(stream *st, const nmt_model *m, int tok_lang, const tok_opts *topt, int detok_lang, nmt_err *err)
{
    nmt_text_opts so = nmt_text_default_opts(), to = nmt_text_default_opts();
    so.lang = tok_lang;
    so.tokenize = tok_lang >= 0;
    so.lowercase = topt->lowercase;
    so.normalize_punct = topt->normalize;
    to.lang = detok_lang;
    to.detokenize = detok_lang >= 0;
    int rc = nmt_text_init_model(&st->src, &so, m, NMT_SOURCE, err);
    return rc ? rc : nmt_text_init_model(&st->tgt, &to, m, NMT_TARGET, err);
}

/* The next input line as the model reads it, in *out (to free): 1; 0 at the end of the input;
 * -1 after printing an error. */
static int next_sentence(stream *st, char **out)
{
    char *line;
    size_t len;
    nmt_err err;
    nmt_text_line tl;
    int got = linereader_next(&st->in, &line, &len, &err);
    if (got < 0) fprintf(stderr, "nmt translate: error: %s\n", err.msg);
    if (got <= 0) return got < 0 ? -1 : 0;
    if (nmt_text_encode(st->src, line, len, &tl, &err)) {
        fprintf(stderr, "nmt translate: error: %s:%ld: %s\n", st->in.name, st->in.lineno, err.msg);
        return -1;
    }
    if (tl.n_invalid)
        fprintf(stderr, "[W::translate] %s:%ld: invalid UTF-8 replaced by U+FFFD (%d bytes)\n", st->in.name, st->in.lineno, tl.n_invalid);
    if (tl.n_words > NMT_MAX_SRC_WORDS)
        fprintf(stderr, "[W::translate] %s:%ld: %d words, translating the first %d\n", st->in.name, st->in.lineno, tl.n_words, NMT_MAX_SRC_WORDS);
    if (!(*out = strdup(tl.text))) {
        fprintf(stderr, "nmt translate: error: out of memory\n");
        return -1;
    }
    return 1;
}

/* One input's answer: its 1-best line, or its n-best lines. */
static int print_translation(stream *st, const nmt_translation *t, long index, nmt_err *err)
{
    int rc = 0;
    if (!st->nbest) {
        if (t->n_hyps) {
            rc = print_words(st->tgt, &t->hyps[0], err);
            if (st->scores) printf(" ||| %.6f", t->hyps[0].score);
            if (st->align) print_alignment(&t->hyps[0], st->align);
        }
        putchar('\n');
        return rc;
    }
    for (int h = 0; h < t->n_hyps && !rc; h++) {
        printf("%ld ||| ", index);
        rc = print_words(st->tgt, &t->hyps[h], err);
        printf(" ||| %.6f", t->hyps[h].score);
        if (st->align) print_alignment(&t->hyps[h], st->align);
        putchar('\n');
    }
    if (t->n_hyps == 0) printf("%ld |||  ||| 0\n", index);
    return rc;
}

/* Gathers lines while more are waiting (up to cap), decodes them together and prints their
 * answers at once; until the end of the input or an error (the lines before it are answered). */
static int run_stream(stream *st)
{
    char **batch = calloc(st->cap, sizeof *batch);
    nmt_translation *tr = calloc(st->cap, sizeof *tr);
    int rc = batch && tr ? CMD_OK : CMD_ERR, got = 1;
    if (rc) fprintf(stderr, "nmt translate: error: out of memory\n");
    long index = 0;
    nmt_err err;
    while (!rc && got > 0) {
        int nb = 0;
        do nb += (got = next_sentence(st, &batch[nb])) > 0;
        while (got > 0 && nb < st->cap && linereader_ready(&st->in));
        if (got < 0) rc = CMD_ERR;
        int failed = nb && nmt_translate(st->d, (const char *const *)batch, nb, tr, &err);
        if (failed) {
            fprintf(stderr, "nmt translate: error: %s (input lines %ld-%ld)\n", err.msg, index + 1, index + nb);
            rc = CMD_ERR;
        }
        for (int i = 0; i < nb && !failed; i++)
            if ((failed = print_translation(st, &tr[i], index++, &err))) {
                fprintf(stderr, "nmt translate: error: %s\n", err.msg);
                rc = CMD_ERR;
            }
        fflush(stdout); /* each batch's answers leave at once: the caller may be waiting */
        nmt_translation_free(tr, nb); /* a failed nmt_translate has left them empty */
        for (int i = 0; i < nb; i++) free(batch[i]);
    }
    free(batch);
    free(tr);
    return rc;
}

static void usage_translate(FILE *f)
{
    nmt_translate_opts d = nmt_translate_default_opts();
    fprintf(f,
            "Usage: nmt translate --model FILE [options] < input > output\n"
            "Translates tokenized text (one sentence per line, words separated by spaces) with beam search.\n"
            "One output line per input line, in order; an empty line gives an empty line.\n\n"
            "  --model FILE         the model (required)\n"
            "  --beam K             beam size (default %d; 1 = greedy)\n"
            "  --normalize          rank finished hypotheses by log-probability / length, EOS counted (default)\n"
            "  --no-normalize       rank by log-probability\n"
            "  --max-ratio R        at most R x (source words + 1) output tokens (default %g)\n"
            "  --no-unk             never generate <unk>\n"
            "  --n-best K           K lines per input, Moses style: 'INDEX ||| TRANSLATION ||| SCORE' (INDEX 0-based,\n"
            "                       SCORE the ranking score)\n"
            "  --alignment hard|soft  append ' ||| ' and the attention: hard = Pharaoh src-tgt pairs (0-based, each\n"
            "                       target word to its most-attended source word); soft = the rows of weights over\n"
            "                       the source words and EOS, ' ; ' between rows (RNNsearch models only)\n"
            "  --scores             append ' ||| SCORE' to the 1-best output\n"
            "  --unk-replace TABLE  replace each output <unk> by TABLE's translation (from 'nmt lex') of the\n"
            "                       most-attended source word, or by that word when TABLE has none\n"
            "  --unk-copy           replace each output <unk> by the most-attended source word\n"
            "  --tokenize LANG      read raw text: Moses-tokenize each line (en, fr, de; default escaping)\n"
            "  --lowercase          with --tokenize: lowercase first (as lowercase.perl)\n"
            "  --normalize-punct    with --tokenize: normalize punctuation first (normalize-punctuation.perl);\n"
            "                       --lowercase --normalize-punct is the Multi30k preprocessing\n"
            "  --detokenize LANG    write detokenized text (Moses detokenizer.perl; alignments still refer to tokens)\n"
            "  --batch N            sentences decoded together (default %d; fewer when the beam's\n"
            "                       softmax outputs would pass 64 MiB)\n"
            "  --threads N          threads (default: all cores)\n"
            "  --input FILE         read FILE instead of standard input\n\n"
            "Lines over %d words are cut to that length with a warning; invalid UTF-8 is replaced by U+FFFD\n"
            "with a warning; words the model does not know are read as <unk>.\n",
            d.beam, d.max_ratio, d.batch, NMT_MAX_SRC_WORDS);
}

static int load_model(const char *cmd, const char *path, nmt_model **m)
{
    nmt_err err;
    if (!path) {
        fprintf(stderr, "nmt %s: --model is required (nmt %s --help)\n", cmd, cmd);
        return CMD_USAGE;
    }
    if (nmt_model_load(m, path, &err)) {
        fprintf(stderr, "nmt %s: error: %s\n", cmd, err.msg);
        return CMD_ERR;
    }
    return CMD_OK;
}

int cmd_translate(int argc, char **argv)
{
    nmt_translate_opts o = nmt_translate_default_opts();
    const char *model = NULL, *input = NULL, *lexpath = NULL;
    tok_opts topt = tok_opts_default();
    int tok_lang = -1, detok_lang = -1;
    int align = ALIGN_NONE, scores = 0, nbest_out = 0;
    long v;
    double x;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage_translate(stdout); return CMD_OK; }
        if (!strcmp(a, "--normalize")) { o.normalize = 1; continue; }
        if (!strcmp(a, "--no-normalize")) { o.normalize = 0; continue; }
        if (!strcmp(a, "--no-unk")) { o.no_unk = 1; continue; }
        if (!strcmp(a, "--scores")) { scores = 1; continue; }
        if (!strcmp(a, "--unk-copy")) { o.unk_replace = 1; continue; }
        if (!strcmp(a, "--lowercase")) { topt.lowercase = 1; continue; }
        if (!strcmp(a, "--normalize-punct")) { topt.normalize = 1; continue; }
        if (strncmp(a, "--", 2)) { fprintf(stderr, "nmt translate: unexpected argument '%s' (input comes on stdin)\n", a); return CMD_USAGE; }
        if (i + 1 >= argc) { fprintf(stderr, "nmt translate: %s needs a value\n", a); return CMD_USAGE; }
        const char *val = argv[++i];
        if (!strcmp(a, "--model")) model = val;
        else if (!strcmp(a, "--input")) input = val;
        else if (!strcmp(a, "--unk-replace")) { lexpath = val; o.unk_replace = 1; }
        else if (!strcmp(a, "--tokenize") || !strcmp(a, "--detokenize")) {
            int l = tok_lang_parse(val);
            if (l < 0) { fprintf(stderr, "nmt translate: %s '%s': expected en, fr or de\n", a, val); return CMD_USAGE; }
            if (a[2] == 't') tok_lang = l;
            else detok_lang = l;
        }
        else if (!strcmp(a, "--beam")) { if (cmd_parse_long("translate", a, val, 1, 1000, &v)) return CMD_USAGE; o.beam = (int)v; }
        else if (!strcmp(a, "--n-best")) { if (cmd_parse_long("translate", a, val, 1, 1000, &v)) return CMD_USAGE; o.n_best = (int)v; nbest_out = 1; }
        else if (!strcmp(a, "--batch")) { if (cmd_parse_long("translate", a, val, 1, 10000, &v)) return CMD_USAGE; o.batch = (int)v; }
        else if (!strcmp(a, "--threads")) { if (cmd_parse_long("translate", a, val, 1, 1024, &v)) return CMD_USAGE; nmt_set_threads((int)v); }
        else if (!strcmp(a, "--max-ratio")) { if (cmd_parse_double("translate", a, val, 0.01, 100, &x)) return CMD_USAGE; o.max_ratio = x; }
        else if (!strcmp(a, "--alignment")) {
            if (!strcmp(val, "hard")) align = ALIGN_HARD;
            else if (!strcmp(val, "soft")) align = ALIGN_SOFT;
            else { fprintf(stderr, "nmt translate: --alignment '%s': expected hard or soft\n", val); return CMD_USAGE; }
        } else { fprintf(stderr, "nmt translate: unknown option '%s' (nmt translate --help)\n", a); return CMD_USAGE; }
    }
    if (o.n_best > o.beam) { fprintf(stderr, "nmt translate: --n-best %d is larger than the beam (%d)\n", o.n_best, o.beam); return CMD_USAGE; }
    if ((topt.lowercase || topt.normalize) && tok_lang < 0) {
        fprintf(stderr, "nmt translate: --lowercase and --normalize-punct go with --tokenize LANG\n");
        return CMD_USAGE;
    }
    o.attention = align != ALIGN_NONE;
    stream st = {.cap = o.batch * 4, .align = align, .scores = scores, .nbest = nbest_out};
    nmt_err err;
    /* the input first: a closed standard input is seen before a file opened later takes its number */
    if (input ? linereader_init(&st.in, input, 0, &err) : linereader_init_fd(&st.in, 0, "stdin", 0, &err)) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        return CMD_ERR;
    }
    nmt_model *m = NULL;
    nmt_lexicon *lx = NULL;
    int rc = load_model("translate", model, &m);
    if (!rc && align != ALIGN_NONE && nmt_model_config(m)->arch == NMT_ARCH_RNNENC)
        fprintf(stderr, "[W::translate] an RNNencdec model has no attention: alignments will be empty\n");
    if (!rc && lexpath && nmt_lexicon_load(&lx, lexpath, &err)) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        rc = CMD_ERR;
    }
    o.lexicon = lx;
    if (!rc && nmt_decoder_init(&st.d, m, &o, &err)) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        rc = CMD_USAGE;
    }
    if (!rc && text_sides(&st, m, tok_lang, &topt, detok_lang, &err)) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        rc = CMD_ERR;
    }
    if (!rc) rc = run_stream(&st);
    linereader_free(&st.in);
    nmt_text_free(st.src);
    nmt_text_free(st.tgt);
    nmt_decoder_free(st.d);
    nmt_lexicon_free(lx);
    nmt_model_free(m);
    return rc;
}

/* ------------------------------------------------------------------ nmt score */
int cmd_score(int argc, char **argv)
{
    const char *model = NULL, *src = NULL, *tgt = NULL;
    long v;
    int rc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("Usage: nmt score --model FILE --src FILE --tgt FILE [--threads N]\n"
                   "Forced decoding: for each pair, the log-probability of the target (with its EOS) given the source.\n"
                   "Prints one line per pair: TOTAL<TAB>PER_TOKEN<TAB>TOKENS (tokens count the EOS).\n");
            return CMD_OK;
        }
        if (i + 1 >= argc) { fprintf(stderr, "nmt score: %s needs a value\n", a); return CMD_USAGE; }
        const char *val = argv[++i];
        if (!strcmp(a, "--model")) model = val;
        else if (!strcmp(a, "--src")) src = val;
        else if (!strcmp(a, "--tgt")) tgt = val;
        else if (!strcmp(a, "--threads")) { if (cmd_parse_long("score", a, val, 1, 1024, &v)) return CMD_USAGE; nmt_set_threads((int)v); }
        else { fprintf(stderr, "nmt score: unknown option '%s' (nmt score --help)\n", a); return CMD_USAGE; }
    }
    if (!src || !tgt) { fprintf(stderr, "nmt score: --src and --tgt are required\n"); return CMD_USAGE; }
    nmt_model *m = NULL;
    if ((rc = load_model("score", model, &m))) return rc;
    textfile S = {0}, T = {0};
    nmt_err err;
    rc = CMD_ERR;
    if (textfile_read(&S, src, &err) || textfile_read(&T, tgt, &err)) {
        fprintf(stderr, "nmt score: error: %s\n", err.msg);
        goto out;
    }
    long ns = S.nlines;
    if (ns != T.nlines) {
        fprintf(stderr, "nmt score: error: %s has %ld lines but %s has %ld\n", src, ns, tgt, T.nlines);
        goto out;
    }
    nmt_translate_opts o = nmt_translate_default_opts();
    nmt_decoder *d = NULL;
    double *lp = malloc(sizeof(double) * (ns ? ns : 1));
    int *nt_ = malloc(sizeof(int) * (ns ? ns : 1));
    if (nmt_decoder_init(&d, m, &o, &err) || nmt_score(d, (const char *const *)S.line, (const char *const *)T.line, (int)ns, lp, nt_, &err)) {
        fprintf(stderr, "nmt score: error: %s\n", err.msg);
    } else {
        for (long i = 0; i < ns; i++) printf("%.6f\t%.6f\t%d\n", lp[i], lp[i] / nt_[i], nt_[i]);
        rc = CMD_OK;
    }
    free(lp);
    free(nt_);
    nmt_decoder_free(d);
out:
    textfile_free(&S);
    textfile_free(&T);
    nmt_model_free(m);
    return rc;
}
