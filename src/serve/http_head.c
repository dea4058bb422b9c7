/* http_head.c: the request-head check of http_head.h, after RFC 9112 sections 2-3 and 5-6 (the
 * grammar of the request line and of field lines; message body length) and RFC 9110 (tokens,
 * Content-Length, Expect). Strict where a lenient reading would let libmicrohttpd and this check
 * disagree about where a request ends: a repeated or padded Content-Length, a Content-Length
 * beside a Transfer-Encoding, a line folded onto the one before, a bare CR. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "serve/http_head.h"
#include "serve/request.h"

/* RFC 9110 5.6.2: tchar */
static int tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* One line of the head: its text without the CRLF (or bare LF, RFC 9112 2.2), or NULL when no LF
 * is in [p, end). *next is the line after it. */
static const char *line_at(const char *p, const char *end, size_t *len, const char **next)
{
    const char *lf = memchr(p, '\n', (size_t)(end - p));
    if (!lf) return NULL;
    *next = lf + 1;
    *len = (size_t)(lf - p) - (lf > p && lf[-1] == '\r');
    return p;
}

/* "METHOD SP TARGET SP HTTP/d.d" (RFC 9112 3). */
static int request_line(const char *l, size_t n, const http_limits *lim, http_head *h, char *msg, size_t cap)
{
    size_t i = 0;
    while (i < n && tchar((unsigned char)l[i])) i++;
    if (i == 0 || i >= sizeof h->method || i == n || l[i] != ' ') return req_refuse(400, msg, cap, "malformed request line (the method)");
    memcpy(h->method, l, i);
    size_t t0 = ++i;
    while (i < n && (unsigned char)l[i] > 0x20 && (unsigned char)l[i] < 0x7F) i++;
    if (i - t0 > lim->max_target)
        return req_refuse(414, msg, cap, "the request target has %zu bytes; the limit is %zu", i - t0, lim->max_target);
    if (i == t0 || i == n || l[i] != ' ') return req_refuse(400, msg, cap, "malformed request line (the target)");
    if (i - t0 < sizeof h->target) memcpy(h->target, l + t0, i - t0);
    const char *v = l + i + 1;
    size_t vn = n - i - 1;
    if (vn != 8 || memcmp(v, "HTTP/", 5) || v[5] < '0' || v[5] > '9' || v[6] != '.' || v[7] < '0' || v[7] > '9')
        return req_refuse(400, msg, cap, "malformed request line (the HTTP version)");
    if (v[5] != '1') return req_refuse(505, msg, cap, "HTTP/%c.%c is not supported (HTTP/1.0 and HTTP/1.1 are)", v[5], v[7]);
    h->minor = v[7] - '0';
    return 0;
}

/* Content-Length (RFC 9110 8.6): digits alone. Blanks after them are refused too, though the
 * grammar of fields allows them: libmicrohttpd would refuse them after this check passed. */
static int content_length(const char *v, size_t n, const http_limits *lim, http_head *h, char *msg, size_t cap)
{
    size_t i = 0;
    while (i < n && v[i] >= '0' && v[i] <= '9') i++;
    if (i == 0 || i < n) return req_refuse(400, msg, cap, "Content-Length must be a decimal number alone (got \"%.*s\")", (int)(n < 40 ? n : 40), v);
    if (i > 18) return req_refuse(413, msg, cap, "the body has %.*s... bytes; the limit is %zu", 20, v, lim->max_body);
    long long len = 0;
    for (size_t k = 0; k < i; k++) len = len * 10 + (v[k] - '0');
    if ((unsigned long long)len > lim->max_body) return req_refuse(413, msg, cap, "the body has %lld bytes; the limit is %zu", len, lim->max_body);
    h->body = len;
    return 0;
}

typedef struct seen { int length, host, chunked; } seen;

/* One field line "name: value" (RFC 9112 5, RFC 9110 5.5). */
static int field_line(const char *l, size_t n, const http_limits *lim, http_head *h, seen *s, char *msg, size_t cap)
{
    if (l[0] == ' ' || l[0] == '\t') return req_refuse(400, msg, cap, "a header line folded onto the one before");
    size_t c = 0;
    while (c < n && tchar((unsigned char)l[c])) c++;
    if (c == 0 || c == n || l[c] != ':') return req_refuse(400, msg, cap, "malformed header line (its name)");
    const char *v = l + c + 1;
    size_t vn = n - c - 1;
    for (size_t k = 0; k < vn; k++) {
        unsigned char b = (unsigned char)v[k];
        if ((b < 0x20 && b != '\t') || b == 0x7F) return req_refuse(400, msg, cap, "a control byte in header %.*s", (int)c, l);
    }
    while (vn && (*v == ' ' || *v == '\t')) { v++; vn--; }
    if (c == 14 && !strncasecmp(l, "Content-Length", c)) {
        if (s->length++) return req_refuse(400, msg, cap, "Content-Length given twice");
        return content_length(v, vn, lim, h, msg, cap);
    }
    while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t')) vn--;
    if (c == 4 && !strncasecmp(l, "Host", c) && s->host++) return req_refuse(400, msg, cap, "Host given twice");
    if (c == 6 && !strncasecmp(l, "Expect", c) && !(vn == 12 && !strncasecmp(v, "100-continue", 12)))
        return req_refuse(417, msg, cap, "Expect: only 100-continue is supported");
    if (c == 17 && !strncasecmp(l, "Transfer-Encoding", c)) {
        if (vn == 7 && !strncasecmp(v, "chunked", 7)) s->chunked = 1;
        else return req_refuse(501, msg, cap, "Transfer-Encoding \"%.*s\" is not supported", (int)(vn < 40 ? vn : 40), v);
    }
    return 0;
}

/* The head is over the byte limit before it is whole: the target's fault (414) while the request
 * line is not whole or names a long target, the fields' otherwise (431). */
static int too_long(const char *buf, size_t n, const http_limits *lim, char *msg, size_t cap)
{
    const char *lf = memchr(buf, '\n', n);
    if (!lf || (size_t)(lf - buf) > lim->max_target + 32)
        return req_refuse(414, msg, cap, "the request line is over %zu bytes; the limit of the target is %zu", lim->max_head, lim->max_target);
    return req_refuse(431, msg, cap, "the request head is over the limit of %zu bytes", lim->max_head);
}

int http_head_check(const char *buf, size_t n, const http_limits *lim, http_head *h, char *msg, size_t cap)
{
    memset(h, 0, sizeof *h);
    const char *p = buf, *end = buf + (n < lim->max_head ? n : lim->max_head), *next;
    size_t len;
    for (int k = 0; k < 2 && p < end && (*p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n')); k++)
        p += *p == '\r' ? 2 : 1; /* RFC 9112 2.2: an empty line or two before the request line */
    const char *l = line_at(p, end, &len, &next);
    if (!l) {
        /* a target already longer than the limit need not wait for its end */
        const char *sp = memchr(p, ' ', (size_t)(end - p));
        if (sp && !memchr(sp + 1, ' ', (size_t)(end - sp - 1)) && (size_t)(end - sp - 1) > lim->max_target)
            return req_refuse(414, msg, cap, "the request target is over the limit of %zu bytes", lim->max_target);
        return n >= lim->max_head ? too_long(buf, n, lim, msg, cap) : HTTP_HEAD_MORE;
    }
    if (memchr(l, '\r', len)) return req_refuse(400, msg, cap, "a bare CR in the request line");
    int st = request_line(l, len, lim, h, msg, cap);
    seen s = {0, 0, 0};
    p = next;
    for (int fields = 0; !st; p = next, fields++) {
        if (!(l = line_at(p, end, &len, &next))) return n >= lim->max_head ? too_long(buf, n, lim, msg, cap) : HTTP_HEAD_MORE;
        if (memchr(l, '\r', len)) return req_refuse(400, msg, cap, "a bare CR in a header line");
        if (len == 0) break;
        if (fields == lim->max_fields) return req_refuse(431, msg, cap, "more than %d header lines", lim->max_fields);
        st = field_line(l, len, lim, h, &s, msg, cap);
    }
    if (st) return st;
    if (s.chunked && s.length) return req_refuse(400, msg, cap, "Content-Length and Transfer-Encoding together");
    if (s.chunked) return req_refuse(411, msg, cap, "send the body with a Content-Length (chunked bodies are not read)");
    if (h->minor >= 1 && !s.host) return req_refuse(400, msg, cap, "an HTTP/1.1 request needs a Host header");
    h->len = (size_t)(next - buf);
    return 0;
}

const char *http_reason(int status)
{
    static const struct { int status; const char *reason; } r[] = {
        {200, "OK"}, {400, "Bad Request"}, {404, "Not Found"}, {405, "Method Not Allowed"}, {408, "Request Timeout"},
        {411, "Length Required"}, {413, "Content Too Large"}, {414, "URI Too Long"}, {415, "Unsupported Media Type"},
        {417, "Expectation Failed"}, {431, "Request Header Fields Too Large"}, {500, "Internal Server Error"},
        {501, "Not Implemented"}, {503, "Service Unavailable"}, {505, "HTTP Version Not Supported"},
    };
    for (size_t i = 0; i < sizeof r / sizeof *r; i++)
        if (r[i].status == status) return r[i].reason;
    return "Error";
}
