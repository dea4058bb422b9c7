/* model_text.c: the text pipeline of one side of a model (nmt_text_init_model): the model's
 * vocabulary, subword units and stored text stages handed to data/pipeline.c, which knows
 * nothing of models (the data layer sits below the model's). */
#include "base/err.h"
#include "data/pipeline.h"
#include "nn/model.h"

int nmt_text_init_model(nmt_text **out, const nmt_text_opts *o, const nmt_model *m, int side, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_text_init_model", out, o, m);
    if (bad) return bad;
    *out = NULL;
    if (side != NMT_SOURCE && side != NMT_TARGET)
        return nmt_fail(err, NMT_ERR_ARG, "text pipeline: no model, or side %d is neither source nor target", side);
    const vocab *v = side == NMT_SOURCE ? m->src : m->tgt;
    return text_pipe_init_side(out, o, v, m->sw, m->has_text ? &m->text[side] : NULL, side, err);
}
