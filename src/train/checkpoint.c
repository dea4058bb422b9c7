/* checkpoint.c: a training checkpoint is a model file plus the run's state: the optimizer's
 * tensors, the batch plan and the position in it, both RNG states and the counters (train_state,
 * JSON metadata), so that a killed run resumes bit for bit. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "backend/backend.h"
#include "base/err.h"
#include "text/unicode.h"
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

/* A copy of s with every byte that starts no valid UTF-8 sequence replaced by U+FFFD (malloc'ed). */
static char *utf8_or_fffd(const char *s)
{
    size_t n = strlen(s), k = 0;
    char *out = malloc(3 * n + 1);
    if (!out) return NULL;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int len = utf8_decode(s + i, n - i, &cp);
        if (len > 0) { memcpy(out + k, s + i, (size_t)len); k += (size_t)len; i += (size_t)len; }
        else { memcpy(out + k, "\xEF\xBF\xBD", 3); k += 3; i++; }
    }
    out[k] = 0;
    return out;
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
    /* the later settings only when set, so that a run without them writes what it always wrote */
    if (o->label_smoothing > 0) cJSON_AddNumberToObject(s, "label_smoothing", o->label_smoothing);
    if (o->dropout_emb > 0) cJSON_AddNumberToObject(s, "dropout_emb", o->dropout_emb);
    if (o->dropout_rnn > 0) cJSON_AddNumberToObject(s, "dropout_rnn", o->dropout_rnn);
    if (o->dropout_tf > 0) cJSON_AddNumberToObject(s, "dropout_transformer", o->dropout_tf);
    if (o->dropout_attn > 0) cJSON_AddNumberToObject(s, "dropout_attention", o->dropout_attn);
    if (o->dropout_ffn > 0) cJSON_AddNumberToObject(s, "dropout_ffn", o->dropout_ffn);
    if (o->lr_warmup > 0) cJSON_AddNumberToObject(s, "lr_warmup", (double)o->lr_warmup);
    if (o->lr_decay_inv_sqrt > 0) cJSON_AddNumberToObject(s, "lr_decay_inv_sqrt", (double)o->lr_decay_inv_sqrt);
    if (o->precision == NMT_PREC_BF16) cJSON_AddStringToObject(s, "precision", "bf16");
    if (o->guided_alignment) { /* the links file is an input, given again like the corpus */
        cJSON_AddNumberToObject(s, "guided_weight", o->guided_weight);
        cJSON_AddStringToObject(s, "guided_cost", o->guided_cost == NMT_GUIDED_MSE ? "mse" : "ce");
    }
    if (t->nonfinite > 0) cJSON_AddNumberToObject(s, "nonfinite", t->nonfinite); /* updates skipped in a row */
    char *js = cJSON_PrintUnformatted(s);
    cJSON_Delete(s);
    return js;
}

int ckpt_save(trainer *t, nmt_err *err)
{
    st_writer *w = st_writer_init();
    if (!w) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    real *host = NULL, *state[OPTIM_MAX_STATE] = {0};
    int rc = model_to_writer(t->m, w, &host, err);
    char *js = state_json(t);
    int64_t tot = (int64_t)t->m->pt.total, n = t->train.n, nb1 = t->bat.nb + 1;
    if (!rc && (!js || st_writer_meta(w, "train_state", js))) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    const char *opts = t->options_began ? t->options_began : t->o->options_yaml; /* how the run began */
    if (!rc && opts) { /* the metadata must be UTF-8; a path need not be */
        char *yaml = utf8_or_fffd(opts);
        if (!yaml || st_writer_meta(w, "options", yaml)) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        free(yaml);
    }
    char *vjs = rc ? NULL : valid_state_json(t);
    if (!rc && (!vjs || st_writer_meta(w, "validation", vjs))) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    cJSON_free(vjs);
    optim_settle(&t->opt); /* the state eager updates would have left */
    for (int i = 0; !rc && i < optim_state_count(&t->opt); i++) { /* each a host copy, freed below */
        char name[64];
        optim_state_name(&t->opt, i, 0, name, sizeof name);
        if (!(state[i] = malloc(sizeof(real) * (tot ? tot : 1)))) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        else t->m->cx.b->copy_out(state[i], optim_state(&t->opt, i), sizeof(real) * tot);
        if (!rc && st_writer_add(w, name, model_real_dtype(), 1, &tot, state[i])) rc = NMT_ERR_NOMEM;
    }
    if (!rc && (st_writer_add(w, "train.shuffled", ST_I32, 1, &n, t->bat.shuffled) ||
                st_writer_add(w, "train.order", ST_I32, 1, &n, t->bat.order) ||
                st_writer_add(w, "train.starts", ST_I32, 1, &nb1, t->bat.starts)))
        rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if (!rc) rc = st_writer_save(w, t->ckpt_path, err);
    cJSON_free(js);
    st_writer_free(w);
    free(host);
    for (int i = 0; i < OPTIM_MAX_STATE; i++) free(state[i]);
    if (!rc) {
        nmt_train_report r;
        memset(&r, 0, sizeof r);
        r.kind = NMT_REPORT_SAVE;
        r.msg = t->ckpt_path;
        train_report(t, &r);
    }
    return rc;
}

/* ================================ reading ================================
 * A checkpoint is as hostile as any model file: every field of train_state is checked for its
 * type and range before anything is used, the saved plan must be a permutation cut into
 * minibatches the way batcher_plan cuts it, the counters must agree with the plan, and the
 * optimizer state must be finite (a NaN there would poison every later update). */

enum ftype { F_INT, F_NUM, F_HEX, F_RNG, F_BOOL, F_OPT, F_PREC, F_GCOST };
#define BELOW_ONE 0.99999999999999989 /* the largest double below 1: rates the trainer takes in [0, 1) */
enum {
    K_UPDATE, K_EPOCH, K_NEXT, K_NB, K_RNG, K_HASH, K_PAIRS, K_BEST, K_BADV, K_ELAPSED, K_VNLL, K_VSENT, K_VTOK,
    K_VSTEP, K_VLEFT, K_DRNG, K_DROPOUT, K_OPT, K_LR, K_DECAY, K_OSTEP, K_CLIP, K_BATCH, K_BLOCKS, K_RESHUF,
    K_MAXLEN, K_LS, K_WARMUP, K_INVSQRT, K_DEMB, K_DRNN, K_DTF, K_DATT, K_DFFN, K_PREC, K_NONFIN, K_GWEIGHT, K_GCOST, K_COUNT
};
/* key, type, range, required (the optional ones came later: older checkpoints lack them) */
static const struct field { const char *key; int type; double lo, hi; int required; } fields[K_COUNT] = {
    [K_UPDATE] = {"update", F_INT, 0, CKPT_MAX_UPDATES, 1},
    [K_EPOCH] = {"epoch", F_INT, 1, 1e9, 1},          /* an int in the batcher */
    [K_NEXT] = {"next", F_INT, 0, INT_MAX, 1},
    [K_NB] = {"nb", F_INT, 1, INT_MAX, 1},
    [K_RNG] = {"rng", F_RNG, 0, 0, 1},
    [K_HASH] = {"corpus_hash", F_HEX, 0, 0, 1},
    [K_PAIRS] = {"corpus_pairs", F_INT, 1, INT_MAX, 1},
    [K_BEST] = {"best_dev", F_NUM, -1, 1e300, 1},
    [K_BADV] = {"bad_validations", F_INT, 0, CKPT_MAX_UPDATES, 1},
    [K_ELAPSED] = {"elapsed", F_NUM, 0, 1e12, 1},
    [K_VNLL] = {"val_nll", F_NUM, 0, 1e300, 1},
    [K_VSENT] = {"val_sent", F_INT, 0, 1e15, 1},
    [K_VTOK] = {"val_tok", F_INT, 0, 1e15, 1},
    [K_VSTEP] = {"val_step", F_NUM, 0, 1e300, 0},
    [K_VLEFT] = {"val_left", F_NUM, 0, 1e300, 0},
    [K_DRNG] = {"drop_rng", F_RNG, 0, 0, 0},
    [K_DROPOUT] = {"dropout", F_NUM, 0, BELOW_ONE, 1},
    [K_OPT] = {"optimizer", F_OPT, 0, 0, 1},
    [K_LR] = {"lr", F_NUM, DBL_TRUE_MIN, DBL_MAX, 1}, /* lr_decay may take it down to subnormals */
    [K_DECAY] = {"lr_decay", F_NUM, 0, 1, 0},
    [K_OSTEP] = {"opt_step", F_INT, 0, CKPT_MAX_UPDATES, 1},
    [K_CLIP] = {"clip", F_NUM, 0, DBL_MAX, 1},
    [K_BATCH] = {"batch", F_INT, 1, CKPT_MAX_BATCH, 1},
    [K_BLOCKS] = {"sort_blocks", F_INT, 1, CKPT_MAX_BATCH, 1},
    [K_RESHUF] = {"reshuffle", F_BOOL, 0, 0, 1},
    [K_MAXLEN] = {"max_len", F_INT, 0, INT_MAX, 0},
    [K_LS] = {"label_smoothing", F_NUM, 0, BELOW_ONE, 0},
    [K_WARMUP] = {"lr_warmup", F_INT, 0, CKPT_MAX_UPDATES, 0},
    [K_INVSQRT] = {"lr_decay_inv_sqrt", F_INT, 0, CKPT_MAX_UPDATES, 0},
    [K_DEMB] = {"dropout_emb", F_NUM, 0, BELOW_ONE, 0},
    [K_DRNN] = {"dropout_rnn", F_NUM, 0, BELOW_ONE, 0},
    [K_DTF] = {"dropout_transformer", F_NUM, 0, BELOW_ONE, 0},
    [K_DATT] = {"dropout_attention", F_NUM, 0, BELOW_ONE, 0},
    [K_DFFN] = {"dropout_ffn", F_NUM, 0, BELOW_ONE, 0},
    [K_PREC] = {"precision", F_PREC, 0, 0, 0},       /* absent: fp32 */
    [K_NONFIN] = {"nonfinite", F_INT, 0, INT_MAX, 0}, /* absent: 0 */
    [K_GWEIGHT] = {"guided_weight", F_NUM, 0, 1e6, 0},  /* absent: no guided alignment */
    [K_GCOST] = {"guided_cost", F_GCOST, 0, 0, 0},
};

/* "0123456789abcdef": exactly 16 hex digits; -1 otherwise. */
static int hex64(const cJSON *j, uint64_t *v)
{
    if (!cJSON_IsString(j) || !j->valuestring || strlen(j->valuestring) != 16) return -1;
    *v = 0;
    for (const char *p = j->valuestring; *p; p++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
        if (d < 0) return -1;
        *v = *v << 4 | (uint64_t)d;
    }
    return 0;
}

/* One field's value into num (numbers, booleans, the optimizer's kind) or u64 (hashes and RNG
 * states); NULL when well-formed, else what is wrong with it. */
static const char *field_value(const struct field *fd, const cJSON *j, double *num, uint64_t *u64)
{
    switch (fd->type) {
    case F_BOOL:
        if (!cJSON_IsBool(j)) return "must be true or false";
        *num = cJSON_IsTrue(j);
        return NULL;
    case F_OPT:
        if (!cJSON_IsString(j) || (*num = optim_parse(j->valuestring)) < 0) return "must be adadelta, adagrad, adam or sgd";
        return NULL;
    case F_GCOST:
        if (!cJSON_IsString(j) || !j->valuestring || (strcmp(j->valuestring, "ce") && strcmp(j->valuestring, "mse")))
            return "must be \"ce\" or \"mse\"";
        *num = strcmp(j->valuestring, "ce") ? NMT_GUIDED_MSE : NMT_GUIDED_CE;
        return NULL;
    case F_PREC: /* the one a run is not trained in by default */
        if (!cJSON_IsString(j) || !j->valuestring || strcmp(j->valuestring, "bf16")) return "must be \"bf16\" (fp32 is written as no field)";
        *num = NMT_PREC_BF16;
        return NULL;
    case F_HEX:
        return hex64(j, u64) ? "must be 16 hex digits" : NULL;
    case F_RNG:
        if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != 4) return "must be 4 strings of 16 hex digits";
        for (int i = 0; i < 4; i++)
            if (hex64(cJSON_GetArrayItem(j, i), &u64[i])) return "must be 4 strings of 16 hex digits";
        /* all zeros is the one state xoshiro never leaves: every later draw would be 0 */
        if (!(u64[0] | u64[1] | u64[2] | u64[3])) return "is all zeros, not a generator state";
        return NULL;
    default:
        if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble)) return "must be a finite number";
        *num = j->valuedouble;
        if (fd->type == F_INT && *num != floor(*num)) return "must be an integer";
        if (!(*num >= fd->lo && *num <= fd->hi)) return "is out of range";
        return NULL;
    }
}

/* Batches per epoch as batcher_plan cuts them: blocks of B·k, each cut into pieces of B. */
static long plan_batches(long n, long B, long k)
{
    long blk = B * k, full = n / blk, rest = n % blk;
    return full * ((blk + B - 1) / B) + (rest + B - 1) / B;
}

/* The fields' values into s; the ranges that involve two fields. */
static int state_fill(ckpt_state *s, const double *v, const uint64_t (*u)[4], const int *seen, const char *path, nmt_err *err)
{
    memset(s, 0, sizeof *s);
    s->update = (long)v[K_UPDATE]; s->epoch = (long)v[K_EPOCH]; s->next = (int)v[K_NEXT]; s->nb = (int)v[K_NB];
    memcpy(s->rng, u[K_RNG], sizeof s->rng);
    s->has_drop_rng = seen[K_DRNG];
    memcpy(s->drop_rng, u[K_DRNG], sizeof s->drop_rng);
    s->corpus_hash = u[K_HASH][0];
    s->corpus_pairs = (int)v[K_PAIRS];
    s->best_dev = v[K_BEST]; s->bad_valid = (long)v[K_BADV]; s->elapsed = v[K_ELAPSED];
    s->val_nll = v[K_VNLL]; s->val_sent = (long)v[K_VSENT]; s->val_tok = (long)v[K_VTOK];
    s->val_step = v[K_VSTEP]; s->val_left = v[K_VLEFT];
    s->dropout = v[K_DROPOUT]; s->optimizer = (int)v[K_OPT]; s->lr = v[K_LR]; s->lr_decay = v[K_DECAY];
    s->opt_step = (long)v[K_OSTEP]; s->clip = v[K_CLIP];
    s->batch = (int)v[K_BATCH]; s->sort_blocks = (int)v[K_BLOCKS]; s->reshuffle = (int)v[K_RESHUF];
    s->label_smoothing = v[K_LS];
    s->lr_warmup = (long)v[K_WARMUP]; s->lr_decay_inv_sqrt = (long)v[K_INVSQRT];
    s->dropout_emb = v[K_DEMB]; s->dropout_rnn = v[K_DRNN];
    s->dropout_tf = v[K_DTF]; s->dropout_attn = v[K_DATT]; s->dropout_ffn = v[K_DFFN];
    s->precision = seen[K_PREC] ? (int)v[K_PREC] : NMT_PREC_FP32;
    s->nonfinite = (int)v[K_NONFIN];
    s->guided = seen[K_GWEIGHT];
    s->guided_weight = v[K_GWEIGHT];
    s->guided_cost = (int)v[K_GCOST];
    const char *why = NULL;
    if (s->best_dev < 0 && s->best_dev != -1) why = "best_dev is negative (only -1, for none yet, is)";
    else if ((long long)s->batch * s->sort_blocks > INT_MAX) why = "batch x sort_blocks overflows an int";
    else if (s->nb != plan_batches(s->corpus_pairs, s->batch, s->sort_blocks))
        why = "nb is not the number of minibatches of corpus_pairs in batches of batch";
    else if (s->next > s->nb) why = "next is past nb";
    /* every update takes one minibatch, and an epoch has nb of them */
    else if ((long long)(s->epoch - 1) * s->nb + s->next != s->update) why = "update disagrees with epoch, nb and next";
    else if (s->opt_step > s->update || s->bad_valid > s->update) why = "opt_step or bad_validations exceeds update";
    return why ? nmt_fail(err, NMT_ERR_FORMAT, "%s: train_state: %s", path, why) : NMT_OK;
}

int ckpt_parse(ckpt_state *s, const st_file *f, nmt_err *err)
{
    const char *path = st_name(f), *js = st_meta(f, "train_state");
    if (!js) return nmt_fail(err, NMT_ERR_FORMAT, "%s: a model, not a training checkpoint (no train_state)", path);
    cJSON *o = cJSON_Parse(js);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return nmt_fail(err, NMT_ERR_FORMAT, "%s: train_state is not a JSON object", path);
    }
    double v[K_COUNT] = {0};
    uint64_t u[K_COUNT][4] = {{0}};
    int seen[K_COUNT] = {0}, rc = NMT_OK;
    for (const cJSON *c = o->child; c && !rc; c = c->next) {
        int k = 0;
        while (k < K_COUNT && strcmp(c->string, fields[k].key)) k++;
        const char *why = k == K_COUNT ? "is not a train_state field" : seen[k]++ ? "appears twice" : field_value(&fields[k], c, &v[k], u[k]);
        if (why) rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: train_state field '%.60s' %s", path, c->string, why);
    }
    cJSON_Delete(o);
    for (int k = 0; k < K_COUNT && !rc; k++)
        if (fields[k].required && !seen[k]) rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: train_state lacks '%s'", path, fields[k].key);
    return rc ? rc : state_fill(s, v, (const uint64_t (*)[4])u, seen, path, err);
}

/* The int32/int64 tensor `name` of n entries into dst, each in [0, n); 0 or the error. */
static int read_indices(const st_file *f, const char *name, int *dst, long n, long lim, int64_t *tmp, nmt_err *err)
{
    int rc = st_read_i64(f, name, tmp, (size_t)n, err);
    for (long i = 0; i < n && !rc; i++) {
        if (tmp[i] < 0 || tmp[i] > lim)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s: %s[%ld] = %lld is out of range [0, %ld]", st_name(f), name, i, (long long)tmp[i], lim);
        dst[i] = (int)tmp[i];
    }
    return rc;
}

/* order (n entries) holds every index of [0, n) once, and block by block (B·k pairs) the same
 * indices as shuffled: batcher_plan only sorts and regroups inside a block. */
static const char *check_perm(const int *shuffled, const int *order, int n, long blk, int *mark)
{
    for (int i = 0; i < n; i++) mark[i] = -1;
    for (int i = 0; i < n; i++) {
        if (mark[shuffled[i]] >= 0) return "train.shuffled is not a permutation of the corpus";
        mark[shuffled[i]] = (int)(i / blk);
    }
    for (int i = 0; i < n; i++) {
        if (mark[order[i]] != i / blk) return "train.order is not train.shuffled regrouped within its blocks";
        mark[order[i]] = -2; /* seen: a repeat fails the test above */
    }
    return NULL;
}

/* starts (nb + 1 entries) cut [0, n) into minibatches of 1..B pairs, none across a block. */
static const char *check_starts(const int *st, int nb, int n, int B, long blk)
{
    if (st[0] != 0 || st[nb] != n) return "train.starts does not run from 0 to the corpus size";
    for (int i = 0; i < nb; i++) {
        if (st[i + 1] <= st[i]) return "train.starts does not strictly increase";
        if (st[i + 1] - st[i] > B) return "train.starts has a minibatch larger than the batch size";
        if (st[i] / blk != (st[i + 1] - 1) / blk) return "train.starts has a minibatch across two blocks";
    }
    return NULL;
}

int ckpt_read_plan(const st_file *f, const ckpt_state *s, int *shuffled, int *order, int *starts, nmt_err *err)
{
    long n = s->corpus_pairs, blk = (long)s->batch * s->sort_blocks;
    int64_t *tmp = malloc(sizeof(int64_t) * (size_t)(n > s->nb ? n + 1 : s->nb + 1));
    int *mark = malloc(sizeof(int) * (size_t)n);
    int rc = tmp && mark ? NMT_OK : nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if (!rc) rc = read_indices(f, "train.shuffled", shuffled, n, n - 1, tmp, err);
    if (!rc) rc = read_indices(f, "train.order", order, n, n - 1, tmp, err);
    if (!rc) rc = read_indices(f, "train.starts", starts, s->nb + 1L, n, tmp, err);
    const char *why = rc ? NULL : check_perm(shuffled, order, (int)n, blk, mark);
    if (!why && !rc) why = check_starts(starts, s->nb, (int)n, s->batch, blk);
    if (why) rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: %s", st_name(f), why);
    free(tmp);
    free(mark);
    return rc;
}

/* One optimizer state tensor: finite, and >= 0 where it accumulates squares. */
/* One state tensor into dst (the backend's memory), read and checked on the host first. */
static int read_moment(const backend_ops *b, const st_file *f, const char *name, real *dst, size_t n, int squares, nmt_err *err)
{
    real *h = malloc(sizeof(real) * (n ? n : 1));
    if (!h) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory reading %s", st_name(f));
    int rc = sizeof(real) == 4 ? st_read_f32(f, name, (float *)(void *)h, n, err) : st_read_f64(f, name, (double *)(void *)h, n, err);
    for (size_t i = 0; i < n && !rc; i++)
        if (!isfinite(h[i]) || (squares && h[i] < 0))
            rc = nmt_fail(err, NMT_ERR_NUMERIC, "%s: optimizer state %s[%zu] = %g is %s", st_name(f), name, i, (double)h[i],
                          isfinite(h[i]) ? "negative (a sum of squares)" : "not finite");
    if (!rc) b->copy_in(dst, h, sizeof(real) * n);
    free(h);
    return rc;
}

int ckpt_read_optim(const backend_ops *b, const st_file *f, int kind, real *s1, real *s2, size_t n, nmt_err *err)
{
    /* Adadelta: E[g²], E[Δ²]; AdaGrad: Σg²; Adam: m (signed), v. Tensors are named
     * optim.<optimizer>.<i>; checkpoints of the earlier format call them opt.s1, opt.s2. */
    real *dst[2] = {s1, s2};
    int rc = NMT_OK;
    for (int i = 0; i < 2 && !rc; i++) {
        if (!dst[i]) continue;
        char name[64];
        snprintf(name, sizeof name, "optim.%s.%d", optim_name(kind), i);
        if (!st_find(f, name)) snprintf(name, sizeof name, "opt.s%d", i + 1);
        rc = read_moment(b, f, name, dst[i], n, !(kind == OPT_ADAM && i == 0), err);
    }
    return rc;
}

int ckpt_restore(trainer *t, const st_file *f, nmt_err *err)
{
    ckpt_state s;
    int rc = ckpt_parse(&s, f, err);
    if (rc) return rc;
    if (s.corpus_pairs != t->train.n || s.corpus_hash != t->corpus_hash)
        return nmt_fail(err, NMT_ERR_MISMATCH, "%s was trained on another corpus (%d pairs after filtering, now %d): resume with the same --src/--tgt and length limit",
                        st_name(f), s.corpus_pairs, t->train.n);
    /* ckpt_settings gave the batcher the checkpoint's sizes, so its arrays fit the plan */
    NMT_ASSERT(t->bat.B == s.batch && t->bat.k == s.sort_blocks);
    if ((rc = ckpt_read_optim(t->m->cx.b, f, t->opt.kind, optim_state(&t->opt, 0), optim_state(&t->opt, 1), t->m->pt.total, err))) return rc;
    if ((rc = ckpt_read_plan(f, &s, t->bat.shuffled, t->bat.order, t->bat.starts, err))) return rc;
    memcpy(t->bat.r.s, s.rng, sizeof s.rng);
    if (s.has_drop_rng) memcpy(t->drop_rng.s, s.drop_rng, sizeof s.drop_rng);
    t->update = s.update;
    t->bat.epoch = (int)s.epoch;
    t->bat.nb = s.nb;
    t->bat.next = s.next;
    t->best_dev = s.best_dev < 0 ? INFINITY : s.best_dev;
    t->bad_valid = (int)s.bad_valid;
    t->nonfinite = s.nonfinite;
    t->elapsed0 = s.elapsed;
    t->val_nll = s.val_nll;
    t->val_sent = s.val_sent;
    t->val_tok = s.val_tok;
    t->val_step = s.val_step;
    t->val_left = s.val_left;
    t->opt.step = s.opt_step;
    return valid_state_restore(t, st_meta(f, "validation"), st_name(f), err);
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

static const char *gcost_name(int k) { return k == NMT_GUIDED_MSE ? "mse" : "ce"; }
static const char *prec_name(int p) { return p == NMT_PREC_BF16 ? "bf16" : p == NMT_PREC_FP32 ? "fp32" : "other"; }

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
    if (e->label_smoothing != now->label_smoothing)
        append(msg, sizeof msg, ", label smoothing %g (not %g)", now->label_smoothing, e->label_smoothing);
    if (e->dropout_emb != now->dropout_emb) append(msg, sizeof msg, ", embedding dropout %g (not %g)", now->dropout_emb, e->dropout_emb);
    if (e->dropout_rnn != now->dropout_rnn) append(msg, sizeof msg, ", recurrent dropout %g (not %g)", now->dropout_rnn, e->dropout_rnn);
    if (e->dropout_tf != now->dropout_tf || e->dropout_attn != now->dropout_attn || e->dropout_ffn != now->dropout_ffn)
        append(msg, sizeof msg, ", transformer dropout %g / %g / %g (not %g / %g / %g)", now->dropout_tf, now->dropout_attn,
               now->dropout_ffn, e->dropout_tf, e->dropout_attn, e->dropout_ffn);
    if (e->lr_warmup != now->lr_warmup) append(msg, sizeof msg, ", warm-up %ld (not %ld)", now->lr_warmup, e->lr_warmup);
    if (e->lr_decay_inv_sqrt != now->lr_decay_inv_sqrt)
        append(msg, sizeof msg, ", inverse-square-root decay %ld (not %ld)", now->lr_decay_inv_sqrt, e->lr_decay_inv_sqrt);
    if (e->precision != now->precision)
        append(msg, sizeof msg, ", precision %s (not %s)", prec_name(now->precision), prec_name(e->precision));
    if (!now->guided_alignment && e->guided_alignment) append(msg, sizeof msg, ", no guided alignment (not %s)", e->guided_alignment);
    double asked = train_guided_weight(e, &t->m->cfg);
    if (now->guided_alignment && asked != now->guided_weight)
        append(msg, sizeof msg, ", guided alignment weight %g (not %g)", now->guided_weight, asked);
    if (now->guided_alignment && e->guided_cost != now->guided_cost)
        append(msg, sizeof msg, ", guided alignment cost %s (not %s)", gcost_name(now->guided_cost), gcost_name(e->guided_cost));
    if (!*msg) return;
    char line[1024];
    snprintf(line, sizeof line, "%s: the resumed run keeps its checkpoint's settings:%s", st_name(f), msg + 1);
    train_warn(t, line);
}

/* A resumed run goes on as it started: optimizer, learning rate (decayed so far) and its schedule,
 * clipping, every dropout, label smoothing, batching and precision come from the checkpoint, whatever the command line says; only the stopping
 * limits are new. A batch size other than the checkpoint's would not even fit its saved order. */
int ckpt_settings(trainer *t, const st_file *f, nmt_err *err)
{
    ckpt_state s;
    int rc = ckpt_parse(&s, f, err);
    if (rc) return rc;
    nmt_train_opts now = t->eff;
    now.optimizer = s.optimizer; now.lr = s.lr; now.clip = s.clip; now.dropout = s.dropout; now.lr_decay = s.lr_decay;
    now.batch = s.batch; now.sort_blocks = s.sort_blocks; now.reshuffle = s.reshuffle;
    now.label_smoothing = s.label_smoothing;
    now.lr_warmup = s.lr_warmup; now.lr_decay_inv_sqrt = s.lr_decay_inv_sqrt;
    now.dropout_emb = s.dropout_emb; now.dropout_rnn = s.dropout_rnn;
    now.dropout_tf = s.dropout_tf; now.dropout_attn = s.dropout_attn; now.dropout_ffn = s.dropout_ffn;
    now.precision = s.precision;
    /* guided alignment's weight and cost are the run's; its links are an input, given again */
    if (s.guided && !now.guided_alignment)
        return nmt_fail(err, NMT_ERR_ARG, "%s: the run trains with guided alignment (weight %g, %s cost): give "
                        "--guided-alignment FILE again to resume it", st_name(f), s.guided_weight, gcost_name(s.guided_cost));
    if (!s.guided) now.guided_alignment = NULL;
    now.guided_weight = s.guided ? s.guided_weight : now.guided_weight;
    now.guided_cost = s.guided ? s.guided_cost : now.guided_cost;
    warn_replaced(t, &now, f);
    t->eff = now;
    return NMT_OK;
}
