/* atomic.h: replacing a file all at once. Writers get a temporary beside the target
 * (TARGET.tmp.PID.HOST); commit syncs it, renames it over the target and syncs the directory, so a
 * reader sees the old file or the new one, never a part. Used for model files, checkpoints, the
 * lexicon, training logs, plots and the report's figure files (TSV, SVG, PNG, PDF). */
#ifndef NMT_ATOMIC_H
#define NMT_ATOMIC_H

#include <stdio.h>

#include "nmt.h"

typedef struct atomic_file {
    FILE *fp;        /* write here (binary); NULL once committed or aborted */
    char *path;      /* the target */
    char *tmp;       /* the temporary: TARGET.tmp.PID.HOST */
} atomic_file;

/* Removes TARGET.tmp.PID.HOST files (TARGET.tmp.PID of older builds) left by processes of this
 * machine that no longer run (a save killed half way), then creates this process's temporary. On failure nothing is left and a->fp is NULL.
 * A symbolic link at path is followed: the file it names is the target, and the link stays. */
int atomic_open(atomic_file *a, const char *path, nmt_err *err);
/* Checks every write (the stream's error flag), flushes, fsyncs, closes, renames over the
 * target and fsyncs its directory. On any failure the temporary is removed and an existing
 * target is left untouched. Releases a either way. */
int atomic_commit(atomic_file *a, nmt_err *err);
/* Gives up: closes and removes the temporary, releases a. Accepts an unopened (zeroed) a. */
void atomic_abort(atomic_file *a);

/* The removal atomic_open does first, on its own: the number of stale temporaries removed. */
int atomic_remove_stale(const char *path);

/* fsync of the directory holding path, so that a rename in it survives a crash; 0 or -1 with
 * errno (a file system that cannot sync directories counts as success). */
int atomic_sync_dir(const char *path);

#endif
