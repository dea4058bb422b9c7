/* serve.h: the translation server of `nmt serve`, over libmicrohttpd: POST /translate (JSON,
 * dynamically batched through pool.h), GET / (the page with the attention heat map), GET
 * /health and GET /metrics. Its own library (libnmt-serve), so that libnmt links no HTTP code.
 *
 *     serve_opts o = serve_default_opts();
 *     serve_model m[2] = {{"fr", fr_model}, {"de", de_model}};
 *     serve *s;
 *     if (serve_init(&s, m, 2, &o, &err)) ...;       // listening when it returns
 *     printf("port %d\n", serve_port(s));
 *     serve_run(s, &stop_flag);                       // until a signal handler sets stop_flag
 *     serve_free(s);
 */
#ifndef NMT_SERVE_H
#define NMT_SERVE_H

#include <signal.h>
#include <stddef.h>

#include "nmt.h"
#include "serve/pool.h"
#include "serve/request.h"

typedef struct serve_opts {
    const char *host;         /* address to bind: "127.0.0.1" (default), "::1", "0.0.0.0" ... */
    int port;                 /* 8080; 0 = any free port (serve_port tells which) */
    pool_opts pool;
    req_limits limits;
    nmt_text_opts src_text;   /* raw text -> the model's words */
    nmt_text_opts tgt_text;   /* the model's words -> text */
    size_t max_body;          /* bytes of a request body (1 MiB) */
    int max_connections;      /* open connections before new requests get 503 (64) */
    int idle_timeout;         /* seconds a connection may sit silent (10) */
    int request_timeout;      /* seconds from a request's head to its last byte; a client that
                                 trickles its body is cut (30) */
    int header_timeout;       /* seconds from a connection's opening to its request head's end (5) */
    int max_pending;          /* connections waiting for their heads; beyond, the oldest is cut (512) */
    const char *cors;         /* NULL, or the origin (or "*") whose pages may call the API (CORS) */
} serve_opts;

/* The gate's limits on a request head (bytes): over them, 431 and 414. */
#define GATE_MAX_HEAD 16384
#define GATE_MAX_TARGET 8192
#define GATE_MAX_FIELDS 100  /* header lines (as Apache's LimitRequestFields) */
#define SERVE_CONN_MEMORY (64 * 1024) /* libmicrohttpd's pool per connection: a whole head and its records */

serve_opts serve_default_opts(void);

typedef struct serve serve;

/* A model and the name a request gives it ("model"; with one model it may be ""). */
typedef struct serve_model {
    const char *name;
    const nmt_model *model;
} serve_model;

/* Starts the decoders of each model (o->pool's workers each) and binds; the models and their
 * names must outlive the server. A request that names no model gets models[0]. */
int serve_init(serve **out, const serve_model *models, int n_models, const serve_opts *o, nmt_err *err);
int serve_port(const serve *s);
/* Serves until *stop is non-zero, then drains: no new connections, requests in flight are
 * answered, the decoders finish. */
int serve_run(serve *s, volatile sig_atomic_t *stop, nmt_err *err);
void serve_free(serve *s);

#endif
