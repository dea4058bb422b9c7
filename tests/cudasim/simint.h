// simint.h: what the CUDA emulation's own files share (tests/cudasim): running a grid on this host
// thread (fiber.cc), the fatal message, and the stream queue that cuBLAS's stand-in also uses.
#ifndef NMT_CUDASIM_SIMINT_H
#define NMT_CUDASIM_SIMINT_H

#include "sim.h"

// runs every block of the grid, one after another, each block's threads as fibers
void sim_run_grid(const char *name, dim3 grid, dim3 block, size_t shared, const std::function<void()> &body);
// the emulation found a fault no program could survive: says what, then aborts
[[noreturn]] void sim_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// the device memory p lies in (-1: none), and whether [p, p + bytes) stays inside its block
int sim_device_of(const void *p, size_t bytes, bool *inside);
// the device a stream belongs to (the null stream: the calling thread's current device)
int sim_stream_device(cudaStream_t s);
// queues f on the stream, run in order when the host waits on it
void sim_enqueue(cudaStream_t s, std::function<void()> f);
int sim_current_device(void);

#endif
