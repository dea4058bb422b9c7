/* bench_overlap.c: does starting the sum of the output layer's gradients early pay? An MPI
 * program for scripts/bench_mpi.sh (mpirun -np N). Every rank runs forward and backward on its
 * share of a synthetic minibatch (random words, one length), and each update sums the gradients
 * across ranks in one of two ways:
 *   blocking: backward, then MPI_Allreduce of the readout's gradients and of the rest;
 *   early:    MPI_Iallreduce of a readout-sized buffer started BEFORE backward, waited for after
 *             it, then the rest. The real readout's gradients are complete only after its own
 *             backward (the first phase), so this is the most an early start could gain.
 * Open MPI moves a non-blocking reduction forward only inside MPI calls unless a progress thread
 * or an offloading network does it, which is what this measures on a given machine. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/rng.h"
#include "nn/model.h"
#include "nn/net.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

static int arg(int argc, char **argv, const char *name, int def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], name)) return atoi(argv[i + 1]);
    return def;
}

static void sum(real *g, size_t n)
{
    MPI_Allreduce(MPI_IN_PLACE, g, (int)n, sizeof(real) == 4 ? MPI_FLOAT : MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nmt_config c = nmt_config_default();
    c.emb = arg(argc, argv, "--emb", 256);
    c.hid = arg(argc, argv, "--hid", 256);
    c.att = arg(argc, argv, "--att", 256);
    c.maxout = arg(argc, argv, "--maxout", 256);
    c.src_vocab = c.tgt_vocab = arg(argc, argv, "--vocab", 10000);
    int B = arg(argc, argv, "--batch", 80) / size, L = arg(argc, argv, "--len", 25), iters = arg(argc, argv, "--iters", 10);
    TX->b->set_threads(arg(argc, argv, "--threads", 1));
    param_table pt;
    param_table_build(&pt, &c);
    real *P = calloc(pt.total, sizeof(real)), *G = calloc(pt.total, sizeof(real));
    size_t ro = param_table_find(&pt, "out_U")->offset, nro = pt.total - ro; /* the readout: the arena's tail */
    const tensor_info *Es = param_table_find(&pt, "Es"), *Et = param_table_find(&pt, "Et");
    size_t es_end = Es->offset + (size_t)Es->rows * Es->cols, et = Et->offset, et_end = et + (size_t)Et->rows * Et->cols;
    real *early = calloc(nro, sizeof(real));
    int *x = malloc(sizeof(int) * B * L), *y = malloc(sizeof(int) * B * L), *xl = malloc(sizeof(int) * B), *yl = malloc(sizeof(int) * B);
    rng r;
    rng_seed(&r, 1 + rank);
    params p, g;
    net_ws ws;
    memset(&ws, 0, sizeof ws);
    if (!P || !G || !early || !x || !y || !xl || !yl || params_init(&pt, P, c.hid, &r, NMT_INIT_PAPER) ||
        net_ws_reserve(TX, &ws, &c, B, L, L, NULL)) {
        fprintf(stderr, "bench_overlap: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    params_point(&p, &pt, P);
    params_point(&g, &pt, G);
    for (int i = 0; i < B * L; i++) { x[i] = 2 + (int)rng_below(&r, c.src_vocab - 2); y[i] = 2 + (int)rng_below(&r, c.tgt_vocab - 2); }
    for (int b = 0; b < B; b++) { xl[b] = yl[b] = L; x[(L - 1) * B + b] = y[(L - 1) * B + b] = 0; }
    batch bt = {.B = B, .Tx = L, .Ty = L, .x = x, .y = y, .xlen = xl, .ylen = yl};
    double t[3] = {0, 0, 0}; /* backward alone, blocking, early */
    for (int mode = 0; mode < 3; mode++)
        for (int it = -1; it < iters; it++) { /* one untimed warm-up each */
            net_forward(TX, &ws, &c, &p, &bt, NULL);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Request req;
            if (mode == 2) MPI_Iallreduce(MPI_IN_PLACE, early, (int)nro, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
            net_backward(TX, &ws, &c, &p, &g, &bt, (real)1 / (B * size));
            if (mode == 1) sum(G + ro, nro);
            if (mode == 2) MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (mode) { sum(G + es_end, et - es_end); sum(G + et_end, ro - et_end); } /* dense rest; rows as in training skipped */
            if (it >= 0) t[mode] += MPI_Wtime() - t0;
            memset(G, 0, sizeof(real) * pt.total);
        }
    MPI_Allreduce(MPI_IN_PLACE, t, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ranks %d, %d pairs of %d words each, readout %.1f MB of %.1f MB: backward alone %.4f s, "
               "backward + blocking sums %.4f s, early readout sum %.4f s per update (early/blocking %.3f)\n",
               size, B, L, 4e-6 * nro, 4e-6 * pt.total, t[0] / iters, t[1] / iters, t[2] / iters, t[2] / t[1]);
    net_ws_free(&ws);
    free(P); free(G); free(early); free(x); free(y); free(xl); free(yl);
    MPI_Finalize();
    return 0;
}
