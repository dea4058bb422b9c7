/* fuzz_bleu.c: the metrics of `nmt bleu`: a hypothesis line and up to four reference lines
 * (newline-separated), with the options the first byte picks (tokenizer, lowercasing,
 * smoothing, effective order; chrF's word order; TER's case, normalisation, punctuation):
 * BLEU's corpus statistics, score, sentence score and tokenization, chrF and TER. */
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"
#include "eval/chrf.h"
#include "eval/ter.h"
#include "fuzz.h"

int fuzz_bleu(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    bleu_opts o = {0};
    o.tokenize = (enum bleu_tokenize)(data[0] % 3);
    o.lowercase = data[0] >> 2 & 1;
    o.smooth = (enum bleu_smooth)(data[0] >> 3 & 3);
    o.smooth_value = data[0] >> 5 & 1 ? 0.5 : 0;
    o.effective_order = data[0] >> 6 & 1;
    char *buf = malloc(size);
    if (!buf) return 0;
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = 0;
    char *line[5] = {buf, NULL, NULL, NULL, NULL};
    int n = 1;
    for (char *p = buf; *p && n < 5; p++)
        if (*p == '\n') { *p = 0; line[n++] = p + 1; }
    nmt_err err;
    bleu_stats st;
    memset(&st, 0, sizeof st);
    bleu_score sc;
    if (n > 1 && bleu_add_sentence(&st, line[0], (const char *const *)line + 1, n - 1, &o, &err) == 0)
        bleu_compute(&sc, &st, &o, &err);
    if (n > 1) bleu_sentence(&sc, line[0], (const char *const *)line + 1, n - 1, &o, &err);
    char *tok = NULL;
    if (bleu_tokenize(&tok, line[0], &o, &err) == 0) free(tok);
    chrf_opts co = {o.lowercase, data[0] & 3};
    ter_opts to = {data[0] >> 3 & 1, data[0] >> 4 & 1, data[0] >> 7 & 1};
    double f;
    if (n > 1) chrf_sentence(&f, line[0], (const char *const *)line + 1, n - 1, &co, &err);
    if (n > 1) ter_sentence(&f, line[0], (const char *const *)line + 1, n - 1, &to, &err);
    if (ter_tokenize(&tok, line[0], &to, &err) == 0) free(tok);
    free(buf);
    return 0;
}
