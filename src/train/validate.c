/* validate.c: a validation: the dev set's NLL with dropout off, the best model saved when it
 * improves, patience and learning-rate decay counted, and one row of the TSV log (the Table-2
 * style record of a run). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"
#include "base/err.h"
#include "train/trainer.h"

/* Summed NLL and target-token count (EOS included) of a pair set, in sorted batches of B. */
static int evaluate(trainer *t, const pairs *p, double *nll, long *ntok, nmt_err *err)
{
    int *idx = malloc(sizeof(int) * (p->n ? p->n : 1));
    batch_buf vb;
    int rc = batch_buf_init(&vb, p, t->bat.B, err);
    if (!idx || rc) { free(idx); batch_buf_free(&vb); return rc ? rc : nmt_fail(err, NMT_ERR_NOMEM, "out of memory"); }
    for (int i = 0; i < p->n; i++) idx[i] = i;
    sort_by_length(idx, p->n, p);
    *nll = 0;
    *ntok = 0;
    net_set_dropout(&t->ws, 0, NULL); /* the model as it translates */
    for (int s = 0; s < p->n && !rc; s += t->bat.B) {
        int cnt = p->n - s < t->bat.B ? p->n - s : t->bat.B;
        batch_fill(&vb, p, idx + s, cnt);
        rc = net_ws_reserve(&t->m->cx, &t->ws, &t->m->cfg, cnt, vb.b.Tx, vb.b.Ty, err);
        if (rc) break;
        *nll += net_forward(&t->m->cx, &t->ws, &t->m->cfg, &t->m->p, &vb.b, NULL);
        for (int r = 0; r < cnt; r++) *ntok += vb.b.ylen[r];
    }
    free(idx);
    batch_buf_free(&vb);
    net_set_dropout(&t->ws, t->o->dropout, &t->drop_rng);
    return rc;
}

/* A BLEU or chrF column: the score, or nothing when it was not asked for. */
static void log_score(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "\t%.4f", v);
    else fputc('\t', f);
}

int train_validate(trainer *t, int *stop, nmt_err *err)
{
    nmt_train_report r;
    memset(&r, 0, sizeof r);
    r.kind = NMT_REPORT_VALID;
    double nll = 0;
    long ntok = 0;
    int rc;
    r.dev_bleu = r.dev_chrf = NAN;
    if (t->dev.n > 0) {
        if ((rc = evaluate(t, &t->dev, &nll, &ntok, err)) || (rc = valid_scores(t, &r, err))) return rc;
        r.dev_nll = nll / t->dev.n;
        r.dev_nll_tok = nll / ntok;
        r.dev_ppl = exp(r.dev_nll_tok);
        double key = valid_key(t, &r);
        if (valid_metric(t->o) == NMT_METRIC_PPL) r.improved = r.dev_nll < t->best_dev;
        else r.improved = key > t->best_score;
        if (!t->closing && (rc = valid_keep_best(t, key, err))) return rc;
        if (r.improved) {
            if (valid_metric(t->o) == NMT_METRIC_PPL) t->best_dev = r.dev_nll;
            else t->best_score = key;
            t->bad_valid = 0;
            if ((rc = nmt_model_save(t->m, t->o->model, err))) return rc;
        } else {
            t->bad_valid++;
            if (t->o->lr_decay > 0) t->opt.lr *= t->o->lr_decay;
        }
        r.bad_validations = t->bad_valid;
        if (t->o->patience > 0 && t->bad_valid >= t->o->patience) *stop = 1;
    }
    /* the Table-2 style log */
    FILE *f = fopen(t->log_path, "a");
    if (f) {
        if (ftell(f) == 0)
            fprintf(f, "update\tepoch\thours\ttrain_nll\ttrain_ppl\tdev_nll\tdev_nll_tok\tdev_ppl\tbest\tfert_step\tfert_left\tdev_bleu\tdev_chrf\n");
        double tn = t->val_sent ? t->val_nll / t->val_sent : NAN, tp = t->val_tok ? exp(t->val_nll / t->val_tok) : NAN;
        fprintf(f, "%ld\t%.4f\t%.4f\t%.4f\t%.3f\t", t->update, t->bat.epoch - 1 + batcher_progress(&t->bat), train_elapsed(t) / 3600, tn, tp);
        if (t->dev.n > 0) fprintf(f, "%.4f\t%.5f\t%.3f\t%d\t", r.dev_nll, r.dev_nll_tok, r.dev_ppl, r.improved);
        else fprintf(f, "\t\t\t\t");
        /* FertDec's step-decay and left-over costs per training sentence, unweighted */
        if (has_fertdec(&t->m->cfg) && t->val_sent) fprintf(f, "%.4f\t%.4f", t->val_step / t->val_sent, t->val_left / t->val_sent);
        else fprintf(f, "\t");
        log_score(f, r.dev_bleu);
        log_score(f, r.dev_chrf);
        fputc('\n', f);
        if (fclose(f)) train_warn(t, "could not write the training log");
    } else {
        train_warn(t, "could not open the training log for appending");
    }
    t->val_nll = t->val_step = t->val_left = 0;
    t->val_sent = t->val_tok = 0;
    r.lr = t->opt.lr;
    train_report(t, &r);
    return NMT_OK;
}

/* The whole of path in a new NUL-terminated buffer (*len bytes); NULL with errno on failure. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0, r;
    char *b = malloc(cap + 1);
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0)
        if ((n += r) == cap) {
            char *nb = realloc(b, 2 * cap + 1);
            if (!nb) { free(b); b = NULL; break; }
            b = nb;
            cap *= 2;
        }
    if (b && ferror(f)) { free(b); b = NULL; }
    fclose(f);
    if (b) { b[n] = 0; *len = n; }
    return b;
}

/* Rows of the TSV log past the checkpoint's update were written by the process that was killed
 * before it could checkpoint them: the resumed run validates at those updates again, so they
 * go (as the batch log is cut in setup.c), and the log matches an uninterrupted run's. */
int train_log_trim(trainer *t, nmt_err *err)
{
    size_t len = 0, keep = 0;
    char *b = slurp(t->log_path, &len);
    if (!b) return NMT_OK; /* no log yet */
    for (size_t i = 0; i < len;) {
        size_t e = i;
        while (e < len && b[e] != '\n') e++;
        char *end;
        long u = strtol(b + i, &end, 10);
        int past = end != b + i && *end == '\t' && u > t->update; /* the header has no number */
        if (!past) {
            memmove(b + keep, b + i, e - i + (e < len));
            keep += e - i + (e < len);
        }
        i = e + 1;
    }
    int rc = NMT_OK;
    if (keep < len) {
        atomic_file af;
        if (!(rc = atomic_open(&af, t->log_path, err))) {
            if (fwrite(b, 1, keep, af.fp) == keep) rc = atomic_commit(&af, err);
            else { rc = nmt_fail(err, NMT_ERR_IO, "%s: %s", t->log_path, strerror(errno)); atomic_abort(&af); }
        }
    }
    free(b);
    return rc;
}
