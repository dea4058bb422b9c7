/* paths.c: output-versus-input checks and the per-model lock (see paths.h). Files are compared
 * by identity (device and inode), so that "./a", "a", a hard link or a symbolic link to an
 * input are all caught; names only stand in for outputs that do not exist yet. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/paths.h"

/* How a path is compared: its inode when it exists, else its name with the directory resolved
 * (realpath), or as given when even the directory does not exist (the write fails later). */
typedef struct ident { int exists; dev_t dev; ino_t ino; char name[PATH_MAX + 256]; } ident;

static void ident_of(const char *path, ident *id)
{
    struct stat sb;
    memset(id, 0, sizeof *id);
    if (stat(path, &sb) == 0) {
        id->exists = 1;
        id->dev = sb.st_dev;
        id->ino = sb.st_ino;
        return;
    }
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX], real[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
    if (realpath(dir, real)) snprintf(id->name, sizeof id->name, "%s/%s", real, slash ? slash + 1 : path);
    else snprintf(id->name, sizeof id->name, "%s", path);
}

/* Whether two idents are one file; an existing and a missing path never are. */
static int same(const ident *a, const ident *b)
{
    if (a->exists != b->exists) return 0;
    return a->exists ? a->dev == b->dev && a->ino == b->ino : !strcmp(a->name, b->name);
}

static int skip(const path_role *p) { return !p->path || !*p->path || !strcmp(p->path, "-"); }

/* An input "-" as the file behind standard input, when that is a regular file (a terminal or a
 * pipe cannot be emptied by writing a file); 0 when there is nothing to compare. */
static int stdin_ident(ident *id)
{
    struct stat sb;
    memset(id, 0, sizeof *id);
    if (fstat(0, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
    id->exists = 1;
    id->dev = sb.st_dev;
    id->ino = sb.st_ino;
    return 1;
}

/* Input i's ident in *b; 0 when it names nothing to compare */
static int input_ident(const path_role *in, ident *b)
{
    if (in->path && !strcmp(in->path, "-")) return stdin_ident(b);
    if (skip(in)) return 0;
    ident_of(in->path, b);
    return 1;
}

int path_check_outputs(const path_role *in, int nin, const path_role *out, int nout, nmt_err *err)
{
    ident a, b;
    for (int o = 0; o < nout; o++) {
        if (skip(&out[o])) continue;
        ident_of(out[o].path, &a);
        for (int i = 0; i < nin; i++) {
            if (!input_ident(&in[i], &b) || !same(&a, &b)) continue;
            if (!strcmp(in[i].path, "-"))
                return nmt_fail(err, NMT_ERR_ARG, "%s is both %s (read from standard input) and %s (written): refusing to "
                                "overwrite an input", out[o].path, in[i].role, out[o].role);
            return nmt_fail(err, NMT_ERR_ARG, "%s is both %s (read) and %s (written): refusing to overwrite an input",
                            out[o].path, in[i].role, out[o].role);
        }
        for (int k = 0; k < o; k++) {
            if (skip(&out[k])) continue;
            ident_of(out[k].path, &b);
            if (same(&a, &b))
                return nmt_fail(err, NMT_ERR_ARG, "%s is both %s and %s: each output needs its own file", out[o].path,
                                out[k].role, out[o].role);
        }
    }
    return NMT_OK;
}

const char *path_kind(unsigned mode)
{
    return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) || S_ISBLK(mode) ? "a device" : "a socket";
}

int path_check_regular(const char *path, nmt_err *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode)) return nmt_fail(err, NMT_ERR_IO, "%s: not a regular file (%s)", path, path_kind(sb.st_mode));
    return NMT_OK;
}

int path_open_regular(const char *path, int *fd_out, size_t *size, nmt_err *err)
{
    *fd_out = -1;
    int rc = path_check_regular(path, err);
    if (rc) return rc;
    /* O_NONBLOCK: a FIFO swapped in since the check is opened at once, and refused below */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) rc = nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode)) rc = nmt_fail(err, NMT_ERR_IO, "%s: not a regular file (%s)", path, path_kind(sb.st_mode));
    if (rc) {
        close(fd);
        return rc;
    }
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX - 1) {
        close(fd);
        return nmt_fail(err, NMT_ERR_NOMEM, "%s: file too large to hold in memory", path);
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); /* a regular file's reads never wait anyway */
    *fd_out = fd;
    *size = (size_t)sb.st_size;
    return NMT_OK;
}

int path_lock(const char *lock_path, const char *what, int *fd_out, nmt_err *err)
{
    *fd_out = -1;
    /* A holder removes the lock file when done: a lock won on a file that was removed (or
     * replaced) meanwhile protects nothing, so it is taken again on the file now there. */
    for (int tries = 0; tries < 100; tries++) {
        int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) return nmt_fail(err, NMT_ERR_IO, "%s: cannot create the lock file: %s", lock_path, strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(fd);
            if (e == EWOULDBLOCK)
                return nmt_fail(err, NMT_ERR_IO, "%s is in use by another process (%s is locked): wait for it to end, or choose another path",
                                what, lock_path);
            return nmt_fail(err, NMT_ERR_IO, "%s: cannot lock: %s", lock_path, strerror(e));
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(lock_path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            *fd_out = fd;
            return NMT_OK;
        }
        close(fd);
    }
    return nmt_fail(err, NMT_ERR_IO, "%s: the lock file keeps changing", lock_path);
}

void path_resolve(const char *path, char *out, size_t cap)
{
    char real[PATH_MAX];
    if (realpath(path, real)) { snprintf(out, cap, "%s", real); return; }
    ident id;
    ident_of(path, &id); /* not there yet: the directory resolved */
    snprintf(out, cap, "%s", id.name[0] ? id.name : path);
}

int path_lock_inode(const char *path, int *fd_out, nmt_err *err)
{
    *fd_out = -1;
    struct stat sb;
    if (stat(path, &sb) != 0) return NMT_OK; /* nothing there yet: nothing another name could share */
    if (!S_ISREG(sb.st_mode)) /* opening a FIFO would wait for a writer; no model is written there */
        return nmt_fail(err, NMT_ERR_IO, "%s: not a regular file (%s)", path, path_kind(sb.st_mode));
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NMT_OK;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK)
            return nmt_fail(err, NMT_ERR_IO, "%s is in use by another process, under another name (a hard link): wait for it to end, "
                            "or choose another path", path);
        return nmt_fail(err, NMT_ERR_IO, "%s: cannot lock: %s", path, strerror(e));
    }
    *fd_out = fd;
    return NMT_OK;
}

void path_unlock(const char *lock_path, int fd)
{
    if (fd < 0) return;
    unlink(lock_path); /* while still held: nobody can hold a lock on the removed file */
    close(fd);
}

int path_read_all(const char *path, char **out, size_t *out_len, nmt_err *err)
{
    *out = NULL;
    int fd;
    size_t size;
    int rc = path_open_regular(path, &fd, &size, err);
    if (rc) return rc;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
    }
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    do { /* one byte kept for the NUL */
        if (len + 1 >= cap) {
            char *q = realloc(buf, cap = cap ? 2 * cap : 1 << 16);
            if (!q) { free(buf); fclose(f); return nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); }
            buf = q;
        }
        len += got = fread(buf + len, 1, cap - len - 1, f);
    } while (got > 0);
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(buf); return nmt_fail(err, NMT_ERR_IO, "%s: read error", path); }
    buf[len] = 0;
    *out = buf, *out_len = len;
    return NMT_OK;
}
