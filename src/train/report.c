/* report.c: what every part of a training run tells its caller through: the clock (a run's time
 * goes on across resumed processes), reports to the caller's callback and warnings. Set-up,
 * checkpoints, validation and the loop all call it, so it sits below them all. */
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "train/trainer.h"

double train_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double train_elapsed(const trainer *t) { return t->elapsed0 + train_now() - t->t0; }

void train_report(trainer *t, nmt_train_report *r)
{
    r->update = t->update;
    r->epoch = t->bat.epoch;
    r->epoch_frac = batcher_progress(&t->bat);
    r->elapsed = train_elapsed(t);
    if (t->cb) t->cb(r, t->user);
}

/* A warning goes to the caller's report callback and to the log callback (nmt_set_log), so a
 * program that only logs sees it too; the report first, so a progress line it keeps open on a
 * terminal is closed before the log line comes. */
void train_warn(trainer *t, const char *msg)
{
    nmt_train_report r;
    memset(&r, 0, sizeof r);
    r.kind = NMT_REPORT_WARN;
    r.msg = msg;
    train_report(t, &r);
    nmt_log('W', "%s", msg);
}
