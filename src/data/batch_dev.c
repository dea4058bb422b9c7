/* batch_dev.c: uploading a batch (batch_dev.h). The four arrays are packed on the host in the
 * order they lie on the device, so that a batch costs one copy, whatever its shape. */
#include <string.h>

#include "backend/backend.h"
#include "data/batch_dev.h"

void batch_dev_layout(batch_dev *d, arena *a, int B, int Tx, int Ty)
{
    size_t n = (size_t)B * Tx + (size_t)B * Ty + 2 * (size_t)B;
    d->dev = arena_take(a, sizeof(int) * n);
    d->stage = arena_take_host(a, sizeof(int) * n);
    d->with_y = Ty > 0;
}

void batch_upload(const bk_ctx *x, batch *view, const batch *bt, const batch_dev *d)
{
    int B = bt->B;
    int ys = d->with_y && bt->y, yl = d->with_y && bt->ylen; /* the targets where there is room */
    size_t nx = (size_t)B * bt->Tx, ny = ys ? (size_t)B * bt->Ty : 0;
    /* packed for this batch's shape: x, y, xlen, ylen one after another */
    int *s = d->stage;
    memcpy(s, bt->x, sizeof(int) * nx);
    if (ny) memcpy(s + nx, bt->y, sizeof(int) * ny);
    memcpy(s + nx + ny, bt->xlen, sizeof(int) * B);
    if (yl) memcpy(s + nx + ny + B, bt->ylen, sizeof(int) * B);
    size_t n = nx + ny + (size_t)B * (yl ? 2 : 1);
    int *dev = d->dev;
    x->b->copy_in(dev, s, sizeof(int) * n);
    *view = *bt;
    view->dev_x = dev;
    view->dev_y = ny ? dev + nx : NULL;
    view->dev_xlen = dev + nx + ny;
    view->dev_ylen = yl ? dev + nx + ny + B : NULL;
}
