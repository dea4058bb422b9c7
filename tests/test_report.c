/* test_report.c: report.h and chart.h: bucket bounds, the No-UNK subset on a hand-made vocabulary,
 * vocabulary files, per-bucket BLEU against bleu_compute on subsets built here (Multi30k data),
 * the TSV, the SVG's text, the PNG read back with cairo (markers, lines, and no line across an
 * empty bucket, where the layout puts them; text ink), and the PDF's header and page. */
#include <cairo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/bleu.h"
#include "viz/chart.h"
#include "viz/draw.h"
#include "eval/report.h"
#include "helpers.h"
#include "test.h"
#include "data/vocab.h"

/* fontconfig loses a few hundred bytes, once a process, as it loads its default configuration
 * (pango has it loaded on a thread of its own): not a leak of ours, so LeakSanitizer lets leaks
 * from inside libfontconfig be. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libfontconfig.so\n"; }

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

/* The lines of a file split at '\n' (a last line without one counts), in place in *buf. */
static char **lines_of(const char *path, char **buf, long *n)
{
    *buf = test_slurp(path, NULL);
    *n = 0;
    if (!*buf) return NULL;
    long cnt = 0;
    size_t len = strlen(*buf);
    for (size_t i = 0; i < len; i++) cnt += (*buf)[i] == '\n';
    if (len && (*buf)[len - 1] != '\n') cnt++;
    char **l = malloc(sizeof *l * (size_t)(cnt + 1));
    char *p = *buf;
    for (long i = 0; i < cnt; i++) {
        l[i] = p;
        char *e = strchr(p, '\n');
        if (e) { *e = 0; p = e + 1; } else p += strlen(p);
    }
    *n = cnt;
    return l;
}

static size_t count_substr(const char *s, const char *sub)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, sub)); p += strlen(sub)) n++;
    return n;
}

/* Words as the test sees them, written apart from the library: runs of non-blank bytes. */
static int words_of(const char *s)
{
    int n = 0, in = 0;
    for (; *s; s++) {
        int blank = *s == ' ' || *s == '\t' || *s == '\r' || *s == '\v' || *s == '\f';
        if (!blank && !in) n++;
        in = !blank;
    }
    return n;
}

static vocab *make_vocab(const char *const *w, int n)
{
    vocab *v;
    nmt_err err;
    if (vocab_from_words(&v, w, n, &err)) { fprintf(stderr, "%s\n", err.msg); exit(2); }
    return v;
}

/* ------------------------------------------------------------------ buckets */
static void test_buckets(void)
{
    CHECK(report_bucket_of(0) == 0);
    CHECK(report_bucket_of(1) == 0);
    CHECK(report_bucket_of(9) == 0);
    CHECK(report_bucket_of(10) == 1);
    CHECK(report_bucket_of(19) == 1);
    CHECK(report_bucket_of(20) == 2);
    CHECK(report_bucket_of(59) == 5);
    CHECK(report_bucket_of(60) == 6);
    CHECK(report_bucket_lo(1) == 10 && report_bucket_hi(1) == 19);
    char lab[32];
    report_bucket_label(lab, sizeof lab, 0);
    CHECK(!strcmp(lab, "0-9"));
    report_bucket_label(lab, sizeof lab, 2);
    CHECK(!strcmp(lab, "20-29"));

    /* through report_compute: sources of 0, 9, 10, 19, 20 and 45 words */
    static char src_buf[6][400];
    const int lens[6] = {0, 9, 10, 19, 20, 45};
    const char *src[6], *ref[6], *hyp[6];
    for (int i = 0; i < 6; i++) {
        src_buf[i][0] = 0;
        for (int w = 0; w < lens[i]; w++) strcat(src_buf[i], w ? (w % 3 ? " w" : "\tw") : "w");
        src[i] = src_buf[i];
        ref[i] = "a b c d";
        hyp[i] = "a b c d";
    }
    report_system sys = {"A", "hyp", hyp, NULL, NULL};
    report_input in = {6, src, ref, "ref", 1, &sys, NULL, NULL, {0}};
    report r;
    nmt_err err;
    CHECK(report_compute(&r, &in, &err) == 0);
    CHECK(r.max_words == 45);
    CHECK(r.nbuckets == 5);
    long want[5] = {2, 2, 1, 0, 1};
    for (int b = 0; b < 5; b++) CHECKF(r.bucket_n[b] == want[b], "bucket %d: %ld", b, r.bucket_n[b]);
    CHECK(!r.has_nounk && !r.bleu_nounk && !r.known);
    CHECK_NEAR(r.bleu_all[0], 100.0, 1e-9);
    report_free(&r);
}

/* ------------------------------------------------------------------ No UNK */
static void test_nounk(void)
{
    const char *sw[] = {"</s>", "<unk>", "a", "man", "dog", "runs", "."};
    const char *tw[] = {"</s>", "<unk>", "un", "homme", "chien", "court", "."};
    vocab *sv = make_vocab(sw, 7), *tv = make_vocab(tw, 7);
    CHECK(!report_has_unknown("a man runs .", sv));
    CHECK(!report_has_unknown("", sv));
    CHECK(!report_has_unknown("  a\tman  ", sv));
    CHECK(report_has_unknown("a cat", sv));
    CHECK(report_has_unknown("A man", sv));          /* case matters, as for the model */
    CHECK(report_has_unknown("a <unk>", sv));        /* UNK itself is no known word */
    CHECK(report_has_unknown("</s>", sv));
    CHECK(report_has_unknown("mans", sv));           /* no prefix match */
    CHECK(report_has_unknown("ma", sv));
    CHECK(!report_has_unknown("un homme court .", tv));

    /* sentences 0, 3 (empty) and 4 are known; 1 (cat / chat), 2 ("!") and 5 (the / le) are not:
     * unknown source words in 1 and 5, unknown reference words in 1, 2 and 5 */
    const char *src[] = {"a man runs .", "a cat runs .", "a dog .", "", "a man", "the dog"};
    const char *ref[] = {"un homme court .", "un chat court .", "un chien !", "", "un homme", "le chien"};
    unsigned char known[6];
    CHECK(report_select_known(known, src, ref, 6, sv, tv) == 3);
    CHECK(known[0] && !known[1] && !known[2] && known[3] && known[4] && !known[5]);

    const char *const *ref2 = ref;
    const char *hyp[] = {"un homme court .", "un chien court .", "un chien .", "", "un homme", "le chien"};
    const char *nounk[] = {"un homme marche .", "x", "y", "", "un homme", "z"};
    report_system sys[2] = {{"A", "a.out", hyp, "a.nounk", nounk}, {"B", "b.out", hyp, NULL, NULL}};
    report_input in = {6, src, ref2, "ref", 2, sys, sv, tv, {0}};
    report r;
    nmt_err err;
    CHECK(report_compute(&r, &in, &err) == 0);
    CHECK(r.has_nounk);
    CHECK(r.n_known == 3);
    CHECK(r.n_unk_src == 2);
    CHECK(r.n_unk_ref == 3);
    CHECK(r.known[0] && !r.known[1] && !r.known[2] && r.known[3] && r.known[4] && !r.known[5]);
    /* A's No-UNK column scores its --hyp-nounk lines, B's its normal ones, on sentences 0, 3, 4 */
    bleu_opts o = {0};
    bleu_stats sa = {0}, sb = {0};
    const int subset[3] = {0, 3, 4};
    for (int k = 0; k < 3; k++) {
        const char *rr[1] = {ref2[subset[k]]};
        bleu_add_sentence(&sa, nounk[subset[k]], rr, 1, &o, &err);
        bleu_add_sentence(&sb, hyp[subset[k]], rr, 1, &o, &err);
    }
    bleu_score ba, bb;
    bleu_compute(&ba, &sa, &o, &err);
    bleu_compute(&bb, &sb, &o, &err);
    CHECK(r.bleu_nounk[0] == ba.score);
    CHECK(r.bleu_nounk[1] == bb.score);
    CHECK_NEAR(r.bleu_nounk[1], 100.0, 1e-9);
    CHECK(r.bleu_nounk[0] < 100.0);
    report_free(&r);

    /* bad input: only one vocabulary; invalid UTF-8 in a hypothesis names file and line */
    report_input half = in;
    half.tgt_vocab = NULL;
    CHECK(report_compute(&r, &half, &err) == NMT_ERR_ARG);
    const char *badhyp[] = {"un", "\xff", "", "", "", ""};
    report_system bs = {"A", "sys.out", badhyp, NULL, NULL};
    report_input bad = {6, src, ref2, "ref", 1, &bs, NULL, NULL, {0}};
    CHECK(report_compute(&r, &bad, &err) == NMT_ERR_FORMAT);
    CHECKF(strstr(err.msg, "sys.out:2") != NULL, "%s", err.msg);
    const char *badref[] = {"un", "", "", "", "\xc3\x28", ""};
    report_input bad2 = {6, src, badref, "ref.fr", 1, &sys[1], NULL, NULL, {0}};
    CHECK(report_compute(&r, &bad2, &err) == NMT_ERR_FORMAT);
    CHECKF(strstr(err.msg, "ref.fr:5: invalid UTF-8") != NULL, "%s", err.msg);
    vocab_free(sv);
    vocab_free(tv);
}

/* ------------------------------------------------------------------ vocabulary files */
static void test_vocab_files(void)
{
    vocab *v;
    nmt_err err;
    const char *p = tmp_path("plain.vocab");
    CHECK(test_write(p, "the\ncat\n\nsat\r\n") == 0);
    CHECK(report_vocab_read(&v, p, &err) == 0);
    if (v) {
        CHECK(v->n == 5);
        CHECK(vocab_find(v, "cat", 3) >= 2 && vocab_find(v, "sat", 3) >= 2);
        CHECK(vocab_find(v, "dog", 3) < 0);
        CHECK(!report_has_unknown("the cat sat", v) && report_has_unknown("the dog", v));
        vocab_free(v);
    }
    p = tmp_path("nmt.vocab"); /* `nmt vocab` output */
    CHECK(test_write(p, "0\t</s>\t10\n1\t<unk>\t0\n2\tle\t7\n3\tchat\t3\n") == 0);
    CHECK(report_vocab_read(&v, p, &err) == 0);
    if (v) {
        CHECK(v->n == 4);
        CHECK(!report_has_unknown("le chat", v) && report_has_unknown("le chien", v));
        vocab_free(v);
    }
    p = tmp_path("counts.vocab");
    CHECK(test_write(p, "le\t7\nchat\t3\n") == 0);
    CHECK(report_vocab_read(&v, p, &err) == 0 && v && v->n == 4);
    vocab_free(v);

    p = tmp_path("dup.vocab");
    CHECK(test_write(p, "a\nb\nc\nb\n") == 0);
    CHECK(report_vocab_read(&v, p, &err) == NMT_ERR_FORMAT && !v);
    CHECKF(strstr(err.msg, "dup.vocab:4") && strstr(err.msg, "line 2"), "%s", err.msg);
    p = tmp_path("space.vocab");
    CHECK(test_write(p, "a\nb c\n") == 0);
    CHECK(report_vocab_read(&v, p, &err) == NMT_ERR_FORMAT);
    CHECKF(strstr(err.msg, "space.vocab:2") != NULL, "%s", err.msg);
    p = tmp_path("fields.vocab");
    CHECK(test_write(p, "a\nx\ty\tz\n") == 0);
    CHECK(report_vocab_read(&v, p, &err) == NMT_ERR_FORMAT);
    CHECKF(strstr(err.msg, "fields.vocab:2") != NULL, "%s", err.msg);
    p = tmp_path("utf8.vocab");
    CHECK(test_write(p, "a\nb\n\xc3\x28\n") == 0);
    CHECK(report_vocab_read(&v, p, &err) == NMT_ERR_FORMAT);
    CHECKF(strstr(err.msg, "utf8.vocab:3") != NULL, "%s", err.msg);
    CHECK(report_vocab_read(&v, tmp_path("missing.vocab"), &err) == NMT_ERR_IO);
}

/* ------------------------------------------------------------------ BLEU per subset, real data */
static const char *shared_dir(void)
{
    const char *s = getenv("NMT_SHARED");
    return s && *s ? s : "../shared";
}

/* report_compute's per-bucket and overall BLEU against bleu_compute on subsets built here. */
static void test_bucket_bleu(report *out, const char ***labels_out)
{
    char path[1024], *sb, *rb, *hb[2];
    long ns, nr, nh[2];
    snprintf(path, sizeof path, "%s/data/multi30k/test_2016_flickr.en", shared_dir());
    char **src = lines_of(path, &sb, &ns);
    snprintf(path, sizeof path, "%s/data/bleu/refs/ref.fr", shared_dir());
    char **ref = lines_of(path, &rb, &nr);
    const char *names[2] = {"perturbed.fr", "short.fr"};
    char **hyp[2];
    for (int s = 0; s < 2; s++) {
        snprintf(path, sizeof path, "%s/data/bleu/hyps/%s", shared_dir(), names[s]);
        hyp[s] = lines_of(path, &hb[s], &nh[s]);
    }
    CHECKF(src && ref && hyp[0] && hyp[1], "shared data missing under %s", shared_dir());
    if (!src || !ref || !hyp[0] || !hyp[1]) exit(test_done("test_report"));
    CHECK(ns == 1000 && nr == 1000 && nh[0] == 1000 && nh[1] == 1000);

    static const char *labels[2] = {"Perturbed", "Short & <b>"};
    report_system sys[2] = {{labels[0], names[0], (const char *const *)hyp[0], NULL, NULL},
                            {labels[1], names[1], (const char *const *)hyp[1], NULL, NULL}};
    report_input in = {ns, (const char *const *)src, (const char *const *)ref, "ref.fr", 2, sys, NULL, NULL, {0}};
    nmt_err err;
    CHECK(report_compute(out, &in, &err) == 0);
    report *r = out;
    /* the overall score is sacreBLEU 2.6.0's own number (data/bleu/expected.tsv, perturbed_fr) */
    CHECK_NEAR(r->bleu_all[0], 50.86358552622016, 1e-12);
    long sum = 0;
    int nonempty = 0;
    for (int b = 0; b < r->nbuckets; b++) {
        sum += r->bucket_n[b];
        nonempty += r->bucket_n[b] > 0;
    }
    CHECK(sum == ns);
    CHECK(nonempty >= 3);
    int maxw = 0;
    for (long i = 0; i < ns; i++) if (words_of(src[i]) > maxw) maxw = words_of(src[i]);
    CHECK(r->max_words == maxw);
    CHECK(r->nbuckets == maxw / 10 + 1);
    bleu_opts o = {0};
    for (int s = 0; s < 2; s++) {
        bleu_stats all = {0};
        for (long i = 0; i < ns; i++) {
            const char *rr[1] = {ref[i]};
            bleu_add_sentence(&all, hyp[s][i], rr, 1, &o, &err);
        }
        bleu_score sc;
        bleu_compute(&sc, &all, &o, &err);
        CHECK(r->bleu_all[s] == sc.score);
        for (int b = 0; b < r->nbuckets; b++) {
            bleu_stats st = {0};
            long cnt = 0;
            for (long i = 0; i < ns; i++) {
                int w = words_of(src[i]);
                if (w < 10 * b || w > 10 * b + 9) continue;
                const char *rr[1] = {ref[i]};
                bleu_add_sentence(&st, hyp[s][i], rr, 1, &o, &err);
                cnt++;
            }
            CHECKF(cnt == r->bucket_n[b], "bucket %d: %ld vs %ld", b, cnt, r->bucket_n[b]);
            if (!cnt) continue;
            bleu_compute(&sc, &st, &o, &err);
            CHECKF(r->bucket_bleu[(size_t)b * 2 + s] == sc.score, "system %d bucket %d: %.17g vs %.17g", s, b,
                   r->bucket_bleu[(size_t)b * 2 + s], sc.score);
        }
    }
    /* the intl tokenizer goes through too */
    report r2;
    in.bleu.tokenize = BLEU_TOK_INTL;
    CHECK(report_compute(&r2, &in, &err) == 0);
    bleu_stats all = {0};
    for (long i = 0; i < ns; i++) {
        const char *rr[1] = {ref[i]};
        bleu_add_sentence(&all, hyp[1][i], rr, 1, &in.bleu, &err);
    }
    bleu_score sc;
    bleu_compute(&sc, &all, &in.bleu, &err);
    CHECK(r2.bleu_all[1] == sc.score);
    report_free(&r2);

    /* the TSV: header, one row per non-empty bucket, counts summing to the sentences */
    const char *tsv = tmp_path("r.tsv");
    CHECK(report_write_tsv(r, labels, tsv, &err) == 0);
    char *t = test_slurp(tsv, NULL);
    CHECK(t && !strncmp(t, "bucket\tsentences\tPerturbed\tShort & <b>\n", 39));
    if (t) {
        long rows = 0, tot = 0;
        for (char *line = strchr(t, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
            char lab[32];
            long cnt;
            double b0, b1;
            CHECK(sscanf(line, "%31[0-9-]\t%ld\t%lf\t%lf", lab, &cnt, &b0, &b1) == 4);
            rows++;
            tot += cnt;
        }
        CHECK(rows == nonempty && tot == ns);
    }
    free(t);
    const char *bad_labels[2] = {"a\tb", "c"};
    CHECK(report_write_tsv(r, bad_labels, tmp_path("bad.tsv"), &err) == NMT_ERR_ARG);
    CHECK(report_write_tsv(r, labels, "/nonexistent-dir/x.tsv", &err) == NMT_ERR_IO);

    *labels_out = labels;
    free(src); free(sb); free(ref); free(rb);
    for (int s = 0; s < 2; s++) { free(hyp[s]); free(hb[s]); }
}

/* ------------------------------------------------------------------ figure: SVG, PDF */
static void test_svg(const report_figure *fig, const draw_fonts *fonts)
{
    nmt_err err;
    const char *p = tmp_path("fig.svg");
    CHECKF(chart_write(&fig->spec, fonts, p, &err) == 0, "%s", err.msg);
    char *s = test_slurp(p, NULL);
    CHECK(s != NULL);
    if (!s) return;
    CHECK(!strncmp(s, "<?xml", 5));
    CHECK(strstr(s, "</svg>\n") != NULL);
    int runs = 0;
    for (int k = 0; k < fig->spec.nseries; k++) runs += chart_series_runs(&fig->spec, k);
    CHECK(runs == fig->spec.nseries); /* no empty bucket in this data: one line per system */
    /* the text layer: legend labels escaped, axis labels, tick labels, one item a series */
    CHECK(strstr(s, ">Short &amp; &lt;b&gt;</text>") != NULL);
    CHECK(strstr(s, ">Sentence length (source words)</text>") && strstr(s, ">BLEU score</text>"));
    CHECK(strstr(s, ">10-19</text>") != NULL);
    CHECK(count_substr(s, "<text class=\"legend\"") == (size_t)fig->spec.nseries);
    CHECK(count_substr(s, "<text class=\"y-label\"") == 1 && strstr(s, "transform=\"rotate(-90 "));
    CHECKF(count_substr(s, "<use") > 50, "%zu glyphs drawn", count_substr(s, "<use"));
    free(s);

    /* an impossible spec is refused, and nothing is left behind */
    chart_spec bad = fig->spec;
    bad.x_max = bad.x_min;
    remove(p);
    CHECK(chart_write(&bad, fonts, p, &err) == NMT_ERR_ARG);
    CHECK(access(p, F_OK) != 0);
    chart_series nan_series = fig->series[0];
    double nx[1] = {5}, ny[1] = {NAN};
    nan_series.n = 1; nan_series.x = nx; nan_series.y = ny;
    bad = fig->spec;
    bad.series = &nan_series;
    bad.nseries = 1;
    CHECK(chart_write(&bad, fonts, p, &err) == NMT_ERR_ARG);
    bad = fig->spec;
    bad.width = 100;
    CHECK(chart_write(&bad, fonts, p, &err) == NMT_ERR_ARG);
    CHECK(access(p, F_OK) != 0);
}

static void test_pdf(const report_figure *fig, const draw_fonts *fonts)
{
    nmt_err err;
    const char *p = tmp_path("fig.pdf");
    CHECKF(chart_write(&fig->spec, fonts, p, &err) == 0, "%s", err.msg);
    size_t n;
    char *s = test_slurp(p, &n);
    CHECK(s && n > 1000 && !strncmp(s, "%PDF-", 5));
    size_t pages = 0;
    for (const char *q = s; s && (q = memmem(q, n - (size_t)(q - s), "/Type /Page", 11)); q += 11) pages += q[11] != 's';
    CHECKF(pages == 1, "%zu pages", pages);
    free(s);
}

/* ------------------------------------------------------------------ figure: PNG */
/* A PNG read back by cairo; NULL (a failed check) if it cannot be. */
static cairo_surface_t *read_png(const char *path)
{
    cairo_surface_t *im = cairo_image_surface_create_from_png(path);
    int ok = cairo_surface_status(im) == CAIRO_STATUS_SUCCESS;
    CHECKF(ok, "%s: %s", path, cairo_status_to_string(cairo_surface_status(im)));
    if (!ok) cairo_surface_destroy(im);
    return ok ? im : NULL;
}

/* How far pixel (x, y) is from colour c (max channel difference); far for points outside. */
static int colour_dist(cairo_surface_t *im, int x, int y, uint32_t c)
{
    if (x < 0 || y < 0 || x >= cairo_image_surface_get_width(im) || y >= cairo_image_surface_get_height(im))
        return 256;
    const uint8_t *row = cairo_image_surface_get_data(im) + (size_t)y * cairo_image_surface_get_stride(im);
    uint32_t p = ((const uint32_t *)row)[x];
    int d = 0;
    for (int sh = 0; sh <= 16; sh += 8) {
        int e = abs((int)(p >> sh & 255) - (int)(c >> sh & 255));
        if (e > d) d = e;
    }
    return d;
}

/* Is colour c within tol anywhere in the (2r+1)^2 box around (x, y)? */
static int near_colour(cairo_surface_t *im, double x, double y, int r, uint32_t c, int tol)
{
    for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++)
            if (colour_dist(im, (int)x + dx, (int)y + dy, c) <= tol) return 1;
    return 0;
}

static void check_pixels(cairo_surface_t *im, const chart_layout *l, const report_figure *fig)
{
    for (int s = 0; s < fig->spec.nseries; s++) {
        const chart_series *c = &fig->series[s];
        uint32_t col = chart_color(s);
        int ok_markers = 0, ok_lines = 0;
        for (int i = 0; i < c->n; i++) {
            double x = chart_map_x(l, c->x[i]), y = chart_map_y(l, c->y[i]);
            /* the marker's own colour at (or next to) its centre: markers are drawn last */
            ok_markers += near_colour(im, x, y, 1, col, 40);
            if (i + 1 < c->n) {
                double mx = (x + chart_map_x(l, c->x[i + 1])) / 2, my = (y + chart_map_y(l, c->y[i + 1])) / 2;
                ok_lines += near_colour(im, mx, my, 2, col, 60);
            }
        }
        CHECKF(ok_markers == c->n, "series %d: %d of %d markers found", s, ok_markers, c->n);
        CHECKF(ok_lines == c->n - 1, "series %d: %d of %d segments found", s, ok_lines, c->n - 1);
    }
    /* the background is white and the frame drawn: the image corner, and the frame's left edge
     * halfway down */
    CHECK(colour_dist(im, 1, l->height - 2, 0xffffff) == 0);
    CHECK(colour_dist(im, l->px0 - 1, (l->py0 + l->py1) / 2, 0x444444) <= 8);
}

/* Pixels of rows [y0, y1) that are near the text colour. */
static int dark_rows(cairo_surface_t *im, int y0, int y1)
{
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < cairo_image_surface_get_width(im); x++) n += colour_dist(im, x, y, 0x222222) < 60;
    return n;
}

static void test_png(const report_figure *fig, const draw_fonts *fonts)
{
    nmt_err err;
    const char *p = tmp_path("fig.png");
    CHECKF(chart_write(&fig->spec, fonts, p, &err) == 0, "%s", err.msg);
    chart_layout l;
    CHECK(chart_layout_make(&l, &fig->spec, fonts, &err) == 0);
    CHECK(l.width == CHART_DEFAULT_WIDTH && l.height == CHART_DEFAULT_HEIGHT);
    cairo_surface_t *im = read_png(p);
    if (im) {
        CHECK(cairo_image_surface_get_width(im) == l.width && cairo_image_surface_get_height(im) == l.height);
        check_pixels(im, &l, fig);
        /* text is drawn: the dark ink of the title row and of the x-axis label row */
        CHECK(dark_rows(im, 0, 40) > 50 && dark_rows(im, l.height - 30, l.height) > 50);
        cairo_surface_destroy(im);
    }
    chart_layout_free(&l);
    CHECK(chart_write(&fig->spec, fonts, "/nonexistent-dir/x.png", &err) == NMT_ERR_IO);
}

/* ------------------------------------------------------------------ empty buckets */
/* Sources of 5, 15 and 45 words: buckets 20-29 and 30-39 are empty, so the figure has three
 * points, and its line breaks between 10-19 and 40-49 (no ink in the PNG halfway across the
 * gap). */
static void test_gap(const draw_fonts *fonts)
{
    static char s45[200];
    s45[0] = 0;
    for (int w = 0; w < 45; w++) strcat(s45, "w ");
    const char *src[3] = {"a b c d e", "a b c d e f g h i j k l m n o", s45};
    const char *ref[3] = {"x y z", "x y", "x y z w"};
    const char *hyp[3] = {"x y z", "x", "x y z w"};
    report_system sys = {"A", "a", hyp, NULL, NULL};
    report_input in = {3, src, ref, "ref", 1, &sys, NULL, NULL, {0}};
    report r;
    report_figure fig;
    nmt_err err;
    const char *labels[1] = {"A"};
    CHECK(report_compute(&r, &in, &err) == 0);
    CHECK(r.nbuckets == 5 && r.bucket_n[2] == 0 && r.bucket_n[3] == 0 && r.bucket_n[4] == 1);
    CHECK(report_figure_make(&fig, &r, labels, "gap", &err) == 0);
    CHECK(fig.series[0].n == 3 && fig.spec.n_xticks == 5);
    CHECK(!strcmp(fig.tick_sub[2], "n=0"));
    CHECK(chart_series_runs(&fig.spec, 0) == 2);
    const char *p = tmp_path("gap.png");
    CHECKF(chart_write(&fig.spec, fonts, p, &err) == 0, "%s", err.msg);
    chart_layout l;
    cairo_surface_t *im = read_png(p);
    if (im && chart_layout_make(&l, &fig.spec, fonts, &err) == 0) {
        const chart_series *c = &fig.series[0];
        double x0 = chart_map_x(&l, c->x[0]), y0 = chart_map_y(&l, c->y[0]);
        double x1 = chart_map_x(&l, c->x[1]), y1 = chart_map_y(&l, c->y[1]);
        double x2 = chart_map_x(&l, c->x[2]), y2 = chart_map_y(&l, c->y[2]);
        CHECK(near_colour(im, (x0 + x1) / 2, (y0 + y1) / 2, 2, chart_color(0), 60));
        CHECK(!near_colour(im, (x1 + x2) / 2, (y1 + y2) / 2, 3, chart_color(0), 120));
        for (int i = 0; i < 3; i++) /* a marker at each of the three points */
            CHECK(near_colour(im, chart_map_x(&l, c->x[i]), chart_map_y(&l, c->y[i]), 1, chart_color(0), 40));
        chart_layout_free(&l);
    }
    cairo_surface_destroy(im);
    report_figure_free(&fig);
    report_free(&r);
}

/* ------------------------------------------------------------------ chart details */
static void test_chart_misc(const draw_fonts *fonts)
{
    /* distinct styles for the first eight series */
    for (int a = 0; a < 8; a++)
        for (int b = a + 1; b < 8; b++)
            CHECK(chart_color(a) != chart_color(b) || chart_marker(a) != chart_marker(b));
    CHECK(chart_color(0) != chart_color(1) && chart_marker(0) != chart_marker(1));

    /* automatic y axis: from 0 to a round number at or above the maximum */
    double x[3] = {5, 15, 25}, y[3] = {12.5, 63.2, 40};
    chart_series s = {"one", 3, x, y};
    chart_spec spec = {0};
    spec.nseries = 1;
    spec.series = &s;
    spec.x_min = 0;
    spec.x_max = 30;
    chart_layout l;
    nmt_err err;
    CHECK(chart_layout_make(&l, &spec, fonts, &err) == 0);
    CHECK(l.y_min == 0 && l.y_max >= 63.2 && l.y_max <= 80);
    CHECK(l.n_yticks >= 4 && l.n_yticks <= 9);
    CHECK(l.n_xticks >= 3); /* automatic x ticks */
    CHECK(chart_map_y(&l, l.y_min) == l.py1 && chart_map_y(&l, l.y_max) == l.py0);
    CHECK(chart_map_x(&l, 0) == l.px0 && chart_map_x(&l, 30) == l.px1);
    chart_layout_free(&l);
    /* all-zero data still has a y range */
    double z[3] = {0, 0, 0};
    s.y = z;
    CHECK(chart_layout_make(&l, &spec, fonts, &err) == 0);
    CHECK(l.y_max > l.y_min);
    chart_layout_free(&l);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_report.XXXXXX");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 2; }

    test_buckets();
    test_nounk();
    test_vocab_files();
    draw_fonts *fonts = NULL;
    nmt_err ferr;
    CHECKF(draw_fonts_open(&fonts, NULL, &ferr) == 0, "%s (scripts/install-deps.sh installs fonts-dejavu-core)",
           ferr.msg);
    if (fonts) {
        test_chart_misc(fonts);
        test_gap(fonts);
    }

    report r;
    const char **labels = NULL;
    test_bucket_bleu(&r, &labels);
    report_figure fig;
    nmt_err err;
    CHECK(report_figure_make(&fig, &r, labels, NULL, &err) == 0);
    int npoints = 0, nonempty = 0;
    for (int b = 0; b < r.nbuckets; b++) nonempty += r.bucket_n[b] > 0;
    for (int s = 0; s < fig.spec.nseries; s++) npoints += fig.series[s].n;
    CHECK(fig.spec.nseries == 2 && npoints == 2 * nonempty);
    CHECK(fig.spec.n_xticks == r.nbuckets && fig.ticks[1] == 15.0);
    CHECK(!strcmp(fig.tick_label[1], "10-19"));
    if (fonts) {
        test_svg(&fig, fonts);
        test_png(&fig, fonts);
        test_pdf(&fig, fonts);
    }
    draw_fonts_free(fonts);
    report_figure_free(&fig);
    report_free(&r);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "test_report: could not remove %s\n", tmpdir);
    return test_done("test_report");
}
