/* comm.c: the one-process communication table and the checked calls through any table
 * (comm.h). A transport's message becomes the error's, prefixed with the rank that saw it. */
#include <string.h>

#include "base/err.h"
#include "train/comm.h"

static int local_allreduce(void *ctx, void *buf, size_t n, int type, int op, char *msg)
{
    (void)ctx; (void)buf; (void)n; (void)type; (void)op; (void)msg;
    return 0;
}

static int local_bcast(void *ctx, void *buf, size_t bytes, int root, char *msg)
{
    (void)ctx; (void)buf; (void)bytes; (void)root; (void)msg;
    return 0;
}

static int local_allgather(void *ctx, const void *in, void *out, size_t bytes, char *msg)
{
    (void)ctx; (void)msg;
    memmove(out, in, bytes);
    return 0;
}

const nmt_comm *comm_local(void)
{
    static const nmt_comm c = {0, 1, NULL, local_allreduce, local_bcast, local_allgather};
    return &c;
}

static int failed(const nmt_comm *c, const char *what, const char *msg, nmt_err *err)
{
    return nmt_fail(err, NMT_ERR_IO, "rank %d of %d: %s failed: %s", c->rank, c->size, what, msg[0] ? msg : "(no message)");
}

int comm_allreduce(const nmt_comm *c, void *buf, size_t n, int type, int op, nmt_err *err)
{
    char msg[NMT_COMM_MSG] = "";
    return c->allreduce(c->ctx, buf, n, type, op, msg) ? failed(c, "summing across ranks", msg, err) : NMT_OK;
}

int comm_bcast(const nmt_comm *c, void *buf, size_t bytes, int root, nmt_err *err)
{
    char msg[NMT_COMM_MSG] = "";
    return c->bcast(c->ctx, buf, bytes, root, msg) ? failed(c, "a broadcast", msg, err) : NMT_OK;
}

int comm_allgather(const nmt_comm *c, const void *in, void *out, size_t bytes, nmt_err *err)
{
    char msg[NMT_COMM_MSG] = "";
    return c->allgather(c->ctx, in, out, bytes, msg) ? failed(c, "gathering from every rank", msg, err) : NMT_OK;
}
