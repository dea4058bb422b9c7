/* files.c: the files a training run reads and writes, for the checks of set-up (setup.c: no output
 * over an input, no two outputs one file) and of the dev translations (valid_metric.c), whose
 * names are known only at each validation. */
#include <string.h>

#include "train/trainer.h"

void train_paths(const trainer *t, path_role in[TRAIN_PATHS_IN], path_role out[TRAIN_PATHS_OUT])
{
    const nmt_train_opts *o = t->o;
    const path_role i[TRAIN_PATHS_IN] = {{o->src, "the source corpus"}, {o->tgt, "the target corpus"},
                                         {o->valid_src, "the dev source"}, {o->valid_tgt, "the dev target"},
                                         {o->spm_src, "a SentencePiece model"}, {o->spm_tgt, "a SentencePiece model"},
                                         {o->pretrained, "the pretrained model"},
                                         {o->guided_alignment, "the guided alignment links"}};
    const path_role w[TRAIN_PATHS_OUT] = {{o->model, "the model"}, {t->ckpt_path, "the checkpoint"},
                                          {t->log_path, "the training log"}, {o->batch_log, "the batch log"},
                                          {t->lock_path, "the model's lock file"}, {o->cost_log, "the cost log"},
                                          {o->valid_output, "the dev translations"}};
    memcpy(in, i, sizeof i);
    memcpy(out, w, sizeof w);
}
