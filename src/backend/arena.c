/* arena.c: growing a workspace block (arena.h): the one place where batch-shaped workspaces are
 * (re)allocated, outside any per-step loop: the device part in memory the compute backend hands
 * out, the host part from the C library. */
#include <stdlib.h>
#include <string.h>

#include "backend/arena.h"
#include "backend/backend.h"
#include "base/err.h"

static void lay(void *ws, ws_layout_fn layout, const nmt_config *c, ws_block *blk)
{
    arena a = {blk->base, 0, blk->hbase, 0};
    layout(ws, &a, c, blk->cap);
}

int ws_reserve(const bk_ctx *x, ws_block *blk, const int *want, ws_layout_fn layout, void *ws, const nmt_config *c, const char *what,
               nmt_err *err)
{
    int fits = blk->base != NULL;
    for (int i = 0; i < 3; i++) fits &= want[i] <= blk->cap[i];
    if (fits) {
        lay(ws, layout, c, blk);
        return NMT_OK;
    }
    int dims[3];
    for (int i = 0; i < 3; i++) dims[i] = blk->base && blk->cap[i] > want[i] ? blk->cap[i] : want[i];
    arena size = {0};
    layout(ws, &size, c, dims);
    const backend_ops *bk = x->b;
    void *p = bk->alloc(size.used);
    void *h = calloc(1, size.hused ? size.hused : 1);
    if (!p || !h) {
        bk->free(p);
        free(h);
        return nmt_fail(err, NMT_ERR_NOMEM, "cannot allocate %.1f MB of %s workspace for %d x %d x %d",
                        (size.used + size.hused) / 1e6, what, dims[0], dims[1], dims[2]);
    }
    if (blk->b) blk->b->free(blk->base);
    free(blk->hbase);
    *blk = (ws_block){p, h, size.used, size.hused, {dims[0], dims[1], dims[2]}, bk};
    lay(ws, layout, c, blk);
    return NMT_OK;
}

void ws_block_free(ws_block *blk)
{
    if (!blk) return;
    if (blk->b) blk->b->free(blk->base);
    free(blk->hbase);
    memset(blk, 0, sizeof *blk);
}
