/* linereader.c: lines from a descriptor through one growing buffer: read() fills it in chunks,
 * lines are cut at '\n' in place, and the unfinished tail moves to the front before the next
 * read. read(), not stdio, so that poll() can tell whether a pipe holds more (linereader_ready)
 * and a failing read is told apart from the end of the input. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "text/linereader.h"
#include "text/unicode.h"

#define CHUNK 65536 /* bytes asked of each read() */

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
    free(r->name);
    free(r->buf);
    memset(r, 0, sizeof *r);
    r->fd = -1;
}

/* One more read() into the buffer, after moving the unfinished line to its front. */
static int fill(linereader *r, nmt_err *err)
{
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->len + CHUNK + 1 > r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 2 * CHUNK;
        char *nb = realloc(r->buf, nc);
        if (!nb) return nmt_fail(err, NMT_ERR_NOMEM, "%s:%ld: out of memory for a line of %zu bytes", r->name, r->lineno + 1, r->len);
        r->buf = nb;
        r->cap = nc;
    }
    for (;;) {
        ssize_t got = read(r->fd, r->buf + r->len, r->cap - r->len - 1);
        if (got > 0) r->len += (size_t)got;
        else if (got == 0) r->eof = 1;
        else if (errno == EINTR) continue;
        else return nmt_fail(err, NMT_ERR_IO, "%s: cannot read: %s", r->name, strerror(errno));
        return NMT_OK;
    }
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
    struct pollfd p = {r->fd, POLLIN, 0};
    return poll(&p, 1, 0) > 0; /* also on a hang-up or an error, which the next read reports */
}
