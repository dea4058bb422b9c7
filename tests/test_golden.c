/* test_golden.c: the float32 models against the float64 PyTorch reference's saved values
 * (golden/ in the shared reference data): same parameters in, then the annotations, s_0, the
 * decoder states, contexts, attention weights, maxout outputs, per-token log-probabilities, the
 * loss, every parameter gradient, and the parameters after one and two Adadelta updates. */
/* kernel sets: all: against the PyTorch reference's values (tests/cli/kernels.sh) */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "nn/net.h"
#include "train/optim.h"
#include "io/safetensors.h"
#include "helpers.h"
#include "test.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

static double *read_f64(const st_file *f, const char *name, size_t n)
{
    double *d = malloc(sizeof(double) * (n ? n : 1));
    nmt_err e;
    if (st_read_f64(f, name, d, n, &e)) {
        fprintf(stderr, "FAIL: %s\n", e.msg);
        free(d);
        return NULL;
    }
    return d;
}

/* Max-norm relative difference over the positions where keep(i) holds (all when keep NULL). */
static double rel_diff(const real *got, const double *want, size_t n, const unsigned char *keep)
{
    double md = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        if (keep && !keep[i]) continue;
        md = fmax(md, fabs(got[i] - want[i]));
        mx = fmax(mx, fabs(want[i]));
    }
    return mx > 0 ? md / mx : md;
}

static void compare(const char *model, const char *what, const real *got, const double *want, size_t n,
                    const unsigned char *keep, double tol)
{
    if (!want) { CHECKF(0, "%s: %s missing", model, what); return; }
    double r = rel_diff(got, want, n, keep);
    CHECKF(r <= tol, "%s %s: relative max-norm difference %.3g > %.1g (first: got %.8g want %.8g)",
           model, what, r, tol, (double)got[0], want[0]);
    printf("  %-10s %-22s rel diff %.2e\n", model, what, r);
}

static void run(const char *shared, const char *stem)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/golden/%s.json", shared, stem);
    char *js = test_slurp(path, NULL);
    CHECKF(js != NULL, "cannot read %s", path);
    if (!js) return;
    cJSON *J = cJSON_Parse(js);
    free(js);
    cJSON *cf = cJSON_GetObjectItem(J, "config");
    nmt_config c;
    memset(&c, 0, sizeof c); /* fields this test does not name (tied embeddings) are off */
    c.arch = cJSON_IsTrue(cJSON_GetObjectItem(cf, "encdec")) ? NMT_ARCH_RNNENC : NMT_ARCH_RNNSEARCH;
    c.src_vocab = cJSON_GetObjectItem(cf, "Vs")->valueint;
    c.tgt_vocab = cJSON_GetObjectItem(cf, "Vt")->valueint;
    c.emb = cJSON_GetObjectItem(cf, "m")->valueint;
    c.hid = cJSON_GetObjectItem(cf, "n")->valueint;
    c.att = cJSON_GetObjectItem(cf, "na")->valueint;
    c.maxout = cJSON_GetObjectItem(cf, "l")->valueint;
    c.window = 2;
    c.fert_step_w = c.fert_left_w = 1.0;
    cJSON *outs = cJSON_GetObjectItem(J, "outputs");
    double want_loss = cJSON_GetObjectItem(outs, "loss")->valuedouble;
    cJSON *gn = cJSON_GetObjectItem(outs, "adadelta_grad_norms");

    snprintf(path, sizeof path, "%s/golden/%s.safetensors", shared, stem);
    st_file *f = NULL;
    nmt_err err;
    int rc = st_load(&f, path, &err);
    CHECKF(rc == 0, "%s", err.msg);
    if (rc) { cJSON_Delete(J); return; }

    param_table pt;
    param_table_build(&pt, &c);
    real *P = malloc(sizeof(real) * pt.total), *G = calloc(pt.total, sizeof(real));
    params p, g;
    params_point(&p, &pt, P);
    params_point(&g, &pt, G);
    char name[128];
    for (int i = 0; i < pt.n; i++) {
        const tensor_info *t = &pt.t[i];
        snprintf(name, sizeof name, "param.%s", t->name);
        int64_t shape[2] = {t->rows, t->cols};
        int r2 = st_expect(f, name, -1, t->ndim, t->ndim == 1 ? shape + 1 : shape, &err);
        CHECKF(r2 == 0, "%s", err.msg);
        if (r2 == 0) {
            double *d = read_f64(f, name, (size_t)t->rows * t->cols);
            for (size_t k = 0; d && k < (size_t)t->rows * t->cols; k++) P[t->offset + k] = (real)d[k];
            free(d);
        }
    }
    /* the batch: time-major ids, lengths from the masks */
    const st_tensor *tx = st_find(f, "x"), *ty = st_find(f, "y");
    batch bt;
    bt.Tx = (int)tx->shape[0];
    bt.B = (int)tx->shape[1];
    bt.Ty = (int)ty->shape[0];
    int B = bt.B, Tx = bt.Tx, Ty = bt.Ty, n = c.hid, l = c.maxout, cd = ctx_dim(&c);
    int64_t *xi = malloc(sizeof(int64_t) * Tx * B), *yi = malloc(sizeof(int64_t) * Ty * B);
    int64_t *xm = malloc(sizeof(int64_t) * Tx * B), *ym = malloc(sizeof(int64_t) * Ty * B);
    st_read_i64(f, "x", xi, (size_t)Tx * B, NULL);
    st_read_i64(f, "y", yi, (size_t)Ty * B, NULL);
    st_read_i64(f, "x_mask", xm, (size_t)Tx * B, NULL);
    st_read_i64(f, "y_mask", ym, (size_t)Ty * B, NULL);
    bt.x = malloc(sizeof(int) * Tx * B);
    bt.y = malloc(sizeof(int) * Ty * B);
    bt.xlen = calloc(B, sizeof(int));
    bt.ylen = calloc(B, sizeof(int));
    unsigned char *xkeep = malloc(Tx * B), *ykeep = malloc(Ty * B);
    for (int i = 0; i < Tx * B; i++) { bt.x[i] = (int)xi[i]; bt.xlen[i % B] += (int)xm[i]; xkeep[i] = (unsigned char)xm[i]; }
    for (int i = 0; i < Ty * B; i++) { bt.y[i] = (int)yi[i]; bt.ylen[i % B] += (int)ym[i]; ykeep[i] = (unsigned char)ym[i]; }

    net_ws ws;
    memset(&ws, 0, sizeof ws);
    NMT_ASSERT(net_ws_reserve(TX, &ws, &c, B, Tx, Ty, NULL) == 0);
    real *logp = malloc(sizeof(real) * Ty * B);
    double loss = net_forward(TX, &ws, &c, &p, &bt, logp) / B;
    const char *mn = nmt_arch_name(c.arch);

    /* internals, real positions only (per-row masks expanded over each vector) */
    int hd = ws.enc.ndir * n;
    unsigned char *keep = malloc((size_t)Ty * B * (hd > Tx ? hd : Tx) + (size_t)Tx * B * hd);
    double *d;
    for (int i = 0; i < Tx * B; i++) memset(keep + (size_t)i * hd, xkeep[i], hd);
    d = read_f64(f, "annotations", (size_t)Tx * B * hd);
    compare(mn, "annotations", ws.enc.H, d, (size_t)Tx * B * hd, keep, 1e-5);
    free(d);
    d = read_f64(f, "s0", (size_t)B * n);
    compare(mn, "s0", ws.dec.S, d, (size_t)B * n, NULL, 1e-5);
    free(d);
    for (int i = 0; i < Ty * B; i++) memset(keep + (size_t)i * n, ykeep[i], n);
    d = read_f64(f, "dec_states", (size_t)Ty * B * n);
    compare(mn, "decoder states", ws.dec.S + (size_t)B * n, d, (size_t)Ty * B * n, keep, 1e-5);
    free(d);
    if (c.arch == NMT_ARCH_RNNSEARCH) {
        for (int i = 0; i < Ty * B; i++) memset(keep + (size_t)i * cd, ykeep[i], cd);
        d = read_f64(f, "context", (size_t)Ty * B * cd);
        compare(mn, "contexts", ws.dec.C, d, (size_t)Ty * B * cd, keep, 1e-5);
        free(d);
        for (int i = 0; i < Ty * B; i++)
            for (int j = 0; j < Tx; j++) keep[(size_t)i * Tx + j] = ykeep[i] && j < bt.xlen[i % B];
        d = read_f64(f, "alpha", (size_t)Ty * B * Tx);
        compare(mn, "attention weights", ws.dec.alpha, d, (size_t)Ty * B * Tx, keep, 1e-5);
        free(d);
    } else {
        d = read_f64(f, "context", (size_t)B * cd);
        compare(mn, "fixed context", ws.dec.C, d, (size_t)B * cd, NULL, 1e-5);
        free(d);
    }
    /* maxout outputs: ours are kept for the real tokens only, in the same i-major order */
    d = read_f64(f, "maxout_t", (size_t)Ty * B * l);
    if (d) {
        double *dg = malloc(sizeof(double) * ws.out.N * l);
        for (int r = 0; r < ws.out.N; r++) memcpy(dg + (size_t)r * l, d + (size_t)ws.out.rows[r] * l, sizeof(double) * l);
        compare(mn, "maxout t", ws.out.Tg, dg, (size_t)ws.out.N * l, NULL, 1e-5);
        free(dg);
    }
    free(d);
    d = read_f64(f, "logp_tok", (size_t)Ty * B);
    compare(mn, "log-probabilities", logp, d, (size_t)Ty * B, ykeep, 1e-5);
    if (d) {
        double worst = 0; /* also token by token, each relative to itself */
        for (int i = 0; i < Ty * B; i++) if (ykeep[i]) worst = fmax(worst, fabs(logp[i] - d[i]) / fabs(d[i]));
        CHECKF(worst <= 1e-5, "%s: a token's log-probability differs by %.2e relative", mn, worst);
    }
    free(d);
    CHECKF(fabs(loss - want_loss) <= 1e-5 * fabs(want_loss), "%s loss %.10g, reference %.10g", mn, loss, want_loss);
    printf("  %-10s loss %.8f (reference %.8f)\n", mn, loss, want_loss);

    net_backward(TX, &ws, &c, &p, &g, &bt, (real)1 / B);
    double worst_grad = 0;
    for (int i = 0; i < pt.n; i++) {
        const tensor_info *t = &pt.t[i];
        size_t cnt = (size_t)t->rows * t->cols;
        snprintf(name, sizeof name, "grad.%s", t->name);
        d = read_f64(f, name, cnt);
        if (!d) { CHECKF(0, "%s missing", name); continue; }
        double r = rel_diff(G + t->offset, d, cnt, NULL);
        worst_grad = fmax(worst_grad, r);
        CHECKF(r <= 1e-4, "%s %s: relative max-norm difference %.3g", mn, name, r);
        free(d);
    }
    printf("  %-10s every gradient tensor: largest relative max-norm difference %.2e\n", mn, worst_grad);

    /* two Adadelta updates on the same batch, each after clipping to norm 1 */
    optim o;
    NMT_ASSERT(optim_init(&o, TX, OPT_ADADELTA, pt.total, NULL) == 0);
    for (int step = 1; step <= 2; step++) {
        if (step == 2) {
            memset(G, 0, sizeof(real) * pt.total);
            net_forward(TX, &ws, &c, &p, &bt, NULL);
            net_backward(TX, &ws, &c, &p, &g, &bt, (real)1 / B);
        }
        double norm;
        optim_step(&o, P, G, 1.0, &norm);
        double want_norm = cJSON_GetArrayItem(gn, step - 1)->valuedouble;
        CHECKF(fabs(norm - want_norm) <= 1e-5 * want_norm, "%s step %d: gradient norm %.8g, reference %.8g", mn, step, norm, want_norm);
        double worst = 0;
        for (int i = 0; i < pt.n; i++) {
            const tensor_info *t = &pt.t[i];
            size_t cnt = (size_t)t->rows * t->cols;
            snprintf(name, sizeof name, "adadelta_step%d.%s", step, t->name);
            d = read_f64(f, name, cnt);
            if (!d) { CHECKF(0, "%s missing", name); continue; }
            double r = rel_diff(P + t->offset, d, cnt, NULL);
            worst = fmax(worst, r);
            CHECKF(r <= 1e-5, "%s %s: relative max-norm difference %.3g", mn, name, r);
            free(d);
        }
        printf("  %-10s Adadelta step %d: gradient norm %.8f (reference %.8f), parameters rel diff %.2e\n", mn, step,
               norm, want_norm, worst);
    }
    optim_free(&o);
    free(P); free(G); free(logp); free(keep); free(xkeep); free(ykeep);
    free(xi); free(yi); free(xm); free(ym);
    free(bt.x); free(bt.y); free(bt.xlen); free(bt.ylen);
    net_ws_free(&ws);
    st_free(f);
    cJSON_Delete(J);
}

int main(void)
{
    const char *shared = getenv("NMT_SHARED");
    if (!shared) shared = "../shared";
    run(shared, "golden_rnnsearch");
    run(shared, "golden_rnnencdec");
    return test_done("test_golden");
}
