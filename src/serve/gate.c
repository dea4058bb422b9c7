/* gate.c: the front door of gate.h: one thread, poll(2) over the listening socket, a wake-up
 * pipe and every connection whose head is not whole yet. A connection's bytes are peeked, never
 * read, until the gate answers it itself; SO_RCVLOWAT keeps poll from waking for bytes already
 * seen, so a head that arrives a byte at a time costs one wake-up per byte. An answered connection
 * lingers (its input read and dropped, up to LINGER_S) after the gate shuts its side, so that
 * closing a socket with unread bytes does not reset the answer away before the client reads it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "serve/gate.h"
#include "serve/request.h"

#define LINGER_S 2.0
#define ACCEPTS_PER_ROUND 64 /* then the waiting connections get their turn */

typedef struct pend {
    int fd;
    double t_open;       /* accepted; the header timeout counts from here */
    double t_linger;     /* answered and shut (0 while waiting for its head) */
    struct sockaddr_storage addr;
    socklen_t alen;
} pend;

struct gate {
    int listen_fd, wake[2];
    gate_opts o;
    gate_hooks k;
    pthread_t tid;
    int started, stopped;
    pend *p;
    int n;
    struct pollfd *pfd;
    char *buf;           /* [limits.max_head] a peek */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int gate_write_answer(int fd, int status, const char *type, const char *headers, const char *body, size_t len, int head_only)
{
    char head[1024];
    int hn = snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                      "X-Content-Type-Options: nosniff\r\n%sConnection: close\r\n\r\n", status, http_reason(status), type, len,
                      headers ? headers : "");
    if (hn < 0 || hn >= (int)sizeof head) return -1;
    struct iovec iov[2] = {{head, (size_t)hn}, {(void *)body, head_only ? 0 : len}};
    struct msghdr m = {0};
    m.msg_iov = iov;
    m.msg_iovlen = 2;
    ssize_t sent = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    return sent == (ssize_t)(hn + iov[1].iov_len) ? 0 : -1;
}

/* ------------------------------------------------------------------ the waiting connections */

static void drop(gate *g, int i, int close_fd)
{
    if (close_fd) close(g->p[i].fd);
    g->p[i] = g->p[--g->n];
}

/* Reads and drops what the client sends after its answer, until it closes (or LINGER_S). */
static void linger_read(gate *g, int i)
{
    char b[4096];
    ssize_t r;
    while ((r = recv(g->p[i].fd, b, sizeof b, MSG_DONTWAIT)) > 0) {}
    if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) drop(g, i, 1);
}

/* Answers connection i here (status, JSON or the route's body), then lets it linger. The bytes
 * seen so far are read first: a request answered here is not read by anyone else. */
static void answer(gate *g, int i, const http_head *h, int status, const char *type, char *body, size_t seen)
{
    pend *p = &g->p[i];
    int one = 1;
    setsockopt(p->fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
    while (seen > 0) {
        ssize_t r = recv(p->fd, g->buf, seen, MSG_DONTWAIT);
        if (r <= 0) break;
        seen -= (size_t)r;
    }
    gate_write_answer(p->fd, status, type, g->o.headers, body ? body : "", body ? strlen(body) : 0, !strcmp(h->method, "HEAD"));
    free(body);
    if (g->k.answered) g->k.answered(h, status, g->k.user);
    shutdown(p->fd, SHUT_WR);
    p->t_linger = now_s();
}

static void refuse(gate *g, int i, const http_head *h, int status, const char *msg, size_t seen)
{
    answer(g, i, h, status, "application/json", req_error_json(status, msg), seen);
}

/* New bytes on connection i: the head is whole (answered here or handed over), still partial
 * (poll wakes again when more than these have come; hung up, the client sends no more: 400),
 * malformed (refused), or gone. */
static void step(gate *g, int i, int hung_up)
{
    pend *p = &g->p[i];
    if (p->t_linger > 0) { linger_read(g, i); return; }
    ssize_t r = recv(p->fd, g->buf, g->o.limits.max_head, MSG_PEEK | MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (r <= 0) { drop(g, i, 1); return; } /* closed, or an error, before a whole head */
    http_head h;
    char msg[256];
    int st = http_head_check(g->buf, (size_t)r, &g->o.limits, &h, msg, sizeof msg);
    if (st == HTTP_HEAD_MORE && hung_up) { /* else poll would report the end of stream again and again */
        refuse(g, i, &h, 400, "the connection was shut before the request head ended", (size_t)r);
        return;
    }
    if (st == HTTP_HEAD_MORE) {
        int low = (int)r + 1;
        setsockopt(p->fd, SOL_SOCKET, SO_RCVLOWAT, &low, sizeof low);
        return;
    }
    if (st) { refuse(g, i, &h, st, msg, (size_t)r); return; }
    const char *type = NULL;
    char *body = g->k.answer ? g->k.answer(&h, &st, &type, g->k.user) : NULL;
    if (body) { answer(g, i, &h, st, type, body, h.len); return; }
    if (g->k.full && g->k.full(g->k.user)) {
        refuse(g, i, &h, 503, "too many connections: try again shortly", h.len);
        return;
    }
    int one = 1;
    setsockopt(p->fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
    pend q = *p;
    drop(g, i, 0);
    g->k.pass(q.fd, (struct sockaddr *)&q.addr, q.alen, g->k.user);
}

/* Ends what is overdue: a head not whole within the header timeout (408), a lingering
 * connection after LINGER_S. Returns the milliseconds until the next deadline (at most 1000). */
static int deadlines(gate *g)
{
    double t = now_s(), next = t + 1.0, limit = g->o.header_timeout_ms * 1e-3;
    for (int i = g->n - 1; i >= 0; i--) {
        pend *p = &g->p[i];
        double due = p->t_linger > 0 ? p->t_linger + LINGER_S : p->t_open + limit;
        if (t < due) { if (due < next) next = due; continue; }
        if (p->t_linger > 0) { drop(g, i, 1); continue; }
        http_head h = {0};
        refuse(g, i, &h, 408, "the request head did not arrive in time", 0);
        if (p->t_linger + LINGER_S < next) next = p->t_linger + LINGER_S;
    }
    return (int)((next - t) * 1000) + 1;
}

/* The connection that has waited longest makes room for a new one. */
static void evict_oldest(gate *g)
{
    int o = 0;
    for (int i = 1; i < g->n; i++)
        if (g->p[i].t_open < g->p[o].t_open) o = i;
    if (g->n) drop(g, o, 1);
}

/* Accepts what the listening socket holds; 0, or -1 when out of descriptors with none to free. */
static int accept_new(gate *g)
{
    for (int k = 0; k < ACCEPTS_PER_ROUND; k++) {
        pend p = {0};
        p.alen = sizeof p.addr;
        p.fd = accept4(g->listen_fd, (struct sockaddr *)&p.addr, &p.alen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (p.fd < 0 && (errno == EMFILE || errno == ENFILE) && g->n) { evict_oldest(g); continue; }
        if (p.fd < 0) return errno == EMFILE || errno == ENFILE ? -1 : 0;
        if (g->n == g->o.max_pending) evict_oldest(g);
        p.t_open = now_s();
        g->p[g->n++] = p;
        step(g, g->n - 1, 0); /* the head often came with the connection */
    }
    return 0;
}

static void *gate_main(void *arg)
{
    gate *g = arg;
    int starved = 0; /* out of descriptors: leave the listening socket alone for a round */
    for (;;) {
        int timeout = deadlines(g), np = 2;
        g->pfd[0] = (struct pollfd){g->wake[0], POLLIN, 0};
        g->pfd[1] = (struct pollfd){starved ? -1 : g->listen_fd, POLLIN, 0};
        for (int i = 0; i < g->n; i++) g->pfd[np++] = (struct pollfd){g->p[i].fd, POLLIN | POLLRDHUP, 0};
        if (starved) timeout = timeout < 100 ? timeout : 100;
        if (poll(g->pfd, (nfds_t)np, timeout) < 0 && errno != EINTR) break;
        if (g->pfd[0].revents) break;
        for (int i = np - 1; i >= 2; i--) /* from the end: drop moves the last entry into i */
            if (g->pfd[i].revents && i - 2 < g->n) step(g, i - 2, g->pfd[i].revents & (POLLRDHUP | POLLHUP | POLLERR));
        starved = g->pfd[1].revents ? accept_new(g) < 0 : 0;
    }
    return NULL;
}

int gate_start(gate **out, int listen_fd, const gate_opts *o, const gate_hooks *hooks)
{
    *out = NULL;
    gate *g = calloc(1, sizeof *g);
    if (!g) return -1;
    g->listen_fd = listen_fd;
    g->o = *o;
    g->k = *hooks;
    g->wake[0] = g->wake[1] = -1;
    g->p = malloc(sizeof *g->p * (size_t)o->max_pending);
    g->pfd = malloc(sizeof *g->pfd * ((size_t)o->max_pending + 2));
    g->buf = malloc(o->limits.max_head);
    int flags = fcntl(listen_fd, F_GETFL);
    if (!g->p || !g->pfd || !g->buf || pipe2(g->wake, O_CLOEXEC | O_NONBLOCK) || flags < 0 ||
        fcntl(listen_fd, F_SETFL, flags | O_NONBLOCK) || pthread_create(&g->tid, NULL, gate_main, g)) {
        int e = errno ? errno : ENOMEM;
        g->listen_fd = -1; /* the caller's still */
        gate_free(g);
        errno = e;
        return -1;
    }
    g->started = 1;
    *out = g;
    return 0;
}

void gate_stop(gate *g)
{
    if (!g || g->stopped) return;
    g->stopped = 1;
    if (g->listen_fd >= 0) shutdown(g->listen_fd, SHUT_RDWR); /* the kernel refuses new connections from now */
    if (g->started) {
        ssize_t w = write(g->wake[1], "x", 1);
        (void)w;
        pthread_join(g->tid, NULL);
        g->started = 0;
    }
    while (g->n) drop(g, g->n - 1, 1);
    if (g->listen_fd >= 0) close(g->listen_fd);
    g->listen_fd = -1;
}

void gate_free(gate *g)
{
    if (!g) return;
    gate_stop(g);
    if (g->wake[0] >= 0) close(g->wake[0]);
    if (g->wake[1] >= 0) close(g->wake[1]);
    free(g->p);
    free(g->pfd);
    free(g->buf);
    free(g);
}
