/* http_head.h: the request head of HTTP/1.x (RFC 9112: request line, header fields, the blank
 * line) checked before libmicrohttpd reads it, so that every framing error gets the server's own
 * JSON answer with one status line, and so that the server's front door can see a head is whole
 * (and which route it asks for) without a thread per connection. Pure: no sockets, no locks. */
#ifndef NMT_SERVE_HTTP_HEAD_H
#define NMT_SERVE_HTTP_HEAD_H

#include <stddef.h>

typedef struct http_limits {
    size_t max_head;   /* bytes of the request line and header fields, blank line included (431) */
    size_t max_target; /* bytes of the request target (414) */
    size_t max_body;   /* a Content-Length above this is 413 */
    int max_fields;    /* header lines (431): libmicrohttpd keeps a record of each in a pool of
                          fixed size, and answers an overflow with its own page */
} http_limits;

typedef struct http_head {
    size_t len;           /* bytes of the head, its blank line included */
    char method[16];
    char target[64];      /* the target when it fits, else "" (the routes are short) */
    int minor;            /* HTTP/1.minor */
    long long body;       /* Content-Length, 0 when absent */
} http_head;

#define HTTP_HEAD_MORE (-1) /* the head is not whole yet: read more */

/* Checks buf[0..n), the first bytes of a connection. Returns 0 with h filled in when a whole head
 * is there and acceptable; HTTP_HEAD_MORE when it is a correct beginning of one; or the status to
 * refuse it with and msg, for a head that is malformed (400), over the limits (413, 414, 431),
 * of another HTTP version (505), or with a body framed otherwise than by one Content-Length (411,
 * 501; conflicting or repeated lengths 400). */
int http_head_check(const char *buf, size_t n, const http_limits *lim, http_head *h, char *msg, size_t cap);

/* The reason phrase of status (RFC 9110), "Error" for one it does not know. */
const char *http_reason(int status);

#endif
