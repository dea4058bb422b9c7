// runtime.cc: the CUDA runtime API functions the backend calls, emulated on the host: two
// devices, device memory as host memory poisoned at allocation and tagged with its device, pinned
// host memory, streams that queue kernels, copies, memsets and events and run them when the host
// waits, and launches checked against CUDA's limits. Misuse is an error code (as CUDA returns
// it) with a message on stderr, or, where a GPU would fault, a stop (sim_die).
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <deque>
#include <map>
#include <mutex>
#include <set>

#include "simint.h"

enum { DEVICES = 2 };
static const size_t MAX_DYN_SHARED = 48 << 10; // without the opt-in attribute

struct alloc_info { size_t bytes; int device; };
static std::mutex mem_lock;
static std::map<uintptr_t, alloc_info> device_mem;
static std::map<uintptr_t, size_t> pinned; // pinned host blocks and their sizes

struct CUstream_st {
    int device;
    std::mutex m;
    std::deque<std::function<void()>> q;
    uint64_t queued = 0, done = 0;
};
struct CUevent_st {
    cudaStream_t s = NULL;
    uint64_t seq = 0;
};
static std::mutex streams_lock;
static std::set<cudaStream_t> streams;
static CUstream_st null_stream[DEVICES];
static struct null_init {
    null_init()
    {
        for (int d = 0; d < DEVICES; d++) null_stream[d].device = d;
    }
} null_init_;

static thread_local int current = 0;
static thread_local cudaError_t last = cudaSuccess;

static cudaError_t fail(cudaError_t e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static cudaError_t fail(cudaError_t e, const char *fmt, ...)
{
    fflush(stdout);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cudasim: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return last = e;
}

int sim_current_device(void) { return current; }

// ---- devices ----
cudaError_t cudaGetDeviceCount(int *n)
{
    *n = DEVICES;
    return cudaSuccess;
}
cudaError_t cudaSetDevice(int d)
{
    if (d < 0 || d >= DEVICES) return fail(cudaErrorInvalidDevice, "cudaSetDevice(%d): %d devices", d, DEVICES);
    current = d;
    return cudaSuccess;
}
cudaError_t cudaGetDevice(int *d)
{
    *d = current;
    return cudaSuccess;
}
cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last;
    last = cudaSuccess;
    return e;
}
cudaError_t cudaPeekAtLastError(void) { return last; }
const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    default: return "an error of the CUDA emulation";
    }
}
const char *cudaGetErrorName(cudaError_t e) { return cudaGetErrorString(e); }

// ---- memory: a block is tagged with the device current at its allocation ----
int sim_device_of(const void *p, size_t bytes, bool *inside)
{
    std::lock_guard<std::mutex> g(mem_lock);
    uintptr_t a = (uintptr_t)p;
    auto it = device_mem.upper_bound(a);
    if (it == device_mem.begin()) return -1;
    --it;
    if (a > it->first + it->second.bytes) return -1;
    if (inside) *inside = a + bytes <= it->first + it->second.bytes;
    return it->second.device;
}

// SIM_MEM_LIMIT (bytes in all, per device) makes an allocation beyond it fail, as a full GPU would
static size_t in_use[DEVICES];
static bool over_limit(size_t bytes)
{
    const char *l = getenv("NMT_CUDASIM_MEM_LIMIT");
    return l && in_use[current] + bytes > strtoull(l, NULL, 10);
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    std::lock_guard<std::mutex> g(mem_lock);
    if (over_limit(bytes)) return last = cudaErrorMemoryAllocation; // CUDA's call is silent
    void *m = malloc(bytes ? bytes : 1);
    if (!m) return last = cudaErrorMemoryAllocation;
    memset(m, 0xff, bytes); // poison: NaN as floats, -1 as integers
    device_mem[(uintptr_t)m] = alloc_info{bytes, current};
    in_use[current] += bytes;
    *p = m;
    return cudaSuccess;
}

static void device_drain(int d);
cudaError_t cudaFree(void *p)
{
    if (!p) return cudaSuccess; // what programs call to make the context
    device_drain(current);      // cudaFree waits for the device, as CUDA's does
    std::lock_guard<std::mutex> g(mem_lock);
    auto it = device_mem.find((uintptr_t)p);
    if (it == device_mem.end()) return fail(cudaErrorInvalidValue, "cudaFree(%p): not a device block", p);
    in_use[it->second.device] -= it->second.bytes;
    device_mem.erase(it);
    free(p);
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned flags)
{
    (void)flags;
    void *m = malloc(bytes ? bytes : 1);
    if (!m) return last = cudaErrorMemoryAllocation;
    memset(m, 0xff, bytes);
    std::lock_guard<std::mutex> g(mem_lock);
    pinned[(uintptr_t)m] = bytes;
    *p = m;
    return cudaSuccess;
}
cudaError_t cudaFreeHost(void *p)
{
    std::lock_guard<std::mutex> g(mem_lock);
    if (!pinned.erase((uintptr_t)p)) return fail(cudaErrorInvalidValue, "cudaFreeHost(%p): not pinned memory", p);
    free(p);
    return cudaSuccess;
}
static bool is_pinned(const void *p)
{
    std::lock_guard<std::mutex> g(mem_lock);
    auto it = pinned.upper_bound((uintptr_t)p);
    if (it == pinned.begin()) return false;
    --it;
    return (uintptr_t)p < it->first + it->second;
}

// ---- streams: a queue each, run by the host thread that waits ----
static cudaStream_t resolve(cudaStream_t s)
{
    if (s == NULL || s == cudaStreamLegacy || s == cudaStreamPerThread) return &null_stream[current];
    return s;
}
int sim_stream_device(cudaStream_t s) { return resolve(s)->device; }
static bool known(cudaStream_t s)
{
    if (s == NULL || s == cudaStreamLegacy || s == cudaStreamPerThread) return true;
    std::lock_guard<std::mutex> g(streams_lock);
    return streams.count(s) != 0;
}

void sim_enqueue(cudaStream_t s, std::function<void()> f)
{
    s = resolve(s);
    std::lock_guard<std::mutex> g(s->m);
    s->q.push_back(std::move(f));
    s->queued++;
}
// runs the stream's work up to its upto-th operation
static void stream_drain(cudaStream_t s, uint64_t upto)
{
    std::lock_guard<std::mutex> g(s->m);
    while (s->done < upto && !s->q.empty()) {
        std::function<void()> f = std::move(s->q.front());
        s->q.pop_front();
        f();
        s->done++;
    }
}
static void device_drain(int d)
{
    std::vector<cudaStream_t> all;
    {
        std::lock_guard<std::mutex> g(streams_lock);
        for (cudaStream_t s : streams)
            if (s->device == d) all.push_back(s);
    }
    all.push_back(&null_stream[d]);
    for (cudaStream_t s : all) stream_drain(s, UINT64_MAX);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    (void)flags;
    cudaStream_t n = new CUstream_st;
    n->device = current;
    std::lock_guard<std::mutex> g(streams_lock);
    streams.insert(n);
    *s = n;
    return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, 0); }
cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!s || !known(s)) return fail(cudaErrorInvalidResourceHandle, "cudaStreamDestroy: not a stream");
    stream_drain(s, UINT64_MAX); // its work still completes, as CUDA's does
    std::lock_guard<std::mutex> g(streams_lock);
    streams.erase(s);
    delete s;
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (!known(s)) return fail(cudaErrorInvalidResourceHandle, "cudaStreamSynchronize: not a stream");
    stream_drain(resolve(s), UINT64_MAX);
    return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void)
{
    device_drain(current);
    return cudaSuccess;
}

// ---- events: a mark in a stream's queue ----
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
    (void)flags;
    *e = new CUevent_st;
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    delete e;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    if (!known(s)) return fail(cudaErrorInvalidResourceHandle, "cudaEventRecord: not a stream");
    s = resolve(s);
    std::lock_guard<std::mutex> g(s->m);
    s->q.push_back([] {});
    e->s = s;
    e->seq = ++s->queued;
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    if (e->s) stream_drain(e->s, e->seq); // never recorded: nothing to wait for
    return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e)
{
    if (!e->s) return cudaSuccess;
    std::lock_guard<std::mutex> g(e->s->m);
    return e->s->done >= e->seq ? cudaSuccess : cudaErrorNotReady;
}

// ---- copies and sets: device memory must be the stream's device's, and the range inside it ----
static cudaError_t check_range(const char *op, const void *p, size_t bytes, cudaStream_t s)
{
    bool inside = false;
    int d = sim_device_of(p, bytes, &inside);
    if (d < 0) return fail(cudaErrorInvalidValue, "%s: %p is not device memory", op, p);
    if (!inside)
        return fail(cudaErrorInvalidValue, "%s: %zu bytes at %p run past the end of their block", op, bytes, p);
    int sd = sim_stream_device(s);
    if (d != sd)
        return fail(cudaErrorInvalidValue, "%s: memory of device %d from a stream of device %d", op, d, sd);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t bytes, cudaStream_t s)
{
    if (!known(s)) return fail(cudaErrorInvalidResourceHandle, "cudaMemsetAsync: not a stream");
    cudaError_t e = check_range("cudaMemsetAsync", p, bytes, s);
    if (e != cudaSuccess) return e;
    sim_enqueue(s, [=] { memset(p, v, bytes); });
    return cudaSuccess;
}

// pinned host memory is read or written when the stream gets there, pageable memory now (the
// stream's work before it done first), as CUDA does with each
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s)
{
    if (!known(s)) return fail(cudaErrorInvalidResourceHandle, "cudaMemcpyAsync: not a stream");
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice)
        return fail(cudaErrorInvalidValue, "cudaMemcpyAsync: copy kind %d is not emulated", (int)kind);
    cudaError_t e = cudaSuccess;
    if (kind != cudaMemcpyHostToDevice) e = check_range("cudaMemcpyAsync (source)", src, bytes, s);
    if (e == cudaSuccess && kind != cudaMemcpyDeviceToHost)
        e = check_range("cudaMemcpyAsync (destination)", dst, bytes, s);
    if (e != cudaSuccess) return e;
    const void *host = kind == cudaMemcpyHostToDevice ? src : kind == cudaMemcpyDeviceToHost ? dst : NULL;
    sim_enqueue(s, [=] { memcpy(dst, src, bytes); });
    if (host && !is_pinned(host)) stream_drain(resolve(s), UINT64_MAX);
    return cudaSuccess;
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, NULL);
    if (e == cudaSuccess) stream_drain(resolve(NULL), UINT64_MAX);
    return e;
}

// ---- launches ----
static cudaError_t check_config(const char *name, const sim_cfg &c)
{
    const dim3 &g = c.grid, &b = c.block;
    unsigned long threads = (unsigned long)b.x * b.y * b.z;
    if (!threads || b.x > 1024 || b.y > 1024 || b.z > 64 || threads > 1024)
        return fail(cudaErrorInvalidConfiguration, "launch of %s: a block of %ux%ux%u threads (at most 1024)", name,
                    b.x, b.y, b.z);
    if (!g.x || !g.y || !g.z || g.x > 2147483647u || g.y > 65535 || g.z > 65535)
        return fail(cudaErrorInvalidConfiguration, "launch of %s: a grid of %ux%ux%u blocks", name, g.x, g.y, g.z);
    if (c.shared > MAX_DYN_SHARED)
        return fail(cudaErrorInvalidConfiguration, "launch of %s: %zu bytes of dynamic shared memory (at most %zu)",
                    name, c.shared, MAX_DYN_SHARED);
    return cudaSuccess;
}

void sim_submit(const char *name, const sim_cfg &c, std::function<void()> body, const void *const *ptrs, int n)
{
    if (check_config(name, c) != cudaSuccess) return;
    if (!known(c.stream)) {
        fail(cudaErrorInvalidResourceHandle, "launch of %s: not a stream", name);
        return;
    }
    int sd = sim_stream_device(c.stream);
    if (sd != current) {
        fail(cudaErrorInvalidResourceHandle, "launch of %s on a stream of device %d from device %d", name, sd, current);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (!ptrs[i]) continue;
        int d = sim_device_of(ptrs[i], 0, NULL);
        if (d < 0 && !is_pinned(ptrs[i]))
            sim_die("launch of %s: pointer argument %d (%p) is host memory, which the device cannot read", name, i + 1,
                    ptrs[i]);
        if (d >= 0 && d != sd)
            sim_die("launch of %s on device %d: pointer argument %d is memory of device %d", name, sd, i + 1, d);
    }
    sim_enqueue(c.stream, [name, c, body] { sim_run_grid(name, c.grid, c.block, c.shared, body); });
}
