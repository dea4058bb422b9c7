/* marian.c: Marian's Transformer models (OPUS-MT's .npz files) as nmt models: the configuration
 * from the archive's special:model.yml, the vocabularies from Marian's vocabulary .yml files, and
 * every parameter mapped by Marian's name (docs/OPUS-MT.md; names as marian-dev
 * src/models/transformer.h gives them). Everything is checked before a model is returned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/paths.h"
#include "data/subword.h"
#include "data/vocab.h"
#include "io/marian.h"
#include "io/npz.h"
#include "nn/model.h"
#include "text/spm.h"

/* ------------------------------------------------------------------ model.yml */

/* The value of top-level key in yml (its rest of line, blanks and quotes trimmed; for a block
 * value, its first line) into val; 0 when absent. Marian writes one `key: value` per line, lists
 * as `  - item` lines below, an empty list as `  []`. */
static int yml_get(const char *yml, const char *key, char *val, size_t cap)
{
    size_t kl = strlen(key);
    for (const char *s = yml; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : s) {
        if (strncmp(s, key, kl) || s[kl] != ':') continue;
        const char *v = s + kl + 1, *e = v;
        while (*e && *e != '\n') e++;
        while (v < e && (*v == ' ' || *v == '\t')) v++;
        while (e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
        if (e == v && *e == '\n' && e[1] == ' ') { /* a block value: its first line ("[]", "- item") */
            for (v = e + 1; *v == ' '; v++) {}
            for (e = v; *e && *e != '\n' && *e != '\r'; e++) {}
        }
        if (e - v >= 2 && (*v == '"' || *v == '\'') && e[-1] == *v) v++, e--;
        size_t n = (size_t)(e - v) < cap - 1 ? (size_t)(e - v) : cap - 1;
        memcpy(val, v, n);
        val[n] = 0;
        return 1;
    }
    return 0;
}

/* The first n integers of the list under key (`  - 7241` lines); the count read. */
static int yml_ints(const char *yml, const char *key, long *out, int n)
{
    char head[64];
    snprintf(head, sizeof head, "\n%s:", key);
    const char *s = strncmp(yml, head + 1, strlen(head + 1)) ? strstr(yml, head) : yml; /* the first line too */
    int k = 0;
    if (!s) return 0;
    for (s = strchr(s + 1, '\n'); s && k < n; s = strchr(s + 1, '\n')) {
        const char *p = s + 1;
        while (*p == ' ') p++;
        if (*p != '-') break;
        char *end;
        out[k++] = strtol(p + 1, &end, 10);
    }
    return k;
}

/* The options whose values nmt can read, '|'-separated (an empty one: YAML's ""); any other
 * value is refused by name. A key a model.yml lacks takes Marian's default, which is allowed
 * (older Marian versions write fewer keys). Keys not listed leave the parameters alone. */
typedef struct yml_rule { const char *key, *allowed; } yml_rule;
static const yml_rule rules[] = {
    {"type", "transformer"},
    {"transformer-ffn-activation", "swish|relu"},
    {"transformer-ffn-depth", "2"},
    {"transformer-decoder-ffn-depth", "0|2"},
    {"transformer-decoder-autoreg", "self-attention|rnn"},
    {"transformer-postprocess-emb", "d|"},
    {"transformer-attention-mask", "default"},
    {"transformer-tied-layers", "[]"},
    {"transformer-no-bias", "false"},
    {"transformer-no-affine", "false"},
    {"transformer-no-projection", "false"},
    {"transformer-pool", "false"},
    {"transformer-rnn-projection", "false"},
    {"transformer-train-position-embeddings", "false"},
    {"transformer-disable-position-embeddings", "false"},
    {"transformer-alibi-shift", "false"},
    {"transformer-alibi-trainable", "false"},
    {"tied-embeddings-src", "false"},
    {"output-omit-bias", "false"},
    {"right-left", "false"},
    {"ulr", "false"},
    {"lemma-dim-emb", "0"},
    {"factors-dim-emb", "0"},
    {"layer-normalization", "false"},
};

static int allowed(const char *list, const char *v)
{
    size_t n = strlen(v);
    for (const char *p = list;; p++) {
        const char *e = strchr(p, '|');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, v, n)) return 1;
        if (!e) return 0;
        p = e;
    }
}

static int yml_int(const char *yml, const char *key, int lo, int hi, int *out, const char *file, nmt_err *err)
{
    char v[64], *end;
    if (!yml_get(yml, key, v, sizeof v)) return nmt_fail(err, NMT_ERR_FORMAT, "%s: model.yml lacks '%s'", file, key);
    long n = strtol(v, &end, 10);
    if (end == v || *end || n < lo || n > hi)
        return nmt_fail(err, NMT_ERR_FORMAT, "%s: model.yml: %s '%s' is not an integer in [%d, %d]", file, key, v, lo, hi);
    *out = (int)n;
    return NMT_OK;
}

static int yml_true(const char *yml, const char *key)
{
    char v[16];
    return yml_get(yml, key, v, sizeof v) && !strcmp(v, "true");
}

/* The norm placement: post-norm (Marian's default: preprocess "", postprocess dan) or pre-norm
 * (n, da, top n); 1 post, 0 pre, -1 anything else. */
static int norm_placement(const char *yml)
{
    char pre[16] = "", post[16] = "dan", top[16] = "";
    yml_get(yml, "transformer-preprocess", pre, sizeof pre);
    yml_get(yml, "transformer-postprocess", post, sizeof post);
    yml_get(yml, "transformer-postprocess-top", top, sizeof top);
    if (!strcmp(pre, "") && !strcmp(post, "dan") && !strcmp(top, "")) return 1;
    if (!strcmp(pre, "n") && !strcmp(post, "da") && !strcmp(top, "n")) return 0;
    return -1;
}

/* The sizes: model, depths, heads, feed-forward, vocabularies. */
static int config_sizes(nmt_config *c, const char *yml, const char *file, nmt_err *err)
{
    char v[128];
    int rc = yml_int(yml, "dim-emb", 2, 65536, &c->emb, file, err);
    if (!rc) rc = yml_int(yml, "enc-depth", 1, NMT_MAX_DEPTH, &c->enc_depth, file, err);
    if (!rc) rc = yml_int(yml, "dec-depth", 1, NMT_MAX_DEPTH, &c->dec_depth, file, err);
    if (!rc) rc = yml_int(yml, "transformer-heads", 1, 65536, &c->heads, file, err);
    if (!rc) rc = yml_int(yml, "transformer-dim-ffn", 1, 262144, &c->ffn, file, err);
    if (rc) return rc;
    int dffn = 0;
    if (yml_get(yml, "transformer-decoder-dim-ffn", v, sizeof v) &&
        (rc = yml_int(yml, "transformer-decoder-dim-ffn", 0, 262144, &dffn, file, err)))
        return rc;
    if (dffn && dffn != c->ffn)
        return nmt_fail(err, NMT_ERR_ARG, "%s: model.yml option transformer-decoder-dim-ffn: %d differs from transformer-dim-ffn %d "
                        "(not supported)", file, dffn, c->ffn);
    c->hid = c->att = c->maxout = c->emb;
    long dv[2];
    if (yml_ints(yml, "dim-vocabs", dv, 2) != 2 || dv[0] < 2 || dv[1] < 2 || dv[0] > 1L << 30 || dv[1] > 1L << 30)
        return nmt_fail(err, NMT_ERR_FORMAT, "%s: model.yml lacks two vocabulary sizes (dim-vocabs)", file);
    c->src_vocab = (int)dv[0], c->tgt_vocab = (int)dv[1];
    return NMT_OK;
}

/* The model's configuration from its model.yml, every option checked. */
static int config_from_yml(nmt_config *c, marian_extra *x, const char *yml, const char *file, nmt_err *err)
{
    char v[128];
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
        if (yml_get(yml, rules[i].key, v, sizeof v) && !allowed(rules[i].allowed, v))
            return nmt_fail(err, NMT_ERR_ARG, "%s: model.yml option %s: '%s' is not supported (nmt reads: %s)", file, rules[i].key, v,
                            rules[i].allowed);
    *c = nmt_config_transformer();
    int rc = config_sizes(c, yml, file, err);
    if (rc) return rc;
    c->ffn_act = yml_get(yml, "transformer-ffn-activation", v, sizeof v) && !strcmp(v, "relu") ? NMT_ACT_RELU : NMT_ACT_SWISH;
    if ((c->post_norm = norm_placement(yml)) < 0)
        return nmt_fail(err, NMT_ERR_ARG, "%s: model.yml options transformer-preprocess, -postprocess, -postprocess-top: only "
                        "\"\", dan, \"\" (post-norm) and n, da, n (pre-norm) are supported", file);
    c->ln_eps = 1e-6; /* marian-dev src/layers/generic.h, layerNorm */
    c->max_pos = 0;
    c->tied_emb = yml_true(yml, "tied-embeddings-all") ? 2 : yml_true(yml, "tied-embeddings") ? 1 : 0;
    x->ssru = yml_get(yml, "transformer-decoder-autoreg", v, sizeof v) && !strcmp(v, "rnn");
    if (x->ssru && !yml_get(yml, "dec-cell", v, sizeof v)) strcpy(v, "(none)");
    if (x->ssru && strcmp(v, "ssru"))
        return nmt_fail(err, NMT_ERR_ARG, "%s: model.yml option dec-cell: '%s' is not supported for an rnn decoder (nmt reads: ssru)",
                        file, v);
    /* the guided-alignment layer: "last" or a 1-based layer number */
    x->align_layer = c->dec_depth - 1;
    if (yml_get(yml, "transformer-guided-alignment-layer", v, sizeof v) && strcmp(v, "last")) {
        char *end;
        long n = strtol(v, &end, 10);
        if (end == v || *end || n < 1 || n > c->dec_depth)
            return nmt_fail(err, NMT_ERR_ARG, "%s: model.yml option transformer-guided-alignment-layer: '%s' is not 'last' or a layer "
                            "in [1, %d]", file, v, c->dec_depth);
        x->align_layer = (int)n - 1;
    }
    /* Marian's alignments: head 0 of that layer's cross-attention (marian-dev
     * src/models/transformer.h, the saved attention weights); its pre-norm decoding's keys */
    c->align_layer = x->align_layer + 1;
    c->align_head = 1;
    c->marian_kv = !c->post_norm;
    c->ssru = x->ssru;
    return NMT_OK;
}

/* ------------------------------------------------------------------ vocabulary .yml */

/* One YAML scalar key at *s (plain, "double" or 'single' quoted) into out; the end of the key
 * (its ':') in *s; -1 when malformed. */
static int yml_key(const char **s, char *out, size_t cap)
{
    const char *p = *s;
    size_t n = 0;
    if (*p == '"' || *p == '\'') {
        char q = *p++;
        while (*p && *p != '\n' && n + 4 < cap) {
            if (*p == q && q == '\'' && p[1] == '\'') { out[n++] = '\''; p += 2; continue; }
            if (*p == q) break;
            if (q == '"' && *p == '\\') {
                p++;
                if (*p == 'x' || *p == 'u') { /* a code point */
                    int len = *p == 'x' ? 2 : 4;
                    char hex[5] = {0};
                    memcpy(hex, p + 1, (size_t)len);
                    unsigned long cp = strtoul(hex, NULL, 16);
                    if (strlen(hex) != (size_t)len) return -1;
                    if (cp < 0x80) out[n++] = (char)cp;
                    else if (cp < 0x800) out[n++] = (char)(0xC0 | cp >> 6), out[n++] = (char)(0x80 | (cp & 0x3F));
                    else out[n++] = (char)(0xE0 | cp >> 12), out[n++] = (char)(0x80 | (cp >> 6 & 0x3F)),
                         out[n++] = (char)(0x80 | (cp & 0x3F));
                    p += len + 1;
                    continue;
                }
                out[n++] = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == '0' ? '\0' : *p;
                p++;
                continue;
            }
            out[n++] = *p++;
        }
        if (*p != q || p[1] != ':') return -1;
        *s = p + 1;
    } else {
        const char *e = strstr(p, ": ");
        const char *nl = strchr(p, '\n');
        if (!e || (nl && nl < e) || (size_t)(e - p) >= cap) return -1;
        n = (size_t)(e - p);
        memcpy(out, p, n);
        *s = e;
    }
    out[n] = 0;
    return 0;
}

/* Marian's vocabulary (`piece: id` lines, ids 0 .. n-1 each once) as words by id, in *text,
 * which it owns (free both). */
static int vocab_yml_load(char ***words, char **text, int *n, const char *path, nmt_err *err)
{
    char *buf;
    size_t len;
    int rc = path_read_all(path, &buf, &len, err);
    if (rc) return rc;
    int lines = 0;
    for (size_t i = 0; i < len; i++) lines += buf[i] == '\n';
    char **w = calloc((size_t)lines + 1, sizeof *w);
    char *pool = malloc(len + 1);
    if (!w || !pool) { free(w); free(pool); free(buf); return nmt_fail(err, NMT_ERR_NOMEM, "out of memory reading %s", path); }
    int count = 0, line = 0;
    size_t used = 0;
    for (const char *s = buf; *s && !rc; line++) {
        const char *nl = strchr(s, '\n');
        if (*s == '\n' || *s == '#') { s = nl ? nl + 1 : s + strlen(s); continue; }
        char *key = pool + used, *end;
        if (yml_key(&s, key, len + 1 - used) || s[0] != ':') {
            rc = nmt_fail(err, NMT_ERR_FORMAT, "%s:%d: not a `piece: id` line of a Marian vocabulary", path, line + 1);
            break;
        }
        long id = strtol(s + 1, &end, 10);
        while (*end == ' ' || *end == '\r') end++;
        if (end == s + 1 || (*end && *end != '\n') || id < 0 || id >= lines + 1 || w[id])
            rc = nmt_fail(err, NMT_ERR_FORMAT, "%s:%d: '%.100s': a bad or repeated id", path, line + 1, key);
        else w[id] = key, used += strlen(key) + 1, count++;
        s = *end ? end + 1 : end;
    }
    for (int i = 0; i < count && !rc; i++)
        if (!w[i]) rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: %d entries but no id %d", path, count, i);
    if (!rc && (count < 2 || strcmp(w[0], VOCAB_EOS_STR) || strcmp(w[1], VOCAB_UNK_STR)))
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: ids 0 and 1 must be </s> and <unk>", path);
    free(buf);
    if (rc) { free(w); free(pool); return rc; }
    *words = w, *text = pool, *n = count;
    return NMT_OK;
}

/* ------------------------------------------------------------------ parameters */

typedef struct conv {
    const npz_file *z;
    const param_table *pt;
    real *host;
    unsigned char *used;       /* per npz entry */
    unsigned char *filled;     /* per nmt tensor */
    float *tmp;                /* the largest entry */
    const char *file;
    nmt_err *err;
} conv;

/* Marian's array src into columns [col, col + its columns) of nmt's tensor dst, transposed when
 * tr (Marian's `..._Wt`). */
static int put(conv *v, const char *dst, int col, const char *src, int tr)
{
    const tensor_info *t = param_table_find(v->pt, dst);
    const npz_array *a = npz_find(v->z, src);
    if (!t) return nmt_fail(v->err, NMT_ERR_ARG, "%s: no nmt tensor %s (internal)", v->file, dst);
    if (!a) return nmt_fail(v->err, NMT_ERR_FORMAT, "%s: parameter '%s' missing (wanted for nmt's %s)", v->file, src, dst);
    int64_t r = a->ndim == 2 ? a->shape[0] : 1, c = a->ndim == 2 ? a->shape[1] : a->ndim == 1 ? a->shape[0] : 0;
    if (tr) { int64_t s = r; r = c, c = s; }
    if (a->ndim < 1 || a->ndim > 2 || r != t->rows || col + c > t->cols || (col == 0 && t->cols % c))
        return nmt_fail(v->err, NMT_ERR_FORMAT, "%s: parameter '%s' has shape [%lld, %lld], expected [%d, %d%s]", v->file, src,
                        (long long)(tr ? c : r), (long long)(tr ? r : c), tr ? t->cols : t->rows, tr ? t->rows : t->cols,
                        col || c != t->cols ? " split" : "");
    int rc = npz_read_f32(v->z, a, v->tmp, (size_t)a->numel, v->err);
    if (rc) return rc;
    real *out = v->host + t->offset;
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++)
            out[i * t->cols + col + j] = (real)(tr ? v->tmp[j * r + i] : v->tmp[i * c + j]);
    v->used[a->index] = 1;
    v->filled[t - v->pt->t] = 1;
    return NMT_OK;
}

/* nmt's dst as Marian's names s1|s2|s3 side by side (a fused projection) */
static int put_cat(conv *v, const char *dst, const char *pre, const char *const *parts, int n, int width)
{
    int rc = NMT_OK;
    char src[160];
    for (int i = 0; i < n && !rc; i++) {
        snprintf(src, sizeof src, "%s%s", pre, parts[i]);
        rc = put(v, dst, i * width, src, 0);
    }
    return rc;
}

/* A decoder layer's SSRU (pre, dpre: Marian's and nmt's name prefixes): W|W_f fused, b_f, and
 * its norm, named after Marian's "_rnn" block (post-norm "_rnn_ffn_ln_*", pre-norm
 * "_rnn_ln_*_pre"). */
static int put_ssru(conv *v, const nmt_config *c, const char *pre, const char *dpre)
{
    static const char *const w[2] = {"rnn_W", "rnn_Wf"};
    char dst[80], src[160];
    snprintf(dst, sizeof dst, "%sssru_W", dpre);
    int rc = put_cat(v, dst, pre, w, 2, c->emb);
    snprintf(dst, sizeof dst, "%sssru_bf", dpre);
    snprintf(src, sizeof src, "%srnn_bf", pre);
    if (!rc) rc = put(v, dst, 0, src, 0);
    for (int k = 0; k < 2 && !rc; k++) {
        const char *part = k ? "bias" : "scale";
        snprintf(dst, sizeof dst, "%sssru_ln_%s", dpre, part);
        if (c->post_norm) snprintf(src, sizeof src, "%srnn_ffn_ln_%s", pre, part);
        else snprintf(src, sizeof src, "%srnn_ln_%s_pre", pre, part);
        rc = put(v, dst, 0, src, 0);
    }
    return rc;
}

/* One layer l of side s (0 encoder, 1 decoder). */
static int put_layer(conv *v, const nmt_config *c, int s, int l)
{
    static const char *const wqkv[3] = {"self_Wq", "self_Wk", "self_Wv"}, *const bqkv[3] = {"self_bq", "self_bk", "self_bv"};
    static const char *const wkv[2] = {"context_Wk", "context_Wv"}, *const bkv[2] = {"context_bk", "context_bv"};
    /* nmt's part, Marian's; the norms take _pre with pre-norm */
    static const char *const one[][2] = {{"self_Wo", "self_Wo"}, {"self_bo", "self_bo"}, {"ffn_W1", "ffn_W1"},
                                         {"ffn_b1", "ffn_b1"}, {"ffn_W2", "ffn_W2"}, {"ffn_b2", "ffn_b2"},
                                         {"ctx_Wq", "context_Wq"}, {"ctx_bq", "context_bq"}, {"ctx_Wo", "context_Wo"},
                                         {"ctx_bo", "context_bo"}};
    static const char *const norms[][2] = {{"self_ln_scale", "self_Wo_ln_scale"}, {"self_ln_bias", "self_Wo_ln_bias"},
                                           {"ffn_ln_scale", "ffn_ffn_ln_scale"}, {"ffn_ln_bias", "ffn_ffn_ln_bias"},
                                           {"ctx_ln_scale", "context_Wo_ln_scale"}, {"ctx_ln_bias", "context_Wo_ln_bias"}};
    char pre[40], dpre[40], dst[80], src[160];
    snprintf(pre, sizeof pre, "%s_l%d_", s ? "decoder" : "encoder", l + 1);
    snprintf(dpre, sizeof dpre, "%s_l%d_", s ? "dec" : "enc", l + 1);
    int d = c->emb, rc = NMT_OK, ssru = s && c->ssru;
    int n_one = s ? 10 : 6, n_norm = s ? 6 : 4, first = ssru ? 2 : 0;
#define DST(part) (snprintf(dst, sizeof dst, "%s%s", dpre, part), dst)
    if (ssru) rc = put_ssru(v, c, pre, dpre);
    if (!ssru && !rc) rc = put_cat(v, DST("self_Wqkv"), pre, wqkv, 3, d);
    if (!ssru && !rc) rc = put_cat(v, DST("self_bqkv"), pre, bqkv, 3, d);
    if (s && !rc) rc = put_cat(v, DST("ctx_Wkv"), pre, wkv, 2, d);
    if (s && !rc) rc = put_cat(v, DST("ctx_bkv"), pre, bkv, 2, d);
    for (int i = first; i < n_one && !rc; i++) {
        snprintf(src, sizeof src, "%s%s", pre, one[i][1]);
        rc = put(v, DST(one[i][0]), 0, src, 0);
    }
    for (int i = first; i < n_norm && !rc; i++) {
        snprintf(src, sizeof src, "%s%s%s", pre, norms[i][1], c->post_norm ? "" : "_pre");
        rc = put(v, DST(norms[i][0]), 0, src, 0);
    }
#undef DST
    return rc;
}

/* The embeddings, the output layer and the top norms. */
static int put_ends(conv *v, const nmt_config *c)
{
    int rc = NMT_OK;
    if (c->tied_emb == 2) rc = put(v, "Et", 0, "Wemb", 0);
    else {
        rc = put(v, "Es", 0, "encoder_Wemb", 0);
        if (!rc) rc = put(v, "Et", 0, "decoder_Wemb", 0);
    }
    if (!rc && !c->tied_emb)
        rc = npz_find(v->z, "decoder_ff_logit_out_Wt") ? put(v, "out_W", 0, "decoder_ff_logit_out_Wt", 1)
                                                        : put(v, "out_W", 0, "decoder_ff_logit_out_W", 0);
    if (!rc) rc = put(v, "out_bias", 0, "decoder_ff_logit_out_b", 0);
    if (!rc && !c->post_norm) {
        rc = put(v, "enc_top_ln_scale", 0, "encoder_top_ln_scale", 0);
        if (!rc) rc = put(v, "enc_top_ln_bias", 0, "encoder_top_ln_bias", 0);
        if (!rc) rc = put(v, "dec_top_ln_scale", 0, "decoder_top_ln_scale", 0);
        if (!rc) rc = put(v, "dec_top_ln_bias", 0, "decoder_top_ln_bias", 0);
    }
    return rc;
}

/* Every parameter of m from the archive; every entry used, every tensor filled. */
static int fill_params(nmt_model *m, const npz_file *z, const char *file, nmt_err *err)
{
    const nmt_config *c = &m->cfg;
    size_t most = 1;
    for (int i = 0; i < npz_count(z); i++)
        if (npz_get(z, i)->numel > most) most = npz_get(z, i)->numel;
    conv v = {z, &m->pt, calloc(m->pt.total ? m->pt.total : 1, sizeof(real)), calloc((size_t)npz_count(z), 1),
              calloc(MAX_TENSORS, 1), malloc(sizeof(float) * most), file, err};
    int rc = !v.host || !v.used || !v.filled || !v.tmp ? nmt_fail(err, NMT_ERR_NOMEM, "out of memory converting %s", file) : NMT_OK;
    if (!rc) rc = put_ends(&v, c);
    for (int l = 0; l < c->enc_depth && !rc; l++) rc = put_layer(&v, c, 0, l);
    for (int l = 0; l < c->dec_depth && !rc; l++) rc = put_layer(&v, c, 1, l);
    for (int i = 0; i < npz_count(z) && !rc; i++)
        if (!v.used[i] && strcmp(npz_get(z, i)->name, NPZ_YML_NAME))
            rc = nmt_fail(err, NMT_ERR_ARG, "%s: parameter '%s' has no place in nmt's model (an option nmt does not support)", file,
                          npz_get(z, i)->name);
    for (int i = 0; i < m->pt.n && !rc; i++)
        if (!v.filled[i]) rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: nothing gives nmt's tensor %s", file, m->pt.t[i].name);
    if (!rc) params_from_host(m, v.host);
    free(v.host), free(v.used), free(v.filled), free(v.tmp);
    return rc;
}

/* ------------------------------------------------------------------ the whole */

/* The vocabulary of one side, checked against the embeddings' rows. */
static int side_vocab(vocab **out, const char *path, int rows, const char *which, const char *file, nmt_err *err)
{
    char **w = NULL, *pool = NULL;
    int n = 0, rc = vocab_yml_load(&w, &pool, &n, path, err);
    if (!rc && n != rows)
        rc = nmt_fail(err, NMT_ERR_MISMATCH, "%s: the %s vocabulary has %d entries but %s's embeddings have %d rows", path, which, n,
                      file, rows);
    nmt_err inner;
    if (!rc && (rc = vocab_from_words(out, (const char *const *)w, n, &inner)))
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: %s", path, inner.msg);
    free(w);
    free(pool);
    return rc;
}

int marian_import(nmt_model **out, const char *npz, const char *const vocabs[2], marian_extra *x, nmt_err *err)
{
    *out = NULL;
    npz_file *z = NULL;
    int rc = npz_load(&z, npz, err);
    if (rc) return rc;
    const char *yml = npz_model_yml(z);
    nmt_config c;
    if (!yml) rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: no special:model.yml: not a Marian model", npz);
    if (!rc) rc = config_from_yml(&c, x, yml, npz, err);
    nmt_err inner;
    if (!rc && (rc = nmt_config_check(&c, &inner))) rc = nmt_fail(err, NMT_ERR_ARG, "%s: %s", npz, inner.msg);
    vocab *sv = NULL, *tv = NULL;
    const char *tgt = vocabs[1] ? vocabs[1] : vocabs[0];
    if (!rc) rc = side_vocab(&sv, vocabs[0], c.src_vocab, "source", npz, err);
    if (!rc) rc = side_vocab(&tv, tgt, c.tgt_vocab, "target", npz, err);
    for (int i = 2; !rc && c.tied_emb == 2 && i < sv->n; i++)
        if (strcmp(sv->words[i], tv->words[i]))
            rc = nmt_fail(err, NMT_ERR_MISMATCH, "%s: tied-embeddings-all needs one vocabulary, but entry %d is '%s' in %s and '%s' in %s",
                          npz, i, sv->words[i], vocabs[0], tv->words[i], tgt);
    nmt_model *m = NULL;
    if (!rc && (rc = model_alloc(&m, &c, sv, tv, err)) == NMT_OK) sv = tv = NULL; /* the model owns them */
    if (!rc) rc = fill_params(m, z, npz, err);
    vocab_free(sv);
    vocab_free(tv);
    npz_free(z);
    if (rc) { nmt_model_free(m); return rc; }
    *out = m;
    return NMT_OK;
}

/* The SentencePiece models of both sides into m (spms[0] source, spms[1] target; one model
 * when the two files hold the same bytes), segmenting raw text into the pieces of m's own
 * vocabularies, with no text stage before them (OPUS-MT's spm_encode on raw text). */
static int marian_attach_spm(nmt_model *m, const char *const spms[2], nmt_err *err)
{
    char *buf[2] = {NULL, NULL};
    size_t len[2];
    spm *sp[2] = {NULL, NULL};
    int rc = path_read_all(spms[0], &buf[0], &len[0], err);
    if (!rc) rc = path_read_all(spms[1], &buf[1], &len[1], err);
    int same = !rc && len[0] == len[1] && !memcmp(buf[0], buf[1], len[0]);
    if (!rc) rc = spm_load(&sp[0], buf[0], len[0], spms[0], err);
    if (!rc && !same && (rc = spm_load(&sp[1], buf[1], len[1], spms[1], err))) spm_free(sp[0]);
    free(buf[0]);
    free(buf[1]);
    if (rc) return rc;
    nmt_text_opts text[2] = {nmt_text_default_opts(), nmt_text_default_opts()};
    subwords *sw = NULL;
    rc = subwords_init(&sw, sp[0], sp[1], text, err); /* takes the models, on failure too */
    if (!rc) rc = subwords_use_vocab(sw, NMT_SOURCE, m->src, err);
    if (!rc) rc = subwords_use_vocab(sw, NMT_TARGET, m->tgt, err);
    if (rc) { subwords_free(sw); return rc; }
    subwords_free(m->sw);
    m->sw = sw;
    return NMT_OK;
}

int nmt_model_import_marian(nmt_model **out, const char *npz, const char *const vocabs[2], const char *const spms[2],
                            nmt_err *err)
{
    int rc = NMT_ARGS(err, "nmt_model_import_marian", out, npz, vocabs);
    if (!rc && !vocabs[0]) rc = nmt_fail(err, NMT_ERR_ARG, "nmt_model_import_marian: vocabs[0] is NULL");
    if (!rc && spms && (!spms[0] || !spms[1])) rc = nmt_fail(err, NMT_ERR_ARG, "nmt_model_import_marian: an entry of spms is NULL");
    if (rc) {
        if (out) *out = NULL;
        return rc;
    }
    marian_extra x = {0, 0};
    rc = marian_import(out, npz, vocabs, &x, err);
    if (!rc && spms) rc = marian_attach_spm(*out, spms, err);
    if (rc) { nmt_model_free(*out); *out = NULL; }
    return rc;
}
