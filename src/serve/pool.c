/* pool.c: the batching queue and the decoder threads of pool.h. One mutex guards the queue (a
 * list of jobs in the order they are to be served, each with a cursor on its next sentence: new
 * jobs join at the tail, and so do jobs a batch has just served); a condition variable wakes idle
 * decoders. A decoder forms its batch under the mutex, decodes without it, and hands
 * the results back under it; a job's done callback runs after the mutex is released. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "serve/pool.h"

pool_opts pool_default_opts(void)
{
    pool_opts o = {2, 1, 32, 1200, 5, 4096, NMT_PREC_FP32, NULL, 0, NULL};
    return o;
}

typedef struct worker {
    pool *p;
    pthread_t tid;
    nmt_worker *w;
    int started;
} worker;

struct pool {
    nmt_translator *tr;
    pool_opts o;
    pool_batch_fn on_batch;
    void *user;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pool_job *head, *tail;   /* jobs with sentences not yet taken, the next to lead a batch first */
    int waiting;             /* sentences not yet taken */
    long dropped;            /* sentences dropped because their client had gone */
    long batches;            /* batches formed, to mark the jobs of each */
    int stopping;
    worker *w;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Jobs decoded in one batch must agree on what changes the search itself. Sampling draws n_best
 * and ranks them, so the first n of more draws are not what n draws would be: n_best too. */
static int same_search(const nmt_translate_opts *a, const nmt_translate_opts *b)
{
    int same = a->sample == b->sample && a->normalize == b->normalize && a->no_unk == b->no_unk &&
               a->max_ratio == b->max_ratio && (!a->normalize || a->length_alpha == b->length_alpha);
    if (!a->sample) return same && a->beam == b->beam;
    return same && a->n_best == b->n_best && a->sample_topk == b->sample_topk && a->sample_topp == b->sample_topp &&
           a->temperature == b->temperature && a->seed == b->seed;
}

static void unlink_job(pool *p, pool_job *j)
{
    if (j->prev_job) j->prev_job->next_job = j->next_job;
    else p->head = j->next_job;
    if (j->next_job) j->next_job->prev_job = j->prev_job;
    else p->tail = j->prev_job;
    j->prev_job = j->next_job = NULL;
}

typedef struct batch_slot { pool_job *job; int index; } batch_slot;

static void append_job(pool *p, pool_job *j)
{
    j->next_job = NULL;
    j->prev_job = p->tail;
    if (p->tail) p->tail->next_job = j;
    else p->head = j;
    p->tail = j;
}

/* ------------------------------------------------------------------ forming a batch */

/* Drops (mutex held) the sentences not yet taken of every job whose client has gone; jobs with
 * nothing left in flight are chained into *done. Before each batch: a request abandoned while it
 * waited costs a system call, not a decoding. */
static void drop_gone(pool *p, pool_job **done)
{
    for (pool_job *j = p->head, *nx; j; j = nx) {
        nx = j->next_job;
        if (!j->gone || !j->gone(j, j->user)) continue;
        int left = j->n - j->next;
        p->waiting -= left;
        p->dropped += left;
        j->pending -= left;
        j->next = j->n;
        if (!j->rc) nmt_fail(&j->err, POOL_GONE, "the client has gone");
        j->rc = POOL_GONE;
        unlink_job(p, j);
        if (j->pending == 0) { j->next_job = *done; *done = j; }
    }
}

/* Every job that got a sentence into the batch and has more goes to the tail, in the order the
 * batch took them: the next batch is led by a job this one did not serve, whatever its options. */
static void rotate_served(pool *p, const batch_slot *slot, int n)
{
    p->batches++;
    for (int i = 0; i < n; i++) {
        pool_job *j = slot[i].job;
        if (j->next >= j->n || j->mark == p->batches) continue; /* unlinked already, or moved */
        j->mark = p->batches;
        unlink_job(p, j);
        append_job(p, j);
    }
}

/* Sentences that could join a batch led by the head job now. */
static int compatible_waiting(const pool *p)
{
    int n = 0;
    for (const pool_job *j = p->head; j; j = j->next_job)
        if (same_search(&j->o, &p->head->o)) n += j->n - j->next;
    return n;
}

/* Waits (mutex held) until a batch can be formed: the pool is stopping, the leading job's
 * compatible sentences fill a batch, or the leader was submitted max_wait_ms ago. 0 only when the
 * pool is stopping and nothing is left. The queue can empty under a decoder that waits for its
 * batch to fill (another decoder took it all): it then waits for work again rather than
 * returning, or the pool would lose a decoder for good at every such race. */
static int wait_for_batch(pool *p)
{
    for (;;) {
        while (!p->head && !p->stopping) pthread_cond_wait(&p->cv, &p->mu);
        if (!p->head) return 0;
        while (p->head && !p->stopping && compatible_waiting(p) < p->o.max_batch) {
            double due = p->head->t_submit + p->o.max_wait_ms * 1e-3;
            if (now_s() >= due) break;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts); /* pthread_cond_timedwait's clock */
            double left = due - now_s();
            ts.tv_sec += (time_t)left;
            ts.tv_nsec += (long)((left - (time_t)left) * 1e9);
            if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
            pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        }
        if (p->head) return 1;
    }
}

/* Takes up to max_batch sentences, one per compatible job in turn (mutex held). Stops at the
 * word cap, but always takes at least one sentence. */
static int take_batch(pool *p, batch_slot *slot, nmt_translate_opts *o)
{
    int n = 0;
    long words = 0;
    *o = p->head->o;
    o->precision = p->o.precision; /* the decoders' own: set_opts then converts nothing again */
    o->shortlist = p->o.shortlist;
    o->unk_replace = p->o.unk_replace;
    o->lexicon = p->o.lexicon;
    if (!o->sample) o->n_best = 1; /* the most any job asks for, below (sampling jobs agree on it) */
    o->attention = 0;
    for (int more = 1, full = 0; more && !full && n < p->o.max_batch;) {
        more = 0;
        for (pool_job *j = p->head, *nx; j && n < p->o.max_batch; j = nx) {
            nx = j->next_job;
            if (!same_search(&j->o, o) || j->next >= j->n || (n && (j->hints || slot[0].job->hints) && j != slot[0].job))
                continue;
            int w = j->sent[j->next].src.n_ids;
            if (n > 0 && words + w > p->o.max_batch_words) { full = 1; break; }
            slot[n].job = j;
            slot[n++].index = j->next++;
            words += w;
            if (j->o.n_best > o->n_best) o->n_best = j->o.n_best;
            o->attention |= j->o.attention;
            if (j->next < j->n) more = 1;
            else unlink_job(p, j);
        }
    }
    p->waiting -= n;
    rotate_served(p, slot, n);
    return n;
}

/* ------------------------------------------------------------------ decoding */

/* The slots' sentences by the worker, with their hints when the batch's job has any (a batch
 * with hints has one job). */
static int translate_slots(nmt_worker *w, const batch_slot *slot, nmt_source *src, nmt_hint_ids *hint, int n,
                           nmt_translation *tr, nmt_err *err)
{
    for (int i = 0; i < n; i++) {
        const nmt_sentence *s = &slot[i].job->sent[slot[i].index];
        src[i] = s->src;
        hint[i] = s->hint;
    }
    return nmt_translate_ids(nmt_worker_decoder(w), src, slot[0].job->hints ? hint : NULL, n, tr, err);
}

/* A batch with hints is a run of one job's sentences from slot[0].index on, and the library
 * names a sentence it refuses by its number in the batch ("sentence 4: ..."): renumbered here
 * from the job's first sentence, so that the request can name its own entry. */
static void renumber_sentence(nmt_err *err, int base)
{
    int k, used = 0;
    if (base == 0 || sscanf(err->msg, "sentence %d%n", &k, &used) != 1 || used == 0) return;
    char rest[sizeof err->msg];
    snprintf(rest, sizeof rest, "%s", err->msg + used);
    snprintf(err->msg, sizeof err->msg, "sentence %d%.990s", k + base, rest); /* room for the number */
}

/* Decodes one batch without the mutex; results go to the jobs under it. Jobs completed are
 * chained through next_job into *done. */
static void run_batch(worker *w, batch_slot *slot, int n, nmt_translate_opts *o, pool_job **done)
{
    pool *p = w->p;
    nmt_source *src = malloc(sizeof *src * n);
    nmt_hint_ids *hint = malloc(sizeof *hint * n);
    nmt_translation *tr = calloc(n, sizeof *tr);
    nmt_err err = {0};
    int rc = src && hint && tr ? NMT_OK : nmt_fail(&err, NMT_ERR_NOMEM, "out of memory");
    long sw = 0, tw = 0;
    double t0 = now_s();
    for (int i = 0; i < n && !rc; i++) sw += slot[i].job->sent[slot[i].index].src.n_ids;
    o->batch = n;
    if (!rc) rc = nmt_decoder_set_opts(nmt_worker_decoder(w->w), o, &err);
    if (!rc) rc = translate_slots(w->w, slot, src, hint, n, tr, &err);
    for (int i = 0; i < n && !rc; i++) tw += tr[i].n_hyps ? tr[i].hyps[0].n_words : 0;
    if (rc && slot[0].job->hints) renumber_sentence(&err, slot[0].index);
    double dt = now_s() - t0;
    if (p->on_batch && !rc) p->on_batch(n, sw, tw, dt, p->user);
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < n; i++) {
        pool_job *j = slot[i].job;
        if (rc && !j->rc) { j->rc = rc; j->err = err; }
        if (!rc) j->tr[slot[i].index] = tr[i]; /* moved: the job owns it now */
        if (--j->pending == 0) { j->next_job = *done; *done = j; }
    }
    pthread_mutex_unlock(&p->mu);
    free(src);
    free(hint);
    free(tr);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    pool *p = w->p;
    nmt_set_threads(p->o.threads); /* this thread's OpenMP team size, not the process's */
    batch_slot *slot = malloc(sizeof *slot * p->o.max_batch);
    pthread_mutex_lock(&p->mu);
    while (slot && wait_for_batch(p)) {
        nmt_translate_opts o;
        pool_job *done = NULL;
        drop_gone(p, &done);
        int n = p->head ? take_batch(p, slot, &o) : 0;
        pthread_mutex_unlock(&p->mu);
        if (n) run_batch(w, slot, n, &o, &done);
        while (done) {
            pool_job *nx = done->next_job;
            done->next_job = NULL;
            done->done(done, w->w, done->user);
            done = nx;
        }
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    free(slot);
    return NULL;
}

/* ------------------------------------------------------------------ the API */

static int check_opts(const pool_opts *o, nmt_err *err)
{
    if (o->workers < 1 || o->workers > 256) return nmt_fail(err, NMT_ERR_ARG, "workers %d out of range [1, 256]", o->workers);
    if (o->threads < 1 || o->threads > 1024) return nmt_fail(err, NMT_ERR_ARG, "threads %d out of range [1, 1024]", o->threads);
    if (o->max_batch < 1 || o->max_batch > 10000) return nmt_fail(err, NMT_ERR_ARG, "max batch %d out of range [1, 10000]", o->max_batch);
    if (o->max_batch_words < 1) return nmt_fail(err, NMT_ERR_ARG, "max batch words %d must be positive", o->max_batch_words);
    if (o->max_wait_ms < 0 || o->max_wait_ms > 60000) return nmt_fail(err, NMT_ERR_ARG, "max wait %d ms out of range [0, 60000]", o->max_wait_ms);
    if (o->max_queue < 1) return nmt_fail(err, NMT_ERR_ARG, "max queue %d must be positive", o->max_queue);
    return NMT_OK;
}

int pool_init(pool **out, nmt_translator *tr, const pool_opts *o, pool_batch_fn on_batch, void *user, nmt_err *err)
{
    *out = NULL;
    int rc = check_opts(o, err);
    if (rc) return rc;
    pool *p = calloc(1, sizeof *p);
    if (!p || !(p->w = calloc(o->workers, sizeof *p->w))) {
        free(p);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    p->tr = tr;
    p->o = *o;
    p->on_batch = on_batch;
    p->user = user;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    nmt_translate_opts d = nmt_translate_default_opts();
    d.unk_replace = o->unk_replace; /* precision, shortlist and lexicon: the translator's */
    for (int i = 0; i < o->workers && !rc; i++) {
        p->w[i].p = p;
        rc = nmt_worker_take(tr, &d, &p->w[i].w, err);
        if (!rc && pthread_create(&p->w[i].tid, NULL, worker_main, &p->w[i]))
            rc = nmt_fail(err, NMT_ERR_NOMEM, "cannot start decoder thread %d: %s", i, strerror(errno));
        p->w[i].started = !rc;
    }
    if (rc) { pool_free(p); return rc; }
    *out = p;
    return NMT_OK;
}

int pool_submit(pool *p, pool_job *j, nmt_err *err)
{
    pthread_mutex_lock(&p->mu);
    int rc = NMT_OK;
    if (p->stopping) rc = nmt_fail(err, NMT_ERR_ARG, "the server is shutting down");
    else if (p->waiting + j->n > p->o.max_queue)
        rc = nmt_fail(err, NMT_ERR_ARG, "%d sentences are waiting already (the limit is %d)", p->waiting, p->o.max_queue);
    if (!rc) {
        j->next = 0;
        j->pending = j->n;
        j->rc = 0;
        j->t_submit = now_s();
        j->mark = 0;
        append_job(p, j);
        p->waiting += j->n;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int pool_waiting(pool *p)
{
    pthread_mutex_lock(&p->mu);
    int n = p->waiting;
    pthread_mutex_unlock(&p->mu);
    return n;
}

long pool_dropped(pool *p)
{
    pthread_mutex_lock(&p->mu);
    long n = p->dropped;
    pthread_mutex_unlock(&p->mu);
    return n;
}

void pool_stop(pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->stopping = 1; /* decoders finish what is queued without waiting for batches to fill */
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->o.workers; i++) {
        if (p->w[i].started) pthread_join(p->w[i].tid, NULL);
        p->w[i].started = 0;
    }
}

void pool_free(pool *p)
{
    if (!p) return;
    pool_stop(p);
    for (int i = 0; i < p->o.workers; i++) nmt_worker_give(p->w[i].w);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->w);
    free(p);
}
