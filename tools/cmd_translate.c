/* cmd_translate.c: `nmt translate`, by one model or an ensemble (--model given again, or --models
 * A B ...; cmd_models.h). Input is read in batches for throughput, but a batch is decoded
 * as soon as no more input is waiting, so that a user or a program driving the command line
 * line by line gets each answer at once. One output line per input line, in order; an empty
 * line gives an empty line. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "cmd.h"
#include "cmd_models.h"
#include "data/corpus.h"
#include "nmt.h"
#include "opt.h"
#include "text/linereader.h"
#include "text/pipeline.h"
#include "text/tokenize.h"

/* ------------------------------------------------------------------ output */
enum { ALIGN_NONE, ALIGN_HARD, ALIGN_SOFT };

/* Hard: each target word to its most-attended source word (the source EOS never chosen; ties
 * to the lower index), Pharaoh "src-tgt", 0-based. Soft: one row per target word, weights over
 * the source words and EOS, rows separated by " ; ". EOS rows are left out of both. h's
 * attention is over words already (word_attention). */
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
    nmt_word_map *src_words; /* [cap]: each gathered line's token -> word map (for alignments) */
    float *att;      /* a hypothesis's attention over words */
    size_t att_cap;
    int tok_said;    /* input that looks tokenized, for a pipeline that tokenizes: said once */
} stream;

/* h with its attention merged from tokens to words (a subword model's pieces; a word model's
 * maps are the identity) into st->att: *w's rows are the output's words, its columns the
 * source's words and EOS. */
static int word_attention(stream *st, const nmt_hypothesis *h, const nmt_text_line *out, const nmt_word_map *src,
                          nmt_hypothesis *w, nmt_err *err)
{
    *w = *h;
    if (!h->attention) return NMT_OK;
    int finished = h->attn_rows > h->n_words;
    size_t need = (size_t)(out->n_text_words + finished) * (src->n_words + 1);
    if (need > st->att_cap) {
        float *a = realloc(st->att, sizeof *a * need);
        if (!a) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        st->att = a;
        st->att_cap = need;
    }
    nmt_word_map tgt = {h->n_words, out->word_of, out->n_text_words};
    nmt_word_map sm = *src;
    sm.n_tokens = h->attn_cols - 1; /* the tokens read: a long source is cut */
    int rc = nmt_attention_to_words(st->att, h->attention, finished, &tgt, &sm, err);
    w->attention = st->att;
    w->n_words = out->n_text_words;
    w->attn_rows = out->n_text_words + finished;
    w->attn_cols = src->n_words + 1;
    return rc;
}

/* One hypothesis: its text through the target pipeline (joined, detokenized if asked), then its
 * score if asked, then its alignment in words if asked. */
static int print_hyp(stream *st, const nmt_hypothesis *h, const nmt_word_map *src, int score, nmt_err *err)
{
    nmt_text_line out;
    int rc = nmt_text_decode_line(st->tgt, h->words, h->n_words, &out, err);
    if (rc) return rc;
    fwrite(out.text, 1, out.len, stdout);
    if (score) printf(" ||| %.6f", h->score);
    if (!st->align) return NMT_OK;
    nmt_hypothesis w;
    if ((rc = word_attention(st, h, &out, src, &w, err))) return rc;
    print_alignment(&w, st->align);
    return NMT_OK;
}

/* The source side reads raw text through the Moses pipeline the model's data went through (with
 * --tokenize, or as the model stores it); the target side detokenizes the output (with
 * --detokenize, or as the model stores it). */
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
static int next_sentence(stream *st, char **out, nmt_word_map *map)
{
    char *line;
    size_t len;
    nmt_err err;
    nmt_text_line tl;
    int got = linereader_next(&st->in, &line, &len, &err);
    if (got < 0) fprintf(stderr, "nmt translate: error: %s\n", err.msg);
    if (got <= 0) return got < 0 ? -1 : 0;
    const char *mark = st->tok_said || !text_pipe_tokenizes(st->src) ? NULL : text_tokenized_mark(line, len);
    if (mark) {
        fprintf(stderr, "[W::translate] %s:%ld: '%s' looks like tokenized text, which is tokenized again here (the model's "
                "text stages, or --tokenize): give raw text\n", st->in.name, st->in.lineno, mark);
        st->tok_said = 1;
    }
    if (nmt_text_encode(st->src, line, len, &tl, &err)) {
        fprintf(stderr, "nmt translate: error: %s:%ld: %s\n", st->in.name, st->in.lineno, err.msg);
        return -1;
    }
    if (tl.n_invalid)
        fprintf(stderr, "[W::translate] %s:%ld: invalid UTF-8 replaced by U+FFFD (%d bytes)\n", st->in.name, st->in.lineno, tl.n_invalid);
    if (tl.n_words > NMT_MAX_SRC_WORDS)
        fprintf(stderr, "[W::translate] %s:%ld: %d %s, translating the first %d\n", st->in.name, st->in.lineno, tl.n_words,
                tl.n_words == tl.n_text_words ? "words" : "pieces", NMT_MAX_SRC_WORDS);
    int *wof = st->align ? malloc(sizeof *wof * ((size_t)tl.n_words + 1)) : NULL;
    *map = (nmt_word_map){tl.n_words, wof, tl.n_text_words};
    if (wof) memcpy(wof, tl.word_of, sizeof *wof * (size_t)tl.n_words);
    if (!(*out = strdup(tl.text)) || (st->align && !wof)) {
        fprintf(stderr, "nmt translate: error: out of memory\n");
        free(*out);
        free(wof);
        *out = NULL;
        map->word_of = NULL;
        return -1;
    }
    return 1;
}

/* One input's answer: its 1-best line, or its n-best lines. */
static int print_translation(stream *st, const nmt_translation *t, const nmt_word_map *src, long index, nmt_err *err)
{
    int rc = 0;
    if (!st->nbest) {
        if (t->n_hyps) rc = print_hyp(st, &t->hyps[0], src, st->scores, err);
        putchar('\n');
        return rc;
    }
    for (int h = 0; h < t->n_hyps && !rc; h++) {
        printf("%ld ||| ", index);
        rc = print_hyp(st, &t->hyps[h], src, 1, err);
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
    st->src_words = calloc(st->cap, sizeof *st->src_words);
    int rc = batch && tr && st->src_words ? CMD_OK : CMD_ERR, got = 1;
    if (rc) fprintf(stderr, "nmt translate: error: out of memory\n");
    long index = 0;
    nmt_err err;
    while (!rc && got > 0) {
        int nb = 0;
        do nb += (got = next_sentence(st, &batch[nb], &st->src_words[nb])) > 0;
        while (got > 0 && nb < st->cap && linereader_ready(&st->in));
        if (got < 0) rc = CMD_ERR;
        int failed = nb && nmt_translate(st->d, (const char *const *)batch, nb, tr, &err);
        if (failed) {
            fprintf(stderr, "nmt translate: error: %s (input lines %ld-%ld)\n", err.msg, index + 1, index + nb);
            rc = CMD_ERR;
        }
        for (int i = 0; i < nb && !failed; i++)
            if ((failed = print_translation(st, &tr[i], &st->src_words[i], index++, &err))) {
                fprintf(stderr, "nmt translate: error: %s\n", err.msg);
                rc = CMD_ERR;
            }
        fflush(stdout); /* each batch's answers leave at once: the caller may be waiting */
        nmt_translation_free(tr, nb); /* a failed nmt_translate has left them empty */
        for (int i = 0; i < nb; i++) {
            free(batch[i]);
            free((int *)st->src_words[i].word_of);
        }
    }
    free(batch);
    free(tr);
    free(st->src_words);
    free(st->att);
    return rc;
}


static const char translate_usage[] =
    "Usage: nmt translate --model FILE [--model FILE ...] [options] < input > output\n"
    "Translates tokenized text (one sentence per line, words separated by spaces) with beam search\n"
    "(or draws translations from the model with --sample); a model trained on raw text (nmt train\n"
    "--tokenize, or --subwords) reads raw text and writes raw text, its text stages being its own,\n"
    "and a subword model's alignments are over words. One output line per input line, in order; an\n"
    "empty line gives an empty line. Several models (with the same vocabularies) decode as an\n"
    "ensemble.\n\n";

/* What translate's options set. */
struct translate_args {
    nmt_translate_opts o;
    model_list models;
    const char *input, *lexpath;
    cmd_shortlist sl;
    tok_opts topt;
    int tok_lang, detok_lang, align, scores, nbest_out;
};

/* Parses translate's options into a; OPT_GO, or the exit status (help, usage error). */
static int translate_options(int argc, char **argv, struct translate_args *a)
{
    memset(a, 0, sizeof *a);
    a->o = nmt_translate_default_opts();
    a->topt = tok_opts_default();
    a->tok_lang = a->detok_lang = -1;
    a->align = ALIGN_NONE;
    nmt_translate_opts *o = &a->o;
    int threads = 0, align_kind = 0;
    long seed = (long)o->seed;
    opt table[] = {
        MODEL_OPTS(&a->models),
        OPT_INT("--beam", &o->beam, 1, 1000, "K", "beam size (default {}; 1 = greedy)"),
        OPT_FLAG("--length-norm", &o->normalize, 1, "rank finished hypotheses by log-probability / length (EOS counted;\nto the power --length-penalty) (default)"),
        OPT_FLAG("--no-length-norm", &o->normalize, 0, "rank by log-probability"),
        OPT_DBL("--length-penalty", &o->length_alpha, 0, 10, "ALPHA", "with length normalisation: rank by log-probability / length^ALPHA\n"
                "(default {}; Marian's --normalize ALPHA, Sockeye's --length-penalty-alpha;\n"
                "0.6 is common; 0 ranks by log-probability)"),
        OPT_DBL("--max-ratio", &o->max_ratio, 0.01, 100, "R", "at most R x (source words + 1) output tokens (default {})"),
        OPT_FLAG("--no-unk", &o->no_unk, 1, "never generate <unk>"),
        OPT_INT("--n-best", &o->n_best, 1, 1000, "K", "K lines per input, Moses style: 'INDEX ||| TRANSLATION ||| SCORE'\n"
                "(INDEX 0-based, SCORE the ranking score)"),
        OPT_CHOICE("--alignment", &align_kind, "hard|soft", "append ' ||| ' and the attention: hard = Pharaoh src-tgt pairs\n"
                   "(0-based, each target word to its most-attended source word); soft = the\n"
                   "rows of weights over the source words and EOS, ' ; ' between rows\n"
                   "(RNNsearch models only)"),
        OPT_FLAG("--scores", &a->scores, 1, "append ' ||| SCORE' to the 1-best output"),
        OPT_STR("--unk-replace", &a->lexpath, "TABLE", "replace each output <unk> by TABLE's translation (from 'nmt lex') of\n"
                "the most-attended source word, or by that word when TABLE has none"),
        OPT_FLAG("--unk-copy", &o->unk_replace, 1, "replace each output <unk> by the most-attended source word"),
        OPT_ENUM("--tokenize", &a->tok_lang, tok_lang_parse, "LANG", "en, fr or de", "read raw text: Moses-tokenize each line (en, fr, de; default escaping)"),
        OPT_FLAG("--lowercase", &a->topt.lowercase, 1, "with --tokenize: lowercase first (as lowercase.perl)"),
        OPT_FLAG("--normalize-punct", &a->topt.normalize, 1, "with --tokenize: normalize punctuation first\n"
                 "(normalize-punctuation.perl); --lowercase --normalize-punct is the\n"
                 "Multi30k preprocessing"),
        OPT_ENUM("--detokenize", &a->detok_lang, tok_lang_parse, "LANG", "en, fr or de", "write detokenized text (Moses detokenizer.perl; alignments still\n"
               "refer to tokens)"),
        OPT_FLAG("--sample", &o->sample, 1, "draw each translation from the model's distribution, word by word,\n"
                 "instead of searching (back-translation); --n-best K draws K per line.\n"
                 "A line's draws depend on --seed and its words only"),
        OPT_INT("--sample-topk", &o->sample_topk, 0, 1000000, "K", "with --sample: draw among the K most probable words only\n"
                "(default {}: all)"),
        {.names = "--sample-topp", .kind = OPTK_DBL, .dst = &o->sample_topp, .lo = 0, .hi = 1, .flags = OPT_ABOVE_LO, .arg = "P",
         .help = "with --sample: nucleus sampling, among the fewest most probable words\n"
                 "whose probabilities sum to P or more, in (0, 1] (default {}: all;\n"
                 "fairseq's --sampling-topp; 0.9 is common)"},
        OPT_DBL("--temperature", &o->temperature, 0.001, 100, "T", "with --sample: draw from p^(1/T) (default {}; below 1 sharper)"),
        OPT_LONG("--seed", &seed, 0, 9007199254740992.0, "N", "with --sample: the random seed, [0, 2^53] as serve's JSON carries\n"
                 "it (default {})"),
        OPT_INT("--batch", &o->batch, 1, 10000, "N", "sentences decoded together (default {}; fewer when the beam's\n"
                "softmax outputs would pass 64 MiB)"),
        OPT_CHOICE("--precision", &o->precision, "fp32|int8|bf16", CMD_PRECISION_HELP),
        OPT_FN("--shortlist", &a->sl, cmd_parse_shortlist, "FILE[,K[,F]]", CMD_SHORTLIST_HELP),
        OPT_INT("--threads", &threads, 1, 1024, "N", "threads (default: all cores)"),
        CMD_DEVICE_OPT,
        OPT_STR("--input", &a->input, "FILE", "read FILE instead of standard input"),
        OPT_OLD("--normalize", "--length-norm"),
        OPT_OLD("--no-normalize", "--no-length-norm"),
        OPT_END,
    };
    opt_cmd c = {"translate", translate_usage,
                 "\nLines over " STR(NMT_MAX_SRC_WORDS) " words are cut to that length with a warning; invalid UTF-8 is replaced\n"
                 "by U+FFFD with a warning; words the model does not know are read as <unk>.\n",
                 table, 0, "input comes on standard input, or with --input FILE"};
    int nargs, rc = opt_parse(&c, argc, argv, NULL, &nargs);
    if (rc != OPT_GO) return rc;
    if (threads) nmt_set_threads(threads);
    if (a->lexpath) o->unk_replace = 1;
    if (opt_given(&c, "--length-penalty") && !o->normalize) {
        fprintf(stderr, "nmt translate: error: --length-penalty goes with length normalisation, which --no-length-norm turns off\n");
        return CMD_USAGE;
    }
    o->seed = (uint64_t)seed;
    static const char *const with_sample[] = {"--sample-topk", "--sample-topp", "--temperature", "--seed"};
    for (size_t i = 0; i < sizeof with_sample / sizeof *with_sample; i++)
        if (opt_given(&c, with_sample[i]) && !o->sample) {
            fprintf(stderr, "nmt translate: error: %s goes with --sample\n", with_sample[i]);
            return CMD_USAGE;
        }
    if (o->sample && opt_given(&c, "--beam")) {
        fprintf(stderr, "nmt translate: error: --sample draws instead of searching: --beam does not apply (--n-best K draws K)\n");
        return CMD_USAGE;
    }
    a->nbest_out = opt_given(&c, "--n-best") > 0;
    if (opt_given(&c, "--alignment")) a->align = align_kind == 0 ? ALIGN_HARD : ALIGN_SOFT;
    return OPT_GO;
}


int cmd_translate(int argc, char **argv)
{
    struct translate_args args;
    int prc = translate_options(argc, argv, &args);
    if (prc != OPT_GO) return prc;
    nmt_translate_opts o = args.o;
    const char *input = args.input, *lexpath = args.lexpath;
    tok_opts topt = args.topt;
    int tok_lang = args.tok_lang, detok_lang = args.detok_lang;
    int align = args.align, scores = args.scores, nbest_out = args.nbest_out;
    if (!o.sample && o.n_best > o.beam) { fprintf(stderr, "nmt translate: error: --n-best %d is larger than the beam (%d)\n", o.n_best, o.beam); return CMD_USAGE; }
    if ((topt.lowercase || topt.normalize) && tok_lang < 0) {
        fprintf(stderr, "nmt translate: error: --lowercase and --normalize-punct go with --tokenize LANG\n");
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
    nmt_lexicon *lx = NULL;
    nmt_shortlist *sl = NULL;
    int rc = load_models("translate", &args.models);
    if (!rc && ((lexpath && nmt_lexicon_load(&lx, lexpath, &err)) ||
                (args.sl.path[0] && nmt_shortlist_load(&sl, args.sl.path, args.models.m[0], args.sl.k, args.sl.f, &err)))) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        rc = CMD_ERR;
    }
    o.lexicon = lx;
    o.shortlist = sl;
    if (!rc && decoder_of(&st.d, &args.models, &o, &err)) { /* a CPU without the precision's instructions: a failed run, as train and serve say */
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        rc = CMD_ERR;
    }
    if (!rc && text_sides(&st, args.models.m[0], tok_lang, &topt, detok_lang, &err)) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        rc = CMD_ERR;
    }
    if (!rc) rc = run_stream(&st);
    linereader_free(&st.in);
    nmt_text_free(st.src);
    nmt_text_free(st.tgt);
    nmt_decoder_free(st.d);
    nmt_lexicon_free(lx);
    nmt_shortlist_free(sl);
    free_models(&args.models);
    return rc;
}
