/* paths.h: guards around the files a command writes and the files it must read whole: no output
 * may be one of its inputs (nor another output), a model is a regular file (never a FIFO to wait
 * on), and one training run at a time per model (a lock file). */
#ifndef NMT_PATHS_H
#define NMT_PATHS_H

#include "nmt.h"

typedef struct path_role {
    const char *path;   /* NULL or "-" (standard input or output): skipped */
    const char *role;   /* for messages: "the model", "the source corpus" ... */
} path_role;

/* NMT_ERR_ARG when an output is the same file as an input or as another output: the same
 * device and inode when both exist (links and other spellings included), else the same name
 * once the directory is resolved (an output not written yet). An input "-" is standard input:
 * the file behind descriptor 0 when it is a regular file (`-o in.en < in.en`). The message names
 * both roles. Every command that writes a file checks its outputs here, before it writes. */
int path_check_outputs(const path_role *in, int nin, const path_role *out, int nout, nmt_err *err);

/* "a FIFO", "a directory", "a device" or "a socket": what a file of this st_mode is, for the
 * messages that refuse one that is not a regular file. */
const char *path_kind(unsigned mode);
/* The check before a file that must be a regular file (a model, a checkpoint, a font) is opened:
 * NMT_ERR_IO "PATH: not a regular file (a FIFO)" for anything else, without opening it (opening a
 * FIFO waits for a writer; opening and closing it kills the writer with SIGPIPE). */
int path_check_regular(const char *path, nmt_err *err);
/* path opened read-only after path_check_regular, without ever waiting on a FIFO put there
 * meanwhile (O_NONBLOCK, then fstat checked again): the descriptor in *fd, its size in *size. */
int path_open_regular(const char *path, int *fd, size_t *size, nmt_err *err);
/* The whole of the regular file path (path_open_regular) into *buf (malloc'ed, NUL-terminated,
 * the caller's to free), its length in *len. */
int path_read_all(const char *path, char **buf, size_t *len, nmt_err *err);

/* Takes an exclusive lock on lock_path (created if needed) for as long as *fd stays open:
 * NMT_ERR_IO with "... is locked by another process" when another holder has it. */
int path_lock(const char *lock_path, const char *what, int *fd, nmt_err *err);
/* path with every link and "." or ".." resolved (realpath), or its directory resolved when it
 * does not exist yet, or as given when neither does: one file, one name (a lock keyed by it). */
void path_resolve(const char *path, char *out, size_t cap);
/* Locks the file at path itself (its inode) while *fd stays open, so that a run reaching it
 * through another name (a hard link, which path_resolve cannot see) is refused; *fd -1 when path
 * does not exist. NMT_ERR_IO naming path when another process holds it. */
int path_lock_inode(const char *path, int *fd, nmt_err *err);
/* Removes the lock file and releases the lock (fd < 0: nothing to do). */
void path_unlock(const char *lock_path, int fd);

#endif
