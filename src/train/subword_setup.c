/* subword_setup.c: the subword half of training's set-up. The corpora have been through their
 * text stages; here the SentencePiece model(s) are trained on the training corpus (or read from
 * the files given), every corpus is replaced by its pieces, and the vocabularies are the
 * models' pieces. A resumed run takes the checkpoint's models instead. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/paths.h"
#include "data/vocab.h"
#include "data/pipeline.h"
#include "data/subword.h"
#include "train/trainer.h"

int train_uses_subwords(const nmt_train_opts *o) { return o->subwords || o->spm_src; }

nmt_text_opts train_side_stages(const trainer *t, int side)
{
    const nmt_text_opts *kept = t->m ? model_text_stages(t->m, side) : NULL;
    return kept ? *kept : train_opts_stages(t->o, side); /* resumed or fine-tuned: the stages the model was trained with */
}

nmt_text_opts train_opts_stages(const nmt_train_opts *o, int side)
{
    nmt_text_opts to = nmt_text_default_opts();
    int tok = side ? o->tokenize_tgt : o->tokenize_src;
    if (tok >= 0) {
        to.lang = tok;
        to.tokenize = 1;
        /* SentencePiece over Moses tokens: no HTML escapes (tokenizer.perl -no-escape), which would
         * only cost pieces (&apos; is four of them); the detokenizer leaves plain text as it is */
        to.escape = !train_uses_subwords(o);
    } else if (train_uses_subwords(o)) {
        to.lang = side ? o->lang_tgt : o->lang_src;
    }
    if (to.tokenize || train_uses_subwords(o)) {
        to.lowercase = o->tok_lowercase;
        to.normalize_punct = o->tok_normalize;
    }
    return to;
}

/* The bytes of a SentencePiece model file, loaded. */
static int load_model_file(spm **out, const char *path, nmt_err *err)
{
    *out = NULL;
    /* a model, read once per side that names it: a FIFO would wait for ever the second time */
    char *buf;
    size_t len;
    int rc = path_read_all(path, &buf, &len, err);
    if (!rc) rc = spm_load(out, buf, len, path, err);
    free(buf);
    return rc;
}

/* One SentencePiece model trained on the lines of a (and of b, for a joint model). */
static int train_model(spm **out, const textfile *a, const textfile *b, const nmt_train_opts *o, nmt_err *err)
{
    long n = a->nlines + (b ? b->nlines : 0);
    const char **lines = malloc(sizeof *lines * (size_t)(n ? n : 1));
    if (!lines) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    for (long i = 0; i < a->nlines; i++) lines[i] = a->line[i];
    for (long i = 0; b && i < b->nlines; i++) lines[a->nlines + i] = b->line[i];
    char *model = NULL;
    size_t len = 0;
    unsigned seed = (unsigned)(o->seed % 0xfffffffeu); /* SentencePiece reserves 2^32-1 */
    int threads = o->threads <= 0 ? 2 : o->threads < NMT_MAX_THREADS ? o->threads : NMT_MAX_THREADS;
    int rc = spm_train(lines, n, o->subwords, o->subword_vocab, threads, seed, &model, &len, err);
    free(lines);
    if (!rc) rc = spm_load(out, model, len, "the SentencePiece model just trained", err);
    free(model);
    return rc;
}

/* The run's subword units: trained, or read from --spm-model. */
static int make_subwords(trainer *t, subwords **out, nmt_err *err)
{
    const nmt_train_opts *o = t->o;
    nmt_text_opts text[2] = {train_side_stages(t, NMT_SOURCE), train_side_stages(t, NMT_TARGET)};
    spm *src = NULL, *tgt = NULL;
    int rc;
    if (o->spm_src) {
        rc = load_model_file(&src, o->spm_src, err);
        if (!rc && o->spm_tgt && (rc = load_model_file(&tgt, o->spm_tgt, err))) spm_free(src);
    } else {
        int joint = o->subword_joint;
        rc = train_model(&src, &t->ts, joint ? &t->tt : NULL, o, err);
        if (!rc && !joint && (rc = train_model(&tgt, &t->tt, NULL, o, err))) spm_free(src);
    }
    return rc ? rc : subwords_init(out, src, tgt, text, err);
}

/* The vocabulary of one side's SentencePiece model. */
static int side_vocab(vocab **out, const subwords *sw, int side, nmt_err *err)
{
    const char **words;
    int n, rc = subword_vocab_words(sw->sp[side], &words, &n, err);
    if (rc) return rc;
    rc = vocab_from_words(out, words, n, err);
    free(words);
    return rc;
}

int train_subword_setup(trainer *t, subwords **sw, vocab **sv, vocab **tv, nmt_err *err)
{
    const nmt_train_opts *o = t->o;
    *sw = NULL;
    if (t->m && !t->m->sw && train_uses_subwords(o))
        return nmt_fail(err, NMT_ERR_ARG, "%s is a word model: it cannot go on with subword units", o->resume ? o->resume : o->pretrained);
    if (t->m && !t->m->sw) return NMT_OK;
    if (!t->m && !train_uses_subwords(o)) return NMT_OK;
    int rc = t->m ? NMT_OK : make_subwords(t, sw, err);
    const subwords *use = t->m ? t->m->sw : *sw;
    textfile *files[2][2] = {{&t->ts, &t->vs}, {&t->tt, &t->vt}};
    for (int side = 0; side < 2 && !rc; side++) {
        nmt_text *tp;
        if ((rc = text_pipe_init_subwords(&tp, use, side, NULL, 0, err))) break;
        for (int k = 0; k < 2 && !rc; k++)
            if (files[side][k]->line) rc = textfile_encode(files[side][k], tp, err);
        nmt_text_free(tp);
    }
    if (!rc && !t->m) {
        rc = side_vocab(sv, *sw, NMT_SOURCE, err);
        if (!rc) rc = side_vocab(tv, *sw, NMT_TARGET, err);
    }
    return rc;
}
