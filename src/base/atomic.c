/* atomic.c: whole-file replacement through a temporary beside the target (see atomic.h), and
 * the clean-up of temporaries that a killed process left behind. The temporary lives in the
 * target's directory because rename() is atomic only within one file system. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic.h"
#include "base/err.h"
#include "base/paths.h"

/* A copy of path's directory part ("." when it has none) into a new string. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

int atomic_sync_dir(const char *path)
{
    char *dir = dir_of(path);
    if (!dir) { errno = ENOMEM; return -1; }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    /* Some file systems cannot sync a directory; the data itself is already synced there. */
    if (rc != 0 && (e == EINVAL || e == ENOTSUP)) rc = 0;
    errno = e;
    return rc;
}

/* This machine's name as temporary files carry it (no '/' in it, at most 24 bytes, so that a
 * long target's temporary stays within NAME_MAX); "" when it has none. */
static void host_tag(char *buf, size_t n)
{
    if (gethostname(buf, n) != 0) buf[0] = 0;
    buf[n - 1] = 0;
    if (n > 25) buf[24] = 0;
    for (char *p = buf; *p; p++)
        if (*p == '/') *p = '_';
}

/* The PID in a directory entry named BASE.tmp.PID.HOST made on this machine (or BASE.tmp.PID, as
 * older builds named them), or 0: a name of another form, or another machine's, whose PIDs mean
 * nothing here (a shared file system). */
static long temp_pid(const char *entry, const char *base, size_t blen, const char *host)
{
    if (strncmp(entry, base, blen) || strncmp(entry + blen, ".tmp.", 5)) return 0;
    const char *d = entry + blen + 5;
    char *end;
    if (*d < '1' || *d > '9') return 0;
    errno = 0;
    long pid = strtol(d, &end, 10);
    if (errno || pid <= 0 || (*end && (*end != '.' || strcmp(end + 1, host)))) return 0;
    return pid;
}

int atomic_remove_stale(const char *path)
{
    char *dir = dir_of(path);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t blen = strlen(base);
    DIR *d = dir ? opendir(dir) : NULL;
    int removed = 0;
    char host[256];
    host_tag(host, sizeof host);
    for (struct dirent *e; d && (e = readdir(d));) {
        long pid = temp_pid(e->d_name, base, blen, host);
        if (!pid) continue;
        /* Our own PID cannot be a save in progress for this target (saves of one target do not
         * overlap): it is a dead process's, whose PID was reused. A live PID may be another
         * run's save in progress (or an unrelated process): left alone. */
        if (pid != (long)getpid() && !(kill((pid_t)pid, 0) != 0 && errno == ESRCH)) continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *full = malloc(n);
        if (!full) break;
        snprintf(full, n, "%s/%s", dir, e->d_name);
        removed += unlink(full) == 0;
        free(full);
    }
    if (d) closedir(d);
    free(dir);
    return removed;
}

int atomic_open(atomic_file *a, const char *path, nmt_err *err)
{
    memset(a, 0, sizeof *a);
    if (!path || !*path) return nmt_fail(err, NMT_ERR_ARG, "atomic_open: empty path");
    /* rename() replaces whatever holds the name: run as root, --out /dev/null once made
     * /dev/null a regular file (and --out /dev/stdout would replace that link). Only a file, or
     * a link to one, may be replaced; through a link, the file it names is (a model kept as
     * a link to the current one stays a link), beside which the temporary then lives. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return nmt_fail(err, NMT_ERR_IO, "%s: not a regular file (%s): refusing to replace it", path, path_kind(st.st_mode));
    char *target = lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? realpath(path, NULL) : NULL; /* NULL: dangling */
    if (target) path = target;
    atomic_remove_stale(path);
    char host[256];
    host_tag(host, sizeof host);
    size_t n = strlen(path) + strlen(host) + 32;
    a->path = strdup(path);
    a->tmp = malloc(n);
    free(target);
    if (!a->path || !a->tmp) {
        atomic_abort(a);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    path = a->path; /* the target's copy: target is freed */
    snprintf(a->tmp, n, "%s.tmp.%ld%s%s", path, (long)getpid(), *host ? "." : "", host); /* the host: PIDs are per machine */
    /* O_EXCL: never write through a link or into a file someone else made under our name */
    int fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 || !(a->fp = fdopen(fd, "wb"))) {
        int e = errno;
        if (fd >= 0) { close(fd); unlink(a->tmp); }
        nmt_fail(err, NMT_ERR_IO, "%s: cannot create temporary file '%s': %s", path, a->tmp, strerror(e));
        free(a->tmp);
        a->tmp = NULL; /* nothing of ours to remove */
        atomic_abort(a);
        return NMT_ERR_IO;
    }
    errno = 0; /* a failed write that sets no errno is then not blamed on an older error */
    return NMT_OK;
}

void atomic_abort(atomic_file *a)
{
    if (!a) return;
    if (a->fp) fclose(a->fp);
    if (a->tmp) unlink(a->tmp);
    free(a->tmp);
    free(a->path);
    memset(a, 0, sizeof *a);
}

int atomic_commit(atomic_file *a, nmt_err *err)
{
    if (!a->fp) {
        atomic_abort(a);
        return nmt_fail(err, NMT_ERR_ARG, "atomic_commit: no file open");
    }
    FILE *fp = a->fp;
    a->fp = NULL;
    int e = 0; /* the first failure's errno; EIO when the C library left none */
    if (ferror(fp)) e = errno ? errno : EIO; /* a failed fwrite: nothing since has touched errno */
    else if (fflush(fp) != 0 || fsync(fileno(fp)) != 0) e = errno ? errno : EIO;
    if (fclose(fp) != 0 && !e) e = errno ? errno : EIO;
    int rc = NMT_OK;
    if (e)
        rc = nmt_fail(err, NMT_ERR_IO, "%s: writing '%s' failed: %s", a->path, a->tmp, strerror(e));
    else if (rename(a->tmp, a->path) != 0)
        rc = nmt_fail(err, NMT_ERR_IO, "%s: cannot rename '%s' over it: %s", a->path, a->tmp, strerror(errno));
    if (rc) { atomic_abort(a); return rc; }
    free(a->tmp);
    a->tmp = NULL; /* renamed: nothing left to remove */
    if (atomic_sync_dir(a->path) != 0)
        rc = nmt_fail(err, NMT_ERR_IO, "%s: written, but syncing its directory failed: %s", a->path, strerror(errno));
    atomic_abort(a);
    return rc;
}
