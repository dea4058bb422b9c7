/* request.c: POST /translate's JSON, in and out (request.h). Unknown fields are errors, as
 * unknown options are on the command line: a misspelt "n_bset" must not pass silently. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "serve/request.h"
#include "text/sentsplit.h"
#include "text/unicode.h"
#include "text/words.h"

int req_refuse(int status, char *msg, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    /* A message cut to fit can end inside a character (a long field name of accented letters):
     * drop the partial character, so that the message stays UTF-8. */
    long bad = cap ? utf8_find_invalid(msg, strlen(msg)) : -1;
    if (bad >= 0) msg[bad] = 0;
    return status;
}

/* ------------------------------------------------------------------ parsing */

/* An integer field in [lo, hi] into *out; 0 or 400. */
static int int_field(const cJSON *it, int lo, int hi, int *out, char *msg, size_t cap)
{
    if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble))
        return req_refuse(400, msg, cap, "\"%s\" must be an integer", it->string);
    double v = it->valuedouble;
    if (v < lo || v > hi) return req_refuse(400, msg, cap, "\"%s\" %.15g out of range [%d, %d]", it->string, v, lo, hi);
    *out = (int)v;
    return 0;
}

/* A number in [lo, hi] into *out; 0 or 400. */
static int num_field(const cJSON *it, double lo, double hi, double *out, char *msg, size_t cap)
{
    if (!cJSON_IsNumber(it)) return req_refuse(400, msg, cap, "\"%s\" must be a number", it->string);
    double v = it->valuedouble;
    if (!(v >= lo && v <= hi)) return req_refuse(400, msg, cap, "\"%s\" %.15g out of range [%g, %g]", it->string, v, lo, hi);
    *out = v;
    return 0;
}

/* "seed": an integer a double holds exactly, [0, 2^53]; 0 or 400. */
static int seed_field(const cJSON *it, uint64_t *out, char *msg, size_t cap)
{
    double v = cJSON_IsNumber(it) ? it->valuedouble : -1;
    if (!(v >= 0 && v <= 9007199254740992.0) || v != floor(v))
        return req_refuse(400, msg, cap, "\"seed\" must be an integer in [0, 2^53]");
    *out = (uint64_t)v;
    return 0;
}

static int bool_field(const cJSON *it, int *out, char *msg, size_t cap)
{
    if (!cJSON_IsBool(it)) return req_refuse(400, msg, cap, "\"%s\" must be true or false", it->string);
    *out = cJSON_IsTrue(it);
    return 0;
}

#define TEXT_BYTES_PER_WORD 32 /* a text may hold max_words words of this many bytes on average */

/* Bytes bound the text stages' work before any of it runs, as they run on the server's one
 * request thread: a text, a prefix and the constraint phrases of one text may each hold
 * max_words words of TEXT_BYTES_PER_WORD bytes (req_total_bytes bounds the request). */
static size_t entry_bytes(const req_limits *lim) { return (size_t)lim->max_words * TEXT_BYTES_PER_WORD; }

/* "text": "..." or "texts": ["...", ...] into r->text. */
static int texts_field(serve_req *r, const cJSON *it, const req_limits *lim, char *msg, size_t cap)
{
    int one = !strcmp(it->string, "text");
    if (r->text) return req_refuse(400, msg, cap, "give \"text\" or \"texts\", not both");
    if (one ? !cJSON_IsString(it) : !cJSON_IsArray(it))
        return req_refuse(400, msg, cap, one ? "\"text\" must be a string" : "\"texts\" must be an array of strings");
    int n = one ? 1 : cJSON_GetArraySize(it);
    if (n < 1) return req_refuse(400, msg, cap, "\"texts\" is empty");
    if (n > lim->max_texts) return req_refuse(413, msg, cap, "%d texts; the limit is %d per request", n, lim->max_texts);
    if (!(r->text = calloc(n, sizeof(char *)))) return req_refuse(500, msg, cap, "out of memory");
    r->n = n;
    const cJSON *s = one ? it : it->child;
    for (int i = 0; i < n; i++, s = s->next) {
        if (!cJSON_IsString(s)) return req_refuse(400, msg, cap, "texts[%d] is not a string", i);
        size_t bytes = strlen(s->valuestring), most = entry_bytes(lim);
        if (bytes > most)
            return req_refuse(413, msg, cap, "texts[%d] has %zu bytes; the limit is %zu (%d words of up to %d bytes)", i, bytes,
                          most, lim->max_words, TEXT_BYTES_PER_WORD);
        if (!(r->text[i] = strdup(s->valuestring))) return req_refuse(500, msg, cap, "out of memory");
    }
    return 0;
}

/* A string (one) or an array of at most most strings into *out, *n: 0 or 400/500; what names it. */
static int string_list(const cJSON *it, int one, int most, char ***out, int *n, const char *what, char *msg, size_t cap)
{
    int k = one ? 1 : cJSON_GetArraySize(it);
    if (k > most) return req_refuse(400, msg, cap, "%s has %d entries; the limit is %d", what, k, most);
    if (!(*out = calloc(k ? k : 1, sizeof(char *)))) return req_refuse(500, msg, cap, "out of memory");
    *n = k;
    const cJSON *s = one ? it : it->child;
    for (int i = 0; i < k; i++, s = s->next) {
        if (!cJSON_IsString(s)) return req_refuse(400, msg, cap, "%s[%d] is not a string", what, i);
        if (!((*out)[i] = strdup(s->valuestring))) return req_refuse(500, msg, cap, "out of memory");
    }
    return 0;
}

/* The bytes of s[0..n) together. */
static size_t strings_bytes(char *const *s, int n)
{
    size_t b = 0;
    for (int i = 0; s && i < n; i++) b += strlen(s[i]);
    return b;
}

/* "prefix": a string (one text) or an array of strings, one per text. */
static int prefix_field(serve_req *r, const cJSON *it, const req_limits *lim, char *msg, size_t cap)
{
    if (!cJSON_IsString(it) && !cJSON_IsArray(it))
        return req_refuse(400, msg, cap, "\"prefix\" must be a string or an array of strings (one per text)");
    int st = string_list(it, cJSON_IsString(it), lim->max_texts, &r->prefix, &r->n_prefix, "\"prefix\"", msg, cap);
    for (int i = 0; !st && i < r->n_prefix; i++)
        if (strlen(r->prefix[i]) > entry_bytes(lim))
            st = req_refuse(413, msg, cap, "\"prefix\"[%d] has %zu bytes; the limit is %zu (%d words of up to %d bytes)", i,
                            strlen(r->prefix[i]), entry_bytes(lim), lim->max_words, TEXT_BYTES_PER_WORD);
    return st;
}

/* "constraints": an array of phrases (one text) or an array of such arrays, one per text. */
static int constraints_field(serve_req *r, const cJSON *it, const req_limits *lim, char *msg, size_t cap)
{
    if (!cJSON_IsArray(it)) return req_refuse(400, msg, cap, "\"constraints\" must be an array of phrases, or of arrays of phrases");
    int per_text = it->child && cJSON_IsArray(it->child), k = per_text ? cJSON_GetArraySize(it) : 1;
    if (k > lim->max_texts)
        return req_refuse(400, msg, cap, "\"constraints\" has %d lists of phrases; the limit is %d", k, lim->max_texts);
    if (!(r->phrases = calloc(k, sizeof *r->phrases)) || !(r->n_phrases = calloc(k, sizeof(int))))
        return req_refuse(500, msg, cap, "out of memory");
    r->n_cons = k;
    const cJSON *s = per_text ? it->child : it;
    for (int i = 0; i < k; i++, s = s->next) {
        char what[48];
        snprintf(what, sizeof what, per_text ? "\"constraints\"[%d]" : "\"constraints\"", i);
        if (!cJSON_IsArray(s)) return req_refuse(400, msg, cap, "%s is not an array of phrases", what);
        int st = string_list(s, 0, NMT_MAX_PHRASES, &r->phrases[i], &r->n_phrases[i], what, msg, cap);
        if (st) return st;
        size_t bytes = strings_bytes(r->phrases[i], r->n_phrases[i]);
        if (bytes > entry_bytes(lim))
            return req_refuse(413, msg, cap, "%s has %zu bytes of phrases; the limit is %zu (%d words of up to %d bytes)", what,
                              bytes, entry_bytes(lim), lim->max_words, TEXT_BYTES_PER_WORD);
    }
    return 0;
}

/* One member of the request object. */
static int field(serve_req *r, const cJSON *it, const req_limits *lim, char *msg, size_t cap)
{
    const char *k = it->string;
    if (!strcmp(k, "text") || !strcmp(k, "texts")) return texts_field(r, it, lim, msg, cap);
    if (!strcmp(k, "beam")) return int_field(it, 1, lim->max_beam, &r->o.beam, msg, cap);
    if (!strcmp(k, "n_best")) return int_field(it, 1, lim->max_beam, &r->o.n_best, msg, cap);
    if (!strcmp(k, "normalize")) return bool_field(it, &r->o.normalize, msg, cap);
    if (!strcmp(k, "length_penalty")) return num_field(it, 0, 10, &r->o.length_alpha, msg, cap);
    if (!strcmp(k, "no_unk")) return bool_field(it, &r->o.no_unk, msg, cap);
    if (!strcmp(k, "attention")) return bool_field(it, &r->attention, msg, cap);
    if (!strcmp(k, "alignment")) return bool_field(it, &r->alignment, msg, cap);
    if (!strcmp(k, "split")) return bool_field(it, &r->split, msg, cap);
    if (!strcmp(k, "model")) {
        if (!cJSON_IsString(it) || strlen(it->valuestring) >= sizeof r->model)
            return req_refuse(400, msg, cap, "\"model\" must be a model's name (a string of at most %zu bytes)", sizeof r->model - 1);
        strcpy(r->model, it->valuestring);
        return 0;
    }
    if (!strcmp(k, "sample")) return bool_field(it, &r->o.sample, msg, cap);
    if (!strcmp(k, "sample_topk")) return int_field(it, 0, 1000000, &r->o.sample_topk, msg, cap);
    if (!strcmp(k, "sample_topp")) { /* (0, 1]: an empty nucleus draws nothing */
        if (!cJSON_IsNumber(it)) return req_refuse(400, msg, cap, "\"sample_topp\" must be a number");
        double v = it->valuedouble;
        if (!(v > 0 && v <= 1)) return req_refuse(400, msg, cap, "\"sample_topp\" %.15g out of range (0, 1]", v);
        r->o.sample_topp = v;
        return 0;
    }
    if (!strcmp(k, "temperature")) return num_field(it, 0.001, 100, &r->o.temperature, msg, cap);
    if (!strcmp(k, "seed")) return seed_field(it, &r->o.seed, msg, cap);
    if (!strcmp(k, "prefix")) return prefix_field(r, it, lim, msg, cap);
    if (!strcmp(k, "constraints")) return constraints_field(r, it, lim, msg, cap);
    return req_refuse(400, msg, cap, "unknown field \"%s\" (known: text, texts, beam, n_best, normalize, length_penalty, "
                                 "no_unk, attention, alignment, split, model, sample, sample_topk, sample_topp, temperature, seed, "
                                 "prefix, constraints)", k);
}

/* With split: every text becomes its sentences (a text of blanks stays one, empty, for the
 * error that names it). The sentences of one text are at most the words it may hold. */
static int split_texts(serve_req *r, const req_limits *lim, char *msg, size_t cap)
{
    sent_span *sp = malloc(sizeof *sp * (size_t)lim->max_words);
    int total = 0, *first = calloc((size_t)r->n + 1, sizeof(int));
    for (int t = 0; sp && first && t < r->n; t++) {
        int k = sent_split(lim->split_lang, r->text[t], strlen(r->text[t]), sp, 0);
        if (k > lim->max_words) { free(sp); free(first); return req_refuse(413, msg, cap, "texts[%d] has %d sentences; the limit is %d", t, k, lim->max_words); }
        total += k ? k : 1;
        first[t + 1] = total;
    }
    char **sent = sp && first ? calloc((size_t)total, sizeof(char *)) : NULL;
    for (int t = 0, i = 0; sent && t < r->n; t++) {
        int k = sent_split(lim->split_lang, r->text[t], strlen(r->text[t]), sp, lim->max_words);
        for (int j = 0; j < (k ? k : 1); j++, i++)
            if (!(sent[i] = k ? strndup(r->text[t] + sp[j].start, sp[j].end - sp[j].start) : strdup(""))) total = -1;
    }
    free(sp);
    if (!sent || total < 0) {
        for (int i = 0; sent && i < first[r->n]; i++) free(sent[i]);
        free(sent);
        free(first);
        return req_refuse(500, msg, cap, "out of memory");
    }
    for (int t = 0; t < r->n; t++) free(r->text[t]);
    free(r->text);
    r->text = sent;
    r->first = first;
    r->n = total;
    return 0;
}

/* The texts, prefixes and constraint phrases together: each is bounded (entry_bytes), and so is
 * their sum, to what max_texts texts may hold, whatever fields carry it (64 texts of 6,400 bytes
 * each and as much again in prefixes and phrases once made the text stages' work three times
 * what the texts alone may ask for). */
static int total_bytes(const serve_req *r, const req_limits *lim, char *msg, size_t cap)
{
    size_t b = strings_bytes(r->text, r->n) + strings_bytes(r->prefix, r->n_prefix);
    for (int i = 0; r->phrases && i < r->n_cons; i++) b += strings_bytes(r->phrases[i], r->n_phrases[i]);
    size_t most = (size_t)lim->max_texts * entry_bytes(lim);
    if (b <= most) return 0;
    return req_refuse(413, msg, cap, "the texts, prefixes and constraint phrases have %zu bytes together; the limit is %zu per "
                      "request (%d texts of %zu bytes)", b, most, lim->max_texts, entry_bytes(lim));
}

/* "prefix" and "constraints" against the texts: one entry per text, no splitting, no sampling. */
static int hints_check(const serve_req *r, char *msg, size_t cap)
{
    if (!r->prefix && !r->phrases) return 0;
    if (r->split) return req_refuse(400, msg, cap, "\"prefix\" and \"constraints\" go with texts not split into sentences (\"split\": false)");
    if (r->o.sample) return req_refuse(400, msg, cap, "\"prefix\" and \"constraints\" go with beam search, not with \"sample\"");
    if (r->prefix && r->n_prefix != r->n)
        return req_refuse(400, msg, cap, "\"prefix\" has %d entries for %d texts", r->n_prefix, r->n);
    if (r->phrases && r->n_cons != r->n)
        return req_refuse(400, msg, cap, "\"constraints\" has %d lists of phrases for %d texts", r->n_cons, r->n);
    return 0;
}

/* The byte offset of the first \u0000 escape in body, or -1. cJSON's strings end at a NUL, so the
 * text after one would vanish unseen. Backslashes appear only inside strings in valid JSON (the
 * parse refuses the rest), and each begins a two-byte escape, so no string tracking is needed. */
static long nul_escape(const char *body, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++) {
        if (body[i] != '\\') continue;
        if (body[i + 1] == 'u' && i + 5 < len && !memcmp(body + i + 2, "0000", 4)) return (long)i;
        i++;
    }
    return -1;
}

int req_parse(serve_req *r, const char *body, size_t len, const req_limits *lim, char *msg, size_t cap)
{
    memset(r, 0, sizeof *r);
    r->o = nmt_translate_default_opts();
    r->o.beam = lim->beam;
    r->split = lim->split;
    long bad = utf8_find_invalid(body, len);
    if (bad >= 0) return req_refuse(400, msg, cap, "the body is not valid UTF-8 (byte %ld)", bad);
    if (memchr(body, 0, len)) return req_refuse(400, msg, cap, "the body holds a NUL byte");
    long nul = nul_escape(body, len);
    if (nul >= 0) return req_refuse(400, msg, cap, "the body holds \\u0000 (a NUL character) at byte %ld", nul);
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    if (!j) return req_refuse(400, msg, cap, "malformed JSON at byte %ld", end ? (long)(end - body) : 0L);
    while (end && end < body + len && strchr(" \t\r\n", *end)) end++;
    if (end && end < body + len) {
        cJSON_Delete(j);
        return req_refuse(400, msg, cap, "malformed JSON: more after the value, at byte %ld", (long)(end - body));
    }
    int st = cJSON_IsObject(j) ? 0 : req_refuse(400, msg, cap, "the body must be a JSON object");
    for (const cJSON *it = j->child; it && !st; it = it->next) {
        for (const cJSON *prev = j->child; prev != it && !st; prev = prev->next)
            if (!strcmp(prev->string, it->string)) st = req_refuse(400, msg, cap, "field \"%s\" given twice", it->string);
        if (!st) st = field(r, it, lim, msg, cap);
    }
    if (!st && !r->o.normalize && cJSON_GetObjectItemCaseSensitive(j, "length_penalty")) /* as nmt translate */
        st = req_refuse(400, msg, cap, "\"length_penalty\" goes with length normalisation, which \"normalize\": false turns off");
    static const char *const with_sample[] = {"sample_topk", "sample_topp", "temperature", "seed"};
    for (size_t i = 0; i < sizeof with_sample / sizeof *with_sample && !st; i++) /* as nmt translate */
        if (!r->o.sample && cJSON_GetObjectItemCaseSensitive(j, with_sample[i]))
            st = req_refuse(400, msg, cap, "\"%s\" goes with \"sample\": true", with_sample[i]);
    if (!st && r->o.sample && cJSON_GetObjectItemCaseSensitive(j, "beam"))
        st = req_refuse(400, msg, cap, "\"sample\" draws instead of searching: \"beam\" does not apply (\"n_best\" K draws K)");
    cJSON_Delete(j);
    if (!st && !r->text) st = req_refuse(400, msg, cap, "no \"text\" (a string) or \"texts\" (an array of strings)");
    if (!st && !r->o.sample && r->o.n_best > r->o.beam)
        st = req_refuse(400, msg, cap, "\"n_best\" %d is larger than the beam (%d)", r->o.n_best, r->o.beam);
    r->o.attention = r->attention || r->alignment;
    r->n_texts = r->n;
    if (!st) st = total_bytes(r, lim, msg, cap);
    if (!st) st = hints_check(r, msg, cap);
    if (!st && r->split) st = split_texts(r, lim, msg, cap);
    return st;
}

/* Attention in the answer grows as texts x n_best x output length x source length: 4 texts of
 * 200 words at n_best 32 made an 88 MB answer and 1.3 GB of server memory. The most it can hold
 * (every hypothesis at the decoder's length limit) is bounded before any decoding. */
static int attention_budget(const serve_req *r, const req_limits *lim, char *msg, size_t cap)
{
    /* rows: nmt.h's length limit, at most max_ratio x (source tokens + 1) output tokens (1e-9: 1.16 x 25
     * is 28.999... in doubles, and 29 is meant) */
    if (!r->o.attention) return 0;
    double most = 0;
    for (int i = 0; i < r->n; i++) {
        int cols = r->sent[i].src.n_ids + 1; /* and EOS */
        double rows = floor(r->o.max_ratio * cols + 1e-9);
        most += (double)r->o.n_best * (rows < 1 ? 1 : rows) * cols;
    }
    if (most <= (double)lim->max_attention) return 0;
    return req_refuse(413, msg, cap, "attention for %d hypotheses of %d texts could hold %.0f weights; the limit is %ld "
                  "(ask for fewer texts, words or n_best)", r->o.n_best * r->n, r->n, most, lim->max_attention);
}

void req_where(const serve_req *r, int i, char *buf, size_t cap)
{
    int t = i, j = 0, k = 1; /* text t, its sentence j of k */
    if (r->first) {
        for (t = 0; t + 1 < r->n_texts && r->first[t + 1] <= i; t++) {}
        j = i - r->first[t];
        k = r->first[t + 1] - r->first[t];
    }
    char text[32];
    if (r->n_texts > 1) snprintf(text, sizeof text, "texts[%d]", t);
    else snprintf(text, sizeof text, "the text");
    if (k > 1) snprintf(buf, cap, "sentence %d of %s", j + 1, text);
    else snprintf(buf, cap, "%s", text);
}

void req_name_sentence(const serve_req *r, char *msg, size_t cap)
{
    int k, used = 0;
    if (sscanf(msg, "sentence %d%n", &k, &used) != 1 || used == 0 || k < 1 || k > r->n) return;
    char where[64], rest[1024];
    req_where(r, k - 1, where, sizeof where);
    snprintf(rest, sizeof rest, "%s", msg + used);
    snprintf(msg, cap, "%s%s", where, rest);
}

int req_encode(serve_req *r, nmt_text *src, const req_limits *lim, char *msg, size_t cap)
{
    char where[64];
    if (!(r->sent = calloc(r->n, sizeof *r->sent))) return req_refuse(500, msg, cap, "out of memory");
    for (int i = 0; i < r->n; i++) {
        nmt_err err;
        req_where(r, i, where, sizeof where);
        if (nmt_sentence_encode(src, r->text[i], strlen(r->text[i]), &r->sent[i], &err))
            return req_refuse(500, msg, cap, "%s: %s", where, err.msg);
        int n = r->sent[i].src.n_ids;
        if (n == 0) return req_refuse(400, msg, cap, "%s is empty", where);
        if (n > lim->max_words)
            return req_refuse(413, msg, cap, "%s has %d words; the limit is %d%s", where, n, lim->max_words,
                              r->split ? " per sentence" : r->n > 1 ? " per text" : "");
    }
    return attention_budget(r, lim, msg, cap);
}

/* A worker's refusal of hint text, its own name for the entry ("the prefix", "constraint K") at
 * the start of msg replaced by the request's (what) */
static int hint_refused(int rc, const nmt_err *err, const char *label, const char *what, char *msg, size_t cap)
{
    size_t n = strlen(label);
    const char *rest = strncmp(err->msg, label, n) ? err->msg : err->msg + n;
    return req_refuse(rc == NMT_ERR_ARG ? 400 : 500, msg, cap, "%s%s%s", what, rest == err->msg ? ": " : "", rest);
}

int req_encode_hints(serve_req *r, nmt_worker *w, char *msg, size_t cap)
{
    if (!r->prefix && !r->phrases) return 0;
    char what[64], label[32];
    nmt_err err;
    for (int i = 0; i < r->n; i++) {
        int rc;
        snprintf(what, sizeof what, "\"prefix\"[%d]", i);
        if (r->prefix && (rc = nmt_worker_prefix(w, &r->sent[i], r->prefix[i], &err)))
            return hint_refused(rc, &err, "the prefix", what, msg, cap);
        for (int k = 0; r->phrases && k < r->n_phrases[i]; k++) {
            snprintf(what, sizeof what, "\"constraints\"[%d][%d]", i, k);
            snprintf(label, sizeof label, "constraint %d", k + 1);
            if ((rc = nmt_worker_phrase(w, &r->sent[i], r->phrases[i][k], &err)))
                return hint_refused(rc, &err, label, what, msg, cap);
        }
    }
    r->hinted = 1;
    return 0;
}

static void free_strings(char **s, int n)
{
    for (int i = 0; s && i < n; i++) free(s[i]);
    free(s);
}

void req_free(serve_req *r)
{
    free_strings(r->prefix, r->n_prefix);
    for (int i = 0; r->phrases && i < r->n_cons; i++) free_strings(r->phrases[i], r->n_phrases[i]);
    free(r->phrases);
    free(r->n_phrases);
    for (int i = 0; i < r->n; i++) {
        free(r->text[i]);
        if (r->sent) nmt_sentence_free(&r->sent[i]);
    }
    free(r->text);
    free(r->sent);
    free(r->first);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------ the response */

static cJSON *word_array(const char *const *w, int n, int eos)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(w[i]));
    if (a && eos) cJSON_AddItemToArray(a, cJSON_CreateString("</s>"));
    return a;
}

/* The attention of h as labelled rows: source words and EOS across, output words (and EOS when
 * finished) down; weights rounded to 4 decimals, enough for a heat map, a third of the bytes. */
static cJSON *attention_json(const nmt_hypothesis *h, const char *const *src, int n_src)
{
    cJSON *a = cJSON_CreateObject(), *w = cJSON_CreateArray();
    cJSON_AddItemToObject(a, "source", word_array(src, n_src, 1));
    cJSON_AddItemToObject(a, "target", word_array(h->words, h->n_words, h->finished));
    cJSON_AddItemToObject(a, "weights", w);
    for (int i = 0; w && i < h->attn_rows; i++) {
        cJSON *row = cJSON_CreateArray();
        for (int j = 0; row && j < h->attn_cols; j++)
            cJSON_AddItemToArray(row, cJSON_CreateNumber(round(h->attention[(size_t)i * h->attn_cols + j] * 1e4) / 1e4));
        cJSON_AddItemToArray(w, row);
    }
    return a;
}

/* Pharaoh "source-target" pairs, 0-based, as nmt translate --alignment hard prints them. */
static cJSON *links_json(const nmt_hypothesis *h)
{
    size_t cap = (size_t)h->n_words * 24 + 1, n = 0;
    char *s = malloc(cap);
    for (int i = 0; s && i < h->n_words; i++)
        if (nmt_hard_link(h, i) >= 0) n += snprintf(s + n, cap - n, "%s%d-%d", n ? " " : "", nmt_hard_link(h, i), i);
    if (s) s[n] = 0;
    cJSON *j = s ? cJSON_CreateString(s) : NULL;
    free(s);
    return j;
}

/* The source side of one text in words: the words themselves and the map from the tokens read
 * (a long source is cut) to them. */
typedef struct src_words {
    const char *const *w;
    nmt_word_map map;
} src_words;

/* h with its attention merged from tokens to words (a subword model's pieces; identity maps for
 * a word model) into *att, a malloc'd matrix the caller frees: *w's rows are the output's words
 * (out's), its columns the source's words and EOS, so that attention_json and links_json draw
 * and link the words a user reads. */
static int word_hyp(nmt_hypothesis *w, float **att, const nmt_hypothesis *h, const nmt_text_line *out, const src_words *sw)
{
    *w = *h;
    *att = NULL;
    if (!h->attention) return 0;
    int finished = h->attn_rows > h->n_words;
    nmt_word_map tgt = {h->n_words, out->word_of, out->n_text_words}, sm = sw->map;
    sm.n_tokens = h->attn_cols - 1;
    nmt_err err;
    if (!(*att = malloc(sizeof(float) * (size_t)(out->n_text_words + finished) * (sm.n_words + 1))) ||
        nmt_attention_to_words(*att, h->attention, finished, &tgt, &sm, &err))
        return -1;
    w->attention = *att;
    w->words = (const char **)out->text_words;
    w->n_words = out->n_text_words;
    w->attn_rows = out->n_text_words + finished;
    w->attn_cols = sm.n_words + 1;
    return 0;
}

static cJSON *hyp_json(const serve_req *r, const nmt_hypothesis *h, const src_words *sw, nmt_text *tgt)
{
    nmt_text_line out;
    nmt_err err;
    nmt_hypothesis w;
    float *att = NULL;
    cJSON *o = cJSON_CreateObject();
    if (!o || nmt_text_decode_line(tgt, h->words, h->n_words, &out, &err) || word_hyp(&w, &att, h, &out, sw)) {
        cJSON_Delete(o);
        free(att);
        return NULL;
    }
    cJSON_AddStringToObject(o, "text", out.text);
    cJSON_AddItemToObject(o, "tokens", word_array(h->words, h->n_words, 0));
    cJSON_AddNumberToObject(o, "score", h->score);
    cJSON_AddNumberToObject(o, "logprob", h->logprob);
    cJSON_AddBoolToObject(o, "finished", h->finished);
    if (r->attention && h->attention) cJSON_AddItemToObject(o, "attention", attention_json(&w, sw->w, sw->map.n_words));
    if (r->alignment && h->attention) cJSON_AddItemToObject(o, "alignment", links_json(&w));
    free(att);
    return o;
}

/* One text's answer; its source tokens and words are split out of the lines req_encode kept. */
static cJSON *translation_json(const serve_req *r, int i, const nmt_translation *t, nmt_text *tgt)
{
    const nmt_sentence *x = &r->sent[i];
    char *copy = strdup(x->src.tokens), *wcopy = strdup(x->words);
    char **src = malloc(sizeof(char *) * (x->src.n_ids + 1)), **words = malloc(sizeof(char *) * (x->map.n_words + 1));
    cJSON *o = copy && wcopy && src && words ? cJSON_CreateObject() : NULL, *hyps = o ? cJSON_CreateArray() : NULL;
    int n_src = 0, n_w = 0;
    /* split as the model split them: on every blank, not spaces alone */
    for (char *p = copy ? strtok(copy, TEXT_BLANKS) : NULL; p && n_src < t->n_src; p = strtok(NULL, TEXT_BLANKS)) src[n_src++] = p;
    for (char *p = wcopy ? strtok(wcopy, TEXT_BLANKS) : NULL; p && n_w < x->map.n_words; p = strtok(NULL, TEXT_BLANKS))
        words[n_w++] = p;
    src_words sw = {(const char *const *)words, {n_src, x->map.word_of, n_w}};
    int nh = t->n_hyps < r->o.n_best ? t->n_hyps : r->o.n_best;
    for (int h = 0; hyps && h < nh; h++) cJSON_AddItemToArray(hyps, hyp_json(r, &t->hyps[h], &sw, tgt));
    if (hyps) {
        cJSON *best = cJSON_GetArrayItem(hyps, 0);
        cJSON_AddStringToObject(o, "text", best ? cJSON_GetStringValue(cJSON_GetObjectItem(best, "text")) : "");
        cJSON_AddNumberToObject(o, "score", nh ? t->hyps[0].score : 0);
        cJSON_AddItemToObject(o, "source_tokens", word_array((const char *const *)src, n_src, 0));
        cJSON_AddNumberToObject(o, "unknown_words", t->n_unk);
        cJSON_AddItemToObject(o, "hyps", hyps);
    }
    free(copy);
    free(wcopy);
    free(src);
    free(words);
    return o;
}

/* A text cut into several sentences: their best translations joined, and each sentence's answer. */
static cJSON *split_json(const serve_req *r, int t, const nmt_translation *tr, nmt_text *tgt)
{
    cJSON *sents = cJSON_CreateArray();
    size_t len = 1;
    for (int i = r->first[t]; sents && i < r->first[t + 1]; i++) {
        cJSON *s = translation_json(r, i, &tr[i], tgt);
        cJSON_AddItemToArray(sents, s);
        const char *txt = cJSON_GetStringValue(cJSON_GetObjectItem(s, "text"));
        len += (txt ? strlen(txt) : 0) + 1;
    }
    char *joined = malloc(len), *p = joined;
    for (cJSON *s = sents ? sents->child : NULL; joined && s; s = s->next) {
        const char *txt = cJSON_GetStringValue(cJSON_GetObjectItem(s, "text"));
        p += sprintf(p, "%s%s", p == joined ? "" : " ", txt ? txt : "");
    }
    if (joined) *p = 0;
    cJSON *o = sents && joined ? cJSON_CreateObject() : NULL;
    if (o) {
        cJSON_AddStringToObject(o, "text", joined);
        cJSON_AddItemToObject(o, "sentences", sents);
    } else {
        cJSON_Delete(sents);
    }
    free(joined);
    return o;
}

char *req_response(const serve_req *r, const nmt_translation *tr, nmt_text *tgt)
{
    cJSON *root = cJSON_CreateObject(), *all = cJSON_AddArrayToObject(root, "translations");
    for (int t = 0; all && r->first && t < r->n_texts; t++)
        cJSON_AddItemToArray(all, r->first[t + 1] - r->first[t] == 1 ? translation_json(r, r->first[t], &tr[r->first[t]], tgt)
                                                                      : split_json(r, t, tr, tgt));
    for (int i = 0; all && !r->first && i < r->n; i++) cJSON_AddItemToArray(all, translation_json(r, i, &tr[i], tgt));
    char *s = all ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return s;
}

/* s with every byte that is not part of a valid UTF-8 character replaced by U+FFFD (JSON text
 * must be UTF-8; the server's messages quote URLs and headers as they came), malloc'd or NULL. */
static char *valid_utf8(const char *s)
{
    size_t n = strlen(s), o = 0;
    char *out = malloc(3 * n + 1);
    for (size_t i = 0; out && i < n;) {
        uint32_t cp;
        int k = (unsigned char)s[i] < 0x80 ? 1 : utf8_decode(s + i, n - i, &cp);
        if (k < 0) { memcpy(out + o, "\xEF\xBF\xBD", 3); o += 3; i++; continue; }
        memcpy(out + o, s + i, (size_t)k);
        o += (size_t)k;
        i += (size_t)k;
    }
    if (out) out[o] = 0;
    return out;
}

char *req_error_json(int status, const char *msg)
{
    char *text = valid_utf8(msg);
    cJSON *root = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(root, "error");
    cJSON_AddNumberToObject(e, "status", status);
    cJSON_AddStringToObject(e, "message", text ? text : "out of memory");
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    free(text);
    return s;
}
