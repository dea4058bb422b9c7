/* cmd_serve.c: `nmt serve`, the translation server (src/serve). Options only: it loads the model,
 * starts the server, and on SIGTERM or SIGINT lets it drain and exits 0. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "nmt.h"
#include "opt.h"
#include "serve/serve.h"
#include "text/tokenize.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void on_log(char level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    fprintf(stderr, "%s\n", msg);
}

static const char serve_usage[] =
    "Usage: nmt serve --model [NAME=]FILE [--model NAME=FILE ...] [options]\n"
    "An HTTP translation server: POST /translate (JSON), GET / (a page showing the attention), GET /health,\n"
    "GET /metrics (Prometheus). Requests that arrive together are decoded together. SIGTERM or SIGINT: no new\n"
    "connections, requests in flight are answered, exit 0. The API is in docs/SERVE.md.\n\n";

#define MAX_MODELS 16

/* The models as --model names them: NAME=FILE, or FILE (named after the file, less ".nmt"). */
typedef struct model_list {
    int n;
    const char *path[MAX_MODELS];
    char name[MAX_MODELS][65];
    nmt_model *m[MAX_MODELS];
} model_list;

static const char *add_model(void *dst, const char *val, int nth)
{
    (void)nth;
    model_list *l = dst;
    if (l->n == MAX_MODELS) return "more than 16 models";
    const char *eq = strchr(val, '='), *base = strrchr(val, '/');
    int named = eq && eq > val && !memchr(val, '/', (size_t)(eq - val));
    const char *path = named ? eq + 1 : val, *from = named ? val : base ? base + 1 : val;
    size_t len = named ? (size_t)(eq - val) : strlen(from);
    if (!named && len > 4 && !strcmp(from + len - 4, ".nmt")) len -= 4;
    if (!*path) return "an empty file name";
    if (len >= sizeof l->name[0]) return "a model name longer than 64 bytes";
    memcpy(l->name[l->n], from, len);
    l->name[l->n][len] = 0;
    l->path[l->n++] = path;
    return NULL;
}

/* Parses serve's options into o; OPT_GO, or the exit status (help, usage error). */
static int parse_args(int argc, char **argv, serve_opts *o, model_list *models, cmd_shortlist *sl, const char **lex)
{
    int tok = -1, detok = -1, lower = 0, punct = 0;
    long body = (long)o->max_body;
    opt table[] = {
        OPT_FN("--model", models, add_model, "[NAME=]FILE", "a model (required); repeated, each NAME=FILE, for several: a\n"
               "request's \"model\" names one, the first by default"),
        OPT_STR("--host", &o->host, "ADDR", "address to listen on (default {}; 0.0.0.0 or :: exposes the server)"),
        OPT_INT("--port", &o->port, 0, 65535, "N", "port (default {}; 0 = any free port, printed at start)"),
        OPT_ENUM("--tokenize", &tok, tok_lang_parse, "LANG", "en, fr or de", "read raw text: Moses-tokenize it (en, fr, de)"),
        OPT_FLAG("--lowercase", &lower, 1, "with --tokenize: lowercase first"),
        OPT_FLAG("--normalize-punct", &punct, 1, "with --tokenize: normalize punctuation first"),
        OPT_ENUM("--detokenize", &detok, tok_lang_parse, "LANG", "en, fr or de", "answer with detokenized text"),
        OPT_INT("--beam", &o->limits.beam, 1, 1000, "K", "beam when a request names none (default {})"),
        OPT_INT("--max-beam", &o->limits.max_beam, 1, 1000, "K", "largest beam a request may ask for (default {})"),
        OPT_CHOICE("--precision", &o->pool.precision, "fp32|int8|bf16", CMD_PRECISION_HELP),
        OPT_FN("--shortlist", sl, cmd_parse_shortlist, "FILE[,K[,F]]", CMD_SHORTLIST_HELP),
        OPT_STR("--unk-replace", lex, "TABLE", "replace each output <unk> by TABLE's translation (from 'nmt lex') of its\n"
                "most-attended source word, or by that word itself when TABLE has none"),
        OPT_FLAG("--unk-copy", &o->pool.unk_replace, 1, "replace each output <unk> by its most-attended source word"),
        OPT_FLAG("--split-sentences", &o->limits.split, 1, "cut each text into sentences (Moses' split-sentences rules, in\n"
                 "--tokenize's language, else en) unless a request says \"split\": false"),
        OPT_STR("--cors", &o->cors, "ORIGIN", "let pages from ORIGIN (https://example.org, or *) call the API: CORS headers on\n"
                "every answer, OPTIONS answered (default: none)"),
        OPT_INT("--workers", &o->pool.workers, 1, 256, "N", "decoder threads (default {})"),
        OPT_INT("--threads", &o->pool.threads, 1, 1024, "N", "OpenMP threads in each decoder (default {}; workers x threads <= cores)"),
        CMD_DEVICE_OPT,
        OPT_INT("--max-batch", &o->pool.max_batch, 1, 10000, "N", "sentences decoded together (default {})"),
        OPT_INT("--max-batch-words", &o->pool.max_batch_words, 1, 10000000, "N", "source words decoded together (default {})"),
        OPT_INT("--max-wait-ms", &o->pool.max_wait_ms, 0, 60000, "MS", "how long a sentence waits for others to fill its batch (default {})"),
        OPT_INT("--max-queue", &o->pool.max_queue, 1, 10000000, "N", "sentences waiting at most; beyond, requests get 503 (default {})"),
        OPT_INT("--max-texts", &o->limits.max_texts, 1, 100000, "N", "texts per request (default {})"),
        OPT_INT("--max-words", &o->limits.max_words, 1, NMT_MAX_SRC_WORDS, "N", "words per text after tokenization (default {}; at most {hi})"),
        OPT_LONG("--max-body", &body, 2, 1L << 30, "BYTES", "request body size (default {})"),
        OPT_LONG("--max-attention", &o->limits.max_attention, 1, 1L << 40, "N", "attention weights an answer may hold, counted "
                 "at the length limit before decoding (default {})"),
        OPT_INT("--max-connections", &o->max_connections, 1, 100000, "N", "open connections; beyond, requests get 503 (default {})"),
        OPT_INT("--timeout", &o->idle_timeout, 1, 86400, "S", "seconds a connection may stay silent (default {})"),
        OPT_INT("--request-timeout", &o->request_timeout, 1, 86400, "S", "seconds a request's body may take after its head (default {})"),
        OPT_INT("--header-timeout", &o->header_timeout, 1, 3600, "S", "seconds from a connection's opening to its request head's end; "
                "later, 408 (default {})"),
        OPT_INT("--max-pending", &o->max_pending, 1, 100000, "N", "connections waiting for their request heads; beyond, the "
                "oldest is closed (default {})"),
        OPT_END,
    };
    opt_cmd c = {"serve", serve_usage, NULL, table, 0, NULL};
    int nargs, rc = opt_parse(&c, argc, argv, NULL, &nargs);
    if (rc != OPT_GO) return rc;
    o->max_body = (size_t)body;
    if (tok >= 0) { o->src_text.lang = tok; o->src_text.tokenize = 1; o->limits.split_lang = tok; }
    if (detok >= 0) { o->tgt_text.lang = detok; o->tgt_text.detokenize = 1; }
    o->src_text.lowercase = lower;
    o->src_text.normalize_punct = punct;
    if ((lower || punct) && tok < 0) {
        fprintf(stderr, "nmt serve: error: --lowercase and --normalize-punct go with --tokenize LANG\n");
        return CMD_USAGE;
    }
    if (o->limits.beam > o->limits.max_beam) {
        fprintf(stderr, "nmt serve: error: --beam %d is larger than --max-beam %d\n", o->limits.beam, o->limits.max_beam);
        return CMD_USAGE;
    }
    if (!models->n) { fprintf(stderr, "nmt serve: error: --model is required (nmt serve --help)\n"); return CMD_USAGE; }
    if (models->n > 1 && sl->path[0]) { /* a shortlist is built over one model's vocabularies */
        fprintf(stderr, "nmt serve: error: --shortlist goes with one model\n");
        return CMD_USAGE;
    }
    if (*lex) o->pool.unk_replace = 1;
    for (const char *p = o->cors; p && *p; p++)
        if ((unsigned char)*p < 0x21 || *p == 0x7F) { /* it goes into a header line as it is */
            fprintf(stderr, "nmt serve: error: --cors '%s': an origin holds no blanks or control characters\n", o->cors);
            return CMD_USAGE;
        }
    return OPT_GO;
}

int cmd_serve(int argc, char **argv)
{
    serve_opts o = serve_default_opts();
    model_list ml = {0};
    cmd_shortlist sla = {{0}, 0, 0};
    const char *lexpath = NULL;
    int rc = parse_args(argc, argv, &o, &ml, &sla, &lexpath);
    if (rc != OPT_GO) return rc;
    nmt_set_log(on_log, NULL);
    nmt_err err;
    nmt_shortlist *sl = NULL;
    nmt_lexicon *lx = NULL;
    serve *s = NULL;
    serve_model sm[MAX_MODELS];
    rc = NMT_OK;
    for (int i = 0; i < ml.n && !rc; i++) {
        rc = nmt_model_load(&ml.m[i], ml.path[i], &err);
        sm[i] = (serve_model){ml.name[i], ml.m[i]};
    }
    if (!rc && sla.path[0]) rc = nmt_shortlist_load(&sl, sla.path, ml.m[0], sla.k, sla.f, &err);
    if (!rc && lexpath) rc = nmt_lexicon_load(&lx, lexpath, &err);
    o.pool.shortlist = sl;
    o.pool.lexicon = lx;
    /* The server's threads (decoders, HTTP) start with SIGTERM and SIGINT blocked, so that only
     * this thread, which decodes nothing, runs the handler: one run on the stack of a thread in
     * oneDNN's kernels can corrupt the heap (cmd_train.c). */
    sigset_t stop_sigs;
    sigemptyset(&stop_sigs);
    sigaddset(&stop_sigs, SIGTERM);
    sigaddset(&stop_sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
    if (!rc) rc = serve_init(&s, sm, ml.n, &o, &err);
    if (rc) {
        fprintf(stderr, "nmt serve: error: %s\n", err.msg);
        nmt_shortlist_free(sl);
        nmt_lexicon_free(lx);
        for (int i = 0; i < ml.n; i++) nmt_model_free(ml.m[i]);
        return CMD_ERR;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    pthread_sigmask(SIG_UNBLOCK, &stop_sigs, NULL); /* here alone */
    signal(SIGPIPE, SIG_IGN); /* a client gone mid-answer is an error return, not the end */
    static const char *const prec[] = {"fp32", "int8", "bf16"};
    fprintf(stderr, "[M::serve] listening on http://%s%s%s:%d/ (%d decoders x %d threads, %s", strchr(o.host, ':') ? "[" : "",
            o.host, strchr(o.host, ':') ? "]" : "", serve_port(s), o.pool.workers, o.pool.threads, prec[o.pool.precision]);
    if (sl) fprintf(stderr, ", shortlist %s,%d,%d", sla.path, sla.k, sla.f);
    for (int i = 0; ml.n > 1 && i < ml.n; i++) fprintf(stderr, "%s%s", i ? ", " : ", models ", ml.name[i]);
    fprintf(stderr, ")\n");
    rc = serve_run(s, &stop, &err) ? CMD_ERR : CMD_OK;
    serve_free(s);
    nmt_shortlist_free(sl);
    nmt_lexicon_free(lx);
    for (int i = 0; i < ml.n; i++) nmt_model_free(ml.m[i]);
    fprintf(stderr, "[M::serve] stopped\n");
    return rc;
}
