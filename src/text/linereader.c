/* linereader.c: lines from a descriptor through one growing buffer: read() fills it in chunks,
 * lines are cut at '\n' in place, and the unfinished tail moves to the front before the next
 * read. read(), not stdio, so that poll() can tell whether a pipe holds more (linereader_ready)
 * and a failing read is told apart from the end of the input. gzip input goes through zlib's
 * inflate between the read() and the buffer. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "base/err.h"
#include "text/linereader.h"
#include "text/unicode.h"

#define CHUNK 65536 /* bytes asked of each read() */

/* gzip input: the compressed bytes read so far and not yet inflated, and zlib's state. */
struct lr_gzip {
    z_stream z;
    unsigned char *in;
    size_t in_cap;
    int in_eof;       /* read() has reported the end of the compressed input */
    int between;      /* a member has ended: the input may end here, or another member follow */
};

static int start(linereader *r, int fd, int own, const char *name, int flags, nmt_err *err)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->own = own;
    r->flags = flags;
    r->name = strdup(name);
    if (!r->name) {
        linereader_free(r);
        return nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory", name);
    }
    return NMT_OK;
}

int linereader_init(linereader *r, const char *path, int flags, nmt_err *err)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
    return start(r, fd, 1, path, flags, err);
}

int linereader_init_fd(linereader *r, int fd, const char *name, int flags, nmt_err *err)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    /* a closed descriptor would read as an error later, but by then a file opened meanwhile
     * may have taken its number: refuse it while the number is still free */
    if (fcntl(fd, F_GETFD) < 0) return nmt_fail(err, NMT_ERR_IO, "%s: cannot read: %s", name, strerror(errno));
    return start(r, fd, 0, name, flags, err);
}

void linereader_free(linereader *r)
{
    if (!r) return;
    if (r->own && r->fd >= 0) close(r->fd); /* read-only: a failing close loses nothing */
    if (r->gz) {
        inflateEnd(&r->gz->z);
        free(r->gz->in);
    }
    free(r->gz);
    free(r->name);
    free(r->buf);
    memset(r, 0, sizeof *r);
    r->fd = -1;
}

/* read() of up to n bytes, again after an interruption: the count, 0 at the end, -1 (errno). */
static ssize_t read_some(int fd, void *dst, size_t n)
{
    for (;;) {
        ssize_t got = read(fd, dst, n);
        if (got >= 0 || errno != EINTR) return got;
    }
}

/* Inflates into the buffer until it holds something new or the input ends. A member that ends
 * is followed by another (gzip -c a b > ab reads as a then b) or by the end of the input. */
static int inflate_more(linereader *r, nmt_err *err)
{
    struct lr_gzip *g = r->gz;
    size_t before = r->len;
    while (r->len == before && !r->eof) {
        if (g->z.avail_in == 0 && !g->in_eof) {
            ssize_t got = read_some(r->fd, g->in, g->in_cap);
            if (got < 0) return nmt_fail(err, NMT_ERR_IO, "%s: cannot read: %s", r->name, strerror(errno));
            g->in_eof = got == 0;
            g->z.next_in = g->in;
            g->z.avail_in = (uInt)got;
        }
        if (g->z.avail_in == 0 && g->in_eof) {
            if (g->between) { r->eof = 1; break; }
            return nmt_fail(err, NMT_ERR_FORMAT, "%s: gzip data ends in the middle (truncated file?)", r->name);
        }
        g->z.next_out = (Bytef *)r->buf + r->len;
        g->z.avail_out = (uInt)(r->cap - r->len - 1);
        int zr = inflate(&g->z, Z_NO_FLUSH);
        r->len = r->cap - 1 - g->z.avail_out;
        g->between = 0;
        if (zr == Z_STREAM_END) {
            if (inflateReset(&g->z) != Z_OK) return nmt_fail(err, NMT_ERR_FORMAT, "%s: damaged gzip data", r->name);
            g->between = 1;
        } else if (zr != Z_OK && zr != Z_BUF_ERROR) {
            return nmt_fail(err, zr == Z_MEM_ERROR ? NMT_ERR_NOMEM : NMT_ERR_FORMAT, "%s: damaged gzip data: %s",
                            r->name, g->z.msg ? g->z.msg : "inflate failed");
        }
    }
    return NMT_OK;
}

/* After the first read: input that starts with gzip's magic bytes is handed to a decompressor
 * (what was read becomes its input) and the buffer refilled from it. A pipe that has given one
 * byte so far, 1f, is looked at again after the next read. */
static int sniff(linereader *r, nmt_err *err)
{
    const unsigned char *b = (const unsigned char *)r->buf;
    if (r->len == 1 && b[0] == 0x1f && !r->eof) return NMT_OK;
    r->sniffed = 1;
    if (r->len < 2 || b[0] != 0x1f || b[1] != 0x8b) return NMT_OK;
    struct lr_gzip *g = calloc(1, sizeof *g);
    if (g) g->in_cap = r->len > CHUNK ? r->len : CHUNK;
    if (!g || !(g->in = malloc(g->in_cap))) {
        free(g);
        return nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory", r->name);
    }
    if (inflateInit2(&g->z, 15 + 16) != Z_OK) { /* 15 + 16: a window of 2^15, gzip framing */
        free(g->in);
        free(g);
        return nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory (inflate)", r->name);
    }
    memcpy(g->in, r->buf, r->len);
    g->z.next_in = g->in;
    g->z.avail_in = (uInt)r->len;
    g->in_eof = r->eof;
    r->gz = g;
    r->len = 0;
    r->eof = 0;
    return inflate_more(r, err);
}

/* One more read() into the buffer, after moving the unfinished line to its front. */
static int fill(linereader *r, nmt_err *err)
{
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->len > LINEREADER_MAX_LINE)
        return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: a line of more than %zu MiB (not text?)", r->name, r->lineno + 1,
                        LINEREADER_MAX_LINE >> 20);
    if (r->len + CHUNK + 1 > r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 2 * CHUNK;
        char *nb = realloc(r->buf, nc);
        if (!nb) return nmt_fail(err, NMT_ERR_NOMEM, "%s:%ld: out of memory for a line of %zu bytes", r->name, r->lineno + 1, r->len);
        r->buf = nb;
        r->cap = nc;
    }
    if (r->gz) return inflate_more(r, err);
    ssize_t got = read_some(r->fd, r->buf + r->len, r->cap - r->len - 1);
    if (got < 0) return nmt_fail(err, NMT_ERR_IO, "%s: cannot read: %s", r->name, strerror(errno));
    if (got == 0) r->eof = 1;
    r->len += (size_t)got;
    return r->sniffed ? NMT_OK : sniff(r, err);
}

/* Cuts the line at buf[pos..), ending at nl (NULL: at the end of the input), and checks it. */
static int take(linereader *r, char *nl, char **line, size_t *len, nmt_err *err)
{
    char *s = r->buf + r->pos;
    size_t n = nl ? (size_t)(nl - s) : r->len - r->pos;
    r->pos += n + (nl != NULL);
    r->lineno++;
    if (n && s[n - 1] == '\r') n--;
    s[n] = 0; /* over the '\r' or '\n', or in the spare byte after the last line */
    if (r->lineno == 1 && n >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3)) { /* a byte-order mark: not the first word's */
        s += 3;
        n -= 3;
    }
    if (memchr(s, 0, n)) return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: NUL byte in line", r->name, r->lineno);
    if (r->flags & LINEREADER_UTF8) {
        long bad = utf8_find_invalid(s, n);
        if (bad >= 0)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: invalid UTF-8 at byte %ld of the line", r->name, r->lineno, bad + 1);
    }
    *line = s;
    *len = n;
    return 1;
}

int linereader_next(linereader *r, char **line, size_t *len, nmt_err *err)
{
    for (;;) {
        char *nl = r->len > r->pos ? memchr(r->buf + r->pos, '\n', r->len - r->pos) : NULL;
        if (nl || (r->eof && r->pos < r->len)) return take(r, nl, line, len, err);
        if (r->eof) return 0;
        int rc = fill(r, err);
        if (rc) return rc;
    }
}

int linereader_ready(linereader *r)
{
    if (r->eof || (r->len > r->pos && memchr(r->buf + r->pos, '\n', r->len - r->pos))) return 1;
    if (r->gz && r->gz->z.avail_in > 0) return 1; /* compressed bytes wait to be inflated */
    struct pollfd p = {r->fd, POLLIN, 0};
    return poll(&p, 1, 0) > 0; /* also on a hang-up or an error, which the next read reports */
}
