/* cmd_util.c: what the subcommands share beside option parsing (opt.c): the checked end of
 * standard output, -o FILE, the progress line and the library's log lines on stderr. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "data/corpus.h"
#include "eval/bleu.h"

int cmd_finish(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nmt: error writing standard output: %s\n", strerror(errno));
        return CMD_ERR;
    }
    return rc;
}

int cmd_output_to(const char *cmd, const char *path, const path_role *in, int nin)
{
    nmt_err err;
    path_role out = {path, "--output"};
    if (path_check_outputs(in, nin, &out, 1, &err)) { /* freopen would empty it before it is read */
        fprintf(stderr, "nmt %s: error: %s\n", cmd, err.msg);
        return CMD_USAGE;
    }
    if (freopen(path, "w", stdout)) return CMD_OK;
    fprintf(stderr, "nmt %s: error: --output %s: %s\n", cmd, path, strerror(errno));
    return CMD_ERR;
}

int cmd_model_roles(path_role *in, const char *const *paths, int n)
{
    for (int k = 0; k < n; k++) in[k] = (path_role){paths[k], "a model"};
    return n;
}

void cmd_hms(char *buf, size_t n, double s)
{
    if (s < 0) { snprintf(buf, n, "?"); return; }
    long t = (long)(s + 0.5);
    snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

/* ------------------------------------------------------------------ the progress line */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cmd_progress_start(cmd_progress *p, const char *cmd, int asked)
{
    int tty = isatty(2);
    *p = (cmd_progress){cmd, asked || tty, tty, 0, 0, now(), 0};
    p->last = p->t0;
}

/* "N sentences | R sentences/s | H:MM:SS" */
static void progress_say(const cmd_progress *p, double t, const char *lead, const char *end)
{
    char el[32];
    cmd_hms(el, sizeof el, t - p->t0);
    double rate = t > p->t0 ? (double)p->n / (t - p->t0) : 0;
    fprintf(stderr, "%s[%s] %ld sentences | %.1f sentences/s | %s%s", lead, p->cmd, p->n, rate, el, end);
}

void cmd_progress_add(cmd_progress *p, long n)
{
    p->n += n;
    if (!p->on) return;
    double t = now();
    if (t - p->last < (p->tty ? 0.25 : 10)) return;
    p->last = t;
    progress_say(p, t, p->tty ? "\r\033[K" : "", p->tty ? "" : "\n");
    p->open = p->tty;
}

void cmd_progress_end(cmd_progress *p)
{
    if (!p->on) return;
    progress_say(p, now(), p->open ? "\r\033[K" : "", " in all\n");
    p->on = 0;
}

void cmd_log(char level, const char *msg, void *user)
{
    const char *cmd = user;
    fprintf(stderr, "nmt %s: %s%s\n", cmd, level == 'E' ? "error: " : level == 'W' ? "warning: " : "", msg);
}

const char *cmd_parse_bleu_tok(void *dst, const char *val, int nth)
{
    (void)nth;
    return bleu_tokenize_parse(val, dst) ? "expected 13a, intl or none" : NULL;
}

/* FILE, then optionally ",K" and ",F" (non-negative integers; the file name holds no comma) */
const char *cmd_parse_device(void *dst, const char *val, int nth)
{
    (void)dst, (void)nth;
    static nmt_err e; /* the message outlives the call: the parser prints it */
    return nmt_set_device(val, &e) ? e.msg : NULL;
}

const char *cmd_parse_shortlist(void *dst, const char *val, int nth)
{
    (void)nth;
    cmd_shortlist *a = dst;
    const char *comma = strchr(val, ',');
    size_t len = comma ? (size_t)(comma - val) : strlen(val);
    if (len == 0) return "an empty file name";
    if (len >= sizeof a->path) return "the file name is too long";
    memcpy(a->path, val, len);
    a->path[len] = 0;
    a->k = a->f = 100;
    int *num[2] = {&a->k, &a->f};
    for (int i = 0; i < 2 && comma; i++) {
        char *end;
        long x = strtol(comma + 1, &end, 10);
        if (end == comma + 1 || (*end && *end != ',') || x < 0 || x > 10000000)
            return "expected FILE[,K[,F]] with K and F integers in [0, 10000000]";
        *num[i] = (int)x;
        comma = *end ? end : NULL;
    }
    return comma ? "expected FILE[,K[,F]]: too many fields" : NULL;
}

int cmd_one_model(const char *cmd, int given)
{
    if (given <= 1) return CMD_OK;
    fprintf(stderr, "nmt %s: error: --model given %d times: nmt %s uses one model only (ensembles: nmt translate, nmt score)\n",
            cmd, given, cmd);
    return CMD_USAGE;
}

/* cmd.h: through pipelines made with no text option, which only a model's own stages fill */
int cmd_model_lines(const nmt_model *m, textfile *S, textfile *T, nmt_err *err)
{
    nmt_text_opts o = nmt_text_default_opts();
    nmt_text *ps = NULL, *pt = NULL;
    int rc = nmt_text_init_model(&ps, &o, m, NMT_SOURCE, err);
    if (!rc) rc = nmt_text_init_model(&pt, &o, m, NMT_TARGET, err);
    if (!rc) rc = textfile_encode(S, ps, err);
    if (!rc) rc = textfile_encode(T, pt, err);
    nmt_text_free(ps);
    nmt_text_free(pt);
    return rc;
}
