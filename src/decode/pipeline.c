/* pipeline.c: batches translated by several workers at once, handed back in the order they came
 * (nmt.h, "Several workers at once"). A ring of slots under one mutex: the caller fills the slot
 * at the tail, the workers start the queued slots in order, the caller waits on the head. */
#include <pthread.h>
#include <stdlib.h>

#include "base/err.h"
#include "nmt.h"

typedef struct slot {
    const nmt_sentence *s;
    int n, done, rc; /* done: translated, rc its result */
    nmt_translation *out;
    nmt_err err;
} slot;

typedef struct crew {
    nmt_pipeline *p;
    nmt_worker *w;
    pthread_t tid;
    int started;
} crew;

struct nmt_pipeline {
    pthread_mutex_t mu;
    pthread_cond_t work, done; /* a slot queued (or stopping); a slot done */
    slot *ring;
    int cap, head, next, tail; /* ring positions counted up: get at head, start at next, put at tail */
    int threads, stopping, n_crew;
    crew *crew;
};

/* One worker's thread: starts the oldest queued slot, translates it without the lock, marks it
 * done; until the pipeline stops and nothing is left to start. */
static void *crew_main(void *arg)
{
    crew *c = arg;
    nmt_pipeline *p = c->p;
    nmt_set_threads(p->threads); /* this thread's OpenMP team, not the process's */
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->next == p->tail && !p->stopping) pthread_cond_wait(&p->work, &p->mu);
        if (p->next == p->tail) break;
        slot *sl = &p->ring[p->next++ % p->cap];
        pthread_mutex_unlock(&p->mu);
        int rc = nmt_worker_translate(c->w, sl->s, sl->n, sl->out, &sl->err);
        pthread_mutex_lock(&p->mu);
        sl->rc = rc;
        sl->done = 1;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int nmt_pipeline_init(nmt_pipeline **out, nmt_translator *t, int workers, int threads, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_pipeline_init", out, t);
    if (bad) return bad;
    *out = NULL;
    if (workers < 1 || workers > NMT_MAX_WORKERS)
        return nmt_fail(err, NMT_ERR_ARG, "workers %d out of range [1, %d]", workers, NMT_MAX_WORKERS);
    nmt_pipeline *p = calloc(1, sizeof *p);
    if (!p) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    p->cap = 2 * workers; /* each worker busy and one batch waiting for it */
    p->threads = threads;
    p->ring = calloc((size_t)p->cap, sizeof *p->ring);
    p->crew = calloc((size_t)workers, sizeof *p->crew);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    int rc = p->ring && p->crew ? NMT_OK : nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    for (int i = 0; i < workers && !rc; i++) {
        crew *c = &p->crew[i];
        c->p = p;
        rc = nmt_worker_take(t, NULL, &c->w, err);
        if (!rc && pthread_create(&c->tid, NULL, crew_main, c) != 0)
            rc = nmt_fail(err, NMT_ERR_NOMEM, "cannot start a worker thread");
        if (!rc) c->started = 1;
        p->n_crew = i + 1; /* its worker, taken or not, is given back by nmt_pipeline_free */
    }
    if (rc) {
        nmt_pipeline_free(p);
        return rc;
    }
    *out = p;
    return NMT_OK;
}

int nmt_pipeline_full(nmt_pipeline *p)
{
    if (!p) return 1;
    pthread_mutex_lock(&p->mu);
    int full = p->tail - p->head == p->cap;
    pthread_mutex_unlock(&p->mu);
    return full;
}

int nmt_pipeline_pending(nmt_pipeline *p)
{
    if (!p) return 0;
    pthread_mutex_lock(&p->mu);
    int n = p->tail - p->head;
    pthread_mutex_unlock(&p->mu);
    return n;
}

int nmt_pipeline_put(nmt_pipeline *p, const nmt_sentence *s, int n, nmt_translation *out, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_pipeline_put", p, s, out);
    if (bad) return bad;
    if (n < 0) return nmt_fail(err, NMT_ERR_ARG, "nmt_pipeline_put: negative sentence count %d", n);
    pthread_mutex_lock(&p->mu);
    int rc = p->tail - p->head == p->cap ? nmt_fail(err, NMT_ERR_ARG, "nmt_pipeline_put: %d batches in flight already", p->cap)
                                         : NMT_OK;
    if (!rc) {
        p->ring[p->tail++ % p->cap] = (slot){s, n, 0, NMT_OK, out, {0}};
        pthread_cond_signal(&p->work);
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int nmt_pipeline_get(nmt_pipeline *p, nmt_translation **out, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_pipeline_get", p, out);
    if (bad) return bad;
    pthread_mutex_lock(&p->mu);
    if (p->head == p->tail) {
        pthread_mutex_unlock(&p->mu);
        return nmt_fail(err, NMT_ERR_ARG, "nmt_pipeline_get: no batch in flight");
    }
    slot *sl = &p->ring[p->head % p->cap];
    while (!sl->done) pthread_cond_wait(&p->done, &p->mu);
    p->head++;
    pthread_mutex_unlock(&p->mu);
    *out = sl->out;
    if (sl->rc) *err = sl->err;
    return sl->rc;
}

void nmt_pipeline_free(nmt_pipeline *p)
{
    if (!p) return;
    if (p->crew) {
        pthread_mutex_lock(&p->mu);
        p->stopping = 1; /* the queued batches are still translated: their callers may own them */
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < p->n_crew; i++) {
            if (p->crew[i].started) pthread_join(p->crew[i].tid, NULL);
            nmt_worker_give(p->crew[i].w);
        }
    }
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p->crew);
    free(p->ring);
    free(p);
}
