/* cmd_output.c: the lines `nmt translate` writes (cmd_output.h). An n-best line is Marian's
 * (marian-dev src/translator/output_printer.h; Moses' n-best format):
 *     ID ||| TEXT [||| ALIGNMENT] [||| WordScores= s1 s2 ...] ||| F0= LOGPROB [F1= ...] ||| SCORE
 * and a 1-best line the same without ID and features (SCORE only with --scores). F0 is the
 * search's log-probability; an ensemble has one feature per model, Fk = log p_k of the printed
 * hypothesis, from forced decoding by model k alone. Word scores are the log-probability of each
 * token (a subword model's pieces) and of the EOS when there is one, by forced decoding with the
 * search's own models, and so sum to F0 (up to rounding). Alignments index the printed words: when
 * the detokenizer joins tokens ("dog ." -> "dog."), their rows are merged as a subword's are. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "cmd.h"
#include "cmd_output.h"

/* *p grown to hold need elements of elem bytes; -1 out of memory */
static int grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    void *q = realloc(*(void **)p, elem * need);
    if (!q) return -1;
    *(void **)p = q;
    *cap = need;
    return 0;
}

/* ------------------------------------------------------------------ forced decoding */

/* Forced decoding takes targets of NMT_MAX_TGT_WORDS tokens at most: a hypothesis cut at the
 * length limit may be longer (3 x 401), and gets no word scores or features (printed nan). */
static int too_long(const nmt_hypothesis *h) { return h->n_words > NMT_MAX_TGT_WORDS; }

static int n_printed(const out_fmt *o, const nmt_translation *t) { return o->nbest ? t->n_hyps : t->n_hyps > 0; }

/* The batch's printed hypotheses as forced-decoding pairs in o->fsrc/o->ftgt, in print order: the
 * target its tokens as the model wrote them (a replaced UNK as <unk> again). *np pairs. */
static int forced_pairs(out_fmt *o, char *const *src, const nmt_translation *tr, int nb, int *np, nmt_err *err)
{
    size_t pairs = 0, bytes = 1;
    for (int i = 0; i < nb; i++)
        for (int k = 0; k < n_printed(o, &tr[i]); k++) {
            bytes++; /* the pair's NUL, which a pair of no words (empty or too long) needs too */
            for (int w = 0, n = too_long(&tr[i].hyps[k]) ? 0 : tr[i].hyps[k].n_words; w < n; w++)
                bytes += strlen(tr[i].hyps[k].ids[w] == 1 ? "<unk>" : tr[i].hyps[k].words[w]) + 1;
        }
    for (int i = 0; i < nb; i++) pairs += (size_t)n_printed(o, &tr[i]);
    if (grow(&o->fsrc, &o->fsrc_cap, pairs + 1, sizeof *o->fsrc) || grow(&o->ftgt, &o->ftgt_cap, pairs + 1, sizeof *o->ftgt) ||
        grow(&o->fbuf, &o->fbuf_cap, bytes, 1))
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    char *b = o->fbuf;
    size_t p = 0;
    for (int i = 0; i < nb; i++)
        for (int k = 0; k < n_printed(o, &tr[i]); k++, p++) {
            const nmt_hypothesis *h = &tr[i].hyps[k];
            o->fsrc[p] = src[i];
            o->ftgt[p] = b;
            for (int w = 0; w < (too_long(h) ? 0 : h->n_words); w++)
                b += sprintf(b, w ? " %s" : "%s", h->ids[w] == 1 ? "<unk>" : h->words[w]);
            *b++ = 0;
        }
    *np = (int)p;
    return NMT_OK;
}

/* Model k's log-probability of each pair into o->feat[p * n_models + k], the EOS left out of a
 * hypothesis that has none (finished[p] 0). */
static int model_features(out_fmt *o, int k, int np, const int *finished, nmt_err *err)
{
    nmt_alignment *a = calloc((size_t)np + 1, sizeof *a);
    if (!a) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    int rc = nmt_force_align(o->model_d[k], o->fsrc, o->ftgt, np, a, err);
    for (int p = 0; p < np && !rc; p++)
        o->feat[(size_t)p * o->n_models + k] = a[p].logprob - (finished[p] ? 0 : a[p].token_logprob[a[p].n_tgt]);
    nmt_alignment_free(a, np);
    free(a);
    return rc;
}

/* Word scores (o->fal, by the search's decoder) and an ensemble's features, for the batch. */
static int forced_scores(out_fmt *o, char *const *src, const nmt_translation *tr, int nb, nmt_err *err)
{
    int np = 0, rc = forced_pairs(o, src, tr, nb, &np, err);
    if (rc) return rc;
    size_t cap = 0;
    int *finished = NULL;
    if (grow(&finished, &cap, (size_t)np + 1, sizeof *finished)) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    for (int i = 0, p = 0; i < nb; i++)
        for (int k = 0; k < n_printed(o, &tr[i]); k++) finished[p++] = tr[i].hyps[k].finished;
    if (o->word_scores) {
        nmt_alignment_free(o->fal, o->n_fal);
        free(o->fal);
        o->n_fal = 0;
        if (!(o->fal = calloc((size_t)np + 1, sizeof *o->fal))) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        if (!rc && !(rc = nmt_force_align(o->d, o->fsrc, o->ftgt, np, o->fal, err))) o->n_fal = np;
    }
    if (!rc && o->nbest && o->n_models > 1 && grow(&o->feat, &o->feat_cap, (size_t)np * o->n_models + 1, sizeof *o->feat))
        rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    for (int k = 0; !rc && o->nbest && k < o->n_models && o->n_models > 1; k++) rc = model_features(o, k, np, finished, err);
    free(finished);
    return rc;
}

/* ------------------------------------------------------------------ alignments in printed words */

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* The bytes of word w at p (before end) in the printed line: as it is, or as the detokenizer
 * writes it alone (entities unescaped, "@-@" as "-"); 0 when neither is there. */
static size_t printed_as(out_fmt *o, const char *w, const char *p, const char *end, nmt_err *err)
{
    size_t wl = strlen(w), sl;
    if (wl <= (size_t)(end - p) && !memcmp(w, p, wl)) return wl;
    const char *s;
    if (!o->unesc) {
        nmt_text_opts to = nmt_text_default_opts();
        to.lang = NMT_LANG_EN; /* a word alone: the languages differ only in spacing */
        to.detokenize = 1;
        if (nmt_text_init(&o->unesc, &to, NULL, 0, err)) return 0;
    }
    if (nmt_text_decode_words(o->unesc, &w, 1, &s, &sl, err) || !sl) return 0;
    return sl <= (size_t)(end - p) && !memcmp(s, p, sl) ? sl : 0;
}

/* o->pmap: the printed word of each of out's text words, found in turn in the printed line,
 * whose blanks separate the printed words. The number of printed words; the text words
 * themselves (identity, the links over tokens, said once) where the line does not hold them so. */
static int printed_words(out_fmt *o, const nmt_text_line *out, nmt_err *err)
{
    if (grow(&o->pmap, &o->pmap_cap, (size_t)out->n_text_words + 1, sizeof *o->pmap)) return -1;
    const char *p = out->text, *end = out->text + out->len;
    int n = 0, joined = 0, k;
    for (k = 0; k < out->n_text_words; k++) {
        for (joined = n > 0; p < end && is_blank(*p); p++) joined = 0;
        size_t len = p < end ? printed_as(o, out->text_words[k], p, end, err) : 0;
        if (!len) break;
        o->pmap[k] = joined ? n - 1 : n++;
        p += len;
    }
    while (p < end && is_blank(*p)) p++;
    if (k == out->n_text_words && p == end) return n;
    static int said;
    if (!said++) fprintf(stderr, "[W::translate] '%.*s' does not hold its words in order: alignments over its tokens\n",
                         (int)out->len, out->text);
    for (k = 0; k < out->n_text_words; k++) o->pmap[k] = k;
    return out->n_text_words;
}

/* h with its attention merged from tokens to printed words into o->att: *w's rows are the
 * printed words (and the EOS), its columns the source's words and EOS. */
static int word_attention(out_fmt *o, const nmt_hypothesis *h, const nmt_text_line *out, const nmt_word_map *src,
                          nmt_hypothesis *w, nmt_err *err)
{
    *w = *h;
    if (!h->attention) return NMT_OK;
    int finished = h->attn_rows > h->n_words, np = printed_words(o, out, err);
    size_t need = (size_t)(np + finished) * (src->n_words + 1);
    if (np < 0 || grow(&o->att, &o->att_cap, need + 1, sizeof *o->att) ||
        grow(&o->wmap, &o->wmap_cap, (size_t)h->n_words + 1, sizeof *o->wmap))
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    for (int t = 0; t < h->n_words; t++) o->wmap[t] = out->word_of[t] >= 0 ? o->pmap[out->word_of[t]] : -1;
    nmt_word_map tgt = {h->n_words, o->wmap, np};
    nmt_word_map sm = *src;
    sm.n_tokens = h->attn_cols - 1; /* the tokens read: a long source is cut */
    int rc = nmt_attention_to_words(o->att, h->attention, finished, &tgt, &sm, err);
    w->attention = o->att;
    w->n_words = np;
    w->attn_rows = np + finished;
    w->attn_cols = src->n_words + 1;
    return rc;
}

/* Hard: each printed word to its most-attended source word (the source EOS never chosen; ties to
 * the lower index), Pharaoh "src-tgt", 0-based. Soft: one row per printed word, weights over the
 * source words and EOS, rows separated by " ; ". EOS rows are left out of both. */
static int print_alignment(out_fmt *o, const nmt_hypothesis *h, const nmt_text_line *out, const nmt_word_map *src,
                           nmt_err *err)
{
    fputs(" ||| ", stdout); /* an empty field stays one: "TEXT |||  ||| ..." */
    nmt_hypothesis w;
    int rc = h ? word_attention(o, h, out, src, &w, err) : NMT_OK;
    if (rc || !h || !w.attention) return rc;
    const char *sep = "";
    for (int i = 0; i < w.n_words; i++) {
        const float *row = w.attention + (size_t)i * w.attn_cols;
        if (o->align == ALIGN_HARD && nmt_hard_link(&w, i) >= 0) {
            printf("%s%d-%d", sep, nmt_hard_link(&w, i), i);
            sep = " ";
        }
        for (int j = 0; o->align == ALIGN_SOFT && j < w.attn_cols; j++) printf(i && !j ? " ; %.4f" : j ? " %.4f" : "%.4f", row[j]);
    }
    return NMT_OK;
}

/* ------------------------------------------------------------------ lines */

/* " ||| WordScores= s1 s2 ...": pair p's tokens, and its EOS when h has one */
static void print_word_scores(const out_fmt *o, const nmt_hypothesis *h, int p)
{
    fputs(" ||| WordScores=", stdout);
    if (h && too_long(h)) fputs(" nan", stdout);
    for (int t = 0; h && !too_long(h) && t < h->n_words + h->finished; t++) printf(" %.6f", o->fal[p].token_logprob[t]);
}

/* " ||| F0= s [F1= s ...]": the search's log-probability, or each model's */
static void print_features(const out_fmt *o, const nmt_hypothesis *h, int p)
{
    fputs(" |||", stdout);
    if (o->n_models < 2) printf(" F0= %.6f", h ? h->logprob : 0.0);
    for (int k = 0; o->n_models > 1 && k < o->n_models; k++)
        printf(" F%d= %.6f", k, !h ? 0.0 : too_long(h) ? NAN : o->feat[(size_t)p * o->n_models + k]);
}

/* One line: h (NULL: an empty input's empty answer) as the options ask; index < 0 for the 1-best
 * line; p its forced-decoding pair. */
static int print_line(out_fmt *o, const nmt_hypothesis *h, const nmt_word_map *src, int p, long index, nmt_err *err)
{
    nmt_text_line out = {0};
    int rc = h ? nmt_text_decode_line(o->tgt, (const char *const *)h->words, h->n_words, &out, err) : NMT_OK;
    if (rc) return rc;
    if (index >= 0) printf("%ld ||| ", index);
    if (out.len) fwrite(out.text, 1, out.len, stdout);
    if (o->align && (rc = print_alignment(o, h, &out, src, err))) return rc;
    if (o->word_scores) print_word_scores(o, h, p);
    if (index >= 0) print_features(o, h, p);
    if (index >= 0 || o->scores) printf(" ||| %.6f", h ? h->score : 0.0);
    putchar('\n');
    return NMT_OK;
}

int cmd_out_batch(out_fmt *o, char *const *src, const nmt_translation *tr, const nmt_word_map *src_words, int nb, long first,
              nmt_err *err)
{
    int rc = o->word_scores || (o->nbest && o->n_models > 1) ? forced_scores(o, src, tr, nb, err) : NMT_OK;
    for (int i = 0, p = 0; i < nb && !rc; i++) {
        if (!o->nbest && tr[i].n_hyps == 0) putchar('\n'); /* an empty line answers an empty line */
        for (int k = 0; k < n_printed(o, &tr[i]) && !rc; k++, p++)
            rc = print_line(o, &tr[i].hyps[k], &src_words[i], p, o->nbest ? first + i : -1, err);
        if (o->nbest && tr[i].n_hyps == 0 && !rc) rc = print_line(o, NULL, &src_words[i], p, first + i, err);
    }
    return rc;
}

void cmd_out_free(out_fmt *o)
{
    nmt_text_free(o->unesc);
    free(o->att);
    free(o->wmap);
    free(o->pmap);
    free(o->fsrc);
    free(o->ftgt);
    free(o->fbuf);
    nmt_alignment_free(o->fal, o->n_fal);
    free(o->fal);
    free(o->feat);
}
