/* comm_mpi.c: nmt_comm on Open MPI (comm_mpi.h). MPI_COMM_WORLD with errors returned rather than
 * fatal, so that a transport's failure (a peer gone over TCP) becomes a message and a non-zero
 * exit. Built without MPI when the Makefile finds no Open MPI (NMT_MPI undefined): opening then
 * says so. */
#include <stdio.h>
#include <stdlib.h>

#include "mpi/comm_mpi.h"

int comm_mpi_launched(void) { return getenv("OMPI_COMM_WORLD_SIZE") != NULL; }

#ifdef NMT_MPI
#include <limits.h>

#include <mpi.h>

static int failed(int code, const char *what, char *msg)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", code);
    snprintf(msg, NMT_COMM_MSG, "%s: %.200s", what, s);
    return -1;
}

static MPI_Datatype type_of(int type)
{
    return type == NMT_COMM_FLOAT ? MPI_FLOAT : type == NMT_COMM_DOUBLE ? MPI_DOUBLE : MPI_INT64_T;
}

static size_t size_of(int type) { return type == NMT_COMM_FLOAT ? 4 : 8; }

/* MPI counts are ints: longer buffers go in pieces of 2^30 elements. */
#define PIECE ((size_t)1 << 30)

static int allreduce(void *ctx, void *buf, size_t n, int type, int op, char *msg)
{
    (void)ctx;
    for (size_t at = 0; at < n; at += PIECE) {
        int cnt = (int)(n - at < PIECE ? n - at : PIECE);
        int rc = MPI_Allreduce(MPI_IN_PLACE, (char *)buf + at * size_of(type), cnt, type_of(type),
                               op == NMT_COMM_MAX ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return failed(rc, "MPI_Allreduce", msg);
    }
    return 0;
}

static int bcast(void *ctx, void *buf, size_t bytes, int root, char *msg)
{
    (void)ctx;
    for (size_t at = 0; at < bytes; at += PIECE) {
        int cnt = (int)(bytes - at < PIECE ? bytes - at : PIECE);
        int rc = MPI_Bcast((char *)buf + at, cnt, MPI_BYTE, root, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return failed(rc, "MPI_Bcast", msg);
    }
    return 0;
}

static int allgather(void *ctx, const void *in, void *out, size_t bytes, char *msg)
{
    (void)ctx;
    if (bytes > INT_MAX) { snprintf(msg, NMT_COMM_MSG, "MPI_Allgather: %zu bytes per rank is too many", bytes); return -1; }
    int rc = MPI_Allgather(in, (int)bytes, MPI_BYTE, out, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : failed(rc, "MPI_Allgather", msg);
}

int comm_mpi_open(nmt_comm *c, nmt_err *err)
{
    int provided, rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) {
        snprintf(err->msg, sizeof err->msg, "MPI_Init failed (error %d)", rc);
        return err->code = NMT_ERR_IO;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    c->ctx = NULL;
    c->allreduce = allreduce;
    c->bcast = bcast;
    c->allgather = allgather;
    return NMT_OK;
}

void comm_mpi_close(nmt_comm *c, int abort_job)
{
    if (abort_job && c->size > 1) MPI_Abort(MPI_COMM_WORLD, 1); /* does not return */
    MPI_Finalize();
}

#else /* built without Open MPI */

int comm_mpi_open(nmt_comm *c, nmt_err *err)
{
    (void)c;
    snprintf(err->msg, sizeof err->msg, "started by mpirun, but this nmt was built without Open MPI (install libopenmpi-dev, then rebuild)");
    return err->code = NMT_ERR_ARG;
}

void comm_mpi_close(nmt_comm *c, int abort_job) { (void)c; (void)abort_job; }

#endif
