/* fuzz_http.c: raw bytes to a running `nmt serve`: the server runs in this process on a loopback
 * port (started once, over a model of random weights and a six-word vocabulary), and each input
 * is sent on a new connection as it is. An input whose head and body are whole waits for its
 * answer; any other is followed by a half-close, as a client that has said all it will. Beyond
 * crashes, the answer is checked: nothing, or one HTTP/1.1 status line (libmicrohttpd's own error
 * pages sent theirs twice), and a refusal's body is the server's JSON error with the same status
 * (libmicrohttpd's are HTML; looking for its HTML itself would not do: the fuzzer learns the
 * string compared and sends it, and the server quotes it back inside JSON). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "fuzz.h"
#include "serve/http_head.h"
#include "serve/serve.h"

static void require(int ok, const char *what, const char *resp)
{
    if (ok) return;
    fprintf(stderr, "fuzz_http: %s\n---\n%.600s\n---\n", what, resp);
    abort();
}

/* The server, once per process: small limits, so that inputs reach them. */
static int server_port(void)
{
    static serve *s;
    static nmt_model *m;
    if (s) return serve_port(s);
    static const char *const words[6] = {"</s>", "<unk>", "a", "man", "dog", "."};
    nmt_config c = nmt_config_default();
    c.src_vocab = c.tgt_vocab = 6;
    c.emb = c.hid = c.att = c.maxout = 4;
    serve_opts o = serve_default_opts();
    o.port = 0;
    o.pool.workers = 1;
    o.pool.max_wait_ms = 0;
    o.limits.max_texts = 4;
    o.limits.max_words = 20;
    o.limits.max_beam = 4;
    o.limits.beam = 2;
    o.max_body = 4096;
    o.idle_timeout = o.request_timeout = o.header_timeout = 2;
    nmt_err err;
    static serve_model sm;
    if (nmt_model_create(&m, &c, words, words, 1, &err) || (sm = (serve_model){"tiny", m}, serve_init(&s, &sm, 1, &o, &err))) {
        fprintf(stderr, "fuzz_http: cannot start the server: %s\n", err.msg);
        abort();
    }
    return serve_port(s);
}

/* Is the request in data whole (head and body), so that the client waits for its answer? */
static int whole(const uint8_t *data, size_t size)
{
    http_limits lim = {GATE_MAX_HEAD, GATE_MAX_TARGET, 4096, GATE_MAX_FIELDS};
    http_head h;
    char msg[256];
    return http_head_check((const char *)data, size, &lim, &h, msg, sizeof msg) == 0 && h.len + (size_t)h.body <= size;
}

/* The answer: up to cap bytes until the server closes (or 5 s pass). */
static size_t exchange(int port, const uint8_t *data, size_t size, char *resp, size_t cap)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    size_t got = 0;
    if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof a)) {
        for (size_t sent = 0; sent < size;) { /* the server may answer and close before the end */
            ssize_t k = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
            if (k <= 0) break;
            sent += (size_t)k;
        }
        if (!whole(data, size)) shutdown(fd, SHUT_WR);
        for (ssize_t k; got < cap && (k = recv(fd, resp + got, cap - got, 0)) > 0;) got += (size_t)k;
    }
    if (fd >= 0) close(fd);
    resp[got] = 0;
    return got;
}

int fuzz_http(const uint8_t *data, size_t size)
{
    static char resp[1 << 16];
    size_t n = exchange(server_port(), data, size, resp, sizeof resp - 1);
    if (n == 0) return 0; /* closed without a word: a client gone, or a connection cut */
    require(n > 13 && !memcmp(resp, "HTTP/1.1 ", 9) && resp[12] == ' ', "not an HTTP/1.1 status line", resp);
    int status = atoi(resp + 9);
    require(status >= 200 && status <= 599, "a status out of range", resp);
    require(!strstr(resp, "\r\nHTTP/1."), "a second status line", resp);
    const char *body = strstr(resp, "\r\n\r\n");
    require(body != NULL, "no end to the answer's head", resp);
    if (status >= 400 && body[4]) {
        char want[64];
        snprintf(want, sizeof want, "{\"error\":{\"status\":%d,", status);
        require(!strncmp(body + 4, want, strlen(want)), "a refusal that is not the server's JSON error", resp);
    }
    return 0;
}
