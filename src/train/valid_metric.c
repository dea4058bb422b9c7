/* valid_metric.c: validation by translation quality (nmt_train_opts.valid_metrics): the dev set
 * translated by beam search and scored by the program's scorer (BLEU, chrF), the best score of
 * the deciding metric, and the K best models kept for averaging (--keep-best), with the state a
 * checkpoint needs to go on with both. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/atomic.h"
#include "base/err.h"
#include "base/paths.h"
#include "data/pipeline.h"
#include "train/trainer.h"

int valid_metric(const nmt_train_opts *o) { return o->n_valid_metrics > 0 ? o->valid_metrics[0] : NMT_METRIC_PPL; }

static int wants(const nmt_train_opts *o, int metric)
{
    for (int i = 0; i < o->n_valid_metrics; i++)
        if (o->valid_metrics[i] == metric) return 1;
    return 0;
}

int valid_translates(const nmt_train_opts *o) { return wants(o, NMT_METRIC_BLEU) || wants(o, NMT_METRIC_CHRF); }
static int valid_decodes(const nmt_train_opts *o) { return valid_translates(o) || o->valid_output; }

/* The template with {U} and {E} replaced by the update and the epoch into buf; -1 if too long. */
static int expand_output(char *buf, size_t n, const char *tmpl, long update, int epoch)
{
    size_t k = 0;
    for (const char *p = tmpl; *p; p++) {
        int w;
        if (!strncmp(p, "{U}", 3)) { w = snprintf(buf + k, n - k, "%ld", update); p += 2; }
        else if (!strncmp(p, "{E}", 3)) { w = snprintf(buf + k, n - k, "%d", epoch); p += 2; }
        else w = snprintf(buf + k, n - k, "%c", *p);
        if (w < 0 || (size_t)w >= n - k) return -1;
        k += (size_t)w;
    }
    return 0;
}

/* The template of --valid-translation-output: {U} and {E} only (Marian's {B} and {T} are not
 * kept here: said, not left in the name), and a directory this run can write into, checked now
 * rather than after an epoch of training. */
static int check_output_template(const char *tmpl, nmt_err *err)
{
    for (const char *p = strchr(tmpl, '{'); p; p = strchr(p + 1, '{'))
        if (p[1] && p[2] == '}' && p[1] != 'U' && p[1] != 'E')
            return nmt_fail(err, NMT_ERR_ARG, "--valid-translation-output %s: {%c} is not known ({U}: the update, {E}: the epoch)", tmpl, p[1]);
    char path[4200];
    if (expand_output(path, sizeof path, tmpl, 0, 0)) return nmt_fail(err, NMT_ERR_ARG, "--valid-translation-output: the name is too long");
    char *slash = strrchr(path, '/');
    if (slash == path) slash[1] = 0;
    else if (slash) *slash = 0;
    const char *dir = slash ? path : ".";
    if (access(dir, W_OK | X_OK))
        return nmt_fail(err, NMT_ERR_IO, "--valid-translation-output %s: cannot write into %s: %s", tmpl, dir, strerror(errno));
    return NMT_OK;
}

int valid_check_opts(const nmt_train_opts *o, nmt_err *err)
{
    if (o->n_valid_metrics < 0 || o->n_valid_metrics > NMT_MAX_VALID_METRICS)
        return nmt_fail(err, NMT_ERR_ARG, "%d validation metrics: at most %d", o->n_valid_metrics, NMT_MAX_VALID_METRICS);
    for (int i = 0; i < o->n_valid_metrics; i++)
        if (o->valid_metrics[i] < NMT_METRIC_PPL || o->valid_metrics[i] > NMT_METRIC_CHRF)
            return nmt_fail(err, NMT_ERR_ARG, "validation metric %d is not ppl, bleu or chrf", o->valid_metrics[i]);
    if (valid_translates(o) && !o->valid_scorer)
        return nmt_fail(err, NMT_ERR_ARG, "validation by BLEU or chrF needs a scorer (nmt_train_opts.valid_scorer = nmt_metric_score)");
    if (valid_decodes(o) && (o->valid_beam < 1 || o->valid_beam > 1000))
        return nmt_fail(err, NMT_ERR_ARG, "validation beam %d out of range [1, 1000]", o->valid_beam);
    if (o->keep_best < 0 || o->keep_best > NMT_MAX_KEEP_BEST)
        return nmt_fail(err, NMT_ERR_ARG, "keep-best %d out of range [0, %d]", o->keep_best, NMT_MAX_KEEP_BEST);
    if ((o->n_valid_metrics > 0 || o->keep_best > 0 || o->valid_output) && !o->valid_src)
        return nmt_fail(err, NMT_ERR_ARG, "validation metrics, --keep-best and --valid-translation-output need a dev set "
                        "(--valid-src, --valid-tgt)");
    return o->valid_output ? check_output_template(o->valid_output, err) : NMT_OK;
}

/* ------------------------------------------------------------------ references */

/* The dev target's lines after the text stages and before any subword segmentation, kept for
 * scoring: the reference a translation is compared with is what the model's output would be,
 * joined into words, if it were perfect (tokenized text for a tokenizing word model, raw text
 * for a subword model). */
int valid_refs_keep(trainer *t, nmt_err *err)
{
    if (!valid_translates(t->o) || !t->vt.line) return NMT_OK;
    size_t total = 0;
    for (long i = 0; i < t->vt.nlines; i++) total += strlen(t->vt.line[i]) + 1;
    t->ref_buf = malloc(total ? total : 1);
    t->ref = malloc(sizeof *t->ref * (size_t)(t->vt.nlines ? t->vt.nlines : 1));
    if (!t->ref_buf || !t->ref) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory for the dev references");
    char *p = t->ref_buf;
    for (long i = 0; i < t->vt.nlines; i++) {
        size_t n = strlen(t->vt.line[i]) + 1;
        memcpy(p, t->vt.line[i], n);
        t->ref[i] = p;
        p += n;
    }
    return NMT_OK;
}

/* ------------------------------------------------------------------ translating the dev set */

/* A hypothesis as one line of text, malloc'ed into *out: its tokens joined as the model's
 * target pipeline joins them before detokenizing (tp: pieces by SentencePiece, words by spaces). */
static int hyp_text(char **out, nmt_text *tp, const nmt_hypothesis *h, nmt_err *err)
{
    const char *s;
    size_t len;
    int rc = nmt_text_decode_words(tp, h->words, h->n_words, &s, &len, err);
    if (!rc && !(*out = strdup(s))) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    return rc;
}

#define VALID_CHUNK 256 /* sentences per nmt_translate_ids call: bounds the results held at once */

/* hyp[i] (malloc'ed) = the translation of dev pair i. */
static int translate_dev(trainer *t, char **hyp, nmt_err *err)
{
    nmt_translate_opts to = nmt_translate_default_opts();
    to.beam = t->o->valid_beam;
    nmt_decoder *d = NULL;
    nmt_text *tp = NULL;
    nmt_source src[VALID_CHUNK];
    nmt_translation out[VALID_CHUNK];
    int rc = nmt_decoder_init(&d, t->m, &to, err);
    nmt_text_opts plain = nmt_text_default_opts(); /* no stages: the words as the reference holds them */
    if (!rc && t->m->sw) rc = text_pipe_init_subwords(&tp, t->m->sw, NMT_TARGET, t->m->tgt, 0, err);
    else if (!rc) rc = nmt_text_init(&tp, &plain, NULL, 0, err);
    for (int s = 0; s < t->dev.n && !rc; s += VALID_CHUNK) {
        int cnt = t->dev.n - s < VALID_CHUNK ? t->dev.n - s : VALID_CHUNK;
        for (int i = 0; i < cnt; i++) { /* the ids the dev pairs hold already, their EOS left off */
            int k = s + i;
            src[i] = (nmt_source){t->dev.src + t->dev.src_off[k], pair_src_len(&t->dev, k) - 1, t->vs.line[t->dev.line[k] - 1]};
        }
        if ((rc = nmt_translate_ids(d, src, NULL, cnt, out, err))) break;
        static const nmt_hypothesis none = {0}; /* an empty source has no hypothesis */
        for (int i = 0; i < cnt && !rc; i++) rc = hyp_text(&hyp[s + i], tp, out[i].n_hyps ? &out[i].hyps[0] : &none, err);
        nmt_translation_free(out, cnt);
    }
    nmt_text_free(tp);
    nmt_decoder_free(d);
    return rc;
}

/* Whether path, a name known only now, is one of the run's inputs or outputs (the kept models
 * included): said why in err. */
static int output_clashes(const trainer *t, const char *path, nmt_err *err)
{
    path_role in[TRAIN_PATHS_IN], out[TRAIN_PATHS_OUT + 3];
    train_paths(t, in, out);
    char best[4200], kept[4200];
    snprintf(best, sizeof best, "%s.best.tsv", t->o->model);
    valid_kept_path(kept, sizeof kept, t->o->model, t->update);
    out[TRAIN_PATHS_OUT - 1] = (path_role){path, "the dev translations"}; /* in the template's place */
    out[TRAIN_PATHS_OUT] = (path_role){best, "the list of kept models"};
    out[TRAIN_PATHS_OUT + 1] = (path_role){t->o->keep_best > 0 ? kept : NULL, "a kept model"};
    int rc = path_check_outputs(in, TRAIN_PATHS_IN, out, TRAIN_PATHS_OUT + 2, err);
    for (int i = 0; i < t->n_kept && !rc; i++) {
        valid_kept_path(kept, sizeof kept, t->o->model, t->kept_update[i]);
        out[0] = (path_role){kept, "a kept model"};
        out[1] = (path_role){path, "the dev translations"};
        rc = path_check_outputs(NULL, 0, out, 2, err);
    }
    return rc;
}

/* The dev translations, one line per line of the dev source (a pair skipped as empty gets an
 * empty line, so that line i answers line i), written whole and atomically. A name that would
 * clash with another file, or a failed write, is a warning: the run goes on without them. */
static void write_dev_output(trainer *t, char *const *hyp)
{
    char path[4200], msg[4600];
    nmt_err e;
    const char **by_line = NULL;
    int rc = expand_output(path, sizeof path, t->o->valid_output, t->update, t->bat.epoch)
                 ? nmt_fail(&e, NMT_ERR_ARG, "the name is too long") : output_clashes(t, path, &e);
    if (!rc && !(by_line = calloc((size_t)(t->vs.nlines > 0 ? t->vs.nlines : 1), sizeof *by_line)))
        rc = nmt_fail(&e, NMT_ERR_NOMEM, "out of memory");
    for (int i = 0; !rc && i < t->dev.n; i++) by_line[t->dev.line[i] - 1] = hyp[i];
    atomic_file af;
    if (!rc) rc = atomic_open(&af, path, &e);
    for (long i = 0; !rc && i < t->vs.nlines; i++) fprintf(af.fp, "%s\n", by_line[i] ? by_line[i] : "");
    if (!rc) rc = atomic_commit(&af, &e); /* which checks every write */
    free(by_line);
    if (!rc) return;
    snprintf(msg, sizeof msg, "the dev translations of update %ld not written: %s", t->update, e.msg);
    train_warn(t, msg);
}

int valid_scores(trainer *t, nmt_train_report *r, nmt_err *err)
{
    r->dev_bleu = r->dev_chrf = NAN;
    if (!valid_decodes(t->o) || t->dev.n == 0) return NMT_OK;
    int n = t->dev.n;
    char **hyp = calloc((size_t)n, sizeof *hyp);
    const char **ref = malloc(sizeof *ref * (size_t)n);
    int rc = hyp && ref ? translate_dev(t, hyp, err) : nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if (!rc && t->o->valid_output) write_dev_output(t, hyp);
    for (int i = 0; i < n && !rc && t->ref; i++) ref[i] = t->ref[t->dev.line[i] - 1]; /* kept when a metric scores */
    if (!rc && wants(t->o, NMT_METRIC_BLEU))
        rc = t->o->valid_scorer(NMT_METRIC_BLEU, (const char *const *)hyp, ref, n, &r->dev_bleu, err);
    if (!rc && wants(t->o, NMT_METRIC_CHRF))
        rc = t->o->valid_scorer(NMT_METRIC_CHRF, (const char *const *)hyp, ref, n, &r->dev_chrf, err);
    for (int i = 0; hyp && i < n; i++) free(hyp[i]);
    free(hyp);
    free(ref);
    return rc;
}

/* The deciding metric's value in r, the higher the better (the dev NLL negated). */
double valid_key(const trainer *t, const nmt_train_report *r)
{
    switch (valid_metric(t->o)) {
    case NMT_METRIC_BLEU: return r->dev_bleu;
    case NMT_METRIC_CHRF: return r->dev_chrf;
    default: return -r->dev_nll;
    }
}

/* ------------------------------------------------------------------ the K best models */

/* MODEL with .uUPDATE before its extension (m.nmt -> m.u1200.nmt; m -> m.u1200). */
void valid_kept_path(char *buf, size_t n, const char *model, long update)
{
    const char *slash = strrchr(model, '/'), *dot = strrchr(model, '.');
    if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : model)) dot = model + strlen(model);
    snprintf(buf, n, "%.*s.u%ld%s", (int)(dot - model), model, update, dot);
}

/* A run resumed with another deciding metric: the list the old metric kept moves to
 * MODEL.best.METRIC.tsv (.2.tsv and on when that exists: metrics switched back and forth) before
 * the new list takes its name, its files staying on disk. Done at the first write, not at the
 * resume, which may stop before it checkpoints. */
static void move_old_list(trainer *t)
{
    char from[4200], to[4300], msg[4500];
    snprintf(from, sizeof from, "%s.best.tsv", t->o->model);
    const char *metric = nmt_metric_name(t->kept_old_metric - 1);
    t->kept_old_metric = 0;
    for (int k = 1; k < 100; k++) {
        snprintf(to, sizeof to, k == 1 ? "%s.best.%.8s.tsv" : "%s.best.%.8s.%d.tsv", t->o->model, metric, k);
        if (link(from, to) == 0) { unlink(from); break; } /* link, not rename: never replaces an older list */
        if (errno == EEXIST) continue;
        if (errno == ENOENT) return; /* no list to move */
        if (access(to, F_OK) == 0 || rename(from, to)) { train_warn(t, "could not move the old metric's list aside"); return; }
        break;
    }
    snprintf(msg, sizeof msg, "the models the run kept by %s are listed in %s", metric, to);
    train_warn(t, msg);
}

/* MODEL.best.tsv: the kept models, best first, written whole each time (atomically). */
static int write_list(trainer *t, nmt_err *err)
{
    char path[4200], file[4200];
    if (t->kept_old_metric) move_old_list(t);
    snprintf(path, sizeof path, "%s.best.tsv", t->o->model);
    atomic_file af;
    int rc = atomic_open(&af, path, err);
    if (rc) return rc;
    fprintf(af.fp, "rank\tupdate\t%s\tfile\n", valid_metric(t->o) == NMT_METRIC_PPL ? "dev_nll" : nmt_metric_name(valid_metric(t->o)));
    for (int i = 0; i < t->n_kept; i++) {
        valid_kept_path(file, sizeof file, t->o->model, t->kept_update[i]);
        double v = valid_metric(t->o) == NMT_METRIC_PPL ? -t->kept_score[i] : t->kept_score[i];
        fprintf(af.fp, "%d\t%ld\t%.4f\t%s\n", i + 1, t->kept_update[i], v, file);
    }
    return atomic_commit(&af, err); /* which checks every write */
}

/* Drops entry i of the kept list. */
static void kept_remove(trainer *t, int i)
{
    memmove(t->kept_update + i, t->kept_update + i + 1, sizeof *t->kept_update * (size_t)(t->n_kept - i - 1));
    memmove(t->kept_score + i, t->kept_score + i + 1, sizeof *t->kept_score * (size_t)(t->n_kept - i - 1));
    t->n_kept--;
}

/* Resumed with a smaller --keep-best: the models ranked below K go at the first validation, as
 * they would have gone had K been this small all along (not at the resume, which may stop before
 * it checkpoints and leave a checkpoint listing files no longer there). 1 when any went. */
static int trim_kept(trainer *t, int K)
{
    if (t->n_kept <= K) return 0;
    char path[4200], msg[4400];
    int removed = 0;
    for (int i = K; i < t->n_kept; i++) {
        valid_kept_path(path, sizeof path, t->o->model, t->kept_update[i]);
        if (remove(path) == 0) removed++;
        else if (errno != ENOENT) {
            snprintf(msg, sizeof msg, "could not remove %s, which --keep-best %d leaves out", path, K);
            train_warn(t, msg);
        }
    }
    snprintf(msg, sizeof msg, "--keep-best %d, smaller than the resumed run's list: %d kept model(s) ranked below it removed", K, removed);
    train_warn(t, msg);
    t->n_kept = K;
    return 1;
}

/* The model at this update joins the K best when its score beats the K-th (ties keep the older).
 * The new file is written before the dropped one is removed and the list rewritten, so that a
 * run killed in between and resumed (which validates this update again) ends the same. */
int valid_keep_best(trainer *t, double key, nmt_err *err)
{
    int K = t->o->keep_best;
    if (K <= 0 || !isfinite(key)) return NMT_OK;
    for (int i = 0; i < t->n_kept; i++)
        if (t->kept_update[i] == t->update) kept_remove(t, i--); /* validated again after a resume */
    int trimmed = trim_kept(t, K);
    int p = 0;
    while (p < t->n_kept && !(key > t->kept_score[p])) p++;
    if (p >= K) return trimmed ? write_list(t, err) : NMT_OK;
    char path[4200];
    valid_kept_path(path, sizeof path, t->o->model, t->update);
    int rc = nmt_model_save(t->m, path, err);
    if (rc) return rc;
    if (t->n_kept == K) {
        valid_kept_path(path, sizeof path, t->o->model, t->kept_update[K - 1]);
        if (remove(path) && errno != ENOENT) train_warn(t, "could not remove a model that dropped out of the K best");
        t->n_kept--;
    }
    memmove(t->kept_update + p + 1, t->kept_update + p, sizeof *t->kept_update * (size_t)(t->n_kept - p));
    memmove(t->kept_score + p + 1, t->kept_score + p, sizeof *t->kept_score * (size_t)(t->n_kept - p));
    t->kept_update[p] = t->update;
    t->kept_score[p] = key;
    t->n_kept++;
    return write_list(t, err);
}

/* ------------------------------------------------------------------ checkpoint state */

/* {"metric": "bleu", "best": 31.2, "kept": [[1200, 31.2], [1000, 30.5]]}: the deciding metric,
 * its best value so far (BLEU and chrF; the NLL's is train_state's best_dev) and the kept list. */
char *valid_state_json(const trainer *t)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "metric", nmt_metric_name(valid_metric(t->o)));
    cJSON_AddNumberToObject(s, "best", isfinite(t->best_score) ? t->best_score : -1);
    cJSON *k = cJSON_AddArrayToObject(s, "kept");
    for (int i = 0; i < t->n_kept; i++) {
        cJSON *e = cJSON_CreateArray();
        cJSON_AddItemToArray(e, cJSON_CreateNumber((double)t->kept_update[i]));
        cJSON_AddItemToArray(e, cJSON_CreateNumber(t->kept_score[i]));
        cJSON_AddItemToArray(k, e);
    }
    char *js = cJSON_PrintUnformatted(s);
    cJSON_Delete(s);
    return js;
}

/* The kept list of s into t, each entry checked; NULL or what is wrong. */
static const char *read_kept(trainer *t, const cJSON *k)
{
    if (!cJSON_IsArray(k) || cJSON_GetArraySize(k) > NMT_MAX_KEEP_BEST) return "kept must be a list of at most 100 [update, score] pairs";
    t->n_kept = 0;
    for (const cJSON *e = k->child; e; e = e->next) {
        const cJSON *u = cJSON_GetArrayItem(e, 0), *v = cJSON_GetArrayItem(e, 1);
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 || !cJSON_IsNumber(u) || !cJSON_IsNumber(v) ||
            !(u->valuedouble >= 1 && u->valuedouble <= t->update && u->valuedouble == floor(u->valuedouble)) || !isfinite(v->valuedouble))
            return "kept has an entry that is not [update, score] with an update up to the checkpoint's";
        if (t->n_kept && v->valuedouble > t->kept_score[t->n_kept - 1]) return "kept is not sorted best first";
        t->kept_update[t->n_kept] = (long)u->valuedouble;
        t->kept_score[t->n_kept++] = v->valuedouble;
    }
    return NULL;
}

/* Kept models the checkpoint lists whose files are gone (a run cut between removing a model and
 * its next checkpoint, files moved by hand, a resume under another --model) leave the list, so
 * that they take no place among the K best and nmt average is never handed a missing file. */
static void drop_missing(trainer *t)
{
    char path[4200], missing[4200] = "", msg[4500];
    int gone = 0;
    for (int i = 0; i < t->n_kept; i++) {
        valid_kept_path(path, sizeof path, t->o->model, t->kept_update[i]);
        if (access(path, F_OK) == 0 || errno != ENOENT) continue;
        memcpy(missing, path, sizeof missing);
        kept_remove(t, i--);
        gone++;
    }
    if (!gone) return;
    snprintf(msg, sizeof msg, "%d kept model(s) of the checkpoint's list not on disk (%s among them): left out of it", gone, missing);
    train_warn(t, msg);
}

/* A checkpoint's validation state (metadata key "validation"; older checkpoints have none). A
 * run resumed with another deciding metric starts its best score and kept list afresh. */
int valid_state_restore(trainer *t, const char *js, const char *path, nmt_err *err)
{
    if (!js) return NMT_OK;
    cJSON *s = cJSON_Parse(js);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(s, "metric"), *b = cJSON_GetObjectItemCaseSensitive(s, "best");
    const char *why = NULL;
    if (!cJSON_IsObject(s) || !cJSON_IsString(m) || nmt_metric_parse(m->valuestring) < 0 || !cJSON_IsNumber(b) || !isfinite(b->valuedouble))
        why = "must be an object with metric (ppl, bleu or chrf), best and kept";
    else if (nmt_metric_parse(m->valuestring) != valid_metric(t->o)) {
        t->kept_old_metric = nmt_metric_parse(m->valuestring) + 1;
        train_warn(t, "the run validated by another metric until now: its best score and kept models start afresh "
                   "(its list moves to MODEL.best.METRIC.tsv when this run keeps its first model)");
    } else if (!(why = read_kept(t, cJSON_GetObjectItemCaseSensitive(s, "kept")))) {
        t->best_score = b->valuedouble == -1 ? -INFINITY : b->valuedouble;
        drop_missing(t);
    }
    cJSON_Delete(s);
    if (why) t->n_kept = 0;
    return why ? nmt_fail(err, NMT_ERR_FORMAT, "%s: validation state: %s", path, why) : NMT_OK;
}
