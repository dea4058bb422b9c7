/* modelfile.c: the nmt_model object and its file. The file is safetensors: float32 tensors in
 * the parameter table's order and names, and in __metadata__ the format name and version, the
 * config as JSON, both vocabularies as JSON arrays and, for a subword model, its SentencePiece
 * models (io/subwordmeta.h). The loader trusts nothing in the file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "backend/backend.h"
#include "base/err.h"
#include "nn/model.h"
#include "io/safetensors.h"
#include "io/subwordmeta.h"
#include "nn/weights.h"
#include "data/vocab.h"

#define FORMAT_NAME "nmt-model"
#define FORMAT_VERSION "1"

int model_real_dtype(void) { return sizeof(real) == 4 ? ST_F32 : ST_F64; }

int model_alloc(nmt_model **out, const nmt_config *c, vocab *src, vocab *tgt, nmt_err *err)
{
    *out = NULL;
    int rc = backend_env_check(err);
    if (!rc) rc = nmt_config_check(c, err);
    if (rc) return rc;
    if (src->n != c->src_vocab || tgt->n != c->tgt_vocab)
        return nmt_fail(err, NMT_ERR_MISMATCH, "vocabularies of %d and %d words for a config of %d and %d",
                        src->n, tgt->n, c->src_vocab, c->tgt_vocab);
    nmt_model *m = calloc(1, sizeof *m);
    if (!m) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    m->cfg = *c;
    m->cx = *bk_ctx_default();
    pthread_mutex_init(&m->lowp_lock, NULL);
    param_table_build(&m->pt, c);
    m->P = m->cx.b->alloc(sizeof(real) * m->pt.total);
    if (!m->P) {
        double mb = sizeof(real) * m->pt.total / 1e6;
        pthread_mutex_destroy(&m->lowp_lock);
        free(m);
        return nmt_fail(err, NMT_ERR_NOMEM, "cannot allocate %.1f MB of parameters", mb);
    }
    model_point(m);
    m->src = src;
    m->tgt = tgt;
    *out = m;
    return NMT_OK;
}

void nmt_model_free(nmt_model *m)
{
    if (!m) return;
    model_lowp_free(m);
    pthread_mutex_destroy(&m->lowp_lock);
    m->cx.b->free(m->P);
    vocab_free(m->src);
    vocab_free(m->tgt);
    subwords_free(m->sw);
    free(m);
}

const nmt_config *nmt_model_config(const nmt_model *m) { return m ? &m->cfg : NULL; }
size_t nmt_model_num_params(const nmt_model *m) { return m ? m->pt.total : 0; }
int nmt_model_num_tensors(const nmt_model *m) { return m ? m->pt.n : 0; }
int nmt_model_has_subwords(const nmt_model *m) { return m && m->sw; }
int nmt_model_has_text_stages(const nmt_model *m) { return m && model_text_stages(m, NMT_SOURCE); }

static const vocab *side_vocab(const nmt_model *m, int side)
{
    return !m ? NULL : side == NMT_SOURCE ? m->src : side == NMT_TARGET ? m->tgt : NULL;
}

int nmt_model_vocab_size(const nmt_model *m, int side)
{
    const vocab *v = side_vocab(m, side);
    return v ? v->n : 0;
}

const char *nmt_model_vocab_entry(const nmt_model *m, int side, int id)
{
    const vocab *v = side_vocab(m, side);
    return v && id >= 0 && id < v->n ? vocab_word(v, id) : NULL;
}

/* As model_to_writer stores it: a vector's one dimension is its columns. The values cross from
 * the backend's memory through a host copy of the one tensor. */
int nmt_model_tensor(const nmt_model *m, int i, const char **name, int *ndim, int64_t shape[2], float *values,
                     nmt_err *err)
{
    if (!m || !name || !ndim || !shape) return nmt_fail(err, NMT_ERR_ARG, "nmt_model_tensor: a NULL argument");
    if (i < 0 || i >= m->pt.n) return nmt_fail(err, NMT_ERR_ARG, "tensor %d of %d", i, m->pt.n);
    const tensor_info *t = &m->pt.t[i];
    *name = t->name;
    *ndim = t->ndim;
    shape[0] = t->ndim == 1 ? t->cols : t->rows;
    shape[1] = t->ndim == 1 ? 0 : t->cols;
    size_t n = (size_t)t->rows * t->cols;
    if (!values) return NMT_OK;
    real *h = malloc(sizeof(real) * (n ? n : 1));
    if (!h) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for tensor '%s'", t->name);
    m->cx.b->copy_out(h, m->P + t->offset, sizeof(real) * n);
    for (size_t k = 0; k < n; k++) values[k] = (float)h[k];
    free(h);
    return NMT_OK;
}

int nmt_model_create(nmt_model **out, const nmt_config *c, const char *const *src_words,
                     const char *const *tgt_words, uint64_t seed, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_model_create", out, c, src_words, tgt_words);
    if (bad) return bad;
    *out = NULL;
    int rc = nmt_config_check(c, err);
    if (!rc) rc = nmt_strs_null(err, "nmt_model_create", "src_words", src_words, c->src_vocab);
    if (!rc) rc = nmt_strs_null(err, "nmt_model_create", "tgt_words", tgt_words, c->tgt_vocab);
    if (rc) return rc;
    vocab *sv = NULL, *tv = NULL;
    if ((rc = vocab_from_words(&sv, src_words, c->src_vocab, err))) return rc;
    if ((rc = vocab_from_words(&tv, tgt_words, c->tgt_vocab, err))) { vocab_free(sv); return rc; }
    nmt_model *m;
    if ((rc = model_alloc(&m, c, sv, tv, err))) { vocab_free(sv); vocab_free(tv); return rc; }
    rng r;
    rng_seed(&r, seed);
    if ((rc = params_init_model(m, &r, NMT_INIT_PAPER, err))) {
        nmt_model_free(m);
        return rc;
    }
    *out = m;
    return NMT_OK;
}

/* ------------------------------------------------------------------ writing */
static const char *const act_names[3] = {"relu", "gelu", "swish"};

/* A Transformer's sizes, as one object "transformer" of the config (absent in a recurrent model's) */
static int tf_config_json(cJSON *o, const nmt_config *c)
{
    cJSON *t = cJSON_AddObjectToObject(o, "transformer");
    if (!t) return -1;
    cJSON_AddNumberToObject(t, "enc_depth", c->enc_depth);
    cJSON_AddNumberToObject(t, "dec_depth", c->dec_depth);
    cJSON_AddNumberToObject(t, "heads", c->heads);
    cJSON_AddNumberToObject(t, "ffn", c->ffn);
    cJSON_AddStringToObject(t, "ffn_activation", act_names[c->ffn_act]);
    cJSON_AddStringToObject(t, "norm", c->post_norm ? "post" : "pre");
    cJSON_AddNumberToObject(t, "max_positions", c->max_pos);
    cJSON_AddNumberToObject(t, "ln_eps", c->ln_eps);
    cJSON_AddBoolToObject(t, "tied_all", c->tied_emb == 2);
    /* later additions, written only when set: a file without them reads as before */
    if (c->align_layer) cJSON_AddNumberToObject(t, "align_layer", c->align_layer);
    if (c->align_head) cJSON_AddNumberToObject(t, "align_head", c->align_head);
    if (c->marian_kv) cJSON_AddBoolToObject(t, "marian_kv", 1);
    if (c->ssru) cJSON_AddBoolToObject(t, "ssru", 1);
    return 0;
}

static char *config_json(const nmt_config *c)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "arch", nmt_arch_name(c->arch));
    cJSON_AddNumberToObject(o, "src_vocab", c->src_vocab);
    cJSON_AddNumberToObject(o, "tgt_vocab", c->tgt_vocab);
    cJSON_AddNumberToObject(o, "emb", c->emb);
    cJSON_AddNumberToObject(o, "hid", c->hid);
    cJSON_AddNumberToObject(o, "att", c->att);
    cJSON_AddNumberToObject(o, "maxout", c->maxout);
    cJSON_AddNumberToObject(o, "window", c->window);
    cJSON_AddNumberToObject(o, "fert_step_w", c->fert_step_w);
    cJSON_AddNumberToObject(o, "fert_left_w", c->fert_left_w);
    if (c->tied_emb) cJSON_AddBoolToObject(o, "tied_embeddings", 1); /* absent: untied, as every earlier file */
    if (is_transformer(c) && tf_config_json(o, c)) {
        cJSON_Delete(o);
        return NULL;
    }
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static char *vocab_json(const vocab *v)
{
    cJSON *a = cJSON_CreateArray();
    if (!a) return NULL;
    for (int i = 0; i < v->n; i++) {
        cJSON *s = cJSON_CreateString(v->words[i]);
        if (!s) { cJSON_Delete(a); return NULL; }
        cJSON_AddItemToArray(a, s);
    }
    char *s = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return s;
}

int model_to_writer(const nmt_model *m, st_writer *w, real **host, nmt_err *err)
{
    if (!(*host = params_to_host(m))) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for a copy of the parameters");
    char *cfg = config_json(&m->cfg), *sv = vocab_json(m->src), *tv = vocab_json(m->tgt);
    int bad = !cfg || !sv || !tv || st_writer_meta(w, "format", FORMAT_NAME) ||
              st_writer_meta(w, "format_version", FORMAT_VERSION) || st_writer_meta(w, "config", cfg) ||
              st_writer_meta(w, "src_vocab", sv) || st_writer_meta(w, "tgt_vocab", tv);
    cJSON_free(cfg);
    cJSON_free(sv);
    cJSON_free(tv);
    char *sw = m->sw && !bad ? subwords_meta_json(m->sw) : NULL;
    bad = bad || (m->sw && (!sw || st_writer_meta(w, SUBWORDS_KEY, sw)));
    cJSON_free(sw);
    char *tx = m->has_text && !bad ? text_stages_meta_json(m->text) : NULL;
    bad = bad || (m->has_text && (!tx || st_writer_meta(w, TEXT_STAGES_KEY, tx)));
    cJSON_free(tx);
    if (bad) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory while writing the model header");
    for (int i = 0; i < m->pt.n; i++) {
        const tensor_info *t = &m->pt.t[i];
        int64_t shape[2] = {t->rows, t->cols};
        if (st_writer_add(w, t->name, model_real_dtype(), t->ndim, t->ndim == 1 ? shape + 1 : shape, *host + t->offset))
            return nmt_fail(err, NMT_ERR_NOMEM, "out of memory while writing the model header");
    }
    return NMT_OK;
}

int nmt_model_save(const nmt_model *m, const char *path, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_model_save", m, path);
    if (bad) return bad;
    st_writer *w = st_writer_init();
    if (!w) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    real *host = NULL;
    int rc = model_to_writer(m, w, &host, err);
    if (!rc) rc = st_writer_save(w, path, err);
    st_writer_free(w);
    free(host);
    return rc;
}

/* ------------------------------------------------------------------ reading */

/* index of name in list, -1 when absent */
static int name_index(const char *name, const char *const *list, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(name, list[i])) return i;
    return -1;
}

/* The "transformer" object of a config into c; every key required, no other allowed. */
static int tf_config_parse(nmt_config *c, const cJSON *t, const char *file, nmt_err *err)
{
    /* the first nine required; the rest later additions, optional (absent: 0) */
    static const char *const keys[] = {"enc_depth", "dec_depth", "heads", "ffn", "max_positions", "ffn_activation", "norm",
                                       "ln_eps", "tied_all", "align_layer", "align_head", "marian_kv", "ssru"};
    static const char *const norms[2] = {"pre", "post"};
    int *ints[] = {&c->enc_depth, &c->dec_depth, &c->heads, &c->ffn, &c->max_pos};
    if (!cJSON_IsObject(t)) return nmt_fail(err, NMT_ERR_FORMAT, "%s: config 'transformer' is not an object", file);
    for (const cJSON *it = t->child; it; it = it->next)
        if (name_index(it->string, keys, 13) < 0) return nmt_fail(err, NMT_ERR_FORMAT, "%s: unknown transformer key '%s'", file, it->string);
    for (int k = 0; k < 13; k++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(t, keys[k]);
        if (k >= 9 && !it) continue;
        int ok = it != NULL;
        if (ok && (k == 9 || k == 10)) ok = cJSON_IsNumber(it) && it->valuedouble == floor(it->valuedouble) && it->valuedouble >= 0 &&
                                            it->valuedouble <= 65536;
        if (ok && (k == 9 || k == 10)) *(k == 9 ? &c->align_layer : &c->align_head) = (int)it->valuedouble;
        if (ok && k >= 11) ok = cJSON_IsBool(it) && (*(k == 11 ? &c->marian_kv : &c->ssru) = cJSON_IsTrue(it)) >= 0;
        if (ok && k < 5) ok = cJSON_IsNumber(it) && it->valuedouble == floor(it->valuedouble) && it->valuedouble >= 0 &&
                             it->valuedouble <= 1e9;
        if (ok && k < 5) *ints[k] = (int)it->valuedouble;
        if (ok && k == 5) ok = cJSON_IsString(it) && (c->ffn_act = name_index(it->valuestring, act_names, 3)) >= 0;
        if (ok && k == 6) ok = cJSON_IsString(it) && (c->post_norm = name_index(it->valuestring, norms, 2)) >= 0;
        if (ok && k == 7) ok = cJSON_IsNumber(it) && (c->ln_eps = it->valuedouble) > 0;
        if (ok && k == 8) ok = cJSON_IsBool(it);
        if (ok && k == 8 && cJSON_IsTrue(it)) c->tied_emb = 2;
        if (!ok) return nmt_fail(err, NMT_ERR_FORMAT, "%s: transformer config '%s' is missing or not valid", file, keys[k]);
    }
    return NMT_OK;
}

static int config_parse(nmt_config *c, const char *json, const char *file, nmt_err *err)
{
    /* "window" came with the Markov/LocFer variants: optional, 2 when absent */
    static const char *keys[] = {"arch", "src_vocab", "tgt_vocab", "emb", "hid", "att", "maxout", "window",
                                 "fert_step_w", "fert_left_w"};
    memset(c, 0, sizeof *c); /* tied_emb 0, and the padding after it */
    c->window = 2;
    c->fert_step_w = c->fert_left_w = 1.0;
    cJSON *o = st_json_values(json, 64) <= 64 ? cJSON_Parse(json) : NULL; /* ten keys and values */
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return nmt_fail(err, NMT_ERR_FORMAT, "%s: the config in the header is not a JSON object", file);
    }
    int rc = NMT_OK;
    for (cJSON *it = o->child; it && !rc; it = it->next) {
        int known = !strcmp(it->string, "tied_embeddings") || !strcmp(it->string, "transformer");
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) known |= !strcmp(it->string, keys[k]);
        if (!known) rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: unknown config key '%s'", file, it->string);
    }
    int *fields[] = {NULL, &c->src_vocab, &c->tgt_vocab, &c->emb, &c->hid, &c->att, &c->maxout, &c->window};
    for (size_t k = 0; k < sizeof keys / sizeof *keys && !rc; k++) {
        cJSON *it = cJSON_GetObjectItemCaseSensitive(o, keys[k]);
        if (!it && k >= 7) continue; /* later additions, optional */
        if (!it) { rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: config lacks '%s'", file, keys[k]); break; }
        if (k == 0) {
            c->arch = cJSON_IsString(it) ? nmt_arch_parse(it->valuestring) : -1;
            if (c->arch < 0) rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: unknown architecture in config", file);
        } else if (k >= 8) {
            if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0))
                rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: config '%s' is not a valid weight", file, keys[k]);
            else *(k == 8 ? &c->fert_step_w : &c->fert_left_w) = it->valuedouble;
        } else if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < 0 ||
                   it->valuedouble > 1e9) {
            rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: config '%s' is not a valid size", file, keys[k]);
        } else {
            *fields[k] = (int)it->valuedouble;
        }
    }
    const cJSON *te = cJSON_GetObjectItemCaseSensitive(o, "tied_embeddings"); /* later, optional */
    if (!rc && te && !cJSON_IsBool(te)) rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: config 'tied_embeddings' is not true or false", file);
    else if (te) c->tied_emb = cJSON_IsTrue(te);
    const cJSON *tf = cJSON_GetObjectItemCaseSensitive(o, "transformer");
    if (!rc && (tf != NULL) != (c->arch == NMT_ARCH_TRANSFORMER))
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: a %s model's config %s a 'transformer' object", file, nmt_arch_name(c->arch),
                      tf ? "has" : "lacks");
    if (!rc && tf) rc = tf_config_parse(c, tf, file, err);
    cJSON_Delete(o);
    nmt_err inner;
    if (!rc && (rc = nmt_config_check(c, &inner)))
        nmt_fail(err, NMT_ERR_FORMAT, "%s: bad config: %s", file, inner.msg);
    return rc ? NMT_ERR_FORMAT : NMT_OK;
}

static int vocab_parse(vocab **out, const char *json, int expect, const char *which, const char *file, nmt_err *err)
{
    *out = NULL;
    long most = 2L * expect + 8; /* a string and a comma per word */
    if (json && st_json_values(json, most) > most)
        return nmt_fail(err, NMT_ERR_FORMAT, "%s: %s vocabulary has more words than the config's %d", file, which, expect);
    cJSON *a = json ? cJSON_Parse(json) : NULL;
    if (!cJSON_IsArray(a)) {
        cJSON_Delete(a);
        return nmt_fail(err, NMT_ERR_FORMAT, "%s: %s vocabulary missing or not a JSON array", file, which);
    }
    int n = cJSON_GetArraySize(a), rc = NMT_OK;
    if (n != expect) rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: %s vocabulary has %d words, the config says %d", file, which, n, expect);
    const char **words = rc ? NULL : malloc(sizeof(char *) * n);
    if (!rc && !words) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    int i = 0;
    for (cJSON *it = a->child; it && !rc; it = it->next, i++) {
        if (!cJSON_IsString(it)) rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: %s vocabulary entry %d is not a string", file, which, i);
        else words[i] = it->valuestring;
    }
    nmt_err inner;
    if (!rc && (rc = vocab_from_words(out, words, n, &inner)))
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: %s vocabulary: %s", file, which, inner.msg);
    free(words);
    cJSON_Delete(a);
    return rc;
}

/* Every metadata key is one this program writes: besides the strictness, a byte flipped in the
 * name of the checksum key would otherwise pass as a file without checksums. Files written
 * before checksums existed lack ST_CRC_KEY and still load (unchecked; a warning is logged). In a
 * file whose checksums held (st_open), an unknown key is no damage: a newer nmt wrote it. */
static int check_meta_keys(const st_file *f, nmt_err *err)
{
    static const char *known[] = {"format", "format_version", "config", "src_vocab", "tgt_vocab", "train_state", "options", "validation",
                                  SUBWORDS_KEY, TEXT_STAGES_KEY, ST_CRC_KEY};
    for (int i = 0; i < st_meta_count(f); i++) {
        const char *k = NULL;
        st_meta_get(f, i, &k, NULL);
        size_t j = 0;
        while (j < sizeof known / sizeof *known && strcmp(k, known[j])) j++;
        if (j == sizeof known / sizeof *known)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s: unknown metadata key '%.100s' (%s)", st_name(f), k,
                            st_has_checksums(f) ? "written by a newer version of nmt, or another program"
                                                : "a damaged file, or one written by a newer version of nmt");
    }
    if (!st_has_checksums(f)) nmt_log('W', "%s: no checksums (written by an older version): damage cannot be detected", st_name(f));
    return NMT_OK;
}

/* A subword model's SentencePiece models, whose pieces must be its vocabularies. */
static int subwords_from_file(nmt_model *m, const st_file *f, nmt_err *err)
{
    const char *json = st_meta(f, SUBWORDS_KEY);
    if (!json) return NMT_OK;
    int rc = subwords_meta_parse(&m->sw, json, st_name(f), err);
    if (!rc && m->sw->by_vocab) { /* vocabularies of their own: the maps go through their words */
        rc = subwords_use_vocab(m->sw, NMT_SOURCE, m->src, err);
        if (!rc) rc = subwords_use_vocab(m->sw, NMT_TARGET, m->tgt, err);
        return rc;
    }
    if (!rc) rc = subwords_check_vocab(m->sw, NMT_SOURCE, (const char *const *)m->src->words, m->src->n, st_name(f), err);
    if (!rc) rc = subwords_check_vocab(m->sw, NMT_TARGET, (const char *const *)m->tgt->words, m->tgt->n, st_name(f), err);
    return rc;
}

/* A raw-text word model's stages; a subword model keeps its own in its subwords entry. */
static int text_stages_from_file(nmt_model *m, const st_file *f, nmt_err *err)
{
    const char *json = st_meta(f, TEXT_STAGES_KEY);
    if (!json) return NMT_OK;
    if (m->sw) return nmt_fail(err, NMT_ERR_FORMAT, "%s: a subword model with a word model's text entry", st_name(f));
    m->has_text = 1;
    return text_stages_meta_parse(m->text, json, st_name(f), err);
}

const nmt_text_opts *model_text_stages(const nmt_model *m, int side)
{
    return m->sw ? &m->sw->text[side] : m->has_text ? &m->text[side] : NULL;
}

/* The tensors of f into m's parameters, each read into a host buffer of the largest tensor's
 * size, checked, and copied in: the model is never held twice on the host. */
static int read_params(nmt_model *m, const st_file *f, const char *file, nmt_err *err)
{
    size_t most = 1;
    for (int i = 0; i < m->pt.n; i++)
        if ((size_t)m->pt.t[i].rows * m->pt.t[i].cols > most) most = (size_t)m->pt.t[i].rows * m->pt.t[i].cols;
    real *h = malloc(sizeof(real) * most);
    if (!h) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory reading %s", file);
    int rc = NMT_OK;
    for (int i = 0; i < m->pt.n && !rc; i++) {
        const tensor_info *t = &m->pt.t[i];
        int64_t shape[2] = {t->rows, t->cols};
        size_t cnt = (size_t)t->rows * t->cols;
        rc = st_expect(f, t->name, -1, t->ndim, t->ndim == 1 ? shape + 1 : shape, err);
        if (!rc) rc = sizeof(real) == 4 ? st_read_f32(f, t->name, (float *)(void *)h, cnt, err)
                                         : st_read_f64(f, t->name, (double *)(void *)h, cnt, err);
        for (size_t k = 0; k < cnt && !rc; k++)
            if (!isfinite(h[k]))
                rc = nmt_fail(err, NMT_ERR_NUMERIC, "%s: tensor '%s' holds a non-finite value at element %zu", file, t->name, k);
        if (!rc) m->cx.b->copy_in(m->P + t->offset, h, sizeof(real) * cnt);
    }
    free(h);
    return rc;
}

int model_from_file(nmt_model **out, const st_file *f, nmt_err *err)
{
    *out = NULL;
    const char *file = st_name(f);
    int rc = check_meta_keys(f, err);
    if (rc) return rc;
    const char *fmt = st_meta(f, "format"), *ver = st_meta(f, "format_version"), *cfgs = st_meta(f, "config");
    if (!fmt || strcmp(fmt, FORMAT_NAME))
        return nmt_fail(err, NMT_ERR_FORMAT, "%s: not an nmt model (no \"format\": \"%s\" in its header)", file, FORMAT_NAME);
    if (!ver || strcmp(ver, FORMAT_VERSION))
        return nmt_fail(err, NMT_ERR_FORMAT, "%s: model format version %s, this program reads version %s", file,
                        ver ? ver : "(none)", FORMAT_VERSION);
    if (!cfgs) return nmt_fail(err, NMT_ERR_FORMAT, "%s: no config in the header", file);
    nmt_config c;
    rc = config_parse(&c, cfgs, file, err);
    if (rc) return rc;
    vocab *sv = NULL, *tv = NULL;
    if ((rc = vocab_parse(&sv, st_meta(f, "src_vocab"), c.src_vocab, "source", file, err))) return rc;
    if ((rc = vocab_parse(&tv, st_meta(f, "tgt_vocab"), c.tgt_vocab, "target", file, err))) { vocab_free(sv); return rc; }
    nmt_model *m;
    if ((rc = model_alloc(&m, &c, sv, tv, err))) { vocab_free(sv); vocab_free(tv); return rc; }
    rc = subwords_from_file(m, f, err);
    if (!rc) rc = text_stages_from_file(m, f, err);
    for (int i = 0; i < st_count(f) && !rc; i++) {
        const char *name = st_get(f, i)->name;
        /* a checkpoint's optimizer state (optim., earlier opt.) and batch plan are not the model's */
        if (!param_table_find(&m->pt, name) && strncmp(name, "optim.", 6) && strncmp(name, "opt.", 4) &&
            strncmp(name, "train.", 6))
            rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: unexpected tensor '%s' for a %s model", file, name, nmt_arch_name(c.arch));
    }
    if (!rc) rc = read_params(m, f, file, err);
    if (rc) { nmt_model_free(m); return rc; }
    *out = m;
    return NMT_OK;
}

int nmt_model_load(nmt_model **out, const char *path, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_model_load", out, path);
    if (bad) return bad;
    *out = NULL;
    st_file *f = NULL;
    int rc = st_open(&f, path, err); /* tensors read one at a time (read_params) */
    if (rc) return rc;
    rc = model_from_file(out, f, err);
    st_free(f);
    return rc;
}

const char *nmt_model_device(const nmt_model *m) { return m ? m->cx.b->name : NULL; }
