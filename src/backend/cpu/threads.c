/* threads.c: the CPU backend's threads (OpenMP): how many its loops and products use, and the
 * parallel loop (backend_ops.parallel_for). The table (cpu.c), the products of bf16 training
 * (mix_dnnl.c, one slot of buffers per thread) and the Transformer's kernels (transformer.c) all
 * ask, and the table names them: here, below the three. */
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend/cpu/cpu.h"

void cpu_set_threads(int n)
{
#ifdef _OPENMP
    omp_set_num_threads(n > 0 ? n : omp_get_num_procs());
#else
    (void)n;
#endif
}

int cpu_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* Below 2^15 elements a team costs more than it saves: waking the threads (a futex each under
 * OMP_WAIT_POLICY=PASSIVE) took longer than the loop, and a step of a small model or a beam of
 * one ran hundreds of such regions. Never inside a team: the encoder's two directions already
 * hold one thread each. Rows are independent in every loop that asks, so the answer changes no
 * bit. */
int cpu_team(long units, long elems)
{
#ifdef _OPENMP
    return units > 1 && elems >= (1L << 15) && !omp_in_parallel();
#else
    (void)units; (void)elems;
    return 0;
#endif
}

void cpu_parallel_for(long n, long grain, int nthreads, bk_body body, void *ctx)
{
    if (grain < 1) grain = 1;
    long nchunk = (n + grain - 1) / grain;
    if (nthreads <= 0) nthreads = cpu_threads();
    if (nthreads > nchunk) nthreads = (int)nchunk; /* no thread would find work */
    if (nchunk <= 1 || nthreads == 1) { /* no team to start */
        if (n > 0) body(ctx, 0, n, 0);
        return;
    }
#pragma omp parallel num_threads(nthreads)
    {
#ifdef _OPENMP
        int t = omp_get_thread_num();
#else
        int t = 0;
#endif
#pragma omp for schedule(dynamic, 1)
        for (long c = 0; c < nchunk; c++) body(ctx, c * grain, c * grain + grain < n ? c * grain + grain : n, t);
    }
}
