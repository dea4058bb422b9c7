/* dist.h: synchronous data parallelism over the trainer's comm (nmt.h, docs/SCALING.md): which
 * pairs of a minibatch this rank reads, the sums of costs and gradients across ranks (embedding
 * gradients as the rows the minibatch touched), and the decisions rank 0 takes for all: stop,
 * validation, saves. With one rank every call is the single-process path and changes nothing. */
#ifndef NMT_DIST_H
#define NMT_DIST_H

#include "train/trainer.h"

/* After train_setup: the buffers of a job of several ranks (none for one). */
int dist_init(trainer *t, nmt_err *err);
void dist_free(trainer *t);
/* Collective, at start-up: refuses options or inputs that differ between ranks, naming the first
 * that does (NMT_ERR_MISMATCH on every rank). */
int dist_check_inputs(trainer *t, nmt_err *err);

/* This rank's share of the minibatch ids[0..*count): every size-th pair from the rank's index
 * (so that the shares' lengths match, the minibatch being sorted by length); *count becomes its
 * size, 0 when the minibatch has fewer pairs than ranks. With dropout, the masks come from a
 * stream of the rank's own, drawn from the checkpointed one (which advances one draw per update). */
const int *dist_share(trainer *t, const int *ids, int *count);
/* The update's costs s[0..n) summed over ranks (and the checkpointed dropout stream restored). */
int dist_sum_costs(trainer *t, double *s, int n, nmt_err *err);
/* The gradient t->G summed over ranks: the dense tensors whole, the embedding matrices as the
 * rows that the minibatch ids[0..count) (all ranks' pairs) reads. */
int dist_sum_grads(trainer *t, const int *ids, int count, nmt_err *err);

/* Every rank stops when one does (a time limit or a signal seen first by one): *stop and
 * *rc (NMT_ERR_INTERRUPTED) become the same on every rank. */
int dist_agree_stop(trainer *t, int *stop, int *rc, nmt_err *err);
/* Rank 0 validates (train_validate); its outcome (stop, learning rate, best and patience counts,
 * or its failure) reaches every rank. */
int dist_validate(trainer *t, int *stop, nmt_err *err);
/* Rank 0 checkpoints (ckpt_save); then every rank checks that the ranks' parameters are still
 * the same bits. */
int dist_save(trainer *t, nmt_err *err);
/* rc, rank 0's status, as every rank's: a failure of rank 0 is shared (the others' message empty). */
int dist_agree_rc(trainer *t, int rc, nmt_err *err);

/* The share of the time spent in sums across ranks, their seconds and bytes per update, since
 * the last call (window) or over the run, into r; 0 with one rank. */
void dist_comm_stats(trainer *t, int window, nmt_train_report *r);

#endif
