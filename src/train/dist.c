/* dist.c: data-parallel training (dist.h). Every rank holds the whole corpus and runs the same
 * batcher, so every rank knows each update's whole minibatch without a message: it reads its
 * share, and the rows of the embedding matrices to sum are the words of the whole minibatch,
 * listed the same way on every rank. The gradient of the minibatch cost is a sum over its
 * sentences, each rank's backward scales by 1/B of the whole minibatch, so the sum over ranks is
 * the one-process gradient (up to the order of float additions: docs/SCALING.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/err.h"
#include "train/comm.h"
#include "data/subword.h"
#include "train/dist.h"

struct dist {
    int *share;                 /* [batch] this rank's pair ids */
    unsigned *seen[2];          /* [Kx], [Ky]: the stamp of the last update that listed the row */
    unsigned stamp;
    int *rows;                  /* [cap[0] + cap[1]] the listed rows, source then target */
    int cap[2];                 /* most rows a minibatch can list per side */
    real *pack;                 /* the listed rows' gradients, packed (host, what crosses ranks) */
    real *dpack;                /* the same on the compute device, gathered there */
    int *drows;                 /* rows, uploaded */
    size_t packed;              /* reals in pack now */
    real *stage;                /* host: one dense span of G at a time */
    size_t seg[3][2];           /* the dense spans of G: [offset, length) */
    const tensor_info *emb[2];  /* Es, Et */
    rng canon;                  /* with dropout: the checkpointed stream, while a rank's own draws */
    double t0, win_t0, win_s, run_s, win_bytes, run_bytes;
    long win_upd, run_upd;
};

static int many(const trainer *t) { return t->comm->size > 1; }

/* The dense spans of the arena: all but the embedding matrices (at most two, in arena order). */
static void dense_spans(struct dist *d, size_t total)
{
    const tensor_info *e[2] = {d->emb[0], d->emb[1]};
    if (e[0] && e[1] && e[1]->offset < e[0]->offset) { const tensor_info *x = e[0]; e[0] = e[1]; e[1] = x; }
    size_t at = 0;
    int k = 0;
    for (int i = 0; i < 2; i++) {
        if (!e[i]) continue;
        d->seg[k][0] = at;
        d->seg[k++][1] = e[i]->offset - at;
        at = e[i]->offset + (size_t)e[i]->rows * e[i]->cols;
    }
    d->seg[k][0] = at;
    d->seg[k][1] = total - at;
}

int dist_init(trainer *t, nmt_err *err)
{
    if (!many(t)) return NMT_OK;
    struct dist *d = t->dist = calloc(1, sizeof *d);
    if (!d) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    const int longest[2] = {t->max_src, t->max_tgt + 1}, B = t->bat.B;
    size_t packed = 0;
    for (int s = 0; s < 2; s++) {
        /* tied, Et is also the softmax layer's weights, whose gradient fills every row: dense then */
        d->emb[s] = s && t->m->cfg.tied_emb ? NULL : param_table_find(&t->m->pt, s ? "Et" : "Es");
        int K = d->emb[s] ? d->emb[s]->rows : 0;
        d->cap[s] = (double)B * longest[s] < K ? B * longest[s] : K;
        d->seen[s] = calloc(K ? K : 1, sizeof(unsigned));
        if (d->emb[s]) packed += (size_t)d->cap[s] * d->emb[s]->cols;
    }
    d->share = malloc(sizeof(int) * B);
    d->rows = malloc(sizeof(int) * (d->cap[0] + d->cap[1] + 1));
    d->pack = malloc(sizeof(real) * (packed ? packed : 1));
    dense_spans(d, t->m->pt.total);
    size_t span = 1;
    for (int k = 0; k < 3; k++) span = d->seg[k][1] > span ? d->seg[k][1] : span;
    const backend_ops *bk = t->m->cx.b;
    d->dpack = bk->alloc(sizeof(real) * (packed ? packed : 1));
    d->drows = bk->alloc(sizeof(int) * (d->cap[0] + d->cap[1] + 1));
    d->stage = malloc(sizeof(real) * span);
    if (!d->share || !d->seen[0] || !d->seen[1] || !d->rows || !d->pack || !d->dpack || !d->drows || !d->stage)
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    d->t0 = d->win_t0 = train_now();
    return NMT_OK;
}

void dist_free(trainer *t)
{
    struct dist *d = t->dist;
    if (!d) return;
    free(d->share);
    free(d->seen[0]);
    free(d->seen[1]);
    free(d->rows);
    free(d->pack);
    t->m->cx.b->free(d->dpack);
    t->m->cx.b->free(d->drows);
    free(d->stage);
    free(d);
    t->dist = NULL;
}

/* ------------------------------------------------------------------ one update */
/* Masks are drawn: on the maxout output, the embeddings or the recurrent states. */
static int any_dropout(const nmt_train_opts *o) { return o->dropout > 0 || o->dropout_emb > 0 || o->dropout_rnn > 0; }

const int *dist_share(trainer *t, const int *ids, int *count)
{
    if (!many(t)) return ids;
    struct dist *d = t->dist;
    int n = 0;
    for (int i = t->comm->rank; i < *count; i += t->comm->size) d->share[n++] = ids[i];
    *count = n;
    if (any_dropout(t->o)) { /* this update's masks from a stream of the rank's own */
        d->canon = t->drop_rng;
        uint64_t s = rng_u64(&d->canon);
        rng_seed(&t->drop_rng, s ^ 0x9e3779b97f4a7c15ULL * (uint64_t)(t->comm->rank + 1));
    }
    return d->share;
}

static void timed(struct dist *d, double since, double bytes)
{
    double s = train_now() - since;
    d->win_s += s;
    d->run_s += s;
    d->win_bytes += bytes;
    d->run_bytes += bytes;
}

int dist_sum_costs(trainer *t, double *s, int n, nmt_err *err)
{
    if (!many(t)) return NMT_OK;
    struct dist *d = t->dist;
    if (any_dropout(t->o)) t->drop_rng = d->canon; /* the masks are drawn in the forward pass */
    double t0 = train_now();
    int rc = comm_allreduce(t->comm, s, (size_t)n, NMT_COMM_DOUBLE, NMT_COMM_SUM, err);
    timed(d, t0, sizeof(double) * n);
    d->win_upd++;
    d->run_upd++;
    return rc;
}

/* Lists the rows of embedding side s (0 source, 1 target) that the minibatch reads, each once,
 * in first-read order: the same list on every rank. The target side reads EOS (row 0) as the
 * padding of shorter sentences. Returns the count. */
static int list_rows(struct dist *d, const pairs *p, const int *ids, int count, int s, int *rows)
{
    int n = 0;
    unsigned *seen = d->seen[s];
    if (s) { seen[0] = d->stamp; rows[n++] = 0; }
    for (int i = 0; i < count; i++) {
        long a = s ? p->tgt_off[ids[i]] : p->src_off[ids[i]], e = s ? p->tgt_off[ids[i] + 1] : p->src_off[ids[i] + 1];
        const int *w = s ? p->tgt : p->src;
        for (long k = a; k < e; k++)
            if (seen[w[k]] != d->stamp) {
                seen[w[k]] = d->stamp;
                NMT_ASSERT(n < d->cap[s]);
                rows[n++] = w[k];
            }
    }
    return n;
}

/* Packs (dir 0: gathered on the device, then copied out) or unpacks (dir 1: copied in, then put
 * back) the listed rows of both embedding gradients. */
static size_t pack_rows(const backend_ops *b, struct dist *d, real *G, const int *nrows, int dir)
{
    const backend_ops *bk = b;
    size_t at = 0;
    int roff = 0;
    if (!dir) bk->copy_in(d->drows, d->rows, sizeof(int) * (nrows[0] + nrows[1]));
    else bk->copy_in(d->dpack, d->pack, sizeof(real) * d->packed);
    for (int s = 0; s < 2; s++) {
        if (!d->emb[s]) continue;
        int m = d->emb[s]->cols;
        real *g = G + d->emb[s]->offset;
        if (dir) bk->scatter_rows(g, d->dpack + at, d->drows + roff, nrows[s], m);
        else bk->gather_rows(d->dpack + at, g, d->drows + roff, nrows[s], m);
        at += (size_t)nrows[s] * m;
        roff += nrows[s];
    }
    if (!dir) bk->copy_out(d->pack, d->dpack, sizeof(real) * at);
    d->packed = at;
    return at;
}

int dist_sum_grads(trainer *t, const int *ids, int count, nmt_err *err)
{
    if (!many(t)) return NMT_OK;
    struct dist *d = t->dist;
    double t0 = train_now(), bytes = 0;
    int rc = NMT_OK, nrows[2] = {0, 0};
    if (++d->stamp == 0) { /* wrapped: start the stamps over */
        for (int s = 0; s < 2; s++) memset(d->seen[s], 0, sizeof(unsigned) * (d->emb[s] ? d->emb[s]->rows : 1));
        d->stamp = 1;
    }
    for (int s = 0; s < 2; s++)
        if (d->emb[s]) nrows[s] = list_rows(d, &t->train, ids, count, s, d->rows + (s ? nrows[0] : 0));
    size_t n = pack_rows(t->m->cx.b, d, t->G, nrows, 0);
    for (int k = 0; k < 3 && !rc; k++)
        if (d->seg[k][1]) { /* each dense span through the host, where the transport sums */
            size_t bytes1 = sizeof(real) * d->seg[k][1];
            t->m->cx.b->copy_out(d->stage, t->G + d->seg[k][0], bytes1);
            rc = comm_allreduce(t->comm, d->stage, d->seg[k][1], COMM_REAL, NMT_COMM_SUM, err);
            if (!rc) t->m->cx.b->copy_in(t->G + d->seg[k][0], d->stage, bytes1);
            bytes += sizeof(real) * (double)d->seg[k][1];
        }
    if (!rc && n) rc = comm_allreduce(t->comm, d->pack, n, COMM_REAL, NMT_COMM_SUM, err);
    if (!rc) pack_rows(t->m->cx.b, d, t->G, nrows, 1);
    timed(d, t0, bytes + sizeof(real) * (double)n);
    return rc;
}

void dist_comm_stats(trainer *t, int window, nmt_train_report *r)
{
    struct dist *d = t->dist;
    r->comm_frac = r->comm_s = r->comm_bytes = 0;
    if (!d) return;
    double now = train_now(), wall = now - (window ? d->win_t0 : d->t0), s = window ? d->win_s : d->run_s;
    long upd = window ? d->win_upd : d->run_upd;
    r->comm_frac = wall > 0 ? s / wall : 0;
    r->comm_s = upd ? s / upd : 0;
    r->comm_bytes = upd ? (window ? d->win_bytes : d->run_bytes) / upd : 0;
    if (window) {
        d->win_t0 = now;
        d->win_s = d->win_bytes = 0;
        d->win_upd = 0;
    }
}

/* ------------------------------------------------------------------ decisions taken together */
/* A failure every rank has: its message on rank 0 alone (nmt.h). */
static int shared_fail(const trainer *t, int code, const char *msg, nmt_err *err)
{
    return nmt_fail(err, code, "%s", t->comm->rank ? "" : msg);
}

int dist_agree_rc(trainer *t, int rc, nmt_err *err)
{
    if (!many(t)) return rc;
    int64_t v = rc;
    int crc = comm_bcast(t->comm, &v, sizeof v, 0, err);
    if (crc) return crc;
    if (t->comm->rank == 0 || !v) return (int)v;
    return shared_fail(t, (int)v, "", err);
}

int dist_agree_stop(trainer *t, int *stop, int *rc, nmt_err *err)
{
    if (!many(t)) return NMT_OK;
    int64_t v[2] = {*stop, *rc == NMT_ERR_INTERRUPTED};
    int crc = comm_allreduce(t->comm, v, 2, NMT_COMM_INT64, NMT_COMM_MAX, err);
    if (crc) return crc;
    *stop = (int)v[0];
    if (v[1]) *rc = NMT_ERR_INTERRUPTED;
    return NMT_OK;
}

int dist_validate(trainer *t, int *stop, nmt_err *err)
{
    if (!many(t)) return train_validate(t, stop, err);
    double v[5] = {0};
    if (t->comm->rank == 0) {
        v[0] = train_validate(t, stop, err);
        v[1] = *stop;
        v[2] = t->opt.lr;
        v[3] = t->best_dev;
        v[4] = t->bad_valid;
    }
    int rc = comm_bcast(t->comm, v, sizeof v, 0, err);
    if (rc || v[0] != 0) return rc ? rc : t->comm->rank ? shared_fail(t, (int)v[0], "", err) : (int)v[0];
    *stop = v[1] != 0;
    t->opt.lr = v[2];
    t->best_dev = v[3];
    t->bad_valid = (int)v[4];
    return NMT_OK;
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ULL; }
    return h;
}

/* The parameters' bits, 8 bytes at a time (a checkpoint's worth of them, at each save). */
static uint64_t hash_params(const real *P, size_t n)
{
    const unsigned char *b = (const unsigned char *)P;
    size_t bytes = sizeof(real) * n, i = 0;
    uint64_t h = 1469598103934665603ULL;
    for (; i + 8 <= bytes; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    return hash_bytes(h, b + i, bytes - i);
}

/* One hash per rank, gathered: the first rank whose hash is not rank 0's, or 0. */
static int first_other(trainer *t, const uint64_t *mine, int n, uint64_t *all, int *which, nmt_err *err)
{
    int rc = comm_allgather(t->comm, mine, all, sizeof(uint64_t) * n, err);
    for (int r = 1; !rc && r < t->comm->size; r++)
        for (int i = 0; i < n; i++)
            if (all[(size_t)r * n + i] != all[i]) { *which = i; return r; }
    return rc ? -1 : 0;
}

/* The parameters' hash, from a host copy; out of memory hashes nothing, and every rank then
 * has 0 unless all ran out together, which the comparison reports like any other difference. */
static uint64_t hash_model(const nmt_model *m)
{
    real *host = params_to_host(m);
    uint64_t h = host ? hash_params(host, m->pt.total) : 0;
    free(host);
    return h;
}

int dist_save(trainer *t, nmt_err *err)
{
    int rc = dist_agree_rc(t, t->comm->rank == 0 ? ckpt_save(t, err) : NMT_OK, err);
    if (rc || !many(t)) return rc;
    uint64_t h = hash_model(t->m), *all = malloc(sizeof h * t->comm->size);
    if (!all) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    int which = 0, r = first_other(t, &h, 1, all, &which, err);
    free(all);
    if (r <= 0) return r < 0 ? NMT_ERR_IO : NMT_OK;
    char msg[200];
    snprintf(msg, sizeof msg, "at update %ld the parameters of rank %d are no longer rank 0's: the ranks did not apply the same updates (a bug: please report it)",
             t->update, r);
    return shared_fail(t, NMT_ERR_NUMERIC, msg, err);
}

/* ------------------------------------------------------------------ the same inputs everywhere */
typedef struct item { const char *what; uint64_t h; } item;

static uint64_t bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* Guided alignment's settings and links; 0 without it. */
static uint64_t guided_hash(const trainer *t)
{
    const nmt_train_opts *o = t->o;
    if (!o->guided_alignment || !t->train.link_off) return 0;
    double set[2] = {o->guided_weight, o->guided_cost};
    uint64_t h = hash_bytes(1469598103934665603ULL, set, sizeof set);
    h = hash_bytes(h, t->train.link_off, sizeof(long) * ((size_t)t->train.n + 1));
    return hash_bytes(h, t->train.link, sizeof(int) * 2 * (size_t)t->train.link_off[t->train.n]);
}

/* What every rank must share, each with the name a user knows it by: the model's shape and the
 * training options (the checkpoint's, when resumed), then the data and the state they became.
 * --threads may differ (machines of other sizes). Returns the count. */
static int input_items(const trainer *t, item *it)
{
    const nmt_train_opts *o = t->o;
    const nmt_config *c = &t->m->cfg;
    /* the text stages and subword units in use, not the options: a model that goes on from a file
     * has its own, which a rank may give again or not */
    const nmt_text_opts s0 = train_side_stages(t, NMT_SOURCE), s1 = train_side_stages(t, NMT_TARGET);
    const int fresh = !o->resume && !o->pretrained;
    const double sw_kind = fresh ? o->subwords : t->m->sw != NULL, sw_vocab = fresh ? o->subword_vocab : 0,
                 sw_joint = fresh ? o->subword_joint : t->m->sw && t->m->sw->joint;
    const double v[] = {c->arch, c->src_vocab, c->tgt_vocab, c->emb, c->hid, c->att, c->maxout, c->window, c->fert_step_w,
                        c->fert_left_w, o->max_len, t->bat.B, t->bat.k, t->bat.reshuffle, t->opt.kind, t->opt.lr, o->clip,
                        o->dropout, o->lr_decay, (double)o->seed, o->init, o->max_nonfinite, (double)o->max_updates,
                        o->max_epochs, o->max_time, (double)o->valid_every, (double)o->save_every, o->patience,
                        (s0.tokenize ? s0.lang : -1) * 8 + (s1.tokenize ? s1.lang : -1), s0.lowercase + 2 * s1.lowercase,
                        s0.normalize_punct + 2 * s1.normalize_punct,
                        s0.lang * 8 + s1.lang, sw_kind, sw_vocab, sw_joint, o->resume != NULL,
                        c->tied_emb, o->label_smoothing, o->dropout_emb, o->dropout_rnn, (double)o->lr_warmup,
                        (double)o->lr_decay_inv_sqrt, o->precision, o->pretrained != NULL};
    static const char *const names[] = {"--arch", "--src-vocab", "--tgt-vocab", "--emb", "--hid", "--att", "--maxout",
                                        "--window", "--fert-step-weight", "--fert-left-weight", "--max-len", "--batch",
                                        "--sort-blocks", "--reshuffle", "--optimizer", "--lr", "--clip", "--dropout",
                                        "--lr-decay", "--seed", "--init", "--max-nonfinite", "--max-updates", "--max-epochs",
                                        "--max-time", "--valid-every", "--save-every", "--patience", "--tokenize",
                                        "--lowercase", "--normalize-punct", "--lang", "--subwords", "--subword-vocab",
                                        "--joint", "--resume (given or not)", "--tied-embeddings", "--label-smoothing",
                                        "--dropout-emb", "--dropout-rnn", "--lr-warmup", "--lr-decay-inv-sqrt",
                                        "--precision", "--pretrained-model (given or not)"};
    int n = 0;
    for (; n < (int)(sizeof v / sizeof v[0]); n++) it[n] = (item){names[n], bits(v[n])};
    it[n++] = (item){"training corpus (its pairs as word ids: another corpus, vocabulary or text stages)", t->corpus_hash};
    it[n++] = (item){"dev set", t->dev.n ? train_corpus_hash(&t->dev) : 0};
    it[n++] = (item){"guided alignment (--guided-alignment given or not, its links, weight or cost)", guided_hash(t)};
    it[n++] = (item){"initial parameters (another --seed, checkpoint or --pretrained-model)", hash_model(t->m)};
    uint64_t pos[4] = {(uint64_t)t->update, (uint64_t)t->bat.epoch, (uint64_t)t->bat.next, (uint64_t)t->opt.step};
    uint64_t h = hash_bytes(hash_bytes(1469598103934665603ULL, pos, sizeof pos), t->bat.order, sizeof(int) * t->train.n);
    it[n++] = (item){"position in the training plan (another checkpoint)", h};
    return n;
}

#define MAX_ITEMS 64

int dist_check_inputs(trainer *t, nmt_err *err)
{
    if (!many(t)) return NMT_OK;
    item it[MAX_ITEMS];
    uint64_t h[MAX_ITEMS], *all = NULL;
    int n = input_items(t, it), which = 0;
    NMT_ASSERT(n <= MAX_ITEMS);
    for (int i = 0; i < n; i++) h[i] = it[i].h;
    if (!(all = malloc(sizeof(uint64_t) * n * t->comm->size))) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    int r = first_other(t, h, n, all, &which, err);
    free(all);
    if (r <= 0) return r < 0 ? NMT_ERR_IO : NMT_OK;
    char msg[400];
    snprintf(msg, sizeof msg, "rank %d's %s differs from rank 0's: every rank of a job must be given the same options and inputs",
             r, it[which].what);
    return shared_fail(t, NMT_ERR_MISMATCH, msg, err);
}
