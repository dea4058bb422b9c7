/* comm.h: the trainer's side of the communication seam (nmt_comm in nmt.h): the one-process
 * table used when the caller gives none, and calls that turn a transport's failure into an
 * nmt_err. The transports themselves live outside the library (src/mpi/ for Open MPI). */
#ifndef NMT_COMM_H
#define NMT_COMM_H

#include <stddef.h>

#include "nmt.h"
#include "base/real.h"

/* Rank 0 of 1: every reduction leaves its buffer as it is. */
const nmt_comm *comm_local(void);

/* The element type of a real buffer. */
#define COMM_REAL (sizeof(real) == sizeof(float) ? NMT_COMM_FLOAT : NMT_COMM_DOUBLE)

int comm_allreduce(const nmt_comm *c, void *buf, size_t n, int type, int op, nmt_err *err);
int comm_bcast(const nmt_comm *c, void *buf, size_t bytes, int root, nmt_err *err);
int comm_allgather(const nmt_comm *c, const void *in, void *out, size_t bytes, nmt_err *err);

#endif
