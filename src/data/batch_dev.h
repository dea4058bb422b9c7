/* batch_dev.h: a batch's id and length arrays in the compute backend's memory. A workspace lays
 * out room for them beside its buffers; the layer that runs a batch uploads it there once and
 * hands its layers a view whose dev_* fields point at the copies. */
#ifndef NMT_BATCH_DEV_H
#define NMT_BATCH_DEV_H

#include "backend/arena.h"
#include "data/batch.h"

typedef struct batch_dev {
    int *dev;    /* device: room for x, y, xlen and ylen, packed as batch_upload lays them */
    int *stage;  /* host: the same, packed there first, so that one copy crosses */
    int with_y;  /* laid out with targets (training); 0: the source side alone (decoding) */
} batch_dev;

/* Room for batches of up to B sentences, Tx and Ty long (Ty 0: source only, for decoding). */
void batch_dev_layout(batch_dev *d, arena *a, int B, int Tx, int Ty);
/* *view = *bt with its dev_* fields pointing at d's copies of bt's arrays, uploaded in one copy. */
void batch_upload(const bk_ctx *x, batch *view, const batch *bt, const batch_dev *d);

#endif
