/* fuzz_request.c: the body of POST /translate the way `nmt serve` takes it, with no server and
 * no model: req_parse under limits the first byte picks, req_encode through a text pipeline
 * over a four-word vocabulary (Moses stages on or off), and the answer built from a stand-in
 * translation that echoes the source; and the body's bytes as an error message. Beyond crashes,
 * each outcome is checked: what is accepted lies within the limits, a refusal has a known status
 * and a UTF-8 message, and every answer is valid UTF-8 JSON that reads back with the status,
 * message and counts it was made of. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "serve/request.h"
#include "text/unicode.h"

#define MAX_WORDS 200 /* the server's default words per text, the larger of the two limits here */

/* A broken promise of the request code: abort, which libFuzzer and the replay test report. */
static void require(int ok, const char *what)
{
    if (ok) return;
    fprintf(stderr, "fuzz_request: %s\n", what);
    abort();
}

/* The options byte: bits 0-1 texts per request, 2-3 the largest beam, 4 words per text,
 * 5 the Moses stages, 6 whether the stand-in hypotheses finished, 7 the attention budget (the
 * server's default, or small enough to refuse most requests that ask for attention). */
static req_limits limits_of(uint8_t b)
{
    static const int texts[4] = {1, 2, 8, 64}, beams[4] = {1, 4, 12, 32};
    req_limits l;
    l.max_texts = texts[b & 3];
    l.max_beam = beams[b >> 2 & 3];
    l.beam = l.max_beam < 5 ? l.max_beam : 5;
    l.max_words = b >> 4 & 1 ? MAX_WORDS : 4;
    l.max_attention = b >> 7 & 1 ? 40 : 1000000;
    l.split = b >> 5 & 1; /* with the Moses stages: paragraphs of raw text */
    l.split_lang = NMT_LANG_EN;
    return l;
}

/* json must be valid UTF-8 and parse; the parsed tree, to be deleted by the caller. */
static cJSON *reparse(const char *json)
{
    require(json != NULL, "no JSON produced");
    require(utf8_find_invalid(json, strlen(json)) < 0, "the JSON is not valid UTF-8");
    cJSON *j = cJSON_Parse(json);
    require(j != NULL, "the JSON does not parse");
    return j;
}

/* The error document for msg: valid UTF-8 JSON with the status, and msg itself when that is
 * UTF-8 (other bytes become U+FFFD: the server quotes URLs and headers as they came). */
static void check_error_json(int st, const char *msg)
{
    char *s = req_error_json(st, msg);
    cJSON *j = reparse(s), *e = cJSON_GetObjectItem(j, "error");
    require(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "status")) == st, "error status changed");
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(e, "message"));
    require(m != NULL, "error without a message");
    if (utf8_find_invalid(msg, strlen(msg)) < 0) require(!strcmp(m, msg), "error message changed");
    cJSON_Delete(j);
    free(s);
}

/* A refusal: a known status and a UTF-8 message (even when cut to fit). */
static void check_refusal(int st, const char *msg)
{
    require(st == 400 || st == 413 || st == 500, "a refusal with an unknown status");
    require(msg[0] != 0, "a refusal without a message");
    require(utf8_find_invalid(msg, strlen(msg)) < 0, "a refusal message that is not UTF-8");
    check_error_json(st, msg);
}

/* What req_parse accepted obeys the limits it was given. */
static void check_parsed(const serve_req *r, const req_limits *l)
{
    require(r->n_texts >= 1 && r->n_texts <= l->max_texts && r->n >= r->n_texts && r->text, "text count outside the limits");
    for (int i = 0; i < r->n; i++) require(r->text[i] != NULL, "a missing text");
    require(r->o.beam >= 1 && r->o.beam <= l->max_beam, "beam outside the limits");
    require(r->o.n_best >= 1 && r->o.n_best <= r->o.beam, "n_best outside [1, beam]");
    require(r->o.length_alpha >= 0 && r->o.length_alpha <= 10, "length_penalty outside [0, 10]");
    require(r->o.attention == (r->attention || r->alignment), "attention not asked for by the flags");
}

/* Text i's stand-in: n_hyps copies of the source words, uniform attention when asked for. */
static void stand_in(nmt_translation *t, const serve_req *r, int i, const char **words, float *att, int finished)
{
    int n = r->sent[i].src.n_ids; /* <= MAX_WORDS, checked */
    t->n_src = n;
    t->n_hyps = r->o.beam;
    t->hyps = calloc((size_t)t->n_hyps, sizeof *t->hyps);
    for (int h = 0; t->hyps && h < t->n_hyps; h++) {
        nmt_hypothesis *y = &t->hyps[h];
        y->n_words = n;
        y->words = words;
        y->logprob = -h;
        y->score = -h;
        y->finished = finished;
        y->attn_rows = n + finished;
        y->attn_cols = t->n_src + 1;
        y->attention = r->o.attention ? att : NULL;
    }
}

/* The answer to an encoded request reads back with one entry per text and n_best hypotheses
 * each (the stand-in has beam >= n_best of them). */
static void check_response(const serve_req *r, nmt_text *tgt, int finished)
{
    enum { W = MAX_WORDS + 1 }; /* words and EOS */
    static const char *words[W];
    static float att[W * W];
    for (int k = 0; k < W; k++) words[k] = k % 2 ? "&amp;" : "mot";
    for (int k = 0; k < W * W; k++) att[k] = 0.25f;
    nmt_translation *tr = calloc((size_t)r->n, sizeof *tr);
    if (!tr) return;
    for (int i = 0; i < r->n; i++) stand_in(&tr[i], r, i, words, att, finished);
    char *s = req_response(r, tr, tgt);
    cJSON *j = reparse(s), *all = cJSON_GetObjectItem(j, "translations");
    require(cJSON_GetArraySize(all) == r->n_texts, "not one translation per text");
    int sentences = 0;
    for (const cJSON *t = all ? all->child : NULL; t; t = t->next) {
        const cJSON *split = cJSON_GetObjectItem(t, "sentences"), *one = split ? split->child : t;
        for (; one; one = split ? one->next : NULL, sentences++)
            require(cJSON_GetArraySize(cJSON_GetObjectItem(one, "hyps")) == r->o.n_best, "not n_best hypotheses");
    }
    require(sentences == r->n, "not one answer per sentence");
    cJSON_Delete(j);
    free(s);
    for (int i = 0; i < r->n; i++) free(tr[i].hyps);
    free(tr);
}

/* One body under the limits and pipeline the options byte picked. */
static void run(const char *body, size_t len, const req_limits *lim, nmt_text *src, nmt_text *tgt, int finished)
{
    serve_req r;
    char msg[512] = ""; /* the server's size */
    int st = req_parse(&r, body, len, lim, msg, sizeof msg);
    if (!st) {
        check_parsed(&r, lim);
        st = req_encode(&r, src, lim, msg, sizeof msg);
    }
    if (st) check_refusal(st, msg);
    else {
        for (int i = 0; i < r.n; i++)
            require(r.sent[i].src.tokens && r.sent[i].src.n_ids >= 1 && r.sent[i].src.n_ids <= lim->max_words,
                    "words outside the limits");
        check_response(&r, tgt, finished);
    }
    req_free(&r);
}

int fuzz_request(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    req_limits lim = limits_of(data[0]);
    nmt_text_opts o = nmt_text_default_opts();
    if (data[0] >> 5 & 1) { /* the demo's pipeline: raw English in, French detokenized out */
        o.lang = NMT_LANG_EN;
        o.tokenize = o.lowercase = o.normalize_punct = o.detokenize = 1;
    }
    static const char *const known[4] = {"</s>", "<unk>", "a", "man"};
    nmt_text *src = NULL, *tgt = NULL;
    nmt_err err;
    if (!nmt_text_init(&src, &o, known, 4, &err) && !nmt_text_init(&tgt, &o, known, 4, &err))
        run((const char *)data + 1, size - 1, &lim, src, tgt, data[0] >> 6 & 1);
    nmt_text_free(src);
    nmt_text_free(tgt);
    /* the body's bytes as an error message, as a URL would be quoted */
    char *raw = malloc(size);
    if (raw) {
        memcpy(raw, data + 1, size - 1);
        raw[size - 1] = 0;
        check_error_json(404, raw);
        free(raw);
    }
    return 0;
}
