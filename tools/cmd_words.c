/* cmd_words.c: what `nmt align` and `nmt plot` share to show attention in the words a user reads
 * when a model's tokens are not words (a subword model's pieces): a line through the model's text
 * pipeline, kept with its token -> word map, and an alignment's attention merged into words by
 * the library's one merge (nmt_attention_to_words). */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "cmd.h"

int cmd_encode_line(nmt_text *tp, const char *s, char **line, nmt_word_map *map, char **words, nmt_err *err)
{
    nmt_text_line l;
    *line = NULL;
    if (words) *words = NULL;
    *map = (nmt_word_map){0, NULL, 0};
    int rc = nmt_text_encode(tp, s, strlen(s), &l, err);
    if (rc) return rc;
    int *wof = malloc(sizeof *wof * ((size_t)l.n_words + 1));
    *line = strdup(l.text);
    *map = (nmt_word_map){l.n_words, wof, l.n_text_words};
    if (wof) memcpy(wof, l.word_of, sizeof *wof * (size_t)l.n_words);
    size_t need = 1;
    for (int k = 0; words && k < l.n_text_words; k++) need += strlen(l.text_words[k]) + 1;
    if (words && (*words = malloc(need))) { /* the words, one space between them */
        char *p = *words;
        for (int k = 0; k < l.n_text_words; k++) p += sprintf(p, k ? " %s" : "%s", l.text_words[k]);
        *p = 0;
    }
    if (!wof || !*line || (words && !*words)) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    return NMT_OK;
}

int cmd_alignment_words(const nmt_alignment *a, const nmt_word_map *src, const nmt_word_map *tgt, nmt_alignment *w,
                        float **buf, size_t *cap, nmt_err *err)
{
    nmt_word_map sm = *src, tm = *tgt;
    sm.n_tokens = a->n_src; /* the tokens read: a long source is cut */
    sm.n_words = a->n_src ? sm.word_of[a->n_src - 1] + 1 : 0;
    tm.n_tokens = a->n_tgt;
    size_t need = (size_t)(tm.n_words + 1) * (sm.n_words + 1);
    if (need > *cap) {
        float *p = realloc(*buf, sizeof *p * need);
        if (!p) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        *buf = p;
        *cap = need;
    }
    *w = (nmt_alignment){sm.n_words, tm.n_words, a->logprob, *buf, NULL};
    return nmt_attention_to_words(*buf, a->attention, 1, &tm, &sm, err);
}
