/* weights.h: a model's weights in a lower precision (int8, bf16), converted once per model and
 * shared by every decoder and worker: the typed view (params.tw) that mmw reads, and the output
 * layer's W_o in that precision (with tied embeddings a transposed copy of Ey made for it). */
#ifndef NMT_WEIGHTS_H
#define NMT_WEIGHTS_H

#include "backend/backend.h"
#include "nn/model.h"

typedef struct model_lowp {
    int prec;                     /* enum bk_prec */
    bk_weight tw[PARAMS_SLOTS];   /* every slot: the step's weights converted, the others FP32 */
    bk_weight out;                /* W_o [l, V] converted */
    real *Wt;                     /* tied embeddings: Ey^T [l, V], what out converts */
    int maxK, maxN;               /* the widest product they serve, for a decoder's scratch */
} model_lowp;

/* The weights of m in prec (BK_PREC_INT8 or BF16), made on the first call and kept by m; safe
 * to call from several threads. NMT_ERR_ARG naming the op, the precision and the backend when
 * m's backend cannot run it (never a silent FP32), NMT_ERR_NOMEM. */
int model_lowp_get(nmt_model *m, int prec, const model_lowp **out, nmt_err *err);
/* frees what model_lowp_get made (nmt_model_free's) */
void model_lowp_free(nmt_model *m);
/* "int8", "bf16" or "fp32" */
const char *bk_prec_name(int prec);

#endif
