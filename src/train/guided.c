/* guided.c: guided alignment's set-up for a training run (docs/TRAINING.md): what it refuses
 * (a model without attention; text the run re-segments, whose words the links would miss),
 * the links read with the corpus, and the cost's buffers; and a Transformer's choice of the
 * layer and head that give alignments, which guided alignment trains. */
#include <stdio.h>

#include "base/err.h"
#include "data/links.h"
#include "nn/variant.h"
#include "train/trainer.h"

/* Links index the corpus's words as the files hold them: a run that splits or re-tokenizes
 * them (subword units, --tokenize) would read other positions. Refused rather than mapped. */
static int check_words_kept(const trainer *t, nmt_err *err)
{
    if (train_uses_subwords(t->o) || (t->m && t->m->sw))
        return nmt_fail(err, NMT_ERR_ARG, "--guided-alignment: the links index the corpus's words, which subword units split "
                        "into pieces: segment the corpus beforehand (nmt segment) and align the segmented text instead");
    for (int side = 0; side < 2; side++)
        if (train_side_stages(t, side).tokenize)
            return nmt_fail(err, NMT_ERR_ARG, "--guided-alignment: the links index the corpus's words, which --tokenize "
                            "re-tokenizes: tokenize the corpus beforehand and align the tokenized text instead");
    return NMT_OK;
}

int train_guided_check(const trainer *t, nmt_err *err)
{
    const nmt_train_opts *o = t->o;
    if (!o->guided_alignment) return NMT_OK;
    const nmt_config *c = t->m ? &t->m->cfg : &o->cfg; /* a resumed or fine-tuned run's model decides */
    if (!has_attention(c))
        return nmt_fail(err, NMT_ERR_ARG, "--guided-alignment: %s has no attention to guide (its context is the encoder's "
                        "last state): use an attention model (rnnsearch, recatt, ...)", nmt_arch_name(c->arch));
    if (!variant_of(c)->guidable)
        return nmt_fail(err, NMT_ERR_ARG, "--guided-alignment: not yet for a %s model: use a recurrent attention model "
                        "(rnnsearch, recatt, ...)", nmt_arch_name(c->arch));
    if (!(o->guided_weight <= 1e6)) /* negative: the family's default */
        return nmt_fail(err, NMT_ERR_ARG, "guided alignment weight %g out of range [0, 1e6]", o->guided_weight);
    if (o->guided_cost != NMT_GUIDED_CE && o->guided_cost != NMT_GUIDED_MSE)
        return nmt_fail(err, NMT_ERR_ARG, "unknown guided alignment cost %d (0 ce, 1 mse)", o->guided_cost);
    return check_words_kept(t, err);
}

/* "head H" (from 0, as --alignment-head counts) or the heads' mean, for a message */
static const char *head_name(int align_head, char *buf, size_t n)
{
    if (!align_head) return "the heads' mean";
    snprintf(buf, n, "head %d", align_head - 1);
    return buf;
}

/* A model from a file keeps the layer and head it names (a resumed guided run goes on training
 * them); the options fill only what it leaves unnamed, and only in a guided run (name_guided_head).
 * Options it does not follow are named in a warning. */
static void warn_align_kept(trainer *t, const nmt_config *m)
{
    const nmt_config *a = &t->o->tf;
    int guided = t->o->guided_alignment != NULL;
    int layer = a->align_layer && a->align_layer != m->align_layer && (m->align_layer || !guided);
    int head = a->align_head && a->align_head != m->align_head && (m->align_head || !guided);
    if (!layer && !head) return;
    char line[512], h[32];
    snprintf(line, sizeof line, "the model from the file reports alignments from layer %d, %s (%s): --alignment-%s is not "
             "followed", m->align_layer ? m->align_layer : m->dec_depth, head_name(m->align_head, h, sizeof h),
             guided ? "which guided alignment trains" : "a run without guided alignment keeps them", layer ? "layer" : "head");
    train_warn(t, line);
}

int train_align_check(trainer *t, nmt_err *err)
{
    const nmt_train_opts *o = t->o;
    const nmt_config *a = &o->tf, *m = t->m ? &t->m->cfg : a; /* 1-based there; --alignment-head counts from 0 */
    int arch = t->m ? m->arch : o->cfg.arch;
    if (arch != NMT_ARCH_TRANSFORMER && (a->align_layer || a->align_head))
        return nmt_fail(err, NMT_ERR_ARG, "--alignment-%s: a Transformer's choice of attention; not with --arch %s",
                        a->align_layer ? "layer" : "head", nmt_arch_name(arch));
    if (a->align_layer < 0 || a->align_layer > m->dec_depth)
        return nmt_fail(err, NMT_ERR_ARG, "--alignment-layer %d: the decoder has layers 1 to %d%s", a->align_layer,
                        m->dec_depth, t->m ? "" : " (--dec-depth)");
    if (a->align_head < 0 || a->align_head > m->heads)
        return nmt_fail(err, NMT_ERR_ARG, "--alignment-head %d: the heads are 0 to %d (%s%d)", a->align_head - 1,
                        m->heads - 1, t->m ? "the model's heads: " : "--heads ", m->heads);
    if (t->m) warn_align_kept(t, m);
    return NMT_OK;
}

/* A guided Transformer aligns with the head it trains: the model's config names it, so that nmt
 * align, translate's alignments and UNK replacement read it. What a model from a file names
 * stays; what is unnamed takes the options (for a new model, already its config), else the last
 * layer and head 0. */
static void name_guided_head(trainer *t)
{
    nmt_config *c = &t->m->cfg;
    const nmt_config *a = &t->o->tf;
    if (!is_transformer(c)) return;
    if (!c->align_layer) c->align_layer = a->align_layer ? a->align_layer : c->dec_depth;
    if (!c->align_head) c->align_head = a->align_head ? a->align_head : 1;
}

int train_guided_links(trainer *t, nmt_err *err)
{
    const char *path = t->o->guided_alignment;
    return path ? links_attach(&t->train, path, &t->ts, &t->tt, err) : NMT_OK;
}

/* λ's default by family: Marian's 0.1 for the recurrent models; Garg et al. (2019) train one
 * Transformer head with 0.05 */
double train_guided_weight(const nmt_train_opts *o, const nmt_config *c)
{
    if (o->guided_weight >= 0) return o->guided_weight;
    return is_transformer(c) ? 0.05 : 0.1;
}

int train_guided_init(trainer *t, nmt_err *err)
{
    const nmt_train_opts *o = t->o;
    if (!o->guided_alignment) return NMT_OK;
    t->eff.guided_weight = train_guided_weight(o, &t->m->cfg);
    name_guided_head(t);
    int rc = guide_init(&t->m->cx, &t->guide, o->guided_cost, o->guided_weight, o->batch, t->max_src, t->max_tgt, err);
    if (!rc) net_set_guide(&t->ws, &t->guide);
    return rc;
}
