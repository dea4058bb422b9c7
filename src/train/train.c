/* train.c: the training loop of MODEL.md section 4 with validation, early stopping and
 * checkpoints that make a killed run resumable bit for bit: a checkpoint holds the model, the
 * optimizer state, the batch plan with the position in it, and the RNG state, and is written
 * atomically (temporary file, fsync, rename). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "backend/backend.h"
#include "data/batcher.h"
#include "data/corpus.h"
#include "base/err.h"
#include "nn/model.h"
#include "nn/net.h"
#include "train/optim.h"
#include "io/safetensors.h"
#include "text/tokenize.h"
#include "data/vocab.h"

nmt_train_opts nmt_train_default_opts(void)
{
    nmt_train_opts o;
    memset(&o, 0, sizeof o);
    o.cfg = nmt_config_default();
    o.max_len = 50;
    o.batch = 80;
    o.sort_blocks = 20;
    o.optimizer = 0;
    o.clip = 1.0;
    o.seed = 1234;
    o.save_every = 1000;
    o.patience = 10;
    o.max_nonfinite = 10;
    o.tokenize_src = o.tokenize_tgt = -1;
    return o;
}

#define HOUR_LR 0.002
#define HOUR_DROPOUT 0.5
#define HOUR_LR_DECAY 0.5

int nmt_train_preset(nmt_train_opts *o, const char *name, nmt_err *err)
{
    if (!strcmp(name, "paper")) {
        nmt_train_opts d = nmt_train_default_opts();
        o->cfg = d.cfg;
        o->optimizer = d.optimizer; o->lr = d.lr; o->clip = d.clip; o->dropout = d.dropout; o->lr_decay = d.lr_decay;
        o->max_len = d.max_len; o->batch = d.batch; o->sort_blocks = d.sort_blocks;
        o->max_time = d.max_time; o->valid_every = d.valid_every; o->patience = d.patience;
        return NMT_OK;
    }
    if (!strcmp(name, "hour")) {
        /* the one-hour search of docs/RESULTS.md: Adadelta's attention barely starts learning in an
         * hour at this size; Adam overfits Multi30k within 5-8 epochs, which dropout and halving
         * the rate on plateaus hold off best */
        o->cfg.emb = o->cfg.hid = o->cfg.att = o->cfg.maxout = 256;
        o->cfg.src_vocab = o->cfg.tgt_vocab = 10000;
        o->optimizer = OPT_ADAM; o->lr = HOUR_LR; o->clip = 1; o->dropout = HOUR_DROPOUT; o->lr_decay = HOUR_LR_DECAY;
        o->max_time = 3600; o->valid_every = 0; o->patience = 4;
        return NMT_OK;
    }
    return nmt_fail(err, NMT_ERR_ARG, "unknown preset '%s' (expected paper or hour)", name);
}

typedef struct trainer {
    const nmt_train_opts *o;    /* &eff */
    nmt_train_opts eff;         /* the caller's options, with a resumed checkpoint's settings */
    nmt_train_cb cb;
    void *user;
    nmt_model *m;
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
    int bad_valid, nonfinite;
    double win_nll, win_t;      /* progress window */
    long win_sent, win_tok;
    double val_nll;             /* training NLL since the last validation (for the log) */
    long val_sent, val_tok;
    double val_step, val_left;  /* FertDec's costs since the last validation (unweighted sums) */
    rng drop_rng;               /* dropout masks */
    uint64_t corpus_hash;
    FILE *batch_log;
    char ckpt_path[4096], log_path[4096];
} trainer;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double elapsed(const trainer *t) { return t->elapsed0 + now() - t->t0; }

static void report(trainer *t, nmt_train_report *r)
{
    r->update = t->update;
    r->epoch = t->bat.epoch;
    r->epoch_frac = batcher_progress(&t->bat);
    r->elapsed = elapsed(t);
    if (t->cb) t->cb(r, t->user);
}

static void warn(trainer *t, const char *msg)
{
    nmt_train_report r;
    memset(&r, 0, sizeof r);
    r.kind = NMT_REPORT_WARN;
    r.msg = msg;
    report(t, &r);
}

static uint64_t hash_pairs(const pairs *p)
{
    uint64_t h = 1469598103934665603ULL;
    const int *arrs[2] = {p->src, p->tgt};
    long lens[2] = {p->src_off[p->n], p->tgt_off[p->n]};
    for (int a = 0; a < 2; a++)
        for (long i = 0; i < lens[a]; i++) { h ^= (uint64_t)arrs[a][i]; h *= 1099511628211ULL; }
    return h ^ (uint64_t)p->n;
}

/* ------------------------------------------------------------------ checkpoints */
static char *state_json(const trainer *t)
{
    const nmt_train_opts *o = t->o;
    cJSON *s = cJSON_CreateObject();
    char buf[64];
    cJSON_AddNumberToObject(s, "update", (double)t->update);
    cJSON_AddNumberToObject(s, "epoch", t->bat.epoch);
    cJSON_AddNumberToObject(s, "next", t->bat.next);
    cJSON_AddNumberToObject(s, "nb", t->bat.nb);
    cJSON *r = cJSON_AddArrayToObject(s, "rng");
    for (int i = 0; i < 4; i++) {
        snprintf(buf, sizeof buf, "%016llx", (unsigned long long)t->bat.r.s[i]);
        cJSON_AddItemToArray(r, cJSON_CreateString(buf));
    }
    snprintf(buf, sizeof buf, "%016llx", (unsigned long long)t->corpus_hash);
    cJSON_AddStringToObject(s, "corpus_hash", buf);
    cJSON_AddNumberToObject(s, "corpus_pairs", t->train.n);
    cJSON_AddNumberToObject(s, "best_dev", isfinite(t->best_dev) ? t->best_dev : -1);
    cJSON_AddNumberToObject(s, "bad_validations", t->bad_valid);
    cJSON_AddNumberToObject(s, "elapsed", elapsed(t));
    cJSON_AddNumberToObject(s, "val_nll", t->val_nll);
    cJSON_AddNumberToObject(s, "val_sent", (double)t->val_sent);
    cJSON_AddNumberToObject(s, "val_tok", (double)t->val_tok);
    cJSON_AddNumberToObject(s, "val_step", t->val_step);
    cJSON_AddNumberToObject(s, "val_left", t->val_left);
    cJSON *dr = cJSON_AddArrayToObject(s, "drop_rng");
    for (int i = 0; i < 4; i++) {
        snprintf(buf, sizeof buf, "%016llx", (unsigned long long)t->drop_rng.s[i]);
        cJSON_AddItemToArray(dr, cJSON_CreateString(buf));
    }
    cJSON_AddNumberToObject(s, "dropout", o->dropout);
    cJSON_AddStringToObject(s, "optimizer", optim_name(t->opt.kind));
    cJSON_AddNumberToObject(s, "lr", t->opt.lr);
    cJSON_AddNumberToObject(s, "lr_decay", o->lr_decay);
    cJSON_AddNumberToObject(s, "opt_step", (double)t->opt.step);
    cJSON_AddNumberToObject(s, "clip", o->clip);
    cJSON_AddNumberToObject(s, "batch", t->bat.B);
    cJSON_AddNumberToObject(s, "sort_blocks", t->bat.k);
    cJSON_AddBoolToObject(s, "reshuffle", t->bat.reshuffle);
    cJSON_AddNumberToObject(s, "max_len", o->max_len);
    char *js = cJSON_PrintUnformatted(s);
    cJSON_Delete(s);
    return js;
}

static int save_checkpoint(trainer *t, nmt_err *err)
{
    st_writer *w = st_writer_init();
    if (!w) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    int rc = model_to_writer(t->m, w, err);
    char *js = state_json(t);
    int64_t tot = (int64_t)t->m->pt.total, n = t->train.n, nb1 = t->bat.nb + 1;
    if (!rc && (!js || st_writer_meta(w, "train_state", js))) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    optim_settle(&t->opt); /* the state eager updates would have left */
    for (int i = 0; !rc && i < optim_state_count(&t->opt); i++) {
        char name[64];
        optim_state_name(&t->opt, i, 0, name, sizeof name);
        if (st_writer_add(w, name, model_real_dtype(), 1, &tot, optim_state(&t->opt, i))) rc = NMT_ERR_NOMEM;
    }
    if (!rc && (st_writer_add(w, "train.shuffled", ST_I32, 1, &n, t->bat.shuffled) ||
                st_writer_add(w, "train.order", ST_I32, 1, &n, t->bat.order) ||
                st_writer_add(w, "train.starts", ST_I32, 1, &nb1, t->bat.starts)))
        rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if (!rc) rc = st_writer_save(w, t->ckpt_path, err);
    cJSON_free(js);
    st_writer_free(w);
    if (!rc) {
        nmt_train_report r;
        memset(&r, 0, sizeof r);
        r.kind = NMT_REPORT_SAVE;
        r.msg = t->ckpt_path;
        report(t, &r);
    }
    return rc;
}

static int json_num(cJSON *s, const char *k, double *v)
{
    cJSON *it = cJSON_GetObjectItemCaseSensitive(s, k);
    if (!cJSON_IsNumber(it)) return -1;
    *v = it->valuedouble;
    return 0;
}

/* Restores optimizer, batcher and counters from an opened checkpoint (model already loaded). */
/* The checkpoint's train_state as a JSON object in *out (the caller deletes it). */
static int train_state(const st_file *f, cJSON **out, nmt_err *err)
{
    const char *js = st_meta(f, "train_state");
    if (!js) return nmt_fail(err, NMT_ERR_FORMAT, "%s: a model, not a training checkpoint (no train_state)", st_name(f));
    *out = cJSON_Parse(js);
    if (cJSON_IsObject(*out)) return NMT_OK;
    cJSON_Delete(*out);
    *out = NULL;
    return nmt_fail(err, NMT_ERR_FORMAT, "%s: train_state is not a JSON object", st_name(f));
}

static int restore_state(trainer *t, const st_file *f, nmt_err *err)
{
    const char *path = st_name(f);
    cJSON *s;
    int rc = train_state(f, &s, err);
    if (rc) return rc;
    double upd, ep, next, nb, best, badv, el, vn, vs, vtk, step, pairs_n;
    cJSON *rng_a = cJSON_GetObjectItemCaseSensitive(s, "rng"), *hash = cJSON_GetObjectItemCaseSensitive(s, "corpus_hash");
    if (json_num(s, "update", &upd) || json_num(s, "epoch", &ep) || json_num(s, "next", &next) || json_num(s, "nb", &nb) ||
        json_num(s, "best_dev", &best) || json_num(s, "bad_validations", &badv) || json_num(s, "elapsed", &el) ||
        json_num(s, "val_nll", &vn) || json_num(s, "val_sent", &vs) || json_num(s, "val_tok", &vtk) ||
        json_num(s, "opt_step", &step) || json_num(s, "corpus_pairs", &pairs_n) || !cJSON_IsArray(rng_a) ||
        cJSON_GetArraySize(rng_a) != 4 || !cJSON_IsString(hash)) {
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: train_state lacks a field or has one of the wrong type", path);
        goto out;
    }
    unsigned long long h = strtoull(hash->valuestring, NULL, 16);
    if ((int)pairs_n != t->train.n || h != t->corpus_hash) {
        rc = nmt_fail(err, NMT_ERR_MISMATCH, "%s was trained on another corpus (%d pairs after filtering, now %d): resume with the same --src/--tgt and length limit",
                      path, (int)pairs_n, t->train.n);
        goto out;
    }
    if (nb < 1 || nb > t->train.n + 1 || next < 0 || next > nb || ep < 1) {
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: train_state has an impossible position", path);
        goto out;
    }
    for (int i = 0; i < 4; i++) t->bat.r.s[i] = strtoull(cJSON_GetArrayItem(rng_a, i)->valuestring, NULL, 16);
    cJSON *dr = cJSON_GetObjectItemCaseSensitive(s, "drop_rng");
    if (cJSON_IsArray(dr) && cJSON_GetArraySize(dr) == 4)
        for (int i = 0; i < 4; i++) {
            cJSON *it = cJSON_GetArrayItem(dr, i);
            if (cJSON_IsString(it)) t->drop_rng.s[i] = strtoull(it->valuestring, NULL, 16);
        }
    double vstep = 0, vleft = 0;
    json_num(s, "val_step", &vstep);
    json_num(s, "val_left", &vleft);
    t->val_step = vstep;
    t->val_left = vleft;
    t->update = (long)upd;
    t->bat.epoch = (int)ep;
    t->bat.nb = (int)nb;
    t->bat.next = (int)next;
    t->best_dev = best < 0 ? INFINITY : best;
    t->bad_valid = (int)badv;
    t->elapsed0 = el;
    t->val_nll = vn;
    t->val_sent = (long)vs;
    t->val_tok = (long)vtk;
    t->opt.step = (long)step;
    size_t tot = t->m->pt.total;
    for (int i = 0; i < optim_state_count(&t->opt); i++) {
        char name[64], old[64];
        real *st = optim_state(&t->opt, i);
        optim_state_name(&t->opt, i, 0, name, sizeof name);
        optim_state_name(&t->opt, i, 1, old, sizeof old);
        const char *nm = !st_find(f, name) && st_find(f, old) ? old : name; /* old: an earlier checkpoint */
        if ((rc = sizeof(real) == 4 ? st_read_f32(f, nm, (float *)(void *)st, tot, err)
                                    : st_read_f64(f, nm, (double *)(void *)st, tot, err))) goto out;
    }
    int64_t *tmp = malloc(sizeof(int64_t) * (t->train.n + 2));
    if (!tmp) { rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); goto out; }
    struct { const char *name; int *dst; long n; } arr[3] = {
        {"train.shuffled", t->bat.shuffled, t->train.n}, {"train.order", t->bat.order, t->train.n},
        {"train.starts", t->bat.starts, t->bat.nb + 1}};
    for (int a = 0; a < 3 && !rc; a++) {
        rc = st_read_i64(f, arr[a].name, tmp, arr[a].n, err);
        for (long i = 0; i < arr[a].n && !rc; i++) {
            if (tmp[i] < 0 || tmp[i] > t->train.n)
                rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: %s holds an out-of-range index", path, arr[a].name);
            else arr[a].dst[i] = (int)tmp[i];
        }
    }
    free(tmp);
out:
    cJSON_Delete(s);
    return rc;
}

/* ------------------------------------------------------------------ validation */
/* Summed NLL and target-token count (EOS included) of a pair set, in sorted batches of B. */
static int evaluate(trainer *t, const pairs *p, double *nll, long *ntok, nmt_err *err)
{
    int *idx = malloc(sizeof(int) * (p->n ? p->n : 1));
    batch_buf vb;
    int rc = batch_buf_init(&vb, p, t->bat.B, err);
    if (!idx || rc) { free(idx); batch_buf_free(&vb); return rc ? rc : nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); }
    for (int i = 0; i < p->n; i++) idx[i] = i;
    sort_by_length(idx, p->n, p);
    *nll = 0;
    *ntok = 0;
    net_set_dropout(&t->ws, 0, NULL); /* the model as it translates */
    for (int s = 0; s < p->n && !rc; s += t->bat.B) {
        int cnt = p->n - s < t->bat.B ? p->n - s : t->bat.B;
        batch_fill(&vb, p, idx + s, cnt);
        rc = net_ws_reserve(&t->ws, &t->m->cfg, cnt, vb.b.Tx, vb.b.Ty, err);
        if (rc) break;
        *nll += net_forward(&t->ws, &t->m->cfg, &t->m->p, &vb.b, NULL);
        for (int r = 0; r < cnt; r++) *ntok += vb.b.ylen[r];
    }
    free(idx);
    batch_buf_free(&vb);
    net_set_dropout(&t->ws, t->o->dropout, &t->drop_rng);
    return rc;
}

static int validate(trainer *t, int *stop, nmt_err *err)
{
    nmt_train_report r;
    memset(&r, 0, sizeof r);
    r.kind = NMT_REPORT_VALID;
    double nll = 0;
    long ntok = 0;
    int rc;
    if (t->dev.n > 0) {
        if ((rc = evaluate(t, &t->dev, &nll, &ntok, err))) return rc;
        r.dev_nll = nll / t->dev.n;
        r.dev_nll_tok = nll / ntok;
        r.dev_ppl = exp(r.dev_nll_tok);
        r.improved = r.dev_nll < t->best_dev;
        if (r.improved) {
            t->best_dev = r.dev_nll;
            t->bad_valid = 0;
            if ((rc = nmt_model_save(t->m, t->o->model, err))) return rc;
        } else {
            t->bad_valid++;
            if (t->o->lr_decay > 0) t->opt.lr *= t->o->lr_decay;
        }
        r.bad_validations = t->bad_valid;
        if (t->o->patience > 0 && t->bad_valid >= t->o->patience) *stop = 1;
    }
    /* the Table-2 style log */
    FILE *f = fopen(t->log_path, "a");
    if (f) {
        if (ftell(f) == 0)
            fprintf(f, "update\tepoch\thours\ttrain_nll\ttrain_ppl\tdev_nll\tdev_nll_tok\tdev_ppl\tbest\tfert_step\tfert_left\n");
        double tn = t->val_sent ? t->val_nll / t->val_sent : NAN, tp = t->val_tok ? exp(t->val_nll / t->val_tok) : NAN;
        fprintf(f, "%ld\t%.4f\t%.4f\t%.4f\t%.3f\t", t->update, t->bat.epoch - 1 + batcher_progress(&t->bat), elapsed(t) / 3600, tn, tp);
        if (t->dev.n > 0) fprintf(f, "%.4f\t%.5f\t%.3f\t%d\t", r.dev_nll, r.dev_nll_tok, r.dev_ppl, r.improved);
        else fprintf(f, "\t\t\t\t");
        /* FertDec's step-decay and left-over costs per training sentence, unweighted */
        if (has_fertdec(&t->m->cfg) && t->val_sent) fprintf(f, "%.4f\t%.4f\n", t->val_step / t->val_sent, t->val_left / t->val_sent);
        else fprintf(f, "\t\n");
        if (fclose(f)) warn(t, "could not write the training log");
    } else {
        warn(t, "could not open the training log for appending");
    }
    t->val_nll = t->val_step = t->val_left = 0;
    t->val_sent = t->val_tok = 0;
    r.lr = t->opt.lr;
    report(t, &r);
    return NMT_OK;
}

/* ------------------------------------------------------------------ set-up */
static double mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb * 1024;
}

static int build_vocabs(trainer *t, vocab **sv, vocab **tv, nmt_err *err)
{
    wordcount ws_, wt_;
    int rc = wordcount_build(&ws_, &t->ts, err);
    if (rc) return rc;
    if ((rc = wordcount_build(&wt_, &t->tt, err))) { wordcount_free(&ws_); return rc; }
    rc = vocab_from_counts(sv, &ws_, t->o->cfg.src_vocab, err);
    if (!rc) rc = vocab_from_counts(tv, &wt_, t->o->cfg.tgt_vocab, err);
    wordcount_free(&ws_);
    wordcount_free(&wt_);
    return rc;
}

/* Replaces every line of t by its Moses tokenization (raw text in, as the model's data). */
static int tokenize_file(textfile *t, int lang, const nmt_train_opts *o, nmt_err *err)
{
    if (lang < 0) return NMT_OK;
    tok_opts to = tok_opts_default();
    to.lang = lang;
    to.lowercase = o->tok_lowercase;
    to.normalize = o->tok_normalize;
    tok_buf b;
    tok_buf_init(&b);
    size_t cap = 1 << 20, len = 0;
    char *pool = malloc(cap);
    size_t *off = malloc(sizeof(size_t) * (t->nlines ? t->nlines : 1));
    int rc = pool && off ? NMT_OK : nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    for (long i = 0; i < t->nlines && !rc; i++) {
        if ((rc = tok_line(&to, t->line[i], strlen(t->line[i]), &b, err))) {
            nmt_fail(err, rc, "%s:%ld: tokenizing failed", t->path, i + 1);
            break;
        }
        if (len + b.len + 1 > cap) {
            while (len + b.len + 1 > cap) cap *= 2;
            char *np = realloc(pool, cap);
            if (!np) { rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); break; }
            pool = np;
        }
        memcpy(pool + len, b.s, b.len);
        pool[len + b.len] = 0;
        off[i] = len;
        len += b.len + 1;
    }
    if (!rc) { /* the tokenized text takes the place of the raw text */
        free(t->buf);
        t->buf = pool;
        for (long i = 0; i < t->nlines; i++) t->line[i] = pool + off[i];
        pool = NULL;
    }
    free(pool);
    free(off);
    tok_buf_free(&b);
    return rc;
}

/* A resumed run goes on as it started: optimizer, learning rate (decayed so far), clipping, dropout
 * and batching come from the checkpoint, whatever the command line says; only the stopping
 * limits are new. A batch size other than the checkpoint's would not even fit its saved order. */
static int resume_settings(trainer *t, const st_file *f, nmt_err *err)
{
    cJSON *s;
    int rc = train_state(f, &s, err);
    if (rc) return rc;
    double lr, clip, drop, bsz, blocks, decay = 0;
    cJSON *opt = cJSON_GetObjectItemCaseSensitive(s, "optimizer"), *re = cJSON_GetObjectItemCaseSensitive(s, "reshuffle");
    int kind = cJSON_IsString(opt) ? optim_parse(opt->valuestring) : -1;
    int bad = kind < 0 || !cJSON_IsBool(re) || json_num(s, "lr", &lr) || json_num(s, "clip", &clip) ||
              json_num(s, "dropout", &drop) || json_num(s, "batch", &bsz) || json_num(s, "sort_blocks", &blocks) ||
              !(lr > 0) || !(clip >= 0) || !(drop >= 0 && drop < 1) || bsz < 1 || blocks < 1;
    json_num(s, "lr_decay", &decay); /* absent from checkpoints written before it existed */
    if (!bad) {
        nmt_train_opts *e = &t->eff;
        e->optimizer = kind; e->lr = lr; e->clip = clip; e->dropout = drop; e->lr_decay = decay;
        e->batch = (int)bsz; e->sort_blocks = (int)blocks; e->reshuffle = cJSON_IsTrue(re);
    }
    cJSON_Delete(s);
    return bad ? nmt_fail(err, NMT_ERR_FORMAT, "%s: train_state lacks the optimizer or batching settings", st_name(f)) : NMT_OK;
}

/* A resumed run keeps the log's first `update` lines and drops the rest: updates done after the
 * checkpoint by the interrupted process are redone, so the log matches an uninterrupted run. */
static int open_batch_log(trainer *t, nmt_err *err)
{
    const char *path = t->o->batch_log;
    FILE *f = t->o->resume ? fopen(path, "r+") : NULL;
    if (f) {
        long lines = 0, pos = 0;
        int ch;
        while (lines < t->update && (ch = getc(f)) != EOF) {
            pos++;
            if (ch == '\n') lines++;
        }
        if (ferror(f) || fflush(f) || ftruncate(fileno(f), pos) || fseek(f, 0, SEEK_END)) {
            fclose(f);
            return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
        }
    } else if (!(f = fopen(path, "w"))) {
        return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
    }
    t->batch_log = f;
    return NMT_OK;
}

static int setup(trainer *t, st_file **ck, nmt_err *err)
{
    const nmt_train_opts *o = t->o;
    int rc;
    if (!o->src || !o->tgt || !o->model) return nmt_fail(err, NMT_ERR_ARG, "training needs a source file, a target file and a model path");
    if (!o->valid_src != !o->valid_tgt) return nmt_fail(err, NMT_ERR_ARG, "a dev set needs both a source and a target file");
    if (o->batch < 1 || o->sort_blocks < 1) return nmt_fail(err, NMT_ERR_ARG, "batch size and sort blocks must be at least 1");
    snprintf(t->ckpt_path, sizeof t->ckpt_path, "%s", o->checkpoint ? o->checkpoint : "");
    if (!o->checkpoint) snprintf(t->ckpt_path, sizeof t->ckpt_path, "%s.ckpt", o->model);
    if (o->log_tsv) snprintf(t->log_path, sizeof t->log_path, "%s", o->log_tsv);
    else snprintf(t->log_path, sizeof t->log_path, "%s.log.tsv", o->model);
    /* every input is read and checked before any training starts */
    if ((rc = textfile_read(&t->ts, o->src, err)) || (rc = textfile_read(&t->tt, o->tgt, err))) return rc;
    if (t->ts.nlines != t->tt.nlines)
        return nmt_fail(err, NMT_ERR_MISMATCH, "%s has %ld lines but %s has %ld", o->src, t->ts.nlines, o->tgt, t->tt.nlines);
    if ((rc = tokenize_file(&t->ts, o->tokenize_src, o, err)) || (rc = tokenize_file(&t->tt, o->tokenize_tgt, o, err)))
        return rc;
    if (o->valid_src) {
        if ((rc = textfile_read(&t->vs, o->valid_src, err)) || (rc = textfile_read(&t->vt, o->valid_tgt, err))) return rc;
        if (t->vs.nlines != t->vt.nlines)
            return nmt_fail(err, NMT_ERR_MISMATCH, "%s has %ld lines but %s has %ld", o->valid_src, t->vs.nlines,
                            o->valid_tgt, t->vt.nlines);
        if ((rc = tokenize_file(&t->vs, o->tokenize_src, o, err)) || (rc = tokenize_file(&t->vt, o->tokenize_tgt, o, err)))
            return rc;
    }
    /* vocabularies, then the id sequences, then the checks, and only then the big allocations */
    vocab *sv = NULL, *tv = NULL;
    nmt_config cfg = o->cfg;
    if (o->resume) {
        if ((rc = st_open(ck, o->resume, err))) return rc; /* tensors read on demand: never held twice */
        if ((rc = model_from_file(&t->m, *ck, err)) || (rc = resume_settings(t, *ck, err))) return rc;
        sv = t->m->src;
        tv = t->m->tgt;
        cfg = t->m->cfg;
    } else {
        if ((rc = nmt_config_check(&o->cfg, err))) return rc;
        if ((rc = build_vocabs(t, &sv, &tv, err))) { vocab_free(sv); return rc; }
        cfg.src_vocab = sv->n; /* a corpus with fewer types than asked gives a smaller shortlist */
        cfg.tgt_vocab = tv->n;
    }
    const nmt_config *c = &cfg;
    rc = pairs_build(&t->train, &t->ts, &t->tt, sv, tv, o->max_len, err);
    if (!rc && t->train.n == 0)
        rc = nmt_fail(err, NMT_ERR_ARG, "%s: no sentence pair is left after skipping empty pairs and pairs over %d words",
                      o->src, o->max_len);
    if (!rc && o->valid_src) rc = pairs_build(&t->dev, &t->vs, &t->vt, sv, tv, 0, err);
    if (!rc && !o->resume && (rc = nmt_config_check(c, err)))
        nmt_fail(err, rc, "%s: the corpus yields too small a vocabulary (%d source and %d target entries)", o->src,
                 c->src_vocab, c->tgt_vocab);
    if (rc) {
        if (!t->m) { vocab_free(sv); vocab_free(tv); }
        return rc;
    }
    t->corpus_hash = hash_pairs(&t->train);
    /* refuse up front what cannot fit */
    int mx = 1, my = 1;
    const pairs *sets[2] = {&t->train, &t->dev};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < sets[s]->n; i++) {
            if (pair_src_len(sets[s], i) > mx) mx = pair_src_len(sets[s], i);
            if (pair_tgt_len(sets[s], i) > my) my = pair_tgt_len(sets[s], i);
        }
    int nstate = optim_kind_states(o->optimizer);
    param_table pt;
    param_table_build(&pt, c);
    /* the corpus is already in memory: what is left to allocate is this */
    double pbytes = (double)sizeof(real) * pt.total * (2 + nstate);
    double need = pbytes + (double)net_ws_bytes(c, o->batch, mx, my);
    double avail = o->max_memory > 0 ? o->max_memory : mem_available();
    if (avail > 0 && need > avail) {
        if (!o->resume) { vocab_free(sv); vocab_free(tv); }
        return nmt_fail(err, NMT_ERR_NOMEM,
                        "this configuration needs about %.2f GB (%.2f GB of parameters, gradients and optimizer state, %.2f GB of workspace for batches of %d up to %d x %d tokens) but %.2f GB is available",
                        need / 1e9, pbytes / 1e9, net_ws_bytes(c, o->batch, mx, my) / 1e9, o->batch, mx, my, avail / 1e9);
    }
    if (!o->resume) { /* the new model takes ownership of the vocabularies */
        if ((rc = model_alloc(&t->m, c, sv, tv, err))) { vocab_free(sv); vocab_free(tv); return rc; }
        rng r;
        rng_seed(&r, o->seed);
        if (params_init(&t->m->pt, t->m->P, c->hid, &r)) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        c = &t->m->cfg;
    }
    t->G = calloc(t->m->pt.total, sizeof(real));
    if (!t->G) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for gradients");
    params_point(&t->g, &t->m->pt, t->G);
    if ((rc = optim_init(&t->opt, o->optimizer, t->m->pt.total, err))) return rc;
    if ((rc = optim_sparse_embeddings(&t->opt, &t->m->pt, err))) return rc;
    if (o->lr > 0) t->opt.lr = o->lr;
    if ((rc = batcher_init(&t->bat, &t->train, o->batch, o->sort_blocks, o->reshuffle, o->seed, err))) return rc;
    if (!(o->dropout >= 0 && o->dropout < 1)) return nmt_fail(err, NMT_ERR_ARG, "dropout %g out of range [0, 1)", o->dropout);
    rng_seed(&t->drop_rng, o->seed ^ 0xd0d0d0d0ULL);
    if ((rc = batch_buf_init(&t->bb, &t->train, o->batch, err))) return rc;
    if ((rc = net_ws_reserve(&t->ws, c, o->batch, mx, my, err))) return rc;
    net_set_dropout(&t->ws, o->dropout, &t->drop_rng);
    t->best_dev = INFINITY;
    if (o->resume && (rc = restore_state(t, *ck, err))) return rc;
    if (o->batch_log && (rc = open_batch_log(t, err))) return rc;
    return NMT_OK;
}

static void summary(trainer *t, char *buf, size_t n)
{
    const nmt_config *c = &t->m->cfg;
    const pairs *p = &t->train;
    int k = snprintf(buf, n,
                     "%s model: vocab %d/%d, emb %d, hid %d, att %d, maxout %d: %zu parameters (%.1f MB)\n"
                     "training: %ld lines, %d pairs kept, %ld skipped as empty, %ld over %d words; UNK rate src %.2f%%, tgt %.2f%%\n",
                     nmt_arch_name(c->arch), c->src_vocab, c->tgt_vocab, c->emb, c->hid, c->att, c->maxout, t->m->pt.total,
                     t->m->pt.total * sizeof(real) / 1e6, p->nlines, p->n, p->empty, p->too_long, t->o->max_len,
                     100.0 * p->src_unk / (p->src_tokens ? p->src_tokens : 1), 100.0 * p->tgt_unk / (p->tgt_tokens ? p->tgt_tokens : 1));
    if (k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - k, "dev: %d pairs%s; optimizer %s (lr %g%s), clip %g, dropout %g, batches of %d in blocks of %d, %s order, seed %llu",
                      t->dev.n, t->dev.n ? "" : " (no validation)", optim_name(t->opt.kind), t->opt.lr, t->o->lr_decay > 0 ? ", decayed on plateaus" : "", t->o->clip, t->o->dropout, t->bat.B,
                      t->bat.B * t->bat.k, t->bat.reshuffle ? "reshuffled" : "paper", (unsigned long long)t->o->seed);
    if (t->o->resume && k > 0 && (size_t)k < n)
        snprintf(buf + k, n - k, "\nresumed from %s at update %ld (epoch %d)", t->o->resume, t->update, t->bat.epoch);
}

static void cleanup(trainer *t)
{
    if (t->batch_log) fclose(t->batch_log); /* errors are caught by the flush after each update */
    nmt_model_free(t->m);
    free(t->G);
    optim_free(&t->opt);
    textfile_free(&t->ts); textfile_free(&t->tt); textfile_free(&t->vs); textfile_free(&t->vt);
    pairs_free(&t->train);
    pairs_free(&t->dev);
    batcher_free(&t->bat);
    batch_buf_free(&t->bb);
    net_ws_free(&t->ws);
}

/* ------------------------------------------------------------------ the loop */
/* One line per update, flushed, so that a killed run's log ends with the last update started. */
static int log_batch(trainer *t, const int *ids, int cnt, nmt_err *err)
{
    for (int i = 0; i < cnt; i++) fprintf(t->batch_log, i ? " %ld" : "%ld", t->train.line[ids[i]]);
    fputc('\n', t->batch_log);
    if (fflush(t->batch_log) || ferror(t->batch_log))
        return nmt_fail(err, NMT_ERR_IO, "%s: write failed: %s", t->o->batch_log, strerror(errno));
    return NMT_OK;
}

static double eta(const trainer *t, double per_update)
{
    const nmt_train_opts *o = t->o;
    double best = -1;
    if (o->max_updates > 0) best = (o->max_updates - t->update) * per_update;
    if (o->max_epochs > 0) {
        double left = ((double)o->max_epochs - t->bat.epoch) * t->bat.nb + (t->bat.nb - t->bat.next);
        if (best < 0 || left * per_update < best) best = left * per_update;
    }
    if (o->max_time > 0) {
        double left = o->max_time - elapsed(t);
        if (best < 0 || left < best) best = left;
    }
    return best < 0 ? -1 : best;
}

int nmt_train(const nmt_train_opts *o, nmt_train_cb cb, void *user, nmt_err *err)
{
    trainer *t = calloc(1, sizeof *t);
    if (!t) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    t->eff = *o;
    t->o = o = &t->eff;
    t->cb = cb;
    t->user = user;
    t->t0 = now();
    if (o->threads > 0) backend()->set_threads(o->threads);
    st_file *ck = NULL;
    int rc = setup(t, &ck, err);
    st_free(ck);
    if (rc) { cleanup(t); free(t); return rc; }
    char sum[2048];
    summary(t, sum, sizeof sum);
    nmt_train_report r;
    memset(&r, 0, sizeof r);
    r.kind = NMT_REPORT_START;
    r.msg = sum;
    report(t, &r);

    const nmt_config *c = &t->m->cfg;
    int stop = 0, validated_now = 0;
    double since_upd = now();
    long win_upd = 0;
    /* the ETA uses the mean time per update of this run (validations included): a short window
     * would swing with the length-sorted batches, which run from short to long in every block */
    const double run_t0 = since_upd;
    const long run_u0 = t->update;
    while (!stop) {
        int cnt;
        const int *ids = batcher_next(&t->bat, &cnt);
        batch_fill(&t->bb, &t->train, ids, cnt);
        batch *b = &t->bb.b;
        if (t->batch_log && (rc = log_batch(t, ids, cnt, err))) break;
        /* t->G is all zeros here: calloc'd, then zeroed by every optim_step */
        double nll = net_forward(&t->ws, c, &t->m->p, b, NULL);
        double extra = net_extra_cost(&t->ws, c); /* FertDec's costs, 0 otherwise */
        double norm = NAN;
        int step_rc = NMT_ERR_NUMERIC;
        if (isfinite(nll) && isfinite(extra)) {
            net_backward(&t->ws, c, &t->m->p, &t->g, b, (real)1 / b->B);
            step_rc = optim_step(&t->opt, t->m->P, t->G, o->clip, &norm);
        }
        t->update++;
        validated_now = 0;
        if (step_rc) {
            char msg[160];
            snprintf(msg, sizeof msg, "update %ld: %s cost or gradient; update skipped", t->update, isfinite(nll) ? "non-finite" : "NaN/Inf");
            warn(t, msg);
            if (++t->nonfinite > o->max_nonfinite) {
                rc = nmt_fail(err, NMT_ERR_NUMERIC, "%d updates in a row had a non-finite cost or gradient; stopped (the last checkpoint, %s, is intact)",
                              t->nonfinite, t->ckpt_path);
                break;
            }
        } else {
            t->nonfinite = 0;
            long tok = 0;
            for (int i = 0; i < b->B; i++) tok += b->ylen[i];
            t->win_nll += nll; t->win_sent += b->B; t->win_tok += tok;
            t->val_nll += nll; t->val_sent += b->B; t->val_tok += tok;
            t->val_step += t->ws.dec.cost_step;
            t->val_left += t->ws.dec.cost_left;
        }
        win_upd++;
        double tnow = now();
        if (tnow - since_upd >= 0.5 || win_upd >= 50) { /* the callback decides what to show */
            memset(&r, 0, sizeof r);
            r.kind = NMT_REPORT_PROGRESS;
            r.cost = t->win_sent ? t->win_nll / t->win_sent : NAN;
            r.grad_norm = norm;
            r.tok_per_s = t->win_tok / (tnow - since_upd);
            r.eta = eta(t, (tnow - run_t0) / (double)(t->update - run_u0)); /* >= 1: counted above */
            report(t, &r);
            t->win_nll = 0; t->win_sent = t->win_tok = 0;
            since_upd = tnow;
            win_upd = 0;
        }
        int epoch_end = t->bat.next >= t->bat.nb;
        if ((o->valid_every > 0 && t->update % o->valid_every == 0) || (o->valid_every <= 0 && epoch_end)) {
            if ((rc = validate(t, &stop, err))) break;
            validated_now = 1;
            if ((rc = save_checkpoint(t, err))) break;
        } else if (o->save_every > 0 && t->update % o->save_every == 0) {
            if ((rc = save_checkpoint(t, err))) break;
        }
        if (o->max_updates > 0 && t->update >= o->max_updates) stop = 1;
        if (o->max_epochs > 0 && epoch_end && t->bat.epoch >= o->max_epochs) stop = 1;
        if (o->max_time > 0 && elapsed(t) >= o->max_time) stop = 1;
        if (o->stop && *o->stop) { stop = 1; rc = NMT_ERR_INTERRUPTED; }
    }
    if (rc == NMT_OK || rc == NMT_ERR_INTERRUPTED) {
        int ignored = 0, rc2 = NMT_OK;
        if (!validated_now && rc == NMT_OK) rc2 = validate(t, &ignored, err);
        if (!rc2 && (!validated_now || rc == NMT_ERR_INTERRUPTED)) rc2 = save_checkpoint(t, err);
        if (!rc2 && t->dev.n == 0) rc2 = nmt_model_save(t->m, o->model, err);
        if (rc2) rc = rc2;
        else if (rc == NMT_ERR_INTERRUPTED) nmt_fail(err, rc, "interrupted at update %ld; resume with --resume %s", t->update, t->ckpt_path);
    }
    memset(&r, 0, sizeof r);
    r.kind = NMT_REPORT_END;
    r.msg = rc == NMT_OK ? "done" : "stopped";
    report(t, &r);
    cleanup(t);
    free(t);
    return rc;
}
