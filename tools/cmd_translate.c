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
    topt.lang = tok_lang;
    o.attention = align != ALIGN_NONE;
    nmt_model *m = NULL;
    int rc = load_model("translate", model, &m);
    if (rc) return rc;
    if (align != ALIGN_NONE && nmt_model_config(m)->arch == NMT_ARCH_RNNENC)
        fprintf(stderr, "[W::translate] an RNNencdec model has no attention: alignments will be empty\n");
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
    long v;
    int rc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("Usage: nmt score --model FILE --src FILE --tgt FILE [--threads N]\n"
                   "Forced decoding: for each pair, the log-probability of the target (with its EOS) given the source.\n"
                   "Prints one line per pair: TOTAL<TAB>PER_TOKEN<TAB>TOKENS (tokens count the EOS).\n"
                   "Limits: sources are read up to %d words; a target over %d words is an error.\n", NMT_MAX_SRC_WORDS, NMT_MAX_TGT_WORDS);
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
