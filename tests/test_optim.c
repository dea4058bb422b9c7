/* test_optim.c: the optimizers' row-sparse regions (optim_sparse_rows) change no bit. Two copies
 * of the same parameters take the same gradients, where most rows of the sparse region get an
 * all-zero gradient at each step: one optimizer updates everything, the other skips those rows
 * and owes their decay. Parameters must agree bit for bit after every step, and the state after
 * optim_settle, for every optimizer kind, with and without clipping. The gradients are left
 * zero by both. */
/* kernel sets: all: the optimizers against their equations (tests/cli/kernels.sh) */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "train/optim.h"
#include "base/rng.h"
#include "test.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

enum { HEAD = 37, ROWS = 50, COLS = 12, TAIL = 29, N = HEAD + ROWS * COLS + TAIL, STEPS = 40 };

static rng R;

static void run(int kind, double clip)
{
    optim eager, lazy;
    NMT_ASSERT(optim_init(&eager, TX, kind, N, NULL) == 0);
    NMT_ASSERT(optim_init(&lazy, TX, kind, N, NULL) == 0);
    NMT_ASSERT(optim_sparse_rows(&lazy, HEAD, ROWS, COLS, NULL) == 0);
    real p1[N], p2[N], g1[N], g2[N];
    for (int i = 0; i < N; i++) p1[i] = p2[i] = (real)rng_normal(&R);
    int bad_p = 0, dirty_g = 0, skipped = 0;
    for (int step = 0; step < STEPS; step++) {
        for (int i = 0; i < N; i++) g1[i] = (real)rng_normal(&R);
        for (int r = 0; r < ROWS; r++) /* a row is touched one step in five, never at steps 30-39 */
            if (step >= 30 || rng_below(&R, 5)) {
                memset(g1 + HEAD + r * COLS, 0, sizeof(real) * COLS);
                skipped++;
            }
        memcpy(g2, g1, sizeof g1);
        double n1, n2;
        optim_step(&eager, p1, g1, clip, &n1);
        optim_step(&lazy, p2, g2, clip, &n2);
        bad_p += memcmp(p1, p2, sizeof p1) != 0 || n1 != n2;
        for (int i = 0; i < N; i++) dirty_g += g1[i] != 0 || g2[i] != 0;
    }
    optim_settle(&lazy);
    int bad_s = optim_state_count(&eager) != optim_state_count(&lazy);
    for (int i = 0; i < optim_state_count(&eager); i++)
        bad_s |= memcmp(optim_state(&eager, i), optim_state(&lazy, i), sizeof(real) * N) != 0;
    CHECKF(!bad_p, "%s, clip %g: parameters differ at %d of %d steps", optim_name(kind), clip, bad_p, STEPS);
    CHECKF(!bad_s, "%s, clip %g: state differs after optim_settle", optim_name(kind), clip);
    CHECKF(!dirty_g, "%s: %d gradient entries left non-zero", optim_name(kind), dirty_g);
    CHECK(skipped > ROWS * 10); /* the skipping did happen */
    /* the untouched rows' state really decayed (Adadelta): equal to eager is not equal to before */
    if (kind == OPT_ADADELTA) CHECK(optim_state(&lazy, 0)[HEAD] > 0 && optim_state(&lazy, 0)[HEAD] < 1);
    optim_free(&eager);
    optim_free(&lazy);
}
/* Marian's learning-rate schedules against hand-computed factors, and the step's use of them. */
static void test_schedule(void)
{
    CHECK(optim_schedule(1, 0, 0) == 1 && optim_schedule(1000000, 0, 0) == 1);
    const struct { long u, warmup, decay; double want; } v[] = {
        {1, 4, 0, 0.25}, {2, 4, 0, 0.5}, {4, 4, 0, 1}, {9, 4, 0, 1},        /* u/4, then 1 */
        {3, 0, 4, 1}, {4, 0, 4, 1}, {16, 0, 4, 0.5}, {100, 0, 4, 0.2},      /* sqrt(4/u) past 4 */
        {2, 4, 8, 0.5}, {8, 4, 8, 1}, {32, 4, 8, 0.5},                      /* both */
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        CHECKF(fabs(optim_schedule(v[i].u, v[i].warmup, v[i].decay) - v[i].want) < 1e-15, "update %ld, warm-up %ld, decay %ld: %g, expected %g",
               v[i].u, v[i].warmup, v[i].decay, optim_schedule(v[i].u, v[i].warmup, v[i].decay), v[i].want);
    /* SGD moves by lr · lr_scale · g: 1 - 0.1 · 0.25 · 2 */
    optim o;
    NMT_ASSERT(optim_init(&o, TX, OPT_SGD, 1, NULL) == 0);
    CHECK(o.lr_scale == 1);
    o.lr = 0.1;
    o.lr_scale = 0.25;
    real p = 1, g = 2;
    optim_step(&o, &p, &g, 0, NULL);
    CHECK_NEAR(p, 0.95, 1e-7);
    optim_free(&o);
}

int main(void)
{
    rng_seed(&R, 77);
    for (int kind = 0; kind < 4; kind++) {
        run(kind, 0);
        run(kind, 1.0);
    }
    /* regions are kept in order whatever order they are given in, and at most four */
    optim o;
    NMT_ASSERT(optim_init(&o, TX, OPT_ADADELTA, 100, NULL) == 0);
    NMT_ASSERT(optim_sparse_rows(&o, 60, 4, 10, NULL) == 0);
    NMT_ASSERT(optim_sparse_rows(&o, 10, 2, 5, NULL) == 0);
    CHECK(o.nsparse == 2 && o.sparse[0].off == 10 && o.sparse[1].off == 60);
    NMT_ASSERT(optim_sparse_rows(&o, 30, 1, 5, NULL) == 0);
    NMT_ASSERT(optim_sparse_rows(&o, 40, 1, 5, NULL) == 0);
    nmt_err err;
    CHECK(optim_sparse_rows(&o, 50, 1, 5, &err) != 0);
    optim_free(&o);
    optim_free(&o); /* a second free is harmless */
    NMT_ASSERT(optim_init(&o, TX, OPT_ADADELTA, 100, NULL) == 0);
    NMT_ASSERT(optim_sparse_rows(&o, 20, 3, 10, NULL) == 0);
    CHECK(optim_sparse_rows(&o, 45, 1, 10, &err) != 0 && strstr(err.msg, "overlaps")); /* [45,55) meets [20,50) */
    CHECK(optim_sparse_rows(&o, 95, 1, 10, &err) != 0 && strstr(err.msg, "outside"));  /* past the 100 */
    CHECK(optim_sparse_rows(&o, 50, 5, 10, NULL) == 0);                               /* [50,100) touches, fits */
    optim_free(&o);
    /* the table: state counts, names in checkpoints (and the earlier format's), unknown kinds */
    const char *names[4] = {"adadelta", "adagrad", "adam", "sgd"};
    int counts[4] = {2, 1, 2, 0};
    for (int kind = 0; kind < 4; kind++) {
        CHECK(optim_parse(names[kind]) == kind && !strcmp(optim_name(kind), names[kind]));
        CHECK(optim_kind_states(kind) == counts[kind]);
        NMT_ASSERT(optim_init(&o, TX, kind, 10, NULL) == 0);
        CHECK(optim_state_count(&o) == counts[kind] && !optim_state(&o, counts[kind]) && !optim_state(&o, -1));
        for (int i = 0; i < counts[kind]; i++) CHECK(optim_state(&o, i) && optim_state(&o, i)[9] == 0);
        optim_free(&o);
    }
    char buf[64];
    NMT_ASSERT(optim_init(&o, TX, OPT_ADAM, 10, NULL) == 0);
    optim_state_name(&o, 1, 0, buf, sizeof buf);
    CHECK(!strcmp(buf, "optim.adam.1"));
    optim_state_name(&o, 1, 1, buf, sizeof buf);
    CHECK(!strcmp(buf, "opt.s2"));
    optim_free(&o);
    CHECK(optim_parse("rmsprop") == -1 && !strcmp(optim_name(4), "unknown") && optim_kind_states(-1) == 0);
    CHECK(optim_init(&o, TX, 4, 10, &err) != 0 && strstr(err.msg, "unknown optimizer"));
    optim_free(&o);
    test_schedule();
    return test_done("test_optim");
}
