/* bench_train.c: training speed, memory and per-phase profile of the C implementation for
 * `make bench` (scripts/bench.sh). Builds the vocabulary and model for a configuration, runs
 * warm-up updates and then timed updates in the Appendix-B order, exactly as src/train/train.c does. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "data/batcher.h"
#include "data/corpus.h"
#include "backend/backend.h"
#include "base/err.h"
#include "nn/model.h"
#include "nn/net.h"
#include "train/optim.h"
#include "base/prof.h"
#include "data/vocab.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

typedef struct opts {
    const char *src, *tgt;
    nmt_config cfg;
    int max_len, batch, sort_blocks, updates, warmup, threads, worst_case, bf16;
    unsigned long long seed;
} opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_train --src FILE --tgt FILE [options]\n"
            "  --arch rnnsearch|rnnenc   (rnnsearch)\n"
            "  --emb M --hid N --att NA --maxout L   (256 each)\n"
            "  --vocab K | --src-vocab K --tgt-vocab K   (10000; counts EOS and UNK)\n"
            "  --max-len W     length filter in words, 0 = none (50)\n"
            "  --batch B --sort-blocks k   (80, 20: Appendix B)\n"
            "  --warmup W --updates N      untimed, then timed updates (3, 20)\n"
            "  --threads T     OpenMP and OpenBLAS threads (2)\n"
            "  --precision P   fp32 | bf16: the step's matrix products, as nmt train --precision (fp32)\n"
            "  --no-worst-case skip the untimed update on the B longest pairs after the timed ones,\n"
            "                  which makes the final peak RSS the one a whole epoch reaches\n"
            "  --seed S        (1234)\n");
}

static int parse_int(const char *s, int lo, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > 1000000000) return -1;
    *out = (int)v;
    return 0;
}

static int parse_args(opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->cfg = nmt_config_default(); /* fields not set below keep the library's defaults */
    o->cfg.arch = NMT_ARCH_RNNSEARCH;
    o->cfg.src_vocab = o->cfg.tgt_vocab = 10000;
    o->cfg.emb = o->cfg.hid = o->cfg.att = o->cfg.maxout = 256;
    o->max_len = 50;
    o->batch = 80;
    o->sort_blocks = 20;
    o->updates = 20;
    o->warmup = 3;
    o->threads = 2;
    o->worst_case = 1;
    o->seed = 1234;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0, k;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); exit(0); }
        if (!strcmp(a, "--no-worst-case")) { o->worst_case = 0; continue; }
        if (!v) { fprintf(stderr, "bench_train: %s needs a value\n", a); return -1; }
        i++;
        if (!strcmp(a, "--src")) o->src = v;
        else if (!strcmp(a, "--tgt")) o->tgt = v;
        else if (!strcmp(a, "--arch")) bad = (o->cfg.arch = nmt_arch_parse(v)) < 0;
        else if (!strcmp(a, "--emb")) bad = parse_int(v, 1, &o->cfg.emb);
        else if (!strcmp(a, "--hid")) bad = parse_int(v, 1, &o->cfg.hid);
        else if (!strcmp(a, "--att")) bad = parse_int(v, 1, &o->cfg.att);
        else if (!strcmp(a, "--maxout")) bad = parse_int(v, 1, &o->cfg.maxout);
        else if (!strcmp(a, "--vocab")) { bad = parse_int(v, 3, &k); o->cfg.src_vocab = o->cfg.tgt_vocab = k; }
        else if (!strcmp(a, "--src-vocab")) bad = parse_int(v, 3, &o->cfg.src_vocab);
        else if (!strcmp(a, "--tgt-vocab")) bad = parse_int(v, 3, &o->cfg.tgt_vocab);
        else if (!strcmp(a, "--max-len")) bad = parse_int(v, 0, &o->max_len);
        else if (!strcmp(a, "--batch")) bad = parse_int(v, 1, &o->batch);
        else if (!strcmp(a, "--sort-blocks")) bad = parse_int(v, 1, &o->sort_blocks);
        else if (!strcmp(a, "--updates")) bad = parse_int(v, 1, &o->updates);
        else if (!strcmp(a, "--warmup")) bad = parse_int(v, 0, &o->warmup);
        else if (!strcmp(a, "--threads")) bad = parse_int(v, 1, &o->threads);
        else if (!strcmp(a, "--precision")) bad = (o->bf16 = !strcmp(v, "bf16")) == 0 && strcmp(v, "fp32");
        else if (!strcmp(a, "--seed")) { char *e; o->seed = strtoull(v, &e, 10); bad = *e != 0; }
        else { fprintf(stderr, "bench_train: unknown option %s\n", a); usage(stderr); return -1; }
        if (bad) { fprintf(stderr, "bench_train: bad value for %s: %s\n", a, v); return -1; }
    }
    if (!o->src || !o->tgt) { usage(stderr); return -1; }
    if (o->cfg.arch != NMT_ARCH_RNNSEARCH && o->cfg.arch != NMT_ARCH_RNNENC) {
        /* the FLOP model below knows these two */
        fprintf(stderr, "bench_train: only --arch rnnsearch and rnnenc are supported\n");
        return -1;
    }
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Peak resident set in bytes: VmHWM, or ru_maxrss where /proc is absent. */
static double peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lf kB", &kb) == 1) break;
    if (f) fclose(f);
    if (kb < 0) {
        struct rusage ru;
        if (!getrusage(RUSAGE_SELF, &ru)) kb = (double)ru.ru_maxrss;
    }
    return kb * 1024;
}

/* Matrix-product FLOPs, from the shapes of MODEL.md sections 1-3 (a multiply-add is 2 FLOPs;
 * element-wise work is not counted), per unit of work: per source position, per target
 * position, per (target, source) pair (the scores v·tanh(..) and the context Σ α h, products
 * done row by row) and per sentence (s_0). Split by the profile's phases so that each phase's
 * GFLOP/s can be set against the SGEMM peak. */
typedef struct flop_model {
    double enc_src;            /* both encoder GRUs */
    double uah_src;            /* U_a h_j, once per sentence (booked in the decoder phase) */
    double query_tgt, pair;    /* attention: W_a s_{i-1}; scores and context */
    double dec_tgt, sent;      /* decoder GRU with W, U, C; s_0 */
    double out_tgt, soft_tgt;  /* deep output U_o, V_o, C_o; softmax W_o (real rows only) */
} flop_model;

static flop_model flops_of(const nmt_config *c)
{
    double m = c->emb, n = c->hid, na = c->att, l = c->maxout, K = c->tgt_vocab;
    int search = c->arch != NMT_ARCH_RNNENC;
    double D = search ? 2 : 1, cd = search ? 2 * n : n;
    flop_model f;
    f.enc_src = D * 2 * (m * 3 * n + n * 3 * n);
    f.uah_src = search ? 2 * D * n * na : 0;
    f.query_tgt = search ? 2 * n * na : 0;
    f.pair = search ? 2 * (na + D * n) : 0;
    f.dec_tgt = 2 * (m * 3 * n + n * 3 * n + cd * 3 * n);
    f.sent = 2 * n * n;
    f.out_tgt = 2 * (n + m + cd) * 2 * l;
    f.soft_tgt = 2 * l * K;
    return f;
}

enum { PH_ENC_F, PH_ENC_B, PH_ATT_F, PH_ATT_B, PH_DEC_F, PH_DEC_B, PH_OUT_F, PH_OUT_B, PH_N };

/* Adds one batch's training FLOPs per phase (the decoder phases without attention) to fl[],
 * counted over real tokens (useful) or over the padded B x Tx x Ty shapes most kernels run
 * on (executed; the softmax and the attention loops skip padding either way). Backward is
 * twice forward per product (one for the input gradient, one for the weight gradient); the
 * attention's weight gradients are formed after the decoder loop, in the decoder phase. */
static void batch_flops(const flop_model *f, const batch *b, int executed, double fl[PH_N])
{
    double nsrc = 0, ntgt = 0, npair = 0, nreal = 0;
    for (int s = 0; s < b->B; s++) {
        nreal += b->ylen[s];
        npair += (double)b->xlen[s] * b->ylen[s];
        nsrc += executed ? b->Tx : b->xlen[s];
        ntgt += executed ? b->Ty : b->ylen[s];
    }
    double enc = nsrc * f->enc_src, q = ntgt * f->query_tgt, pr = npair * f->pair;
    double dec = ntgt * f->dec_tgt + nsrc * f->uah_src + b->B * f->sent;
    double out = ntgt * f->out_tgt + nreal * f->soft_tgt;
    fl[PH_ENC_F] += enc;
    fl[PH_ENC_B] += 2 * enc;
    fl[PH_ATT_F] += q + pr;
    fl[PH_ATT_B] += q + 2 * pr;
    fl[PH_DEC_F] += dec;
    fl[PH_DEC_B] += 2 * dec + q;
    fl[PH_OUT_F] += out;
    fl[PH_OUT_B] += 2 * out;
}

/* Training FLOPs per target token over the whole filtered corpus (what RUNS.md quotes),
 * against which the timed batches' own figure can be compared. */
static double corpus_flops_per_tok(const flop_model *f, const pairs *p)
{
    double fl = 0, tok = 0;
    for (int i = 0; i < p->n; i++) {
        double sx = pair_src_len(p, i), sy = pair_tgt_len(p, i);
        fl += sx * (f->enc_src + f->uah_src) + sy * (f->query_tgt + f->dec_tgt + f->out_tgt + f->soft_tgt) +
              sx * sy * f->pair + f->sent;
        tok += sy;
    }
    return 3 * fl / tok;
}

static double sum_flops(const double fl[PH_N])
{
    double s = 0;
    for (int k = 0; k < PH_N; k++) s += fl[k];
    return s;
}

typedef struct bench {
    nmt_model *m;
    real *G;
    params g;
    optim opt;
    pairs train;
    batch_buf bb;
    net_ws ws;
    bk_mix *mix;                /* --precision bf16 */
    double first_nll, last_nll; /* per target token: a sanity check that training trains */
} bench;

/* One update as src/train/train.c makes it; returns the batch's target tokens (EOS included). */
static long update(bench *t, const int *ids, int cnt, double fl_useful[PH_N], double fl_exec[PH_N], const flop_model *f)
{
    batch_fill(&t->bb, &t->train, ids, cnt);
    batch *b = &t->bb.b;
    /* t->G is all zeros here: zeroed when made, then by every optim_step */
    bk_ctx x = t->m->cx;
    x.mix = t->mix;
    double nll = net_forward(&x, &t->ws, &t->m->cfg, &t->m->p, b, NULL);
    long tok = 0;
    for (int i = 0; i < b->B; i++) tok += b->ylen[i];
    if (isfinite(nll)) {
        net_backward(&x, &t->ws, &t->m->cfg, &t->m->p, &t->g, b, (real)1 / b->B);
        /* the library books no time for the optimizer; it is bracketed here, with the bf16
         * copies of the new weights */
        PROF_BEGIN(to);
        double norm;
        if (!optim_step(&t->opt, t->m->P, t->G, 1.0, &norm) && t->mix) TX->b->mix->sync(t->mix);
        PROF_END(PROF_OPTIM, to);
    } else {
        fprintf(stderr, "bench_train: non-finite cost; update skipped\n");
    }
    if (t->first_nll < 0) t->first_nll = nll / tok;
    t->last_nll = nll / tok;
    batch_flops(f, b, 0, fl_useful);
    batch_flops(f, b, 1, fl_exec);
    return tok;
}

static int run(const opts *o)
{
    nmt_err err = {0, ""};
    textfile ts = {0}, tt = {0};
    wordcount ws_ = {0}, wt_ = {0};
    vocab *sv = NULL, *tv = NULL;
    bench t;
    batcher bat;
    memset(&t, 0, sizeof t);
    memset(&bat, 0, sizeof bat);
    t.first_nll = -1;
    int rc;
#ifdef _OPENMP
    omp_set_num_threads(o->threads);
#endif
    double t_setup = now();
    if ((rc = textfile_read(&ts, o->src, &err)) || (rc = textfile_read(&tt, o->tgt, &err))) goto out;
    if (ts.nlines != tt.nlines) { rc = nmt_fail(&err, NMT_ERR_MISMATCH, "%s and %s differ in line count", o->src, o->tgt); goto out; }
    if ((rc = wordcount_build(&ws_, &ts, &err)) || (rc = wordcount_build(&wt_, &tt, &err))) goto out;
    if ((rc = vocab_from_counts(&sv, &ws_, o->cfg.src_vocab, &err)) || (rc = vocab_from_counts(&tv, &wt_, o->cfg.tgt_vocab, &err))) goto out;
    nmt_config cfg = o->cfg;
    /* the reference pads a short vocabulary with placeholders; say so when sizes then differ */
    if (sv->n != cfg.src_vocab || tv->n != cfg.tgt_vocab)
        fprintf(stderr, "bench_train: the corpus gives only %d/%d vocabulary entries (asked %d/%d)\n", sv->n, tv->n,
                cfg.src_vocab, cfg.tgt_vocab);
    cfg.src_vocab = sv->n;
    cfg.tgt_vocab = tv->n;
    if ((rc = nmt_config_check(&cfg, &err))) goto out;
    if ((rc = pairs_build(&t.train, &ts, &tt, sv, tv, o->max_len, &err))) goto out;
    if (t.train.n < o->batch) { rc = nmt_fail(&err, NMT_ERR_ARG, "only %d pairs after filtering", t.train.n); goto out; }
    if ((rc = model_alloc(&t.m, &cfg, sv, tv, &err))) goto out;
    sv = tv = NULL; /* owned by the model now */
    rng r;
    rng_seed(&r, o->seed);
    if (params_init(&t.m->pt, t.m->P, cfg.hid, &r, NMT_INIT_PAPER)) { rc = nmt_fail(&err, NMT_ERR_NOMEM, "out of memory"); goto out; }
    t.G = calloc(t.m->pt.total, sizeof(real));
    if (!t.G) { rc = nmt_fail(&err, NMT_ERR_NOMEM, "out of memory for gradients"); goto out; }
    params_point(&t.g, &t.m->pt, t.G);
    if ((rc = optim_init(&t.opt, TX, OPT_ADADELTA, t.m->pt.total, &err))) goto out;
    if ((rc = optim_sparse_embeddings(&t.opt, &t.m->pt, &err))) goto out;
    if ((rc = batcher_init(&bat, &t.train, o->batch, o->sort_blocks, 0, o->seed, &err))) goto out;
    if ((rc = batch_buf_init(&t.bb, &t.train, o->batch, &err))) goto out;
    /* like src/train/train.c: one workspace for the longest pair of the corpus, reserved up front */
    int mx = 1, my = 1;
    for (int i = 0; i < t.train.n; i++) {
        if (pair_src_len(&t.train, i) > mx) mx = pair_src_len(&t.train, i);
        if (pair_tgt_len(&t.train, i) > my) my = pair_tgt_len(&t.train, i);
    }
    if ((rc = net_ws_reserve(TX, &t.ws, &t.m->cfg, o->batch, mx, my, &err))) goto out;
    if (o->bf16) {
        size_t parts[MAX_TENSORS][2];
        int np = param_table_product_parts(&t.m->pt, &t.m->cfg, parts);
        if ((rc = TX->b->mix->init(&t.mix, t.m->P, t.m->pt.total, (const size_t (*)[2])parts, np, &err))) goto out;
    }
    t_setup = now() - t_setup;

    const nmt_config *c = &t.m->cfg;
    flop_model f = flops_of(c);
    printf("# bench_train %s: vocab %d/%d, emb %d, hid %d, att %d, maxout %d; %zu parameters; %d threads; precision %s\n",
           nmt_arch_name(c->arch), c->src_vocab, c->tgt_vocab, c->emb, c->hid, c->att, c->maxout, t.m->pt.total,
           o->threads, o->bf16 ? "bf16" : "fp32");
    printf("# data %s -> %s: %d pairs of %ld kept (max-len %d), longest %d/%d tokens with EOS; batches of %d in blocks of %d, "
           "Appendix-B order, seed %llu; set-up %.1f s\n",
           o->src, o->tgt, t.train.n, t.train.nlines, o->max_len, mx, my, o->batch, o->batch * o->sort_blocks, o->seed,
           t_setup);
    printf("# memory: parameters+gradients+Adadelta state %.1f MiB, workspace %.1f MiB\n",
           4.0 * t.m->pt.total * sizeof(real) / 1048576, net_ws_bytes(c, o->batch, mx, my) / 1048576.0);
    fflush(stdout);

    double flu[PH_N] = {0}, fle[PH_N] = {0};
    for (int i = 0; i < o->warmup; i++) {
        int cnt;
        const int *ids = batcher_next(&bat, &cnt);
        update(&t, ids, cnt, flu, fle, &f);
    }
    prof_enabled = 1;
    memset(prof_sec, 0, sizeof prof_sec);
    memset(flu, 0, sizeof flu);
    memset(fle, 0, sizeof fle);
    long tok = 0, src_tok = 0;
    double t0 = now();
    for (int i = 0; i < o->updates; i++) {
        int cnt;
        const int *ids = batcher_next(&bat, &cnt);
        tok += update(&t, ids, cnt, flu, fle, &f);
        for (int s = 0; s < t.bb.b.B; s++) src_tok += t.bb.b.xlen[s];
    }
    double dt = now() - t0;
    prof_enabled = 0;
    double rss_timed = peak_rss(), last_nll = t.last_nll;
    /* Then the longest batch (untimed): it touches the whole workspace, so the final peak RSS
     * is the one a full epoch reaches, not just that of the few batches timed; the peak before
     * it compares with a reference that ran only as many batches. */
    double rss = rss_timed, t_worst = 0;
    int wTx = 0, wTy = 0;
    if (o->worst_case) {
        int *ids = malloc(sizeof(int) * t.train.n);
        if (!ids) { rc = nmt_fail(&err, NMT_ERR_NOMEM, "out of memory"); goto out; }
        for (int i = 0; i < t.train.n; i++) ids[i] = i;
        sort_by_length(ids, t.train.n, &t.train);
        double dummy[PH_N] = {0}, dummy2[PH_N] = {0};
        t_worst = now();
        update(&t, ids + t.train.n - o->batch, o->batch, dummy, dummy2, &f);
        t_worst = now() - t_worst;
        wTx = t.bb.b.Tx;
        wTy = t.bb.b.Ty;
        free(ids);
        rss = peak_rss();
    }

    double tps = tok / dt, spu = dt / o->updates, fu = sum_flops(flu), fe = sum_flops(fle);
    printf("TRAIN %d updates after %d warm-up: %.1f s, %.3f s/update, %.1f tgt tok/s (EOS counted), %.1f src+tgt tok/s, "
           "%.0f tgt tok/batch\n",
           o->updates, o->warmup, dt, spu, tps, (tok + src_tok) / dt,
           (double)tok / o->updates);
    printf("FLOPS per target token (matrix products, fwd+bwd = 3 x fwd): %.2f M over real tokens (%.0f%% in the softmax W_o), "
           "%.2f M executed over padded shapes; %.1f GFLOP/s useful\n",
           fu / tok / 1e6, 100 * 3 * f.soft_tgt * tok / fu, fe / tok / 1e6, fu / dt / 1e9);
    double fcorp = corpus_flops_per_tok(&f, &t.train);
    printf("FLOPS per target token over the whole corpus: %.2f M\n", fcorp / 1e6);
    if (o->worst_case)
        printf("MEMORY peak RSS %.1f MiB after the timed updates, %.1f MiB after the worst-case batch (%d longest pairs, "
               "%d x %d tokens, %.1f s untimed)\n", rss_timed / 1048576, rss / 1048576, o->batch, wTx, wTy, t_worst);
    else
        printf("MEMORY peak RSS %.1f MiB\n", rss / 1048576);
    printf("LOSS per target token: %.3f first update, %.3f last timed (ln K = %.3f)\n", t.first_nll, last_nll,
           log((double)c->tgt_vocab));

    /* The profile: decoder phases include the attention booked inside them, so the decoder
     * cell's own time is the difference; what no phase covers (batch filling, gradient
     * zeroing, loop overhead) is "other". GFLOP/s per phase is over executed FLOPs. */
    double *p = prof_sec, booked = 0;
    for (int k = 0; k < PROF_N; k++)
        if (k != PROF_ATT_FWD && k != PROF_ATT_BWD) booked += p[k];
    struct { const char *name; double sec; int ph; } rows[] = {
        {"encoder fwd", p[PROF_ENC_FWD], PH_ENC_F},
        {"encoder bwd", p[PROF_ENC_BWD], PH_ENC_B},
        {"attention fwd", p[PROF_ATT_FWD], PH_ATT_F},
        {"attention bwd", p[PROF_ATT_BWD], PH_ATT_B},
        {"decoder cell fwd (decoder - attention)", p[PROF_DEC_FWD] - p[PROF_ATT_FWD], PH_DEC_F},
        {"decoder cell bwd (decoder - attention)", p[PROF_DEC_BWD] - p[PROF_ATT_BWD], PH_DEC_B},
        {"readout+softmax fwd", p[PROF_OUT_FWD], PH_OUT_F},
        {"readout+softmax bwd", p[PROF_OUT_BWD], PH_OUT_B},
        {"optimizer (clip + Adadelta)", p[PROF_OPTIM], -1},
        {"other (batch fill, zeroing grads)", dt - booked, -1},
    };
    printf("PROFILE phase                                   s/update      %%  GFLOP/update  GFLOP/s\n");
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        printf("PROFILE %-38s %10.4f %6.1f", rows[k].name, rows[k].sec / o->updates, 100 * rows[k].sec / dt);
        if (rows[k].ph >= 0)
            printf(" %13.2f %8.1f", fle[rows[k].ph] / o->updates / 1e9, rows[k].sec > 0 ? fle[rows[k].ph] / rows[k].sec / 1e9 : 0);
        printf("\n");
    }
    printf("PROFILE %-38s %10.4f %6.1f %13.2f %8.1f\n", "total", spu, 100.0, fe / o->updates / 1e9, fe / dt / 1e9);
    /* one line for scripts: seconds per update per phase as booked (decoder with attention),
     * then executed GFLOP per update per phase */
    printf("RESULT tok_s=%.1f sec_update=%.4f rss_mib=%.1f rss_timed_mib=%.1f mflop_tok=%.3f mflop_tok_exec=%.3f gflops=%.2f updates=%d "
           "tok=%ld loss_first=%.3f loss_last=%.3f",
           tps, spu, rss / 1048576, rss_timed / 1048576, fu / tok / 1e6, fe / tok / 1e6, fu / dt / 1e9, o->updates, tok, t.first_nll, last_nll);
    static const char *keys[PROF_N] = {"enc_fwd", "enc_bwd", "att_fwd", "att_bwd", "dec_fwd", "dec_bwd", "out_fwd", "out_bwd", "optim"};
    for (int k = 0; k < PROF_N; k++) printf(" %s=%.4f", keys[k], p[k] / o->updates);
    printf(" other=%.4f", (dt - booked) / o->updates);
    for (int k = 0; k < PH_N; k++) printf(" fl_%s=%.3f", keys[k], fle[k] / o->updates / 1e9);
    printf(" mflop_tok_corpus=%.3f", fcorp / 1e6);
    /* forward FLOPs per source position, target position, (target, source) pair and sentence:
     * what a script needs to count the FLOPs of another implementation's batches */
    printf(" f_src=%.0f f_tgt=%.0f f_pair=%.0f f_sent=%.0f\n", f.enc_src + f.uah_src,
           f.query_tgt + f.dec_tgt + f.out_tgt + f.soft_tgt, f.pair, f.sent);
out:
    if (rc) fprintf(stderr, "bench_train: %s\n", err.msg);
    TX->b->mix->free(t.mix);
    nmt_model_free(t.m);
    vocab_free(sv);
    vocab_free(tv);
    free(t.G);
    optim_free(&t.opt);
    batcher_free(&bat);
    batch_buf_free(&t.bb);
    net_ws_free(&t.ws);
    pairs_free(&t.train);
    wordcount_free(&ws_);
    wordcount_free(&wt_);
    textfile_free(&ts);
    textfile_free(&tt);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    opts o;
    if (parse_args(&o, argc, argv)) return 2;
    return run(&o);
}
