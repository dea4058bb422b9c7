/* subwordmeta.c: the text entries of a model file's metadata, written and read. A subword
 * model's "subwords":
 *   {"type": "sentencepiece", "joint": false, "src": BASE64, "tgt": BASE64,
 *    "src_text": {"lang": "en", "tokenize": false, "lowercase": true, "normalize_punct": true,
 *                 "escape": true},
 *    "tgt_text": {...}}
 * ("tgt" is absent when joint; "vocab": "own" is present when the vocabularies are not the
 * SentencePiece models' own but the model's, a converted Marian model's); a raw-text word model's "text": {"src": {...}, "tgt": {...}}, the
 * same objects. The reader accepts nothing else: an unknown key is damage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/base64.h"
#include "base/err.h"
#include "io/safetensors.h"
#include "io/subwordmeta.h"
#include "text/tokenize.h"

static const char *side_name[2] = {"source", "target"};

static cJSON *text_json(const nmt_text_opts *o)
{
    cJSON *t = cJSON_CreateObject();
    if (!t) return NULL;
    if (o->lang >= 0) cJSON_AddStringToObject(t, "lang", tok_lang_name(o->lang));
    else cJSON_AddNullToObject(t, "lang");
    cJSON_AddBoolToObject(t, "tokenize", o->tokenize);
    cJSON_AddBoolToObject(t, "lowercase", o->lowercase);
    cJSON_AddBoolToObject(t, "normalize_punct", o->normalize_punct);
    cJSON_AddBoolToObject(t, "escape", o->escape);
    return t;
}

/* Adds spm's bytes in base64 under key; 0 or -1. */
static int add_model(cJSON *o, const char *key, const spm *s)
{
    size_t len;
    const void *b = spm_bytes(s, &len);
    char *enc = base64_encode(b, len);
    cJSON *x = enc ? cJSON_AddStringToObject(o, key, enc) : NULL;
    free(enc);
    return x ? 0 : -1;
}

char *subwords_meta_json(const subwords *sw)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "type", "sentencepiece");
    cJSON_AddBoolToObject(o, "joint", sw->joint);
    if (sw->by_vocab) cJSON_AddStringToObject(o, "vocab", "own"); /* absent: the SentencePiece models' */
    int bad = add_model(o, "src", sw->sp[0]) || (!sw->joint && add_model(o, "tgt", sw->sp[1]));
    cJSON *st = text_json(&sw->text[0]), *tt = text_json(&sw->text[1]);
    if (st) cJSON_AddItemToObject(o, "src_text", st);
    if (tt) cJSON_AddItemToObject(o, "tgt_text", tt);
    char *s = bad || !st || !tt ? NULL : cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

/* ------------------------------------------------------------------ reading */

/* o has only the keys of known[0..n): 0, or -1 with *bad the first other key. */
static int only_keys(const cJSON *o, const char *const *known, int n, const char **bad)
{
    for (const cJSON *it = o->child; it; it = it->next) {
        int k = 0;
        while (k < n && strcmp(it->string, known[k])) k++;
        if (k == n) { *bad = it->string; return -1; }
    }
    return 0;
}

static int text_parse(nmt_text_opts *o, const cJSON *t, int side, const char *file, nmt_err *err)
{
    static const char *const keys[] = {"lang", "tokenize", "lowercase", "normalize_punct", "escape"};
    const char *bad = NULL;
    *o = nmt_text_default_opts();
    if (!cJSON_IsObject(t) || only_keys(t, keys, 5, &bad))
        return nmt_fail(err, NMT_ERR_FORMAT, "%s: the %s text stages are not an object of %s (key '%.60s')", file,
                        side_name[side], "lang, tokenize, lowercase, normalize_punct, escape", bad ? bad : "?");
    const cJSON *lang = cJSON_GetObjectItemCaseSensitive(t, "lang");
    int *flags[4] = {&o->tokenize, &o->lowercase, &o->normalize_punct, &o->escape};
    for (int k = 0; k < 4; k++) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(t, keys[k + 1]);
        if (!cJSON_IsBool(f)) return nmt_fail(err, NMT_ERR_FORMAT, "%s: the %s text stages' '%s' is not true or false", file, side_name[side], keys[k + 1]);
        *flags[k] = cJSON_IsTrue(f);
    }
    o->lang = cJSON_IsString(lang) ? tok_lang_parse(lang->valuestring) : cJSON_IsNull(lang) ? -1 : -2;
    if (o->lang < -1 || (o->lang < 0 && (o->tokenize || o->normalize_punct)))
        return nmt_fail(err, NMT_ERR_FORMAT, "%s: the %s text stages' language is missing or unknown", file, side_name[side]);
    return NMT_OK;
}

/* The SentencePiece model under key, decoded and loaded. */
static int model_parse(spm **out, const cJSON *o, const char *key, int side, const char *file, nmt_err *err)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, key);
    unsigned char *bytes;
    size_t n;
    if (!cJSON_IsString(b)) return nmt_fail(err, NMT_ERR_FORMAT, "%s: the subwords lack the %s SentencePiece model", file, side_name[side]);
    if (base64_decode(b->valuestring, &bytes, &n))
        return nmt_fail(err, NMT_ERR_FORMAT, "%s: the %s SentencePiece model is not valid base64", file, side_name[side]);
    char what[600];
    snprintf(what, sizeof what, "%s: the embedded %s SentencePiece model", file, side_name[side]);
    int rc = spm_load(out, bytes, n, what, err);
    free(bytes);
    return rc;
}

int subwords_meta_parse(subwords **out, const char *json, const char *file, nmt_err *err)
{
    static const char *const keys[] = {"type", "joint", "src", "tgt", "src_text", "tgt_text", "vocab"};
    *out = NULL;
    cJSON *o = st_json_values(json, 64) <= 64 ? cJSON_Parse(json) : NULL; /* seven keys and values */
    const char *bad = NULL;
    int rc = NMT_OK;
    if (!cJSON_IsObject(o) || only_keys(o, keys, 7, &bad))
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: the subwords entry is not a JSON object of known keys (key '%.60s')", file, bad ? bad : "?");
    const cJSON *type = rc ? NULL : cJSON_GetObjectItemCaseSensitive(o, "type");
    const cJSON *joint = rc ? NULL : cJSON_GetObjectItemCaseSensitive(o, "joint");
    if (!rc && (!cJSON_IsString(type) || strcmp(type->valuestring, "sentencepiece") || !cJSON_IsBool(joint)))
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: the subwords entry is not of type sentencepiece with a joint flag", file);
    nmt_text_opts text[2];
    if (!rc) rc = text_parse(&text[0], cJSON_GetObjectItemCaseSensitive(o, "src_text"), 0, file, err);
    if (!rc) rc = text_parse(&text[1], cJSON_GetObjectItemCaseSensitive(o, "tgt_text"), 1, file, err);
    int is_joint = !rc && cJSON_IsTrue(joint);
    if (!rc && is_joint && cJSON_GetObjectItemCaseSensitive(o, "tgt"))
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: a joint subwords entry holds a target model too", file);
    spm *src = NULL, *tgt = NULL;
    if (!rc) rc = model_parse(&src, o, "src", 0, file, err);
    if (!rc && !is_joint && (rc = model_parse(&tgt, o, "tgt", 1, file, err))) spm_free(src);
    const cJSON *own = rc ? NULL : cJSON_GetObjectItemCaseSensitive(o, "vocab");
    if (own && (!cJSON_IsString(own) || strcmp(own->valuestring, "own"))) {
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: the subwords entry's 'vocab' is not \"own\"", file);
        spm_free(src);
        spm_free(tgt);
    }
    if (!rc) rc = subwords_init(out, src, tgt, text, err);
    if (!rc && own) (*out)->by_vocab = 1; /* its maps are made from the model's vocabularies */
    cJSON_Delete(o);
    return rc;
}

/* ------------------------------------------------------------------ a word model's stages */

char *text_stages_meta_json(const nmt_text_opts text[2])
{
    cJSON *o = cJSON_CreateObject(), *st = text_json(&text[0]), *tt = text_json(&text[1]);
    if (st && o) cJSON_AddItemToObject(o, "src", st);
    else cJSON_Delete(st);
    if (tt && o) cJSON_AddItemToObject(o, "tgt", tt);
    else cJSON_Delete(tt);
    char *s = o && st && tt ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return s;
}

int text_stages_meta_parse(nmt_text_opts text[2], const char *json, const char *file, nmt_err *err)
{
    static const char *const keys[] = {"src", "tgt"};
    cJSON *o = st_json_values(json, 32) <= 32 ? cJSON_Parse(json) : NULL; /* two objects of five */
    const char *bad = NULL;
    int rc = NMT_OK;
    if (!cJSON_IsObject(o) || only_keys(o, keys, 2, &bad))
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: the text entry is not a JSON object of src and tgt (key '%.60s')", file, bad ? bad : "?");
    for (int k = 0; k < 2 && !rc; k++) {
        rc = text_parse(&text[k], cJSON_GetObjectItemCaseSensitive(o, keys[k]), k, file, err);
        /* a word model's stages are the Moses pipeline or nothing: lowercasing without tokenizing
         * is a subword model's */
        if (!rc && !text[k].tokenize && (text[k].lowercase || text[k].normalize_punct))
            rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: the %s text stages lowercase or normalize without tokenizing", file, side_name[k]);
    }
    if (!rc && !text[0].tokenize && !text[1].tokenize)
        rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: the text entry holds no stage", file);
    cJSON_Delete(o);
    return rc;
}
