/* mixed.c: bf16 training (nmt_train_opts.precision; docs/TRAINING.md, "bf16 training"): the
 * check that the run may use it, and the set of the weights' bf16 copies its products read
 * (backend.h, bk_mix), made once and converted again after every update (train.c). */
#include "backend/backend.h"
#include "base/err.h"
#include "train/trainer.h"

int train_mix_check(const nmt_train_opts *o, nmt_err *err)
{
    if (o->precision == NMT_PREC_FP32) return NMT_OK;
    if (o->precision != NMT_PREC_BF16)
        return nmt_fail(err, NMT_ERR_ARG, "training precision %d: fp32 or bf16 (enum nmt_precision; int8 is for "
                        "decoding only)", o->precision);
    const backend_ops *b = bk_ctx_default()->b; /* the device the run's model is made on */
    if (!b->mix)
        return nmt_fail(err, NMT_ERR_ARG, "bf16 training: the %s backend has no mixed-precision products: use fp32",
                        b->name);
    if (!nmt_precision_supported(NMT_PREC_BF16))
        return nmt_fail(err, NMT_ERR_ARG, "bf16 training needs AVX512_BF16, which this CPU (or build) lacks: use fp32");
    return NMT_OK;
}

int train_mix_init(trainer *t, nmt_err *err)
{
    t->cx = t->m->cx;
    if (t->o->precision != NMT_PREC_BF16) return NMT_OK;
    size_t parts[MAX_TENSORS][2];
    int n = param_table_product_parts(&t->m->pt, &t->m->cfg, parts);
    int rc = t->cx.b->mix->init(&t->mix, t->m->P, t->m->pt.total, (const size_t (*)[2])parts, n, err);
    t->cx.mix = t->mix;
    return rc;
}
