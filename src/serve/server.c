/* server.c: the HTTP side of serve.h on libmicrohttpd. The gate (gate.h) owns the listening
 * socket: it checks each connection's request head, answers /health, /metrics and refusals
 * itself, and hands the rest to libmicrohttpd, whose one internal polling thread runs them. Every
 * connection carries one request, so every request passes the gate. A POST /translate whose body is complete and valid is suspended (MHD_suspend_
 * connection) while its job waits in the pool, and the decoder thread that finishes it writes
 * the answer and resumes it, so no thread ever blocks on a translation.
 * Limits: the head's framing, size and arrival time (the gate), the body size (413), open
 * connections (503 beyond max_connections), silence (libmicrohttpd's idle timeout) and a body's
 * arrival time (a watchdog shuts the socket of a client that trickles bytes, which the idle
 * timeout alone never catches). */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "base/err.h"
#include "serve/gate.h"
#include "serve/metrics.h"
#include "serve/serve.h"
#include "serve/web.h"
#include "text/tokenize.h"
#include "text/unicode.h"

serve_opts serve_default_opts(void)
{
    serve_opts o;
    memset(&o, 0, sizeof o);
    o.host = "127.0.0.1";
    o.port = 8080;
    o.pool = pool_default_opts();
    o.limits = (req_limits){64, 200, 32, 5, 1000000, 0, TOK_LANG_EN};
    o.src_text = nmt_text_default_opts();
    o.tgt_text = nmt_text_default_opts();
    o.max_body = (size_t)1 << 20;
    o.max_connections = 64;
    o.idle_timeout = 10;
    o.request_timeout = 30;
    o.header_timeout = 5;
    o.max_pending = 512;
    return o;
}

/* One open connection (MHD's socket context): what the watchdog needs. */
typedef struct conn_rec {
    int fd;
    double since;          /* when it opened or last answered */
    int busy;              /* a request of it is complete: decoding or answering */
    struct conn_rec *prev, *next;
} conn_rec;

/* One model the server translates with: its translator, whose workers the decoder threads
 * hold, and the worker libmicrohttpd's one thread reads requests with (texts, prefixes, phrases). */
typedef struct slot {
    const char *name;
    const nmt_model *m;
    nmt_translator *tr;
    nmt_worker *reader;
    pool *pool;
} slot;

struct serve {
    serve_opts o;
    slot *slot;               /* [n_slots]; the first answers requests that name no model */
    int n_slots;
    struct MHD_Daemon *d;
    metrics *met;
    int port;
    pthread_mutex_t mu;       /* the connection list and the counts */
    conn_rec *conns;
    int n_conns, in_flight;
    volatile int draining;
    gate *gate;
    char cors[512];           /* the CORS header lines of every answer ("" without --cors) */
};

/* One request (MHD's con_cls). */
enum { RX_HEADERS, RX_BODY, RX_QUEUED, RX_DONE };
typedef struct req_ctx {
    serve *s;
    struct MHD_Connection *c;
    const char *route;        /* metrics label; NULL for an unknown path */
    double t0;
    int state, too_large;
    int fd;                   /* the connection's socket, to see whether its client has gone */
    char *body;
    size_t len, cap;
    serve_req req;
    slot *sl;                 /* the model of the request */
    pool_job job;
    int status;               /* the answer, once state is RX_DONE */
    char *resp;
} req_ctx;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ answering */

/* With --cors, what a browser needs to let a page of that origin call the API (the Fetch
 * standard's CORS protocol): who may read the answers, and the preflight's methods and headers. */
static const char *const cors_names[] = {"Access-Control-Allow-Origin", "Access-Control-Allow-Methods",
                                         "Access-Control-Allow-Headers", "Access-Control-Max-Age"};

#define N_CORS (sizeof cors_names / sizeof *cors_names)

static void cors_values(const serve *s, const char **v)
{
    v[0] = s->o.cors;
    v[1] = "GET, HEAD, POST, OPTIONS";
    v[2] = "Content-Type";
    v[3] = "600";
}

/* The header lines for the gate's answers, once. */
static void cors_lines(serve *s)
{
    const char *v[N_CORS];
    cors_values(s, v);
    size_t n = 0;
    for (size_t i = 0; s->o.cors && i < N_CORS; i++)
        n += (size_t)snprintf(s->cors + n, sizeof s->cors - n, "%s: %s\r\n", cors_names[i], v[i]);
}

static void add_cors(serve *s, struct MHD_Response *r)
{
    const char *v[N_CORS];
    cors_values(s, v);
    for (size_t i = 0; s->o.cors && i < N_CORS; i++) MHD_add_response_header(r, cors_names[i], v[i]);
}

static enum MHD_Result send_buf(req_ctx *x, int status, const char *type, char *body, size_t len, int owned)
{
    x->status = status;
    struct MHD_Response *r = body ? MHD_create_response_from_buffer(len, body, owned ? MHD_RESPMEM_MUST_FREE
                                                                                     : MHD_RESPMEM_PERSISTENT)
                                  : NULL;
    if (!r) { if (owned) free(body); return MHD_NO; }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (status == 405)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, x->route && !strcmp(x->route, "/translate") ? "POST" : "GET, HEAD");
    /* one request per connection: the next one must pass the gate's checks too */
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    add_cors(x->s, r);
    enum MHD_Result ok = MHD_queue_response(x->c, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result send_json(req_ctx *x, int status, char *json)
{
    return send_buf(x, status, "application/json", json, json ? strlen(json) : 0, 1);
}

static enum MHD_Result send_error(req_ctx *x, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static enum MHD_Result send_error(req_ctx *x, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (status >= 500) nmt_log('W', "[W::serve] %d: %s", status, msg);
    return send_json(x, status, req_error_json(status, msg));
}

/* ------------------------------------------------------------------ GET routes */

#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"

static int waiting(serve *s)
{
    int n = 0;
    for (int i = 0; i < s->n_slots; i++) n += pool_waiting(s->slot[i].pool);
    return n;
}

/* A model as /health shows it, into b[0..cap); the bytes written. */
static size_t model_json(char *b, size_t cap, const slot *sl)
{
    const nmt_config *c = nmt_model_config(sl->m);
    int n = snprintf(b, cap, "{\"name\":\"%s\",\"arch\":\"%s\",\"src_vocab\":%d,\"tgt_vocab\":%d}", sl->name,
                     nmt_arch_name(c->arch), c->src_vocab, c->tgt_vocab);
    return n < 0 || (size_t)n >= cap ? cap - 1 : (size_t)n;
}

/* GET /health's body (malloc'd, or NULL) and its status: "model" is the default one, "models"
 * all of them. */
static char *health_json(serve *s, int *status)
{
    size_t cap = 256 + 256 * (size_t)(s->n_slots + 1), n;
    char *b = malloc(cap);
    if (!b) return NULL;
    n = (size_t)snprintf(b, cap, "{\"status\":\"%s\",\"model\":", s->draining ? "draining" : "ok");
    n += model_json(b + n, cap - n, &s->slot[0]);
    n += (size_t)snprintf(b + n, cap - n, ",\"models\":[");
    for (int i = 0; i < s->n_slots; i++) {
        if (i) b[n++] = ',';
        n += model_json(b + n, cap - n, &s->slot[i]);
    }
    snprintf(b + n, cap - n, "],\"workers\":%d,\"queue\":%d}", s->o.pool.workers * s->n_slots, waiting(s));
    *status = s->draining ? 503 : 200;
    return b;
}

static char *metrics_text(serve *s)
{
    pthread_mutex_lock(&s->mu);
    metrics_gauges g = {s->n_conns, s->in_flight, 0, s->o.pool.workers * s->n_slots};
    pthread_mutex_unlock(&s->mu);
    g.waiting = waiting(s);
    return metrics_render(s->met, &g);
}

static enum MHD_Result get_health(req_ctx *x)
{
    int status;
    char *b = health_json(x->s, &status);
    return b ? send_json(x, status, b) : MHD_NO;
}

static enum MHD_Result get_metrics(req_ctx *x)
{
    char *t = metrics_text(x->s);
    if (!t) return send_error(x, 500, "out of memory");
    return send_buf(x, 200, METRICS_TYPE, t, strlen(t), 1);
}

/* GET and HEAD: the page, its files, /health, /metrics. */
static enum MHD_Result route_get(req_ctx *x, const char *url)
{
    for (int i = 0; i < web_n_assets; i++)
        if (!strcmp(url, web_assets[i].path))
            return send_buf(x, 200, web_assets[i].content_type, (char *)web_assets[i].data, web_assets[i].len, 0);
    if (!strcmp(url, "/health")) return get_health(x);
    if (!strcmp(url, "/metrics")) return get_metrics(x);
    return send_error(x, 404, "no such path: %s (try GET / or POST /translate)", url);
}

static const char *route_label(const char *url)
{
    static const char *const known[] = {"/", "/translate", "/health", "/metrics", "/app.js", "/style.css"};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (!strcmp(url, known[i])) return known[i];
    return NULL;
}

/* ------------------------------------------------------------------ POST /translate */

/* The body is read as JSON whatever these say: none, what `curl -d` sends unasked, and what a
 * page sends to skip a CORS preflight. Other types are refused: a body of another format (a
 * form upload, XML) is a client's mistake worth naming. */
static int json_type(const char *ct)
{
    static const char *const ok[] = {"application/json", "application/x-www-form-urlencoded", "text/plain"};
    size_t n = ct ? strcspn(ct, ";") : 0;
    while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t')) n--;
    for (size_t i = 0; ct && i < sizeof ok / sizeof *ok; i++)
        if (n == strlen(ok[i]) && !strncasecmp(ct, ok[i], n)) return 1;
    return !ct;
}

/* Checks made on the headers alone: the answer now, or MHD_YES to read the body. */
static enum MHD_Result translate_headers(req_ctx *x)
{
    const char *ct = MHD_lookup_connection_value(x->c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!json_type(ct))
        return send_error(x, 415, "the body is JSON: Content-Type application/json, or none (got %s)", ct);
    const char *cl = MHD_lookup_connection_value(x->c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > x->s->o.max_body)
        return send_error(x, 413, "the body has %s bytes; the limit is %zu", cl, x->s->o.max_body);
    x->state = RX_BODY;
    return MHD_YES;
}

/* A chunk of the body: kept while within the limit, counted past it. */
static void take_body(req_ctx *x, const char *data, size_t n)
{
    if (x->too_large || x->len + n > x->s->o.max_body) { x->too_large = 1; return; }
    if (x->len + n + 1 > x->cap) {
        size_t cap = (x->len + n + 1) * 2;
        if (cap > x->s->o.max_body + 1) cap = x->s->o.max_body + 1;
        char *b = realloc(x->body, cap);
        if (!b) { x->too_large = 1; return; }
        x->body = b;
        x->cap = cap;
    }
    memcpy(x->body + x->len, data, n);
    x->len += n;
}

/* Runs in the decoder thread whose worker w translated the job: the answer (through w's target
 * pipeline), then the connection wakes. */
static void job_done(pool_job *j, nmt_worker *w, void *user)
{
    req_ctx *x = user;
    if (j->rc == POOL_GONE) { /* nobody to answer: the connection wakes to be closed */
        x->status = 499;
        x->resp = req_error_json(499, j->err.msg);
    } else if (j->rc) {
        x->status = j->rc == NMT_ERR_ARG ? 400 : 500; /* hints the model cannot follow (a prefix too long) */
        if (j->hints) req_name_sentence(&x->req, j->err.msg, sizeof j->err.msg);
        x->resp = req_error_json(x->status, j->err.msg);
        nmt_log('E', "[E::serve] translation failed: %s", j->err.msg);
    } else {
        x->resp = req_response(&x->req, j->tr, nmt_worker_text(w, NMT_TARGET));
        x->status = x->resp ? 200 : 500;
        if (!x->resp) x->resp = req_error_json(500, "out of memory");
    }
    x->state = RX_DONE;
    MHD_resume_connection(x->c);
}

/* The pool's question before each batch: has the client of this suspended connection closed
 * it? A suspended connection is not polled, so libmicrohttpd cannot tell; a peek can: end of
 * stream or an error means nobody will read the answer. Bytes waiting (a pipelined request)
 * mean a client still there. */
static int client_gone(const pool_job *j, void *user)
{
    (void)j;
    const req_ctx *x = user;
    char b;
    if (x->fd < 0) return 0;
    ssize_t r = recv(x->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* The model a request names; "" is the first. NULL when none has the name. */
static slot *find_slot(serve *s, const char *name)
{
    for (int i = 0; i < s->n_slots; i++)
        if (!*name || !strcmp(name, s->slot[i].name)) return &s->slot[i];
    return NULL;
}

/* The whole body is here: parse, encode, queue. Errors are answered at once. */
static enum MHD_Result translate_body(req_ctx *x)
{
    serve *s = x->s;
    char msg[512];
    if (x->too_large) return send_error(x, 413, "the body is over the limit of %zu bytes", s->o.max_body);
    int st = req_parse(&x->req, x->body ? x->body : "", x->len, &s->o.limits, msg, sizeof msg);
    x->sl = st ? NULL : find_slot(s, x->req.model);
    if (!st && !x->sl) {
        char known[256] = "";
        for (int i = 0, k = 0; i < s->n_slots; i++)
            k += snprintf(known + k, sizeof known - (size_t)k, "%s%s", i ? ", " : "", s->slot[i].name);
        return send_error(x, 400, "no model named \"%s\" (this server has %s)", x->req.model, known);
    }
    if (!st) st = req_encode(&x->req, nmt_worker_text(x->sl->reader, NMT_SOURCE), &s->o.limits, msg, sizeof msg);
    if (!st) st = req_encode_hints(&x->req, x->sl->reader, msg, sizeof msg);
    if (st) return send_error(x, st, "%s", msg);
    if (x->req.n > s->o.pool.max_queue) /* 503 would say "later", and later it never fits */
        return send_error(x, 413, "%d texts; the server queues at most %d sentences", x->req.n, s->o.pool.max_queue);
    pool_job *j = &x->job;
    j->n = x->req.n;
    j->sent = x->req.sent;
    j->hints = x->req.hinted;
    j->o = x->req.o;
    j->done = job_done;
    j->gone = client_gone;
    j->user = x;
    if (!(j->tr = calloc(j->n, sizeof *j->tr))) return send_error(x, 500, "out of memory");
    x->state = RX_QUEUED;
    pthread_mutex_lock(&s->mu);
    s->in_flight++; /* until on_completed, which sees job.tr */
    pthread_mutex_unlock(&s->mu);
    MHD_suspend_connection(x->c); /* before submitting: the job may finish at once */
    nmt_err err;
    if (pool_submit(x->sl->pool, j, &err)) {
        x->state = RX_DONE;
        x->status = 503;
        x->resp = req_error_json(503, err.msg);
        MHD_resume_connection(x->c);
    }
    return MHD_YES;
}

/* ------------------------------------------------------------------ libmicrohttpd callbacks */

static conn_rec *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* A request that is not a POST /translate, once it has arrived. Answering in the first call
 * would make libmicrohttpd close the connection, so GETs are answered in the second. */
static enum MHD_Result route(req_ctx *x, const char *url, const char *method)
{
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    if (!strcmp(url, "/translate")) return send_error(x, 405, "use POST for /translate");
    if (!get) return x->route ? send_error(x, 405, "use GET for %s", url) : send_error(x, 404, "no such path: %s", url);
    return route_get(x, url);
}

/* The first call of a request, its headers in: refusals that need no body are sent now. */
static enum MHD_Result on_headers(req_ctx *x, const char *url, const char *method)
{
    serve *s = x->s;
    pthread_mutex_lock(&s->mu);
    int n = s->n_conns;
    pthread_mutex_unlock(&s->mu);
    if (s->draining) return send_error(x, 503, "the server is shutting down");
    if (n > s->o.max_connections) return send_error(x, 503, "too many connections (%d open; the limit is %d)", n, s->o.max_connections);
    if (!strcmp(url, "/translate") && !strcmp(method, "POST")) return translate_headers(x);
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    serve *s = cls;
    req_ctx *x = *con_cls;
    if (!x) {
        if (!(x = calloc(1, sizeof *x))) return MHD_NO;
        *con_cls = x;
        x->s = s;
        x->c = c;
        x->t0 = now_s();
        x->route = route_label(url);
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        x->fd = ci ? ci->connect_fd : -1;
        return on_headers(x, url, method);
    }
    if (x->state == RX_DONE) { /* resumed: the answer is ready */
        char *r = x->resp;
        x->resp = NULL;
        return send_json(x, x->status, r);
    }
    conn_rec *cr = conn_of(c);
    if (*upload_size) { /* a body: kept for POST /translate, dropped for the rest */
        if (cr && now_s() - cr->since > s->o.request_timeout) return MHD_NO; /* a trickling body: close */
        if (x->state == RX_BODY) take_body(x, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (x->state == RX_QUEUED) return MHD_YES; /* not resumed yet */
    if (x->state != RX_BODY) return route(x, url, method);
    pthread_mutex_lock(&s->mu);
    if (cr) cr->busy = 1;
    pthread_mutex_unlock(&s->mu);
    if (s->draining) return send_error(x, 503, "the server is shutting down");
    return translate_body(x);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    serve *s = cls;
    req_ctx *x = *con_cls;
    conn_rec *cr = conn_of(c);
    pthread_mutex_lock(&s->mu);
    if (cr) { cr->busy = 0; cr->since = now_s(); }
    if (x && x->job.tr) s->in_flight--;
    pthread_mutex_unlock(&s->mu);
    if (!x) return;
    if (x->status) metrics_request(s->met, x->route, x->status, now_s() - x->t0);
    nmt_translation_free(x->job.tr, x->job.n);
    free(x->job.tr);
    req_free(&x->req);
    free(x->body);
    free(x->resp);
    free(x);
    *con_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context, enum MHD_ConnectionNotificationCode code)
{
    serve *s = cls;
    conn_rec *cr = *socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!ci || !(cr = calloc(1, sizeof *cr))) return; /* unwatched, still served */
        cr->fd = ci->connect_fd;
        cr->since = now_s();
        *socket_context = cr;
    }
    pthread_mutex_lock(&s->mu);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        s->n_conns++;
        if (cr) { cr->next = s->conns; if (s->conns) s->conns->prev = cr; s->conns = cr; }
    } else {
        s->n_conns--;
        if (cr) {
            if (cr->prev) cr->prev->next = cr->next;
            else s->conns = cr->next;
            if (cr->next) cr->next->prev = cr->prev;
        }
    }
    pthread_mutex_unlock(&s->mu); /* the socket closes after this returns: the watchdog never sees a reused fd */
    if (code != MHD_CONNECTION_NOTIFY_STARTED) { free(cr); *socket_context = NULL; }
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    msg[strcspn(msg, "\n")] = 0;
    nmt_log('W', "[W::serve] %s", msg);
}

/* Shuts the socket of every connection whose request has taken longer than request_timeout to
 * arrive; libmicrohttpd then sees the connection end and closes it. */
static void watchdog(serve *s)
{
    double t = now_s();
    pthread_mutex_lock(&s->mu);
    for (conn_rec *cr = s->conns; cr; cr = cr->next)
        if (!cr->busy && t - cr->since > s->o.request_timeout) {
            shutdown(cr->fd, SHUT_RDWR);
            cr->since = t; /* once */
        }
    pthread_mutex_unlock(&s->mu);
}

/* ------------------------------------------------------------------ life cycle */

static int bind_addr(const serve_opts *o, struct sockaddr_storage *sa, socklen_t *len, nmt_err *err)
{
    struct addrinfo hints = {0}, *ai = NULL;
    char port[16];
    snprintf(port, sizeof port, "%d", o->port);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int rc = getaddrinfo(o->host, port, &hints, &ai);
    if (rc) return nmt_fail(err, NMT_ERR_ARG, "host '%s': %s", o->host, gai_strerror(rc));
    memcpy(sa, ai->ai_addr, ai->ai_addrlen);
    *len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return NMT_OK;
}

/* The listening socket, bound and listening; the gate owns it from then on. */
static int listen_on(const serve_opts *o, int *fd, int *port, nmt_err *err)
{
    struct sockaddr_storage sa;
    socklen_t len;
    int rc = bind_addr(o, &sa, &len, err), one = 1;
    if (rc) return rc;
    *fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (*fd < 0 || setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) || bind(*fd, (struct sockaddr *)&sa, len) ||
        listen(*fd, SOMAXCONN) || getsockname(*fd, (struct sockaddr *)&sa, &len)) {
        rc = nmt_fail(err, NMT_ERR_IO, "cannot listen on %s port %d: %s", o->host, o->port, strerror(errno));
        if (*fd >= 0) close(*fd);
        *fd = -1;
        return rc;
    }
    *port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port : ((struct sockaddr_in *)&sa)->sin_port);
    return NMT_OK;
}

/* The gate's hooks: GET and HEAD of /health and /metrics (without a body) are answered at the
 * gate, so that they answer whatever libmicrohttpd's connections are doing. */
static char *gate_answer(const http_head *h, int *status, const char **type, void *user)
{
    serve *s = user;
    if (s->o.cors && !strcmp(h->method, "OPTIONS") && !h->body) { /* a preflight: the headers are the answer */
        *status = 200;
        *type = "text/plain";
        return strdup("");
    }
    if ((strcmp(h->method, "GET") && strcmp(h->method, "HEAD")) || h->body) return NULL;
    *type = "application/json";
    if (!strcmp(h->target, "/health")) return health_json(s, status);
    *status = 200;
    *type = METRICS_TYPE;
    return strcmp(h->target, "/metrics") ? NULL : metrics_text(s);
}

static int gate_full(void *user)
{
    serve *s = user;
    pthread_mutex_lock(&s->mu);
    int full = s->n_conns >= s->o.max_connections;
    pthread_mutex_unlock(&s->mu);
    return full;
}

static void gate_pass(int fd, const struct sockaddr *addr, socklen_t len, void *user)
{
    serve *s = user;
    if (MHD_add_connection(s->d, fd, addr, len) != MHD_YES) /* libmicrohttpd has closed it */
        nmt_log('W', "[W::serve] a connection could not be served: %s", strerror(errno));
}

static void gate_answered(const http_head *h, int status, void *user)
{
    metrics_request(((serve *)user)->met, route_label(h->target), status, 0);
}

static int start_daemon(serve *s, nmt_err *err)
{
    int fd, rc = listen_on(&s->o, &fd, &s->port, err);
    if (rc) return rc;
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET;
    if (strchr(s->o.host, ':')) flags |= MHD_USE_IPv6;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
                            MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s, /* first, to catch every message */
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)(s->o.max_connections + 64),
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->o.idle_timeout,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_CONN_MEMORY,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                            MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                            MHD_OPTION_END);
    if (!s->d) {
        close(fd);
        return nmt_fail(err, NMT_ERR_IO, "cannot start the HTTP daemon: %s", strerror(errno));
    }
    gate_opts go = {{GATE_MAX_HEAD, GATE_MAX_TARGET, s->o.max_body, GATE_MAX_FIELDS}, s->o.header_timeout * 1000, s->o.max_pending,
                    s->cors};
    gate_hooks gh = {gate_answer, gate_full, gate_pass, gate_answered, s};
    if (gate_start(&s->gate, fd, &go, &gh)) {
        close(fd);
        return nmt_fail(err, NMT_ERR_NOMEM, "cannot start the gate: %s", strerror(errno));
    }
    return NMT_OK;
}

static void on_batch(int sentences, long src_words, long tgt_words, double seconds, void *user)
{
    metrics_batch(((serve *)user)->met, sentences, src_words, tgt_words, seconds);
}

static int check_opts(const serve_opts *o, nmt_err *err)
{
    const req_limits *l = &o->limits;
    if (o->port < 0 || o->port > 65535) return nmt_fail(err, NMT_ERR_ARG, "port %d out of range [0, 65535]", o->port);
    if (l->max_words < 1 || l->max_words > NMT_MAX_SRC_WORDS)
        return nmt_fail(err, NMT_ERR_ARG, "max words %d out of range [1, %d]", l->max_words, NMT_MAX_SRC_WORDS);
    if (l->max_texts < 1 || l->max_beam < 1 || l->beam < 1 || l->beam > l->max_beam || l->max_attention < 1)
        return nmt_fail(err, NMT_ERR_ARG, "limits: texts %d, beam %d (max %d)", l->max_texts, l->beam, l->max_beam);
    if (o->max_body < 2 || o->max_connections < 1 || o->idle_timeout < 1 || o->request_timeout < 1 ||
        o->header_timeout < 1 || o->max_pending < 1)
        return nmt_fail(err, NMT_ERR_ARG, "body limit, connection limits and timeouts must be positive");
    if (o->cors && (!*o->cors || strlen(o->cors) > 256 || strpbrk(o->cors, "\r\n")))
        return nmt_fail(err, NMT_ERR_ARG, "a CORS origin is one line of 1 to 256 bytes");
    return NMT_OK;
}

/* A model's translator, the request reader's worker and the decoder threads. */
static int slot_init(serve *s, slot *sl, const serve_model *sm, nmt_err *err)
{
    const serve_opts *o = &s->o;
    sl->name = sm->name;
    sl->m = sm->model;
    nmt_translate_opts t = nmt_translate_default_opts();
    t.precision = o->pool.precision; /* converted once for every worker of the model */
    t.shortlist = o->pool.shortlist;
    t.lexicon = o->pool.lexicon;
    int rc = nmt_translator_init(&sl->tr, &sl->m, NULL, 1, &t, &o->src_text, &o->tgt_text, err);
    if (!rc) rc = nmt_worker_take(sl->tr, NULL, &sl->reader, err);
    if (!rc) rc = pool_init(&sl->pool, sl->tr, &o->pool, on_batch, s, err);
    if (rc && s->n_slots > 1) { /* which model it was */
        nmt_err e = *err;
        nmt_fail(err, e.code, "model %s: %s", sl->name, e.msg);
    }
    return rc;
}

static void slot_free(serve *s, slot *sl)
{
    (void)s;
    pool_free(sl->pool);
    nmt_worker_give(sl->reader);
    nmt_translator_free(sl->tr);
}

static int check_models(const serve_model *m, int n, nmt_err *err)
{
    if (n < 1) return nmt_fail(err, NMT_ERR_ARG, "no model");
    for (int i = 0; i < n; i++) {
        size_t len = strlen(m[i].name), bad = 0;
        for (size_t k = 0; k < len; k++) bad |= (unsigned char)m[i].name[k] < 0x20 || m[i].name[k] == '"' || m[i].name[k] == '\\';
        if (len > 64 || bad || (n > 1 && !len) || utf8_find_invalid(m[i].name, len) >= 0) /* quoted in JSON as it is */
            return nmt_fail(err, NMT_ERR_ARG, "model name '%s': 1 to 64 bytes of UTF-8, no quote, backslash or control character",
                            m[i].name);
        for (int k = 0; k < i; k++)
            if (!strcmp(m[k].name, m[i].name)) return nmt_fail(err, NMT_ERR_ARG, "two models named '%s'", m[i].name);
    }
    return NMT_OK;
}

int serve_init(serve **out, const serve_model *models, int n_models, const serve_opts *o, nmt_err *err)
{
    *out = NULL;
    int rc = check_opts(o, err);
    if (!rc) rc = check_models(models, n_models, err);
    if (rc) return rc;
    serve *s = calloc(1, sizeof *s);
    if (!s || !(s->slot = calloc((size_t)n_models, sizeof *s->slot))) { free(s); return nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); }
    s->o = *o;
    s->n_slots = n_models;
    cors_lines(s);
    pthread_mutex_init(&s->mu, NULL);
    if (!(s->met = metrics_init())) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    for (int i = 0; !rc && i < n_models; i++) rc = slot_init(s, &s->slot[i], &models[i], err);
    if (!rc) rc = start_daemon(s, err);
    if (rc) { serve_free(s); return rc; }
    *out = s;
    return NMT_OK;
}

int serve_port(const serve *s) { return s->port; }

int serve_run(serve *s, volatile sig_atomic_t *stop, nmt_err *err)
{
    (void)err;
    struct timespec tick = {0, 100 * 1000000L};
    while (!*stop) {
        nanosleep(&tick, NULL);
        watchdog(s);
    }
    s->draining = 1;
    gate_stop(s->gate); /* no new connections from here on: the kernel refuses them */
    pthread_mutex_lock(&s->mu);
    nmt_log('M', "[M::serve] draining: %d requests in flight", s->in_flight);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->n_slots; i++) pool_stop(s->slot[i].pool); /* every queued job is translated and answered */
    for (int i = 0; i < 100; i++) { /* let the answers leave (at most 10 s) */
        pthread_mutex_lock(&s->mu);
        int left = s->in_flight;
        pthread_mutex_unlock(&s->mu);
        if (!left) break;
        nanosleep(&tick, NULL);
        watchdog(s);
    }
    return NMT_OK;
}

void serve_free(serve *s)
{
    if (!s) return;
    gate_free(s->gate); /* first: it hands connections to the daemon */
    for (int i = 0; s->slot && i < s->n_slots; i++) /* before the daemon: no connection may stay suspended */
        if (s->slot[i].pool) pool_stop(s->slot[i].pool);
    if (s->d) MHD_stop_daemon(s->d);
    for (int i = 0; s->slot && i < s->n_slots; i++) slot_free(s, &s->slot[i]);
    free(s->slot);
    metrics_free(s->met);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
