/* cmd_translate.c: `nmt translate`, by one model or an ensemble (--model given again, or --models
 * A B ...; cmd_models.h). Input is read in batches for throughput, but a batch is decoded
 * as soon as no more input is waiting, so that a user or a program driving the command line
 * line by line gets each answer at once. One output line per input line, in order; an empty
 * line gives an empty line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "cmd.h"
#include "cmd_models.h"
#include "cmd_output.h"
#include "hints.h"
#include "nmt.h"
#include "opt.h"
#include "text/linereader.h"
#include "text/tokenize.h"

#define MAX_INPUTS 256 /* input files as arguments */

/* ------------------------------------------------------------------ the input stream */

/* What one run of `nmt translate` reads, decodes and writes with. */
typedef struct stream {
    linereader in;
    const char *const *inputs; /* the input files still to read after in's, in turn */
    int n_inputs;
    nmt_worker *w;   /* the library's translation worker: text -> ids -> search -> text */
    int cap;         /* lines gathered at most before decoding */
    out_fmt out;     /* how the answers are written (cmd_output.h) */
    cmd_progress prog;
    int tok_said;    /* input that looks tokenized, for a pipeline that tokenizes: said once */
    cmd_hints *hints; /* each line's prefix and constraints (hints.c) */
} stream;

/* path ("-": standard input) as r */
static int open_input(linereader *r, const char *path, nmt_err *err)
{
    return strcmp(path, "-") ? linereader_init(r, path, 0, err) : linereader_init_fd(r, 0, "stdin", 0, err);
}

/* The next input line, read by the worker with its hints, in *s (to free): 1; 0 at the end of
 * the input; -1 after printing an error. */
static int next_sentence(stream *st, nmt_sentence *s)
{
    char *line;
    size_t len;
    nmt_err err;
    int got = linereader_next(&st->in, &line, &len, &err);
    while (got == 0 && st->n_inputs > 0) { /* the next file goes on where this one ends */
        linereader_free(&st->in);
        st->n_inputs--;
        got = open_input(&st->in, *st->inputs++, &err);
        if (!got) got = linereader_next(&st->in, &line, &len, &err);
        else got = -1;
    }
    if (got < 0) fprintf(stderr, "nmt translate: error: %s\n", err.msg);
    if (got <= 0) return got < 0 ? -1 : 0;
    const char *fields = cmd_hints_cut(st->hints, line, &len);
    nmt_text *src = nmt_worker_text(st->w, NMT_SOURCE);
    const char *mark = st->tok_said ? NULL : nmt_text_looks_tokenized(src, line, len);
    if (mark) {
        fprintf(stderr, "[W::translate] %s:%ld: '%s' looks like tokenized text, which is tokenized again here (the model's "
                "text stages, or --tokenize): give raw text\n", st->in.name, st->in.lineno, mark);
        st->tok_said = 1;
    }
    if (nmt_worker_encode(st->w, line, len, s, &err)) {
        fprintf(stderr, "nmt translate: error: %s:%ld: %s\n", st->in.name, st->in.lineno, err.msg);
        return -1;
    }
    if (s->n_invalid)
        fprintf(stderr, "[W::translate] %s:%ld: invalid UTF-8 replaced by U+FFFD (%d bytes)\n", st->in.name, st->in.lineno, s->n_invalid);
    if (s->src.n_ids > NMT_MAX_SRC_WORDS)
        fprintf(stderr, "[W::translate] %s:%ld: %d %s, translating the first %d\n", st->in.name, st->in.lineno, s->src.n_ids,
                s->src.n_ids == s->map.n_words ? "words" : "pieces", NMT_MAX_SRC_WORDS);
    if (cmd_hints_on(st->hints) && cmd_hints_line(st->hints, st->w, s, fields, st->in.name, st->in.lineno, &err)) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        nmt_sentence_free(s);
        return -1;
    }
    return 1;
}

/* One gathering of input lines: the sentences, their translations and what the writer reads. */
typedef struct batch {
    nmt_sentence *sent;
    nmt_translation *tr;
    const char **src;
    nmt_word_map *map;
    int nb;
    long index; /* 0-based input line of sent[0] */
} batch;

static int batch_alloc(batch *b, int cap)
{
    b->sent = calloc(cap, sizeof *b->sent);
    b->tr = calloc(cap, sizeof *b->tr);
    b->src = calloc(cap, sizeof *b->src);
    b->map = calloc(cap, sizeof *b->map);
    return b->sent && b->tr && b->src && b->map ? CMD_OK : CMD_ERR;
}

/* What one gathering held, freed for the next (a failed translation has left tr empty). */
static void batch_clear(batch *b)
{
    nmt_translation_free(b->tr, b->nb);
    for (int i = 0; i < b->nb; i++) nmt_sentence_free(&b->sent[i]);
    b->nb = 0;
}

static void batch_free(batch *b)
{
    free(b->sent);
    free(b->tr);
    free(b->src);
    free(b->map);
}

/* Gathers lines into b while more are waiting, up to cap: 1 (more may follow), 0 (the input's
 * end) or -1 (an error, printed; the lines before it are in b). */
static int gather(stream *st, batch *b, long index)
{
    int got;
    b->nb = 0;
    b->index = index;
    do b->nb += (got = next_sentence(st, &b->sent[b->nb])) > 0;
    while (got > 0 && b->nb < st->cap && linereader_ready(&st->in));
    return got;
}

static void translate_failed(const batch *b, const nmt_err *err)
{
    fprintf(stderr, "nmt translate: error: %s (input lines %ld-%ld)\n", err->msg, b->index + 1, b->index + b->nb);
}

/* b's answers, written at once: 0, or -1 after printing an error. */
static int write_answers(stream *st, batch *b)
{
    nmt_err err;
    for (int i = 0; i < b->nb; i++) {
        b->src[i] = b->sent[i].src.tokens;
        b->map[i] = b->sent[i].map;
    }
    if (cmd_out_batch(&st->out, (char *const *)b->src, b->tr, b->map, b->nb, b->index, &err)) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* After b's answers: the progress, and the output flushed (the caller may be waiting for it). */
static void batch_done(stream *st, batch *b)
{
    cmd_progress_add(&st->prog, b->nb);
    fflush(stdout);
    batch_clear(b);
}

/* Gathers lines while more are waiting (up to cap), decodes them together and prints their
 * answers at once; until the end of the input or an error (the lines before it are answered). */
static int run_stream(stream *st)
{
    batch b = {0};
    int rc = batch_alloc(&b, st->cap), got = 1;
    if (rc) fprintf(stderr, "nmt translate: error: out of memory\n");
    long index = 0;
    while (!rc && got > 0) {
        nmt_err err;
        got = gather(st, &b, index);
        if (got < 0) rc = CMD_ERR;
        if (b.nb && nmt_worker_translate(st->w, b.sent, b.nb, b.tr, &err)) {
            translate_failed(&b, &err);
            rc = CMD_ERR;
        } else if (b.nb && write_answers(st, &b)) {
            rc = CMD_ERR;
        }
        index += b.nb;
        batch_done(st, &b);
    }
    batch_free(&b);
    return rc;
}

/* run_stream with --workers: each gathering is put in the pipeline as soon as it is read, and the
 * answers are written in input order, the oldest as soon as it is ready when no input is waiting
 * (so that a caller feeding lines one at a time is answered) or when every slot is in flight.
 * A bad input line ends the reading, and the lines before it are answered; after a failed
 * translation the batches still in flight are waited for, not written. */
static int run_parallel(stream *st, nmt_pipeline *pl, int workers)
{
    int depth = 2 * workers, head = 0, tail = 0, got = 1, bad_in = 0, bad_out = 0;
    batch *ring = calloc(depth, sizeof *ring);
    bad_out = ring ? CMD_OK : CMD_ERR;
    for (int i = 0; i < depth && !bad_out; i++) bad_out = batch_alloc(&ring[i], st->cap);
    if (bad_out) fprintf(stderr, "nmt translate: error: out of memory\n");
    long index = 0;
    while (head < tail || (!bad_in && !bad_out && got > 0)) {
        nmt_err err;
        int can_read = !bad_in && !bad_out && got > 0 && tail - head < depth;
        if (head < tail && (!can_read || !linereader_ready(&st->in))) {
            batch *b = &ring[head++ % depth];
            nmt_translation *out;
            if (nmt_pipeline_get(pl, &out, &err)) {
                if (!bad_out) translate_failed(b, &err);
                bad_out = 1;
            } else if (!bad_out && write_answers(st, b)) {
                bad_out = 1;
            }
            batch_done(st, b);
            continue;
        }
        batch *b = &ring[tail % depth];
        got = gather(st, b, index);
        bad_in = got < 0;
        index += b->nb;
        if (b->nb && nmt_pipeline_put(pl, b->sent, b->nb, b->tr, &err)) { /* not reached: a slot is free */
            fprintf(stderr, "nmt translate: error: %s\n", err.msg);
            batch_clear(b);
            bad_out = 1;
        } else if (b->nb) {
            tail++;
        }
    }
    for (int i = 0; ring && i < depth; i++) batch_free(&ring[i]);
    free(ring);
    return bad_in || bad_out ? CMD_ERR : CMD_OK;
}


static const char translate_usage[] =
    "Usage: nmt translate --model FILE [--model FILE ...] [options] [FILE...] [< input] [> output]\n"
    "Translates tokenized text (one sentence per line, words separated by spaces) with beam search\n"
    "(or draws translations from the model with --sample); a model trained on raw text (nmt train\n"
    "--tokenize, or --subwords) reads raw text and writes raw text, its text stages being its own,\n"
    "and a subword model's alignments are over words. One output line per input line, in order; an\n"
    "empty line gives an empty line. Several models (with the same vocabularies) decode as an\n"
    "ensemble. It reads the files given, in turn ('-' for standard input), or standard input.\n\n";

/* What translate's options set. */
struct translate_args {
    nmt_translate_opts o;
    model_list models;
    const char *input, *lexpath, *output;
    char *files[MAX_INPUTS]; /* input files given as arguments */
    int n_files;
    cmd_shortlist sl;
    tok_opts topt;
    int tok_lang, detok_lang, align, scores, nbest_out, word_scores, progress;
    int workers, threads; /* --workers (1: the products' threads only), --threads (0: not given) */
    cmd_hints hints;
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
    int align_kind = 0;
    a->workers = 1;
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
        OPT_INT("--n-best", &o->n_best, 1, 1000, "K", "K lines per input in Marian's (and Moses') format:\n"
                "'INDEX ||| TRANSLATION ||| F0= LOGPROB ||| SCORE' (INDEX 0-based; an\n"
                "ensemble: F0= F1= ..., each model's log-probability; SCORE the ranking score)"),
        OPT_CHOICE("--alignment", &align_kind, "hard|soft", "append ' ||| ' and the attention over the printed words: hard =\n"
                   "Pharaoh src-tgt pairs (0-based, each target word to its most-attended\n"
                   "source word); soft = the rows of weights over the source words and EOS,\n"
                   "' ; ' between rows (RNNsearch models only)"),
        OPT_FLAG("--scores", &a->scores, 1, "append ' ||| SCORE' to the 1-best output"),
        OPT_STR("--unk-replace", &a->lexpath, "TABLE", "replace each output <unk> by TABLE's translation (from 'nmt lex') of\n"
                "the most-attended source word, or by that word when TABLE has none"),
        OPT_FLAG("--unk-copy", &o->unk_replace, 1, "replace each output <unk> by the most-attended source word"),
        OPT_ENUM("--tokenize", &a->tok_lang, tok_lang_parse, "LANG", "en, fr or de", "read raw text: Moses-tokenize each line (en, fr, de; default escaping)"),
        OPT_FLAG("--lowercase", &a->topt.lowercase, 1, "with --tokenize: lowercase first (as lowercase.perl)"),
        OPT_FLAG("--normalize-punct", &a->topt.normalize, 1, "with --tokenize: normalize punctuation first\n"
                 "(normalize-punctuation.perl); --lowercase --normalize-punct is the\n"
                 "Multi30k preprocessing"),
        OPT_ENUM("--detokenize", &a->detok_lang, tok_lang_parse, "LANG", "en, fr or de", "write detokenized text (Moses detokenizer.perl; alignments index\n"
               "its words)"),
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
        CMD_BATCH_INVARIANT_OPT(&o->batch_invariant),
        OPT_FN("--shortlist", &a->sl, cmd_parse_shortlist, "FILE[,K[,F]]", CMD_SHORTLIST_HELP),
        OPT_INT("--threads", &a->threads, 1, 1024, "N", "threads (default: all cores); with --workers, each worker's"),
        OPT_INT("--workers", &a->workers, 1, NMT_MAX_WORKERS, "N", "translate N batches at once, each by a worker of its own with\n"
                "--threads threads (default {}: one batch at a time; with N, --threads\n"
                "defaults to cores / N). The same output, in the same order"),
        CMD_DEVICE_OPT,
        OPT_STR("--input", &a->input, "FILE", "read FILE instead of standard input (or give the files as arguments)"),
        OPT_STR("--prefix", &a->hints.prefix_path, "FILE", "line i of FILE is the start of line i's translation (empty: none),\n"
                "forced, then searched on (target text, as the output is written)"),
        OPT_STR("--constraints", &a->hints.cons_path, "FILE", "line i of FILE holds phrases, separated by tabs, that must appear in\n"
                "line i's translation (dynamic beam allocation; empty: none)"),
        OPT_FLAG("--hints-in-input", &a->hints.in_input, 1, "input lines are SOURCE<TAB>PREFIX<TAB>PHRASE<TAB>...: a prefix (may be\n"
                 "empty) and constraint phrases after the source"),
        OPT_FLAG("--word-scores", &a->word_scores, 1, "append ' ||| WordScores= ' and the log-probability of each output\n"
                 "token (a subword model's pieces) and of the EOS (Marian's --word-scores)"),
        CMD_OUTPUT_OPT(&a->output),
        CMD_PROGRESS_OPT(&a->progress),
        OPT_OLD("--normalize", "--length-norm"),
        OPT_OLD("--no-normalize", "--no-length-norm"),
        OPT_END,
    };
    opt_cmd c = {"translate", translate_usage,
                 "\nLines over " STR(NMT_MAX_SRC_WORDS) " words are cut to that length with a warning; invalid UTF-8 is replaced\n"
                 "by U+FFFD with a warning; words the model does not know are read as <unk>.\n",
                 table, MAX_INPUTS, "at most " STR(MAX_INPUTS) " input files"};
    int rc = opt_parse(&c, argc, argv, a->files, &a->n_files);
    if (rc != OPT_GO) return rc;
    if (a->input && a->n_files) {
        fprintf(stderr, "nmt translate: error: --input FILE or files as arguments, not both\n");
        return CMD_USAGE;
    }
    if (a->workers > 1 && !a->threads) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        a->threads = cores > a->workers ? (int)(cores / a->workers) : 1;
    }
    if (a->threads) nmt_set_threads(a->threads);
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
    if (a->hints.in_input && (a->hints.prefix_path || a->hints.cons_path)) {
        fprintf(stderr, "nmt translate: error: --hints-in-input reads the hints from the input: not with --prefix or --constraints\n");
        return CMD_USAGE;
    }
    if (opt_given(&c, "--alignment")) a->align = align_kind == 0 ? ALIGN_HARD : ALIGN_SOFT;
    return OPT_GO;
}


/* Whether path can be read, checked without opening it ("-": standard input, open already): a
 * FIFO opened and closed here would kill its writer (SIGPIPE) and lose its data, and the real
 * open later would wait for a writer that is gone; a FIFO is opened once, when its turn comes. */
static int check_input(const char *path, nmt_err *err)
{
    struct stat sb;
    if (!strcmp(path, "-")) return NMT_OK;
    if (stat(path, &sb) != 0) return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(EISDIR));
    if (!S_ISFIFO(sb.st_mode) && access(path, R_OK) != 0) return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
    return NMT_OK;
}

/* The inputs: --input FILE, the files given, or standard input; the first opened in st->in (a
 * closed standard input is seen before a file opened later takes its number; a FIFO's open waits
 * for its writer, which is where its data comes from anyway), the others checked now without
 * being opened and left to open in turn. The exit status. */
static int open_inputs(stream *st, const struct translate_args *a, const char **first)
{
    nmt_err err;
    const char *const *files = (const char *const *)a->files;
    *first = a->input ? a->input : a->n_files ? files[0] : "-";
    st->inputs = files + 1;
    st->n_inputs = a->n_files > 1 ? a->n_files - 1 : 0;
    int rc = NMT_OK;
    for (int i = 0; i < st->n_inputs && !rc; i++) rc = check_input(st->inputs[i], &err);
    if (!rc) rc = open_input(&st->in, *first, &err);
    if (!rc) return CMD_OK;
    fprintf(stderr, "nmt translate: error: %s\n", err.msg);
    linereader_free(&st->in);
    return CMD_ERR;
}

/* -o FILE: the output, refused when it is any file the command reads (it would be emptied
 * first): the inputs, standard input's file, the hints files, the models, the lexicon and the
 * shortlist */
static int open_output(const struct translate_args *a, const char *first)
{
    if (!a->output) return CMD_OK;
    path_role in[MAX_INPUTS + MAX_MODELS + 5];
    int n = cmd_model_roles(in, a->models.path, a->models.n);
    in[n++] = (path_role){first, "an input file"};
    for (int i = 1; i < a->n_files; i++) in[n++] = (path_role){a->files[i], "an input file"};
    in[n++] = (path_role){a->hints.prefix_path, "the --prefix file"};
    in[n++] = (path_role){a->hints.cons_path, "the --constraints file"};
    in[n++] = (path_role){a->lexpath, "the --unk-replace table"};
    in[n++] = (path_role){a->sl.path[0] ? a->sl.path : NULL, "the --shortlist file"};
    return cmd_output_to("translate", a->output, in, n);
}

/* The worker: the search's decoder with the model's text sides. The source side reads raw text
 * through the Moses pipeline the model's data went through (with --tokenize, or as the model
 * stores it); the target side detokenizes the output (with --detokenize, or as the model stores
 * it). With an n-best list, an ensemble's models alone besides (one feature each). */
static int worker_of(stream *st, nmt_translator **tr, const struct translate_args *a, const nmt_translate_opts *so,
                     nmt_err *err)
{
    nmt_text_opts src = nmt_text_default_opts(), tgt = nmt_text_default_opts();
    src.lang = a->tok_lang;
    src.tokenize = a->tok_lang >= 0;
    src.lowercase = a->topt.lowercase;
    src.normalize_punct = a->topt.normalize;
    tgt.lang = a->detok_lang;
    tgt.detokenize = a->detok_lang >= 0;
    const model_list *l = &a->models;
    int rc = nmt_translator_init(tr, (const nmt_model *const *)l->m, l->nweights ? l->weight : NULL, l->n, so, &src, &tgt, err);
    if (!rc) rc = nmt_worker_take(*tr, NULL, &st->w, err);
    if (rc) return rc;
    st->out.tgt = nmt_worker_text(st->w, NMT_TARGET);
    st->out.d = nmt_worker_decoder(st->w);
    st->out.n_models = l->n;
    nmt_translate_opts o = nmt_translate_default_opts();
    o.batch = so->batch;
    for (int k = 0; st->out.nbest && l->n > 1 && k < l->n && !rc; k++) rc = nmt_decoder_init(&st->out.model_d[k], l->m[k], &o, err);
    return rc;
}

int cmd_translate(int argc, char **argv)
{
    struct translate_args args;
    int prc = translate_options(argc, argv, &args);
    if (prc != OPT_GO) return prc;
    nmt_translate_opts o = args.o;
    const char *lexpath = args.lexpath, *first;
    if (!o.sample && o.n_best > o.beam) { fprintf(stderr, "nmt translate: error: --n-best %d is larger than the beam (%d)\n", o.n_best, o.beam); return CMD_USAGE; }
    if ((args.topt.lowercase || args.topt.normalize) && args.tok_lang < 0) {
        fprintf(stderr, "nmt translate: error: --lowercase and --normalize-punct go with --tokenize LANG\n");
        return CMD_USAGE;
    }
    o.attention = args.align != ALIGN_NONE;
    stream st = {.cap = o.batch * 4, .hints = &args.hints};
    st.out = (out_fmt){.align = args.align, .scores = args.scores, .nbest = args.nbest_out, .word_scores = args.word_scores};
    nmt_err err;
    int rc = open_inputs(&st, &args, &first);
    if (rc) return rc;
    nmt_lexicon *lx = NULL;
    nmt_shortlist *sl = NULL;
    nmt_translator *tr = NULL;
    rc = load_models("translate", &args.models);
    if (!rc && ((lexpath && nmt_lexicon_load(&lx, lexpath, &err)) ||
                (args.sl.path[0] && nmt_shortlist_load(&sl, args.sl.path, args.models.m[0], args.sl.k, args.sl.f, &err)))) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        rc = CMD_ERR;
    }
    o.lexicon = lx;
    o.shortlist = sl;
    /* a CPU without the precision's instructions, or text stages the model refuses: a failed run */
    if (!rc && (worker_of(&st, &tr, &args, &o, &err) || cmd_hints_open(&args.hints, &err))) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        rc = CMD_ERR;
    }
    if (!rc) rc = open_output(&args, first);
    nmt_pipeline *pl = NULL;
    if (!rc && args.workers > 1 && nmt_pipeline_init(&pl, tr, args.workers, args.threads, &err)) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        rc = CMD_ERR;
    }
    if (!rc) cmd_progress_start(&st.prog, "translate", args.progress);
    if (!rc) rc = pl ? run_parallel(&st, pl, args.workers) : run_stream(&st);
    nmt_pipeline_free(pl);
    cmd_progress_end(&st.prog);
    if (!rc && cmd_hints_end(&args.hints, &err)) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        rc = CMD_ERR;
    }
    cmd_hints_free(&args.hints);
    linereader_free(&st.in);
    cmd_out_free(&st.out);
    nmt_worker_give(st.w);
    nmt_translator_free(tr);
    for (int k = 0; k < MAX_MODELS; k++) nmt_decoder_free(st.out.model_d[k]);
    nmt_lexicon_free(lx);
    nmt_shortlist_free(sl);
    free_models(&args.models);
    return rc;
}
