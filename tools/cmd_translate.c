/* cmd_translate.c: `nmt translate` and `nmt score`. Input is read in batches for throughput,
 * but a batch is decoded as soon as no more input is waiting, so that a user or a program
 * driving the command line by line gets each answer at once. One output line per input line,
 * in order; an empty line gives an empty line. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "nmt.h"
#include "opt.h"
#include "text/tokenize.h"
#include "text/unicode.h"

/* ------------------------------------------------------------------ line input */
typedef struct lines_in {
    int fd;
    char *buf;
    size_t len, cap, pos;
    int eof;
    long lineno;
} lines_in;

/* Is a whole line (or the end of input) available without blocking? */
static int line_ready(lines_in *r)
{
    if ((r->buf && memchr(r->buf + r->pos, '\n', r->len - r->pos)) || r->eof) return 1;
    struct pollfd p = {r->fd, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
}

/* The next line without its newline (NUL-terminated, valid until the next call), or NULL at
 * the end of input. Blocks until a line is there. */
static char *line_next(lines_in *r)
{
    for (;;) {
        char *nl = r->buf ? memchr(r->buf + r->pos, '\n', r->len - r->pos) : NULL; /* no buffer before the first read */
        if (nl || (r->eof && r->pos < r->len)) {
            char *s = r->buf + r->pos;
            size_t n = nl ? (size_t)(nl - s) : r->len - r->pos;
            s[n] = 0;
            r->pos += n + (nl != NULL);
            r->lineno++;
            if (n && s[n - 1] == '\r') s[n - 1] = 0;
            return s;
        }
        if (r->eof) return NULL;
        if (r->pos > 0) { /* keep the partial line at the start of the buffer */
            memmove(r->buf, r->buf + r->pos, r->len - r->pos);
            r->len -= r->pos;
            r->pos = 0;
        }
        if (r->len + 65536 + 1 > r->cap) {
            size_t nc = r->cap ? r->cap * 2 : 1 << 17;
            char *nb = realloc(r->buf, nc);
            if (!nb) return NULL;
            r->buf = nb;
            r->cap = nc;
        }
        ssize_t got = read(r->fd, r->buf + r->len, r->cap - r->len - 1);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) r->eof = 1;
        else r->len += (size_t)got;
    }
}

/* Copies s with every invalid UTF-8 sequence replaced by U+FFFD; returns the count replaced. */
static int utf8_repair(const char *s, char **out)
{
    size_t n = strlen(s);
    char *o = malloc(3 * n + 1), *p = o;
    int bad = 0;
    if (!o) return -1;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = utf8_decode(s + i, n - i, &cp);
        if (k < 0) { memcpy(p, "\xEF\xBF\xBD", 3); p += 3; i++; bad++; }
        else { memcpy(p, s + i, k); p += k; i += k; }
    }
    *p = 0;
    *out = o;
    return bad;
}

static int count_words(const char *s)
{
    int n = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        n++;
        while (*p && *p != ' ' && *p != '\t') p++;
    }
    return n;
}

/* ------------------------------------------------------------------ output */
enum { ALIGN_NONE, ALIGN_HARD, ALIGN_SOFT };

/* Prints the words, detokenized for language detok_lang when it is >= 0. */
static void print_words(const nmt_hypothesis *h, int detok_lang)
{
    if (detok_lang < 0) {
        for (int k = 0; k < h->n_words; k++) {
            if (k) putchar(' ');
            fputs(h->words[k], stdout);
        }
        return;
    }
    size_t n = 0;
    for (int k = 0; k < h->n_words; k++) n += strlen(h->words[k]) + 1;
    char *s = malloc(n + 1), *p = s;
    if (!s) return;
    for (int k = 0; k < h->n_words; k++) {
        size_t l = strlen(h->words[k]);
        if (k) *p++ = ' ';
        memcpy(p, h->words[k], l);
        p += l;
    }
    *p = 0;
    tok_buf out;
    tok_buf_init(&out);
    if (detok_line(detok_lang, s, (size_t)(p - s), &out, NULL) == NMT_OK) fwrite(out.s, 1, out.len, stdout);
    else fputs(s, stdout);
    tok_buf_free(&out);
    free(s);
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
            if (cols < 2) continue;
            int best = 0;
            for (int j = 1; j < cols - 1; j++) if (row[j] > row[best]) best = j;
            printf(" %d-%d", best, i);
        } else {
            fputs(i ? " ;" : "", stdout);
            for (int j = 0; j < cols; j++) printf(" %.4f", row[j]);
        }
    }
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

#define STR_(x) #x
#define STR(x) STR_(x)

static const char translate_usage[] =
    "Usage: nmt translate --model FILE [options] < input > output\n"
    "Translates tokenized text (one sentence per line, words separated by spaces) with beam search.\n"
    "One output line per input line, in order; an empty line gives an empty line.\n\n";

/* What translate's options set. */
struct translate_args {
    nmt_translate_opts o;
    const char *model, *input, *lexpath;
    tok_opts topt;
    int tok_lang, detok_lang, align, scores, nbest_out;
};

/* Parses translate's options into a; OPT_GO, or the exit status (help, usage error). */
static int translate_options(int argc, char **argv, struct translate_args *a)
{
    *a = (struct translate_args){nmt_translate_default_opts(), NULL, NULL, NULL, tok_opts_default(), -1, -1,
                                 ALIGN_NONE, 0, 0};
    nmt_translate_opts *o = &a->o;
    int threads = 0, align_kind = 0;
    opt table[] = {
        OPT_STR("--model", &a->model, "FILE", "the model (required)"),
        OPT_INT("--beam", &o->beam, 1, 1000, "K", "beam size (default {}; 1 = greedy)"),
        OPT_FLAG("--length-norm", &o->normalize, 1, "rank finished hypotheses by log-probability / length, EOS counted\n(default)"),
        OPT_FLAG("--no-length-norm", &o->normalize, 0, "rank by log-probability"),
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
        OPT_INT("--batch", &o->batch, 1, 10000, "N", "sentences decoded together (default {}; fewer when the beam's\n"
                "softmax outputs would pass 64 MiB)"),
        OPT_INT("--threads", &threads, 1, 1024, "N", "threads (default: all cores)"),
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
    const char *model = args.model, *input = args.input, *lexpath = args.lexpath;
    tok_opts topt = args.topt;
    int tok_lang = args.tok_lang, detok_lang = args.detok_lang;
    int align = args.align, scores = args.scores, nbest_out = args.nbest_out;
    if (o.n_best > o.beam) { fprintf(stderr, "nmt translate: --n-best %d is larger than the beam (%d)\n", o.n_best, o.beam); return CMD_USAGE; }
    if ((topt.lowercase || topt.normalize) && tok_lang < 0) {
        fprintf(stderr, "nmt translate: --lowercase and --normalize-punct go with --tokenize LANG\n");
        return CMD_USAGE;
    }
    topt.lang = tok_lang;
    o.attention = align != ALIGN_NONE;
    nmt_model *m = NULL;
    int rc = load_model("translate", model, &m);
    if (rc) return rc;
    lines_in in = {0, NULL, 0, 0, 0, 0, 0};
    if (input && (in.fd = open(input, O_RDONLY)) < 0) {
        fprintf(stderr, "nmt translate: error: %s: %s\n", input, strerror(errno));
        nmt_model_free(m);
        return CMD_ERR;
    }
    const char *iname = input ? input : "stdin";
    nmt_err err;
    nmt_decoder *d = NULL;
    nmt_lexicon *lx = NULL;
    if (lexpath && nmt_lexicon_load(&lx, lexpath, &err)) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        nmt_model_free(m);
        return CMD_ERR;
    }
    o.lexicon = lx;
    if (nmt_decoder_init(&d, m, &o, &err)) {
        fprintf(stderr, "nmt translate: error: %s\n", err.msg);
        nmt_lexicon_free(lx);
        nmt_model_free(m);
        return CMD_USAGE;
    }
    int cap = o.batch * 4;
    tok_buf tb;
    tok_buf_init(&tb);
    char **batch = calloc(cap, sizeof(char *));
    nmt_translation *tr = calloc(cap, sizeof(nmt_translation));
    long first_line = 1, index = 0;
    int done = 0;
    while (!done && !rc) {
        int nb = 0;
        /* gather lines while more are waiting, up to a few batches' worth */
        do {
            char *line = line_next(&in);
            if (!line) { done = 1; break; }
            char *fixed;
            int bad = utf8_repair(line, &fixed);
            if (bad < 0) { rc = CMD_ERR; fprintf(stderr, "nmt translate: out of memory\n"); break; }
            if (bad) fprintf(stderr, "[W::translate] %s:%ld: invalid UTF-8 replaced by U+FFFD (%d bytes)\n", iname, in.lineno, bad);
            if (tok_lang >= 0) { /* raw text in: the Moses pipeline the model's data went through */
                if (tok_line(&topt, fixed, strlen(fixed), &tb, &err)) {
                    fprintf(stderr, "nmt translate: error: %s:%ld: %s\n", iname, in.lineno, err.msg);
                    free(fixed);
                    rc = CMD_ERR;
                    break;
                }
                char *t = malloc(tb.len + 1);
                if (!t) { free(fixed); rc = CMD_ERR; break; }
                memcpy(t, tb.s, tb.len);
                t[tb.len] = 0;
                free(fixed);
                fixed = t;
            }
            int w = count_words(fixed);
            if (w > NMT_MAX_SRC_WORDS)
                fprintf(stderr, "[W::translate] %s:%ld: %d words, translating the first %d\n", iname, in.lineno, w, NMT_MAX_SRC_WORDS);
            batch[nb++] = fixed;
        } while (nb < cap && line_ready(&in));
        if (rc || nb == 0) { for (int i = 0; i < nb; i++) free(batch[i]); break; }
        if (nmt_translate(d, (const char *const *)batch, nb, tr, &err)) {
            fprintf(stderr, "nmt translate: error: %s (input lines %ld-%ld)\n", err.msg, first_line, first_line + nb - 1);
            rc = CMD_ERR;
        }
        for (int i = 0; i < nb && !rc; i++, index++) {
            const nmt_translation *t = &tr[i];
            if (nbest_out) {
                for (int h = 0; h < t->n_hyps; h++) {
                    printf("%ld ||| ", index);
                    print_words(&t->hyps[h], detok_lang);
                    printf(" ||| %.6f", t->hyps[h].score);
                    if (align) print_alignment(&t->hyps[h], align);
                    putchar('\n');
                }
                if (t->n_hyps == 0) printf("%ld |||  ||| 0\n", index);
            } else {
                if (t->n_hyps) {
                    print_words(&t->hyps[0], detok_lang);
                    if (scores) printf(" ||| %.6f", t->hyps[0].score);
                    if (align) print_alignment(&t->hyps[0], align);
                }
                putchar('\n');
            }
        }
        fflush(stdout); /* each batch's answers leave at once: the caller may be waiting */
        nmt_translation_free(tr, nb);
        for (int i = 0; i < nb; i++) free(batch[i]);
        first_line += nb;
    }
    free(batch);
    free(tr);
    free(in.buf);
    tok_buf_free(&tb);
    if (input) close(in.fd);
    nmt_decoder_free(d);
    nmt_lexicon_free(lx);
    nmt_model_free(m);
    return rc;
}

/* ------------------------------------------------------------------ nmt score */
static int read_all_lines(const char *path, char ***lines, long *n)
{
    lines_in r = {open(path, O_RDONLY), NULL, 0, 0, 0, 0, 0};
    if (r.fd < 0) { fprintf(stderr, "nmt score: error: %s: %s\n", path, strerror(errno)); return -1; }
    long cap = 1024;
    *lines = malloc(sizeof(char *) * cap);
    *n = 0;
    char *l;
    while ((l = line_next(&r))) {
        if (*n == cap) { cap *= 2; *lines = realloc(*lines, sizeof(char *) * cap); }
        char *fixed;
        if (utf8_repair(l, &fixed) > 0) {
            fprintf(stderr, "nmt score: error: %s:%ld: invalid UTF-8\n", path, r.lineno);
            free(fixed);
            close(r.fd);
            free(r.buf);
            return -1;
        }
        (*lines)[(*n)++] = fixed;
    }
    close(r.fd);
    free(r.buf);
    return 0;
}

int cmd_score(int argc, char **argv)
{
    const char *model = NULL, *src = NULL, *tgt = NULL;
    int rc, threads = 0;
    opt table[] = {
        OPT_STR("--model", &model, "FILE", "the model (required)"),
        OPT_STR("--src", &src, "FILE", "source sentences, tokenized, one per line"),
        OPT_STR("--tgt", &tgt, "FILE", "their translations (the same number of lines)"),
        OPT_INT("--threads", &threads, 1, 1024, "N", "threads (default: all cores)"),
        OPT_END,
    };
    opt_cmd c = {"score", "Usage: nmt score --model FILE --src FILE --tgt FILE [--threads N]\n"
                 "Forced decoding: for each pair, the log-probability of the target (with its EOS) given the source.\n"
                 "Prints one line per pair: TOTAL<TAB>PER_TOKEN<TAB>TOKENS (tokens count the EOS).\n\n", NULL, table, 0, NULL};
    int nargs;
    if ((rc = opt_parse(&c, argc, argv, NULL, &nargs)) != OPT_GO) return rc;
    if (threads) nmt_set_threads(threads);
    if (!src || !tgt) { fprintf(stderr, "nmt score: --src and --tgt are required\n"); return CMD_USAGE; }
    nmt_model *m = NULL;
    if ((rc = load_model("score", model, &m))) return rc;
    char **S = NULL, **T = NULL;
    long ns = 0, nt = 0;
    rc = CMD_ERR;
    if (read_all_lines(src, &S, &ns) || read_all_lines(tgt, &T, &nt)) goto out;
    if (ns != nt) {
        fprintf(stderr, "nmt score: error: %s has %ld lines but %s has %ld\n", src, ns, tgt, nt);
        goto out;
    }
    nmt_translate_opts o = nmt_translate_default_opts();
    nmt_decoder *d = NULL;
    nmt_err err;
    double *lp = malloc(sizeof(double) * (ns ? ns : 1));
    int *nt_ = malloc(sizeof(int) * (ns ? ns : 1));
    if (nmt_decoder_init(&d, m, &o, &err) || nmt_score(d, (const char *const *)S, (const char *const *)T, (int)ns, lp, nt_, &err)) {
        fprintf(stderr, "nmt score: error: %s\n", err.msg);
    } else {
        for (long i = 0; i < ns; i++) printf("%.6f\t%.6f\t%d\n", lp[i], lp[i] / nt_[i], nt_[i]);
        rc = CMD_OK;
    }
    free(lp);
    free(nt_);
    nmt_decoder_free(d);
out:
    for (long i = 0; S && i < ns; i++) free(S[i]);
    for (long i = 0; T && i < nt; i++) free(T[i]);
    free(S);
    free(T);
    nmt_model_free(m);
    return rc;
}
