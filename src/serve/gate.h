/* gate.h: the server's front door. One thread accepts every connection and holds it, polled,
 * until its request head is whole (http_head.h); it reads only a peek of it, so the bytes stay
 * for libmicrohttpd, to which it then hands the connection. A head that is malformed gets its
 * JSON refusal here; one that takes longer than the header timeout gets 408; GET /health and
 * /metrics are answered here at once, however many connections libmicrohttpd holds or slow
 * clients trickle; and when more connections wait for their heads than max_pending, the oldest
 * is closed. So a flood of slow connections costs a descriptor each, not a slot of the server. */
#ifndef NMT_SERVE_GATE_H
#define NMT_SERVE_GATE_H

#include <sys/socket.h>

#include "serve/http_head.h"

/* What the gate asks of the server behind it. */
typedef struct gate_hooks {
    /* The answer to a head the gate serves itself (GET /health, /metrics), malloc'd, with its
     * status and content type; NULL to pass the connection on. */
    char *(*answer)(const http_head *h, int *status, const char **type, void *user);
    /* Non-zero when the server holds all the connections it may: the gate answers 503. */
    int (*full)(void *user);
    /* Hands the connection over; the server owns fd from then on, whatever it returns. */
    void (*pass)(int fd, const struct sockaddr *addr, socklen_t len, void *user);
    /* Counts one answer the gate sent, with its route (NULL for others), for the metrics. */
    void (*answered)(const http_head *h, int status, void *user);
    void *user;
} gate_hooks;

typedef struct gate_opts {
    http_limits limits;
    int header_timeout_ms; /* a connection's head must be whole this long after it opened (408) */
    int max_pending;       /* connections waiting for their heads; beyond, the oldest is closed */
    const char *headers;   /* header lines ("Name: value\r\n" each) every answer of the gate
                              carries, or NULL; the caller keeps it alive */
} gate_opts;

typedef struct gate gate;

/* Starts the gate's thread on listen_fd (bound and listening; the gate sets it non-blocking and
 * closes it in gate_free). NMT-style status: 0, or -1 with errno. */
int gate_start(gate **out, int listen_fd, const gate_opts *o, const gate_hooks *hooks);
/* Stops accepting at once (connections are refused), closes the connections that wait for their
 * heads and joins the thread. Safe to call twice. */
void gate_stop(gate *g);
void gate_free(gate *g);

/* Writes a whole answer (status line, headers, body) that closes the connection, without
 * blocking: a small answer fits the socket's buffer. 0, or -1 when it did not all go. */
int gate_write_answer(int fd, int status, const char *type, const char *headers, const char *body, size_t len, int head_only);

#endif
