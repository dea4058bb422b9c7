/* arena.h: two-pass layout of a workspace inside one allocation. A module's layout function
 * calls arena_take for each buffer: the first pass (base NULL) only sums the sizes, the second
 * hands out aligned slices of the block. Nothing is allocated while a batch runs. */
#ifndef NMT_ARENA_H
#define NMT_ARENA_H

#include <stddef.h>

/* A layout in two blocks: the device's (base, what kernels read and write) and the host's
 * (hbase: index arrays and masks the host builds, and the results it reads back, each staged
 * there and crossing by backend copies). */
typedef struct arena { char *base; size_t used; char *hbase; size_t hused; } arena;

/* n bytes, 64-byte aligned (a cache line; also what AVX-512 loads like). NULL in the counting pass. */
static inline void *arena_take(arena *a, size_t n)
{
    void *p = a->base ? a->base + a->used : NULL;
    a->used += (n + 63) & ~(size_t)63;
    return p;
}

/* the same in the host block */
static inline void *arena_take_host(arena *a, size_t n)
{
    void *p = a->hbase ? a->hbase + a->hused : NULL;
    a->hused += (n + 63) & ~(size_t)63;
    return p;
}

#include "nmt.h"
#include "backend/backend.h"

/* A workspace in one device block and one host block, laid out for dimensions up to cap[0..2]
 * by its layout function, which sizes them (a's bases NULL) or points its buffers into them. */
typedef void (*ws_layout_fn)(void *ws, arena *a, const nmt_config *c, const int *dims);

typedef struct ws_block {
    void *base, *hbase;
    size_t bytes, hbytes;
    int cap[3];
    const struct backend_ops *b; /* the backend base came from, which frees it */
} ws_block;

/* Makes blk cover want[0..2]: re-lays out the existing blocks when they are large enough, else
 * allocates ones covering both the old capacity and want (so alternating shapes settle after a
 * few batches). what names the workspace in the error. */
int ws_reserve(const bk_ctx *x, ws_block *blk, const int *want, ws_layout_fn layout, void *ws, const nmt_config *c, const char *what,
               nmt_err *err);
void ws_block_free(ws_block *blk);

#endif
