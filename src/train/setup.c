/* setup.c: everything before the first update: the corpora read and checked (tokenized when
 * raw), vocabularies, id pairs, a memory estimate refused up front, the model built or loaded
 * from a checkpoint, the optimizer, batcher and workspace; and the tear-down. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/backend.h"
#include "base/err.h"
#include "base/paths.h"
#include "data/vocab.h"
#include "data/pipeline.h"
#include "data/subword.h"
#include "train/dist.h"
#include "train/trainer.h"

static double mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb * 1024;
}

static int build_vocabs(trainer *t, vocab **sv, vocab **tv, nmt_err *err)
{
    wordcount ws_, wt_;
    int rc = wordcount_build(&ws_, &t->ts, err);
    if (rc) return rc;
    if ((rc = wordcount_build(&wt_, &t->tt, err))) { wordcount_free(&ws_); return rc; }
    rc = vocab_from_counts(sv, &ws_, t->o->cfg.src_vocab, err);
    if (!rc) rc = vocab_from_counts(tv, &wt_, t->o->cfg.tgt_vocab, err);
    wordcount_free(&ws_);
    wordcount_free(&wt_);
    /* a corpus with fewer word types than asked gives a smaller shortlist: say so, the model's
     * size is not the one asked for */
    const char *side[2] = {t->o->src, t->o->tgt};
    const int asked[2] = {t->o->cfg.src_vocab, t->o->cfg.tgt_vocab};
    for (int k = 0; k < 2 && !rc; k++) {
        int got = (k ? *tv : *sv)->n;
        if (got >= asked[k]) continue;
        char msg[512];
        snprintf(msg, sizeof msg, "%s has fewer word types than asked for: its shortlist has %d entries (EOS and UNK "
                 "counted), not %d", side[k], got, asked[k]);
        train_warn(t, msg);
    }
    return rc;
}

/* Runs f through the text stages of one side (train_side_stages): raw text in is
 * Moses-tokenized, or for a subword model perhaps only lowercased and normalised, as the model's
 * data; tokenized text is left as it is. */
static int encode_side(trainer *t, textfile *f, int side, nmt_err *err)
{
    nmt_text_opts to = train_side_stages(t, side);
    if (!to.tokenize && !to.lowercase && !to.normalize_punct) return NMT_OK;
    nmt_text *tp;
    int rc = text_pipe_init_stages(&tp, &to, err);
    if (!rc) rc = textfile_encode(f, tp, err);
    nmt_text_free(tp);
    return rc;
}

/* A per-update log (--batch-log, --cost-log) into *out. A resumed run keeps the log's first
 * `update` lines and drops the rest: updates done after the checkpoint by the interrupted process
 * are redone, so the log matches an uninterrupted run. */
static int open_update_log(trainer *t, const char *path, FILE **out, nmt_err *err)
{
    FILE *f = t->o->resume ? fopen(path, "r+") : NULL;
    if (f) {
        long lines = 0, pos = 0;
        int ch;
        while (lines < t->update && (ch = getc(f)) != EOF) {
            pos++;
            if (ch == '\n') lines++;
        }
        if (ferror(f) || fflush(f) || ftruncate(fileno(f), pos) || fseek(f, 0, SEEK_END)) {
            fclose(f);
            return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
        }
    } else if (!(f = fopen(path, "w"))) {
        return nmt_fail(err, NMT_ERR_IO, "%s: %s", path, strerror(errno));
    }
    *out = f;
    return NMT_OK;
}

/* Reads one parallel pair of files (training or dev), checks that the sides have as many
 * lines, and tokenizes raw text. Every input is read and checked before any training starts. */
static int read_side(trainer *t, textfile *s, textfile *tg, const char *sp, const char *tp, nmt_err *err)
{
    int rc;
    if ((rc = textfile_read(s, sp, err)) || (rc = textfile_read(tg, tp, err))) return rc;
    if (s->nlines != tg->nlines)
        return nmt_fail(err, NMT_ERR_MISMATCH, "%s has %ld lines but %s has %ld", sp, s->nlines, tp, tg->nlines);
    if ((rc = encode_side(t, s, NMT_SOURCE, err)) || (rc = encode_side(t, tg, NMT_TARGET, err))) return rc;
    return NMT_OK;
}

/* Refuses up front what cannot fit: the corpus is already in memory, what is left to allocate
 * is the parameters, gradients, optimizer state and the workspace for the longest pair. */
static int check_memory(trainer *t, const nmt_config *c, nmt_err *err)
{
    const nmt_train_opts *o = t->o;
    int mx = 1, my = 1;
    const pairs *sets[2] = {&t->train, &t->dev};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < sets[s]->n; i++) {
            if (pair_src_len(sets[s], i) > mx) mx = pair_src_len(sets[s], i);
            if (pair_tgt_len(sets[s], i) > my) my = pair_tgt_len(sets[s], i);
        }
    t->max_src = mx;
    t->max_tgt = my;
    int nstate = optim_kind_states(o->optimizer);
    param_table pt;
    param_table_build(&pt, c);
    double pbytes = (double)sizeof(real) * pt.total * (2 + nstate);
    double need = pbytes + (double)net_ws_bytes(c, o->batch, mx, my);
    double avail = o->max_memory > 0 ? o->max_memory : mem_available();
    if (avail > 0 && need > avail)
        return nmt_fail(err, NMT_ERR_NOMEM,
                        "this configuration needs about %.2f GB (%.2f GB of parameters, gradients and optimizer state, %.2f GB of workspace for batches of %d up to %d x %d tokens) but %.2f GB is available",
                        need / 1e9, pbytes / 1e9, net_ws_bytes(c, o->batch, mx, my) / 1e9, o->batch, mx, my, avail / 1e9);
    return NMT_OK;
}

/* A run that neither resumes nor was told to start over may not replace an earlier run's model or
 * checkpoint (a killed run re-run without --resume lost its best model at the first save). */
static int check_earlier_run(trainer *t, nmt_err *err)
{
    const nmt_train_opts *o = t->o;
    if (o->resume && o->overwrite)
        return nmt_fail(err, NMT_ERR_ARG, "--resume goes on from a run and --overwrite starts over: give one of them");
    char found[2 * sizeof t->ckpt_path + 8] = "";
    const char *paths[2] = {o->model, t->ckpt_path};
    struct stat st;
    int n = 0;
    for (int i = 0; i < 2; i++)
        if (!lstat(paths[i], &st))
            snprintf(found + strlen(found), sizeof found - strlen(found), "%s%s", n++ ? " and " : "", paths[i]);
    if (!n || o->resume) return NMT_OK;
    if (!o->overwrite)
        return nmt_fail(err, NMT_ERR_ARG, "%s %s from an earlier run, which this one would replace: --resume %s goes on "
                        "from it, --overwrite starts over", found, n > 1 ? "exist" : "exists", t->ckpt_path);
    char msg[sizeof found + 100];
    snprintf(msg, sizeof msg, "--overwrite: starting over; %s (an earlier run's) will be replaced at the first save", found);
    train_warn(t, msg);
    return NMT_OK;
}

/* No output may be an input (a model written over the corpus, a log over a dev file, the model
 * over the checkpoint being resumed ...), nor two outputs one file; the checkpoint being resumed
 * is the one input that may be rewritten: as the checkpoint, it is the run's own state. Then one
 * run at a time per model: two would interleave their saves. */
static int check_paths(trainer *t, nmt_err *err)
{
    const nmt_train_opts *o = t->o;
    char resolved[4096]; /* MODEL.lock beside the file itself: runs through a link or another spelling meet */
    path_resolve(o->model, resolved, sizeof resolved);
    snprintf(t->lock_path, sizeof t->lock_path, "%s.lock", resolved);
    path_role in[TRAIN_PATHS_IN], out[TRAIN_PATHS_OUT];
    train_paths(t, in, out);
    path_role resume[1] = {{o->resume, "the checkpoint being resumed"}};
    int rc = path_check_outputs(in, TRAIN_PATHS_IN, out, TRAIN_PATHS_OUT, err);
    if (!rc) rc = path_check_outputs(resume, 1, out, 1, err);          /* the model */
    if (!rc) rc = path_check_outputs(resume, 1, out + 2, 5, err);      /* the logs, the lock, the translations */
    if (!rc && t->comm->rank == 0) rc = path_lock(t->lock_path, o->model, &t->lock_fd, err); /* rank 0 writes */
    if (!rc && t->comm->rank == 0) rc = path_lock_inode(o->model, &t->model_fd, err);
    if (!rc && t->comm->rank == 0) rc = check_earlier_run(t, err);
    return rc;
}

/* The options the command line cannot get wrong but a library caller can. */
static int check_opts(const nmt_train_opts *o, nmt_err *err)
{
    if (o->optimizer < OPT_ADADELTA || o->optimizer > OPT_SGD) /* a checkpoint could not name it */
        return nmt_fail(err, NMT_ERR_ARG, "unknown optimizer %d (0 adadelta, 1 adagrad, 2 adam, 3 sgd)", o->optimizer);
    if (isnan(o->lr) || isinf(o->lr)) return nmt_fail(err, NMT_ERR_ARG, "learning rate %g is not finite (<= 0 means the default)", o->lr);
    if (!(o->clip >= 0 && o->clip < INFINITY)) return nmt_fail(err, NMT_ERR_ARG, "clip %g: must be finite and >= 0 (0 = no clipping)", o->clip);
    if (!(o->lr_decay >= 0 && o->lr_decay <= 1)) return nmt_fail(err, NMT_ERR_ARG, "lr_decay %g out of range [0, 1]", o->lr_decay);
    if (!(o->label_smoothing >= 0 && o->label_smoothing < 1))
        return nmt_fail(err, NMT_ERR_ARG, "label smoothing %g out of range [0, 1)", o->label_smoothing);
    if (!(o->dropout_emb >= 0 && o->dropout_emb < 1) || !(o->dropout_rnn >= 0 && o->dropout_rnn < 1))
        return nmt_fail(err, NMT_ERR_ARG, "embedding or recurrent dropout out of range [0, 1)");
    if (o->batch < 1 || o->sort_blocks < 1) return nmt_fail(err, NMT_ERR_ARG, "batch size and sort blocks must be at least 1");
    if ((long long)o->batch * o->sort_blocks > INT_MAX)
        return nmt_fail(err, NMT_ERR_ARG, "batch %d x sort blocks %d = %lld pairs per block: at most %d", o->batch, o->sort_blocks,
                        (long long)o->batch * o->sort_blocks, INT_MAX);
    if (o->lr_warmup < 0 || o->lr_decay_inv_sqrt < 0) return nmt_fail(err, NMT_ERR_ARG, "negative learning-rate schedule");
    if (o->max_len < 0 || o->max_updates < 0 || o->max_epochs < 0 || !(o->max_time >= 0))
        return nmt_fail(err, NMT_ERR_ARG, "negative length or stopping limit");
    return NMT_OK;
}

/* A resumed or fine-tuned run trains the model of its file: its architecture and sizes, whatever
 * the command line asks, which it says (as ckpt_settings does for the optimizer) where an option
 * was set away from its default (a re-run of the same command, or one that names no size, says
 * nothing). A vocabulary asked larger than the model's is left unsaid: a small corpus gives a
 * smaller one than asked. */
static void warn_model_kept(trainer *t, const char *file, const nmt_config *asked, const nmt_config *m)
{
    nmt_train_opts dopts = nmt_train_default_opts(); /* the defaults of the family asked for */
    dopts.cfg.arch = asked->arch;
    const nmt_config d = train_model_config(&dopts);
    char msg[512] = "";
    size_t k = 0;
#define KEPT(field, ...) \
    if (asked->field != m->field && asked->field != d.field && k < sizeof msg) \
        k += (size_t)snprintf(msg + k, sizeof msg - k, __VA_ARGS__)
    if (asked->arch != m->arch && asked->arch != nmt_train_default_opts().cfg.arch)
        k += (size_t)snprintf(msg, sizeof msg, ", %s (not %s)", nmt_arch_name(m->arch), nmt_arch_name(asked->arch));
    KEPT(emb, ", emb %d (not %d)", m->emb, asked->emb);
    KEPT(hid, ", hid %d (not %d)", m->hid, asked->hid);
    KEPT(att, ", att %d (not %d)", m->att, asked->att);
    KEPT(maxout, ", maxout %d (not %d)", m->maxout, asked->maxout);
    KEPT(tied_emb, ", %s embeddings", m->tied_emb ? "tied" : "untied");
    KEPT(enc_depth, ", %d encoder layers (not %d)", m->enc_depth, asked->enc_depth);
    KEPT(dec_depth, ", %d decoder layers (not %d)", m->dec_depth, asked->dec_depth);
    KEPT(heads, ", %d heads (not %d)", m->heads, asked->heads);
    KEPT(ffn, ", feed-forward %d (not %d)", m->ffn, asked->ffn);
#undef KEPT
    if ((asked->src_vocab < m->src_vocab && asked->src_vocab != d.src_vocab) ||
        (asked->tgt_vocab < m->tgt_vocab && asked->tgt_vocab != d.tgt_vocab))
        k += (size_t)snprintf(msg + k, k < sizeof msg ? sizeof msg - k : 0, ", vocabularies %d/%d (not %d/%d)", m->src_vocab,
                              m->tgt_vocab, asked->src_vocab, asked->tgt_vocab);
    if (!*msg) return;
    char line[4800];
    snprintf(line, sizeof line, "%s: the run trains this file's model:%s", file, msg + 1);
    train_warn(t, line);
}

/* The value of "key:" in an options text as --dump-config writes it (the rest of its line), or
 * "" where the key is absent; into buf. */
static const char *option_value(const char *yaml, const char *key, char *buf, size_t n)
{
    size_t kl = strlen(key);
    buf[0] = 0;
    for (const char *p = yaml; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, key, kl) && p[kl] == ':') {
            const char *v = p + kl + 1 + (p[kl + 1] == ' '), *e = strchr(v, '\n');
            snprintf(buf, n, "%.*s", (int)(e ? e - v : (long)strlen(v)), v);
            break;
        }
    return buf;
}

/* A word model of text tokenized outside stores no stages, only its checkpoint the options: a run
 * that goes on from it (resumed or fine-tuned) with others reads its words otherwise, which
 * shows only as a higher UNK rate. Said where the file's options (as the program stores them)
 * and this run's differ; a subword model's own stages are used whatever is given, and said too
 * (a raw-text word model's: warn_stages_kept). */
static void warn_text_kept(trainer *t, const char *file, const char *file_opts)
{
    static const char *const keys[] = {"tokenize", "lowercase", "normalize-punct", "lang", "subwords", "subword-vocab",
                                       "joint", "spm-model"};
    if (!file_opts || !t->o->options_yaml || t->m->has_text) return; /* warn_stages_kept's */
    char msg[1024] = "", a[200], b[200];
    size_t k = 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        option_value(file_opts, keys[i], a, sizeof a);
        option_value(t->o->options_yaml, keys[i], b, sizeof b);
        if (strcmp(a, b) && k < sizeof msg)
            k += (size_t)snprintf(msg + k, sizeof msg - k, ", %s: %s (here: %s)", keys[i], *a ? a : "not given", *b ? b : "not given");
    }
    if (!*msg) return;
    char line[5400];
    snprintf(line, sizeof line, "%s was trained with other text options:%s; %s", file, msg + 1,
             t->m->sw ? "its SentencePiece models and text stages are used" : "this run's are used, so its words may not be the vocabulary's");
    train_warn(t, line);
}

/* A new word model trained on raw text stores the stages its corpus went through, so that it
 * reads raw text by itself (nmt_text_init_model); one of text tokenized outside stores none. */
static void keep_word_stages(trainer *t)
{
    if (t->m->sw) return;
    for (int side = 0; side < 2; side++) {
        t->m->text[side] = train_opts_stages(t->o, side);
        if (t->m->text[side].tokenize) t->m->has_text = 1;
    }
}

/* A word model trained on raw text keeps its stages when a run goes on from its file: other text
 * options given are said not to apply (a run giving none takes the file's without a word). */
static void warn_stages_kept(trainer *t, const char *file)
{
    if (t->m->sw || !t->m->has_text) return;
    for (int side = 0; side < 2; side++) {
        nmt_text_opts o = train_opts_stages(t->o, side);
        if (!o.tokenize || text_stages_same(&o, &t->m->text[side])) continue;
        char line[1200];
        snprintf(line, sizeof line, "%s was trained on raw text through its own text stages, which this run uses for both corpora: "
                 "this run's --tokenize, --lowercase and --normalize-punct are not used", file);
        train_warn(t, line);
        return;
    }
}

/* A file of tokenized text (or an older checkpoint) that this run goes on from with --tokenize:
 * the model it writes reads raw text as this run's corpus was read, and says so. */
static void stages_from_now_on(trainer *t, const char *file)
{
    if (t->m->sw || t->m->has_text) return;
    keep_word_stages(t);
    if (!t->m->has_text) return;
    char line[1200];
    snprintf(line, sizeof line, "%s stores no text stages (trained on tokenized text, or by an older nmt); the model "
             "this run writes stores this run's (--tokenize) and reads raw text", file);
    train_warn(t, line);
}

/* --tied-embeddings-all: a source id and a target id index one matrix, so the two vocabularies
 * must be one list (a joint subword model's pieces) */
static int joint_vocab(const vocab *sv, const vocab *tv, nmt_err *err)
{
    for (int i = 0; i < sv->n && i < tv->n; i++)
        if (strcmp(sv->words[i], tv->words[i]))
            return nmt_fail(err, NMT_ERR_ARG, "--tied-embeddings-all needs one joint vocabulary, but entry %d is '%s' in the "
                            "source's and '%s' in the target's: use --subwords with --joint", i, sv->words[i], tv->words[i]);
    return NMT_OK;
}

int train_setup(trainer *t, st_file **ck, nmt_err *err)
{
    const nmt_train_opts *o = t->o;
    int rc;
    if (!o->src || !o->tgt || !o->model) return nmt_fail(err, NMT_ERR_ARG, "training needs a source file, a target file and a model path");
    if (!o->valid_src != !o->valid_tgt) return nmt_fail(err, NMT_ERR_ARG, "a dev set needs both a source and a target file");
    if ((rc = check_opts(o, err)) || (rc = valid_check_opts(o, err))) return rc;
    snprintf(t->ckpt_path, sizeof t->ckpt_path, "%s", o->checkpoint ? o->checkpoint : "");
    if (!o->checkpoint) snprintf(t->ckpt_path, sizeof t->ckpt_path, "%s.ckpt", o->model);
    if (o->log_tsv) snprintf(t->log_path, sizeof t->log_path, "%s", o->log_tsv);
    else snprintf(t->log_path, sizeof t->log_path, "%s.log.tsv", o->model);
    if ((rc = check_paths(t, err))) return rc;
    /* a resumed subword model's text stages are its own, as a pretrained one's: the file comes first */
    const char *from = o->resume ? o->resume : o->pretrained;
    if (o->resume && o->pretrained)
        train_warn(t, "--pretrained-model is read when a run starts: the resumed run goes on from its checkpoint");
    if (from) {
        if ((rc = st_open(ck, from, err))) return rc; /* tensors read on demand: never held twice */
        if ((rc = model_from_file(&t->m, *ck, err))) return rc;
        if (o->resume && (rc = ckpt_settings(t, *ck, err))) return rc;
    }
    const int from_model = t->m != NULL; /* its vocabularies and sizes, not the options' */
    if ((rc = train_mix_check(o, err))) return rc; /* a resumed run's precision is its checkpoint's */
    if ((rc = train_guided_check(t, err)) || (rc = train_align_check(t, err))) return rc;
    if ((rc = read_side(t, &t->ts, &t->tt, o->src, o->tgt, err))) return rc;
    if (o->valid_src && (rc = read_side(t, &t->vs, &t->vt, o->valid_src, o->valid_tgt, err))) return rc;
    if ((rc = valid_refs_keep(t, err))) return rc;
    /* vocabularies, then the id sequences, then the checks, and only then the big allocations */
    vocab *sv = NULL, *tv = NULL;
    nmt_config cfg = train_model_config(o), asked = cfg;
    if ((rc = train_subword_setup(t, &t->sw, &sv, &tv, err))) { vocab_free(sv); return rc; }
    if (from_model) {
        sv = t->m->src;
        tv = t->m->tgt;
        cfg = t->m->cfg;
        warn_model_kept(t, from, &asked, &t->m->cfg);
        warn_text_kept(t, from, st_meta(*ck, "options"));
        warn_stages_kept(t, from);
        stages_from_now_on(t, from);
    } else {
        if ((rc = nmt_config_check(&asked, err))) { vocab_free(sv); vocab_free(tv); return rc; }
        if (!t->sw && (rc = build_vocabs(t, &sv, &tv, err))) { vocab_free(sv); return rc; }
        cfg.src_vocab = sv->n; /* a corpus with fewer types than asked gives a smaller shortlist; a
                                  subword model's vocabularies are its pieces */
        cfg.tgt_vocab = tv->n;
    }
    const nmt_config *c = &cfg;
    rc = pairs_build(&t->train, &t->ts, &t->tt, sv, tv, o->max_len, err);
    if (!rc && t->train.n == 0)
        rc = nmt_fail(err, NMT_ERR_ARG, "%s: no sentence pair is left after skipping empty pairs and pairs over %d words",
                      o->src, o->max_len);
    if (!rc) rc = train_guided_links(t, err);
    if (!rc && o->valid_src) rc = pairs_build(&t->dev, &t->vs, &t->vt, sv, tv, 0, err);
    if (!rc && !from_model && (rc = nmt_config_check(c, err)))
        nmt_fail(err, rc, "%s: the corpus yields too small a vocabulary (%d source and %d target entries)", o->src,
                 c->src_vocab, c->tgt_vocab);
    if (!rc && !from_model && c->tied_emb == 2) rc = joint_vocab(sv, tv, err);
    if (rc) {
        if (!t->m) { vocab_free(sv); vocab_free(tv); }
        return rc;
    }
    t->corpus_hash = train_corpus_hash(&t->train);
    if ((rc = check_memory(t, c, err))) {
        if (!from_model) { vocab_free(sv); vocab_free(tv); }
        return rc;
    }
    if (!from_model) { /* the new model takes ownership of the vocabularies */
        if ((rc = model_alloc(&t->m, c, sv, tv, err))) { vocab_free(sv); vocab_free(tv); return rc; }
        t->m->sw = t->sw; /* the model owns its SentencePiece models from now on */
        t->sw = NULL;
        keep_word_stages(t);
        rng r;
        rng_seed(&r, o->seed);
        if ((rc = params_init_model(t->m, &r, o->init, err))) return rc;
        c = &t->m->cfg;
    }
    t->G = t->m->cx.b->alloc(sizeof(real) * t->m->pt.total); /* zero-filled */
    if (!t->G) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for gradients");
    params_point(&t->g, &t->m->pt, t->G);
    if ((rc = optim_init(&t->opt, &t->m->cx, o->optimizer, t->m->pt.total, err))) return rc;
    if ((rc = optim_sparse_embeddings(&t->opt, &t->m->pt, err))) return rc;
    if (o->lr > 0) t->opt.lr = o->lr;
    if ((rc = batcher_init(&t->bat, &t->train, o->batch, o->sort_blocks, o->reshuffle, o->seed, err))) return rc;
    if (!(o->dropout >= 0 && o->dropout < 1)) return nmt_fail(err, NMT_ERR_ARG, "dropout %g out of range [0, 1)", o->dropout);
    rng_seed(&t->drop_rng, o->seed ^ 0xd0d0d0d0ULL);
    if ((rc = batch_buf_init(&t->bb, &t->train, o->batch, err))) return rc;
    if ((rc = net_ws_reserve(&t->m->cx, &t->ws, c, o->batch, t->max_src, t->max_tgt, err))) return rc;
    if ((rc = train_guided_init(t, err))) return rc;
    t->best_dev = INFINITY;
    t->best_score = -INFINITY;
    if (o->resume && (rc = ckpt_restore(t, *ck, err))) return rc;
    /* the training terms after the checkpoint's settings have replaced the command line's */
    net_set_dropout(&t->ws, o->dropout, &t->drop_rng);
    net_set_reg(&t->ws, &(net_reg){o->label_smoothing, o->dropout_emb, o->dropout_rnn, o->dropout_tf, o->dropout_attn,
                                   o->dropout_ffn});
    /* the options the run began with stay the checkpoint's, as its settings do */
    const char *began = o->resume ? st_meta(*ck, "options") : NULL;
    if (began && !(t->options_began = strdup(began))) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if ((rc = train_mix_init(t, err))) return rc; /* after the parameters have their values */
    if (t->comm->rank) return NMT_OK; /* rank 0 writes the job's files */
    if (o->resume && (rc = train_log_trim(t, err))) return rc;
    if (o->batch_log && (rc = open_update_log(t, o->batch_log, &t->batch_log, err))) return rc;
    if (o->cost_log && (rc = open_update_log(t, o->cost_log, &t->cost_log, err))) return rc;
    return NMT_OK;
}

void train_summary(trainer *t, char *buf, size_t n)
{
    const nmt_config *c = &t->m->cfg;
    const pairs *p = &t->train;
    int k = snprintf(buf, n,
                     "%s model: vocab %d/%d, emb %d, hid %d, att %d, maxout %d: %zu parameters (%.1f MB)\n"
                     "training: %ld lines, %d pairs kept, %ld skipped as empty, %ld over %d words; UNK rate src %.2f%%, tgt %.2f%%\n",
                     nmt_arch_name(c->arch), c->src_vocab, c->tgt_vocab, c->emb, c->hid, c->att, c->maxout, t->m->pt.total,
                     t->m->pt.total * sizeof(real) / 1e6, p->nlines, p->n, p->empty, p->too_long, t->o->max_len,
                     100.0 * p->src_unk / (p->src_tokens ? p->src_tokens : 1), 100.0 * p->tgt_unk / (p->tgt_tokens ? p->tgt_tokens : 1));
    if (k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - k, "dev: %d pairs%s; optimizer %s (lr %g%s), clip %g, dropout %g, batches of %d in blocks of %d, %s order, seed %llu",
                      t->dev.n, t->dev.n ? "" : " (no validation)", optim_name(t->opt.kind), t->opt.lr, t->o->lr_decay > 0 ? ", decayed on plateaus" : "", t->o->clip, t->o->dropout, t->bat.B,
                      t->bat.B * t->bat.k, t->bat.reshuffle ? "reshuffled" : "paper", (unsigned long long)t->o->seed);
    if ((t->o->label_smoothing > 0 || t->o->dropout_emb > 0 || t->o->dropout_rnn > 0) && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - k, "\nlabel smoothing %g, variational dropout %g on embeddings and %g on recurrent states",
                      t->o->label_smoothing, t->o->dropout_emb, t->o->dropout_rnn);
    if (c->arch == NMT_ARCH_TRANSFORMER && k > 0 && (size_t)k < n) {
        static const char *const act[3] = {"relu", "gelu", "swish"};
        k += snprintf(buf + k, n - k, "\ntransformer: %d + %d layers, %d heads, feed-forward %d (%s), %s-norm, %s positions; "
                      "dropout %g on blocks, %g on attention, %g in the feed-forward", c->enc_depth, c->dec_depth, c->heads,
                      c->ffn, act[c->ffn_act], c->post_norm ? "post" : "pre", c->max_pos ? "learned" : "sinusoidal",
                      t->o->dropout_tf, t->o->dropout_attn, t->o->dropout_ffn);
    }
    if ((t->o->lr_warmup > 0 || t->o->lr_decay_inv_sqrt > 0) && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - k, "\nlearning-rate schedule: warm-up over %ld updates, inverse-square-root decay after %ld",
                      t->o->lr_warmup, t->o->lr_decay_inv_sqrt);
    if (t->mix && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - k, "\nprecision bf16: the step's matrix products in bf16 with FP32 sums; FP32 weights, "
                      "gradients and optimizer; the dev set scored in FP32");
    if (t->o->guided_alignment && t->train.link_off && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - k, "\nguided alignment: %ld links from %s, %s cost, weight %g", t->train.link_off[t->train.n],
                      t->o->guided_alignment, t->o->guided_cost == NMT_GUIDED_MSE ? "mse" : "ce", t->o->guided_weight);
    if (c->tied_emb && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - k, "\ntied embeddings: the target embeddings are the softmax layer's weights%s",
                      c->tied_emb == 2 ? ", and the source embeddings too" : "");
    if (t->o->pretrained && !t->o->resume && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - k, "\nfine-tuning %s: its architecture, sizes, vocabularies and weights%s; a fresh optimizer "
                      "and schedule", t->o->pretrained, t->m->sw ? ", its SentencePiece models and text stages"
                                                         : t->m->has_text ? ", its text stages" : "");
    if (t->o->init != NMT_INIT_PAPER && !t->o->resume && !t->o->pretrained && k > 0 && (size_t)k < n) /* not drawn now */
        k += snprintf(buf + k, n - k, "\ninitialisation: %s", t->o->init == NMT_INIT_GLOROT_ATT
                      ? "the attention's weights Glorot-uniform, the rest as Appendix B" : "every weight matrix Glorot-uniform");
    if (t->m->sw && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - k, "\nsubword units: SentencePiece%s, %d source and %d target pieces (EOS and UNK counted)",
                      t->m->sw->joint ? " (one joint model)" : "", c->src_vocab, c->tgt_vocab);
    if (t->comm->size > 1 && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - k, "\ndata parallel: %d ranks, each computing about %d pairs of every minibatch of %d",
                      t->comm->size, (t->bat.B + t->comm->size - 1) / t->comm->size, t->bat.B);
    if (t->o->resume && k > 0 && (size_t)k < n)
        snprintf(buf + k, n - k, "\nresumed from %s at update %ld (epoch %d)", t->o->resume, t->update, t->bat.epoch);
}

void train_cleanup(trainer *t)
{
    path_unlock(t->lock_path, t->lock_fd);
    if (t->model_fd >= 0) close(t->model_fd);
    if (t->batch_log) fclose(t->batch_log); /* errors are caught by the flush after each update */
    if (t->cost_log) fclose(t->cost_log);
    dist_free(t);
    guide_free(&t->guide);
    if (t->m) { /* G and the bf16 set live on the model's device: freed before the model */
        if (t->mix) t->m->cx.b->mix->free(t->mix);
        t->m->cx.b->free(t->G);
    }
    nmt_model_free(t->m);
    subwords_free(t->sw);
    free(t->options_began);
    optim_free(&t->opt);
    textfile_free(&t->ts); textfile_free(&t->tt); textfile_free(&t->vs); textfile_free(&t->vt);
    free(t->ref);
    free(t->ref_buf);
    pairs_free(&t->train);
    pairs_free(&t->dev);
    batcher_free(&t->bat);
    batch_buf_free(&t->bb);
    net_ws_free(&t->ws);
}
