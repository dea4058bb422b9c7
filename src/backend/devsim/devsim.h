/* devsim.h: the simulated device, a backend that runs the CPU's kernels on memory the host cannot
 * touch. Its blocks are handed out as tagged addresses that fault on any dereference outside the
 * backend, and each kernel call checks its pointer arguments, so that a layer which reads or
 * writes model memory on the host, or hands a kernel a host array, fails under it at once. It
 * counts launches and bytes copied: what a real device would pay in latency. */
#ifndef NMT_DEVSIM_H
#define NMT_DEVSIM_H

#include "backend/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const backend_ops devsim_backend;

/* What the backend has counted since the process started. The marks are the layers' milestones
 * (enum bk_mark): what is counted between the first and the last mark of one kind, divided by the
 * marks between them, is the cost of one update or one search step. */
typedef struct devsim_span {
    unsigned long long marks;                    /* marks of this kind */
    unsigned long long launches[2], bytes_in[2], bytes_out[2]; /* the totals at the first and last */
} devsim_span;

typedef struct devsim_stats {
    unsigned long long launches, bytes_in, bytes_out, allocs, live_bytes, peak_bytes;
    devsim_span span[BK_MARK_COUNT];
} devsim_stats;

void devsim_get_stats(devsim_stats *s);

/* 1 when p is memory of this backend (a tagged address inside a live block) */
int devsim_owns(const void *p);

#ifdef __cplusplus
}
#endif

#endif
