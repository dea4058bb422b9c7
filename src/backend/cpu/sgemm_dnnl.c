/* sgemm_dnnl.c: the FP32 products through oneDNN's matmul instead of OpenBLAS, when NMT_GEMM=onednn
 * (blas.c asks). One primitive per (transposes, beta) with every dimension and stride given at run
 * time, as for bf16 training (mix_dnnl.c). Why: on two threads it runs the per-step products of
 * SMALL training 1.6-1.9x faster than OpenBLAS (docs/results/speed.md, "FP32 kernels"). */
#include <pthread.h>
#include <stdlib.h>

#include "backend/cpu/cpu.h"
#include "backend/cpu/dnnl_cpu.h"
#include "base/err.h"

#ifndef NMT_REAL_DOUBLE
/* A thread's own stream, primitives [ta][tb][beta] (made at their first use) and memory objects
 * of A, B and C: oneDNN runs one primitive from many threads, but the memory objects carry the
 * data pointers of one call. Made at the thread's first product; freed when the thread ends (a
 * library user's threads may come and go). Those of threads still running at exit stay, listed in
 * `all`: freeing them from an atexit handler ran after oneDNN's own globals were gone, and
 * corrupted the heap on some exits. */
typedef struct sg_slot {
    dnnl_stream_t strm;
    dnnl_primitive_t mm[2][2][2];
    dnnl_cpu_mems mem[3];
    struct sg_slot *next;
} sg_slot;

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;
static sg_slot *all; /* every live slot */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;

static void slot_free(sg_slot *s)
{
    for (int k = 0; k < 8; k++) dnnl_primitive_destroy(s->mm[k >> 2][k >> 1 & 1][k & 1]);
    for (int k = 0; k < 3; k++) dnnl_cpu_mems_free(&s->mem[k]);
    dnnl_stream_destroy(s->strm);
    free(s);
}

/* a thread ends: its slot */
static void slot_end(void *p)
{
    int found = 0;
    pthread_mutex_lock(&all_lock);
    for (sg_slot **at = &all; *at; at = &(*at)->next)
        if (*at == p) {
            *at = ((sg_slot *)p)->next;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&all_lock);
    if (found) slot_free(p);
}

static void key_make(void) { key_ok = !pthread_key_create(&key, slot_end); }

static sg_slot *slot(void)
{
    pthread_once(&key_once, key_make);
    if (!key_ok) return NULL;
    sg_slot *s = pthread_getspecific(key);
    if (s) return s;
    dnnl_engine_t eng = dnnl_cpu_engine();
    if (!eng || !(s = calloc(1, sizeof *s))) return NULL;
    if (dnnl_stream_create(&s->strm, eng, dnnl_stream_default_flags) != dnnl_success || pthread_setspecific(key, s)) {
        dnnl_stream_destroy(s->strm);
        free(s);
        return NULL;
    }
    pthread_mutex_lock(&all_lock);
    s->next = all;
    all = s;
    pthread_mutex_unlock(&all_lock);
    return s;
}

int cpu_gemm_dnnl_live(void)
{
    int n = 0;
    pthread_mutex_lock(&all_lock);
    for (sg_slot *s = all; s; s = s->next) n++;
    pthread_mutex_unlock(&all_lock);
    return n;
}

int cpu_gemm_dnnl(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
                  real *C, int ldc)
{
    sg_slot *s = beta == 0 || beta == 1 ? slot() : NULL;
    if (!s) return -1;
    ta = ta != 0, tb = tb != 0;
    int b1 = beta != 0;
    dnnl_primitive_t *p = &s->mm[ta][tb][b1];
    dnnl_status_t st = *p ? dnnl_success : dnnl_cpu_matmul_any(p, dnnl_f32, ta, tb, b1);
    dnnl_memory_t a = NULL, b = NULL, c = NULL;
    if (st == dnnl_success) st = dnnl_cpu_mem(&s->mem[0], dnnl_f32, M, K, ta ? 1 : lda, ta ? lda : 1, (void *)A, &a);
    if (st == dnnl_success) st = dnnl_cpu_mem(&s->mem[1], dnnl_f32, K, N, tb ? 1 : ldb, tb ? ldb : 1, (void *)B, &b);
    if (st == dnnl_success) st = dnnl_cpu_mem(&s->mem[2], dnnl_f32, M, N, ldc, 1, C, &c);
    if (st != dnnl_success) return -1; /* nothing written yet: OpenBLAS does this one */
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}};
    st = dnnl_primitive_execute(*p, s->strm, 3, args);
    if (st == dnnl_success) st = dnnl_stream_wait(s->strm);
    NMT_ASSERT(st == dnnl_success); /* C may be half written: no way back to OpenBLAS */
    return 0;
}
#else
int cpu_gemm_dnnl_live(void) { return 0; }

int cpu_gemm_dnnl(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
                  real *C, int ldc)
{
    (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C, (void)ldc;
    return -1;
}
#endif
