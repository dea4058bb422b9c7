/* web.h: the page GET / serves, embedded in the library: build/gen/web_assets.c is written
 * from web/ by scripts/embed_web.py at build time. */
#ifndef NMT_SERVE_WEB_H
#define NMT_SERVE_WEB_H

#include <stddef.h>

typedef struct web_asset {
    const char *path;          /* "/", "/app.js", ... */
    const char *content_type;
    const unsigned char *data;
    size_t len;
} web_asset;

extern const web_asset web_assets[];
extern const int web_n_assets;

#endif
