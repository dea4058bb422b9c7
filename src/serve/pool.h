/* pool.h: dynamic batching for a translation server. Requests (jobs of one or more sentences,
 * read by a translation worker) wait in one queue; a pool of decoder threads, each with its own
 * worker of one translator (nmt.h), takes batches from it and runs them through the batched beam
 * search. Sentences whose search options agree (beam, length normalisation and penalty, no-UNK) share a
 * batch; a batch closes when it holds max_batch sentences or max_batch_words source words, or
 * when its oldest sentence has waited max_wait_ms. Jobs are served round-robin, one sentence of
 * each in turn, so that a long job cannot hold the sentences of a short one back by more than
 * a batch. */
#ifndef NMT_SERVE_POOL_H
#define NMT_SERVE_POOL_H

#include "nmt.h"

typedef struct pool_opts {
    int workers;         /* decoder threads */
    int threads;         /* OpenMP threads inside each decoder */
    int max_batch;       /* sentences per batch */
    int max_batch_words; /* source words per batch (a single longer sentence still goes alone) */
    int max_wait_ms;     /* how long the oldest waiting sentence may wait for others to join it */
    int max_queue;       /* sentences waiting at most; pool_submit refuses beyond */
    int precision;       /* enum nmt_precision of every decoder's products (NMT_PREC_FP32) */
    const nmt_shortlist *shortlist; /* every batch's output layer over this shortlist; NULL (default):
                                       the whole vocabulary. Read-only; it must outlive the pool */
    int unk_replace;     /* every output UNK replaced (nmt_translate_opts.unk_replace) */
    const nmt_lexicon *lexicon; /* by its translation in this table; NULL: by the source word */
} pool_opts;

pool_opts pool_default_opts(void);

typedef struct pool_job pool_job;
/* done runs in the decoder thread that finished the job, with that thread's worker (its target
 * pipeline writes the answer without a lock). */
typedef void (*pool_done_fn)(pool_job *job, nmt_worker *w, void *user);
/* Non-zero when nobody waits for the job any more; called under the pool's lock, so it must be
 * quick and take no lock of the caller's that is held around pool calls. */
typedef int (*pool_gone_fn)(const pool_job *job, void *user);

/* What a caller fills in before pool_submit; the pool writes the results. The job and its
 * sentences belong to the caller and must live until done has been called. */
struct pool_job {
    int n;                   /* sentences */
    const nmt_sentence *sent; /* [n] as a worker read them (nmt_sentence_encode), with their hints */
    int hints;               /* some sentence has a prefix or phrases: the job is decoded in batches of
                                its own, so that hints the model refuses fail no other job */
    nmt_translate_opts o;    /* beam, normalize (with length_alpha), no_unk, max_ratio group batches (and, for
                                sampling, n_best, sample_topk, sample_topp, temperature, seed); n_best and attention
                                are per job otherwise; precision and shortlist are the pool's */
    pool_done_fn done;       /* called once, from a decoder thread, when all n are translated */
    pool_gone_fn gone;       /* NULL, or asked before each batch: the job's sentences not yet
                                decoded are dropped and it ends with rc POOL_GONE */
    void *user;
    /* results: tr[n] (the caller frees them with nmt_translation_free), or rc != 0 and err (for a
     * job with hints, a "sentence K" there counts from the job's first sentence, 1-based) */
    nmt_translation *tr;
    int rc;
    nmt_err err;
    /* the pool's own */
    int next, pending;
    long mark;               /* the last batch that moved it to the tail */
    double t_submit;
    pool_job *prev_job, *next_job;
};

/* A job's rc when its gone callback said so (none of the library's NMT_ERR_* codes). */
#define POOL_GONE (-100)

/* Per-batch figures, for metrics: called from the decoder thread after each batch. */
typedef void (*pool_batch_fn)(int sentences, long src_words, long tgt_words, double seconds, void *user);

typedef struct pool pool;

/* The decoder threads, each with a worker of tr (which must outlive the pool). */
int pool_init(pool **out, nmt_translator *tr, const pool_opts *o, pool_batch_fn on_batch, void *user, nmt_err *err);
/* Queues a job; NMT_ERR_ARG when the queue is full or the pool is stopping (nothing queued,
 * done will not be called). */
int pool_submit(pool *p, pool_job *job, nmt_err *err);
/* Sentences waiting (not yet taken by a decoder). */
int pool_waiting(pool *p);
/* Sentences dropped so far because their client had gone. */
long pool_dropped(pool *p);
/* Finishes every queued job, then stops the threads; later submissions are refused. */
void pool_stop(pool *p);
/* pool_stop, then frees the pool. NULL is fine. */
void pool_free(pool *p);

#endif
