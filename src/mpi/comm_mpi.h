/* comm_mpi.h: the nmt program's communication table (nmt_comm, nmt.h) on Open MPI, for
 * `mpirun -np N nmt train ...`. Linked into the program only: libnmt has no MPI in it. */
#ifndef NMT_COMM_MPI_H
#define NMT_COMM_MPI_H

#include "nmt.h"

/* Whether this process was started by an MPI launcher (mpirun sets OMPI_COMM_WORLD_SIZE in
 * every rank's environment): only then is MPI initialised at all. */
int comm_mpi_launched(void);
/* Initialises MPI and fills c with this rank of MPI_COMM_WORLD; NMT_ERR_ARG when the program
 * was built without Open MPI. */
int comm_mpi_open(nmt_comm *c, nmt_err *err);
/* Ends MPI: a clean finish, or with abort_job set, the whole job ended with status 1 (a rank's
 * own failure leaves the other ranks waiting for it inside a collective call). */
void comm_mpi_close(nmt_comm *c, int abort_job);

#endif
