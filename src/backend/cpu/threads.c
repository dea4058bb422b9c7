/* threads.c: the CPU backend's threads (OpenMP): how many its loops and products use. The table
 * (cpu.c) and the products of bf16 training (mix_dnnl.c, one slot of buffers per thread) both ask,
 * and the table names those products: here, below the two. */
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
