/* cmd_serve.c: `nmt serve`, the translation server (src/serve). Options only: it loads the model,
 * starts the server, and on SIGTERM or SIGINT lets it drain and exits 0. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "nmt.h"
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

static void usage_serve(FILE *f)
{
    serve_opts d = serve_default_opts();
    fprintf(f,
            "Usage: nmt serve --model FILE [options]\n"
            "An HTTP translation server: POST /translate (JSON), GET / (a page showing the attention), GET /health,\n"
            "GET /metrics (Prometheus). Requests that arrive together are decoded together. SIGTERM or SIGINT: no new\n"
            "connections, requests in flight are answered, exit 0. The API is in docs/SERVE.md.\n\n"
            "  --model FILE          the model (required)\n"
            "  --host ADDR           address to listen on (default %s; 0.0.0.0 or :: exposes the server)\n"
            "  --port N              port (default %d; 0 = any free port, printed at start)\n"
            "  --tokenize LANG       read raw text: Moses-tokenize it (en, fr, de)\n"
            "  --lowercase           with --tokenize: lowercase first\n"
            "  --normalize-punct     with --tokenize: normalize punctuation first\n"
            "  --detokenize LANG     answer with detokenized text\n"
            "  --beam K              beam when a request names none (default %d)\n"
            "  --max-beam K          largest beam a request may ask for (default %d)\n"
            "  --workers N           decoder threads (default %d)\n"
            "  --threads N           OpenMP threads in each decoder (default %d; workers x threads <= cores)\n"
            "  --max-batch N         sentences decoded together (default %d)\n"
            "  --max-batch-words N   source words decoded together (default %d)\n"
            "  --max-wait-ms MS      how long a sentence waits for others to fill its batch (default %d)\n"
            "  --max-queue N         sentences waiting at most; beyond, requests get 503 (default %d)\n"
            "  --max-texts N         texts per request (default %d)\n"
            "  --max-words N         words per text after tokenization (default %d; at most %d)\n"
            "  --max-body BYTES      request body size (default %zu)\n"
            "  --max-connections N   open connections; beyond, requests get 503 (default %d)\n"
            "  --timeout S           seconds a connection may stay silent (default %d)\n"
            "  --request-timeout S   seconds a request may take to arrive in full (default %d)\n",
            d.host, d.port, d.limits.beam, d.limits.max_beam, d.pool.workers, d.pool.threads, d.pool.max_batch,
            d.pool.max_batch_words, d.pool.max_wait_ms, d.pool.max_queue, d.limits.max_texts, d.limits.max_words,
            NMT_MAX_SRC_WORDS, d.max_body, d.max_connections, d.idle_timeout, d.request_timeout);
}

/* The integer options: flag, address, range. */
static int int_option(serve_opts *o, const char *a, const char *val, int *known)
{
    struct { const char *flag; int *v; long lo, hi; } t[] = {
        {"--port", &o->port, 0, 65535}, {"--beam", &o->limits.beam, 1, 1000},
        {"--max-beam", &o->limits.max_beam, 1, 1000}, {"--workers", &o->pool.workers, 1, 256},
        {"--threads", &o->pool.threads, 1, 1024}, {"--max-batch", &o->pool.max_batch, 1, 10000},
        {"--max-batch-words", &o->pool.max_batch_words, 1, 10000000}, {"--max-wait-ms", &o->pool.max_wait_ms, 0, 60000},
        {"--max-queue", &o->pool.max_queue, 1, 10000000}, {"--max-texts", &o->limits.max_texts, 1, 100000},
        {"--max-words", &o->limits.max_words, 1, NMT_MAX_SRC_WORDS}, {"--max-connections", &o->max_connections, 1, 100000},
        {"--timeout", &o->idle_timeout, 1, 86400}, {"--request-timeout", &o->request_timeout, 1, 86400},
    };
    long v;
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strcmp(a, t[i].flag)) {
            *known = 1;
            if (cmd_parse_long("serve", a, val, t[i].lo, t[i].hi, &v)) return CMD_USAGE;
            *t[i].v = (int)v;
            return CMD_OK;
        }
    *known = 0;
    return CMD_OK;
}

static int parse_args(int argc, char **argv, serve_opts *o, const char **model)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--lowercase")) { o->src_text.lowercase = 1; continue; }
        if (!strcmp(a, "--normalize-punct")) { o->src_text.normalize_punct = 1; continue; }
        if (i + 1 >= argc) { fprintf(stderr, "nmt serve: %s needs a value (nmt serve --help)\n", a); return CMD_USAGE; }
        const char *val = argv[++i];
        int known, rc = int_option(o, a, val, &known);
        long v;
        if (rc || known) { if (rc) return rc; continue; }
        if (!strcmp(a, "--model")) *model = val;
        else if (!strcmp(a, "--host")) o->host = val;
        else if (!strcmp(a, "--max-body")) { if (cmd_parse_long("serve", a, val, 2, 1L << 30, &v)) return CMD_USAGE; o->max_body = (size_t)v; }
        else if (!strcmp(a, "--tokenize") || !strcmp(a, "--detokenize")) {
            int l = tok_lang_parse(val);
            if (l < 0) { fprintf(stderr, "nmt serve: %s '%s': expected en, fr or de\n", a, val); return CMD_USAGE; }
            nmt_text_opts *t = a[2] == 't' ? &o->src_text : &o->tgt_text;
            t->lang = l;
            t->tokenize = a[2] == 't';
            t->detokenize = a[2] == 'd';
        } else { fprintf(stderr, "nmt serve: unknown option '%s' (nmt serve --help)\n", a); return CMD_USAGE; }
    }
    if ((o->src_text.lowercase || o->src_text.normalize_punct) && !o->src_text.tokenize) {
        fprintf(stderr, "nmt serve: --lowercase and --normalize-punct go with --tokenize LANG\n");
        return CMD_USAGE;
    }
    if (o->limits.beam > o->limits.max_beam) {
        fprintf(stderr, "nmt serve: --beam %d is larger than --max-beam %d\n", o->limits.beam, o->limits.max_beam);
        return CMD_USAGE;
    }
    if (!*model) { fprintf(stderr, "nmt serve: --model is required (nmt serve --help)\n"); return CMD_USAGE; }
    return CMD_OK;
}

int cmd_serve(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage_serve(stdout); return CMD_OK; }
    serve_opts o = serve_default_opts();
    const char *path = NULL;
    int rc = parse_args(argc, argv, &o, &path);
    if (rc) return rc;
    nmt_set_log(on_log, NULL);
    nmt_err err;
    nmt_model *m = NULL;
    serve *s = NULL;
    if (nmt_model_load(&m, path, &err) || serve_init(&s, m, &o, &err)) {
        fprintf(stderr, "nmt serve: error: %s\n", err.msg);
        nmt_model_free(m);
        return CMD_ERR;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a client gone mid-answer is an error return, not the end */
    fprintf(stderr, "[M::serve] listening on http://%s%s%s:%d/ (%d decoders x %d threads)\n", strchr(o.host, ':') ? "[" : "",
            o.host, strchr(o.host, ':') ? "]" : "", serve_port(s), o.pool.workers, o.pool.threads);
    rc = serve_run(s, &stop, &err) ? CMD_ERR : CMD_OK;
    serve_free(s);
    nmt_model_free(m);
    fprintf(stderr, "[M::serve] stopped\n");
    return rc;
}
