/* arena.c: growing a workspace block (arena.h): the one place where batch-shaped workspaces are
 * (re)allocated, outside any per-step loop, in memory the compute backend hands out. */
#include <string.h>

#include "backend/backend.h"
#include "base/arena.h"
#include "base/err.h"

int ws_reserve(ws_block *blk, const int *want, ws_layout_fn layout, void *ws, const nmt_config *c, const char *what,
               nmt_err *err)
{
    int fits = blk->base != NULL;
    for (int i = 0; i < 3; i++) fits &= want[i] <= blk->cap[i];
    if (fits) {
        layout(ws, blk->base, c, blk->cap);
        return NMT_OK;
    }
    int dims[3];
    for (int i = 0; i < 3; i++) dims[i] = blk->base && blk->cap[i] > want[i] ? blk->cap[i] : want[i];
    size_t bytes = layout(ws, NULL, c, dims);
    const backend_ops *bk = backend();
    void *p = bk->alloc(bytes);
    if (!p)
        return nmt_fail(err, NMT_ERR_NOMEM, "cannot allocate %.1f MB of %s workspace for %d x %d x %d", bytes / 1e6, what,
                        dims[0], dims[1], dims[2]);
    bk->free(blk->base);
    blk->base = p;
    blk->bytes = bytes;
    memcpy(blk->cap, dims, sizeof dims);
    layout(ws, blk->base, c, blk->cap);
    return NMT_OK;
}

void ws_block_free(ws_block *blk)
{
    if (!blk) return;
    backend()->free(blk->base);
    memset(blk, 0, sizeof *blk);
}
