/* metrics.h: what GET /metrics reports, in the Prometheus text format: requests by route and
 * status, the latency of POST /translate, batch sizes, sentences and tokens, and the recent
 * throughput. Every function is thread-safe. */
#ifndef NMT_SERVE_METRICS_H
#define NMT_SERVE_METRICS_H

typedef struct metrics metrics;

/* Gauges the server knows at rendering time. */
typedef struct metrics_gauges {
    int connections, in_flight, waiting, workers;
} metrics_gauges;

metrics *metrics_init(void); /* NULL when out of memory */
void metrics_free(metrics *m);
/* One answered request: route is "/", "/translate", ... or NULL for any other path. */
void metrics_request(metrics *m, const char *route, int status, double seconds);
/* One decoded batch. */
void metrics_batch(metrics *m, int sentences, long src_words, long tgt_words, double seconds);
/* The exposition text, malloc'd (NULL when out of memory). */
char *metrics_render(metrics *m, const metrics_gauges *g);

#endif
