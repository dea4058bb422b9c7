/* checkpoint.c: a training checkpoint is a model file plus the run's state: the optimizer's
 * tensors, the batch plan and the position in it, both RNG states and the counters (train_state,
 * JSON metadata), so that a killed run resumes bit for bit. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "train/trainer.h"

uint64_t train_corpus_hash(const pairs *p)
{
    uint64_t h = 1469598103934665603ULL;
    const int *arrs[2] = {p->src, p->tgt};
    long lens[2] = {p->src_off[p->n], p->tgt_off[p->n]};
    for (int a = 0; a < 2; a++)
        for (long i = 0; i < lens[a]; i++) { h ^= (uint64_t)arrs[a][i]; h *= 1099511628211ULL; }
    return h ^ (uint64_t)p->n;
}

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
    cJSON_AddNumberToObject(s, "elapsed", train_elapsed(t));
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

int ckpt_save(trainer *t, nmt_err *err)
{
    st_writer *w = st_writer_init();
    if (!w) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    int rc = model_to_writer(t->m, w, err);
    char *js = state_json(t);
    int64_t tot = (int64_t)t->m->pt.total, n = t->train.n, nb1 = t->bat.nb + 1;
    if (!rc && (!js || st_writer_meta(w, "train_state", js))) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    optim_settle(&t->opt); /* the state eager updates would have left */
    if (!rc && t->opt.s1 && st_writer_add(w, "opt.s1", model_real_dtype(), 1, &tot, t->opt.s1)) rc = NMT_ERR_NOMEM;
    if (!rc && t->opt.s2 && st_writer_add(w, "opt.s2", model_real_dtype(), 1, &tot, t->opt.s2)) rc = NMT_ERR_NOMEM;
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
        train_report(t, &r);
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
static int ckpt_state(const st_file *f, cJSON **out, nmt_err *err)
{
    const char *js = st_meta(f, "train_state");
    if (!js) return nmt_fail(err, NMT_ERR_FORMAT, "%s: a model, not a training checkpoint (no train_state)", st_name(f));
    *out = cJSON_Parse(js);
    if (cJSON_IsObject(*out)) return NMT_OK;
    cJSON_Delete(*out);
    *out = NULL;
    return nmt_fail(err, NMT_ERR_FORMAT, "%s: train_state is not a JSON object", st_name(f));
}

int ckpt_restore(trainer *t, const st_file *f, nmt_err *err)
{
    const char *path = st_name(f);
    cJSON *s;
    int rc = ckpt_state(f, &s, err);
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
    if (t->opt.s1 && (rc = sizeof(real) == 4 ? st_read_f32(f, "opt.s1", (float *)(void *)t->opt.s1, tot, err)
                                             : st_read_f64(f, "opt.s1", (double *)(void *)t->opt.s1, tot, err))) goto out;
    if (t->opt.s2 && (rc = sizeof(real) == 4 ? st_read_f32(f, "opt.s2", (float *)(void *)t->opt.s2, tot, err)
                                             : st_read_f64(f, "opt.s2", (double *)(void *)t->opt.s2, tot, err))) goto out;
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

/* Appends a printf-style note to buf (size bytes, always terminated). */
static void append(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...)
{
    size_t k = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    if (k < size) vsnprintf(buf + k, size - k, fmt, ap);
    va_end(ap);
}

/* Warns when the settings a resumed run takes from its checkpoint are not those the caller gave
 * (e: the caller's, before ckpt_settings replaces them): the run goes on as it started. The
 * learning rate is left out when it decays, as the checkpoint holds the lowered one. */
static void warn_replaced(trainer *t, const nmt_train_opts *now, const st_file *f)
{
    const nmt_train_opts *e = &t->eff;
    char msg[768] = "";
    if (e->optimizer != now->optimizer)
        append(msg, sizeof msg, ", optimizer %s (not %s)", optim_name(now->optimizer), optim_name(e->optimizer));
    if (e->lr > 0 && now->lr_decay == 0 && e->lr != now->lr) append(msg, sizeof msg, ", learning rate %g (not %g)", now->lr, e->lr);
    if (e->clip != now->clip) append(msg, sizeof msg, ", clipping %g (not %g)", now->clip, e->clip);
    if (e->dropout != now->dropout) append(msg, sizeof msg, ", dropout %g (not %g)", now->dropout, e->dropout);
    if (e->lr_decay != now->lr_decay) append(msg, sizeof msg, ", learning-rate decay %g (not %g)", now->lr_decay, e->lr_decay);
    if (e->batch != now->batch) append(msg, sizeof msg, ", batch %d (not %d)", now->batch, e->batch);
    if (e->sort_blocks != now->sort_blocks) append(msg, sizeof msg, ", sort blocks %d (not %d)", now->sort_blocks, e->sort_blocks);
    if (e->reshuffle != now->reshuffle) append(msg, sizeof msg, ", %s", now->reshuffle ? "reshuffled" : "shuffled once");
    if (!*msg) return;
    char line[1024];
    snprintf(line, sizeof line, "%s: the resumed run keeps its checkpoint's settings:%s", st_name(f), msg + 1);
    train_warn(t, line);
}

/* A resumed run goes on as it started: optimizer, learning rate (decayed so far), clipping, dropout
 * and batching come from the checkpoint, whatever the command line says; only the stopping
 * limits are new. A batch size other than the checkpoint's would not even fit its saved order. */
int ckpt_settings(trainer *t, const st_file *f, nmt_err *err)
{
    cJSON *s;
    int rc = ckpt_state(f, &s, err);
    if (rc) return rc;
    double lr, clip, drop, bsz, blocks, decay = 0;
    cJSON *opt = cJSON_GetObjectItemCaseSensitive(s, "optimizer"), *re = cJSON_GetObjectItemCaseSensitive(s, "reshuffle");
    int kind = cJSON_IsString(opt) ? optim_parse(opt->valuestring) : -1;
    int bad = kind < 0 || !cJSON_IsBool(re) || json_num(s, "lr", &lr) || json_num(s, "clip", &clip) ||
              json_num(s, "dropout", &drop) || json_num(s, "batch", &bsz) || json_num(s, "sort_blocks", &blocks) ||
              !(lr > 0) || !(clip >= 0) || !(drop >= 0 && drop < 1) || bsz < 1 || blocks < 1;
    json_num(s, "lr_decay", &decay); /* absent from checkpoints written before it existed */
    if (!bad) {
        nmt_train_opts now = t->eff;
        now.optimizer = kind; now.lr = lr; now.clip = clip; now.dropout = drop; now.lr_decay = decay;
        now.batch = (int)bsz; now.sort_blocks = (int)blocks; now.reshuffle = cJSON_IsTrue(re);
        warn_replaced(t, &now, f);
        t->eff = now;
    }
    cJSON_Delete(s);
    return bad ? nmt_fail(err, NMT_ERR_FORMAT, "%s: train_state lacks the optimizer or batching settings", st_name(f)) : NMT_OK;
}
