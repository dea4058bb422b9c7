/* metrics.c: counters and histograms behind one mutex (metrics.h). Route labels come from a fixed
 * list, so that a client requesting random paths cannot grow the table; status codes are few. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/metrics.h"

static const char *const routes[] = {"/", "/translate", "/health", "/metrics", "/app.js", "/style.css", "other"};
#define N_ROUTES (int)(sizeof routes / sizeof *routes)
#define N_STATUS 16 /* distinct status codes kept per route; the server uses about ten */
static const double lat_le[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
#define N_LAT (int)(sizeof lat_le / sizeof *lat_le)
static const double batch_le[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
#define N_BATCH (int)(sizeof batch_le / sizeof *batch_le)
#define WINDOW 60 /* seconds of the recent-throughput gauge */

struct metrics {
    pthread_mutex_t mu;
    int status[N_ROUTES][N_STATUS];
    long count[N_ROUTES][N_STATUS];
    long lat[N_LAT + 1], lat_n;   /* POST /translate, cumulative at render */
    double lat_sum;
    long batch[N_BATCH + 1], batches;
    double batch_sum;
    long sentences, src_tokens, tgt_tokens;
    double decode_s;
    long win_tok[WINDOW], win_sec[WINDOW]; /* target tokens per wall-clock second */
};

metrics *metrics_init(void)
{
    metrics *m = calloc(1, sizeof *m);
    if (m) pthread_mutex_init(&m->mu, NULL);
    return m;
}

void metrics_free(metrics *m)
{
    if (!m) return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static int bucket(const double *le, int n, double v)
{
    int i = 0;
    while (i < n && v > le[i]) i++;
    return i;
}

void metrics_request(metrics *m, const char *route, int status, double seconds)
{
    int r = N_ROUTES - 1;
    for (int i = 0; route && i < N_ROUTES - 1; i++)
        if (!strcmp(route, routes[i])) r = i;
    pthread_mutex_lock(&m->mu);
    for (int s = 0; s < N_STATUS; s++)
        if (m->status[r][s] == status || !m->status[r][s]) {
            m->status[r][s] = status;
            m->count[r][s]++;
            break;
        }
    if (r == 1) {
        m->lat[bucket(lat_le, N_LAT, seconds)]++;
        m->lat_n++;
        m->lat_sum += seconds;
    }
    pthread_mutex_unlock(&m->mu);
}

void metrics_batch(metrics *m, int sentences, long src_words, long tgt_words, double seconds)
{
    long now = (long)time(NULL);
    pthread_mutex_lock(&m->mu);
    m->batch[bucket(batch_le, N_BATCH, sentences)]++;
    m->batches++;
    m->batch_sum += sentences;
    m->sentences += sentences;
    m->src_tokens += src_words;
    m->tgt_tokens += tgt_words;
    m->decode_s += seconds;
    int w = (int)(now % WINDOW);
    if (m->win_sec[w] != now) { m->win_sec[w] = now; m->win_tok[w] = 0; }
    m->win_tok[w] += tgt_words;
    pthread_mutex_unlock(&m->mu);
}

/* ------------------------------------------------------------------ rendering */

typedef struct buf { char *s; size_t n, cap; int oom; } buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...)
{
    va_list ap;
    for (int tries = 0; tries < 2 && !b->oom; tries++) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < b->cap - b->n) { b->n += k; return; }
        size_t cap = b->cap * 2 + (size_t)k + 1;
        char *s = realloc(b->s, cap);
        if (!s) b->oom = 1;
        else { b->s = s; b->cap = cap; }
    }
}

static void histogram(buf *b, const char *name, const char *help, const double *le, int n, const long *cnt, long total,
                      double sum)
{
    put(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    long c = 0;
    for (int i = 0; i < n; i++) put(b, "%s_bucket{le=\"%g\"} %ld\n", name, le[i], c += cnt[i]);
    put(b, "%s_bucket{le=\"+Inf\"} %ld\n%s_sum %.6f\n%s_count %ld\n", name, total, name, sum, name, total);
}

static void counter(buf *b, const char *name, const char *help, const char *type, double v)
{
    put(b, "# HELP %s %s\n# TYPE %s %s\n%s %.6g\n", name, help, name, type, name, v);
}

static void requests(buf *b, const metrics *m)
{
    put(b, "# HELP nmt_http_requests_total HTTP requests answered, by route and status.\n"
           "# TYPE nmt_http_requests_total counter\n");
    for (int r = 0; r < N_ROUTES; r++)
        for (int s = 0; s < N_STATUS && m->status[r][s]; s++)
            put(b, "nmt_http_requests_total{route=\"%s\",status=\"%d\"} %ld\n", routes[r], m->status[r][s], m->count[r][s]);
}

char *metrics_render(metrics *m, const metrics_gauges *g)
{
    buf b = {malloc(4096), 0, 4096, 0};
    if (!b.s) return NULL;
    long now = (long)time(NULL), recent = 0;
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < WINDOW; i++)
        if (m->win_sec[i] > now - WINDOW) recent += m->win_tok[i];
    requests(&b, m);
    histogram(&b, "nmt_translate_duration_seconds", "Time from a POST /translate's arrival to its answer.",
              lat_le, N_LAT, m->lat, m->lat_n, m->lat_sum);
    histogram(&b, "nmt_batch_sentences", "Sentences per decoded batch.", batch_le, N_BATCH, m->batch, m->batches, m->batch_sum);
    counter(&b, "nmt_sentences_total", "Sentences translated.", "counter", (double)m->sentences);
    counter(&b, "nmt_source_tokens_total", "Source tokens read.", "counter", (double)m->src_tokens);
    counter(&b, "nmt_target_tokens_total", "Target tokens written (1-best, EOS not counted).", "counter", (double)m->tgt_tokens);
    counter(&b, "nmt_decode_seconds_total", "Seconds the decoders spent decoding.", "counter", m->decode_s);
    counter(&b, "nmt_target_tokens_per_second", "Target tokens per second over the last minute.", "gauge", recent / (double)WINDOW);
    pthread_mutex_unlock(&m->mu);
    counter(&b, "nmt_open_connections", "Open HTTP connections.", "gauge", g->connections);
    counter(&b, "nmt_requests_in_flight", "Translation requests being decoded or waiting.", "gauge", g->in_flight);
    counter(&b, "nmt_queue_sentences", "Sentences waiting for a decoder.", "gauge", g->waiting);
    counter(&b, "nmt_decoder_threads", "Decoder threads.", "gauge", g->workers);
    if (b.oom) { free(b.s); return NULL; }
    return b.s;
}
