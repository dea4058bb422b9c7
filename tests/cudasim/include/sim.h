// sim.h: the device side of the CUDA emulation, for the backend's kernels compiled by g++: the
// qualifiers, threadIdx and friends of the fiber that runs, barriers, warp collectives, atomics,
// and the launch that tests/cudasim/rewrite.py puts where the source has K<<<g, b, sh, st>>>(...).
#ifndef NMT_CUDASIM_SIM_H
#define NMT_CUDASIM_SIM_H

// the toolkit's host_defines.h leaves these alone when they come first, and where it came first
// (cublas_v2.h included before this) they are replaced
#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __shared__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
// one block runs at a time on a host thread, so a thread-local static is the block's
#define __shared__ static thread_local

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <functional>
#include <tuple>
#include <type_traits>

// ---- the CUDA thread now running (its fiber's) ----
struct sim_ctx {
    uint3 tid, bid;
    dim3 bdim, gdim;
    void *dyn_shared;
};
extern thread_local sim_ctx *sim_cur;
#define threadIdx (sim_cur->tid)
#define blockIdx (sim_cur->bid)
#define blockDim (sim_cur->bdim)
#define gridDim (sim_cur->gdim)
// what rewrite.py makes of `extern __shared__ T name[];`
#define SIM_DYN_SHARED(T, name) T *name = (T *)sim_cur->dyn_shared

// ---- barriers and warp collectives: the fiber waits until its partners arrive ----
void __syncthreads(void);
int __syncthreads_or(int pred);
unsigned __ballot_sync(unsigned mask, int pred);
uint64_t sim_shfl_xor(unsigned mask, uint64_t bits, int lane_mask, int width);
template <class T> static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32)
{
    static_assert(sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
    uint64_t b = 0;
    memcpy(&b, &v, sizeof v);
    b = sim_shfl_xor(mask, b, lane_mask, width);
    T r;
    memcpy(&r, &b, sizeof r);
    return r;
}

// ---- intrinsics: fibers never preempt each other, so an atomic is a plain update ----
template <class T> static inline T atomicAdd(T *p, T v)
{
    T old = *p;
    *p = old + v;
    return old;
}
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline unsigned __float_as_uint(float x)
{
    unsigned u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static inline float __uint_as_float(unsigned u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

// ---- launches ----
struct sim_cfg {
    dim3 grid, block;
    size_t shared;
    cudaStream_t stream;
    sim_cfg(dim3 g, dim3 b, size_t sh = 0, cudaStream_t st = 0) : grid(g), block(b), shared(sh), stream(st) {}
};
// checks the configuration and the pointers (each a device's memory, of the stream's device) and
// queues body on the stream; a bad one is the launch's error (cudaGetLastError)
void sim_submit(const char *name, const sim_cfg &c, std::function<void()> body, const void *const *ptrs, int n);

template <class A> static inline void sim_ptr_of(const void **ptrs, int *n, const A &a)
{
    if constexpr (std::is_pointer_v<A>) ptrs[(*n)++] = (const void *)a;
}
// the arguments are copied now, as a launch does; each thread calls the kernel with its own copies
template <class F, class... A> void sim_launch(const char *name, sim_cfg c, F f, A... a)
{
    const void *ptrs[sizeof...(A) + 1];
    int n = 0;
    (sim_ptr_of(ptrs, &n, a), ...);
    auto args = std::make_tuple(a...);
    sim_submit(name, c, [f, args]() { std::apply(f, args); }, ptrs, n);
}

#endif
