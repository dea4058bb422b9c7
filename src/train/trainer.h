/* trainer.h: the state of one training run, shared by the files of src/train: the loop
 * (train.c), set-up and tear-down (setup.c), checkpoints (checkpoint.c) and validation with its
 * TSV log (validate.c). Internal to the library. */
#ifndef NMT_TRAINER_H
#define NMT_TRAINER_H

#include <stdint.h>
#include <stdio.h>

#include "nmt.h"
#include "backend/backend.h"
#include "base/paths.h"
#include "data/batcher.h"
#include "data/corpus.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "nn/net.h"
#include "train/optim.h"

typedef struct trainer {
    const nmt_train_opts *o;    /* &eff */
    nmt_train_opts eff;         /* the caller's options, with a resumed checkpoint's settings */
    nmt_train_cb cb;
    void *user;
    nmt_model *m;
    struct subwords *sw;        /* a new subword model's SentencePiece models until the model owns them */
    real *G;
    params g;
    optim opt;
    textfile ts, tt, vs, vt;
    pairs train, dev;
    batcher bat;
    batch_buf bb;
    net_ws ws;
    long update;
    double elapsed0, t0;        /* seconds before this process; clock at its start */
    double best_dev;            /* best dev NLL per sentence */
    double best_score;          /* best BLEU or chrF when one decides (valid_metric.c); -INFINITY: none yet */
    char **ref, *ref_buf;       /* the dev references BLEU and chrF compare with, by dev line */
    int n_kept;                 /* --keep-best: the kept models' updates and scores, best first */
    int kept_old_metric;        /* resumed with another metric: its enum nmt_metric + 1, whose list
                                   moves aside at the first write (valid_metric.c); 0 otherwise */
    long kept_update[NMT_MAX_KEEP_BEST];
    double kept_score[NMT_MAX_KEEP_BEST];
    int bad_valid, nonfinite;
    int closing;                 /* the validation at the end of a run stopped between two (train.c) */
    char *options_began;         /* resumed: the options YAML of the run's first process (checkpoint) */
    double win_nll, win_t;      /* progress window */
    double win_guided;          /* ... guided alignment's unweighted cost */
    long win_sent, win_tok;
    double val_nll;             /* training NLL since the last validation (for the log) */
    long val_sent, val_tok;
    double val_step, val_left;  /* FertDec's costs since the last validation (unweighted sums) */
    rng drop_rng;               /* dropout masks */
    uint64_t corpus_hash;
    FILE *batch_log;
    FILE *cost_log;             /* rank 0's, when asked */
    const nmt_comm *comm;       /* the job's ranks (comm_local() for one process) */
    struct dist *dist;          /* data parallelism's buffers (dist.c); NULL with one rank */
    int max_src, max_tgt;       /* the longest pair's sides (training and dev): the workspace's size */
    char ckpt_path[4096], log_path[4096], lock_path[4200];
    int lock_fd;                /* MODEL.lock, held for the run; -1 when not taken */
    int model_fd;               /* the model file's own lock (hard links); -1 when not taken */
    struct bk_mix *mix;         /* bf16 training: the weights' bf16 copies; NULL in FP32 */
    bk_ctx cx;                  /* the model's context, with the run's precision: bf16's mix or none */
    guide_ws guide;             /* guided alignment's buffers (guided.c), with --guided-alignment */
} trainer;

/* report.c: the clock, and the caller's callback */
double train_now(void);
double train_elapsed(const trainer *t);          /* seconds, earlier processes of a resumed run included */
void train_report(trainer *t, nmt_train_report *r); /* fills update, epoch and time, then calls back */
void train_warn(trainer *t, const char *msg);

/* files.c: the files a run reads (the corpus, dev set, SentencePiece and pretrained models) and
 * writes (model, checkpoint, logs, lock, the dev translations' template), as setup.c checks them */
#define TRAIN_PATHS_IN 8
#define TRAIN_PATHS_OUT 7
void train_paths(const trainer *t, path_role in[TRAIN_PATHS_IN], path_role out[TRAIN_PATHS_OUT]);

/* setup.c: reads and checks every input, builds or loads the model, allocates everything */
int train_setup(trainer *t, st_file **ck, nmt_err *err);
/* preset.c: the model config o asks for: o->cfg, or for a Transformer o->tf with cfg's vocabulary
 * sizes and tying */
nmt_config train_model_config(const nmt_train_opts *o);
void train_summary(trainer *t, char *buf, size_t n);
void train_cleanup(trainer *t);

/* guided.c: guided alignment (nmt_train_opts.guided_alignment; nothing without it) */
int train_guided_check(const trainer *t, nmt_err *err); /* before the corpus is read: what it refuses */
int train_align_check(trainer *t, nmt_err *err);        /* --alignment-layer / --alignment-head against the model */
int train_guided_links(trainer *t, nmt_err *err);       /* the links onto t->train, once its pairs are built */
int train_guided_init(trainer *t, nmt_err *err);        /* the cost's buffers, after the workspace */
/* λ: the weight asked, or the family's default for a model of config c (0.1; a Transformer's 0.05) */
double train_guided_weight(const nmt_train_opts *o, const nmt_config *c);

/* mixed.c: bf16 training */
int train_mix_check(const nmt_train_opts *o, nmt_err *err); /* the precision is one training has, on this CPU */
int train_mix_init(trainer *t, nmt_err *err);               /* t->mix for a bf16 run (NULL in FP32) */

/* subword_setup.c: subword units (nmt_train_opts.subwords, spm_src) */
struct subwords;
int train_uses_subwords(const nmt_train_opts *o);
/* The text stages of one side (enum nmt_side): those of the model the run goes on from (a
 * subword model's, or a word model's trained on raw text), else the options'. */
nmt_text_opts train_side_stages(const trainer *t, int side);
/* The stages the options alone ask for. */
nmt_text_opts train_opts_stages(const nmt_train_opts *o, int side);
/* After the corpora's text stages: the run's SentencePiece models (*sw, NULL for a word model or
 * a resumed run, whose model has them) trained or read, every corpus replaced by its pieces, and
 * for a new model the vocabularies of the pieces in *sv, *tv. */
int train_subword_setup(trainer *t, struct subwords **sw, vocab **sv, vocab **tv, nmt_err *err);

/* checkpoint.c */
#define CKPT_MAX_UPDATES 1e12   /* counters beyond this are damage: 30 years at 1,000 updates a second */
#define CKPT_MAX_BATCH 1e6

/* A checkpoint's train_state, every field checked for type and range (ckpt_parse). */
typedef struct ckpt_state {
    int optimizer, batch, sort_blocks, reshuffle, precision; /* the run's settings */
    int nonfinite;                      /* non-finite updates skipped in a row */
    double lr, lr_decay, clip, dropout, label_smoothing, dropout_emb, dropout_rnn, dropout_tf, dropout_attn, dropout_ffn;
    long update, epoch, bad_valid, val_sent, val_tok, opt_step, lr_warmup, lr_decay_inv_sqrt;
    int nb, next, corpus_pairs, has_drop_rng;
    double best_dev, elapsed, val_nll, val_step, val_left;
    uint64_t rng[4], drop_rng[4], corpus_hash;
    int guided, guided_cost;            /* guided alignment: on (its fields present), enum nmt_guided_cost */
    double guided_weight;
} ckpt_state;

uint64_t train_corpus_hash(const pairs *p);     /* ties a checkpoint to its corpus */
/* train_state of f into s: unknown, missing, mistyped and out-of-range fields refused by name,
 * and the counters checked against the plan's size (nb from corpus_pairs, batch, sort_blocks). */
int ckpt_parse(ckpt_state *s, const st_file *f, nmt_err *err);
/* The saved plan (s->corpus_pairs entries in shuffled and order, s->nb + 1 in starts), checked:
 * permutations of the corpus regrouped only within blocks, minibatches of 1..batch pairs. */
int ckpt_read_plan(const st_file *f, const ckpt_state *s, int *shuffled, int *order, int *starts, nmt_err *err);
/* The optimizer's state tensors (those of kind that are not NULL), n each: finite, and >= 0
 * where they are sums of squares. */
int ckpt_read_optim(const backend_ops *b, const st_file *f, int kind, real *s1, real *s2, size_t n, nmt_err *err);
int ckpt_save(trainer *t, nmt_err *err);
int ckpt_settings(trainer *t, const st_file *f, nmt_err *err); /* optimizer and batching, into t->eff */
int ckpt_restore(trainer *t, const st_file *f, nmt_err *err);  /* position, counters, optimizer state */

/* validate.c: dev NLL, the best model, patience and learning-rate decay, the TSV log */
int train_validate(trainer *t, int *stop, nmt_err *err);
/* On resume: drops the log's rows past the checkpoint's update (written, then lost to a kill). */
int train_log_trim(trainer *t, nmt_err *err);

/* valid_metric.c: validation by BLEU and chrF, the deciding metric, the K best models */
int valid_metric(const nmt_train_opts *o);        /* the deciding metric: the first asked for, else PPL */
int valid_translates(const nmt_train_opts *o);    /* a metric needs the dev set translated */
int valid_check_opts(const nmt_train_opts *o, nmt_err *err);
int valid_refs_keep(trainer *t, nmt_err *err);    /* after the dev set's text stages, before subwords */
int valid_scores(trainer *t, nmt_train_report *r, nmt_err *err); /* r->dev_bleu, r->dev_chrf (NAN if not asked) */
double valid_key(const trainer *t, const nmt_train_report *r);   /* the deciding value, higher is better */
int valid_keep_best(trainer *t, double key, nmt_err *err);
void valid_kept_path(char *buf, size_t n, const char *model, long update);
char *valid_state_json(const trainer *t);         /* for checkpoints (cJSON_free it) */
int valid_state_restore(trainer *t, const char *js, const char *path, nmt_err *err);

#endif
