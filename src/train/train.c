/* train.c: the training loop of MODEL.md section 4: minibatches in the Appendix-B order,
 * forward, backward, clipped update; progress, validation, checkpoints and the stopping rules.
 * Set-up, checkpoints and validation live beside it (setup.c, checkpoint.c, validate.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/err.h"
#include "train/comm.h"
#include "train/dist.h"
#include "train/trainer.h"

/* One line per update, flushed, so that a killed run's log ends with the last update started. */
static int log_batch(trainer *t, const int *ids, int cnt, nmt_err *err)
{
    for (int i = 0; i < cnt; i++) fprintf(t->batch_log, i ? " %ld" : "%ld", t->train.line[ids[i]]);
    fputc('\n', t->batch_log);
    if (fflush(t->batch_log) || ferror(t->batch_log))
        return nmt_fail(err, NMT_ERR_IO, "%s: write failed: %s", t->o->batch_log, strerror(errno));
    return NMT_OK;
}

/* The cost log: update, cost per sentence, gradient norm; with guided alignment a fourth column,
 * its cost per sentence (unweighted Σ G); flushed like the batch log. */
static int log_cost(trainer *t, double cost, double norm, double guided, nmt_err *err)
{
    if (t->o->guided_alignment) fprintf(t->cost_log, "%ld\t%.17g\t%.17g\t%.17g\n", t->update, cost, norm, guided);
    else fprintf(t->cost_log, "%ld\t%.17g\t%.17g\n", t->update, cost, norm);
    if (fflush(t->cost_log) || ferror(t->cost_log))
        return nmt_fail(err, NMT_ERR_IO, "%s: write failed: %s", t->o->cost_log, strerror(errno));
    return NMT_OK;
}

static double eta(const trainer *t, double per_update)
{
    const nmt_train_opts *o = t->o;
    double best = -1;
    if (o->max_updates > 0) best = (o->max_updates - t->update) * per_update;
    if (o->max_epochs > 0) {
        double left = ((double)o->max_epochs - t->bat.epoch) * t->bat.nb + (t->bat.nb - t->bat.next);
        if (best < 0 || left * per_update < best) best = left * per_update;
    }
    if (o->max_time > 0) {
        double left = o->max_time - train_elapsed(t);
        if (best < 0 || left < best) best = left;
    }
    return best < 0 ? -1 : best;
}

/* Forward on this rank's pairs of the minibatch (all of them in one process): s gets the summed
 * NLL, FertDec's weighted cost, the target tokens, FertDec's unweighted costs and guided
 * alignment's weighted and unweighted costs; 0 when none. */
enum { S_NLL, S_EXTRA, S_TOK, S_STEP, S_LEFT, S_GUIDE, S_GUIDE_RAW, S_N };

static void forward_share(trainer *t, const int *ids, int cnt, double *s)
{
    const nmt_config *c = &t->m->cfg;
    memset(s, 0, sizeof(double) * S_N);
    if (!cnt) return;
    batch_fill(&t->bb, &t->train, ids, cnt);
    batch *b = &t->bb.b;
    net_set_links(&t->ws, t->bb.links.off ? &t->bb.links : NULL);
    s[S_NLL] = net_forward(&t->cx, &t->ws, c, &t->m->p, b, NULL);
    s[S_EXTRA] = net_extra_cost(&t->ws, c); /* FertDec's costs, 0 otherwise */
    for (int i = 0; i < b->B; i++) s[S_TOK] += b->ylen[i];
    s[S_STEP] = t->ws.dec.cost_step;
    s[S_LEFT] = t->ws.dec.cost_left;
    s[S_GUIDE] = net_guided_cost(&t->ws);
    s[S_GUIDE_RAW] = t->ws.guide && t->ws.guide->active ? t->ws.guide->cost : 0;
}

/* One update on the next minibatch: forward, backward, clipped step. A non-finite cost or
 * gradient skips the step (counted; too many in a row end the run). *norm gets the gradient
 * norm before clipping (NaN when skipped). With several ranks each reads its share of the
 * minibatch, and the costs and gradients are summed across ranks before the step. */
static int one_update(trainer *t, double *norm, nmt_err *err)
{
    const nmt_config *c = &t->m->cfg;
    int B, rc;
    const int *all = batcher_next(&t->bat, &B);
    if (t->batch_log && (rc = log_batch(t, all, B, err))) return rc;
    int cnt = B;
    const int *ids = dist_share(t, all, &cnt);
    double s[S_N];
    /* t->G is all zeros here: zeroed when the workspace was made, then by every optim_step */
    forward_share(t, ids, cnt, s);
    /* guided alignment's two only when it is on: a job without it exchanges what it always did */
    if ((rc = dist_sum_costs(t, s, t->o->guided_alignment ? S_N : S_GUIDE, err))) return rc;
    double nll = s[S_NLL];
    int step_rc = NMT_ERR_NUMERIC;
    *norm = NAN;
    if (isfinite(nll) && isfinite(s[S_EXTRA]) && isfinite(s[S_GUIDE])) {
        if (cnt) net_backward(&t->cx, &t->ws, c, &t->m->p, &t->g, &t->bb.b, (real)1 / B);
        if ((rc = dist_sum_grads(t, all, B, err))) return rc;
        t->opt.lr_scale = optim_schedule(t->update + 1, t->o->lr_warmup, t->o->lr_decay_inv_sqrt);
        step_rc = optim_step(&t->opt, t->m->P, t->G, t->o->clip, norm);
        if (!step_rc && t->mix) t->cx.b->mix->sync(t->mix); /* the new weights' bf16 copies */
    }
    t->update++;
    backend_mark(&t->cx, BK_MARK_UPDATE);
    if (t->cost_log && (rc = log_cost(t, nll / B, *norm, s[S_GUIDE_RAW] / B, err))) return rc;
    if (step_rc) {
        /* which number went bad says where to look: the data or the rate (the cost), FertDec's
         * coverage terms, or the backward pass (the gradient of a finite cost) */
        char msg[200];
        if (!isfinite(nll)) snprintf(msg, sizeof msg, "update %ld: the cost is NaN/Inf; update skipped", t->update);
        else if (!isfinite(s[S_EXTRA]))
            snprintf(msg, sizeof msg, "update %ld: FertDec's coverage cost is NaN/Inf; update skipped", t->update);
        else if (!isfinite(s[S_GUIDE]))
            snprintf(msg, sizeof msg, "update %ld: guided alignment's cost is NaN/Inf; update skipped", t->update);
        else snprintf(msg, sizeof msg, "update %ld: the gradient is NaN/Inf (of a finite cost, %.4g); update skipped", t->update, nll / B);
        train_warn(t, msg);
        if (++t->nonfinite > t->o->max_nonfinite)
            return nmt_fail(err, NMT_ERR_NUMERIC, "%d updates in a row had a non-finite cost or gradient; stopped (the last checkpoint, %s, is intact)",
                            t->nonfinite, t->ckpt_path);
        return NMT_OK;
    }
    t->nonfinite = 0;
    long tok = (long)s[S_TOK];
    t->win_nll += nll; t->win_sent += B; t->win_tok += tok;
    t->win_guided += s[S_GUIDE_RAW];
    t->val_nll += nll; t->val_sent += B; t->val_tok += tok;
    t->val_step += s[S_STEP];
    t->val_left += s[S_LEFT];
    return NMT_OK;
}

/* The progress window: reported every half second or 50 updates (the callback decides what to
 * show). The ETA uses the mean time per update of this run, validations included: a short
 * window would swing with the length-sorted batches, which run from short to long in every block. */
typedef struct progress { double since, run_t0; long win_upd, run_u0; } progress;

static void progress_tick(trainer *t, progress *pg, double norm)
{
    pg->win_upd++;
    double tnow = train_now();
    if (tnow - pg->since < 0.5 && pg->win_upd < 50) return;
    nmt_train_report r;
    memset(&r, 0, sizeof r);
    r.kind = NMT_REPORT_PROGRESS;
    r.cost = t->win_sent ? t->win_nll / t->win_sent : NAN;
    r.guided_cost = t->o->guided_alignment && t->win_sent ? t->win_guided / t->win_sent : NAN;
    r.grad_norm = norm;
    r.tok_per_s = t->win_tok / (tnow - pg->since);
    r.eta = eta(t, (tnow - pg->run_t0) / (double)(t->update - pg->run_u0)); /* >= 1 update since run_u0 */
    dist_comm_stats(t, 1, &r);
    train_report(t, &r);
    t->win_nll = t->win_guided = 0; t->win_sent = t->win_tok = 0;
    pg->since = tnow;
    pg->win_upd = 0;
}

/* After the loop: a run that ended normally validates (unless it just did) and saves; an
 * interrupted one saves its checkpoint. Without a dev set the model is saved at the end. */
static int finish(trainer *t, int rc, int validated_now, nmt_err *err)
{
    if (rc != NMT_OK && rc != NMT_ERR_INTERRUPTED) return rc;
    int ignored = 0, rc2 = NMT_OK;
    /* The checkpoint first: the state after the last update as the run would have had it going
     * on, so that one resumed with a larger limit goes on as if it had never stopped. Then the
     * closing validation of a run stopped between two, which reports and keeps the model if it is
     * the best, and changes nothing a resumed run reads (the checkpoint is written; the kept
     * checkpoints of --keep-best are left alone) */
    if (!validated_now || rc == NMT_ERR_INTERRUPTED) rc2 = dist_save(t, err);
    t->closing = 1;
    if (!rc2 && !validated_now && rc == NMT_OK) rc2 = dist_validate(t, &ignored, err);
    if (!rc2 && t->dev.n == 0) rc2 = dist_agree_rc(t, t->comm->rank ? NMT_OK : nmt_model_save(t->m, t->o->model, err), err);
    if (rc2) return rc2;
    if (rc == NMT_ERR_INTERRUPTED) nmt_fail(err, rc, "interrupted at update %ld; resume with --resume %s", t->update, t->ckpt_path);
    return rc;
}

/* A resumed run whose checkpoint already meets a stopping limit (--max-updates at or below its
 * update, say) is finished: the reason in msg, else 0. Such a run does nothing and succeeds, as
 * Marian does when restarted past its limits (it checks them before the first batch): job
 * scripts re-run the same command after a preemption, and the last re-run must not fail, nor
 * train one more update and overwrite the model. */
static int already_finished(const trainer *t, char *msg, size_t n)
{
    const nmt_train_opts *o = t->o;
    if (!o->resume) return 0;
    if (o->max_updates > 0 && t->update >= o->max_updates)
        snprintf(msg, n, "nothing to do: the checkpoint is at update %ld, --max-updates is %ld", t->update, o->max_updates);
    else if (o->max_epochs > 0 && (t->bat.epoch > o->max_epochs || (t->bat.epoch == o->max_epochs && t->bat.next >= t->bat.nb)))
        snprintf(msg, n, "nothing to do: the checkpoint has finished epoch %d, --max-epochs is %d", t->bat.epoch, o->max_epochs);
    else if (o->max_time > 0 && t->elapsed0 >= o->max_time)
        snprintf(msg, n, "nothing to do: the checkpoint has trained %.0f s, --max-time is %.0f s", t->elapsed0, o->max_time);
    else if (o->patience > 0 && t->bad_valid >= o->patience)
        snprintf(msg, n, "nothing to do: the checkpoint already stopped early (%d validations without improvement)", t->bad_valid);
    else
        return 0;
    return 1;
}

static int run_loop(trainer *t, nmt_err *err)
{
    const nmt_train_opts *o = t->o;
    int stop = 0, validated_now = 0, rc = NMT_OK;
    progress pg = {train_now(), 0, 0, t->update};
    pg.run_t0 = pg.since;
    while (!stop) {
        double norm;
        if ((rc = one_update(t, &norm, err))) break;
        validated_now = 0;
        progress_tick(t, &pg, norm);
        int epoch_end = t->bat.next >= t->bat.nb;
        if ((o->valid_every > 0 && t->update % o->valid_every == 0) || (o->valid_every <= 0 && epoch_end)) {
            if ((rc = dist_validate(t, &stop, err))) break;
            validated_now = 1;
            if ((rc = dist_save(t, err))) break;
        } else if (o->save_every > 0 && t->update % o->save_every == 0) {
            if ((rc = dist_save(t, err))) break;
        }
        if (o->max_updates > 0 && t->update >= o->max_updates) stop = 1;
        if (o->max_epochs > 0 && epoch_end && t->bat.epoch >= o->max_epochs) stop = 1;
        if (o->max_time > 0 && train_elapsed(t) >= o->max_time) stop = 1;
        if (o->stop && *o->stop) { stop = 1; rc = NMT_ERR_INTERRUPTED; }
        int crc = dist_agree_stop(t, &stop, &rc, err); /* a limit or signal one rank saw stops all */
        if (crc) { rc = crc; break; }
    }
    return finish(t, rc, validated_now, err);
}

int nmt_train(const nmt_train_opts *o, nmt_train_cb cb, void *user, nmt_err *err)
{
    if (!o) return nmt_fail(err, NMT_ERR_ARG, "nmt_train: opts is NULL");
    trainer *t = calloc(1, sizeof *t);
    if (!t) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    t->eff = *o;
    t->o = o = &t->eff;
    t->cb = cb;
    t->user = user;
    t->t0 = train_now();
    t->lock_fd = t->model_fd = -1;
    t->comm = o->comm ? o->comm : comm_local();
    const nmt_comm *cm = t->comm;
    if (cm->size < 1 || cm->rank < 0 || cm->rank >= cm->size || !cm->allreduce || !cm->bcast || !cm->allgather) {
        free(t);
        return nmt_fail(err, NMT_ERR_ARG, "a communication table needs rank in [0, size) and all of its functions");
    }
    if (cm->rank) t->cb = NULL; /* rank 0 reports for the job */
    if (o->threads > 0) nmt_set_threads(o->threads); /* clamped to NMT_MAX_THREADS */
    st_file *ck = NULL;
    int rc = train_setup(t, &ck, err);
    st_free(ck);
    if (!rc) rc = dist_init(t, err);
    if (!rc) rc = dist_check_inputs(t, err);
    if (rc) { train_cleanup(t); free(t); return rc; }
    char sum[2048];
    train_summary(t, sum, sizeof sum);
    nmt_train_report r;
    memset(&r, 0, sizeof r);
    r.kind = NMT_REPORT_START;
    r.msg = sum;
    train_report(t, &r);
    const nmt_train_opts *e = t->o; /* a resumed run's schedule is its checkpoint's */
    if (e->lr_warmup > 0 && e->max_updates > 0 && e->lr_warmup > e->max_updates) { /* allowed, as Marian does, but said */
        char msg[200];
        snprintf(msg, sizeof msg, "the warm-up (%ld updates) is longer than the run (%ld): the learning rate never reaches "
                 "its full value", e->lr_warmup, e->max_updates);
        train_warn(t, msg);
    }
    char done[200];
    int finished = already_finished(t, done, sizeof done);
    if (!finished) rc = run_loop(t, err);
    memset(&r, 0, sizeof r);
    r.kind = NMT_REPORT_END;
    r.msg = finished ? done : rc == NMT_OK ? "done" : "stopped";
    dist_comm_stats(t, 0, &r);
    train_report(t, &r);
    train_cleanup(t);
    free(t);
    return rc;
}
